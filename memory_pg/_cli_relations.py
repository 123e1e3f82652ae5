"""``memory-pg related | entity | entities | graph``: the relations between a user's memories."""

from __future__ import annotations

import argparse
import json
import os
from typing import TYPE_CHECKING, Any

from memory_pg.cli import add_json_flag, require_user
from memory_pg.entities import KINDS
from memory_pg.plans.relations import graph_dot, graph_text

if TYPE_CHECKING:
    from memory_pg.cli import CliContext

_USER_HELP = "the user (env MEMORY_PG_USER_ID)"


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the relation commands to the command line."""
    p = subparsers.add_parser(
        "related", help="memories linked to one memory (next turn, replaced, same entity)"
    )
    p.add_argument("memory", help="memory id")
    p.add_argument("--depth", type=int, default=2, help="links to follow (0..3, default 2)")
    p.add_argument("--limit", type=int, default=50)
    _common(p)
    p.set_defaults(handler=cmd_related)

    p = subparsers.add_parser("entity", help="everything about one entity, newest first")
    p.add_argument("name", help="a name or alias: Caroline, 小王")
    p.add_argument("--limit", type=int, default=50)
    p.add_argument("--include-inactive", action="store_true", help="superseded memories too")
    _common(p)
    p.set_defaults(handler=cmd_entity)

    p = subparsers.add_parser("entities", help="a user's entities, most mentioned first")
    p.add_argument("--kind", action="append", choices=KINDS, help="only this kind (repeatable)")
    p.add_argument("--limit", type=int, default=100)
    _common(p)
    p.set_defaults(handler=cmd_entities)

    p = subparsers.add_parser(
        "graph", help="an entity's neighbourhood: its memories and the entities named with it"
    )
    p.add_argument("--entity", required=True, help="a name or alias")
    p.add_argument("--format", choices=("text", "dot"), default="text")
    p.add_argument("--limit", type=int, default=25)
    _common(p)
    p.set_defaults(handler=cmd_graph)


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--user", default=os.environ.get("MEMORY_PG_USER_ID"), help=_USER_HELP)
    add_json_flag(p)


def _as_json(args: argparse.Namespace, ctx: CliContext, value: Any) -> bool:
    """Under ``--json``, print ``value`` and say so (the command prints nothing more)."""
    if args.json:
        ctx.emit(_jsonable(value), True)
    return bool(args.json)


def _jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str, ensure_ascii=False))


def _line(mem: dict[str, Any]) -> str:
    when = mem["event_time"].date().isoformat() if mem.get("event_time") else "?"
    text = " ".join(str(mem["text"]).split())
    return f"{when}  [{mem['memory_type']}] {text}  (id {mem['id']})"


def cmd_related(args: argparse.Namespace, ctx: CliContext) -> int:
    """``memory-pg related ID --user U [--depth 2]``."""
    user = require_user(args)
    rows = ctx.store(user).related(args.memory, args.depth, limit=args.limit, user_id=user)
    if _as_json(args, ctx, rows):
        return 0
    if not rows:
        ctx.out.write("nothing linked / 没有关联的记忆\n")
    for r in rows:
        how = r["relation"] + (f" {r['entity']}" if r.get("entity") else "")
        ctx.out.write(f"{r['hops']} {how:<24} {_line(r)}\n")
    return 0


def cmd_entity(args: argparse.Namespace, ctx: CliContext) -> int:
    """``memory-pg entity NAME --user U``."""
    user = require_user(args)
    found = ctx.store(user).entity(
        args.name, limit=args.limit, include_inactive=args.include_inactive, user_id=user
    )
    if _as_json(args, ctx, found):
        return 0
    if found is None:
        ctx.out.write(f"no entity {args.name!r} / 没有这个实体\n")
        return 1
    aliases = f" (also {', '.join(found['aliases'])})" if found["aliases"] else ""
    ctx.out.write(f"{found['name']} [{found['kind']}]{aliases}\n")
    for mem in found["memories"]:
        ctx.out.write("  " + _line(mem) + "\n")
    return 0


def cmd_entities(args: argparse.Namespace, ctx: CliContext) -> int:
    """``memory-pg entities --user U [--kind person]``."""
    user = require_user(args)
    rows = ctx.store(user).entities(kinds=args.kind, limit=args.limit, user_id=user)
    if _as_json(args, ctx, rows):
        return 0
    for r in rows:
        ctx.out.write(f"{r['mentions']:>5}  {r['name']} [{r['kind']}]\n")
    return 0


def cmd_graph(args: argparse.Namespace, ctx: CliContext) -> int:
    """``memory-pg graph --user U --entity NAME [--format dot]``."""
    user = require_user(args)
    graph = ctx.store(user).graph(args.entity, limit=args.limit, user_id=user)
    if _as_json(args, ctx, graph):
        return 0
    if graph is None:
        ctx.out.write(f"no entity {args.entity!r} / 没有这个实体\n")
        return 1
    ctx.out.write((graph_dot(graph) if args.format == "dot" else graph_text(graph)) + "\n")
    return 0


__all__ = ["cmd_entities", "cmd_entity", "cmd_graph", "cmd_related", "register"]
