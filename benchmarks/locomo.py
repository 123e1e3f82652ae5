"""LoCoMo evidence retrieval: memory-pg's ranking beside plain cosine, same model, same run.

Each turn of a conversation becomes one memory of its own user (one user per
conversation) with its session time as ``event_time``; every question is a
search, and Recall@k is the share of its evidence turns in the top k. Figures
per category (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop,
5 adversarial) and overall go to ``benchmarks/results/``.

    python benchmarks/locomo.py                      # embedded server in a temp dir
    python benchmarks/locomo.py --unit turn          # a unit variant (see --help)
    MEMORY_PG_DATABASE_URL=postgresql://... python benchmarks/locomo.py

Not a test: a measurement, reported with the command that reproduced it.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from collections import defaultdict
from dataclasses import dataclass, replace
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from memory_pg.config import RankingSettings  # noqa: E402
from memory_pg.plans import read  # noqa: E402
from memory_pg.sql.search import SearchFilters  # noqa: E402
from memory_pg.store import MemoryStore  # noqa: E402

DEFAULT_DATA = REPO / ".." / "shared" / "bench" / "locomo_dev.json"
KS = (5, 10, 25, 50)
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}


@dataclass(frozen=True)
class Turn:
    """One dialogue turn and where it sits."""

    dia_id: str
    speaker: str
    text: str
    when: datetime
    session: int


def parse_when(value: str) -> datetime:
    """``"1:56 pm on 8 May, 2023"`` as an aware datetime (UTC)."""
    return datetime.strptime(value.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=timezone.utc)


def turns_of(conversation: dict[str, Any]) -> list[Turn]:
    """Every turn in order; a shared image reads as its caption."""
    out: list[Turn] = []
    n = 1
    while f"session_{n}" in conversation:
        when = parse_when(conversation[f"session_{n}_date_time"])
        for t in conversation[f"session_{n}"]:
            text = t["text"]
            if t.get("blip_caption"):
                text += f" [shares a photo: {t['blip_caption']}]"
            out.append(Turn(t["dia_id"], t["speaker"], text, when, n))
        n += 1
    return out


def unit_text(turns: list[Turn], i: int, unit: str) -> tuple[str, list[str]]:
    """The memory text for turn ``i`` under a unit variant, and the dia_ids it counts for.

    ``plain``: the turn alone. ``turn``: speaker and session date with it (the store
    gives it the previous turn of its session as context, as for any user's turns).
    ``bare``: ``turn`` with ``context=""``: no context at all (what ``turn`` measured
    before the store did this).
    ``context``: ``turn``, stored with the previous turn of the same session as its
    ``context`` (see :func:`context_of`; the memory counts for its own turn only, so
    top-k stays k turns).
    ``pair``: this turn and the next one as one unit (counts for both: top-k is
    then up to 2k turns, compare it with Recall@2k of ``turn``).
    """
    t = turns[i]
    date = t.when.strftime("%d %B %Y")
    line = f"{t.speaker}: {t.text}"
    if unit == "plain":
        return t.text, [t.dia_id]
    if unit in ("turn", "bare"):
        return f"[{date}] {line}", [t.dia_id]
    if unit == "context":
        return f"[{date}] {line}", [t.dia_id]
    if unit == "pair":
        nxt = turns[i + 1] if i + 1 < len(turns) and turns[i + 1].session == t.session else None
        if nxt is None:
            return f"[{date}] {line}", [t.dia_id]
        return f"[{date}] {line}\n{nxt.speaker}: {nxt.text}", [t.dia_id, nxt.dia_id]
    if unit == "pair-reply":
        # Non-overlapping: a turn opens a unit unless it was the reply closing the previous one.
        return unit_text(turns, i, "pair")
    raise ValueError(unit)


def units_of(turns: list[Turn], unit: str) -> list[tuple[int, str, list[str]]]:
    """(index of the unit's first turn, memory text, dia_ids) for every stored unit."""
    if unit == "pair-reply":
        out = []
        i = 0
        while i < len(turns):
            text, ids = unit_text(turns, i, "pair")
            out.append((i, text, ids))
            i += len(ids)
        return out
    if unit == "ctx-embed":
        return [(i, *unit_text(turns, i, "turn")) for i in range(len(turns))]
    return [(i, *unit_text(turns, i, unit)) for i in range(len(turns))]


def context_of(turns: list[Turn], i: int, unit: str) -> str | None:
    """The ``context`` stored with turn ``i``: the turn before it in the same session
    (None: the store's default, ``""``: none)."""
    if unit == "bare":
        return ""
    if unit != "context" or i == 0 or turns[i - 1].session != turns[i].session:
        return None
    return f"{turns[i - 1].speaker}: {turns[i - 1].text}"


def embed_text(turns: list[Turn], i: int, unit: str) -> str:
    """What is embedded for the unit at ``i``: under ``ctx-embed``, the turn with its
    neighbours of the same session (previous and next), while the stored text and the
    full-text index hold the turn alone."""
    if unit != "ctx-embed":
        raise ValueError(unit)
    t = turns[i]
    parts = []
    if i > 0 and turns[i - 1].session == t.session:
        parts.append(f"{turns[i - 1].speaker}: {turns[i - 1].text}")
    parts.append(unit_text(turns, i, "turn")[0])
    if i + 1 < len(turns) and turns[i + 1].session == t.session:
        parts.append(f"{turns[i + 1].speaker}: {turns[i + 1].text}")
    return "\n".join(parts)


class CachedEmbedder:
    """Document vectors by text, kept across runs in a .npz file (queries too)."""

    def __init__(self, inner: Any, path: str | None) -> None:
        self.inner = inner
        self.path = path
        self.cache: dict[str, np.ndarray] = {}
        self.model_name = inner.model_name
        if path and os.path.exists(path):
            z = np.load(path, allow_pickle=True)
            self.cache = dict(zip(z["keys"].tolist(), z["vecs"], strict=True))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def _many(self, texts: list[str], fn: Any, tag: str) -> np.ndarray:
        keys = [tag + t for t in texts]
        missing = [t for k, t in zip(keys, texts, strict=True) if k not in self.cache]
        if missing:
            for t, v in zip(missing, fn(missing), strict=True):
                self.cache[tag + t] = np.asarray(v)
        return np.stack([self.cache[k] for k in keys])

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        return self._many(list(texts), self.inner.embed_documents, "d:")

    def embed_query(self, text: str) -> np.ndarray:
        return self._many([text], lambda ts: [self.inner.embed_query(ts[0])], "q:")[0]

    def save(self) -> None:
        if self.path:
            keys = list(self.cache)
            np.savez(
                self.path,
                keys=np.array(keys, dtype=object),
                vecs=np.stack(list(self.cache.values())),
            )


def recall(found: list[list[str]], evidence: set[str], k: int) -> float:
    """Share of the evidence turns covered by the first ``k`` results."""
    covered: set[str] = set()
    for ids in found[:k]:
        covered.update(ids)
    return len(covered & evidence) / len(evidence)


def summarise(per_q: list[tuple[int, dict[int, float]]]) -> dict[str, Any]:
    """Mean Recall@k overall, for categories 1-4 and per category."""
    out: dict[str, Any] = {}
    groups: dict[str, list[dict[int, float]]] = defaultdict(list)
    for cat, r in per_q:
        groups["all"].append(r)
        groups[CATEGORIES[cat]].append(r)
        if cat != 5:
            groups["cat1-4"].append(r)
    for name, rs in groups.items():
        out[name] = {f"recall@{k}": round(statistics.fmean(x[k] for x in rs), 4) for k in KS}
        out[name]["questions"] = len(rs)
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", default=str(DEFAULT_DATA), help="locomo_dev.json")
    p.add_argument(
        "--database-url",
        default=os.environ.get("MEMORY_PG_DATABASE_URL"),
        help="a scratch database (default: an embedded server in a temporary folder)",
    )
    p.add_argument("--embedding-model", default="all-MiniLM-L6-v2")
    p.add_argument(
        "--unit",
        default="turn",
        choices=["plain", "turn", "bare", "context", "pair", "pair-reply", "ctx-embed"],
    )
    p.add_argument(
        "--embed-cache",
        default=os.environ.get("MEMORY_PG_BENCH_EMBED_CACHE"),
        help="a .npz file caching document vectors by text across runs (saves re-embedding)",
    )
    p.add_argument("--candidates", type=int, default=None)
    p.add_argument("--rrf-k", type=int, default=None)
    p.add_argument(
        "--variants",
        default="default",
        help="comma list of ranking variants to run on the same data: default, "
        "vector-only, lexical-only, rrf-only, no-dialogue, no-entities, "
        "or weights w<rrf>_<sim>_<lex>[c<context>]",
    )
    p.add_argument(
        "--expand",
        default="0",
        help="comma list of search expansions to run for each variant (0: none; 1: the "
        "memories one link from the best hits, see MemoryStore.search); a variant "
        "'name+expandN' is reported for each N > 0",
    )
    p.add_argument(
        "--expand-decay",
        type=float,
        default=None,
        help="an expanded memory's share of its seed's score (default: the library's)",
    )
    p.add_argument("--out", default=None, help="JSON result file")
    p.add_argument("--limit", type=int, default=None, help="first N conversations only")
    p.add_argument(
        "--skip",
        type=int,
        default=0,
        help="leave out the first N conversations (report on the others: a held-out split)",
    )
    p.add_argument(
        "--one-user",
        action="store_true",
        help="write every conversation to one user (a heavy user: more memories than the "
        "full-text leg's document-frequency sample) and search each question there, "
        "asked at the end of its own conversation (another's later turns count as recent)",
    )
    args = p.parse_args(argv)

    data = json.loads(Path(args.data).read_text(encoding="utf-8"))
    data = data[args.skip :]
    if args.limit:
        data = data[: args.limit]
    tmp = None
    if args.database_url:
        store = MemoryStore(
            args.database_url, embedding_model=args.embedding_model, auto_migrate=True
        )
    else:
        tmp = tempfile.mkdtemp(prefix="memory-pg-locomo-")
        store = MemoryStore(home=tmp, embedding_model=args.embedding_model)
    embedder = CachedEmbedder(store.embedder, args.embed_cache)
    store.embedder = embedder
    run_id = uuid.uuid4().hex[:8]
    base = store.ranking
    if args.candidates:
        base = replace(base, candidates=args.candidates)
    if args.rrf_k is not None:
        base = replace(base, rrf_k=args.rrf_k)
    takes_now = "now" in inspect.signature(read.plan_search).parameters
    names = args.variants.split(",")
    variants = {name: variant(name, base) for name in names}
    expansions = [int(x) for x in args.expand.split(",")]
    if args.expand_decay is not None:
        from memory_pg.sql import relations as relations_sql

        relations_sql.EXPAND_DECAY = args.expand_decay
        relations_sql.expand_search.__kwdefaults__["decay"] = args.expand_decay
    results: dict[str, list[tuple[int, dict[int, float]]]] = defaultdict(list)
    timings: dict[str, list[float]] = defaultdict(list)
    t_ingest = 0.0
    n_memories = 0
    try:

        def ingest(sample: dict[str, Any], user: str, prefix: str) -> list[Turn]:
            """Write one conversation's turns to ``user``, their ids under ``prefix``."""
            nonlocal t_ingest, n_memories
            turns = turns_of(sample["conversation"])
            units = units_of(turns, args.unit)
            t0 = time.perf_counter()
            items = [
                {
                    "text": text,
                    "memory_type": "dialogue",
                    "event_time": turns[i].when,
                    # One conversation session: its turns follow one another (issue 19).
                    "metadata": {
                        "dia_ids": [prefix + d for d in ids],
                        "session_id": f"{prefix}s{turns[i].session}",
                    },
                    "context": context_of(turns, i, args.unit),
                }
                for i, text, ids in units
            ]
            if args.unit == "ctx-embed":
                vecs = embedder.embed_documents(
                    [embed_text(turns, i, args.unit) for i, _, _ in units]
                )
                store.embedder = _Fixed(vecs, embedder)
                try:
                    store.add_memories(items, user_id=user)
                finally:
                    store.embedder = embedder
            else:
                store.add_memories(items, user_id=user)
            t_ingest += time.perf_counter() - t0
            n_memories += len(units)
            return turns

        def ask(sample: dict[str, Any], user: str, prefix: str, turns: list[Turn]) -> None:
            """Search each question of one conversation as ``user``; record its recall."""
            # Plain cosine baseline: each turn as "speaker: text", the same model, exact
            # search (the text alone, without the speaker, gets 24% Recall@5). Over this
            # conversation's turns: not run with --one-user.
            plain = (
                None
                if args.one_user
                else embedder.embed_documents([f"{t.speaker}: {t.text}" for t in turns])
            )
            # The questions are asked after the last session: "in June" is the June
            # before it, not the one before today.
            asked = max(t.when for t in turns) + timedelta(days=1)
            valid = {t.dia_id for t in turns}
            for qa in sample["qa"]:
                evidence = {prefix + e for e in qa.get("evidence", []) if e in valid}
                if not evidence:
                    continue
                question = qa["question"]
                qv = embedder.embed_query(question)
                if plain is not None:
                    order = np.argsort(-(plain @ qv))[: max(KS)]
                    found = [[turns[j].dia_id] for j in order]
                    results["plain-cosine"].append(
                        (qa["category"], {k: recall(found, evidence, k) for k in KS})
                    )
                for (name, ranking), expand in (
                    (v, x) for v in variants.items() for x in expansions
                ):
                    label = name if not expand else f"{name}+expand{expand}"
                    # With expansion, what a caller asking for k results gets differs
                    # from the first k of 50 (a neighbour's place depends on k): one
                    # search per k of 5 and 10, the first k of 50 beyond.
                    per_k: dict[int, float] = {}
                    for top in (5, 10, max(KS)) if expand else (max(KS),):
                        # The query is embedded once and shared by every variant: only
                        # the ranking differs; the timing is the database round trip.
                        plan = read.plan_search(
                            user,
                            question,
                            qv,
                            top,
                            SearchFilters(),
                            False,
                            ranking,
                            **({"now": asked} if takes_now else {}),
                            **({"expand": expand} if expand else {}),
                        )
                        t0 = time.perf_counter()
                        hits = store.run_plan(plan, user, ef_search=store.ef_search)
                        if top == 5 or not expand:
                            timings[label].append(time.perf_counter() - t0)
                        found = [h["metadata"]["dia_ids"] for h in hits]
                        for k in KS:
                            if k not in per_k and (k == top or top == max(KS)):
                                per_k[k] = recall(found, evidence, k)
                    results[label].append((qa["category"], per_k))

        if args.one_user:
            # Every conversation in one user's memories: more than the full-text leg's
            # document-frequency sample, so its heavy-user path ranks them.
            user = f"locomo-{run_id}-all"
            prefixed = [(s, f"{s['sample_id']}/") for s in data]
            turns_by = [ingest(s, user, prefix) for s, prefix in prefixed]
            for (s, prefix), turns in zip(prefixed, turns_by, strict=True):
                ask(s, user, prefix, turns)
            store.clear_user_memory(user)
        else:
            for sample in data:
                user = f"locomo-{run_id}-{sample['sample_id']}"
                ask(sample, user, "", ingest(sample, user, ""))
                store.clear_user_memory(user)
    finally:
        store.close()
        embedder.save()
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)  # the embedded server's files

    report = {
        "benchmark": "locomo evidence retrieval",
        "data": os.path.relpath(args.data, REPO),
        "conversations": len(data),
        "skipped": args.skip,
        "memories": n_memories,
        "unit": args.unit,
        "one_user": args.one_user,
        "embedding_model": embedder.model_name,
        "ingest_s": round(t_ingest, 1),
        "command": "python benchmarks/locomo.py " + " ".join(argv or sys.argv[1:]),
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cpus",
        "results": {name: summarise(r) for name, r in results.items()},
        "sql_ms_p50": {name: round(1000 * statistics.median(t), 1) for name, t in timings.items()},
        "sql_ms_p95": {
            name: round(1000 * statistics.quantiles(t, n=20)[-1], 1) for name, t in timings.items()
        },
        "ingest_ms_per_turn": round(1000 * t_ingest / max(n_memories, 1), 2),
        "ranking": {name: _settings_dict(r) for name, r in variants.items()},
    }
    out = (
        Path(args.out)
        if args.out
        else REPO / "benchmarks" / "results" / (f"locomo_{args.unit}.json")
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    for name, summary in report["results"].items():
        a = summary["all"]
        print(
            f"{name:14s} R@5 {a['recall@5']:.3f}  R@10 {a['recall@10']:.3f}  "
            f"R@25 {a['recall@25']:.3f}  R@50 {a['recall@50']:.3f}  "
            f"(cat1-4 R@5 {summary['cat1-4']['recall@5']:.3f})"
        )
    print(f"written {out}")
    return 0


class _Fixed:
    """An embedder that hands back vectors computed beforehand (``ctx-embed``)."""

    def __init__(self, vecs: np.ndarray, inner: Any) -> None:
        self.vecs = vecs
        self.inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        assert len(texts) == len(self.vecs)
        return self.vecs


def _settings_dict(r: RankingSettings) -> dict[str, Any]:
    d = {k: getattr(r, k) for k in r.__dataclass_fields__}
    d["half_life_days"] = dict(r.half_life_days)
    return d


VARIANTS = {
    "default": lambda b: b,
    "vector-only": lambda b: replace(b, rrf_weight=0.0, similarity_weight=1.0, lexical_weight=0.0),
    "lexical-only": lambda b: replace(b, rrf_weight=0.0, similarity_weight=0.0, lexical_weight=1.0),
    "rrf-only": lambda b: replace(b, rrf_weight=1.0, similarity_weight=0.0, lexical_weight=0.0),
    # Questions and their answers not weighed (the ranking before 2026-12-05).
    "no-dialogue": lambda b: replace(b, question_discount=0.0, answer_share=0.0),
    # Entities the question names not weighed (the ranking before 2026-12-05's second).
    "no-entities": lambda b: replace(b, entity_weight=0.0),
    # The attribute a question asks and the thing it describes not weighed (issue 35).
    "no-attributes": lambda b: replace(b, attribute_weight=0.0),
    "attributes-half": lambda b: replace(b, attribute_weight=0.5),
}


def variant(name: str, base: RankingSettings) -> RankingSettings:
    """A named variant, or ``w<rrf>_<similarity>_<lexical>`` weights (``w0_1_0.5``),
    optionally ``...c<context weight>`` (``w0_1_0.5c0.4``)."""
    if name in VARIANTS:
        return VARIANTS[name](base)
    if not name.startswith("w"):
        raise SystemExit(f"unknown variant {name!r}: {', '.join(VARIANTS)} or w<rrf>_<sim>_<lex>")
    weights, _, ctx = name[1:].partition("c")
    rrf, sim, lex = (float(x) for x in weights.split("_"))
    out = replace(base, rrf_weight=rrf, similarity_weight=sim, lexical_weight=lex)
    return replace(out, lexical_context_weight=float(ctx)) if ctx else out


if __name__ == "__main__":
    raise SystemExit(main())
