"""LangGraph stores side by side: MemoryPgStore and LangGraph's PostgresStore, same server.

Both are driven only through LangGraph's ``BaseStore`` API (``batch``, ``put``, ``get``,
``search``) on one embedded PostgreSQL (memory-pg's tables in its database,
PostgresStore's in a database of its own on the same server), with the same model
(the bundled all-MiniLM-L6-v2, 384-d; PostgresStore gets it as its ``embed``
function, cosine). Vectors are computed once per text and looked up by both stores,
so the timings are the stores' own work, not the model's.

* **latency**: ``--items`` items over ``--namespaces`` namespaces
  (``("memories", "user-N", "facts")``: one user each), loaded with ``batch`` (one
  batch per namespace); then p50 / p95 of single ``put`` (a new key), ``put`` of a
  held key (an update), ``get``, ``search`` with a query, and ``search`` without one.
* **LoCoMo** (``../shared/bench/locomo_dev.json``): every turn an item
  (``{"content": "<speaker>: <text>"}``, key = its dia_id) in a namespace per
  conversation; each question a ``search(query=..., limit=10)``; Recall@5/@10 of the
  evidence turns, categories 1-4 and all.
* **Chinese dev set** (``benchmarks/zh_dev.json``): each message an item, each
  question a search in its user's namespace; Recall@5.

    python benchmarks/langgraph_store.py                        # 10k items, 1000 namespaces
    python benchmarks/langgraph_store.py --items 2000 --namespaces 200 --locomo-limit 2

Not a test: a measurement, written to ``benchmarks/results/langgraph_store*.json``.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.data import make_texts  # noqa: E402
from memory_pg.integrations.langgraph import MemoryPgStore  # noqa: E402
from memory_pg.store import MemoryStore  # noqa: E402

#: The shared LoCoMo split, beside the checkout (a worktree sits one folder deeper).
LOCOMO = next(
    (
        p / "shared" / "bench" / "locomo_dev.json"
        for p in (REPO.parent, REPO.parent.parent)
        if (p / "shared" / "bench" / "locomo_dev.json").exists()
    ),
    REPO.parent / "shared" / "bench" / "locomo_dev.json",
)
ZH_DEV = REPO / "benchmarks" / "zh_dev.json"
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}


class Lookup:
    """The model's vectors, computed once per text and shared by both stores."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.model_name = inner.model_name
        self.docs: dict[str, np.ndarray] = {}
        self.queries: dict[str, np.ndarray] = {}

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def warm(self, texts: list[str], queries: list[str]) -> None:
        todo = sorted({t for t in texts if t not in self.docs})
        for start in range(0, len(todo), 256):
            chunk = todo[start : start + 256]
            self.docs.update(zip(chunk, self.inner.embed_documents(chunk), strict=True))
        for q in queries:
            if q not in self.queries:
                self.queries[q] = self.inner.embed_query(q)

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        self.warm(list(texts), [])
        return np.stack([self.docs[t] for t in texts])

    def embed_query(self, text: str) -> np.ndarray:
        self.warm([], [text])
        return self.queries[text]

    def for_langgraph(self, texts: list[str]) -> list[list[float]]:
        """PostgresStore's ``embed``: one function for documents and queries."""
        out = []
        for t in texts:
            v = self.queries.get(t)
            out.append((v if v is not None else self.embed_documents([t])[0]).tolist())
        return out


def pct(xs: list[float], q: float) -> float:
    ordered = sorted(xs)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000, 2)


