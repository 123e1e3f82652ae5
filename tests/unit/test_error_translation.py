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
