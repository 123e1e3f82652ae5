"""The HTTP API through a real uvicorn subprocess and a real HTTP client (httpx)."""

from __future__ import annotations

import json

from tests.integration._security_support import row_counts
from tests.service.conftest import revoked_and_expired


def _add(client, text, **fields):
    r = client.post("/v1/memories", json={"text": text, **fields})
    assert r.status_code == 201, r.text
    return r.json()["id"]


def test_health_ready_and_openapi_need_no_token(service):
    with service.client() as c:
        assert c.get("/healthz").json() == {"ok": True}
        assert c.get("/readyz").status_code == 200
        assert c.get("/docs").status_code == 200
        assert "/v1/search" in c.get("/openapi.json").json()["paths"]


def test_a_user_adds_searches_replaces_reads_history_and_deletes(service, fresh_user):
    token = service.token(fresh_user("alice")).token
    with service.client(token) as c:
        old = _add(c, "We use PostgreSQL as the database", memory_type="key_decision")
        hits = c.post("/v1/search", json={"query": "which database", "top_k": 3}).json()["results"]
        assert hits[0]["id"] == old and "score" in hits[0]

        r = c.put(f"/v1/memories/{old}", json={"text": "We switched the database to CockroachDB"})
        assert r.status_code == 200, r.text
        new = r.json()["id"]
        assert new != old
        assert c.get(f"/v1/memories/{old}").json()["superseded_by"] == new
        texts = [
            h["text"] for h in c.post("/v1/search", json={"query": "database"}).json()["results"]
        ]
        assert texts == ["We switched the database to CockroachDB"]
        # The replaced memory is history: replacing it again is a conflict.
        again = c.put(f"/v1/memories/{old}", json={"text": "something else"})
        assert again.status_code == 409 and again.json()["error"]["type"] == "MemoryConflict"
        events = [e["event"] for e in c.get(f"/v1/memories/{old}/history").json()["events"]]
        assert events == ["added", "superseded"]

        listed = c.get("/v1/memories", params={"limit": 5}).json()["memories"]
        assert [m["id"] for m in listed] == [new]
        assert c.get("/v1/stats").json()["memories"] == 1

        assert c.delete(f"/v1/memories/{new}").status_code == 204
        assert c.get(f"/v1/memories/{new}").status_code == 404
        assert c.delete(f"/v1/memories/{new}").status_code == 404


def test_batch_export_and_erase_of_the_tokens_own_user(service, fresh_user):
    alice, bob = fresh_user("alice"), fresh_user("bob")
    ta, tb = service.token(alice).token, service.token(bob).token
    with service.client(ta) as a, service.client(tb) as b:
        r = a.post(
            "/v1/memories/batch",
            json={
                "items": [
                    {"text": "alice likes tea"},
                    {"text": "alice codes in Rust", "memory_type": "user_profile"},
                ]
            },
        )
        assert r.status_code == 201 and len(r.json()["ids"]) == 2
        _add(b, "bob likes coffee")
        lines = [json.loads(x) for x in a.get("/v1/export").text.splitlines()]
        assert sorted(x["text"] for x in lines) == ["alice codes in Rust", "alice likes tea"]
        assert all("user_id" not in x and "embedding" not in x for x in lines)
        assert a.delete("/v1/user").json() == {"deleted": 2}
        assert a.get("/v1/stats").json()["memories"] == 0
        assert b.get("/v1/stats").json()["memories"] == 1


