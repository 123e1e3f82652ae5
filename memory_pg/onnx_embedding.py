"""An ONNX Runtime embedder for the bundled model, exported locally from its weights.

The bundled all-MiniLM-L6-v2 is exported once from the weights in site-packages
(torch's exporter, no download) to a file in the user's cache folder, then run by
ONNX Runtime with the model's own fast tokenizer: the same vectors as the
sentence-transformers model (cosine 1.0 to six places), from a search's query in
about half the time, and without importing torch once the file exists.

Stored vectors come from the float32 export only: a dynamic int8 quantisation
measured at a cosine of 0.94-0.99 to them on short queries (per tensor; about
0.99 per channel), below the 0.99 a shared model name promises to a database
written by either backend. A search's query is another matter: it is embedded on
every search and only ranks the stored vectors, so by default
(``MEMORY_PG_QUERY_PRECISION=int8``) it runs on a per-channel int8 copy of the
export, quantised locally on first use (no download): about half the CPU per
query, with LoCoMo, zh_dev and bilingual recall within a question or two
(benchmarks/README.md, "Queries on an int8 copy"). When the copy cannot be built
or run, queries run on the float32 model, with a warning.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import logging
import os
import subprocess
import sys
import tempfile
import threading
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Literal

import numpy as np

from memory_pg.coalesce import Coalescer
from memory_pg.config import (
    BUNDLED_EMBEDDING_MODEL,
    parse_query_precision,
    query_precision_from_env,
)
from memory_pg.embedding import (
    KNOWN_DIMENSIONS,
    Embedder,
    QueryVectorCache,
    SentenceTransformerEmbedder,
    Vectors,
    bundled_model_path,
    model_vectors,
    readability,
    tokenizer_readability,
)
from memory_pg.errors import ConfigurationError, EmbeddingError

logger = logging.getLogger(__name__)

#: Bump when the exported graph changes, so old cached files are not reused.
_EXPORT_VERSION = 1
_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
#: torch's exporter keeps global state: one export at a time in a process.
_export_lock = threading.Lock()


def onnx_available() -> bool:
    """True when ONNX Runtime and the exporter's ``onnx`` package are installed.

    Looked up without importing them: choosing a backend costs a command that
    embeds nothing no start-up time.
    """
    return all(importlib.util.find_spec(name) is not None for name in ("onnxruntime", "onnx"))


def default_cache_dir() -> Path:
    """The per-user cache folder that holds exported models (``~/.cache/memory-pg/onnx``)."""
    import platformdirs

    return Path(platformdirs.user_cache_dir("memory-pg", appauthor=False)) / "onnx"


def _model_key(model_dir: Path) -> str:
    """A short name for one set of weights: a reinstalled or changed model gets a new file."""
    weights = model_dir / "model.safetensors"
    stat = weights.stat()
    digest = hashlib.sha256()
    for part in (
        str(_EXPORT_VERSION),
        str(model_dir.resolve()),
        str(stat.st_size),
        str(stat.st_mtime_ns),
        (model_dir / "config.json").read_text(encoding="utf-8"),
    ):
        digest.update(part.encode())
        digest.update(b"\0")
    return digest.hexdigest()[:16]


def _export(model_dir: Path, target: Path) -> None:
    """Write the model with mean pooling and L2 normalisation to ``target`` (ONNX)."""
    import torch
    from transformers import AutoModel

    class _Pooled(torch.nn.Module):
        def __init__(self, model: torch.nn.Module) -> None:
            super().__init__()
            self.model = model

        def forward(
            self,
            input_ids: torch.Tensor,
            attention_mask: torch.Tensor,
            token_type_ids: torch.Tensor,
        ) -> torch.Tensor:
            hidden = self.model(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            mean = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(mean, p=2.0, dim=1)

    model = _Pooled(AutoModel.from_pretrained(str(model_dir)).eval())
    sample = torch.ones((2, 8), dtype=torch.long)
    axes = {name: {0: "batch", 1: "tokens"} for name in _INPUTS}
    axes["sentence_embedding"] = {0: "batch"}
    # The TorchScript exporter (dynamo=False) needs no onnxscript; its deprecation
    # and tracer warnings say nothing a user can act on.
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            model,
            (sample, sample, torch.zeros_like(sample)),
            str(target),
            input_names=list(_INPUTS),
            output_names=["sentence_embedding"],
            dynamic_axes=axes,
            opset_version=17,
            dynamo=False,
        )


def _build_once(target: Path, build: Callable[[Path], None], failed: str, hint: str = "") -> Path:
    """``target``, made by ``build(temporary path)`` when it is not there yet.

    Built in a temporary file beside the target and renamed into place, so two
    processes building at once both end with a whole file (the last rename wins;
    both wrote the same model) and a crash leaves no half file behind; a file that
    is not a whole, valid model never takes the target's name. Threads of one
    process build it once. A failure is :class:`EmbeddingError`: ``failed``, the
    cause, then ``hint`` (what the user can do instead).
    """
    if target.is_file():
        return target
    with _export_lock:
        if target.is_file():
            return target
        logger.info("building %s (once)", target)
        tmp: str | None = None
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=target.stem + ".", suffix=".tmp")
            os.close(fd)
            build(Path(tmp))
            import onnx

            onnx.checker.check_model(tmp)
            os.replace(tmp, target)
        except Exception as exc:
            raise EmbeddingError(f"{failed}: {exc}{hint}") from exc
        finally:
            if tmp is not None and os.path.exists(tmp):
                os.unlink(tmp)
    return target


def ensure_onnx_model(model_dir: Path, cache_dir: Path | None = None) -> Path:
    """The exported ONNX file for the weights in ``model_dir``, built on first use
    (see :func:`_build_once`)."""
    folder = cache_dir or default_cache_dir()
    return _build_once(
        folder / f"{model_dir.name}-{_model_key(model_dir)}.onnx",
        lambda tmp: _export(model_dir, tmp),
        f"could not export {model_dir} to ONNX in {folder}",
        " (MEMORY_PG_EMBEDDING_BACKEND=torch runs the model without it)",
    )


#: Bump when the int8 copy's settings change, so old copies are not reused.
_QUANT_VERSION = 1


def quantized_model_path(model: Path) -> Path:
    """Where the int8 copy of the exported ``model`` lives (beside it)."""
    return model.with_name(f"{model.stem}-int8v{_QUANT_VERSION}.onnx")


#: Run in a child process: ONNX Runtime's quantiser logs through the root logger
#: (which installs a handler for good in an application that has not set up
#: logging), holds the whole model in memory while it works, and writes scratch
#: files; none of it then touches the caller's process.
_QUANTIZE = """
import sys
import onnx
from onnxruntime.quantization import QuantType, quantize_dynamic
# In memory: the quantiser's scratch files go to a private temporary folder, not
# to a fixed name beside the export that concurrent processes would share.
quantize_dynamic(onnx.load(sys.argv[1]), sys.argv[2], per_channel=True,
                 reduce_range=True, weight_type=QuantType.QInt8)
