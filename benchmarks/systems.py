"""The systems under test behind one small interface: memory-pg, the seed's ChromaDB, mem0.

Each adapter loads a :class:`~benchmarks.data.Dataset` with precomputed vectors
(database-only ingest), adds memories one by one, searches with a precomputed
query vector (store-only) or with the query embedded (end to end), and reports
its disk footprint. Peers are imported lazily, so memory-pg runs without them.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import socket
import statistics
import time
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from benchmarks.data import Dataset
from memory_pg.text.query import analyse


class LookupEmbedder:
    """An Embedder that answers from precomputed vectors and falls back to the real model.

    It lets the stores run their real code paths while the benchmark decides
    whether the model runs (end to end) or not (database-only).
    """

    def __init__(self, real: Any) -> None:
        self.real = real
        self.model_name = real.model_name
        self.table: dict[str, np.ndarray] = {}

    @property
    def dimension(self) -> int:
        """The real model's dimension."""
        return int(self.real.dimension)

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Precomputed vectors when all are known, else the model."""
        try:
            return np.vstack([self.table[t] for t in texts])
        except KeyError:
            return np.asarray(self.real.embed_documents(texts), dtype=np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        """The precomputed vector when known, else the model."""
        vec = self.table.get(text)
        return vec if vec is not None else np.asarray(self.real.embed_query(text))


def real_pool(size: int = 10_000) -> tuple[Any, list[tuple[str, str]], np.ndarray]:
    """The bundled model, ``size`` pool texts and their vectors (embedded once, cached)."""
    from benchmarks.data import embed_pool, make_texts
    from memory_pg.embedding import get_embedder

    real = get_embedder("all-MiniLM-L6-v2")
    pool = make_texts(size)
    texts = [t for t, _ in pool]
    # run.py's default cache (under its default --out), wherever this runs from.
    cache = Path(__file__).resolve().parent / "results" / "tmp"
    return real, pool, embed_pool(texts, real.embed_documents, cache, real.model_name)


def lookup_of(real: Any, *datasets: Any) -> LookupEmbedder:
    """A :class:`LookupEmbedder` that knows every text and query of ``datasets``."""
    lookup = LookupEmbedder(real)
    for data in datasets:
        lookup.table.update(zip(data.texts, data.vectors, strict=True))
        lookup.table.update(zip(data.query_texts, data.query_vectors, strict=True))
    return lookup


def timing_summary(samples: dict[str, list[float]]) -> dict[str, dict[str, float]]:
    """p50 and p95, in milliseconds, of each way's timings (seconds)."""
    return {
        "p50_ms": {k: round(statistics.median(v) * 1000, 2) for k, v in samples.items()},
        "p95_ms": {
            k: round(statistics.quantiles(v, n=20)[18] * 1000, 2) for k, v in samples.items()
        },
    }


