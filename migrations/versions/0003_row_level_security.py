"""Row-level security on user data: each transaction sees only its own tenant's rows.

What it does, on ``memory_pg_memories``, ``memory_pg_dialogue_buffer`` and
``memory_pg_history``:

* ``ENABLE`` and ``FORCE ROW LEVEL SECURITY``: the policies apply to the
  table owner too (only superusers and ``BYPASSRLS`` roles skip them);
* policy ``memory_pg_tenant`` for every role: a row is visible and writable only
  when its ``user_id`` equals ``current_setting('memory_pg.user_id', true)``,
  which the store sets with ``set_config(..., true)`` at the start of each
  transaction (transaction-local, so safe behind PgBouncer's transaction pooling).
  With no tenant set, nothing is visible and nothing can be written;
* policy ``memory_pg_maintenance`` for the group role ``memory_pg_maintenance``:
  every row, for the cross-user jobs (forget, consolidate, stats of all users);
* grants: ``SELECT, INSERT, UPDATE, DELETE`` on the three tables and
  ``SELECT, INSERT, UPDATE`` on ``memory_pg_settings`` to the group roles
  ``memory_pg_app`` and ``memory_pg_maintenance``, ``SELECT`` on the version table.
  Neither role owns anything: it cannot alter or drop the tables, nor switch
  row-level security off.

Roles are cluster-wide, so creating them is the DBA's call. ``manage_roles``
(``-x manage_roles=auto|true|false``, or ``MEMORY_PG_MANAGE_ROLES``):

* ``auto`` (default): a missing group role is created ``NOLOGIN`` when the
  migrating role may create roles (``CREATEROLE`` or superuser); otherwise the
  migration goes on with a NOTICE, and the grants and the maintenance policy of
  the missing role are skipped (create the roles, then downgrade to 0002 and
  upgrade again). Tenant isolation itself is in force either way;
* ``true``: as ``auto``, but failing when a role cannot be created;
* ``false``: never create roles; use the ones a DBA made beforehand.

Roles this migration created are recorded in ``memory_pg_settings``
(``roles_created``); the downgrade drops only those, and only when nothing in
another database still depends on them (otherwise it leaves them, with a NOTICE).
Login roles are yours to make: ``CREATE ROLE app LOGIN PASSWORD '...' IN ROLE
memory_pg_app``.

A non-superuser migrating role that owns the tables is subject to the policies
as well (FORCE): connected as the owner, the store sees one tenant per
transaction like the application does, and cross-user jobs see nothing unless
they connect as a member of ``memory_pg_maintenance`` (or a superuser).

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-02
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import context, op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TENANT_TABLES = ("memory_pg_memories", "memory_pg_dialogue_buffer", "memory_pg_history")

# Every statement is constant text. The PL/pgSQL blocks quote role names with quote_ident
# all the same, and use no '%' at all: Alembic's offline SQL would double it.
_ENSURE_ROLES = """
DO $$
DECLARE
    mode text := coalesce(nullif(current_setting('memory_pg.manage_roles', true), ''), 'auto');
    may_create boolean;
    created text[] := '{}';
    r text;
BEGIN
    SELECT rolsuper OR rolcreaterole INTO may_create FROM pg_roles WHERE rolname = current_user;
    FOREACH r IN ARRAY ARRAY['memory_pg_app', 'memory_pg_maintenance'] LOOP
        CONTINUE WHEN EXISTS (SELECT 1 FROM pg_roles WHERE rolname = r);
        IF mode = 'false' THEN
            RAISE NOTICE USING MESSAGE = 'memory-pg: role ' || r
                || ' is missing and manage_roles=false: its grants and policy are skipped';
        ELSIF may_create THEN
            BEGIN
                EXECUTE 'CREATE ROLE ' || quote_ident(r) || ' NOLOGIN';
                created := created || r;
            EXCEPTION WHEN duplicate_object OR unique_violation THEN
                NULL;  -- another migrator created it a moment ago
            END;
        ELSIF mode = 'true' THEN
            RAISE EXCEPTION USING MESSAGE = 'memory-pg: cannot create role ' || r
                || ' (needs CREATEROLE): create it as a DBA or migrate with -x manage_roles=auto';
        ELSE
            RAISE NOTICE USING MESSAGE = 'memory-pg: role ' || r || ' is missing and '
                || current_user || ' may not create roles: its grants and policy are skipped; '
                || 'tenant isolation is in force';
        END IF;
    END LOOP;
    INSERT INTO memory_pg_settings (key, value)
    VALUES ('roles_created', to_jsonb(created))
    ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, updated_at = now();
END $$
"""

_GRANT = """
DO $$
DECLARE
    r text;
BEGIN
    FOREACH r IN ARRAY ARRAY['memory_pg_app', 'memory_pg_maintenance'] LOOP
        CONTINUE WHEN NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = r);
        EXECUTE 'GRANT SELECT, INSERT, UPDATE, DELETE ON memory_pg_memories, '
                'memory_pg_dialogue_buffer, memory_pg_history TO ' || quote_ident(r);
        EXECUTE 'GRANT SELECT, INSERT, UPDATE ON memory_pg_settings TO ' || quote_ident(r);
        EXECUTE 'GRANT SELECT ON memory_pg_alembic_version TO ' || quote_ident(r);
    END LOOP;
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'memory_pg_maintenance') THEN
        EXECUTE 'CREATE POLICY memory_pg_maintenance ON memory_pg_memories '
                'TO memory_pg_maintenance USING (true) WITH CHECK (true)';
        EXECUTE 'CREATE POLICY memory_pg_maintenance ON memory_pg_dialogue_buffer '
                'TO memory_pg_maintenance USING (true) WITH CHECK (true)';
        EXECUTE 'CREATE POLICY memory_pg_maintenance ON memory_pg_history '
                'TO memory_pg_maintenance USING (true) WITH CHECK (true)';
    END IF;
