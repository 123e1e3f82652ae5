"""The settings table read-only for the application and maintenance roles.

``memory_pg_settings`` records the embedding model every store and job loads. With
``INSERT, UPDATE`` on it (granted by ``0003``), any connection of the application
role could write another model name or a path there and break every tenant at
once. This revision:

* revokes ``INSERT, UPDATE`` on ``memory_pg_settings`` from ``memory_pg_app`` and
  ``memory_pg_maintenance``: they keep ``SELECT`` only;
* adds ``memory_pg_record_embedding_v1(model text, dimension integer) RETURNS
  jsonb``, ``SECURITY DEFINER`` (it runs as the migrating role, the owner of the
  tables): it records the model *only while none is recorded* and returns what is
  recorded, so a store of the application role can still open a new database.
  It refuses a dimension other than the one the vector column declares, and it
  can never change a recorded model: only the owner can, with ``memory-pg
  reembed``. Its ``search_path`` is pinned to the schema it was created in (and
  ``pg_temp`` last), so nobody can slip another ``memory_pg_settings`` in front;
  ``EXECUTE`` is revoked from ``PUBLIC`` and granted to the two group roles.

The downgrade drops the function and grants ``INSERT, UPDATE`` back, as ``0003``
left them.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-03
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Constant text, no '%' (Alembic's offline SQL would double it); role names quoted
# with quote_ident like 0003.
_CREATE_FUNCTION = """
CREATE FUNCTION memory_pg_record_embedding_v1(model text, dimension integer)
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

_PIN_AND_GRANT = """
DO $$
DECLARE
    r text;
BEGIN
    EXECUTE 'ALTER FUNCTION memory_pg_record_embedding_v1(text, integer) SET search_path = '
        || quote_ident(current_schema()) || ', pg_temp';
    REVOKE ALL ON FUNCTION memory_pg_record_embedding_v1(text, integer) FROM PUBLIC;
    FOREACH r IN ARRAY ARRAY['memory_pg_app', 'memory_pg_maintenance'] LOOP
        CONTINUE WHEN NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = r);
        EXECUTE 'REVOKE INSERT, UPDATE ON memory_pg_settings FROM ' || quote_ident(r);
        EXECUTE 'GRANT EXECUTE ON FUNCTION memory_pg_record_embedding_v1(text, integer) TO '
            || quote_ident(r);
    END LOOP;
END $$
"""

_RESTORE_GRANTS = """
DO $$
DECLARE
    r text;
BEGIN
    FOREACH r IN ARRAY ARRAY['memory_pg_app', 'memory_pg_maintenance'] LOOP
        CONTINUE WHEN NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = r);
        EXECUTE 'GRANT SELECT, INSERT, UPDATE ON memory_pg_settings TO ' || quote_ident(r);
    END LOOP;
END $$
"""


def upgrade() -> None:
    op.execute(_CREATE_FUNCTION)
    op.execute(_PIN_AND_GRANT)


def downgrade() -> None:
    op.execute("DROP FUNCTION IF EXISTS memory_pg_record_embedding_v1(text, integer)")
    op.execute(_RESTORE_GRANTS)
