"""Migrations: one head, reviewable SQL, round trips that lose no row, schema equal to tables.py."""

from __future__ import annotations

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import create_engine, inspect, text

from memory_pg import schema
from memory_pg.tables import VERSION_TABLE, metadata
from tests.conftest import count_rows

TABLES = {
    "memory_pg_memories",
    "memory_pg_dialogue_buffer",
    "memory_pg_history",
    "memory_pg_settings",
    "memory_pg_tokens",
    "memory_pg_entities",
    "memory_pg_memory_entities",
    "memory_pg_memory_links",
}


@pytest.fixture
def engine(db_url):
    engine = create_engine(db_url)
    yield engine
    engine.dispose()


def test_there_is_one_head_and_a_linear_history():
    script = ScriptDirectory.from_config(schema.alembic_config())
    assert len(script.get_heads()) == 1
    revisions = list(script.walk_revisions())
    assert revisions[-1].revision == "0001"
    assert "memory_pg" in revisions[-1].branch_labels
    for rev in revisions:
        assert callable(rev.module.downgrade), rev.revision


def test_offline_sql_is_reviewable():
    sql = schema.offline_sql()
    assert sql.index("CREATE EXTENSION IF NOT EXISTS vector") < sql.index(
        "CREATE TABLE memory_pg_memories"
    )
    assert "embedding VECTOR(384) NOT NULL" in sql
    assert "USING hnsw (embedding vector_cosine_ops)" in sql
    assert "CREATE TABLE " + VERSION_TABLE in sql
    assert "alembic_version (" not in sql.replace(VERSION_TABLE, "")
    assert "VECTOR(512)" in schema.offline_sql(embedding_dim=512)


def _diffs(engine):
    with engine.connect() as conn:
        ctx = MigrationContext.configure(
            conn,
            opts={
                "include_object": lambda obj, name, type_, reflected, compare_to: (
                    type_ != "table" or (name in TABLES)
                ),
                "compare_type": False,
            },
        )
        return compare_metadata(ctx, metadata)


def test_migrated_schema_equals_the_table_definitions(engine):
    assert _diffs(engine) == []
    columns = {c["name"]: c for c in inspect(engine).get_columns("memory_pg_memories")}
    declared = {c.name: c for c in metadata.tables["memory_pg_memories"].columns}
    assert columns.keys() == declared.keys()
    for name, column in declared.items():
        assert columns[name]["nullable"] == column.nullable, name


def test_the_storage_options_the_table_definitions_declare_are_the_migrated_ones(raw):
    """``compare_metadata`` does not see ``postgresql_with``: fillfactor, the HNSW
    graph's settings and the GIN index's ``fastupdate`` are compared here."""
    declared = {}
    for table in metadata.tables.values():
        declared[table.name] = table.dialect_options["postgresql"]["with"]
        for index in table.indexes:
            declared[index.name] = index.dialect_options["postgresql"]["with"]
    declared = {name: options for name, options in declared.items() if options}
    assert {"memory_pg_memories", "memory_pg_memories_search_tsv_idx"} <= declared.keys()
    for name, options in declared.items():
        migrated = raw.execute(
            "SELECT reloptions FROM pg_class WHERE relname = %s", (name,)
        ).fetchone()[0]
        assert sorted(migrated) == sorted(f"{k}={v}" for k, v in options.items()), name


def _populate(raw):
    raw.execute(
        "INSERT INTO memory_pg_memories (user_id, memory_type, text, embedding, embedding_model,"
        " search_tsv, content_hash) SELECT 'u' || (i % 7), 'dialogue', 'text ' || i,"
        " array_fill(0.1::real, ARRAY[384])::vector, 'm', to_tsvector('simple', 'text ' || i),"
        " md5(i::text) FROM generate_series(1, 200) AS i"
    )
    raw.execute(
        "INSERT INTO memory_pg_dialogue_buffer (user_id, role, content)"
        " SELECT 'u1', 'user', 'turn ' || i FROM generate_series(1, 30) AS i"
    )
    raw.execute(
        "INSERT INTO memory_pg_history (user_id, memory_id, event)"
        " SELECT user_id, id, 'added' FROM memory_pg_memories"
    )


def _counts(raw):
    return {
        t: count_rows(raw, t)
        for t in ("memory_pg_memories", "memory_pg_dialogue_buffer", "memory_pg_history")
    }


def test_downgrade_then_upgrade_keeps_every_row(engine, raw):
    _populate(raw)
    before = _counts(raw)
    script = ScriptDirectory.from_config(schema.alembic_config())
    # Every revision after the one that creates the tables must round-trip with data.
    later = [r.revision for r in script.walk_revisions() if r.revision not in ("0001", "0002")]
    for revision in ["0002", *later]:
        schema.downgrade(engine, revision)
        assert _counts(raw) == before, revision
        schema.upgrade(engine)
        assert _counts(raw) == before, revision
    assert _diffs(engine) == []


