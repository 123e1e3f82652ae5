"""``memory-pg token``, ``memory-pg serve`` and ``memory-pg mcp``: the service's commands.

Only ``token`` works without the ``service`` extra; ``serve`` and ``mcp`` import
FastAPI, uvicorn and the MCP SDK when they run, never when the CLI starts.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import math
import os
import sys
from collections.abc import Iterator
from datetime import timedelta
from typing import Any, TypedDict

from memory_pg.cli import add_json_flag, require_user
from memory_pg.errors import ConfigurationError, InvalidArgument


def _env(name: str, default: str | None = None) -> str | None:
    return os.environ.get(name) or default


# Option types: argparse turns their ArgumentTypeError into a usage error (exit 2),
# for a flag and for its environment variable alike.


def _whole(value: str) -> int:
    try:
        return int(value)
    except ValueError:
        return -1


def _port(value: str) -> int:
    port = _whole(value)
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"not a TCP port: {value!r} (1..65535)")
    return port


def _byte_count(value: str) -> int:
    size = _whole(value)
    if size < 1:
        raise argparse.ArgumentTypeError(
            f"not a number of bytes: {value!r}; write a whole number, e.g. 1048576 for 1 MiB"
        )
    return size


def _seconds(value: str) -> float:
    try:
        seconds = float(value)
    except ValueError:
        seconds = math.nan
    if not (math.isfinite(seconds) and seconds >= 0):
        raise argparse.ArgumentTypeError(
            f"not a number of seconds: {value!r}; write e.g. 30 or 2.5"
        )
    return seconds


def _positive_seconds(value: str) -> float:
    seconds = _seconds(value)
    if seconds <= 0:
        raise argparse.ArgumentTypeError(f"not a number of seconds above 0: {value!r}")
    return seconds


def _count(value: str) -> int:
    number = _whole(value)
    if number < 1:
        raise argparse.ArgumentTypeError(f"not a whole number of 1 or more: {value!r}")
    return number


def _metrics_access(value: str) -> str:
    if value not in ("open", "admin", "off"):
        raise argparse.ArgumentTypeError(f"not open, admin or off: {value!r}")
    return value


def _lifetime(value: str) -> timedelta:
    from memory_pg.service.tokens import parse_duration

    try:
        return parse_duration(value)
    except InvalidArgument as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc


def _need_user(args: argparse.Namespace) -> str:
    return require_user(args)  # exit 2, as every command without its --user


def _cmd_token_create(args: argparse.Namespace, ctx: Any) -> int:
    from memory_pg.service.tokens import create_token

    user = _need_user(args)
    new = create_token(
        ctx.store().engine,
        user,
        agent_id=args.agent,
        read_only=args.read_only,
        expires_in=args.expires,
        admin=args.admin,
        label=args.label,
    )
    if args.json:
        ctx.emit({"token": new.token, **new.info.as_dict()}, True)
        return 0
    info = new.info
    # The token alone on stdout, so TOKEN=$(memory-pg token create ...) captures it.
    ctx.out.write(new.token + "\n")
    print(
        f"memory-pg: token id {info.id}, user {info.user_id}"
        + (f", agent {info.agent_id}" if info.agent_id else "")
        + (", admin" if info.is_admin else "")
        + (", read-only" if info.read_only else "")
        + (f", expires {info.expires_at.isoformat()}" if info.expires_at else ", never expires")
        + "; shown once: only its hash is stored",
        file=sys.stderr,
    )
    return 0


def _cmd_token_list(args: argparse.Namespace, ctx: Any) -> int:
    from memory_pg.service.tokens import list_tokens

    store = ctx.store(maintenance=args.user is None)
    rows = [info.as_dict() for info in list_tokens(store.engine, args.user)]
    ctx.emit(rows, args.json)
    return 0


def _cmd_token_revoke(args: argparse.Namespace, ctx: Any) -> int:
    from memory_pg.service.tokens import revoke_token

    user = _need_user(args)
    done = revoke_token(ctx.store().engine, user, args.token_id)
    ctx.emit({"revoked": done, "id": args.token_id}, args.json)
    if not done:
        print(f"memory-pg: error: no live token {args.token_id} of user {user}", file=sys.stderr)
    return 0 if done else 1


@contextlib.contextmanager
def _service_extra(command: str) -> Iterator[None]:
    """Turn a missing FastAPI, uvicorn or MCP SDK into an error that says what to install."""
    try:
        yield
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ConfigurationError(
            f"memory-pg {command} needs the service extra: pip install 'memory-pg[service]'"
        ) from exc


class _StoreOptions(TypedDict):
    database_url: str | None
    home: str | None
    embedding_model: str | None
    auto_migrate: bool
    pooler: str | None
    read_urls: list[str] | None


def _store_options(ctx: Any) -> _StoreOptions:
    """How ``serve`` and ``mcp`` open their store: the CLI's global flags."""
    return {
        "database_url": ctx.database_url,
        "home": ctx.args.home,
        "embedding_model": ctx.args.embedding_model,
        "auto_migrate": bool(ctx.args.auto_migrate),
        "pooler": ctx.args.pooler,
        "read_urls": getattr(ctx.args, "read_urls", None),
    }


