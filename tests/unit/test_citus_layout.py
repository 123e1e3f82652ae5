"""The schema keeps to the Citus layout of docs/citus.md: every key of user data has user_id.

Citus can only enforce a primary key or a unique constraint on a distributed
table when it includes the distribution column, and a statement stays on one
shard only when it filters on it. A new table, key or unique index that forgets
``user_id`` would make ``create_distributed_table`` fail, so these tests fail first.
"""

from __future__ import annotations

import re
from pathlib import Path

from sqlalchemy import ForeignKeyConstraint, Index, PrimaryKeyConstraint, UniqueConstraint

from memory_pg.tables import metadata

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "citus.md"

DISTRIBUTION_COLUMN = "user_id"


def documented_layout() -> tuple[dict[str, str], set[str]]:
    """Distributed tables (with their colocation anchor) and reference tables, from the doc."""
    text = DOC.read_text(encoding="utf-8")
    distributed = {}
    for table, column, colocate in re.findall(
        r"create_distributed_table\('(\w+)',\s*'(\w+)'(?:,\s*colocate_with\s*=>\s*'(\w+)')?\)",
        text,
    ):
        assert column == DISTRIBUTION_COLUMN, table
        distributed[table] = colocate or table
    reference = set(re.findall(r"create_reference_table\('(\w+)'\)", text))
    return distributed, reference


def user_tables() -> list:
    return [t for t in metadata.sorted_tables if DISTRIBUTION_COLUMN in t.c]


def test_the_documented_layout_names_every_table_once():
    distributed, reference = documented_layout()
    tables = {t.name for t in metadata.sorted_tables}
    assert set(distributed) | reference == tables | {"memory_pg_alembic_version"}
    assert not set(distributed) & reference
    # Exactly the tables that hold user_id are distributed, all co-located.
    assert set(distributed) == {t.name for t in user_tables()}
    assert set(distributed.values()) == {"memory_pg_memories"}


def test_every_primary_key_of_user_data_includes_user_id():
    for table in user_tables():
        pk = [c for c in table.constraints if isinstance(c, PrimaryKeyConstraint)]
        assert pk and DISTRIBUTION_COLUMN in pk[0].columns, table.name


def test_every_unique_constraint_and_index_of_user_data_includes_user_id():
    checked = 0
    for table in user_tables():
        for con in table.constraints:
            if isinstance(con, UniqueConstraint):
                assert DISTRIBUTION_COLUMN in con.columns, (table.name, con.name)
                checked += 1
        for index in table.indexes:
            assert isinstance(index, Index)
            if index.unique:
                names = {getattr(e, "name", None) for e in index.expressions}
                assert DISTRIBUTION_COLUMN in names, (table.name, index.name)
                checked += 1
    # The duplicate guard on memories is one of them: the check is not vacuous.
    assert checked >= 1


def test_foreign_keys_between_user_tables_carry_user_id():
    for table in user_tables():
        for con in table.constraints:
            if isinstance(con, ForeignKeyConstraint):
                target = con.elements[0].column.table
                if DISTRIBUTION_COLUMN in target.c:
                    assert DISTRIBUTION_COLUMN in con.columns, (table.name, con.name)


def test_reference_tables_hold_no_user_data():
    _, reference = documented_layout()
    for table in metadata.sorted_tables:
        if table.name in reference:
            assert DISTRIBUTION_COLUMN not in table.c, table.name