def test_a_token_of_a_never_reaches_bs_memories(service, fresh_user, service_raw):
    alice, bob = fresh_user("alice"), fresh_user("bob")
    ta, tb = service.token(alice).token, service.token(bob).token
    with service.client(ta) as a, service.client(tb) as b:
        secret = _add(b, "bob's bank PIN is 4711", memory_type="user_profile")
        before = row_counts(service_raw)
        # Crafted ids: bob's id through alice's token is simply not there.
        assert a.get(f"/v1/memories/{secret}").status_code == 404
        assert a.delete(f"/v1/memories/{secret}").status_code == 404
        assert a.put(f"/v1/memories/{secret}", json={"text": "PIN is 0000"}).status_code == 404
        assert a.get(f"/v1/memories/{secret}/history").json() == {"events": []}
        # Filters and bodies that name bob are refused, not obeyed.
        for body in (
            {"query": "PIN", "user_id": bob},
            {"query": "PIN", "metadata_filter": {"user_id": bob}, "top_k": 50},
        ):
            r = a.post("/v1/search", json=body)
            if r.status_code == 200:
                assert r.json()["results"] == []
            else:
                assert r.status_code == 403 and "own user" in r.json()["error"]["message"]
        assert a.post("/v1/memories", json={"text": "x", "user_id": bob}).status_code == 403
        r = a.post(
            "/v1/memories/batch",
            json={"items": [{"text": "ok"}, {"text": "planted", "user_id": bob}]},
        )
        assert r.status_code == 403
        r = a.post("/v1/memories/batch", json={"user_id": bob, "items": [{"text": "planted"}]})
        assert r.status_code == 403
        # Alice's user routes act on alice: her erase leaves bob whole.
        assert a.delete("/v1/user").json() == {"deleted": 0}
        assert row_counts(service_raw) == before
        assert [h["id"] for h in b.post("/v1/search", json={"query": "PIN"}).json()["results"]] == [
            secret
        ]
        # Admin routes are not for user tokens.
        assert a.delete(f"/v1/admin/users/{bob}").status_code == 403
        assert row_counts(service_raw) == before
    # The service logs each request (route, status, token id), never a memory's text.
    log = service.log.read_text(errors="replace")
    assert '"event": "request"' in log and "PIN" not in log and "planted" not in log


def test_missing_revoked_expired_and_unknown_tokens_get_401(service, fresh_user, service_raw):
    user = fresh_user("carol")
    live = service.token(user)
    revoked, expired = revoked_and_expired(service, service_raw, user)
    for token in (None, revoked.token, expired.token, "mpg_" + "A" * 43, "not-a-token"):
        with service.client(token) as c:
            r = c.post("/v1/search", json={"query": "x"})
            assert r.status_code == 401, (token, r.text)
            assert r.headers["www-authenticate"] == "Bearer"
            assert r.json()["error"]["type"] == "AuthenticationFailed"
    with service.client(live.token) as c:
        assert c.post("/v1/search", json={"query": "x"}).status_code == 200


def test_a_read_only_token_reads_but_cannot_write(service, fresh_user, service_raw):
    user = fresh_user("dave")
    with service.client(service.token(user).token) as w:
        mid = _add(w, "dave prefers dark mode", memory_type="user_profile")
    before = row_counts(service_raw)
    with service.client(service.token(user, read_only=True).token) as r:
        assert r.post("/v1/search", json={"query": "dark mode"}).json()["results"][0]["id"] == mid
        assert r.get(f"/v1/memories/{mid}").status_code == 200
        for call in (
            lambda: r.post("/v1/memories", json={"text": "new"}),
            lambda: r.post("/v1/memories/batch", json={"items": [{"text": "new"}]}),
            lambda: r.put(f"/v1/memories/{mid}", json={"text": "light mode"}),
            lambda: r.delete(f"/v1/memories/{mid}"),
            lambda: r.delete("/v1/user"),
        ):
            resp = call()
            assert resp.status_code == 403, resp.text
            assert "read-only" in resp.json()["error"]["message"]
    assert row_counts(service_raw) == before


def test_bad_requests_get_4xx_with_a_message_and_write_nothing(service, fresh_user, service_raw):
    token = service.token(fresh_user("erin")).token
    before = row_counts(service_raw)
    with service.client(token) as c:
        cases = [
            (
                c.post(
                    "/v1/memories",
                    content=b"{not json",
                    headers={"content-type": "application/json"},
                ),
                400,
            ),
            (c.post("/v1/memories", json={"text": 42}), 422),
            (c.post("/v1/memories", json={"text": "x", "importance": "high"}), 422),
            (c.post("/v1/memories", json={"text": "x", "colour": "red"}), 422),
            (c.post("/v1/memories", json={"text": ""}), 422),
            (c.post("/v1/memories", json={"text": "x" * 9000}), 422),
            (c.post("/v1/memories", json={"text": "x", "memory_type": "Bad Type"}), 422),
            (c.post("/v1/memories/batch", json={"items": []}), 422),
            (c.post("/v1/memories/batch", json={"items": [{"text": "fine"}, {"text": ""}]}), 422),
            (c.post("/v1/search", json={"query": "x", "top_k": 0}), 422),
            (c.get("/v1/memories/not-a-uuid"), 422),
            (
                c.post(
                    "/v1/memories",
                    content=b"x" * (2 * 1024 * 1024),
                    headers={"content-type": "application/json"},
                ),
                413,
            ),
        ]
        # Streamed without a length (chunked): counted as it arrives, refused past the limit.
        chunked = c.post(
            "/v1/memories",
            content=iter([b'{"text": "' + b"y" * 700_000, b"y" * 700_000 + b'"}']),
            headers={"content-type": "application/json"},
        )
        cases.append((chunked, 413))
        for response, status in cases:
            assert response.status_code == status, (status, response.text)
            error = response.json()["error"]
            assert error["type"] and error["message"]
    assert row_counts(service_raw) == before


