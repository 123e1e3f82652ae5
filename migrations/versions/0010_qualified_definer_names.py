"""``memory_pg_record_embedding_v1`` names only ``pg_catalog``'s functions and operators.

The function of ``0005`` runs as the owner of the tables (``SECURITY DEFINER``)
with its ``search_path`` pinned to the schema it was created in. PostgreSQL
searches ``pg_catalog`` first, but it prefers an exact match of argument types
wherever it finds one: ``a.attrelid = 'memory_pg_memories'::regclass`` compares an
``oid`` with a ``regclass``, which ``pg_catalog`` serves only through a cast, so an
operator ``=(oid, regclass)`` created in that schema would be called instead, as
the owner, by every store that opens the database. The same holds for the text
``||`` of its error messages and for ``jsonb_build_object``. That needs a role
that may create objects in the schema (not the application role in PostgreSQL
15's default ``public``), but the function is there so that such a role gains
nothing. This revision replaces its body with one that qualifies each function
and operator with ``pg_catalog`` and casts its literals to the exact types; what
it does is unchanged. ``0009``'s function was written that way.

``CREATE OR REPLACE`` keeps the function's grants but not its settings: the
``search_path`` is pinned again. The downgrade puts ``0005``'s body back, pinned.

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-04
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Constant text, no '%' (Alembic's offline SQL would double it).
_QUALIFIED = """
CREATE OR REPLACE FUNCTION memory_pg_record_embedding_v1(model text, dimension integer)
RETURNS jsonb
LANGUAGE plpgsql
SECURITY DEFINER
AS $$
DECLARE
    declared integer;
    recorded jsonb;
BEGIN
    IF model IS NULL OR pg_catalog.length(model) NOT BETWEEN 1::integer AND 500::integer
       OR dimension IS NULL OR dimension NOT BETWEEN 1::integer AND 16000::integer THEN
        RAISE EXCEPTION USING ERRCODE = '22023',
            MESSAGE = 'memory-pg: an embedding model needs a name and a dimension';
    END IF;
    SELECT NULLIF(a.atttypmod, -1::integer) INTO declared FROM pg_catalog.pg_attribute a
    WHERE a.attrelid OPERATOR(pg_catalog.=) 'memory_pg_memories'::regclass::oid
      AND a.attname OPERATOR(pg_catalog.=) 'embedding'::name;
    IF declared IS NOT NULL AND declared OPERATOR(pg_catalog.<>) dimension THEN
        RAISE EXCEPTION USING ERRCODE = '22023',
            MESSAGE = 'memory-pg: the embedding column holds '
                OPERATOR(pg_catalog.||) declared::text
                OPERATOR(pg_catalog.||) '-d vectors, not '::text
                OPERATOR(pg_catalog.||) dimension::text
                OPERATOR(pg_catalog.||) '-d'::text;
    END IF;
    INSERT INTO memory_pg_settings (key, value)
    VALUES ('embedding'::text, pg_catalog.jsonb_build_object(
        'model'::text, model, 'dimension'::text, dimension))
    ON CONFLICT (key) DO NOTHING;
    SELECT s.value INTO recorded FROM memory_pg_settings s
    WHERE s.key OPERATOR(pg_catalog.=) 'embedding'::text;
    RETURN recorded;
END
$$
"""

# 0005's body, as it was.
_AS_IN_0005 = """
CREATE OR REPLACE FUNCTION memory_pg_record_embedding_v1(model text, dimension integer)
RETURNS jsonb
LANGUAGE plpgsql
SECURITY DEFINER
AS $$
DECLARE
    declared integer;
    recorded jsonb;
BEGIN
    IF model IS NULL OR length(model) NOT BETWEEN 1 AND 500
       OR dimension IS NULL OR dimension NOT BETWEEN 1 AND 16000 THEN
        RAISE EXCEPTION USING ERRCODE = '22023',
            MESSAGE = 'memory-pg: an embedding model needs a name and a dimension';
    END IF;
    SELECT NULLIF(a.atttypmod, -1) INTO declared FROM pg_attribute a
    WHERE a.attrelid = 'memory_pg_memories'::regclass AND a.attname = 'embedding';
    IF declared IS NOT NULL AND declared <> dimension THEN
        RAISE EXCEPTION USING ERRCODE = '22023',
            MESSAGE = 'memory-pg: the embedding column holds ' || declared
                || '-d vectors, not ' || dimension || '-d';
    END IF;
    INSERT INTO memory_pg_settings (key, value)
    VALUES ('embedding', jsonb_build_object('model', model, 'dimension', dimension))
    ON CONFLICT (key) DO NOTHING;
    SELECT s.value INTO recorded FROM memory_pg_settings s WHERE s.key = 'embedding';
    RETURN recorded;
END
$$
"""

_PIN = """
DO $$
BEGIN
    EXECUTE 'ALTER FUNCTION memory_pg_record_embedding_v1(text, integer) SET search_path = '
        OPERATOR(pg_catalog.||) pg_catalog.quote_ident(pg_catalog.current_schema()::text)
        OPERATOR(pg_catalog.||) ', pg_temp';
END $$
"""


def upgrade() -> None:
    op.execute(_QUALIFIED)
    op.execute(_PIN)


def downgrade() -> None:
    op.execute(_AS_IN_0005)
    op.execute(_PIN)
