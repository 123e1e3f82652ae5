"""What the user said that is not compacted yet, picked for a recall (pure, no database)."""

from __future__ import annotations

from memory_pg.retrieval import format_memories, said_lately


def user(text: str) -> dict[str, str]:
    return {"role": "user", "content": text}


def picked(turns: list[dict[str, str]], query: str, skip: tuple[str, ...] = ()) -> list[str]:
    return [h["text"] for h in said_lately(turns, query, limit=5, skip=skip)]


def test_a_fact_the_user_said_is_recalled_by_a_word_it_shares():
    turns = [user("我们决定使用 PostgreSQL 作为数据库"), user("I do yoga on Sundays")]
    assert picked(turns, "数据库选型？") == ["我们决定使用 PostgreSQL 作为数据库"]
    assert picked(turns, "What did I do on Sunday?") == ["I do yoga on Sundays"]


def test_what_a_compaction_would_drop_is_not_recalled():
    turns = [
        {"role": "assistant", "content": "我建议使用 MongoDB 作为数据库"},
        user("数据库选哪个好？"),  # a question
        user("要不要换成 MongoDB 数据库呢"),  # a hypothetical
        user("好的，谢谢"),
    ]
    assert picked(turns, "数据库选型") == []


def test_words_that_only_ask_match_nothing():
    turns = [user("I live in Hangzhou"), user("What I do at work is boring")]
    assert picked(turns, "What do I do?") == []
    assert picked(turns, "Where do I live?") == ["I live in Hangzhou"]


def test_turns_already_in_the_prompt_are_skipped_and_repeats_listed_once():
    turns = [user("We use Redis as the cache"), user("We use Redis as the cache")]
    assert picked(turns, "which cache") == ["We use Redis as the cache"]
    assert picked(turns, "which cache", skip=("We use Redis as the cache",)) == []


def test_most_shared_words_first_then_newest_and_at_most_the_limit():
    turns = [user("The cache is Redis"), user("The Redis cache runs on host B"), user("Redis 7")]
    assert picked(turns, "Redis cache host") == [
        "The Redis cache runs on host B",
        "The cache is Redis",
        "Redis 7",
    ]
    assert len(said_lately(turns, "Redis", limit=2)) == 2


def test_picked_turns_read_as_dialogue_lines_after_the_memories():
    hits = said_lately([user("We use Redis as the cache")], "cache", limit=5)
    assert format_memories(hits, start=3) == "3. [对话 dialogue] We use Redis as the cache"
