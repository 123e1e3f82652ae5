"""Searches on real streaming hot standbys (issue 40): routing, read-your-writes, a
replica that stops, promotion, row-level security and PgBouncer in front of a replica.

Each cluster is a primary and standbys started from the embedded server's binaries
(``tests/integration/_replicas.py``). Where a test must know which server answered,
the standby's replay is paused (``pg_wal_replay_pause()``): a memory written on the
primary after that is on the primary only.
"""

from __future__ import annotations

import json
import logging
import signal
import time
from collections.abc import Iterator
from typing import Any

import pytest
from psycopg import sql

from memory_pg import AsyncMemoryStore, MemoryStore
from memory_pg.config import StoreSettings
from memory_pg.errors import DatabaseUnavailable
from tests.integration._replicas import Cluster, cluster

DB = "memory"
CREATE_DB = sql.SQL("CREATE DATABASE {}").format(sql.Identifier(DB))


@pytest.fixture(scope="module")
def pair(embedder: Any) -> Iterator[Cluster]:
    """A primary with the schema migrated, and one streaming standby."""
    with cluster() as made:
        with made.primary.connect() as conn:
            conn.execute(CREATE_DB)
            conn.execute("CREATE ROLE app LOGIN")
        MemoryStore(made.primary.url(DB), auto_migrate=True, embedder=embedder).close()
        with made.primary.connect(DB) as conn:
            conn.execute("GRANT memory_pg_app TO app")
        made.add_standby()
        made.standbys[0].wait_replayed(made.primary)
        yield made


def _store(pair: Cluster, embedder: Any, user: str = "postgres", **settings: Any) -> MemoryStore:
    return MemoryStore(
        pair.primary.url(DB, user),
        read_urls=[pair.standbys[0].url(DB, user)],
        embedder=embedder,
        settings=StoreSettings(**settings),
    )


def _paused(pair: Cluster) -> Any:
    standby = pair.standbys[0]

    class Paused:
        def __enter__(self) -> None:
            with standby.connect() as conn:
                conn.execute("SELECT pg_wal_replay_pause()")

        def __exit__(self, *exc: object) -> None:
            with standby.connect() as conn:
                conn.execute("SELECT pg_wal_replay_resume()")
            standby.wait_replayed(pair.primary)

    return Paused()


def test_searches_read_the_replica_and_the_writer_reads_its_own_writes(
    pair: Cluster, embedder: Any
) -> None:
    writer = _store(pair, embedder, replica_wait_ms=100)
    reader = _store(pair, embedder)
    try:
        writer.add_memory("We deploy on Fridays", "key_decision", user_id="ann")
        pair.standbys[0].wait_replayed(pair.primary)
        assert [r["text"] for r in reader.search("deploy", user_id="ann")] == [
            "We deploy on Fridays"
        ]
        with _paused(pair):
            new = writer.add_memory(
                "The staging cluster runs Kubernetes", "key_decision", user_id="ann"
            )
            # The writer reads what it wrote: the replica has not replayed it, so the
            # primary answers.
            assert new in {r["id"] for r in writer.search("staging cluster", user_id="ann")}
            assert writer.get(new, user_id="ann") is not None
            # Another store's reads go to the replica, which has not got it yet.
            assert new not in {r["id"] for r in reader.search("staging cluster", user_id="ann")}
            assert reader.get(new, user_id="ann") is None
            # The writer's reads of another user do not wait for its write.
            assert writer.list_memories(user_id="ben") == []
        assert reader.get(new, user_id="ann") is not None
    finally:
        writer.close()
        reader.close()


def test_a_search_on_a_replica_writes_nothing_its_uses_go_to_the_primary(
    pair: Cluster, embedder: Any
) -> None:
    store = _store(pair, embedder)
    try:
        memory_id = store.add_memory("The office wifi password is on the fridge", user_id="cat")
        pair.standbys[0].wait_replayed(pair.primary)
        with pair.primary.connect() as conn:
            before = conn.execute("SELECT pg_current_wal_lsn()").fetchone()[0]
        for _ in range(5):
            assert store.search("wifi password", user_id="cat")
        with pair.primary.connect() as conn:
            after = conn.execute("SELECT pg_current_wal_lsn()").fetchone()[0]
        assert after == before  # five searches, not a byte of WAL on the primary
        assert store.flush_uses() == 1
        assert store.get(memory_id, user_id="cat")["access_count"] in (0, 5)  # replica lag
        pair.standbys[0].wait_replayed(pair.primary)
        assert store.get(memory_id, user_id="cat")["access_count"] == 5
    finally:
        store.close()


