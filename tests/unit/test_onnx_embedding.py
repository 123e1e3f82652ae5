"""The bundled model on ONNX Runtime: the torch model's vectors; recent queries cached."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from memory_pg.coalesce import Coalescer
from memory_pg.config import (
    BUNDLED_EMBEDDING_MODEL,
    embedding_backend_from_env,
    query_precision_from_env,
)
from memory_pg.embedding import (
    QueryVectorCache,
    SentenceTransformerEmbedder,
    bundled_model_path,
    get_embedder,
    readability,
)
from memory_pg.errors import ConfigurationError, EmbeddingError, InvalidArgument
from memory_pg.onnx_embedding import OnnxEmbedder, ensure_onnx_model, quantized_model_path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

TEXTS = [
    "hi",
    "",
    "I moved to Berlin last spring and started a new job at a bakery.",
    "Caroline: I went to a LGBTQ support group yesterday and it was so powerful.",
    "What did Melanie paint recently?",
    "李明喜欢吃饺子",
    "PostgreSQL 还是 MySQL？",
    "emoji 🎉 and accents: ünïcödé, naïve café",
    # Longer than the model's 256 tokens: both must cut it at the same place.
    "the quick brown fox jumps over the lazy dog " * 60,
]


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An export built by two threads at once into an empty folder."""
    folder = tmp_path_factory.mktemp("onnx")
    paths: list[Path] = []
    errors: list[BaseException] = []

    def build() -> None:
        try:
            paths.append(ensure_onnx_model(bundled_model_path(), folder))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=build) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert len(set(paths)) == 1
    return folder


@pytest.fixture(scope="module")
def onnx(cache_dir: Path) -> OnnxEmbedder:
    """The float32 model for queries too: the stored vectors' own."""
    return OnnxEmbedder(cache_dir=cache_dir, query_precision="float32")


@pytest.fixture(scope="module")
def torch_model() -> SentenceTransformerEmbedder:
    return SentenceTransformerEmbedder(BUNDLED_EMBEDDING_MODEL)


def test_a_concurrent_build_leaves_one_whole_file(cache_dir: Path, onnx: OnnxEmbedder) -> None:
    exports = [p for p in cache_dir.iterdir() if "-int8" not in p.stem]
    assert [p.suffix for p in exports] == [".onnx"]
    # A second embedder reuses the file rather than exporting again.
    (built,) = exports
    before = built.stat().st_mtime_ns
    again = OnnxEmbedder(cache_dir=cache_dir)
    assert again.embed_documents(["reused"]).shape == (1, 384)
    assert built.stat().st_mtime_ns == before


def test_onnx_vectors_match_the_torch_model(
    onnx: OnnxEmbedder, torch_model: SentenceTransformerEmbedder
) -> None:
    expected = torch_model.embed_documents(TEXTS)
    stored = onnx.embed_documents(TEXTS)
    assert stored.shape == expected.shape == (len(TEXTS), 384)
    assert stored.dtype == np.float32
    cosine = (stored * expected).sum(axis=1)
    assert cosine.min() >= 0.999, dict(zip(TEXTS, cosine.round(4).tolist(), strict=True))
    for text in TEXTS:
        query = onnx.embed_query(text)
        assert query.shape == (384,)
        assert float(query @ torch_model.embed_query(text)) >= 0.999
    assert np.allclose(np.linalg.norm(stored, axis=1), 1.0, atol=1e-5)


