"""Compaction: the offline extractor, JSON repair, and the compactor over a stand-in LLM."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from memory_pg._facts import non_fact
from memory_pg._json_repair import parse_llm_json
from memory_pg.compaction import (
    AsyncMemoryCompactor,
    CompactedMemory,
    MemoryCompactor,
    build_prompt,
    result_from_reply,
    to_memories,
)
from memory_pg.config import LLMSettings
from memory_pg.errors import LLMError, LLMResponseUnparseable
from memory_pg.llm import AsyncOpenAICompatibleLLM, OpenAICompatibleLLM
from tests.fake_openai import (
    FakeOpenAI,
    error,
    fake_openai_fixture,  # noqa: F401
    reply,
)

SEED_ZH = [
    "我在做跨境电商，主要卖家居用品",
    "我们决定使用 PostgreSQL 作为数据库",
    "下周要完成支付模块",
]
SEED_EN = [
    "I run a cross-border e-commerce shop selling home goods.",
    "We decided to use PostgreSQL as our database.",
    "Next week we need to finish the payment module.",
]
GOOD_REPLY = {
    "user_profile": ["用户在做跨境电商，主要卖家居用品"],
    "project_status": [],
    "key_decisions": [{"decision": "使用 PostgreSQL 作为数据库", "topic": "database"}],
    "todos": ["下周完成支付模块"],
}


def _types(memories: list[CompactedMemory]) -> list[str]:
    return [m.memory_type for m in memories]


# --- offline extractor -------------------------------------------------------------------


def test_offline_seed_scenario_in_chinese() -> None:
    result = MemoryCompactor().compact(SEED_ZH)

    assert result["user_profile"] == ["我在做跨境电商，主要卖家居用品"]
    assert result["key_decisions"] == [
        {"decision": "我们决定使用 PostgreSQL 作为数据库", "topic": "database"}
    ]
    assert result["todos"] == ["下周要完成支付模块"]
    assert result["project_status"] == []
    assert "uncompacted" not in result


def test_offline_seed_scenario_in_english() -> None:
    result = MemoryCompactor().compact(SEED_EN)

    assert result["user_profile"] == ["I run a cross-border e-commerce shop selling home goods"]
    assert result["key_decisions"] == [
        {"decision": "We decided to use PostgreSQL as our database", "topic": "database"}
    ]
    assert result["todos"] == ["Next week we need to finish the payment module"]


@pytest.mark.parametrize(
    ("dialogue", "current"),
    [
        (
            ["我们原来用 MySQL 作为数据库", "后来改用 PostgreSQL 了，因为要用 pgvector"],
            "PostgreSQL",
        ),
        (["数据库先用 MongoDB", "现在换成 Postgres"], "Postgres"),
        (["We use MySQL for the database.", "Last month we switched to Postgres."], "Postgres"),
        (["We'll use Heroku for hosting", "we're moving to AWS"], "AWS"),
    ],
)
def test_a_later_switch_supersedes_the_earlier_decision_on_the_same_topic(
    dialogue: list[str], current: str
) -> None:
    decisions = MemoryCompactor().compact(dialogue)["key_decisions"]

    assert len(decisions) == 1
    assert current in decisions[0]["decision"]


def test_decisions_are_listed_in_the_order_they_were_last_made() -> None:
    decisions = MemoryCompactor().compact(
        ["我们用 MySQL 作为数据库", "前端选用 Vue", "改用 PostgreSQL"]
    )["key_decisions"]
    assert [d["topic"] for d in decisions] == ["frontend", "database"]
    assert "PostgreSQL" in decisions[1]["decision"]


def test_a_reason_clause_stays_with_its_decision() -> None:
    [decision] = MemoryCompactor().compact(["后来改用 PostgreSQL 了，因为要用 pgvector"])[
        "key_decisions"
    ]
    assert decision == {
        "decision": "后来改用 PostgreSQL 了，因为要用 pgvector",
        "topic": "database",
    }


@pytest.mark.parametrize(
    ("text", "topic"),
    [
        ("我们用 Redis 做缓存", "cache"),
        ("支付决定接入 Stripe", "payment"),
        ("前端选用 Vue", "frontend"),
        ("Let's go with Go for the backend", "language"),
        ("We chose FastAPI", "framework"),
        ("决定用腾讯文档做协作工具", "协作工具"),
        ("决定用飞书做沟通工具", "chat"),  # a product of a known kind names the kind
        ("We chose Zustand for state management", "state_management"),
    ],
)
def test_decision_topics(text: str, topic: str) -> None:
    [decision] = MemoryCompactor().compact([text])["key_decisions"]
    assert decision["topic"] == topic


def test_offline_mixed_dialogue_sorts_each_clause() -> None:
    result = MemoryCompactor().compact(
        [
            "user: 我是独立开发者，我们公司做 SaaS",
            "用户：项目目前进度 60%，登录模块已经完成了，下周要上线",
            "user: We're currently building the checkout flow. Remember to rotate the API "
            "keys tomorrow.",
            "别忘了明天给客户发报价",
        ]
    )

    assert result["user_profile"] == ["我是独立开发者", "我们公司做 SaaS"]
    assert result["project_status"] == [
        "项目目前进度 60%",
        "登录模块已经完成了",
        "We're currently building the checkout flow",
    ]
    assert result["todos"] == [
        "下周要上线",
        "Remember to rotate the API keys tomorrow",
        "别忘了明天给客户发报价",
    ]


def test_assistant_turns_give_no_facts_about_the_user() -> None:
    result = MemoryCompactor().compact(
        [
            "assistant: I'm an AI assistant and I work for you. You should use MySQL.",
            "助手：我是你的助手，我在帮你整理，我们决定用 MongoDB 吧",
            {"role": "assistant", "content": "I am based in Paris and I run on GPUs"},
            {"role": "user", "content": "我叫小王，我在杭州"},
        ]
    )

    assert result["user_profile"] == ["我叫小王", "我在杭州"]
    assert result["key_decisions"] == []
    assert result["todos"] == []


def test_common_words_are_not_todos() -> None:
    result = MemoryCompactor().compact(["主要卖家居用品", "这个很重要"])
    assert result["todos"] == []


def test_offline_memories_are_ready_for_the_store() -> None:
    memories = MemoryCompactor().compact_to_memories(SEED_ZH)

    assert _types(memories) == ["user_profile", "key_decision", "todo"]
    decision = memories[1]
    assert decision.topic == "database"
    assert decision.metadata == {"compaction": "offline"}
    assert all(0 < m.importance <= 1 for m in memories)
    assert memories[0].topic is None


# --- JSON repair ---------------------------------------------------------------------------

REPAIRS: list[tuple[str, dict[str, Any]]] = [
    ('```json\n{"todos": ["上线"]}\n```', {"todos": ["上线"]}),
    ('```\n{"a": 1}\n```', {"a": 1}),
    ('```JSON5\n{"a": 1,}\n```', {"a": 1}),
    ('好的，以下是提取结果：\n```json\n{"todos": []}\n```\n希望有帮助！', {"todos": []}),
    ('Sure! Here is the JSON:\n{"a": ["x"]}\nLet me know if you need more.', {"a": ["x"]}),
    (
        "{“user_profile”: [“我在做跨境电商”], “todos”: []}",
        {"user_profile": ["我在做跨境电商"], "todos": []},
    ),
    ("{‘a’: ‘b’}", {"a": "b"}),
    ("{「topic」：「database」}", {"topic": "database"}),
    ('｛"a"：1，"b"：［2］｝', {"a": 1, "b": [2]}),
    (
        "{'profile': ['I'm a dev'], 'done': True, 'x': None}",
        {"profile": ["I'm a dev"], "done": True, "x": None},
    ),
    ('{"a": [1, 2,], }', {"a": [1, 2]}),
    ('\ufeff{"a": 1}', {"a": 1}),
    ('{"a": "他说"你好"然后走了"}', {"a": '他说"你好"然后走了'}),
    ('{"a": "他说“你好”，然后走了", "b": 1}', {"a": "他说“你好”，然后走了", "b": 1}),
    ("{“a”: “他说“好”了”}", {"a": "他说“好”了"}),
    ('{"d": "用 “PostgreSQL” 作为数据库"}', {"d": "用 “PostgreSQL” 作为数据库"}),
    ('{"todos": ["a", "b', {"todos": ["a", "b"]}),
    ('```json\n{"todos": ["a"', {"todos": ["a"]}),
    ('{\n  "a": "x"\n  "b": "y"\n}', {"a": "x", "b": "y"}),
    ("{topic: database, n: 2}", {"topic": "database", "n": 2}),
    ('{"a": 1} and also {"b": 2}', {"a": 1}),
    ('Here is {the json}: {"a": 1}', {"a": 1}),
    ('"{\\"a\\": 1}"', {"a": 1}),
    ('{"a": "line1\nline2"}', {"a": "line1\nline2"}),
    ('{"a": 1, // the count\n "b": 2}', {"a": 1, "b": 2}),
    ('{"name": "张三”}', {"name": "张三"}),
]


@pytest.mark.parametrize(("reply_text", "expected"), REPAIRS)
def test_parse_llm_json_repairs_what_models_answer(
    reply_text: str, expected: dict[str, Any]
) -> None:
    assert parse_llm_json(reply_text) == expected


@pytest.mark.parametrize(
    "reply_text", ["", "no json here", "[1, 2]", "```\n```", "抱歉，我无法完成"]
)
def test_parse_llm_json_raises_when_nothing_can_be_recovered(reply_text: str) -> None:
    with pytest.raises(LLMResponseUnparseable) as caught:
        parse_llm_json(reply_text)
    assert isinstance(caught.value, LLMError)


def test_unparseable_error_does_not_quote_the_reply() -> None:
    with pytest.raises(LLMResponseUnparseable) as caught:
        parse_llm_json("用户的秘密：没有 JSON")
    assert "秘密" not in str(caught.value)


# --- compactor over the stand-in LLM -------------------------------------------------------


@pytest.fixture
def llm(fake_openai: FakeOpenAI) -> Any:
    settings = LLMSettings(
        base_url=fake_openai.base_url, api_key="k", model="qwen-plus", timeout_s=5, max_retries=2
    )
    with OpenAICompatibleLLM(settings, backoff_base_s=0.01, backoff_max_s=0.02) as client:
        yield client


def test_llm_compaction_of_chinese_dialogue_uses_a_chinese_json_prompt(
    fake_openai: FakeOpenAI, llm: OpenAICompatibleLLM
) -> None:
    fake_openai.script(reply(json.dumps(GOOD_REPLY, ensure_ascii=False)))

    result = MemoryCompactor(llm).compact(SEED_ZH)

    assert result == GOOD_REPLY
    [request] = fake_openai.requests
    assert request["response_format"] == {"type": "json_object"}
    prompt = fake_openai.prompts[0]
    assert "只输出一个 JSON 对象" in prompt
    assert all(text in prompt for text in SEED_ZH)


def test_english_dialogue_gets_an_english_prompt() -> None:
    assert "Answer with ONE JSON object" in build_prompt(SEED_EN)
    assert "只输出一个 JSON 对象" in build_prompt(["Alice: 我们决定使用 PostgreSQL 作为数据库"])
    assert "Answer with ONE JSON object" in build_prompt(SEED_ZH, language="en")


def test_fenced_reply_with_chinese_quotes_is_understood(
    fake_openai: FakeOpenAI, llm: OpenAICompatibleLLM
) -> None:
    fake_openai.script(
        reply(
            "好的，结果如下：\n```json\n{“user_profile”：[“在做跨境电商”]，“project_status”：[]，"
            "“key_decisions”：[{“decision”：“使用 PostgreSQL”，“topic”：“Database”}]，"
            "“todos”：[“下周完成支付模块”,],}\n```"
        )
    )

    result = MemoryCompactor(llm).compact(SEED_ZH)

    assert result["user_profile"] == ["在做跨境电商"]
    assert result["key_decisions"] == [{"decision": "使用 PostgreSQL", "topic": "database"}]
    assert result["todos"] == ["下周完成支付模块"]


def test_loosely_shaped_reply_is_normalised(
    fake_openai: FakeOpenAI, llm: OpenAICompatibleLLM
) -> None:
    fake_openai.script(
        reply(
            json.dumps(
                {
                    "profile": "Runs an online furniture shop",
                    "status": None,
                    "decisions": ["Switched to Postgres"],
                    "todo": [{"task": "finish payments", "due": "next week"}],
                }
            )
        )
    )

    result = MemoryCompactor(llm).compact(SEED_EN)

    assert result["user_profile"] == ["Runs an online furniture shop"]
    assert result["project_status"] == []
    assert result["key_decisions"] == [{"decision": "Switched to Postgres", "topic": "database"}]
    assert result["todos"] == ["finish payments"]


def test_broken_reply_keeps_the_raw_text(fake_openai: FakeOpenAI, llm: OpenAICompatibleLLM) -> None:
    fake_openai.script(reply("抱歉，我无法处理这段对话。"))

    compactor = MemoryCompactor(llm)
    result = compactor.compact(SEED_ZH)

    assert result["uncompacted"] == SEED_ZH
    assert result["key_decisions"] == []
    assert "no JSON object" in result["errors"][0]


def test_failed_compaction_becomes_one_dialogue_memory_with_the_reason(
    fake_openai: FakeOpenAI, llm: OpenAICompatibleLLM
) -> None:
    fake_openai.script(*[error(500, "overloaded")] * 3)

    [memory] = MemoryCompactor(llm).compact_to_memories(SEED_ZH)

    assert memory.memory_type == "dialogue"
    assert memory.text == "\n".join(SEED_ZH)
    assert memory.metadata == {"compaction": "failed", "reason": "LLMError"}
    assert len(fake_openai.requests) == 3  # the client retried before giving up


def test_reply_without_expected_keys_keeps_the_raw_text(
    fake_openai: FakeOpenAI, llm: OpenAICompatibleLLM
) -> None:
    fake_openai.script(reply('{"answer": "你好！有什么可以帮你？"}'))
    result = MemoryCompactor(llm).compact(SEED_ZH)
    assert result["uncompacted"] == SEED_ZH


def test_any_chat_function_error_keeps_the_raw_text(caplog: pytest.LogCaptureFixture) -> None:
    def broken(prompt: str) -> str:
        raise ConnectionResetError("peer reset")

    with caplog.at_level("INFO", logger="memory_pg"):
        memories = MemoryCompactor(broken).compact_to_memories(["我的银行卡密码是 123456"])

    assert [m.text for m in memories] == ["我的银行卡密码是 123456"]
    assert memories[0].metadata["reason"] == "ConnectionResetError"
    assert "failed" in caplog.text
    assert "123456" not in caplog.text  # user text never logged above DEBUG


def test_batches_of_max_batch_are_merged_and_a_failed_batch_loses_nothing(
    fake_openai: FakeOpenAI, llm: OpenAICompatibleLLM
) -> None:
    texts = [f"user: message {i}" for i in range(7)]
    first = {"user_profile": ["Alice"], "key_decisions": [{"decision": "MySQL", "topic": "db"}]}
    third = {"todos": ["ship"], "key_decisions": [{"decision": "Postgres", "topic": "database"}]}
    fake_openai.script(
        reply(json.dumps(first)),
        error(400, "context too long"),  # not retried; JSON mode is dropped once
        error(400, "context too long"),
        reply(json.dumps(third)),
    )

    result = MemoryCompactor(llm, max_batch=3).compact(texts)

    batches = [p for p in fake_openai.prompts if "message" in p]
    assert [sum(f"message {i}" in p for i in range(7)) for p in batches] == [3, 3, 3, 1]
    assert result["user_profile"] == ["Alice"]
    assert result["todos"] == ["ship"]
    # "db" is canonicalised to "database", so the later Postgres decision supersedes MySQL
    assert result["key_decisions"] == [{"decision": "Postgres", "topic": "database"}]
    assert result["uncompacted"] == texts[3:6]


def test_raw_text_is_split_to_fit_the_store_limit() -> None:
    def broken(prompt: str) -> str:
        raise TimeoutError

    texts = ["a" * 30, "b" * 30, "c" * 70]
    memories = MemoryCompactor(broken, max_text_chars=64).compact_to_memories(texts)

    assert all(len(m.text) <= 64 for m in memories)
    assert "".join(m.text.replace("\n", "") for m in memories) == "".join(texts)


def test_async_compactor_over_the_async_client(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(error(429, "slow down"), reply(json.dumps(GOOD_REPLY, ensure_ascii=False)))
    settings = LLMSettings(base_url=fake_openai.base_url, api_key="k", timeout_s=5)

    async def main() -> list[CompactedMemory]:
        async with AsyncOpenAICompatibleLLM(settings, backoff_base_s=0.01) as client:
            return await AsyncMemoryCompactor(client).compact_to_memories(SEED_ZH)

    memories = asyncio.run(main())

    assert _types(memories) == ["user_profile", "key_decision", "todo"]
    assert memories[1].topic == "database"
    assert memories[1].metadata == {"compaction": "llm"}


def test_async_compactor_keeps_raw_text_on_failure() -> None:
    async def broken(prompt: str) -> str:
        raise RuntimeError("down")

    result = asyncio.run(AsyncMemoryCompactor(broken).compact(SEED_EN))
    assert result["uncompacted"] == SEED_EN


def test_max_batch_must_be_positive() -> None:
    with pytest.raises(ValueError, match="max_batch"):
        MemoryCompactor(max_batch=0)


def test_llm_prompt_says_only_facts_and_questions_in_a_reply_are_dropped() -> None:
    for dialogue in (
        ["user: Which database did we decide to use?"],
        ["user: 要不要换成 MongoDB 呢？"],
    ):
        prompt = build_prompt(dialogue)
        assert ("Never store a question" in prompt) or ("不要记录提问" in prompt)
    reply = (
        '{"user_profile": ["Where do I live?", "Lives in Berlin"], "project_status": [],'
        ' "key_decisions": [{"decision": "Which database did we decide to use?",'
        ' "topic": "database"}, {"decision": "Use PostgreSQL", "topic": "database"}],'
        ' "todos": ["Do I need to finish the payment module?", "好的"]}'
    )
    result = result_from_reply(reply)
    assert result["user_profile"] == ["Lives in Berlin"]
    assert result["key_decisions"] == [{"decision": "Use PostgreSQL", "topic": "database"}]
    assert result["todos"] == []


@pytest.mark.parametrize(
    "text",
    [
        "Which database did we decide to use?",
        "Do I need to finish the payment module",
        "Where do I live?",
        "要不要换成 MongoDB 呢？",
        "what if we used MongoDB?",
        "我们在考虑换成 MongoDB",
        "帮我写一个函数",
        "Could you summarize this?",
        "你好！",
        "Thanks, got it",
    ],
)
def test_offline_extractor_stores_no_non_fact(text: str) -> None:
    result = MemoryCompactor().compact([text])
    assert not any(result[k] for k in ("user_profile", "project_status", "key_decisions", "todos"))


@pytest.mark.parametrize(
    ("text", "kind", "fragment"),
    [
        ("我已经搬到上海了", "user_profile", "上海"),
        ("I moved to Munich last month", "user_profile", "Munich"),
        ("数据库改用 PostgreSQL，不再使用 MySQL", "key_decisions", "PostgreSQL"),
        ("We switched from React to Svelte", "key_decisions", "Svelte"),
        ("好的，我们就用 PostgreSQL 吧", "key_decisions", "PostgreSQL"),
        ("请记住我是素食者", "user_profile", "素食者"),
    ],
)
def test_offline_extractor_reads_changes_and_negations(text: str, kind: str, fragment: str) -> None:
    result = MemoryCompactor().compact([text])
    items = result[kind]  # type: ignore[literal-required]
    texts = [i["decision"] if isinstance(i, dict) else i for i in items]
    assert any(fragment in t for t in texts)
    assert not any(t.startswith("好的") for t in texts)


def test_the_llms_entities_go_to_the_memories_that_name_them():
    answer = {
        "user_profile": ["小王负责支付模块"],
        "project_status": [],
        "key_decisions": [],
        "todos": ["Send the report to Acme"],
        "entities": [
            {"name": "小王", "kind": "person", "aliases": ["王伟"]},
            {"name": "Acme", "kind": "organization"},
        ],
    }
    result = result_from_reply(json.dumps(answer, ensure_ascii=False))
    profile, todo = to_memories(result, source="llm", max_text_chars=1000)
    assert [(e.name, e.aliases) for e in profile.entities or ()] == [("小王", ("王伟",))]
    assert [(e.name, e.kind) for e in todo.entities or ()] == [("Acme", "organisation")]
    # A malformed list is no list: the memories stay, their entities are the rules'.
    bad = result_from_reply(json.dumps({**answer, "entities": "小王"}, ensure_ascii=False))
    assert "entities" not in bad
    assert all(m.entities is None for m in to_memories(bad, source="llm", max_text_chars=1000))


@pytest.mark.parametrize(
    "text",
    [
        "我什么都吃，不挑食",  # a question word followed by 都/也 asks nothing
        "周末哪儿也不去，在家休息",
        "最近没什么压力",  # negated
        "我不怎么喝酒",
        "家里有什么就吃什么",  # the same word twice pairs two open choices
        "Dropped the IF thing, just eating three normal meals now",  # IF: fasting, not "if"
    ],
)
def test_a_statement_whose_question_word_asks_nothing_is_no_question(text: str) -> None:
    assert non_fact(text) is None


@pytest.mark.parametrize(
    "text", ["你想吃什么", "晚饭吃啥", "周末去哪儿玩", "If we slip, what then"]
)
def test_a_question_word_that_asks_still_makes_a_question(text: str) -> None:
    assert non_fact(text) in ("question", "hypothetical")
