"""The installed ``memory-pg`` command, run in subprocesses as a user would."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def memory_pg_command() -> list[str]:
    script = Path(sys.executable).parent / "memory-pg"
    if not script.exists():  # pragma: no cover - installed without scripts
        pytest.fail("the memory-pg console script is not installed next to " + sys.executable)
    return [str(script)]


def run(args, env_extra=None, input_text=None, check=True):
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_PG_")}
    env.pop("DATABASE_URL", None)
    env.update({"HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)})
    env.update(env_extra or {})
    proc = subprocess.run(
        memory_pg_command() + list(args),
        capture_output=True,
        text=True,
        env=env,
        input=input_text,
        timeout=300,
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"exit {proc.returncode}\nstdout:{proc.stdout}\nstderr:{proc.stderr}")
    return proc


def test_migrate_sql_needs_no_database():
    out = run(["migrate", "--sql"]).stdout
    assert "CREATE EXTENSION IF NOT EXISTS vector" in out
    assert "CREATE TABLE memory_pg_memories" in out


def test_cli_round_trip_on_a_database_url(db_url, tmp_path):
    env = {"MEMORY_PG_DATABASE_URL": db_url}
    health = json.loads(run(["healthcheck", "--json"], env).stdout)
    assert health["ok"] is True and health["vector_extension"]

    added = json.loads(
        run(
            [
                "add",
                "使用 PostgreSQL 作为数据库",
                "--type",
                "key_decision",
                "--user",
                "alice",
                "--topic",
                "database",
                "--metadata",
                '{"source": "cli"}',
                "--json",
            ],
            env,
        ).stdout
    )
    run(["add", "I like hiking in the mountains", "--user", "alice"], env)
    found = json.loads(run(["search", "数据库选型", "--user", "alice", "--json"], env).stdout)
    assert found[0]["id"] == added["id"]
    assert found[0]["metadata"] == {"source": "cli"}

    assert json.loads(run(["search", "数据库选型", "--user", "bob", "--json"], env).stdout) == []

    exported = tmp_path / "alice.jsonl"
    run(["export", "--user", "alice", "-o", str(exported)], env)
    assert len(exported.read_text(encoding="utf-8").splitlines()) == 2
    imported = json.loads(run(["import", str(exported), "--user", "bob", "--json"], env).stdout)
    assert imported == {"imported": 2}
    stats = json.loads(run(["stats", "--user", "bob", "--json"], env).stdout)
    assert stats["memories"] == 2


def test_a_large_import_leaves_the_planner_knowing_the_new_user(db_url, raw, tmp_path):
    # Migration 0009: the import asks for the table to be analyzed (autovacuum is
    # off on it here, so only the command can have done it).
    raw.execute("ALTER TABLE memory_pg_memories SET (autovacuum_enabled = false)")
    env = {"MEMORY_PG_DATABASE_URL": db_url}
    source = tmp_path / "moved.jsonl"
    lines = [
        json.dumps({"text": f"ticket {i} is assigned", "memory_type": "todo"}) for i in range(600)
    ]
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    imported = json.loads(run(["import", str(source), "--user", "moved", "--json"], env).stdout)
    assert imported == {"imported": 600}
    row = raw.execute(
        "SELECT most_common_vals::text::text[] FROM pg_stats "
        "WHERE tablename = 'memory_pg_memories' AND attname = 'user_id'"
    ).fetchone()
    assert row is not None and "moved" in row[0]


def test_bad_input_exits_1_with_a_clear_message(db_url):
    env = {"MEMORY_PG_DATABASE_URL": db_url}
    proc = run(["add", "   ", "--user", "alice"], env, check=False)
    assert proc.returncode == 1
    assert "empty" in proc.stderr
    proc = run(["add", "x", "--type", "nope", "--user", "alice"], env, check=False)
    assert proc.returncode == 1 and "unknown memory type" in proc.stderr
    proc = run(["search", "x"], env, check=False)
    assert proc.returncode == 2 and "--user" in proc.stderr  # usage, as in every command
    # A file that cannot be written or read: a clear error, not a traceback.
    proc = run(["export", "--user", "alice", "-o", "/nonexistent/dir/x.jsonl"], env, check=False)
    assert proc.returncode == 1 and "No such file" in proc.stderr
    assert "Traceback" not in proc.stderr
    proc = run(["import", "/nonexistent/x.jsonl", "--user", "alice"], env, check=False)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr


def test_env_fallbacks_replace_flags(db_url):
    env = {"MEMORY_PG_DATABASE_URL": db_url, "MEMORY_PG_USER_ID": "carol", "MEMORY_PG_JSON": "1"}
    run(["add", "carol's note about Rust"], env)
    found = json.loads(run(["search", "Rust"], env).stdout)
    assert found[0]["text"] == "carol's note about Rust"


SEED_WRITER = textwrap.dedent(
    """
    from memory_pg import MemoryStore
    store = MemoryStore(user_id="seed-user")
    store.add_memory("使用 PostgreSQL 作为数据库", "key_decision")
    store.add_memory("我喜欢周末去爬山")
    store.add_memory("The quarterly report is due on Friday", "todo")
    store.add_memory("用户住在杭州", "user_profile")
    store.close()
    """
)


@pytest.fixture
def home():
    # Its own folder, not pytest's tmp_path: concurrent pytest sessions prune each
    # other's old basetemp folders, which would pull the data directory away.
    folder = Path(tempfile.mkdtemp(prefix="memory-pg-home-"))
    yield folder / "home"
    shutil.rmtree(folder, ignore_errors=True)


def test_seed_acceptance_new_process_finds_it_after_a_restart(home):
    """The seed article's check, on the embedded server with no URL."""
    env = {"MEMORY_PG_HOME": str(home)}
    writer_env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_PG_")}
    writer_env.pop("DATABASE_URL", None)
    writer_env.update(env, HF_HUB_OFFLINE="1", PYTHONPATH=str(ROOT))
    subprocess.run([sys.executable, "-c", SEED_WRITER], check=True, env=writer_env, timeout=300)
    # The writer was the last process holding the server: it stopped it on exit.
    assert not (home / "pgdata" / "postmaster.pid").exists()

    for _ in range(2):  # a new process, and the server restarted under it, twice
        found = json.loads(
            run(["search", "数据库选型", "--user", "seed-user", "--json"], env).stdout
        )
        assert "使用 PostgreSQL 作为数据库" in [r["text"] for r in found[:3]]
        assert not (home / "pgdata" / "postmaster.pid").exists()