def write_result(path: str, result: dict[str, Any]) -> None:
    """Write a benchmark's JSON result (creating its folder) and print it."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


def dir_size(path: Path) -> int:
    """Bytes of every file under a folder."""
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.path.getsize(os.path.join(root, name))
    return total


def process_tree_memory(pid: int) -> int:
    """Proportional set size (PSS, else RSS) of a process and its children, in bytes.

    PSS splits shared memory (PostgreSQL's shared buffers) among the processes
    that map it, so the sum is not inflated by counting it once per backend.
    """
    try:
        import psutil
    except ImportError:  # a benchmark extra (benchmarks/requirements.txt)
        return 0
    try:
        root = psutil.Process(pid)
        procs = [root, *root.children(recursive=True)]
    except psutil.Error:
        return 0
    total = 0
    for proc in procs:
        try:
            info = proc.memory_full_info()
            total += int(getattr(info, "pss", 0) or info.rss)
        except psutil.Error:
            continue
    return total


def own_rss() -> int:
    """RSS of this (the client) process."""
    try:
        import psutil

        return int(psutil.Process().memory_info().rss)
    except ImportError:
        return 0


class NetworkGuard:
    """Counts connections to anything but a unix socket or the loopback address.

    mem0 is configured with a dummy OpenAI key and ``infer=False``; the guard is
    how the benchmark shows that no request leaves the machine.
    """

    def __init__(self) -> None:
        self.outside: list[str] = []
        self._orig = socket.socket.connect

    def __enter__(self) -> NetworkGuard:
        guard = self
        orig = self._orig

        def connect(sock: socket.socket, address: Any) -> Any:
            if sock.family in (socket.AF_INET, socket.AF_INET6):
                host = str(address[0])
                if not (host.startswith("127.") or host in ("::1", "localhost")):
                    guard.outside.append(host)
                    raise ConnectionRefusedError(f"benchmark network guard: {host}")
            return orig(sock, address)

        socket.socket.connect = connect  # type: ignore[method-assign]
        return self

    def __exit__(self, *exc: object) -> None:
        socket.socket.connect = self._orig  # type: ignore[method-assign]


# ---------------------------------------------------------------------------------------
# memory-pg


class MemoryPg:
    """memory-pg through its public MemoryStore, plus its own SQL for the store-only timings."""

    name = "memory-pg"

    def __init__(self, store: Any, lookup: LookupEmbedder, server_pid: int | None) -> None:
        self.store = store
        self.lookup = lookup
        self.server_pid = server_pid

    def reset(self) -> None:
        """Empty memory-pg's tables (only benchmark users are ever there; see run.py)."""
        from sqlalchemy import text

        with self.store.engine.begin() as conn:
            conn.execute(
                text(
                    "TRUNCATE memory_pg_memories, memory_pg_history, memory_pg_memory_entities, "
                    "memory_pg_memory_links, memory_pg_entities"
                )
            )

    def settle(self) -> None:
        """``VACUUM ANALYZE`` after a bulk load, as autovacuum soon does in production:
        without statistics the planner costs a heavy user's search as a light one's."""
        from sqlalchemy import text

        with self.store.engine.connect() as conn:
            conn = conn.execution_options(isolation_level="AUTOCOMMIT")
            conn.execute(text("VACUUM ANALYZE memory_pg_memories, memory_pg_history"))

    def set_supersession(self, enabled: bool) -> None:
        """Turn supersession on write (compare each new memory with the user's current ones)
        on or off. Bulk loads of synthetic data turn it off: its near-duplicates would
        be merged, and the peers keep every memory; the real-text ingest measures both.
        """
        from memory_pg.config import SupersedePolicy

        self.store.supersede = SupersedePolicy(enabled=enabled)

    def foreign_users(self) -> int:
        """Users in the database that the benchmark did not write."""
        from sqlalchemy import text

        with self.store.engine.connect() as conn:
            return int(
                conn.execute(
                    text(
                        "SELECT count(DISTINCT user_id) FROM memory_pg_memories "
                        "WHERE user_id NOT LIKE 'bench-%'"
                    )
                ).scalar_one()
            )

    def count_current(self) -> int:
        """Current (not superseded) memories in the table."""
        from sqlalchemy import text

        with self.store.engine.connect() as conn:
            return int(
                conn.execute(
                    text("SELECT count(*) FROM memory_pg_memories WHERE superseded_at IS NULL")
                ).scalar_one()
            )

    def remember(self, data: Dataset, rows: Sequence[int] | None = None) -> None:
        """Teach the lookup embedder the vectors of these rows (all if None)."""
        ix = range(data.size) if rows is None else rows
        for i in ix:
            self.lookup.table[data.texts[i]] = data.vectors[i]

    #: Rows per add_memories call in bulk loads (the store inserts 500 per statement).
    batch = 500

    def load_batched(self, data: Dataset, rows: np.ndarray, progress: Any = None) -> None:
        """add_memories per user, ``batch`` rows per call (the database-only bulk path)."""
        sub = {int(i) for i in rows}
        for user, ix in data.user_batches(self.batch):
            chosen = [int(i) for i in ix if int(i) in sub]
            if not chosen:
                continue
            items = [{"text": data.texts[i], "memory_type": data.types[i]} for i in chosen]
            self.store.add_memories(items, user_id=user)
            if progress:
                progress(len(chosen))

    def add_one(self, data: Dataset, i: int) -> None:
        """add_memory for one row."""
        self.store.add_memory(data.texts[i], data.types[i], user_id=data.users[i])

    def add_texts_e2e(self, user: str, texts: Sequence[str], types: Sequence[str]) -> None:
        """add_memories with the real model embedding (the lookup does not know these texts)."""
        items = [{"text": t, "memory_type": k} for t, k in zip(texts, types, strict=True)]
        self.store.add_memories(items, user_id=user)

    def search(self, user: str, query: str) -> list[str]:
        """The public search (hybrid: vectors and full text); ids of the top 10."""
        return [r["id"] for r in self.store.search(query, top_k=10, user_id=user)]

    def search_e2e(self, user: str, query: str) -> Any:
        """The public search with the query embedded by the model, access tracked."""
        return self.store.search(query, top_k=10, user_id=user)

    @contextlib.contextmanager
    def _tx(self, user: str, ef_search: int) -> Iterator[Any]:
        from memory_pg.sql import setup as sql_setup

        with self.store.engine.begin() as conn:
            conn.execute(sql_setup.set_tenant(user, ef_search))  # as the store does
            yield conn

    def sql_hybrid(self, user: str, query: str, vector: np.ndarray) -> list[Any]:
        """The search statement alone (what the store sends), with a precomputed vector."""
        from memory_pg.sql import search as sql_search

        stmt = sql_search.search_memories(
            user, analyse(query), vector, top_k=10, filters=sql_search.SearchFilters()
        )
        with self._tx(user, self.store.ef_search) as conn:
            return [r.id for r in conn.execute(stmt)]

    def vector_leg(self, user: str, vector: np.ndarray, strategy: str, k: int = 10) -> list[Any]:
        """The search's vector leg (same filters and order) under one index strategy.

        ``planner``: what PostgreSQL picks (the b-tree on user_id or the HNSW index
        with iterative scans). ``hnsw``: the HNSW index with the user filter applied
        during the iterative scan (the b-tree made unusable in this statement only).
        ``exact``: index scans off, so the user's rows come from a bitmap scan of the
        (user_id, ...) b-tree and are sorted by exact distance.
        """
        from sqlalchemy import bindparam, func, select, text

        from memory_pg.sql import search as sql_search
        from memory_pg.tables import memories as m

        conds = sql_search.filter_conditions(user, sql_search.SearchFilters())
        if strategy == "hnsw":
            conds[0] = func.concat(m.c.user_id, "") == user
        qvec = bindparam("qv", vector, type_=m.c.embedding.type)
        dist = m.c.embedding.cosine_distance(qvec)
        stmt = select(m.c.id).where(*conds).order_by(dist).limit(k)
        with self._tx(user, self.store.ef_search) as conn:
            if strategy == "exact":
                conn.execute(text("SET LOCAL enable_indexscan = off"))
            return [r.id for r in conn.execute(stmt)]

    def lexical_leg(self, user: str, query: str) -> list[Any]:
        """The search's full-text leg alone (same filters, BM25 and candidate count)."""
        from sqlalchemy import select

        from memory_pg._segment import term_queries
        from memory_pg.sql import lexical as sql_lexical
        from memory_pg.sql import search as sql_search

        conds = sql_search.filter_conditions(user, sql_search.SearchFilters())
        en_any, en_own, cjk_any, cjk_own = term_queries(query)
        leg, _ = sql_lexical.lexical_leg(conds, bool(en_any), bool(cjk_any), self.store.ranking)
        stmt = select(leg.c.id).order_by(leg.c.rank)
        words = {"lex_en_any": en_any, "lex_en_own": en_own}
        words.update(lex_cjk_any=cjk_any, lex_cjk_own=cjk_own)
        with self._tx(user, self.store.ef_search) as conn:
            return [r.id for r in conn.execute(stmt, words)]

    def explain_vector_leg(self, user: str, vector: np.ndarray) -> str:
        """Which index the planner uses for the vector leg (first plan lines)."""
        from sqlalchemy import bindparam, select

        from memory_pg.sql import search as sql_search
        from memory_pg.tables import memories as m

        conds = sql_search.filter_conditions(user, sql_search.SearchFilters())
        qvec = bindparam("qv", vector, type_=m.c.embedding.type)
        stmt = select(m.c.id).where(*conds).order_by(m.c.embedding.cosine_distance(qvec))
        compiled = stmt.limit(10).compile(self.store.engine)
        with self._tx(user, self.store.ef_search) as conn:
            params = dict(compiled.params)
            params["qv"] = "[" + ",".join(f"{x:.7g}" for x in vector.tolist()) + "]"
            plan = conn.exec_driver_sql("EXPLAIN " + str(compiled), params).all()
        lines = [re.sub(r"'\[[^']*\]'", "'<vector>'", r[0].strip()) for r in plan[:6]]
        return " | ".join(lines)

    def id_of(self, data: Dataset) -> Any:
        """A function mapping a returned id to the dataset row (via the text)."""
        from sqlalchemy import text

        by_text = {t: i for i, t in enumerate(data.texts)}
        with self.store.engine.connect() as conn:
            rows = conn.execute(text("SELECT id, text FROM memory_pg_memories")).all()
        ids = {r.id: by_text.get(r.text, -1) for r in rows}
        return lambda x: ids.get(x, -1)

    def disk_bytes(self) -> dict[str, int]:
        """pg_total_relation_size of memory-pg's tables (heap, TOAST and indexes)."""
        from sqlalchemy import text

        out = {}
        with self.store.engine.connect() as conn:
            for table in ("memory_pg_memories", "memory_pg_history"):
                out[table] = int(
                    conn.execute(
                        text("SELECT pg_total_relation_size(CAST(:t AS regclass))"), {"t": table}
                    ).scalar_one()
                )
            out["hnsw_index"] = int(
                conn.execute(
                    text(
                        "SELECT pg_relation_size('memory_pg_memories_embedding_hnsw_idx'::regclass)"
                    )
                ).scalar_one()
            )
        out["total"] = out["memory_pg_memories"] + out["memory_pg_history"]
        return out

    def memory_bytes(self) -> dict[str, int]:
        """PSS of the PostgreSQL server (when it is the embedded one)."""
        if self.server_pid is None:
            return {}
        return {"server_pss": process_tree_memory(self.server_pid)}


# ---------------------------------------------------------------------------------------
# ChromaDB, as the seed article uses it


class Chroma:
    """The seed article's design: one collection, cosine HNSW, ``where={"user_id": ...}``."""

    name = "chromadb"

    def __init__(self, folder: Path, embedder: Any) -> None:
        import chromadb
        from chromadb.config import Settings

        self.folder = folder
        self.embedder = embedder
        self.client = chromadb.PersistentClient(
            path=str(folder), settings=Settings(anonymized_telemetry=False)
        )
        self.collection: Any = None
        self.batch = int(getattr(self.client, "get_max_batch_size", lambda: 5000)())
        self.reset()

    def reset(self) -> None:
        """A fresh collection."""
        with contextlib.suppress(Exception):
            self.client.delete_collection("memories")
        self.collection = self.client.create_collection(
            "memories", metadata={"hnsw:space": "cosine"}, embedding_function=None
        )

    @staticmethod
    def _meta(data: Dataset, i: int) -> dict[str, Any]:
        return {"user_id": data.users[i], "memory_type": data.types[i]}

    def load_batched(self, data: Dataset, rows: np.ndarray, progress: Any = None) -> None:
        """collection.add in batches with precomputed vectors."""
        step = min(self.batch, 5000)
        for start in range(0, len(rows), step):
            ix = [int(i) for i in rows[start : start + step]]
            self.collection.add(
                ids=[str(i) for i in ix],
                embeddings=data.vectors[ix],
                documents=[data.texts[i] for i in ix],
                metadatas=[self._meta(data, i) for i in ix],
            )
            if progress:
                progress(len(ix))

    def add_one(self, data: Dataset, i: int) -> None:
        """collection.add of one memory, as the seed does, with its precomputed vector."""
        self.collection.add(
            ids=[str(i)],
            embeddings=data.vectors[i : i + 1],
            documents=[data.texts[i]],
            metadatas=[self._meta(data, i)],
        )

    def add_texts_e2e(self, user: str, texts: Sequence[str], types: Sequence[str]) -> None:
        """Embed then add, in the largest batches Chroma takes."""
        vectors = self.embedder.embed_documents(list(texts))
        step = min(self.batch, 5000)
        for start in range(0, len(texts), step):
            stop = start + step
            self.collection.add(
                ids=[uuid.uuid4().hex for _ in texts[start:stop]],
                embeddings=vectors[start:stop],
                documents=list(texts[start:stop]),
                metadatas=[{"user_id": user, "memory_type": t} for t in types[start:stop]],
            )

    def add_one_e2e(self, user: str, text: str, memory_type: str) -> None:
        """The seed's add_memory: embed one text, add it."""
        vec = self.embedder.embed_documents([text])
        self.collection.add(
            ids=[uuid.uuid4().hex],
            embeddings=vec,
            documents=[text],
            metadatas=[{"user_id": user, "memory_type": memory_type}],
        )

    def store_search(self, user: str, vector: np.ndarray, k: int = 10) -> list[int]:
        """collection.query with a precomputed vector and the user filter."""
        res = self.collection.query(query_embeddings=[vector], n_results=k, where={"user_id": user})
        return [int(x) for x in res["ids"][0]]

    def search_e2e(self, user: str, query: str) -> Any:
        """The seed's search: embed the query, then query the collection."""
        vec = self.embedder.embed_query(query)
        return self.collection.query(query_embeddings=[vec], n_results=10, where={"user_id": user})

    def disk_bytes(self) -> dict[str, int]:
        """Size of the persistent folder."""
        return {"total": dir_size(self.folder)}

    def memory_bytes(self) -> dict[str, int]:
        """Chroma runs in this process: its RSS (model and harness included)."""
        return {"client_rss": own_rss()}

    def close(self) -> None:
        """Let go of the client and its files."""
        with contextlib.suppress(Exception):
            self.client.clear_system_cache()
        shutil.rmtree(self.folder, ignore_errors=True)


# ---------------------------------------------------------------------------------------
# mem0


class Mem0:
    """mem0's open-source Memory over pgvector, no LLM inference (``infer=False``)."""

    name = "mem0"

    def __init__(
        self, conn: dict[str, Any], model_path: str, dims: int, folder: Path, server_pid: int | None
    ) -> None:
        # Read by mem0 at import time: no telemetry (posthog) from a benchmark.
        os.environ["MEM0_TELEMETRY"] = "False"
        os.environ.setdefault("MEM0_DIR", str(folder))
        from mem0 import Memory

        self.server_pid = server_pid
        from psycopg.conninfo import make_conninfo

        self.conninfo = make_conninfo(**{k: v for k, v in conn.items() if v not in (None, "")})
        self.collection = "mem0_bench"
        config = {
            "vector_store": {
                "provider": "pgvector",
                "config": {
                    "connection_string": self.conninfo,
                    "collection_name": self.collection,
                    "embedding_model_dims": dims,
                    "hnsw": True,  # mem0's default: an HNSW index over every user's rows
                },
            },
            "embedder": {
                "provider": "huggingface",
                "config": {"model": model_path, "embedding_dims": dims},
            },
            # Never called: every add passes infer=False, and search needs no LLM.
            # The base URL is a closed local port, so a stray call would fail loudly.
            "llm": {
                "provider": "openai",
                "config": {"api_key": "sk-unused", "openai_base_url": "http://127.0.0.1:9/v1"},
            },
            "history_db_path": str(folder / "history.db"),
        }
        folder.mkdir(parents=True, exist_ok=True)
        self.memory = Memory.from_config(config)
        self.store = self.memory.vector_store
        self.ids: dict[str, int] = {}
        self._tuned: dict[str, Any] = {}  # tuning -> a second store (store_search_tuned)

    def reset(self) -> None:
        """An empty collection."""
        self.store.delete_col()
        self.store.create_col()
        self.ids.clear()

    def _payload(self, data: Dataset, i: int) -> dict[str, Any]:
        return {
            "data": data.texts[i],
            "text_lemmatized": data.texts[i],
            "hash": uuid.uuid5(uuid.NAMESPACE_OID, data.texts[i]).hex,
            "user_id": data.users[i],
            "memory_type": data.types[i],
            "created_at": "2026-01-01T00:00:00+00:00",
        }

    def load_batched(self, data: Dataset, rows: np.ndarray, progress: Any = None) -> None:
        """The vector store's insert in batches, with precomputed vectors."""
        for start in range(0, len(rows), 1000):
            ix = [int(i) for i in rows[start : start + 1000]]
            ids = [str(uuid.uuid4()) for _ in ix]
            self.ids.update(zip(ids, ix, strict=True))
            self.store.insert(
                vectors=[data.vectors[i].tolist() for i in ix],
                payloads=[self._payload(data, i) for i in ix],
                ids=ids,
            )
            if progress:
                progress(len(ix))

    def add_one(self, data: Dataset, i: int) -> None:
        """The vector store's insert of one memory (precomputed vector)."""
        mid = str(uuid.uuid4())
        self.ids[mid] = i
        self.store.insert(
            vectors=[data.vectors[i].tolist()], payloads=[self._payload(data, i)], ids=[mid]
        )

    def add_one_e2e(self, user: str, text: str, memory_type: str) -> None:
        """Memory.add with infer=False: embeds the text, stores it, writes mem0's history."""
        self.memory.add(text, user_id=user, infer=False, metadata={"memory_type": memory_type})

    def store_search(self, user: str, vector: np.ndarray, k: int = 10) -> list[int]:
        """The vector store's search with a precomputed vector and the user filter."""
        res = self.store.search(
            query="", vectors=vector.tolist(), top_k=k, filters={"user_id": user}
        )
        return [self.ids.get(str(r.id), -1) for r in res]

    def search_e2e(self, user: str, query: str) -> Any:
        """Memory.search: embeds the query, searches the user's memories."""
        return self.memory.search(query, top_k=10, filters={"user_id": user})

    #: Server settings that make mem0's user-filtered query return a user's nearest
    #: rows, each on its own connections (mem0's store is unchanged): ``iterative``
    #: is pgvector 0.8's documented fix for filtered HNSW scans, ``exact`` leaves
    #: the index aside (a scan of the whole table: mem0 has no index on the user).
    TUNINGS: ClassVar[dict[str, str]] = {
        "iterative": "-c hnsw.iterative_scan=relaxed_order",
        "exact": "-c enable_indexscan=off",
    }

    def store_search_tuned(self, tuning: str, user: str, vector: np.ndarray) -> list[int]:
        """:meth:`store_search` through a second mem0 store whose connections carry
        :data:`TUNINGS` ``[tuning]``."""
        stores = self._tuned
        if tuning not in stores:
            from mem0.vector_stores.pgvector import PGVector
            from psycopg.conninfo import make_conninfo

            stores[tuning] = PGVector(
                dbname=None,
                collection_name=self.collection,
                embedding_model_dims=self.store.embedding_model_dims,
                user=None,
                password=None,
                host=None,
                port=None,
                diskann=False,
                hnsw=True,
                connection_string=make_conninfo(self.conninfo, options=self.TUNINGS[tuning]),
            )
        res = stores[tuning].search(
            query="", vectors=vector.tolist(), top_k=10, filters={"user_id": user}
        )
        return [self.ids.get(str(r.id), -1) for r in res]

    def close(self) -> None:
        """Close the connection pools of the tuned stores and of mem0's own."""
        for store in [*self._tuned.values(), self.store]:
            store.connection_pool.close()
        self._tuned.clear()

    def settle(self) -> None:
        """``VACUUM ANALYZE`` of mem0's table after a bulk load (as for memory-pg)."""
        import psycopg
        from psycopg import sql

        with psycopg.connect(self.conninfo, autocommit=True) as conn:
            conn.execute(sql.SQL("VACUUM ANALYZE {}").format(sql.Identifier(self.collection)))

    def disk_bytes(self) -> dict[str, int]:
        """pg_total_relation_size of mem0's table (heap, TOAST, HNSW and GIN indexes)."""
        import psycopg

        with psycopg.connect(self.conninfo) as conn:
            size = conn.execute(
                "SELECT pg_total_relation_size(%s::regclass)", (self.collection,)
            ).fetchone()
        return {"total": int(size[0]) if size else 0}

    def memory_bytes(self) -> dict[str, int]:
        """PSS of the PostgreSQL server (shared with memory-pg: same server)."""
        if self.server_pid is None:
            return {}
        return {"server_pss": process_tree_memory(self.server_pid)}


def percentiles(samples_s: Sequence[float]) -> dict[str, float]:
    """p50/p95/p99 and mean, in milliseconds."""
    arr = np.asarray(samples_s, dtype=np.float64) * 1000.0
    if arr.size == 0:
        return {}
    return {
        "p50_ms": round(float(np.percentile(arr, 50)), 3),
        "p95_ms": round(float(np.percentile(arr, 95)), 3),
        "p99_ms": round(float(np.percentile(arr, 99)), 3),
        "mean_ms": round(float(arr.mean()), 3),
        "n": int(arr.size),
    }


def timed(fn: Any, *args: Any) -> tuple[float, Any]:
    """Seconds one call takes, and its result."""
    t0 = time.perf_counter()
    out = fn(*args)
    return time.perf_counter() - t0, out