def _cmd_serve(args: argparse.Namespace, ctx: Any) -> int:
    with _service_extra("serve"):
        from memory_pg.service.guard import GuardSettings
        from memory_pg.service.http import ServiceSettings, request_log
        from memory_pg.service.serving import serve
    # A line per request at the default level too: -v adds the rest (uvicorn, alembic).
    request_log.setLevel(min(logging.getLogger().getEffectiveLevel(), logging.INFO))
    settings = ServiceSettings(
        max_body_bytes=args.max_body_bytes,
        mcp=not args.no_mcp,
        graceful_timeout_s=args.graceful_timeout,
        max_batch_chars=args.max_batch_chars,
        metrics=args.metrics,
        guard=GuardSettings(
            header_timeout_s=args.header_timeout,
            body_timeout_s=args.body_timeout,
            max_connections=args.max_connections,
            max_connections_per_client=args.max_connections_per_client,
        ),
    )
    serve(host=args.host, port=args.port, settings=settings, **_store_options(ctx))
    return 0


def _cmd_mcp(args: argparse.Namespace, ctx: Any) -> int:
    with _service_extra("mcp"):
        from memory_pg.service.mcp import run_stdio
    user = _need_user(args)
    run_stdio(user_id=user, agent_id=args.agent, read_only=args.read_only, **_store_options(ctx))
    return 0


