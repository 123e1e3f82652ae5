"""``memory-pg hermes install``: put the memory-pg provider where Hermes Agent loads plugins."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from memory_pg.errors import InvalidArgument
from memory_pg.integrations.hermes import PROVIDER_NAME

#: The plugin's ``__init__.py``: Hermes finds it by the words MemoryProvider and
#: register_memory_provider, and imports memory-pg from its own environment.
PLUGIN_INIT = '''"""memory-pg: long-term memory in PostgreSQL for Hermes (a MemoryProvider plugin).

Written by `memory-pg hermes install`; needs `pip install 'memory-pg[hermes]'` in the
environment Hermes runs in. Settings: MEMORY_PG_DATABASE_URL (else the embedded
server in MEMORY_PG_HOME), MEMORY_PG_EMBEDDING_MODEL, MEMORY_PG_USER_ID.
"""

from memory_pg.integrations.hermes import MemoryPgProvider


def register(ctx):
    """Hermes' plugin hook."""
    ctx.register_memory_provider(MemoryPgProvider())
'''

PLUGIN_YAML = f"""name: {PROVIDER_NAME}
version: 1.0.0
description: "memory-pg: long-term memory in PostgreSQL + pgvector (recall, buffer, compaction)."
kind: exclusive
pip_dependencies:
  - memory-pg[hermes]
hooks:
  - on_session_end
  - on_pre_compress
  - on_memory_write
"""


def default_hermes_home() -> Path:
    """``HERMES_HOME``, else ``~/.hermes`` as Hermes itself resolves it."""
    return Path(os.environ.get("HERMES_HOME") or Path.home() / ".hermes").expanduser()


def install(hermes_home: Path) -> Path:
    """Write the plugin into ``hermes_home/plugins/memory_pg`` and return that folder."""
    target = hermes_home / "plugins" / PROVIDER_NAME
    target.mkdir(parents=True, exist_ok=True)
    (target / "__init__.py").write_text(PLUGIN_INIT, encoding="utf-8")
    (target / "plugin.yaml").write_text(PLUGIN_YAML, encoding="utf-8")
    return target


def _cmd_install(args: argparse.Namespace, ctx: Any) -> int:
    home = Path(args.hermes_home).expanduser() if args.hermes_home else default_hermes_home()
    try:
        target = install(home)
    except OSError as exc:
        # A home that is a file, unwritable, or on a read-only disk: say which, briefly.
        reason = exc.strerror or type(exc).__name__
        raise InvalidArgument(
            f"cannot install the plugin under {home} ({reason}{_at(exc)}): "
            "pass a Hermes home you can write to with --hermes-home (or HERMES_HOME)"
        ) from exc
    ctx.out.write(
        f"installed the memory-pg provider in {target}\n"
        "activate it with:\n"
        f"  hermes config set memory.provider {PROVIDER_NAME}\n"
        f"or in {home / 'config.yaml'}:\n"
        "  memory:\n"
        f"    provider: {PROVIDER_NAME}\n"
        "Hermes must run where memory-pg is installed: pip install 'memory-pg[hermes]'\n"
    )
    return 0


def _at(exc: OSError) -> str:
    return f": {exc.filename}" if exc.filename else ""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``memory-pg hermes install``."""
    parser = subparsers.add_parser("hermes", help="Hermes Agent integration")
    sub = parser.add_subparsers(dest="hermes_command", required=True, metavar="ACTION")
    p = sub.add_parser("install", help="install the memory-pg provider as a Hermes plugin")
    p.add_argument(
        "--hermes-home",
        default=os.environ.get("HERMES_HOME"),
        help="Hermes' home folder (env HERMES_HOME; default ~/.hermes)",
    )
    p.set_defaults(handler=_cmd_install)
