"""A batch asks for bounded work: more text than ``--max-batch-chars`` is a 413 that
writes nothing (issue 38, point 3). Through the package's real ``memory-pg serve``."""

from __future__ import annotations

from tests.service.test_http_refusals import _error


def _count(service_raw, user):
    row = service_raw.execute(
        "SELECT count(*) FROM memory_pg_memories WHERE user_id = %s", (user,)
    ).fetchone()
    return row[0]


def test_a_batch_with_too_much_text_is_413_and_writes_nothing(service, fresh_user, service_raw):
    user = fresh_user("hal")
    kilobyte = "The harbour crane log for pier {i} lists every lift of the week. " * 16
    items = [{"text": kilobyte.format(i=i)} for i in range(500)]  # 500 x ~1 KB: legal before
    with service.client(service.token(user).token) as c:
        error = _error(c.post("/v1/memories/batch", json={"items": items}), 413)
        assert error["type"] == "RequestTooLarge"
        assert "64000 characters" in error["message"] and "smaller batches" in error["message"]
        assert _count(service_raw, user) == 0
        # Context counts too: the same text is embedded with it.
        padded = [{"text": "short", "context": "x" * 64_000}]
        assert _error(c.post("/v1/memories/batch", json={"items": padded}), 413)
        # Under the bound, the batch is written whole.
        r = c.post("/v1/memories/batch", json={"items": items[:20]})
        assert r.status_code == 201, r.text
        assert len(r.json()["ids"]) == 20 and _count(service_raw, user) == 20