def test_an_admin_token_erases_a_user_but_has_no_user_routes(service, fresh_user):
    victim = fresh_user("frank")
    with service.client(service.token(victim).token) as c:
        _add(c, "frank's note")
    with service.client(service.token(fresh_user("ops"), admin=True).token) as admin:
        assert admin.post("/v1/search", json={"query": "note"}).status_code == 403
        assert admin.delete(f"/v1/admin/users/{victim}").json() == {"deleted": 1}
    with service.client(service.token(victim).token) as c:
        assert c.get("/v1/stats").json()["memories"] == 0


def test_agents_of_one_user_share_decisions_and_keep_private_notes(service, fresh_user):
    user = fresh_user("team")
    planner = service.token(user, agent_id="planner").token
    coder = service.token(user, agent_id="coder").token
    with service.client(planner) as p, service.client(coder) as c:
        decision = _add(p, "We use PostgreSQL for storage", memory_type="key_decision")
        note = _add(c, "storage tests are slow on my laptop", memory_type="todo", private=True)
        seen = {
            h["id"]: h
            for h in c.post("/v1/search", json={"query": "storage", "top_k": 10}).json()["results"]
        }
        assert set(seen) == {decision, note}
        assert seen[decision]["agent_id"] == "planner" and not seen[decision]["private"]
        planner_hits = p.post("/v1/search", json={"query": "storage", "top_k": 10}).json()[
            "results"
        ]
        assert [h["id"] for h in planner_hits] == [decision]
        by_writer = c.post("/v1/search", json={"query": "storage", "agent_ids": ["planner"]}).json()
        assert [h["id"] for h in by_writer["results"]] == [decision]
        # The planner cannot reach the coder's private note by id either.
        assert p.get(f"/v1/memories/{note}").status_code == 404
        assert p.delete(f"/v1/memories/{note}").status_code == 404
        assert p.put(f"/v1/memories/{note}", json={"text": "x"}).status_code == 404
        # A token acts as its own agent only.
        r = p.post("/v1/memories", json={"text": "pretend", "agent_id": "coder"})
        assert r.status_code == 403
        assert c.get(f"/v1/memories/{note}").json()["private"] is True
        # Export and erase reach every agent's notes: refused to an agent's token.
        assert p.get("/v1/export").status_code == 403
        assert p.delete("/v1/user").status_code == 403
        assert c.get(f"/v1/memories/{note}").status_code == 200


def test_a_memory_comes_back_as_it_was_stored(service, fresh_user):
    """Metadata keys, times and ids come back unchanged in every route's JSON (keys
    starting with ``_sa`` too, which FastAPI's encoder used to drop as SQLAlchemy's)."""
    token = service.token(fresh_user("carol")).token
    metadata = {"_sa_source": "crm", "日期": "5月2号", "n": [1, 2.5, None, True], "o": {"k": "v"}}
    with service.client(token) as c:
        memory_id = _add(
            c, "Carol's 合同 ends in May", metadata=metadata, event_time="2026-05-02T10:00:00+00:00"
        )
        got = c.get(f"/v1/memories/{memory_id}").json()
        hit = c.post("/v1/search", json={"query": "Carol contract"}).json()["results"][0]
        listed = c.get("/v1/memories").json()["memories"][0]
    for row in (got, hit, listed):
        assert row["id"] == memory_id
        assert row["metadata"] == metadata
        assert row["event_time"] == "2026-05-02T10:00:00+00:00"
        assert row["text"] == "Carol's 合同 ends in May"