def test_every_command_option_has_an_environment_fallback(db_url):
    env = {
        "MEMORY_PG_DATABASE_URL": db_url,
        "MEMORY_PG_USER_ID": "dave",
        "MEMORY_PG_TYPE": "todo",
        "MEMORY_PG_TOPIC": "Report",
        "MEMORY_PG_IMPORTANCE": "0.9",
    }
    memory_id = run(["add", "write the quarterly report"], env).stdout.strip()
    found = json.loads(run(["search", "quarterly report", "--json"], env).stdout)
    assert found[0]["id"] == memory_id
    assert (found[0]["memory_type"], found[0]["topic"]) == ("todo", "report")
    assert found[0]["importance"] == pytest.approx(0.9)


def test_eval_write_path_reports_the_four_figures(db_url, tmp_path):
    cases = {
        "name": "tiny",
        "cases": [
            {
                "id": "seed",
                "lang": "zh",
                "split": "dev",
                "kind": "memories",
                "memories": [
                    {"text": "关键决策：数据库使用 MySQL", "type": "key_decision"},
                    {
                        "text": "关键决策：数据库改用 PostgreSQL，不再使用 MySQL",
                        "type": "key_decision",
                    },
                ],
                "expect_current": ["改用 PostgreSQL"],
                "expect_superseded": ["数据库使用 MySQL"],
            },
            {
                "id": "question",
                "lang": "en",
                "split": "held_out",
                "kind": "dialogue",
                "sessions": [
                    ["user: We decided to use PostgreSQL as the database."],
                    ["user: Which database did we decide to use?", "assistant: PostgreSQL."],
                ],
                "expect_current": ["PostgreSQL as the database"],
                "expect_absent": ["Which database"],
            },
        ],
    }
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(cases, ensure_ascii=False), encoding="utf-8")
    env = {"MEMORY_PG_DATABASE_URL": db_url}
    report = json.loads(run(["eval", "--write-path", str(path), "--json"], env).stdout)
    assert report["overall"] == {
        "cases": 2,
        "cases_ok": 2,
        "fact_recall": 1.0,
        "non_fact_precision": 1.0,
        "non_facts_stored": 0,
        "supersessions_expected": 1,
        "supersessions_made": 1,
        "false_supersessions": 0,
    }
    assert set(report["by_split"]) == {"dev", "held_out"}
    text = run(["eval", "--write-path", str(path)], env).stdout
    assert "fact-recall" in text and "false-supersessions" in text