def test_base_to_head_and_back(engine, raw):
    schema.downgrade(engine, "base")
    left = set(inspect(engine).get_table_names()) & TABLES
    assert left == set()
    schema.upgrade(engine)
    assert TABLES <= set(inspect(engine).get_table_names())
    with engine.connect() as conn:
        assert schema.current_revision(conn) == schema.head_revision()


def test_a_host_applications_alembic_history_is_untouched(engine, raw):
    raw.execute("CREATE TABLE alembic_version (version_num varchar(32) PRIMARY KEY)")
    raw.execute("INSERT INTO alembic_version VALUES ('host_rev_42')")
    schema.downgrade(engine, "base")
    schema.upgrade(engine)
    assert raw.execute("SELECT version_num FROM alembic_version").fetchall() == [("host_rev_42",)]


def test_0004_adds_the_context_and_leaves_room_for_hot_updates(engine, raw):
    def state():
        cols = {c["name"] for c in inspect(engine).get_columns("memory_pg_memories")}
        options = raw.execute(
            "SELECT coalesce(reloptions, '{}') FROM pg_class WHERE relname = 'memory_pg_memories'"
        ).fetchone()[0]
        return "context" in cols, options

    schema.downgrade(engine, "0004")
    assert state() == (True, ["fillfactor=80"])
    schema.downgrade(engine, "0003")
    assert state() == (False, [])
    schema.upgrade(engine)
    assert state() == (True, ["fillfactor=70"])


def test_0008_leaves_room_on_each_page_for_two_uses_in_place(engine, raw):
    def fillfactor():
        return raw.execute(
            "SELECT reloptions FROM pg_class WHERE relname = 'memory_pg_memories'"
        ).fetchone()[0]

    assert fillfactor() == ["fillfactor=70"]
    schema.downgrade(engine, "0007")
    assert fillfactor() == ["fillfactor=80"]
    schema.upgrade(engine)
    assert fillfactor() == ["fillfactor=70"]


def test_0009_lets_the_application_role_have_the_memories_table_analyzed(engine, raw):
    def function():
        return raw.execute(
            "SELECT p.prosecdef, has_function_privilege('memory_pg_app', p.oid, 'EXECUTE'), "
            "has_function_privilege('public', p.oid, 'EXECUTE'), p.proconfig FROM pg_proc p "
            "WHERE p.proname = 'memory_pg_analyze_memories_v1'"
        ).fetchone()

    pinned = ["search_path=public, pg_temp"]
    # Runs as the owner, the app may call it, and no schema can be slipped in before.
    assert function() == (True, True, False, pinned)
    schema.downgrade(engine, "0008")
    assert function() is None
    schema.upgrade(engine)
    assert function() == (True, True, False, pinned)


def test_0011_leaves_no_pending_list_for_a_search_to_scan(engine, raw):
    """A heavy user's full-text leg reads the GIN index: entries written before 0011
    sat in its pending list, scanned by every such search until a vacuum merged them."""

    def options():
        return raw.execute(
            "SELECT reloptions FROM pg_class WHERE relname = 'memory_pg_memories_search_tsv_idx'"
        ).fetchone()[0]

    assert options() == ["fastupdate=off"]
    schema.downgrade(engine, "0010")
    assert options() is None
    _populate(raw)  # written with the list on: their entries wait in it
    before = _counts(raw)
    schema.upgrade(engine)
    assert options() == ["fastupdate=off"]
    # Merged by the upgrade: nothing is left for a search (or this call) to merge.
    merged = raw.execute(
        "SELECT gin_clean_pending_list('memory_pg_memories_search_tsv_idx'::regclass)"
    ).fetchone()[0]
    assert merged == 0
    assert _counts(raw) == before
    # The merged entries find their rows through the index.
    raw.execute("SET enable_seqscan = off")
    try:
        found = raw.execute(
            "SELECT count(*) FROM memory_pg_memories "
            "WHERE search_tsv @@ to_tsquery('simple', 'text')"
        ).fetchone()[0]
    finally:
        raw.execute("RESET enable_seqscan")
    assert found == before["memory_pg_memories"]


