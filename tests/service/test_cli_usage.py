"""The service's commands (``serve``, ``token create``) as the installed ``memory-pg`` runs them."""

from __future__ import annotations

import json
import signal

import pytest

from tests.acceptance.test_cli import run
from tests.service.conftest import post_through_sigterm, start_service


@pytest.mark.parametrize(
    ("args", "env", "flag"),
    [
        (["serve", "--port", "x"], {}, "--port"),
        (["serve", "--port", "70000"], {}, "--port"),
        ([], {"MEMORY_PG_PORT": "x"}, "--port"),
        (["serve", "--max-body-bytes", "1MiB"], {}, "--max-body-bytes"),
        ([], {"MEMORY_PG_MAX_BODY_BYTES": "1MiB"}, "--max-body-bytes"),
        (["serve", "--graceful-timeout", "soon"], {}, "--graceful-timeout"),
        (["serve", "--graceful-timeout", "-1"], {}, "--graceful-timeout"),
        (["serve", "--graceful-timeout", "nan"], {}, "--graceful-timeout"),
        (["token", "create", "--user", "ops", "--expires", "999999999d"], {}, "--expires"),
        (["token", "create", "--user", "ops", "--expires", "99999999999w"], {}, "--expires"),
        (["token", "create", "--user", "ops", "--expires", "soon"], {}, "--expires"),
    ],
)
def test_a_bad_option_value_is_a_usage_error_not_a_traceback(args, env, flag):
    proc = run(args or ["serve"], env, check=False)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "usage:" in proc.stderr and flag in proc.stderr


def test_a_read_only_admin_token_is_a_monitoring_token(service, fresh_user):
    victim = fresh_user("olga")
    with service.client(service.token(victim).token) as c:
        assert c.post("/v1/memories", json={"text": "olga's note"}).status_code == 201
    env = {"MEMORY_PG_DATABASE_URL": service.db_url}
    created = run(["token", "create", "--user", "ops", "--admin", "--read-only"], env)
    [token] = created.stdout.splitlines()
    assert "admin, read-only" in created.stderr
    with service.client(token) as admin:
        assert admin.get("/v1/admin/stats").status_code == 200
        r = admin.delete(f"/v1/admin/users/{victim}")
        assert r.status_code == 403 and r.json()["error"]["type"] == "PermissionDenied"
    with service.client(service.token(victim).token) as c:
        assert c.get("/v1/stats").json()["memories"] == 1


def test_a_graceful_timeout_under_a_second_is_honoured(service_db, tmp_path, fresh_user):
    from sqlalchemy import create_engine

    from memory_pg.service.tokens import create_token

    user = fresh_user("pia")
    engine = create_engine(service_db)
    try:
        token = create_token(engine, user).token
    finally:
        engine.dispose()
    svc = start_service(
        service_db, tmp_path / "graceful.log", "--no-mcp", "--graceful-timeout", "0.9"
    )
    # A first write outside the window loads the model and opens the pool.
    with svc.client(token) as c:
        assert c.post("/v1/memories", json={"text": "Pia works from Lisbon"}).status_code == 201
    # The request through the signal is an erase: no model, so on a loaded machine it
    # still ends well within the 0.5 s left after its body arrives. Signalled, then the
    # rest sent past where a timeout cut to 0 s (int(0.9)) cancels the request.
    body = json.dumps({"user_id": user})
    result, code = post_through_sigterm(
        svc, "/v1/user", token, body, split=5, pause_s=0.4, timeout_s=60, method="DELETE"
    )
    assert result.get("status") == 200, (result, svc.log.read_text(errors="replace")[-2000:])
    assert result["json"] == {"deleted": 1}
    assert code in (0, -signal.SIGTERM)
