"""How much of a text the embedding model reads: the vector leg's weight in a search."""

from __future__ import annotations

import os

import pytest

from memory_pg.embedding import get_embedder, readability

os.environ.setdefault("HF_HUB_OFFLINE", "1")


@pytest.fixture(scope="module")
def bundled() -> object:
    return get_embedder("all-MiniLM-L6-v2")


def test_the_bundled_model_reads_english_and_not_chinese(bundled: object) -> None:
    assert readability(bundled, "Which database did we choose?") == 1.0
    assert readability(bundled, "数据库选型") == 0.0
    # all-MiniLM-L6-v2 has tokens for some Han characters (李, 明) but no Chinese words.
    assert 0.0 < readability(bundled, "李明是做什么工作的？") < 0.5
    mixed = readability(bundled, "PostgreSQL 还是 MySQL？")
    assert 0.5 < mixed < 1.0


def test_an_embedder_that_does_not_say_reads_everything() -> None:
    class Plain:
        model_name = "plain"

    assert readability(Plain(), "数据库选型") == 1.0


def test_a_tokenizer_with_chinese_words_reads_chinese() -> None:
    from memory_pg.embedding import tokenizer_readability

    vocab = frozenset(
        "我们 决定 使用 数据库 下周 去 上海 开会 她 喜欢 喝咖啡 和 看 电影 ， 。".split()
    )

    class WordTokenizer:
        unk_token = "[UNK]"

        def tokenize(self, text: str) -> list[str]:
            import jieba

            return [w if w in vocab else "[UNK]" for w in jieba.cut(text) if w.strip()]

    assert tokenizer_readability(WordTokenizer(), "我们喜欢喝咖啡") == 1.0