def test_row_level_security_holds_on_the_replica(pair: Cluster, embedder: Any) -> None:
    owner = _store(pair, embedder)
    owner.add_memory("Dana's secret: the safe code is 4711", user_id="dana")
    owner.add_memory("Eve likes tea", user_id="eve")
    owner.close()
    pair.standbys[0].wait_replayed(pair.primary)
    app = _store(pair, embedder, user="app")
    try:
        with _paused(pair):  # every read below is the replica's
            found = app.search("safe code secret", user_id="eve", top_k=10)
            assert [r["text"] for r in found] == ["Eve likes tea"]
        with pair.standbys[0].connect(DB) as conn:  # the tenant, set per transaction there too
            conn.execute("SET ROLE app")
            assert conn.execute("SELECT count(*) FROM memory_pg_memories").fetchone() == (0,)
    finally:
        app.close()


async def test_the_async_store_reads_the_replica_too(pair: Cluster, embedder: Any) -> None:
    store = AsyncMemoryStore(
        pair.primary.url(DB),
        read_urls=[pair.standbys[0].url(DB)],
        embedder=embedder,
        settings=StoreSettings(replica_wait_ms=100),
    )
    other = _store(pair, embedder)
    try:
        await store.add_memory("Our CI runs on GitHub Actions", "key_decision", user_id="fay")
        pair.standbys[0].wait_replayed(pair.primary)  # else a paused replica lacks it too
        with _paused(pair):
            late = other.add_memory("Releases are cut on Mondays", "key_decision", user_id="fay")
            assert await store.get(late, user_id="fay") is None  # the replica's answer
            mine = await store.add_memory("We pin Python 3.11", "key_decision", user_id="fay")
            assert await store.get(mine, user_id="fay") is not None  # its own write
            hits = await store.search("Python version", user_id="fay")
            assert mine in {h["id"] for h in hits}
        await store.flush_uses()
    finally:
        await store.close()
        other.close()


def test_a_replica_that_stops_is_skipped_with_a_warning(
    embedder: Any, caplog: pytest.LogCaptureFixture
) -> None:
    with cluster() as made:
        with made.primary.connect() as conn:
            conn.execute(CREATE_DB)
        MemoryStore(made.primary.url(DB), auto_migrate=True, embedder=embedder).close()
        standby = made.add_standby()
        store = _store(made, embedder, replica_retry_s=0.5)
        try:
            store.add_memory("We deploy on Fridays", "key_decision", user_id="gus")
            standby.wait_replayed(made.primary)
            assert store.search("deploy", user_id="gus")
            standby.stop("immediate")
            with caplog.at_level(logging.WARNING, logger="memory_pg"):
                for _ in range(3):  # the primary answers, every time
                    assert [r["text"] for r in store.search("deploy", user_id="gus")] == [
                        "We deploy on Fridays"
                    ]
            said = [r.getMessage() for r in caplog.records if "replica" in r.getMessage()]
            assert len(said) == 1 and "failed" in said[0]  # once, not per read
            standby.start("-c hot_standby=on")
            time.sleep(0.6)
            standby.wait_replayed(made.primary)
            caplog.clear()
            with caplog.at_level(logging.WARNING, logger="memory_pg"):
                assert store.search("deploy", user_id="gus")
            assert any("again" in r.getMessage() for r in caplog.records)
        finally:
            store.close()


def test_promotion_after_the_primary_stops_loses_nothing_acknowledged(embedder: Any) -> None:
    with cluster() as made:
        with made.primary.connect() as conn:
            conn.execute(CREATE_DB)
        MemoryStore(made.primary.url(DB), auto_migrate=True, embedder=embedder).close()
        standby = made.add_standby()
        store = _store(made, embedder)
        acknowledged = [
            store.add_memory(f"Deploy note {i}: the release train leaves on day {i}", user_id="hal")
            for i in range(20)
        ]
        made.primary.stop("fast")  # sends what it has to the standby, then stops
        try:
            with pytest.raises(DatabaseUnavailable):
                store.add_memory("written while there is no primary", user_id="hal")
            # Reads go on, from the replica.
            assert len(store.list_memories(user_id="hal")) == 20
        finally:
            store.close()
        standby.promote()
        with MemoryStore(standby.url(DB), embedder=embedder, user_id="hal") as promoted:
            kept = {m["id"] for m in promoted.list_memories(limit=100)}
            assert kept == set(acknowledged)
            promoted.add_memory("written on the promoted replica")
            assert len(promoted.list_memories(limit=100)) == 21


