"""The benchmark harness still runs: memory-pg at a tiny size, the peers when installed.

The benchmark itself is not part of the test suite (its figures are in
benchmarks/results); this only keeps ``python benchmarks/run.py`` from rotting.
"""

from __future__ import annotations

import importlib.util
import json
import tempfile
import time
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

pytestmark = pytest.mark.slow

TINY = "--sizes 200 --queries 10 --e2e-queries 2 --one-by-one 5 --e2e-size 50".split()


def _run(tmp_path, db_url, systems):
    from benchmarks.run import main

    out = tmp_path / "results"
    result = main(
        [
            *TINY,
            "--systems",
            systems,
            "--database-url",
            db_url,
            "--out",
            str(out),
            "--no-plot",
            "--tag",
            "smoke",
        ]
    )
    written = json.loads((out / next(p.name for p in out.glob("results-*-smoke.json"))).read_text())
    assert written["scenarios"].keys() == result["scenarios"].keys()
    return written


def test_the_harness_measures_memory_pg_with_the_projects_own_dependencies(tmp_path, db_url):
    result = _run(tmp_path, db_url, "memory-pg")
    mine = result["scenarios"]["many-200"]["memory-pg"]
    assert result["ingest_e2e"]["raw_embedding_per_s"] > 0
    assert result["ingest_e2e"]["memory-pg"]["batched_per_s"] > 0
    assert mine["ingest_batched_per_s"] > 0
    assert mine["search_store_ms"]["n"] == 10
    # At 200 memories every strategy is an exact search: nothing may be missed.
    assert mine["recall_at_10"] == 1.0
    assert mine["vector_leg"]["exact"]["recall_at_10"] == 1.0
    assert mine["disk_bytes"]["memory_pg_memories"] > 0
    assert result["scenarios"]["one-200"]["users"] == 1
    assert result["forget"]["status"] in ("pending", "ran")
    assert result["network_connections_outside_loopback"] == []


def test_the_ef_search_sweep_measures_the_heavy_user_that_run_py_kept(tmp_path, db_url):
    from benchmarks.ef_search_sweep import main as sweep
    from benchmarks.run import main

    # 300 memories from a pool of 100 texts: most rows are noisy copies with numbered
    # texts, as at 1M, and the sweep must find each returned row's vector again.
    one_user = "--sizes 300 --pool 100 --scenarios one --heavy-max 300 --systems memory-pg"
    kept = "--queries 10 --e2e-size 0 --one-by-one 5 --no-plot --tag sweep".split()
    main([*one_user.split(), *kept, "--database-url", db_url, "--out", str(tmp_path)])
    swept = "--size 300 --pool 100 --queries 8 --ef 10,40"
    report = sweep([*swept.split(), "--database-url", db_url])
    assert report["queries"] == 8
    assert set(report["ef_search"]) == {10, 40}
    for row in report["ef_search"].values():
        # 300 memories: the planner's vector leg is an exact scan, whatever ef_search.
        assert row["vector_leg_recall_at_10"] == 1.0
        assert 0 < row["search_ms"]["p50_ms"] <= row["search_ms"]["p99_ms"]
        assert row["search_ms"]["n"] == 8


def test_the_hnsw_density_benchmark_builds_each_graph_and_leaves_no_table(db_url):
    from benchmarks.hnsw_density import main as density

    # 600 rows, 30 copies of each of 20 pool texts; ef_search 1000 > 600 rows walks
    # the whole graph, so the search is exact and the recall counting must say so.
    tiny = "--rows 600 --pool 20 --settings 4:8,8:16 --ef 1000 --queries 8 --inserts 100"
    report = density([*tiny.split(), "--database-url", db_url])
    assert [(s["m"], s["ef_construction"]) for s in report["settings"]] == [(4, 8), (8, 16)]
    for row in report["settings"]:
        assert row["recall@10_ef1000"] == 1.0
        assert row["same_text_ef1000"] == 1.0
        assert abs(row["cosine_gap_ef1000"]) < 1e-4
        assert row["index_mb"] > 0 and row["insert_ms_per_row"] > 0
    engine = create_engine(db_url)
    try:
        with engine.connect() as conn:
            assert conn.execute(text("SELECT to_regclass('hnsw_density')")).scalar() is None
    finally:
        engine.dispose()