def timed(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> float:
    """Seconds one call takes."""
    start = time.perf_counter()
    fn(*args, **kwargs)
    return time.perf_counter() - start


def latency(stores: dict[str, Any], args: argparse.Namespace, lookup: Lookup) -> dict[str, Any]:
    from langgraph.store.base import PutOp

    texts = [t for t, _ in make_texts(args.items + 2 * args.samples, seed=11)]
    items, extra = texts[: args.items], texts[args.items :]
    per_ns = max(1, args.items // args.namespaces)
    spaces = [("memories", f"user-{n}", "facts") for n in range(args.namespaces)]
    rng = random.Random(5)
    queries = [" ".join(rng.choice(items).split()[:6]) for _ in range(args.samples)]
    lookup.warm(texts, queries)
    out: dict[str, Any] = {}
    for name, store in stores.items():
        row: dict[str, Any] = {}
        t0 = time.perf_counter()
        for n, ns in enumerate(spaces):
            chunk = items[n * per_ns : (n + 1) * per_ns]
            store.batch([PutOp(ns, f"k{n}-{i}", {"content": t}) for i, t in enumerate(chunk)])
        row["load_s"] = round(time.perf_counter() - t0, 1)
        row["load_items_per_s"] = round(args.items / row["load_s"], 1)
        picks = [rng.randrange(args.namespaces) for _ in range(args.samples)]
        ops: dict[str, list[float]] = {
            "put_new": [],
            "put_update": [],
            "get": [],
            "search_query": [],
            "search_list": [],
        }
        for j, n in enumerate(picks):
            ns = spaces[n]
            update = {"content": extra[args.samples + j]}
            ops["put_new"].append(timed(store.put, ns, f"new-{j}", {"content": extra[j]}))
            ops["put_update"].append(timed(store.put, ns, f"k{n}-0", update))
            ops["get"].append(timed(store.get, ns, f"k{n}-1"))
            ops["search_query"].append(timed(store.search, ns, query=queries[j], limit=10))
            ops["search_list"].append(timed(store.search, ns, limit=10))
        for op, xs in ops.items():
            row[op] = {"p50_ms": pct(xs, 0.5), "p95_ms": pct(xs, 0.95)}
        out[name] = row
        print(name, json.dumps(row), flush=True)
    return out


def locomo(stores: dict[str, Any], args: argparse.Namespace, lookup: Lookup) -> dict[str, Any]:
    data = json.loads(LOCOMO.read_text(encoding="utf-8"))
    if args.locomo_limit:
        data = data[: args.locomo_limit]
    convs = []
    for sample in data:
        c = sample["conversation"]
        turns = []
        n = 1
        while f"session_{n}" in c:
            for t in c[f"session_{n}"]:
                text = t["text"] + (
                    f" [shares a photo: {t['blip_caption']}]" if t.get("blip_caption") else ""
                )
                turns.append((t["dia_id"], f"{t['speaker']}: {text}"))
            n += 1
        convs.append((sample["sample_id"], turns, sample["qa"]))
    lookup.warm(
        [t for _, turns, _ in convs for _, t in turns],
        [q["question"] for _, _, qa in convs for q in qa],
    )
    return _recall_run(
        stores, convs, ks=(5, 10), category=lambda q: CATEGORIES[q["category"]], core=True
    )


def zh_dev(stores: dict[str, Any], lookup: Lookup) -> dict[str, Any]:
    data = json.loads(ZH_DEV.read_text(encoding="utf-8"))
    convs = [
        (
            u["user"],
            [(m["id"], m["text"]) for m in u["messages"]],
            [{**q, "evidence": q["evidence"]} for q in u["questions"]],
        )
        for u in data["users"]
    ]
    lookup.warm(
        [t for _, turns, _ in convs for _, t in turns],
        [q["question"] for _, _, qa in convs for q in qa],
    )
    return _recall_run(stores, convs, ks=(5,), category=lambda q: q["category"])


def _recall_run(
    stores: dict[str, Any],
    convs: list[tuple[str, list[tuple[str, str]], list[dict[str, Any]]]],
    ks: tuple[int, ...],
    category: Callable[[dict[str, Any]], str],
    core: bool = False,
) -> dict[str, Any]:
    """Each conversation's turns put in a namespace of its own, then each question
    searched there; mean Recall@k per category, overall and (``core``: LoCoMo's
    categories 1-4) without the adversarial questions."""
    from langgraph.store.base import PutOp

    out: dict[str, Any] = {}
    for name, store in stores.items():
        scores: dict[str, list[dict[int, float]]] = {}
        times: list[float] = []
        for conv_id, turns, qa in convs:
            ns = ("memories", f"bench-{conv_id}")
            for start in range(0, len(turns), 100):
                store.batch(
                    [PutOp(ns, key, {"content": text}) for key, text in turns[start : start + 100]]
                )
            for q in qa:
                evidence = {e for e in q.get("evidence", []) if e}
                if not evidence:
                    continue
                t0 = time.perf_counter()
                found = [i.key for i in store.search(ns, query=q["question"], limit=max(ks))]
                times.append(time.perf_counter() - t0)
                r = {k: len(set(found[:k]) & evidence) / len(evidence) for k in ks}
                cat = category(q)
                core_group = ("cat1-4",) if core and cat != "adversarial" else ()
                for group in ("all", cat, *core_group):
                    scores.setdefault(group, []).append(r)
        out[name] = {
            group: {
                **{f"recall@{k}": round(statistics.fmean(r[k] for r in rs), 4) for k in ks},
                "questions": len(rs),
            }
            for group, rs in sorted(scores.items())
        }
        out[name]["search_p50_ms"] = pct(times, 0.5)
        print(name, json.dumps(out[name]), flush=True)
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--items", type=int, default=10_000)
    p.add_argument("--namespaces", type=int, default=1000)
    p.add_argument("--samples", type=int, default=200, help="timed calls per operation")
    p.add_argument("--locomo-limit", type=int, default=0, help="conversations (0: all five)")
    p.add_argument("--skip", default="", help="comma list of latency,locomo,zh to leave out")
    p.add_argument("--tag", default="")
    args = p.parse_args(argv)
    skip = set(filter(None, args.skip.split(",")))

    import psycopg
    from langgraph.store.postgres import PostgresStore
    from psycopg import sql

    tmp = tempfile.mkdtemp(prefix="memory-pg-lgbench-")
    memory = MemoryStore(home=tmp, embedding_model="all-MiniLM-L6-v2")
    lookup = Lookup(memory.embedder)
    memory.embedder = lookup
    url = memory.engine.url.set(drivername="postgresql")
    with psycopg.connect(url.render_as_string(hide_password=False), autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier("langgraph_bench")))
    peer_url = url.set(database="langgraph_bench").render_as_string(hide_password=False)
    index = {"dims": lookup.dimension, "embed": lookup.for_langgraph, "fields": ["content"]}
    results: dict[str, Any] = {
        "benchmark": "LangGraph BaseStore: MemoryPgStore beside PostgresStore",
        "command": "python benchmarks/langgraph_store.py " + " ".join(argv or sys.argv[1:]),
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "model": lookup.model_name,
        "items": args.items,
        "namespaces": args.namespaces,
        "samples": args.samples,
    }
    try:
        with PostgresStore.from_conn_string(peer_url, index=index) as peer:  # type: ignore[arg-type]
            peer.setup()
            stores = {"memory-pg": MemoryPgStore(memory), "PostgresStore": peer}
            if "latency" not in skip:
                results["latency"] = latency(stores, args, lookup)
            if "locomo" not in skip:
                results["locomo"] = locomo(stores, args, lookup)
            if "zh" not in skip:
                results["zh_dev"] = zh_dev(stores, lookup)
    finally:
        memory.close()
        shutil.rmtree(tmp, ignore_errors=True)
    name = "langgraph_store" + (f"-{args.tag}" if args.tag else "") + ".json"
    target = REPO / "benchmarks" / "results" / name
    target.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print("wrote", target)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