def test_writers_in_many_threads_each_get_their_own_vectors(
    onnx: OnnxEmbedder, torch_model: SentenceTransformerEmbedder
) -> None:
    """Calls that arrive while the model runs are embedded together; each caller gets
    its own rows, the same as alone (texts of very different lengths among them)."""
    calls = [[text] for text in TEXTS] + [TEXTS[2:5], [TEXTS[-1], "short"]] * 3
    expected = [torch_model.embed_documents(texts) for texts in calls]
    got: dict[int, np.ndarray] = {}
    start = threading.Barrier(len(calls))

    def write(i: int) -> None:
        start.wait()
        got[i] = onnx.embed_documents(calls[i])

    threads = [threading.Thread(target=write, args=(i,)) for i in range(len(calls))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for i, texts in enumerate(calls):
        assert got[i].shape == (len(texts), 384)
        assert (got[i] * expected[i]).sum(axis=1).min() >= 0.999, texts


def _held_run(log: list[list[str]], hold: threading.Event) -> Callable[..., np.ndarray]:
    def run(texts: list[str]) -> np.ndarray:
        log.append(list(texts))
        if len(log) == 1:
            hold.wait(10)
        if "bad" in texts:
            raise EmbeddingError("the model failed")
        return np.array([[float(len(t))] for t in texts], dtype=np.float32)

    return run


def _queue_behind_a_running_call(limit: int, calls: list[list[str]]) -> dict[str, object]:
    """``calls[0]`` runs (and is held); the rest queue behind it; then all finish."""
    log: list[list[str]] = []
    hold = threading.Event()
    coalescer = Coalescer(_held_run(log, hold), limit)
    results: dict[str, object] = {}

    def call(texts: list[str]) -> None:
        try:
            results[texts[0]] = coalescer(texts)[:, 0].tolist()
        except EmbeddingError as exc:
            results[texts[0]] = exc

    first = threading.Thread(target=call, args=(calls[0],))
    first.start()
    while not log:
        threading.Event().wait(0.005)
    rest = [threading.Thread(target=call, args=(texts,)) for texts in calls[1:]]
    for thread in rest:
        thread.start()
    while coalescer.waiting < len(rest):
        threading.Event().wait(0.005)
    hold.set()
    for thread in [first, *rest]:
        thread.join(10)
    results["passes"] = log
    return results


def test_calls_queued_behind_a_running_one_run_as_one_batch() -> None:
    results = _queue_behind_a_running_call(
        4,
        [["first"], ["a"], ["bb", "ccc"], ["dddd"], ["eeeee"]],
    )
    # The first ran alone at once; the queued ran together, as many as fit in a batch.
    assert results.pop("passes") == [["first"], ["a", "bb", "ccc", "dddd"], ["eeeee"]]
    assert results == {
        "first": [5.0],
        "a": [1.0],
        "bb": [2.0, 3.0],
        "dddd": [4.0],
        "eeeee": [5.0],
    }


def test_a_failed_batch_fails_only_the_caller_whose_texts_broke_it() -> None:
    results = _queue_behind_a_running_call(2, [["first"], ["bad"], ["x"], ["yy"]])
    # The batch failed, so its calls ran again one by one: each got its own outcome.
    assert results.pop("passes") == [["first"], ["bad", "x"], ["bad"], ["x"], ["yy"]]
    assert isinstance(results["bad"], EmbeddingError)
    assert results == {"first": [5.0], "bad": results["bad"], "x": [1.0], "yy": [2.0]}


def test_a_large_call_runs_at_once_beside_the_others() -> None:
    """An import of many texts makes no small write wait for it, and waits for none."""
    log: list[list[str]] = []
    hold = threading.Event()
    coalescer = Coalescer(_held_run(log, hold), 2)
    first = threading.Thread(target=coalescer, args=(["first"],))
    first.start()
    while not log:
        threading.Event().wait(0.005)
    big = coalescer(["a", "bb", "ccc"])  # over the limit: runs now, though one is held
    assert big[:, 0].tolist() == [1.0, 2.0, 3.0]
    hold.set()
    first.join(10)
    assert log == [["first"], ["a", "bb", "ccc"]]


def test_a_call_from_inside_the_model_run_does_not_wait_for_itself() -> None:
    calls: list[list[str]] = []

    def run(texts: list[str]) -> np.ndarray:
        calls.append(list(texts))
        if texts == ["outer"]:
            coalescer(["inner"])
        return np.ones((len(texts), 1), dtype=np.float32)

    coalescer = Coalescer(run, 4)
    done = threading.Thread(target=coalescer, args=(["outer"],))
    done.start()
    done.join(10)
    assert not done.is_alive() and calls == [["outer"], ["inner"]]


def test_onnx_reads_what_the_torch_model_reads(
    onnx: OnnxEmbedder, torch_model: SentenceTransformerEmbedder
) -> None:
    for text in TEXTS:
        assert readability(onnx, text) == pytest.approx(readability(torch_model, text))
    assert readability(onnx, "数据库选型") == 0.0


def test_the_onnx_backend_runs_only_the_bundled_model() -> None:
    with pytest.raises(ConfigurationError, match="MEMORY_PG_EMBEDDING_BACKEND=torch"):
        get_embedder("BAAI/bge-small-zh-v1.5", backend="onnx")
    with pytest.raises(ConfigurationError, match="unknown embedding backend"):
        get_embedder("all-MiniLM-L6-v2", backend="tensorflow")


def test_the_backend_is_chosen_by_setting() -> None:
    assert embedding_backend_from_env({}) == "auto"
    assert embedding_backend_from_env({"MEMORY_PG_EMBEDDING_BACKEND": " ONNX "}) == "onnx"
    assert isinstance(get_embedder("bundled", backend="torch"), SentenceTransformerEmbedder)
    assert isinstance(get_embedder("bundled", backend="onnx"), OnnxEmbedder)
    # auto: ONNX for the bundled model (onnxruntime is installed here).
    assert isinstance(get_embedder("all-MiniLM-L6-v2", backend="auto"), OnnxEmbedder)


def test_a_repeated_query_is_embedded_once() -> None:
    calls: list[str] = []
    cache = QueryVectorCache(size=2)

    def compute(text: str) -> np.ndarray:
        calls.append(text)
        return np.full(3, float(len(calls)), dtype=np.float32)

    first = cache.get("a", lambda: compute("a"))
    first[:] = -1.0  # a caller changing its copy changes no one else's
    assert cache.get("a", lambda: compute("a")).tolist() == [1.0, 1.0, 1.0]
    cache.get("b", lambda: compute("b"))
    cache.get("a", lambda: compute("a"))  # "a" is now the most recent
    cache.get("c", lambda: compute("c"))  # drops "b", the least recently used
    cache.get("a", lambda: compute("a"))
    cache.get("b", lambda: compute("b"))
    assert calls == ["a", "b", "c", "b"]


def test_an_export_that_cannot_be_written_runs_on_torch_when_allowed(
    tmp_path: Path, torch_model: SentenceTransformerEmbedder
) -> None:
    # A cache folder that cannot be made: under a plain file.
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    with pytest.raises(EmbeddingError, match="MEMORY_PG_EMBEDDING_BACKEND=torch"):
        OnnxEmbedder(cache_dir=blocked / "onnx").embed_query("where do I live?")
    stand_in = OnnxEmbedder(cache_dir=blocked / "onnx", fall_back=True)
    query = stand_in.embed_query("where do I live?")
    assert float(query @ torch_model.embed_query("where do I live?")) >= 0.999
    assert readability(stand_in, "数据库选型") == 0.0
    assert not (blocked / "onnx").exists()


def test_with_the_model_exported_a_process_embeds_without_torch(cache_dir: Path) -> None:
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from memory_pg.onnx_embedding import OnnxEmbedder\n"
        f"e = OnnxEmbedder(cache_dir=Path({str(cache_dir)!r}))\n"
        "assert e.embed_query('where do I live?').shape == (384,)\n"
        "print(sorted(m for m in ('torch', 'transformers', 'sentence_transformers')"
        " if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]"


def _export_alone(cache_dir: Path, folder: Path) -> Path:
    """A cache folder holding only a copy of the float32 export."""
    folder.mkdir()
    (export,) = (p for p in cache_dir.iterdir() if "-int8" not in p.stem)
    (folder / export.name).write_bytes(export.read_bytes())
    return folder / export.name


def test_queries_run_on_a_local_int8_copy_close_to_the_stored_vectors(
    tmp_path: Path, cache_dir: Path, onnx: OnnxEmbedder
) -> None:
    export = _export_alone(cache_dir, tmp_path / "onnx")
    int8 = OnnxEmbedder(cache_dir=export.parent)
    assert int8.query_precision == "int8"
    queries = np.stack([int8.embed_query(text) for text in TEXTS])
    exact = np.stack([onnx.embed_query(text) for text in TEXTS])
    cosine = (queries * exact).sum(axis=1)
    # Close to the float32 query (a search ranks by it), and not the same vector.
    assert cosine.min() >= 0.97, dict(zip(TEXTS, cosine.round(4).tolist(), strict=True))
    assert cosine.min() < 0.9999
    assert np.allclose(np.linalg.norm(queries, axis=1), 1.0, atol=1e-5)
    # Stored texts stay float32: the stored vectors' model is unchanged.
    assert np.array_equal(int8.embed_documents(TEXTS), onnx.embed_documents(TEXTS))
    copy = quantized_model_path(export)
    assert copy.is_file() and copy.stat().st_size < export.stat().st_size / 2
    # Nothing else was left in the folder (no scratch file beside the export).
    assert sorted(p.name for p in export.parent.iterdir()) == sorted([export.name, copy.name])
    # A second embedder reuses the copy.
    before = copy.stat().st_mtime_ns
    assert OnnxEmbedder(cache_dir=export.parent).embed_query("reused").shape == (384,)
    assert copy.stat().st_mtime_ns == before


def test_the_int8_copy_is_built_quietly_in_an_application_without_logging(
    tmp_path: Path, cache_dir: Path
) -> None:
    export = _export_alone(cache_dir, tmp_path / "onnx")
    script = (
        "import logging\n"
        "from pathlib import Path\n"
        "from memory_pg.onnx_embedding import OnnxEmbedder\n"
        f"e = OnnxEmbedder(cache_dir=Path({str(export.parent)!r}))\n"
        "assert e.embed_query('where do I live?').shape == (384,)\n"
        "print(len(logging.getLogger().handlers))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "MEMORY_PG_QUERY_PRECISION"}
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env=env,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert quantized_model_path(export).is_file()
    # The application's logging is as it left it (no handler installed for it),
    # and ONNX Runtime printed no advice.
    assert done.stdout.strip() == "0"
    assert "quantiz" not in done.stderr.lower(), done.stderr[-2000:]


def _taken_by_a_folder(copy: Path) -> None:
    copy.mkdir()


def _another_model(copy: Path) -> None:
    import onnx as onnx_format
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])
    graph = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "other", [x], [y])
    onnx_format.save(helper.make_model(graph), str(copy))