def test_the_forget_benchmark_times_the_vacuum_after_it_both_ways(db_url):
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    for extra in ([], ["--reindex-first"]):
        tiny = "--rows 2000 --users 20 --idle-s 0.3 --vacuum".split()
        proc = subprocess.run(
            [sys.executable, "benchmarks/forget_bench.py", *tiny, *extra, "--database-url", db_url],
            capture_output=True,
            text=True,
            cwd=root,
            env={**__import__("os").environ, "PYTHONPATH": str(root)},
            timeout=300,
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
        report = json.loads(proc.stdout[proc.stdout.index("{") :])
        assert report["forget"]["deleted"] == 200  # the tenth that was stale
        vacuum = report["vacuum"]
        assert report["search_idle"]["n"] >= 1
        assert (vacuum["reindex_first_s"] is not None) == bool(extra)
        assert report["command"].endswith(" ".join([*tiny, *extra, "--database-url", db_url]))


def test_the_gin_pending_benchmark_times_both_ways_and_leaves_the_list_off(tmp_path, db_url):
    from benchmarks.gin_pending import main as gin_pending

    # 1200 memories: past the full-text leg's 1000-memory sample, so searches read
    # the GIN index, as a heavy user's do.
    out = tmp_path / "gin.json"
    tiny = "--rows 1200 --pool 100 --writes 60 --search-every 3 --queries 10"
    report = gin_pending([*tiny.split(), "--database-url", db_url, "--out", str(out)])
    assert json.loads(out.read_text())["summary"] == report["summary"]
    on, off = report["blocks"]
    assert (on["fastupdate"], off["fastupdate"]) == ("on", "off")
    for block in (on, off):
        assert block["memories_written"] == 60
        assert block["search_ms"]["n"] == 10 and block["write_call_ms"]["n"] == 30
    # With the list on, the new entries waited in it; with it off, none did.
    assert on["pending_pages_at_end"] > 0
    assert off["pending_pages_at_end"] == 0
    engine = create_engine(db_url)
    try:
        with engine.connect() as conn:
            options = conn.execute(
                text(
                    "SELECT reloptions FROM pg_class "
                    "WHERE relname = 'memory_pg_memories_search_tsv_idx'"
                )
            ).scalar()
            written = conn.execute(text("SELECT count(*) FROM memory_pg_memories")).scalar()
    finally:
        engine.dispose()
    assert options == ["fastupdate=off"]
    assert written == 1200 + 2 * 60


def test_the_server_settings_benchmark_restarts_its_server_with_each_config(tmp_path):
    from benchmarks.server_settings import main as server_settings

    out = tmp_path / "settings.json"
    tiny = "--rows 1200 --pool 100 --rounds 2 --warm 3 --searches 5 --queries 20 --index-after"
    configs = ["shared_buffers=16MB", "shared_buffers=32MB,synchronous_commit=off"]
    argv = [*tiny.split(), "--config", configs[0], "--config", configs[1], "--out", str(out)]
    report = server_settings([*argv, "--scratch-dir", str(tmp_path)])
    assert json.loads(out.read_text())["summary"] == report["summary"]
    # Each block ran under its own settings, the order reversed in the second round;
    # the first config's blocks show synchronous_commit back at the server's default.
    shown = [b["settings_shown"] for b in report["blocks"]]
    first = {"shared_buffers": "16MB", "synchronous_commit": "on"}
    second = {"shared_buffers": "32MB", "synchronous_commit": "off"}
    assert shown == [first, second, second, first]
    for block in report["blocks"]:
        assert block["search_ms"]["n"] == 5
        assert block["pages_read_per_search"] + block["pages_hit_per_search"] > 0
    assert set(report["summary"]) == set(configs)
    # The HNSW index dropped for the fill was built again after it.
    assert report["load"]["hnsw_mb"] >= 1
    # Its folder is gone.
    assert not list(tmp_path.glob("memory-pg-settings-*"))


@pytest.mark.skipif(
    importlib.util.find_spec("chromadb") is None or importlib.util.find_spec("mem0") is None,
    reason="the peers are not installed: pip install -r benchmarks/requirements.txt",
)
def test_the_harness_measures_the_peers_on_the_same_data(tmp_path, db_url):
    result = _run(tmp_path, db_url, "memory-pg,chromadb,mem0")
    assert result["skipped"] == {}
    scenario = result["scenarios"]["many-200"]
    for peer in ("chromadb", "mem0"):
        assert scenario[peer]["search_store_ms"]["n"] > 0
    # mem0's query without its index reads every row: it finds each user's nearest.
    assert scenario["mem0"]["tuned"]["exact"]["recall_at_10"] == 1.0
    assert scenario["mem0"]["tuned"]["iterative"]["n"] > 0
    # mem0 ran with a dummy LLM key and infer=False: nothing left the machine.
    assert result["network_connections_outside_loopback"] == []


def test_the_jobs_beside_traffic_benchmark_reports_each_job_and_its_searches(tmp_path, db_url):
    from benchmarks.jobs_traffic import main

    out = tmp_path / "jobs_traffic.json"
    tiny = "--rows 600 --users 10 --clusters 4 --reembed-rows 60 --clients 2 --idle-s 1"
    result = main([*tiny.split(), "--database-url", db_url, "--out", str(out)])
    written = json.loads(out.read_text())
    assert written["jobs"].keys() == result["jobs"].keys() == {"forget", "consolidate", "reembed"}
    for name, job in written["jobs"].items():
        assert job["command"].startswith(f"memory-pg {name}")
        assert job["duration_s"] > 0 and job["rows"] > 0 and job["rows_per_s"] >= 0
        assert job["search_idle"]["n"] > 0 and job["search_idle"]["p95_ms"] > 0
        assert "n" in job["search_during"]  # a job of milliseconds may see no search
        assert job["errors_idle"] == {} and job["errors_during"] == {}
        assert "mean" in job["load_average_during"]
    jobs = written["jobs"]
    # The jobs did their work: stale rows went, every cluster became one summary,
    # every row of the reembed table got a new vector.
    assert 0 < jobs["forget"]["report"]["deleted"] <= written["stale_rows"]
    assert jobs["consolidate"]["report"]["clusters"] == 4
    assert jobs["consolidate"]["report"]["merged"] == 4 * 3
    assert jobs["reembed"]["report"]["reembedded"] == 60


def test_the_plan_for_user_benchmark_times_searches_and_writes_both_ways(tmp_path):
    from benchmarks.plan_for_user import main

    out = tmp_path / "plan_for_user.json"
    tiny = "--light-users 20 --heavy 40 --queries 10 --block 5 --writes 4 --pool 300"
    result = main([*tiny.split(), "--out", str(out)])
    assert json.loads(out.read_text()) == result
    kinds = ("heavy", "light", "heavy_write", "light_write")
    ways = {f"{kind}_{way}" for kind in kinds for way in ("own_plan", "before")}
    assert set(result["p50_ms"]) == set(result["p95_ms"]) == ways
    assert all(ms > 0 for ms in result["p50_ms"].values())


def test_the_search_use_cost_benchmark_reports_the_ways_and_the_tables_updates(tmp_path):
    from benchmarks.search_use_cost import main

    out = tmp_path / "search_use_cost.json"
    tiny = "--users 20 --per-user 5 --queries 30 --block 5 --pool 300"
    result = main([*tiny.split(), "--out", str(out)])
    assert json.loads(out.read_text()) == result
    ways = {"no_use_recorded", "use_in_statement", "use_batched"}
    assert set(result["p50_ms"]) == set(result["wal_bytes_per_search"]) == ways
    # Two of the three ways record each search's use: the table saw those updates.
    assert result["use_updates"] > 0 and 0 <= result["hot_share"] <= 1


def test_the_full_matches_benchmark_runs_both_sides_on_the_same_heavy_user(tmp_path, db_url):
    from benchmarks import full_matches
    from memory_pg.sql import lexical

    out = tmp_path / "full_matches.json"
    # 1200 memories: more than the full-text leg's 1000-memory sample, a heavy user;
    # from 100 texts, so each query's own text is in about 12 of them (full matches).
    tiny = "--rows 1200 --queries 6 --pool 100"
    result = full_matches.main([*tiny.split(), "--database-url", db_url, "--out", str(out)])
    assert json.loads(out.read_text()) == result
    assert set(result["store_ms"]) == {"full matches first", "words always pull"}
    assert all(side["n"] == 6 and side["p50"] > 0 for side in result["store_ms"].values())
    assert result["queries"] == 6 and 0 < result["top10_kept"] <= 1
    assert result["full_matches_enough"] == lexical.FULL_MATCHES_ENOUGH  # restored after


def test_the_bulk_load_benchmark_times_the_loaded_users_searches_and_writes_both_ways(tmp_path):
    from benchmarks.bulk_load_stats import main

    out = tmp_path / "bulk_load_stats.json"
    result = main(["--light-users", "5", "--bulk", "600", "--queries", "3", "--writes", "2",
                   "--out", str(out)])  # fmt: skip
    assert json.loads(out.read_text()) == result
    ways = {f"{what}_{way}" for what in ("search", "write") for way in ("as_shipped", "before")}
    assert set(result["p50_ms"]) == ways and all(ms > 0 for ms in result["p50_ms"].values())
    assert set(result["load_s"]) == {"as_shipped", "before"}


def test_the_query_embedding_benchmark_times_torch_onnx_and_its_int8_copy(tmp_path):
    from benchmarks.embed_cpu import main

    # A LoCoMo-shaped file of its own: the shared benchmark data is not in every checkout.
    data = tmp_path / "questions.json"
    questions = ["What did Caroline research?", "小王去哪儿了？", "When is the piano lesson?"]
    data.write_text(json.dumps([{"qa": [{"question": q} for q in questions]}]))
    out = tmp_path / "embed_cpu.json"
    assert main(["--data", str(data), "--questions", "3", "--out", str(out)]) == 0
    result = json.loads(out.read_text())
    assert set(result["cpu_ms_p50"]) == {"torch", "onnx", "onnx-int8"}
    assert all(ms > 0 for ms in result["cpu_ms_p50"].values())
    assert result["cpu_ratio_onnx_over_onnx_int8"] > 0 and result["questions"] == 3
    assert 0.9 < result["int8_cosine_to_float32"]["min"] < 1.0


def test_the_open_loop_benchmark_serves_the_offered_load_and_loses_no_write(tmp_path):
    from benchmarks.concurrency import main

    out = tmp_path / "open.json"
    small = "--open 6:3 --duration 2 --users 2 --seed 2 --workers 4"
    homes = set(Path(tempfile.gettempdir()).glob("memory-pg-concurrency-*"))
    assert main([*small.split(), "--out", str(out)]) == 0
    # The run's embedded server and its files are gone with it.
    assert set(Path(tempfile.gettempdir()).glob("memory-pg-concurrency-*")) == homes
    (level,) = json.loads(out.read_text())["levels"]
    assert level["offered_searches_per_s"] == 6 and level["workers"] == 4
    # Every arrival was served, and every acknowledged write is there.
    assert level["arrived_searches"] > 0 and level["arrived_writes"] > 0
    assert level["served_searches"] == level["arrived_searches"]
    assert level["served_writes"] == level["arrived_writes"]
    assert level["acknowledged_writes"] == 2 * level["arrived_writes"]
    assert level["lost_writes"] == 0 and level["errors"] == {}
    assert level["search_ms"]["p50"] > 0 and level["dispatch_lag_ms"]["max"] >= 0


def test_the_open_loop_counts_a_calls_wait_for_a_free_worker():
    from benchmarks.concurrency import run_open

    class Slow:
        """A store whose search takes 50 ms: one worker, about 40 arrivals a second."""

        def search(self, query, user_id, top_k):
            time.sleep(0.05)

        def add_memories(self, texts, user_id):
            return []

        def get(self, memory_id, user_id):
            return None

    level = run_open(Slow(), ["u"], searches=40, writes=0, workers=1, seconds=1.0)
    assert level["served_searches"] == level["arrived_searches"] > 20
    # Served one at a time at 20 per second, calls queue: latency from arrival
    # grows far past the 50 ms a call takes.
    assert level["search_ms"]["p99"] > 200


def test_the_replicas_benchmark_reports_each_servers_cpu_per_search(tmp_path):
    from benchmarks.replicas import main

    out = tmp_path / "replicas.json"
    tiny = "--users 10 --per-user 3 --replicas 1 --threads 1 --seconds 1 --pool 100"
    result = main([*tiny.split(), "--out", str(out)])
    assert json.loads(out.read_text()) == result
    alone, with_one = result["runs"]
    assert (alone["replicas"], with_one["replicas"]) == (0, 1)
    assert alone["searches"] > 0 and with_one["searches"] > 0
    # With a replica the primary no longer runs the searches.
    assert len(with_one["replica_cpu_ms_per_search"]) == 1
    assert with_one["primary_cpu_ms_per_search"] < alone["primary_cpu_ms_per_search"]
