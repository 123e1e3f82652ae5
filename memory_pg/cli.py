"""The ``memory-pg`` command: migrate, add, search, list, import, export, stats and more.

Every flag has an environment fallback (``MEMORY_PG_*``), so cron lines and
containers need no arguments. Commands print readable text, or JSON with
``--json``; the exit code is 0 on success, 1 on a memory-pg error (bad input, the
database, a job that failed), 2 on usage: a missing or unknown option, a command
run without what it needs (``--user``, ``reembed --model``, ``erase --yes``).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import logging
import os
import re
import signal
import sys
from collections.abc import Sequence
from datetime import date, datetime
from typing import IO, Any

from memory_pg._cli_env import EnvDefault, env_default, env_flag, number_type
from memory_pg.errors import InvalidArgument, MemoryPgError

logger = logging.getLogger(__name__)

#: Modules that add subcommands: each exposes ``register(subparsers)``.
_COMMAND_MODULES: tuple[str, ...] = (
    "memory_pg._cli_demo",
    "memory_pg._cli_hermes",
    "memory_pg._cli_eval",
    "memory_pg._cli_lifecycle",
    "memory_pg._cli_relations",
    "memory_pg.service.cli",
)


def _env(name: str, default: str | None = None) -> str | None:
    return os.environ.get(name) or default


def _verbosity() -> int:
    """``MEMORY_PG_VERBOSE``: a count (0, 1, 2), or info / debug; anything else is
    ignored with a warning (every command reads it: it must not stop them all)."""
    value = (_env("MEMORY_PG_VERBOSE") or "0").strip().lower()
    words = {"info": 1, "debug": 2, "true": 1, "yes": 1, "on": 1, "false": 0, "no": 0, "off": 0}
    if value.isascii() and value.isdigit():
        return int(value)
    if value in words:
        return words[value]
    print(
        f"memory-pg: warning: MEMORY_PG_VERBOSE={value!r} ignored (0, 1, 2, info or debug)",
        file=sys.stderr,
    )
    return 0


class CliContext:
    """What a command handler gets: the parsed global flags, a lazily opened store, output."""

    def __init__(self, args: argparse.Namespace, out: IO[str]) -> None:
        self.args = args
        self.out = out
        self._stores: dict[str | None, Any] = {}

    @property
    def database_url(self) -> str | None:
        """The URL from ``--database-url`` / ``MEMORY_PG_DATABASE_URL`` / ``DATABASE_URL``."""
        value: str | None = self.args.database_url
        return value

    def store(self, user_id: str | None = None, *, maintenance: bool = False) -> Any:
        """The MemoryStore of this command (opened once; embedded server if no URL).

        ``maintenance=True`` is for cross-user jobs (forget, consolidate, reembed):
        it connects with ``--maintenance-database-url`` when given, a role that
        row-level security lets see every user (see docs/roles.md).
        """
        url = self.database_url
        if maintenance and self.args.maintenance_database_url:
            url = self.args.maintenance_database_url
        if url not in self._stores:
            from memory_pg.config import StoreSettings
            from memory_pg.store import MemoryStore

            self._stores[url] = MemoryStore(
                url,
                home=self.args.home,
                embedding_model=self.args.embedding_model,
                auto_migrate=True if self.args.auto_migrate else None,
                settings=StoreSettings(pooler=self.args.pooler),
                read_urls=getattr(self.args, "read_urls", None),
            )
        return self._stores[url]

    def emit(self, obj: Any, as_json: bool) -> None:
        """Print ``obj`` as JSON (one document) or as readable text."""
        if as_json:
            self.out.write(json.dumps(obj, ensure_ascii=False, default=_json_default, indent=2))
            self.out.write("\n")
        elif isinstance(obj, (dict, list)):
            self.out.write(_readable(obj) + "\n")
        else:
            self.out.write(str(obj) + "\n")

    def close(self) -> None:
        """Close the store, stopping the embedded server if this process started it."""
        for store in self._stores.values():
            store.close()
        self._stores.clear()


def _json_default(value: object) -> Any:
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    return str(value)


def _readable(obj: Any, indent: int = 0) -> str:
    pad = "  " * indent
    if isinstance(obj, dict):
        lines = []
        for key, value in obj.items():
            if isinstance(value, (dict, list)) and value:
                lines.append(f"{pad}{key}:")
                lines.append(_readable(value, indent + 1))
            else:
                lines.append(f"{pad}{key}: {_json_default(value) if value is not None else '-'}")
        return "\n".join(lines)
    if isinstance(obj, list):
        return "\n".join(_readable(item, indent) for item in obj)
    return pad + str(obj)


class UsageError(InvalidArgument):
    """A command called without what it needs (such as ``--user``): exit code 2, like argparse."""


def require_user(args: argparse.Namespace) -> str:
    """The ``--user`` of a command that needs one, else :class:`UsageError` (exit 2)."""
    if not args.user:
        raise UsageError("a user is required: --user U (or MEMORY_PG_USER_ID)")
    user: str = args.user
    return user


def _add_user_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--user",
        default=_env("MEMORY_PG_USER_ID"),
        help="the user whose memories to use (env MEMORY_PG_USER_ID)",
    )


def add_json_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--json",
        action="store_true",
        default=env_flag("MEMORY_PG_JSON"),
        help="print JSON (env MEMORY_PG_JSON=1)",
    )


# -- commands -------------------------------------------------------------------------


def _cmd_migrate(args: argparse.Namespace, ctx: CliContext) -> int:
    from memory_pg import schema

    dim = args.embedding_dim
    if args.sql:
        sql = schema.offline_sql(args.revision, embedding_dim=dim, downgrade_to=args.downgrade)
        ctx.out.write(sql)
        return 0
    if args.downgrade and not args.yes:
        # A downgrade drops what later revisions made (base: every memory), as erase does.
        if not sys.stdin.isatty():
            raise UsageError(
                f"a downgrade to {args.downgrade} drops tables and their rows for good; "
                "pass --yes to confirm"
            )
        answer = input(f"Downgrade the schema to {args.downgrade}, dropping data? Type yes: ")
        if answer.strip().lower() != "yes":
            print("memory-pg: not confirmed, nothing changed", file=sys.stderr)
            return 1
    from sqlalchemy import create_engine

    from memory_pg.server import EmbeddedServer, sqlalchemy_url

    server = None
    url = ctx.database_url
    if url is not None:
        from memory_pg.opening import check_url

        check_url(url)
    else:
        from pathlib import Path

        from memory_pg.config import default_home

        server = EmbeddedServer(Path(args.home) if args.home else default_home())
        url = server.start()
    from memory_pg import pooling

    url, pooler = pooling.split_url(sqlalchemy_url(url))
    mode = pooling.resolve(pooler, args.pooler)
    engine = create_engine(url)
    pooling.watch(engine, mode)
    try:  # a driver error becomes a typed one in main(), as for every command
        if args.downgrade:
            schema.downgrade(engine, args.downgrade)
        else:
            schema.upgrade(engine, args.revision, embedding_dim=dim)
        with engine.connect() as conn:
            revision = schema.current_revision(conn)
    finally:
        engine.dispose()
        if server is not None:
            server.stop()
    ctx.emit({"revision": revision, "head": schema.head_revision()}, args.json)
    return 0


def _cmd_add(args: argparse.Namespace, ctx: CliContext) -> int:
    metadata = _json_arg(args.metadata, "--metadata") if args.metadata else None
    event_time = _time_arg(args.event_time, "--event-time") if args.event_time else None
    memory_id = ctx.store().add_memory(
        args.text,
        args.type,
        metadata,
        user_id=require_user(args),
        topic=args.topic,
        importance=args.importance,
        event_time=event_time,
    )
    ctx.emit({"id": memory_id} if args.json else memory_id, args.json)
    return 0


def _cmd_search(args: argparse.Namespace, ctx: CliContext) -> int:
    results = ctx.store().search(
        args.query,
        top_k=args.top_k,
        user_id=require_user(args),
        memory_types=args.type or None,
        as_of=_time_arg(args.as_of, "--as-of") if args.as_of else None,
        expand=args.expand,
    )
    if args.json:
        ctx.emit(results, True)
        return 0
    if not results:
        ctx.out.write("no memories found / 没有找到相关记忆\n")
    for rank, r in enumerate(results, 1):
        ctx.out.write(
            f"{rank}. [{r['memory_type']}] {r['text']}  "
            f"(score {r['score']:.4f}, distance {r['distance']:.3f}, id {r['id']})"
            + (f" via {r['via_relation']} of {r['via']}" if r.get("via") else "")
            + "\n"
        )
    return 0


def _cmd_list(args: argparse.Namespace, ctx: CliContext) -> int:
    rows = ctx.store().list_memories(
        user_id=require_user(args),
        memory_types=args.type or None,
        include_inactive=args.all,
        limit=args.limit,
    )
    if args.json:
        ctx.emit(rows, True)
        return 0
    if not rows:
        ctx.out.write("no memories / 没有记忆\n")
    for r in rows:
        replaced = " replaced" if r.get("superseded_at") else ""
        ctx.out.write(
            f"{r['created_at']:%Y-%m-%d %H:%M}  [{r['memory_type']}{replaced}] {r['text']}"
            f"  (id {r['id']})\n"
        )
    return 0


def _cmd_export(args: argparse.Namespace, ctx: CliContext) -> int:
    target: Any = args.output if args.output and args.output != "-" else ctx.out
    count = ctx.store().export_user_memory(
        target, user_id=require_user(args), with_embeddings=not args.no_embeddings
    )
    print(f"exported {count} memories", file=sys.stderr)
    return 0


def _cmd_import(args: argparse.Namespace, ctx: CliContext) -> int:
    source: Any = sys.stdin if args.file == "-" else args.file
    count = ctx.store().import_user_memory(source, user_id=require_user(args))
    ctx.emit({"imported": count}, args.json)
    return 0


def _cmd_stats(args: argparse.Namespace, ctx: CliContext) -> int:
    # All users' counts need a role that row-level security lets see everyone.
    store = ctx.store(maintenance=not args.user)
    ctx.emit(store.stats(user_id=args.user), args.json)
    return 0


def _cmd_healthcheck(args: argparse.Namespace, ctx: CliContext) -> int:
    report = ctx.store().healthcheck()
    ctx.emit(report, args.json)
    return 0 if report["ok"] else 1


def _json_arg(value: str, flag: str) -> Any:
    try:
        return json.loads(value)
    except json.JSONDecodeError as exc:
        raise InvalidArgument(f"{flag} is not valid JSON: {exc}") from exc


def _time_arg(value: str, flag: str) -> datetime:
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError as exc:
        raise InvalidArgument(f"{flag} is not an ISO 8601 time: {value!r}") from exc
    if parsed.tzinfo is None:
        raise InvalidArgument(f"{flag} needs a time zone, e.g. 2026-01-31T12:00:00+08:00")
    return parsed


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand registered."""
    parser = argparse.ArgumentParser(
        prog="memory-pg",
        description="Long-term memory for LLM agents, kept in PostgreSQL with pgvector.",
        epilog="Every option --some-option of a command can also be set with the "
        "environment variable MEMORY_PG_SOME_OPTION (flags: =1).",
    )
    parser.add_argument(
        "--database-url",
        default=_env("MEMORY_PG_DATABASE_URL") or _env("DATABASE_URL"),
        help="PostgreSQL URL (env MEMORY_PG_DATABASE_URL, else DATABASE_URL); "
        "none: the embedded server",
    )
    parser.add_argument(
        "--maintenance-database-url",
        default=_env("MEMORY_PG_MAINTENANCE_DATABASE_URL"),
        help="URL of a memory_pg_maintenance role for cross-user jobs "
        "(env MEMORY_PG_MAINTENANCE_DATABASE_URL; default: --database-url)",
    )
    parser.add_argument(
        "--read-url",
        action="append",
        dest="read_urls",
        metavar="URL",
        help="a streaming-replication replica for searches and reads, repeatable "
        "(env MEMORY_PG_READ_URLS, separated by commas); writes and jobs use "
        "--database-url (docs/replicas.md)",
    )
    parser.add_argument(
        "--pooler",
        choices=("auto", "none", "session", "transaction"),
        default=_env("MEMORY_PG_POOLER"),
        help="what stands between memory-pg and PostgreSQL: transaction for PgBouncer "
        "in transaction mode (env MEMORY_PG_POOLER; the URL may say ?pooler=...)",
    )
    parser.add_argument(
        "--home",
        default=_env("MEMORY_PG_HOME"),
        help="data folder of the embedded server (env MEMORY_PG_HOME)",
    )
    parser.add_argument(
        "--embedding-model",
        default=_env("MEMORY_PG_EMBEDDING_MODEL"),
        help="sentence-transformers model (env MEMORY_PG_EMBEDDING_MODEL); "
        "default: what the database records",
    )
    parser.add_argument(
        "--auto-migrate",
        action="store_true",
        default=env_flag("MEMORY_PG_AUTO_MIGRATE"),
        help="migrate a URL database on open (env MEMORY_PG_AUTO_MIGRATE=1)",
    )
    parser.add_argument(
        "-v",
        "--verbose",
        action="count",
        default=_verbosity(),
        help="more logging (-v info, -vv debug; env MEMORY_PG_VERBOSE)",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("migrate", help="apply the schema migrations (or print their SQL)")
    p.add_argument(
        "--revision",
        default=_env("MEMORY_PG_REVISION", "head"),
        help="target (env MEMORY_PG_REVISION)",
    )
    p.add_argument(
        "--downgrade",
        default=_env("MEMORY_PG_DOWNGRADE"),
        metavar="REV",
        help="downgrade to REV instead (base: remove everything; env MEMORY_PG_DOWNGRADE)",
    )
    p.add_argument("--sql", action="store_true", help="print the SQL, touch nothing")
    p.add_argument(
        "--yes",
        action="store_true",
        default=env_flag("MEMORY_PG_YES"),
        help="confirm a --downgrade, which drops data (env MEMORY_PG_YES=1)",
    )
    p.add_argument(
        "--embedding-dim",
        type=number_type(int),
        default=env_default("MEMORY_PG_EMBEDDING_DIM"),
        help="vector dimension for a new schema (env MEMORY_PG_EMBEDDING_DIM; default 384)",
    )
    add_json_flag(p)
    p.set_defaults(handler=_cmd_migrate)

    p = sub.add_parser("add", help="store one memory")
    p.add_argument("text")
    p.add_argument(
        "--type",
        default=_env("MEMORY_PG_MEMORY_TYPE", "dialogue"),
        help="memory type (env MEMORY_PG_MEMORY_TYPE, default dialogue)",
    )
    p.add_argument("--topic", default=None, help="topic key a later memory may supersede")
    p.add_argument("--importance", type=number_type(float), default=None, help="0..1")
    p.add_argument("--metadata", default=None, help="a JSON object")
    p.add_argument("--event-time", default=None, help="ISO 8601 time with zone")
    _add_user_flag(p)
    add_json_flag(p)
    p.set_defaults(handler=_cmd_add)

    p = sub.add_parser("search", help="find a user's memories")
    p.add_argument("query")
    p.add_argument(
        "--top-k",
        type=number_type(int, 1, 1000),
        default=env_default("MEMORY_PG_TOP_K", 5),
        help="env MEMORY_PG_TOP_K",
    )
    p.add_argument("--type", action="append", help="only this memory type (repeatable)")
    p.add_argument("--as-of", default=None, help="what was current at this ISO 8601 time")
    p.add_argument(
        "--expand",
        type=int,
        default=0,
        help="also the memories this many links from the best hits (0..3; default 0)",
    )
    _add_user_flag(p)
    add_json_flag(p)
    p.set_defaults(handler=_cmd_search)

    p = sub.add_parser("list", help="a user's memories, newest first")
    p.add_argument("--type", action="append", help="only this memory type (repeatable)")
    p.add_argument("--all", action="store_true", help="replaced and expired memories too (history)")
    p.add_argument(
        "--limit",
        type=number_type(int, 1, 100000),
        default=env_default("MEMORY_PG_LIMIT", 50),
        help="at most this many (env MEMORY_PG_LIMIT, default 50)",
    )
    _add_user_flag(p)
    add_json_flag(p)
    p.set_defaults(handler=_cmd_list)

    p = sub.add_parser("export", help="write a user's memories as JSON lines")
    p.add_argument("-o", "--output", default="-", help="file (default stdout)")
    p.add_argument("--no-embeddings", action="store_true", help="leave vectors out")
    _add_user_flag(p)
    p.set_defaults(handler=_cmd_export)

    p = sub.add_parser("import", help="load JSON lines written by export into a user")
    p.add_argument("file", help="file, or - for stdin")
    _add_user_flag(p)
    add_json_flag(p)
    p.set_defaults(handler=_cmd_import)

    p = sub.add_parser("stats", help="counts per memory type (one user, or all)")
    _add_user_flag(p)
    add_json_flag(p)
    p.set_defaults(handler=_cmd_stats)

    p = sub.add_parser("healthcheck", help="connection, pgvector, schema revision, model")
    add_json_flag(p)
    p.set_defaults(handler=_cmd_healthcheck)

    for name in _COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    for command in sub.choices.values():
        _env_fallbacks(command)
    return parser


#: The environment variables an option's help names as its own ("env MEMORY_PG_X").
_OWN_ENV = re.compile(r"\bMEMORY_PG_[A-Z0-9_]+")


def _env_fallbacks(parser: argparse.ArgumentParser) -> None:
    """Let the generic ``MEMORY_PG_<OPTION>`` set an option its own variable leaves unset.

    Precedence, highest first: the flag; the option's own variable, the one its help
    names (``--batch-size`` of ``forget``: ``MEMORY_PG_FORGET_BATCH_SIZE``, of
    ``reembed``: ``MEMORY_PG_REEMBED_BATCH_SIZE``); the generic variable named after
    the option (``MEMORY_PG_BATCH_SIZE``, ``MEMORY_PG_DRY_RUN=1``), which every command
    with that option reads; the built-in default.
    """
    for action in parser._actions:
        if not action.option_strings or action.dest in ("help", "json"):
            continue
        generic = "MEMORY_PG_" + action.dest.upper()
        value = os.environ.get(generic)
        if not value:
            continue
        own = set(_OWN_ENV.findall(action.help or "")) - {generic}
        if any(os.environ.get(name) for name in own):
            continue
        if isinstance(action, (argparse._StoreTrueAction, argparse._StoreFalseAction)):
            action.default = value.lower() in ("1", "true", "yes", "on")
        elif isinstance(action, argparse._AppendAction):
            action.default = [v.strip() for v in value.split(",") if v.strip()]
        elif action.default is None or isinstance(action.default, (str, int, float)):
            # A string default goes through the option's type when the arguments are
            # parsed: a bad value is a usage error (exit 2) naming the variable, not a
            # traceback here.
            action.default = EnvDefault(value, generic)


class _AfterOutput(logging.StreamHandler):  # type: ignore[type-arg]
    """Log records on stderr, after what the command has written so far: where both
    go to one file (``>> log 2>&1``), a warning never lands inside a line of output."""

    def __init__(self, out: IO[str]) -> None:
        super().__init__(sys.stderr)
        self.out = out

    def emit(self, record: logging.LogRecord) -> None:
        with contextlib.suppress(ValueError, OSError):  # closed or gone: log anyway
            self.out.flush()
        super().emit(record)


def main(argv: Sequence[str] | None = None, out: IO[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    level = logging.WARNING - 10 * min(int(args.verbose), 2)
    ctx = CliContext(args, out or sys.stdout)
    logging.basicConfig(
        level=level,
        format="%(levelname)s %(name)s: %(message)s",
        handlers=[_AfterOutput(ctx.out)],
    )
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    from memory_pg.plans.protocol import translate_errors

    try:
        # A driver error any command meets (a job's statement cancelled, the server
        # gone) is reported like the store's typed errors, not as a traceback.
        with translate_errors():
            code: int = args.handler(args, ctx)
        ctx.out.flush()  # now, not at exit, so that a reader gone is noticed below
        return code
    except BrokenPipeError:
        return _reader_gone()
    except UsageError as exc:
        print(f"memory-pg: error: {exc}", file=sys.stderr)
        return 2
    except MemoryPgError as exc:
        print(f"memory-pg: error: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:  # a file to import or export to: missing, unwritable
        print(f"memory-pg: error: {exc}", file=sys.stderr)
        return 1
    finally:
        ctx.close()


def _reader_gone() -> int:
    """The reader of stdout stopped reading (``memory-pg list | head -1``): exit as a Unix
    tool that SIGPIPE ends does (141), quietly. Python ignores SIGPIPE (a server must
    survive a client that hangs up), so the write raised instead; what is left in the
    buffer would raise again at exit, with a traceback: it goes to /dev/null."""
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    return 128 + int(signal.SIGPIPE)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