@pytest.mark.slow  # waits out the migration's 5 s lock_timeout
@pytest.mark.parametrize("before", ["0010", "0012", "0013"])
def test_a_locking_revision_gives_up_on_a_table_another_transaction_reads_and_runs_again_later(
    engine, raw, db_url, before
):
    """``ALTER INDEX`` (0011) and ``ALTER TABLE`` (0013, 0014) wait for every transaction that
    touched the table, and every later query of it waits behind the ALTER: the
    migration gives up after 5 s."""
    from tests.acceptance.test_cli import run as run_installed

    schema.downgrade(engine, before)
    reader = create_engine(db_url)
    try:
        with reader.connect() as conn:
            conn.execute(text("SELECT count(*) FROM memory_pg_memories"))  # holds its locks
            proc = run_installed(["migrate"], {"MEMORY_PG_DATABASE_URL": db_url}, check=False)
            conn.rollback()
    finally:
        reader.dispose()
    assert proc.returncode == 1, proc.stderr
    assert "lock_timeout" in proc.stderr and "run it again" in proc.stderr
    assert "Traceback" not in proc.stderr
    with engine.connect() as conn:
        assert schema.current_revision(conn) == before
    run_installed(["migrate"], {"MEMORY_PG_DATABASE_URL": db_url})
    with engine.connect() as conn:
        assert schema.current_revision(conn) == schema.head_revision()
    options = raw.execute(
        "SELECT reloptions FROM pg_class WHERE relname = 'memory_pg_memories_search_tsv_idx'"
    ).fetchone()[0]
    assert options == ["fastupdate=off"]
    columns = {c["name"] for c in inspect(engine).get_columns("memory_pg_memory_entities")}
    assert "spellings" in columns


def test_0013_gives_each_mention_the_aliases_its_own_text_holds(make_store, engine):
    """Before 0013 an entity's aliases were one list, gathered from every memory that
    named it (deleted ones too); the fill-in gives each mention only the aliases its
    own memory's text holds (Latin ones as whole words)."""
    store = make_store(user_id="alice")
    store.add_memories(
        [
            {
                "text": "Project Zeus ships in May; Zeus needs a designer",
                "entities": [{"name": "Project Zeus", "kind": "project", "aliases": ["Zeus"]}],
            },
            {"text": "王伟 joined the design team"},
            {"text": "Robert Chen leads the payments team"},
        ],
        agent_id="planner",
    )
    [gone] = store.add_memories(
        [
            {
                "text": "王伟 is interviewing elsewhere",
                "private": True,
                "entities": [{"name": "王伟", "kind": "person", "aliases": ["小王"]}],
            }
        ],
        agent_id="coder",
    )
    store.add_memories(
        [
            {
                "text": "Robert Chen told me about the offer",
                "private": True,
                "entities": [{"name": "Robert Chen", "kind": "person", "aliases": ["Rob"]}],
            }
        ],
        agent_id="coder",
    )
    store.delete_memory(gone)  # the entity's list still holds 小王
    store.close()
    schema.downgrade(engine, "0012")
    schema.upgrade(engine)
    after = make_store(user_id="alice")
    # An alias the shared text holds stays for every agent.
    assert after.entity("Zeus", agent_id="planner")["aliases"] == ["Zeus"]
    # Neither the deleted private note's alias nor a nickname that is only the start
    # of a word in the shared text ("Rob" in "Robert") is shown to the planner.
    assert after.entity("王伟", agent_id="planner")["aliases"] == []
    assert after.entity("小王", agent_id="planner") is None
    assert after.entity("Rob", agent_id="planner") is None
    assert after.entity("Robert Chen", agent_id="planner")["aliases"] == []


def test_0013_that_fails_changes_nothing_even_without_a_transaction(make_store, db_url, raw):
    """The fill-in runs with row-level security not forced: on an AUTOCOMMIT
    connection a failure half-way must not leave it so (one DO block)."""
    store = make_store(user_id="alice")
    store.add_memories(
        [
            {
                "text": "王伟 joined the design team",
                "entities": [{"name": "王伟", "kind": "person", "aliases": ["小王"]}],
            }
        ]
    )
    store.close()
    autocommit = create_engine(db_url, isolation_level="AUTOCOMMIT")
    try:
        schema.downgrade(autocommit, "0012")
        raw.execute(
            "CREATE FUNCTION test_refuse() RETURNS trigger LANGUAGE plpgsql AS "
            "$$ BEGIN RAISE EXCEPTION 'refused'; END $$"
        )
        raw.execute(
            "CREATE TRIGGER test_refuse BEFORE UPDATE ON memory_pg_memory_entities "
            "FOR EACH ROW EXECUTE FUNCTION test_refuse()"
        )
        with pytest.raises(Exception, match="refused"):
            schema.upgrade(autocommit)
        forced = raw.execute(
            "SELECT relname, relforcerowsecurity FROM pg_class WHERE relname IN "
            "('memory_pg_memories', 'memory_pg_entities', 'memory_pg_memory_entities')"
        ).fetchall()
        assert sorted(forced) == [
            ("memory_pg_entities", True),
            ("memory_pg_memories", True),
            ("memory_pg_memory_entities", True),
        ]
        columns = {c["name"] for c in inspect(autocommit).get_columns("memory_pg_memory_entities")}
        assert "spellings" not in columns
        with autocommit.connect() as conn:
            assert schema.current_revision(conn) == "0012"
        raw.execute("DROP TRIGGER test_refuse ON memory_pg_memory_entities")
        raw.execute("DROP FUNCTION test_refuse()")
        schema.upgrade(autocommit)
        with autocommit.connect() as conn:
            assert schema.current_revision(conn) == schema.head_revision()
    finally:
        autocommit.dispose()