def _user_flag(parser: argparse.ArgumentParser, help_text: str) -> None:
    parser.add_argument("--user", default=_env("MEMORY_PG_USER_ID"), help=help_text)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``token``, ``serve`` and ``mcp``."""
    parser = subparsers.add_parser("token", help="bearer tokens of the service (bound to a user)")
    sub = parser.add_subparsers(dest="token_command", required=True, metavar="ACTION")

    p = sub.add_parser("create", help="create a token and print it once")
    _user_flag(p, "the user every request of the token acts as (admin: the operator's name)")
    p.add_argument("--agent", default=None, help="the agent every request acts as")
    p.add_argument("--read-only", action="store_true", help="the token may not write")
    p.add_argument(
        "--expires",
        type=_lifetime,
        default=None,
        help="lifetime, e.g. 90d, 12h, 2w, at most 36500d (default: never)",
    )
    p.add_argument("--label", default=None, help="a note for token list")
    p.add_argument(
        "--admin", action="store_true", help="a maintenance token for cross-user operations"
    )
    add_json_flag(p)
    p.set_defaults(handler=_cmd_token_create)

    p = sub.add_parser("list", help="tokens of a user (all users: maintenance role)")
    _user_flag(p, "only this user's tokens (none: all, needs a maintenance role)")
    add_json_flag(p)
    p.set_defaults(handler=_cmd_token_list)

    p = sub.add_parser("revoke", help="revoke a token at once")
    p.add_argument("token_id", help="the id that token create and token list show")
    _user_flag(p, "the user the token belongs to")
    add_json_flag(p)
    p.set_defaults(handler=_cmd_token_revoke)

    p = subparsers.add_parser("serve", help="run the HTTP API (and MCP under /mcp)")
    p.add_argument("--host", default=_env("MEMORY_PG_HOST", "127.0.0.1"), help="env MEMORY_PG_HOST")
    p.add_argument(
        "--port", type=_port, default=_env("MEMORY_PG_PORT", "8080"), help="env MEMORY_PG_PORT"
    )
    p.add_argument(
        "--max-body-bytes",
        type=_byte_count,
        default=_env("MEMORY_PG_MAX_BODY_BYTES", str(1024 * 1024)),
        help="largest request body accepted, in bytes (env MEMORY_PG_MAX_BODY_BYTES; "
        "default 1048576, 1 MiB)",
    )
    p.add_argument(
        "--graceful-timeout",
        type=_seconds,
        default=_env("MEMORY_PG_GRACEFUL_TIMEOUT", "30"),
        help="seconds (2.5 is fine) to finish in-flight requests on SIGTERM "
        "(env MEMORY_PG_GRACEFUL_TIMEOUT)",
    )
    p.add_argument(
        "--max-batch-chars",
        type=_count,
        default=_env("MEMORY_PG_MAX_BATCH_CHARS", "64000"),
        help="most characters of text in one POST /v1/memories/batch, else 413 "
        "(env MEMORY_PG_MAX_BATCH_CHARS; default 64000)",
    )
    p.add_argument(
        "--header-timeout",
        type=_positive_seconds,
        default=_env("MEMORY_PG_HEADER_TIMEOUT", "10"),
        help="seconds for a request's line and headers to arrive, else 408 "
        "(env MEMORY_PG_HEADER_TIMEOUT; default 10)",
    )
    p.add_argument(
        "--body-timeout",
        type=_positive_seconds,
        default=_env("MEMORY_PG_BODY_TIMEOUT", "30"),
        help="seconds for a request's body to arrive after its headers, else 408 "
        "(env MEMORY_PG_BODY_TIMEOUT; default 30)",
    )
    p.add_argument(
        "--max-connections",
        type=_count,
        default=_env("MEMORY_PG_MAX_CONNECTIONS"),
        help="open connections at most, more get 503 (env MEMORY_PG_MAX_CONNECTIONS; "
        "default 1000, and below the descriptor limit: ulimit -n)",
    )
    p.add_argument(
        "--max-connections-per-client",
        type=_count,
        default=_env("MEMORY_PG_MAX_CONNECTIONS_PER_CLIENT", "100"),
        help="open connections at most from one address (env "
        "MEMORY_PG_MAX_CONNECTIONS_PER_CLIENT; default 100; behind a proxy, all come "
        "from the proxy's address)",
    )
    p.add_argument("--no-mcp", action="store_true", help="do not mount the MCP server at /mcp")
    p.add_argument(
        "--metrics",
        type=_metrics_access,
        metavar="{open,admin,off}",
        default=_env("MEMORY_PG_METRICS", "open"),
        help="who may read GET /metrics (Prometheus): open (default: it holds no user "
        "data), admin (an admin token, read-only ones too) or off (env MEMORY_PG_METRICS)",
    )
    p.set_defaults(handler=_cmd_serve)

    p = subparsers.add_parser("mcp", help="run the MCP server on stdio for one user (and agent)")
    _user_flag(p, "the user every tool call acts as (env MEMORY_PG_USER_ID)")
    p.add_argument(
        "--agent", default=_env("MEMORY_PG_AGENT_ID"), help="the agent (env MEMORY_PG_AGENT_ID)"
    )
    p.add_argument("--read-only", action="store_true", help="offer no tool that writes")
    p.set_defaults(handler=_cmd_mcp)
