"""Errors that say what is wrong (issue 38, point 6): each one as a client meets it.

Through the package's real ``memory-pg serve`` and httpx.
"""

from __future__ import annotations

import json
import uuid
from datetime import datetime, timezone

from tests.service.test_http_refusals import _add, _error


def test_a_wrong_method_names_every_method_the_path_takes(service, fresh_user):
    with service.client(service.token(fresh_user("abe")).token) as c:
        memory_id = _add(c, "Abe's desk is by the window")
        r = c.post(f"/v1/memories/{memory_id}", json={"text": "x"})
        error = _error(r, 405)
        assert error["type"] == "MethodNotAllowed"
        for method in ("GET", "PUT", "DELETE"):
            assert method in error["message"], error["message"]
            assert method in r.headers["allow"]


def test_a_bad_limit_on_the_relation_routes_is_called_limit(service, fresh_user):
    with service.client(service.token(fresh_user("bea")).token) as c:
        memory_id = _add(c, "Bea works with Carl at Siemens in Munich")
        for path in (
            f"/v1/memories/{memory_id}/related",
            "/v1/entities",
            "/v1/entities/Carl",
            "/v1/entities/Carl/graph",
        ):
            for bad in (0, 100_000):
                error = _error(c.get(path, params={"limit": bad}), 422)
                assert error["message"].startswith("limit must be"), (path, error)
                assert "top_k" not in error["message"]


def test_an_unknown_graph_format_is_422_not_json(service, fresh_user):
    with service.client(service.token(fresh_user("cy")).token) as c:
        _add(c, "Cy met Dora in Vienna")
        error = _error(c.get("/v1/entities/Dora/graph", params={"format": "evil"}), 422)
        assert "format" in error["message"] and "dot" in error["message"]


def test_unreadable_bodies_say_why(service, fresh_user):
    with service.client(service.token(fresh_user("dan")).token) as c:
        headers = {"content-type": "application/json"}
        cases = {
            b'{"text": "caf\xe9"}': "not valid UTF-8",
            b'{"text": "x", "importance": ' + b"9" * 5000 + b"}": "too many digits",
            b'{"text": ' + b"[" * 100_000 + b"]" * 100_000 + b"}": "nested too deeply",
        }
        for body, said in cases.items():
            error = _error(c.post("/v1/memories", content=body, headers=headers), 400)
            assert error["type"] == "MalformedJSON"
            assert said in error["message"], error["message"]
            assert "too deeply nested?" not in error["message"]


def test_an_event_time_offset_postgresql_cannot_store_is_kept_as_the_same_instant(
    service, fresh_user
):
    with service.client(service.token(fresh_user("eve")).token) as c:
        r = c.post(
            "/v1/memories",
            json={"text": "Eve's launch call", "event_time": "2026-03-01T23:30:00+23:59"},
        )
        assert r.status_code == 201, r.text
        row = c.get(f"/v1/memories/{r.json()['id']}").json()
        stored = datetime.fromisoformat(row["event_time"])
        assert stored == datetime(2026, 2, 28, 23, 31, tzinfo=timezone.utc)


def test_the_bodies_above_were_refused_before_anything_was_written(service, fresh_user):
    # A refusal of point 6 writes nothing: the same client's memories are its own adds.
    with service.client(service.token(fresh_user("fay")).token) as c:
        _add(c, "Fay keeps the spare key")
        c.post("/v1/memories", content=b'{"text": "caf\xe9"}')
        c.post(f"/v1/memories/{uuid.uuid4()}", json={"text": "x"})
        listed = c.get("/v1/memories").json()["memories"]
        assert [m["text"] for m in listed] == ["Fay keeps the spare key"]
        assert json.loads(json.dumps(listed))  # plain JSON