END $$
"""

_REVOKE = """
DO $$
DECLARE
    r text;
BEGIN
    FOREACH r IN ARRAY ARRAY['memory_pg_app', 'memory_pg_maintenance'] LOOP
        CONTINUE WHEN NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = r);
        EXECUTE 'REVOKE ALL ON memory_pg_memories, memory_pg_dialogue_buffer, '
                'memory_pg_history, memory_pg_settings, memory_pg_alembic_version FROM '
                || quote_ident(r);
    END LOOP;
END $$
"""

_DROP_CREATED_ROLES = """
DO $$
DECLARE
    r text;
BEGIN
    FOR r IN
        SELECT name FROM memory_pg_settings, jsonb_array_elements_text(value) AS name
        WHERE key = 'roles_created'
          -- The application may write settings: never drop a role this file did not name.
          AND name IN ('memory_pg_app', 'memory_pg_maintenance')
    LOOP
        BEGIN
            EXECUTE 'DROP ROLE IF EXISTS ' || quote_ident(r);
        EXCEPTION WHEN dependent_objects_still_exist OR object_in_use THEN
            RAISE NOTICE USING MESSAGE = 'memory-pg: role ' || r
                || ' is still used elsewhere in the cluster; kept';
        END;
    END LOOP;
    DELETE FROM memory_pg_settings WHERE key = 'roles_created';
END $$
"""


def _manage_roles() -> str:
    value = (
        context.get_x_argument(as_dictionary=True).get("manage_roles")
        or context.config.attributes.get("manage_roles")
        or os.environ.get("MEMORY_PG_MANAGE_ROLES")
        or "auto"
    )
    mode = str(value).strip().lower()
    if mode not in ("auto", "true", "false"):
        raise ValueError(f"manage_roles must be auto, true or false, got {value!r}")
    return mode


# Written out in full: constant statements a DBA reads as they are.
_ENABLE = (
    "ALTER TABLE memory_pg_memories ENABLE ROW LEVEL SECURITY",
    "ALTER TABLE memory_pg_memories FORCE ROW LEVEL SECURITY",
    "CREATE POLICY memory_pg_tenant ON memory_pg_memories "
    "USING (user_id = current_setting('memory_pg.user_id', true)) "
    "WITH CHECK (user_id = current_setting('memory_pg.user_id', true))",
    "ALTER TABLE memory_pg_dialogue_buffer ENABLE ROW LEVEL SECURITY",
    "ALTER TABLE memory_pg_dialogue_buffer FORCE ROW LEVEL SECURITY",
    "CREATE POLICY memory_pg_tenant ON memory_pg_dialogue_buffer "
    "USING (user_id = current_setting('memory_pg.user_id', true)) "
    "WITH CHECK (user_id = current_setting('memory_pg.user_id', true))",
    "ALTER TABLE memory_pg_history ENABLE ROW LEVEL SECURITY",
    "ALTER TABLE memory_pg_history FORCE ROW LEVEL SECURITY",
    "CREATE POLICY memory_pg_tenant ON memory_pg_history "
    "USING (user_id = current_setting('memory_pg.user_id', true)) "
    "WITH CHECK (user_id = current_setting('memory_pg.user_id', true))",
)

_DISABLE = (
    "DROP POLICY IF EXISTS memory_pg_maintenance ON memory_pg_memories",
    "DROP POLICY IF EXISTS memory_pg_tenant ON memory_pg_memories",
    "ALTER TABLE memory_pg_memories NO FORCE ROW LEVEL SECURITY",
    "ALTER TABLE memory_pg_memories DISABLE ROW LEVEL SECURITY",
    "DROP POLICY IF EXISTS memory_pg_maintenance ON memory_pg_dialogue_buffer",
    "DROP POLICY IF EXISTS memory_pg_tenant ON memory_pg_dialogue_buffer",
    "ALTER TABLE memory_pg_dialogue_buffer NO FORCE ROW LEVEL SECURITY",
    "ALTER TABLE memory_pg_dialogue_buffer DISABLE ROW LEVEL SECURITY",
    "DROP POLICY IF EXISTS memory_pg_maintenance ON memory_pg_history",
    "DROP POLICY IF EXISTS memory_pg_tenant ON memory_pg_history",
    "ALTER TABLE memory_pg_history NO FORCE ROW LEVEL SECURITY",
    "ALTER TABLE memory_pg_history DISABLE ROW LEVEL SECURITY",
)


def upgrade() -> None:
    op.execute(
        sa.text("SELECT set_config('memory_pg.manage_roles', :mode, true)").bindparams(
            mode=_manage_roles()
        )
    )
    op.execute(_ENSURE_ROLES)
    for statement in _ENABLE:
        op.execute(statement)
    op.execute(_GRANT)


def downgrade() -> None:
    for statement in _DISABLE:
        op.execute(statement)
    op.execute(_REVOKE)
    op.execute(_DROP_CREATED_ROLES)
