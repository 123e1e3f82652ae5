"""The OpenAI-compatible client, through the real openai package, against a local stand-in."""

from __future__ import annotations

import asyncio
import time

import pytest

from memory_pg.config import LLMSettings
from memory_pg.errors import ConfigurationError, LLMError
from memory_pg.llm import AsyncOpenAICompatibleLLM, OpenAICompatibleLLM
from tests.fake_openai import (
    FakeOpenAI,
    error,
    fake_openai_fixture,  # noqa: F401
    no_json_mode,
    reply,
)

FAST = {"backoff_base_s": 0.01, "backoff_max_s": 0.05}


def _settings(fake: FakeOpenAI, **overrides: object) -> LLMSettings:
    values: dict[str, object] = {
        "base_url": fake.base_url,
        "api_key": "sk-test",
        "model": "deepseek-chat",
        "timeout_s": 5.0,
        "max_retries": 3,
    }
    values.update(overrides)
    return LLMSettings(**values)  # type: ignore[arg-type]


def test_chat_returns_the_reply_and_sends_model_messages_and_json_mode(
    fake_openai: FakeOpenAI,
) -> None:
    fake_openai.script(reply('{"ok": true}'))
    with OpenAICompatibleLLM(_settings(fake_openai), **FAST) as llm:
        answer = llm.chat([{"role": "user", "content": "你好"}])

    assert answer == '{"ok": true}'
    [request] = fake_openai.requests
    assert request["model"] == "deepseek-chat"
    assert request["messages"] == [{"role": "user", "content": "你好"}]
    assert request["response_format"] == {"type": "json_object"}


