"""The HTTP API answers 404 ``MemoryNotFound`` for any memory id its token's user does not have."""

from __future__ import annotations

import uuid


def test_get_replace_and_delete_of_a_memory_the_user_lacks_are_404(service, fresh_user):
    alice, bob = fresh_user("alice"), fresh_user("bob")
    with service.client(service.token(bob).token) as b:
        r = b.post("/v1/memories", json={"text": "bob's own note about Rust"})
        bobs = r.json()["id"]
    with service.client(service.token(alice).token) as a:
        for memory_id in (str(uuid.uuid4()), bobs):
            answers = [
                a.get(f"/v1/memories/{memory_id}"),
                a.put(f"/v1/memories/{memory_id}", json={"text": "a new text"}),
                a.delete(f"/v1/memories/{memory_id}"),
            ]
            assert [r.status_code for r in answers] == [404, 404, 404]
            assert {r.json()["error"]["type"] for r in answers} == {"MemoryNotFound"}
    with service.client(service.token(bob).token) as b:
        assert b.get(f"/v1/memories/{bobs}").json()["text"] == "bob's own note about Rust"