def test_the_installed_command_shows_an_entitys_graph_for_its_user_only(db_url):
    env = {"MEMORY_PG_DATABASE_URL": db_url}
    run(["add", "小王在北京找到了新工作", "--user", "alice"], env)
    run(["add", "小王和张伟下周去上海", "--user", "alice"], env)
    run(["add", "小王's vault code is 1234", "--user", "bob"], env)

    dot = run(["graph", "--user", "alice", "--entity", "小王", "--format", "dot"], env).stdout
    assert dot.lstrip().startswith(("digraph", "graph")) and "小王" in dot
    assert "北京" in dot and "vault" not in dot
    listed = json.loads(run(["entities", "--user", "alice", "--json"], env).stdout)
    assert {"小王", "北京"} <= {e["name"] for e in listed}
    missing = run(["entity", "小王"], env, check=False)
    assert missing.returncode == 2 and "user" in missing.stderr
    assert run(["entity", "nobody", "--user", "alice"], env, check=False).returncode == 1


def test_turns_frame_each_other_unless_the_environment_says_not(db_url, tmp_path):
    env = {"MEMORY_PG_DATABASE_URL": db_url}
    meta = '{"session_id": "chat"}'
    for user, extra in (("alice", {}), ("bob", {"MEMORY_PG_SESSION_CONTEXT": "false"})):
        for turn in ("Did you go to the pottery class?", "Yes, last Friday."):
            run(
                ["add", turn, "--type", "dialogue", "--user", user, "--metadata", meta],
                {**env, **extra},
            )

    def contexts(user: str) -> dict[str, str | None]:
        out = tmp_path / f"{user}.jsonl"
        run(["export", "--user", user, "-o", str(out)], env)
        rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
        return {r["text"]: r.get("context") for r in rows}

    assert contexts("alice")["Yes, last Friday."] == "Did you go to the pottery class?"
    assert contexts("bob")["Yes, last Friday."] is None
    bad = {**env, "MEMORY_PG_SESSION_CONTEXT": "maybe"}
    proc = run(["add", "x", "--user", "bob"], bad, check=False)
    assert proc.returncode == 1 and "MEMORY_PG_SESSION_CONTEXT" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_the_query_precision_is_chosen_by_the_environment(db_url, tmp_path):
    env = {"MEMORY_PG_DATABASE_URL": db_url}
    for text in ("We chose PostgreSQL for the billing service", "My sister lives in Lyon"):
        run(["add", text, "--user", "carol"], env)
    for precision in ("int8", "float32"):
        found = run(
            ["search", "which database did we choose", "--user", "carol", "--json"],
            {**env, "MEMORY_PG_QUERY_PRECISION": precision},
        )
        hits = json.loads(found.stdout)
        assert hits[0]["text"] == "We chose PostgreSQL for the billing service", precision
    # A bad value is a clear error before anything is written.
    bad = {**env, "MEMORY_PG_QUERY_PRECISION": "half"}
    proc = run(["add", "another fact", "--user", "carol"], bad, check=False)
    assert proc.returncode == 1 and "MEMORY_PG_QUERY_PRECISION" in proc.stderr
    assert "Traceback" not in proc.stderr
    out = tmp_path / "carol.jsonl"
    run(["export", "--user", "carol", "-o", str(out)], env)
    assert len(out.read_text(encoding="utf-8").splitlines()) == 2


@pytest.mark.parametrize(
    "args", [["token", "create", "--user", "piper"], ["stats", "--json"]], ids=lambda a: a[0]
)
def test_a_reader_that_leaves_early_gets_no_traceback(db_url, args):
    """``memory-pg token create ... | head -1``: the reader may be gone before the output
    is written. Here it is gone from the start, so the first write meets a closed pipe."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_PG_")}
    env.update({"HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT), "MEMORY_PG_DATABASE_URL": db_url})
    with subprocess.Popen(
        [*memory_pg_command(), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        text=True,
    ) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        proc.stdout.close()
        said = proc.stderr.read()
        code = proc.wait(timeout=300)
    assert "Traceback" not in said and "BrokenPipe" not in said and "Errno" not in said, said
    assert code == 141  # as a Unix tool that SIGPIPE ends: `set -o pipefail` sees it