def test_json_mode_off_sends_no_response_format(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(reply("plain"), reply("plain"))
    with OpenAICompatibleLLM(_settings(fake_openai, json_mode=False), **FAST) as llm:
        llm.chat([{"role": "user", "content": "hi"}])
        llm.chat([{"role": "user", "content": "hi"}], json_mode=True)

    assert "response_format" not in fake_openai.requests[0]
    assert fake_openai.requests[1]["response_format"] == {"type": "json_object"}


def test_instance_is_a_plain_prompt_to_text_callable(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(reply("pong"))
    with OpenAICompatibleLLM(_settings(fake_openai), **FAST) as llm:
        assert llm("ping") == "pong"
    assert fake_openai.prompts == ["ping"]


def test_429_is_retried_then_succeeds(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(error(429, "rate limited"), error(429, "rate limited"), reply("done"))
    with OpenAICompatibleLLM(_settings(fake_openai), **FAST) as llm:
        assert llm("x") == "done"
    assert len(fake_openai.requests) == 3


def test_retry_after_header_is_honoured(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(error(429, "slow down", retry_after="0.3"), reply("done"))
    with OpenAICompatibleLLM(_settings(fake_openai), backoff_base_s=0.01, backoff_max_s=1) as llm:
        started = time.monotonic()
        assert llm("x") == "done"
    assert time.monotonic() - started >= 0.3


def test_persistent_500_raises_llm_error_after_max_retries(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(*[error(500, "boom")] * 10)
    with OpenAICompatibleLLM(_settings(fake_openai, max_retries=2), **FAST) as llm:
        with pytest.raises(LLMError, match="HTTP 500") as caught:
            llm("x")
    assert len(fake_openai.requests) == 3  # the first try and two retries
    assert caught.value.__cause__ is not None


def test_400_is_not_retried(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(error(400, "bad model"), reply("never"))
    with OpenAICompatibleLLM(_settings(fake_openai, json_mode=False), **FAST) as llm:
        with pytest.raises(LLMError, match="HTTP 400"):
            llm("x")
    assert len(fake_openai.requests) == 1


def test_401_is_not_retried(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(error(401, "bad key"), reply("never"))
    with OpenAICompatibleLLM(_settings(fake_openai), **FAST) as llm:
        with pytest.raises(LLMError, match="HTTP 401"):
            llm("x")
    assert len(fake_openai.requests) == 1


def test_timeout_is_retried(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(reply("too late", delay_s=1.0), reply("in time"))
    with OpenAICompatibleLLM(_settings(fake_openai, timeout_s=0.3), **FAST) as llm:
        assert llm("x") == "in time"
    assert len(fake_openai.requests) == 2


def test_timeouts_until_the_end_raise_llm_error(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(*[reply("late", delay_s=0.6)] * 2)
    settings = _settings(fake_openai, timeout_s=0.2, max_retries=1)
    with OpenAICompatibleLLM(settings, **FAST) as llm:
        with pytest.raises(LLMError, match="Timeout"):
            llm("x")
    assert len(fake_openai.requests) == 2


def test_connection_refused_raises_llm_error() -> None:
    server = FakeOpenAI()  # bound but never serving: connections hang or fail
    url = server.base_url
    server.stop_unstarted()
    settings = LLMSettings(base_url=url, api_key="k", timeout_s=1.0, max_retries=1)
    with OpenAICompatibleLLM(settings, **FAST) as llm:
        with pytest.raises(LLMError, match="APIConnectionError"):
            llm("x")


def test_endpoint_refusing_json_mode_is_asked_again_without_it(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(no_json_mode('{"a": 1}'), reply('{"b": 2}'))
    with OpenAICompatibleLLM(_settings(fake_openai), **FAST) as llm:
        assert llm("x") == '{"a": 1}'
        assert llm("y") == '{"b": 2}'

    first, retried, second_call = fake_openai.requests
    assert "response_format" in first
    assert "response_format" not in retried
    # once refused, JSON mode is not requested again from this endpoint
    assert "response_format" not in second_call


def test_400_without_json_mode_after_fallback_is_an_error(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(error(400, "bad"), error(400, "still bad"), reply("never"))
    with OpenAICompatibleLLM(_settings(fake_openai), **FAST) as llm:
        with pytest.raises(LLMError, match="HTTP 400"):
            llm("x")
    assert len(fake_openai.requests) == 2


def test_no_endpoint_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match="MEMORY_PG_LLM_API_KEY"):
        OpenAICompatibleLLM(LLMSettings())


def test_prompt_text_is_not_logged_above_debug(
    fake_openai: FakeOpenAI, caplog: pytest.LogCaptureFixture
) -> None:
    fake_openai.script(error(500, "echo 秘密的提示词"), reply("秘密的回答"))
    with OpenAICompatibleLLM(_settings(fake_openai), **FAST) as llm:
        with caplog.at_level("INFO", logger="memory_pg"):
            llm("秘密的提示词")
    assert caplog.records, "the retry should be logged"
    assert "秘密" not in caplog.text


def test_async_client_retries_and_answers(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(error(503, "busy"), reply("异步"))

    async def main() -> str:
        async with AsyncOpenAICompatibleLLM(_settings(fake_openai), **FAST) as llm:
            return await llm("x")

    assert asyncio.run(main()) == "异步"
    assert len(fake_openai.requests) == 2


def test_async_client_raises_llm_error_on_4xx(fake_openai: FakeOpenAI) -> None:
    fake_openai.script(error(404, "no such model"))

    async def main() -> str:
        async with AsyncOpenAICompatibleLLM(_settings(fake_openai), **FAST) as llm:
            return await llm.chat([{"role": "user", "content": "x"}])

    with pytest.raises(LLMError, match="HTTP 404"):
        asyncio.run(main())


def test_without_openai_the_module_imports_and_the_client_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import importlib
    import sys

    monkeypatch.setitem(sys.modules, "openai", None)  # makes `import openai` fail
    monkeypatch.delitem(sys.modules, "memory_pg.llm")
    module = importlib.import_module("memory_pg.llm")
    with pytest.raises(ConfigurationError, match=r"memory-pg\[llm\]"):
        module.OpenAICompatibleLLM(LLMSettings(api_key="k"))
