"""``memory-pg serve`` builds its search statements in the background once it is up
(``warm_up``), logging how many and nothing a user wrote."""

from __future__ import annotations

import re
import time

from memory_pg.warming import WARM_UP_QUESTIONS


def test_the_service_builds_its_search_statements_after_it_starts(service, fresh_user):
    deadline = time.monotonic() + 120
    found = None
    while found is None and time.monotonic() < deadline:
        found = re.search(r"(\d+) search statements built ahead", service.log.read_text())
        time.sleep(0.5)
    assert found is not None, service.log.read_text()[-2000:]
    assert int(found.group(1)) > 0
    log = service.log.read_text()
    assert not any(question in log for question in WARM_UP_QUESTIONS)
    user = fresh_user("wren")
    with service.client(service.token(user).token) as c:
        assert c.post("/v1/memories", json={"text": "Wren's cat is Miso."}).status_code == 201
        r = c.post("/v1/search", json={"query": "what is Wren's cat called"})
        assert r.status_code == 200 and r.json()["results"][0]["text"] == "Wren's cat is Miso."
