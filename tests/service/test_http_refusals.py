"""What the HTTP API refuses, and how: one error shape, bounded pages, strict bodies.

Through the package's real ``memory-pg serve`` and a real HTTP client (httpx).
"""

from __future__ import annotations

import uuid

from tests.integration._security_support import row_counts
from tests.service.conftest import revoked_and_expired

#: Unrelated facts: none merges into or replaces another on write.
FACTS = (
    "The office plant needs water on Mondays",
    "Our CI runs on GitHub Actions",
    "The quarterly report is due in March",
    "Lunch with the design team is on Thursday",
    "The staging database lives in Frankfurt",
    "Invoices are paid by the finance team in Lisbon",
    "The mobile app targets Android 12 and later",
    "Bicycles are parked in the basement garage",
    "The wiki moved to Confluence last spring",
    "Coffee beans come from a roaster in Oslo",
    "The printer on floor three jams with thick paper",
    "Passwords rotate every ninety days",
    "The marketing budget doubled this year",
    "A hackathon is planned for October",
    "The old VPN client is no longer supported",
    "Customer support answers within four hours",
    "The logo uses a shade of teal",
    "Interns start in the first week of June",
    "The dog of the CTO is called Pixel",
    "Backups are copied to tape on Sundays",
    "The conference talk is about query planners",
    "Release notes are written in Markdown",
    "The parking permit expires in December",
    "Jazz plays in the kitchen on Fridays",
    "The server room is kept at eighteen degrees",
    "The chess club meets after work on Tuesdays",
)


def _add(client, text, **fields):
    r = client.post("/v1/memories", json={"text": text, **fields})
    assert r.status_code == 201, r.text
    return r.json()["id"]


def _error(response, status):
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert set(error) == {"type", "message"} and error["message"]
    return error


def test_a_read_only_admin_token_reads_the_stats_but_erases_no_one(
    service, fresh_user, service_raw
):
    victim = fresh_user("bob")
    with service.client(service.token(victim).token) as c:
        _add(c, "bob's note about the release")
    before = row_counts(service_raw)
    monitor = service.token(fresh_user("ops"), admin=True, read_only=True).token
    with service.client(monitor) as admin:
        error = _error(admin.delete(f"/v1/admin/users/{victim}"), 403)
        assert error["type"] == "PermissionDenied" and "read-only" in error["message"]
        assert admin.get("/v1/admin/stats").status_code == 200
    assert row_counts(service_raw) == before
    with service.client(service.token(victim).token) as c:
        assert c.get("/v1/stats").json()["memories"] == 1


def test_listing_an_unknown_memory_type_is_422_as_in_search(service, fresh_user):
    with service.client(service.token(fresh_user("gina")).token) as c:
        _add(c, "gina's note")
        searched = _error(c.post("/v1/search", json={"query": "x", "memory_types": ["bogus"]}), 422)
        for value in ("bogus", "a\x00b"):
            listed = _error(c.get("/v1/memories", params={"memory_type": value}), 422)
            assert listed["type"] == searched["type"] == "UnknownMemoryType"
            assert "unknown memory type" in listed["message"]
        ok = c.get("/v1/memories", params={"memory_type": "dialogue"})
        assert [m["text"] for m in ok.json()["memories"]] == ["gina's note"]


def test_unknown_routes_wrong_methods_and_unparsable_bodies_get_the_typed_body(service, fresh_user):
    with service.client(service.token(fresh_user("hank")).token) as c:
        missing = _error(c.get("/v1/no-such-route"), 404)
        assert missing["type"] == "NotFound" and "/v1/no-such-route" in missing["message"]
        wrong = c.delete("/v1/search")
        assert _error(wrong, 405)["type"] == "MethodNotAllowed"
        assert "POST" in wrong.headers["allow"]
        deep = b"[" * 100_000 + b"]" * 100_000
        r = c.post("/v1/search", content=deep, headers={"content-type": "application/json"})
        assert _error(r, 400)["type"] == "MalformedJSON"
        # The memory routes' own 404 keeps its type.
        assert _error(c.get(f"/v1/memories/{uuid.uuid4()}"), 404)["type"] == "MemoryNotFound"


def test_revoked_expired_and_unknown_tokens_hear_one_message_and_the_log_says_which(
    service, fresh_user, service_raw
):
    user = fresh_user("ivy")
    revoked, expired = revoked_and_expired(service, service_raw, user)
    unknown = "mpg_" + "B" * 43
    bodies = []
    for token in (revoked.token, expired.token, unknown, "not-a-token"):
        with service.client(token) as c:
            bodies.append(_error(c.post("/v1/search", json={"query": "x"}), 401))
    assert all(b == bodies[0] for b in bodies), bodies
    for word in ("revoked", "expired", "unknown"):
        assert word not in bodies[0]["message"]
    log = service.log.read_text(errors="replace")
    assert f"token {revoked.info.id} refused: revoked" in log
    assert f"token {expired.info.id} refused: expired" in log
    assert "refused: unknown" in log
    assert revoked.token not in log and expired.token not in log and unknown not in log


def test_history_returns_the_latest_events_a_page_at_a_time(service, fresh_user):
    with service.client(service.token(fresh_user("jack")).token) as c:
        items = [{"text": text} for text in FACTS[:25]]
        assert c.post("/v1/memories/batch", json={"items": items}).status_code == 201
        last = _add(c, FACTS[25])
        events = c.get("/v1/history").json()["events"]
        assert len(events) == 20  # the default page, as for GET /v1/memories
        assert events[-1]["memory_id"] == last and events[-1]["event"] == "added"
        page = c.get("/v1/history", params={"limit": 3}).json()["events"]
        assert page == events[-3:]  # the latest three, still oldest first
        assert len(c.get("/v1/history", params={"limit": 1000}).json()["events"]) == 26
        for limit in (0, 1001):
            error = _error(c.get("/v1/history", params={"limit": limit}), 422)
            assert "limit" in error["message"]


def test_numbers_and_flags_in_bodies_are_strict(service, fresh_user, service_raw):
    with service.client(service.token(fresh_user("kate")).token) as c:
        _add(c, "kate's note about tea")
        before = row_counts(service_raw)
        for body in (
            {"query": "tea", "top_k": True},
            {"query": "tea", "top_k": 2.0},
            {"query": "tea", "top_k": "2"},
            {"query": "tea", "expand": False},
            {"query": "tea", "min_similarity": True},
        ):
            assert _error(c.post("/v1/search", json=body), 422)["type"] == "InvalidRequest"
        for fields in ({"importance": True}, {"private": 1}):
            r = c.post("/v1/memories", json={"text": "kate likes green tea", **fields})
            assert _error(r, 422)["type"] == "InvalidRequest", fields
        assert row_counts(service_raw) == before
        ok = c.post("/v1/search", json={"query": "tea", "top_k": 2, "min_similarity": 0})
        assert ok.status_code == 200, ok.text
        assert _add(c, "kate drinks tea at four", importance=1, private=False)