@pytest.mark.parametrize(
    ("spoil", "said"),
    [
        # The copy's name is taken by a folder: it cannot be written.
        (_taken_by_a_folder, "embedding queries with the float32 model: no int8 copy"),
        # A whole, loadable model under the copy's name that takes other inputs.
        (_another_model, "embedding queries with the float32 model: the int8 copy failed"),
    ],
    ids=["cannot-be-built", "cannot-run"],
)
def test_without_a_working_int8_copy_queries_run_on_the_float32_model(
    tmp_path: Path,
    cache_dir: Path,
    onnx: OnnxEmbedder,
    caplog: pytest.LogCaptureFixture,
    spoil: Callable[[Path], None],
    said: str,
) -> None:
    export = _export_alone(cache_dir, tmp_path / "onnx")
    spoil(quantized_model_path(export))
    embedder = OnnxEmbedder(cache_dir=export.parent)
    with caplog.at_level(logging.WARNING, logger="memory_pg.onnx_embedding"):
        query = embedder.embed_query("where do I live?")
        again = embedder.embed_query("where did I move?")
    assert np.array_equal(query, onnx.embed_query("where do I live?"))
    assert np.array_equal(again, onnx.embed_query("where did I move?"))
    # Said once, not on every query.
    assert [r.getMessage() for r in caplog.records] == [said]
    assert list(export.parent.glob("*.tmp")) == []


