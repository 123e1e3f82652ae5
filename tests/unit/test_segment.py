"""Segmentation: Chinese is cut into words so PostgreSQL full-text search can index it."""

from memory_pg._segment import query_terms, segment


def test_chinese_is_cut_into_words_and_latin_words_are_kept():
    seg = segment("我们决定使用 PostgreSQL 作为数据库")
    assert "数据库" in seg.cjk
    assert "postgresql" in seg.words
    assert "的" not in seg.cjk


def test_query_and_document_meet_on_shared_words():
    doc = set(segment("使用 PostgreSQL 作为数据库").cjk)
    query = set(segment("数据库选型").cjk)
    assert "数据库" in doc & query


def test_full_width_text_is_folded():
    assert segment("ＰｏｓｔｇｒｅＳＱＬ１６").words == ("postgresql16",)


def test_query_terms_escape_tsquery_syntax():
    words, cjk = query_terms("it's a & b | !c 数据库")
    assert "'it''s'" in words
    assert "&" not in words.replace(" | ", "")
    assert cjk.startswith("'")


def test_empty_and_symbol_only_text_yield_no_terms():
    assert query_terms("!!! ???") == ("", "")
