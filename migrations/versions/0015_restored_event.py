"""The history records a ``restored`` event: a replaced memory made current again.

``restore`` (issue 36) undoes a wrong replacement and appends a ``restored`` event
to the memory's history; the history's ``event`` check named only the seven events
before it. The upgrade replaces the check by one that also allows ``restored``.

Adding the check reads the whole history once, under the ACCESS EXCLUSIVE lock the
``ALTER TABLE`` holds until the migration commits (a ``NOT VALID`` check would skip
the read, but the lock is held to the commit either way, and SQLAlchemy's reflection
warns on such a check, which a host application's schema comparison would meet). The
``ALTER TABLE`` waits at most 5 s for its lock (as 0011 and 0013), so a busy table
fails the migration instead of stalling every query behind it: run it again in a
quieter moment.

The downgrade rewrites each ``restored`` event as an ``updated`` one whose detail
says ``"restored": true`` (no event is lost, and the older check holds again), then
puts the older check back. It runs as the table's owner with row-level security not
forced for that one statement (as 0013), in one ``DO`` block.

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-05
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_OLD = "'added', 'superseded', 'merged', 'expired', 'deleted', 'updated', 'imported'"
_NEW = _OLD + ", 'restored'"

# Constant text, no '%' (see 0013).
_UPGRADE = """
DO $$
BEGIN
    SET LOCAL lock_timeout = '5s';
    ALTER TABLE memory_pg_history DROP CONSTRAINT memory_pg_history_event_check;
    ALTER TABLE memory_pg_history ADD CONSTRAINT memory_pg_history_event_check
        CHECK (event IN (EVENTS));
    SET LOCAL lock_timeout TO DEFAULT;
END $$
"""

_DOWNGRADE = """
DO $$
BEGIN
    SET LOCAL lock_timeout = '5s';
    ALTER TABLE memory_pg_history NO FORCE ROW LEVEL SECURITY;
    ALTER TABLE memory_pg_history DROP CONSTRAINT memory_pg_history_event_check;
    SET LOCAL lock_timeout TO DEFAULT;
    UPDATE memory_pg_history
       SET event = 'updated', detail = detail || '{"restored": true}'::jsonb
     WHERE event = 'restored';
    ALTER TABLE memory_pg_history ADD CONSTRAINT memory_pg_history_event_check
        CHECK (event IN (EVENTS));
    ALTER TABLE memory_pg_history FORCE ROW LEVEL SECURITY;
END $$
"""


def upgrade() -> None:
    op.execute(_UPGRADE.replace("EVENTS", _NEW))


def downgrade() -> None:
    op.execute(_DOWNGRADE.replace("EVENTS", _OLD))