def test_the_query_precision_is_chosen_by_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    assert query_precision_from_env({}) == "int8"
    assert query_precision_from_env({"MEMORY_PG_QUERY_PRECISION": " Float32 "}) == "float32"
    assert query_precision_from_env({"MEMORY_PG_QUERY_PRECISION": "fp32"}) == "float32"
    with pytest.raises(InvalidArgument, match="MEMORY_PG_QUERY_PRECISION"):
        query_precision_from_env({"MEMORY_PG_QUERY_PRECISION": "int4"})
    assert OnnxEmbedder(query_precision="FP32").query_precision == "float32"
    with pytest.raises(InvalidArgument, match="query_precision must be int8 or float32"):
        OnnxEmbedder(query_precision="fp16")
    # The shared embedder follows the setting.
    monkeypatch.setenv("MEMORY_PG_QUERY_PRECISION", "float32")
    assert get_embedder("bundled", backend="onnx").query_precision == "float32"  # type: ignore[attr-defined]
    monkeypatch.setenv("MEMORY_PG_QUERY_PRECISION", "int8")
    assert get_embedder("bundled", backend="onnx").query_precision == "int8"  # type: ignore[attr-defined]
    monkeypatch.setenv("MEMORY_PG_QUERY_PRECISION", "half")
    with pytest.raises(InvalidArgument, match="MEMORY_PG_QUERY_PRECISION"):
        get_embedder("bundled", backend="onnx")
