"""The store's record of its heavy users: a bounded hint that follows each search."""

from __future__ import annotations

from memory_pg.plans.read import HeavyUsers


def test_a_user_is_heavy_from_a_heavy_search_until_a_light_one() -> None:
    users = HeavyUsers()
    assert "alice" not in users
    users.note("alice", True)
    users.note("bob", False)
    assert "alice" in users and "bob" not in users
    users.note("alice", False)
    assert "alice" not in users


def test_past_the_limit_the_user_noted_first_goes() -> None:
    users = HeavyUsers(limit=2)
    for name in ("a", "b", "c"):
        users.note(name, True)
    assert [n in users for n in ("a", "b", "c")] == [False, True, True]
    users.note("b", True)  # noted again: still one entry, nothing else goes
    assert [n in users for n in ("a", "b", "c")] == [False, True, True]