"""


def _quantize(model: Path, tmp: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _QUANTIZE, str(model), str(tmp)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if done.returncode != 0:
        raise EmbeddingError(done.stderr.strip()[-1000:] or f"exit {done.returncode}")


def ensure_quantized_model(model: Path) -> Path:
    """A per-channel int8 copy of the exported ``model`` beside it, built on first use.

    Dynamic quantisation of the weights of its matrix products (ONNX Runtime's
    ``quantize_dynamic``; no calibration data, no download), in a child process
    (a few seconds, once). ``reduce_range`` (7-bit weights) keeps it exact on x86
    CPUs without VNNI, where 8-bit products can saturate. Built as
    :func:`_build_once` builds.
    """
    return _build_once(
        quantized_model_path(model),
        lambda tmp: _quantize(model, tmp),
        f"could not quantise {model} to int8",
    )


class _Tokens:
    """The two members :func:`tokenizer_readability` reads, over a ``tokenizers`` tokenizer."""

    unk_token = "[UNK]"

    def __init__(self, tokenizer: object) -> None:
        self._tokenizer = tokenizer

    def tokenize(self, text: str) -> list[str]:
        encoding = self._tokenizer.encode(text, add_special_tokens=False)  # type: ignore[attr-defined]
        tokens: list[str] = encoding.tokens
        return tokens


class OnnxEmbedder:
    """An :class:`~memory_pg.embedding.Embedder` for the bundled model on ONNX Runtime.

    Gives the vectors of :class:`~memory_pg.embedding.SentenceTransformerEmbedder`
    under the same recorded model name, so a database written by one is searched
    by the other. The first use exports the model (a few seconds, needs torch);
    later processes load the cached file. Not for other models: those run on torch.

    Args:
        model_name: only the bundled model (any of its aliases) is accepted.
        cache_dir: where the exported file lives; default :func:`default_cache_dir`.
        batch_size: texts per forward pass when storing.
        threads: ONNX Runtime's threads per call; default the machine's cores, at
            most 4 (int8 queries run on one). Concurrent queries run in parallel
            (the runtime releases the GIL); concurrent small writes run as one batch.
        fall_back: when the model cannot be exported (no writable cache folder, an
            exporter that fails), run the torch model instead, with a warning,
            rather than raise :class:`~memory_pg.errors.EmbeddingError`.
        query_precision: ``int8`` (default: ``MEMORY_PG_QUERY_PRECISION``, else
            int8) embeds search queries on a locally quantised copy of the model,
            ``float32`` on the model itself. Stored texts always use float32.
    """

    def __init__(
        self,
        model_name: str = BUNDLED_EMBEDDING_MODEL,
        *,
        cache_dir: Path | None = None,
        batch_size: int = 64,
        threads: int | None = None,
        fall_back: bool = False,
        query_precision: str | None = None,
    ) -> None:
        precision = (
            query_precision_from_env()
            if query_precision is None
            else parse_query_precision(query_precision, "query_precision")
        )
        if model_name != BUNDLED_EMBEDDING_MODEL:
            raise ConfigurationError(
                f"the ONNX backend runs only the bundled {BUNDLED_EMBEDDING_MODEL}, "
                f"not {model_name!r}: use MEMORY_PG_EMBEDDING_BACKEND=torch"
            )
        self.model_name = model_name
        self.cache_dir = cache_dir
        self.batch_size = batch_size
        self.threads = threads or min(os.cpu_count() or 1, 4)
        self._session: object | None = None
        self._tokenizer: object | None = None
        self.fall_back = fall_back
        self.query_precision = precision
        self._torch: Embedder | None = None
        self._lock = threading.Lock()
        #: The int8 session for queries: None until the first query; False when
        #: queries do not use one (it could not be built or run, or the torch
        #: model stands in for the export).
        self._query_session: object | Literal[False] | None = None
        self._model_path: Path | None = None
        #: Vectors of recent queries (see :class:`~memory_pg.embedding.QueryVectorCache`).
        self.query_cache = QueryVectorCache()
        self._coalesced = Coalescer(self._embed_documents, batch_size)

    @property
    def dimension(self) -> int:
        """384: the bundled model's vector length, known without loading it."""
        return KNOWN_DIMENSIONS[self.model_name]

    def _instead(self) -> Embedder | None:
        """The torch model that stands in when the export failed and ``fall_back`` is set."""
        if self._tokenizer is None and self._torch is None:
            self._prepare()
        return self._torch

    def _prepare(self) -> object | None:
        """The tokenizer, with the float32 export on disk (built on first use); None
        when the torch model stands in. Loads no model: a process that only searches
        loads the int8 copy alone."""
        if self._tokenizer is not None:
            return self._tokenizer
        with self._lock:
            if self._torch is None and self._tokenizer is None:
                try:
                    import onnxruntime  # noqa: F401  (missing: the clear error below)
                    from tokenizers import Tokenizer
                except ImportError as exc:
                    raise ConfigurationError(
                        "the ONNX backend needs onnxruntime and onnx: "
                        "pip install onnxruntime onnx (or MEMORY_PG_EMBEDDING_BACKEND=torch)"
                    ) from exc
                model_dir = bundled_model_path()
                try:
                    path = ensure_onnx_model(model_dir, self.cache_dir)
                except EmbeddingError:
                    if not self.fall_back:
                        raise
                    logger.warning("running %s on torch instead", self.model_name, exc_info=True)
                    self._torch = SentenceTransformerEmbedder(self.model_name)
                    return None
                config = json.loads((model_dir / "sentence_bert_config.json").read_text())
                tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
                # The file pads and truncates to 128; sentence-transformers reads
                # up to max_seq_length (256) and pads to the longest in a batch.
                tokenizer.enable_truncation(int(config["max_seq_length"]))
                tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
                self._model_path = path
                self._tokenizer = tokenizer
        return self._tokenizer

    def _load(self) -> tuple[object, object]:
        """The float32 session (loaded on first use) and the tokenizer."""
        tokenizer = self._prepare()
        assert tokenizer is not None and self._model_path is not None
        if self._session is None:
            with self._lock:
                if self._session is None:
                    try:
                        self._session = self._session_for(self._model_path)
                    except Exception as exc:
                        raise EmbeddingError(
                            f"could not load ONNX model {self._model_path}: {exc}"
                        ) from exc
                    logger.info("loaded embedding model %s on ONNX Runtime", self.model_name)
        return self._session, tokenizer

    def _session_for(self, path: Path, threads: int | None = None) -> object:
        import onnxruntime

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads or self.threads
        options.inter_op_num_threads = 1
        # Spinning threads burn cores that PostgreSQL and other callers need.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        return onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])

    def _query_model(self) -> object | None:
        """The int8 session for queries, built on first use; None for float32."""
        if self.query_precision != "int8" or self._query_session is False:
            return None
        if self._query_session is None:
            if self._prepare() is None:
                self._query_session = False  # the torch model stands in
                return None
            with self._lock:
                if self._query_session is None and self._model_path is not None:
                    try:
                        # One thread: a query's int8 graph is too small to gain
                        # from a second (1.8 against 2.0-2.5 ms wall, less CPU).
                        self._query_session = self._session_for(
                            ensure_quantized_model(self._model_path), threads=1
                        )
                    except Exception:
                        logger.warning(
                            "embedding queries with the float32 model: no int8 copy",
                            exc_info=True,
                        )
                        self._query_session = False
        return self._query_session or None

    def _run(self, texts: Sequence[str], session: object | None = None) -> Vectors:
        instead = self._instead()
        if instead is not None:
            return instead.embed_documents(texts)
        if session is None:
            session, tokenizer = self._load()
        else:
            tokenizer = self._prepare()
        encodings = tokenizer.encode_batch(list(texts))  # type: ignore[attr-defined]
        feed = {
            "input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
            "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
            "token_type_ids": np.array([e.type_ids for e in encodings], dtype=np.int64),
        }
        return model_vectors(
            self.model_name,
            lambda: session.run(None, feed)[0],  # type: ignore[attr-defined]
        )

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        """Vectors for texts to store, one row per text, L2-normalised.

        Calls from several threads that arrive while the model runs are run together,
        as one batch, when it is free (see :class:`~memory_pg.coalesce.Coalescer`).
        """
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return self._coalesced(texts)

    def _embed_documents(self, texts: Sequence[str]) -> Vectors:
        # Batches of similar length pad little (as sentence-transformers does); a
        # text under about half the length of its batch's longest (less 64 characters,
        # so short texts stay together) starts the next batch: short writes run
        # together are not padded to one long one.
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        chunk: list[int] = []
        for i in order:
            if chunk and (
                len(chunk) == self.batch_size or 2 * len(texts[i]) < len(texts[chunk[0]]) - 64
            ):
                out[chunk] = self._run([texts[j] for j in chunk])
                chunk = []
            chunk.append(i)
        out[chunk] = self._run([texts[j] for j in chunk])
        return out

    def embed_query(self, text: str) -> Vectors:
        """The vector for one search query (1-d), from the cache of recent queries if there."""
        return self.query_cache.get(text, lambda: self._embed_query(text))

    def _embed_query(self, text: str) -> Vectors:
        session = self._query_model()
        if session is not None:
            try:
                vector: Vectors = self._run([text], session)[0]
                return vector
            except Exception:
                # A copy that loads but cannot run (an ONNX Runtime that lacks a
                # kernel, a damaged file): the search goes on with the float32 model.
                logger.warning(
                    "embedding queries with the float32 model: the int8 copy failed",
                    exc_info=True,
                )
                self._query_session = False
        exact: Vectors = self._run([text])[0]
        return exact

    def readability(self, text: str) -> float:
        """Share of ``text``'s tokens this model reads (see :func:`tokenizer_readability`)."""
        instead = self._instead()
        if instead is not None:
            return readability(instead, text)
        return tokenizer_readability(_Tokens(self._prepare()), text)


__all__ = [
    "OnnxEmbedder",
    "default_cache_dir",
    "ensure_onnx_model",
    "ensure_quantized_model",
    "onnx_available",
    "quantized_model_path",
]