def test_reads_on_a_replica_through_pgbouncer(pair: Cluster, embedder: Any) -> None:
    from tests.conftest import PgServer
    from tests.integration._pgbouncer import run_pgbouncer

    standby = pair.standbys[0]
    behind = PgServer(host=str(standby.sockets), port=standby.port, user="app", password=None)
    # (Opened once PgBouncer runs: where it is not installed, the test is skipped
    # before a store is left open.)
    with run_pgbouncer(behind, {"app": "app"}) as bouncer:
        writer = _store(pair, embedder)
        store = MemoryStore(
            pair.primary.url(DB, "app"),
            read_urls=[bouncer.url(DB, "app", "app") + "&pooler=transaction"],
            embedder=embedder,
            user_id="ivy",
        )
        try:
            kept = writer.add_memory("Ivy's team standup is at 9:30", user_id="ivy")
            standby.wait_replayed(pair.primary)
            with _paused(pair):
                late = writer.add_memory("Ivy moved the standup to 10:00", user_id="ivy")
                assert store.get(late) is None  # the replica answered, through PgBouncer
                assert kept in {r["id"] for r in store.search("standup time")}
                mine = store.add_memory("Ivy's retro is on Thursdays")
                assert store.get(mine) is not None  # its own write, from the primary
        finally:
            store.close()
            writer.close()


def test_the_cli_reads_the_replicas_it_is_given(pair: Cluster, embedder: Any) -> None:
    """``--read-url`` and ``MEMORY_PG_READ_URLS``, through the installed command."""
    from tests.acceptance.test_cli import run

    primary = {"MEMORY_PG_DATABASE_URL": pair.primary.url(DB)}
    writer = _store(pair, embedder)
    try:
        writer.add_memory("Joe's build runs on Jenkins", "key_decision", user_id="joe")
        pair.standbys[0].wait_replayed(pair.primary)
        with _paused(pair):
            writer.add_memory("Joe moved the build to Buildkite", "key_decision", user_id="joe")
            search = ["search", "build server", "--user", "joe", "--json", "--top-k", "5"]
            on_primary = json.loads(run(search, primary).stdout)
            by_flag = json.loads(
                run(["--read-url", pair.standbys[0].url(DB), *search], primary).stdout
            )
            by_env = json.loads(
                run(search, {**primary, "MEMORY_PG_READ_URLS": pair.standbys[0].url(DB)}).stdout
            )
        # The primary has the change (it replaced the old build server); the paused
        # replica still has the old one current.
        assert [h["text"] for h in on_primary] == ["Joe moved the build to Buildkite"]
        assert (
            [h["text"] for h in by_flag]
            == [h["text"] for h in by_env]
            == ["Joe's build runs on Jenkins"]
        )
        bad = run(["--read-url", "notaurl", *search], primary, check=False)
        assert bad.returncode != 0 and "read URL" not in bad.stdout
        assert len(bad.stderr.strip().splitlines()) == 1 and "URL" in bad.stderr
    finally:
        writer.close()


def test_the_http_service_reads_the_replica_and_its_own_writes(
    pair: Cluster, embedder: Any, tmp_path: Any
) -> None:
    """``memory-pg --read-url URL serve``: a real server process, over HTTP."""
    from tests.service.conftest import start_service, stop_service

    standby = pair.standbys[0]
    writer = _store(pair, embedder)
    service = start_service(
        pair.primary.url(DB), tmp_path / "serve.log", flags=["--read-url", standby.url(DB)]
    )
    try:
        with service.client(service.token("kim").token) as client:
            writer.add_memory("Kim's laptop is a ThinkPad", "user_profile", user_id="kim")
            standby.wait_replayed(pair.primary)
            with _paused(pair):
                late = writer.add_memory("Kim's phone is a Pixel", "user_profile", user_id="kim")
                assert client.get(f"/v1/memories/{late}").status_code == 404  # the replica's
                made = client.post(
                    "/v1/memories",
                    json={"text": "Kim's monitor is a Dell", "memory_type": "user_profile"},
                )
                assert made.status_code in (200, 201), made.text
                mine = made.json()["id"]
                assert client.get(f"/v1/memories/{mine}").status_code == 200  # its own write
    finally:
        assert stop_service(service) in (0, -signal.SIGTERM)  # uvicorn re-raises it
        writer.close()
