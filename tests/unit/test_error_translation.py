"""Driver errors become memory-pg's typed errors, named for what happened."""

from __future__ import annotations

import psycopg.errors
import pytest
from sqlalchemy import exc as sa_exc

from memory_pg.errors import DatabaseUnavailable, QueryTimeout
from memory_pg.plans.protocol import translate


def _wrapped(orig: Exception) -> sa_exc.DBAPIError:
    return sa_exc.OperationalError("ALTER INDEX ...", {}, orig)


def test_a_lock_timeout_is_a_timeout_that_says_to_run_again_not_an_unreachable_database():
    err = translate(
        _wrapped(psycopg.errors.LockNotAvailable("canceling statement due to lock timeout"))
    )
    assert isinstance(err, QueryTimeout)
    assert not isinstance(err, DatabaseUnavailable)
    assert "lock_timeout" in str(err) and "run it again" in str(err)


@pytest.mark.parametrize(
    ("orig", "expected"),
    [
        (
            psycopg.errors.QueryCanceled("canceling statement due to statement timeout"),
            QueryTimeout,
        ),
        (psycopg.errors.AdminShutdown("terminating connection"), DatabaseUnavailable),
    ],
)
def test_other_cancellations_keep_their_types(orig, expected):
    assert type(translate(_wrapped(orig))) is expected


@pytest.mark.parametrize(
    ("said", "fix"),
    [
        (
            'connection failed: connection to server at "10.0.0.5", port 5432 failed: '
            'FATAL:  password authentication failed for user "memory"',
            "check the user name and password of the database URL",
        ),
        (
            'connection failed: connection to server on socket "/tmp/.s.PGSQL.5432" failed: '
            'FATAL:  database "memroy" does not exist',
            "create that database",
        ),
        (
            'connection failed: connection to server at "127.0.0.1", port 1 failed: Connection '
            "refused\n\tIs the server running on that host and accepting TCP/IP connections?",
            "is PostgreSQL running there? check the host and port",
        ),
    ],
)
def test_a_connection_that_cannot_be_made_is_one_line_naming_what_to_check(said, fix):
    err = translate(_wrapped(psycopg.OperationalError(said)))
    assert isinstance(err, DatabaseUnavailable)
    assert fix in str(err) and "MEMORY_PG_DATABASE_URL" in str(err)
    assert "\n" not in str(err)
