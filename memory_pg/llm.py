"""A small OpenAI-compatible chat client with explicit retries, for compaction and supersession."""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from memory_pg.config import LLMSettings
from memory_pg.errors import ConfigurationError, LLMError

if TYPE_CHECKING:
    import openai

logger = logging.getLogger(__name__)

#: Local servers (vLLM, Ollama, llama.cpp) ignore the key but the client wants one.
_PLACEHOLDER_API_KEY = "not-needed"

#: Where ``LLMSettings(base_url=None)`` goes: spelled out, because the ``openai`` client
#: given None would read ``OPENAI_BASE_URL`` from the environment.
OPENAI_API_ROOT = "https://api.openai.com/v1"

Messages = Sequence[Mapping[str, str]]


def _import_openai() -> Any:
    try:
        import openai
    except ImportError as exc:
        raise ConfigurationError(
            "the OpenAI-compatible LLM client needs the `openai` package: "
            "pip install 'memory-pg[llm]'"
        ) from exc
    return openai


def _client_kwargs(settings: LLMSettings) -> dict[str, Any]:
    if not settings.api_key and not settings.base_url:
        raise ConfigurationError(
            "no LLM endpoint configured: set LLMSettings.api_key (MEMORY_PG_LLM_API_KEY) "
            "and, for DeepSeek, Qwen or a local server, base_url (MEMORY_PG_LLM_BASE_URL)"
        )
    # Both always explicit: given None, the openai client reads OPENAI_API_KEY and
    # OPENAI_BASE_URL itself, and would pair a key and a host nobody configured together.
    return {
        "api_key": settings.api_key or _PLACEHOLDER_API_KEY,
        "base_url": settings.base_url or OPENAI_API_ROOT,
        "timeout": settings.timeout_s,
        # Retries are ours (see _retry_delay) so that what is retried is explicit.
        "max_retries": 0,
        "default_headers": dict(settings.extra_headers) or None,
    }


def _drop_env_identity(client: Any) -> None:
    """Forget the organisation and project the client read from ``OPENAI_ORG_ID`` /
    ``OPENAI_PROJECT_ID``: it would send them as headers to whatever host is configured.
    Send them through ``LLMSettings.extra_headers`` where OpenAI needs them."""
    client.organization = None
    client.project = None


def _request_kwargs(
    settings: LLMSettings, messages: Messages, *, json_mode: bool, temperature: float | None
) -> dict[str, Any]:
    kwargs: dict[str, Any] = {
        "model": settings.model,
        "messages": [dict(m) for m in messages],
    }
    if temperature is not None:
        kwargs["temperature"] = temperature
    if json_mode:
        kwargs["response_format"] = {"type": "json_object"}
    return kwargs


def _status_code(exc: BaseException) -> int | None:
    status = getattr(exc, "status_code", None)
    return status if isinstance(status, int) else None


def _is_retryable(exc: BaseException, openai_mod: Any) -> bool:
    """Timeouts, dropped connections, 429 and 5xx are worth another try; other 4xx are not."""
    if isinstance(exc, openai_mod.APIConnectionError):  # includes APITimeoutError
        return True
    status = _status_code(exc)
    return status is not None and (status == 429 or status >= 500)


def _retry_after_s(exc: BaseException) -> float | None:
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    value = headers.get("retry-after")
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


def _retry_delay(attempt: int, base_s: float, max_s: float, retry_after_s: float | None) -> float:
    """Exponential backoff with jitter: about ``base * 2**attempt``, never above ``max_s``."""
    if retry_after_s is not None:
        return min(retry_after_s, max_s)
    ceiling = min(max_s, base_s * (2**attempt))
    return float(ceiling / 2 + random.uniform(0, ceiling / 2))


def _describe(exc: BaseException) -> str:
    """A log-safe description: the error class and status, never the bodies (they echo prompts)."""
    status = _status_code(exc)
    return type(exc).__name__ if status is None else f"{type(exc).__name__} (HTTP {status})"


#: Why a model stopped when its reply is not whole: cut off at its output limit or by a
#: content filter. Such a reply is refused: a cut JSON reply would still parse once
#: repaired, and its last fact would be stored half written, the rest lost.
CUT_OFF = frozenset({"length", "content_filter"})


def _content(completion: Any) -> str:
    try:
        choice = completion.choices[0]
        content = choice.message.content
    except (AttributeError, IndexError, TypeError) as exc:
        raise LLMError("the LLM endpoint answered without a message") from exc
    if not isinstance(content, str):
        raise LLMError("the LLM endpoint answered with an empty message")
    stop = getattr(choice, "finish_reason", None)
    if stop in CUT_OFF:
        raise LLMError(
            f"the LLM's reply was cut off (finish_reason {stop!r}): the model's output "
            "limit is too small for this many turns, or a filter stopped it"
        )
    logger.debug("LLM reply: %s", content)
    return content


def _user_prompt(prompt: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": prompt}]


ClientT = TypeVar("ClientT")


class _LLMBase(Generic[ClientT]):
    """Settings, client and retry decisions of both clients; they differ only in I/O."""

    def __init__(
        self,
        settings: LLMSettings,
        *,
        temperature: float | None = None,
        backoff_base_s: float = 0.5,
        backoff_max_s: float = 20.0,
    ) -> None:
        """Create the client; nothing is sent until ``chat``.

        Args:
            settings: endpoint, key, model, timeout, retries and JSON mode.
            temperature: sent when not None; the endpoint's default otherwise.
            backoff_base_s: the first retry waits about this long, each next one twice that.
            backoff_max_s: no wait between retries is longer than this.

        Raises:
            ConfigurationError: ``openai`` is not installed, or no endpoint is configured.
        """
        self.settings = settings
        self._openai = _import_openai()
        self._temperature = temperature
        self._backoff_base_s = backoff_base_s
        self._backoff_max_s = backoff_max_s
        # Flipped to False the first time the endpoint refuses response_format.
        self._json_mode_supported = True
        self._client: ClientT = self._new_client(_client_kwargs(settings))
        _drop_env_identity(self._client)

    def _new_client(self, kwargs: dict[str, Any]) -> ClientT:
        """The ``openai`` client of this kind (sync or async)."""
        raise NotImplementedError

    def _wants_json(self, json_mode: bool | None) -> bool:
        wanted = self.settings.json_mode if json_mode is None else json_mode
        return wanted and self._json_mode_supported

    def _should_drop_json_mode(self, exc: BaseException, json_mode: bool) -> bool:
        if not json_mode or _status_code(exc) != 400:
            return False
        logger.warning(
            "LLM endpoint %s refused the request with JSON mode (HTTP 400); "
            "retrying once without response_format",
            self.settings.base_url or "(OpenAI)",
        )
        return True

    def _next_delay(self, exc: BaseException, attempt: int) -> float | None:
        """Seconds to wait before retry ``attempt + 1``, or None when it is time to give up."""
        if not _is_retryable(exc, self._openai) or attempt >= self.settings.max_retries:
            return None
        delay = _retry_delay(
            attempt, self._backoff_base_s, self._backoff_max_s, _retry_after_s(exc)
        )
        logger.warning(
            "LLM request failed with %s; retry %d/%d in %.2fs",
            _describe(exc),
            attempt + 1,
            self.settings.max_retries,
            delay,
        )
        return delay

    def _failure(self, exc: BaseException, attempts: int) -> LLMError:
        logger.error("LLM request failed with %s after %d attempt(s)", _describe(exc), attempts)
        return LLMError(
            f"LLM request to model {self.settings.model!r} failed with {_describe(exc)} "
            f"after {attempts} attempt(s)"
        )

    def _tries(self, messages: Messages, json_mode: bool | None) -> _Tries:
        return _Tries(self, messages, self._wants_json(json_mode))


class _Tries:
    """The tries of one request: what to send next, how long to wait after a failure.

    The retry loop's decisions, shared by both clients: their ``chat`` only sends
    and sleeps (``time.sleep`` or ``asyncio.sleep``).
    """

    def __init__(self, llm: _LLMBase[Any], messages: Messages, use_json: bool) -> None:
        self._llm = llm
        self._messages = messages
        self._use_json = use_json
        self._attempt = 0

    def request(self) -> dict[str, Any]:
        """The keyword arguments of the next ``chat.completions.create``."""
        return _request_kwargs(
            self._llm.settings,
            self._messages,
            json_mode=self._use_json,
            temperature=self._llm._temperature,
        )

    def wait_after(self, exc: BaseException) -> float:
        """Seconds to wait before the next try after ``exc``.

        Raises:
            LLMError: there is no next try (not retryable, or the retries are spent).
        """
        if self._llm._should_drop_json_mode(exc, self._use_json):
            self._use_json = self._llm._json_mode_supported = False
            return 0.0
        delay = self._llm._next_delay(exc, self._attempt)
        if delay is None:
            raise self._llm._failure(exc, self._attempt + 1) from exc
        self._attempt += 1
        return delay


class OpenAICompatibleLLM(_LLMBase["openai.OpenAI"]):
    """A chat client for any OpenAI-compatible chat-completions endpoint.

    Known to fit:

    * OpenAI: ``LLMSettings(api_key=..., model="gpt-4o-mini")``
    * DeepSeek: ``LLMSettings(base_url="https://api.deepseek.com/v1", model="deepseek-chat",
      api_key=...)``
    * Qwen on Alibaba Cloud DashScope:
      ``LLMSettings(base_url="https://dashscope.aliyuncs.com/compatible-mode/v1",
      model="qwen-plus", api_key=...)``
    * local servers (vLLM, Ollama, llama.cpp): ``base_url`` only; no key is needed.

    Timeouts, connection errors, HTTP 429 and 5xx are retried ``settings.max_retries``
    times with exponential backoff and jitter (``Retry-After`` is honoured); other 4xx
    errors are not retried. With ``settings.json_mode`` the request asks for
    ``response_format={"type": "json_object"}``; an endpoint that refuses it with
    HTTP 400 is asked once more without it, and not asked for it again.

    An instance is also a plain ``Callable[[str], str]``, so it can be passed as
    ``llm_chat_func`` to :class:`~memory_pg.compaction.MemoryCompactor`.

    Prompts and replies are users' data: they are logged at DEBUG at most.

    Example:
        >>> llm = OpenAICompatibleLLM(LLMSettings(
        ...     base_url="https://api.deepseek.com/v1", model="deepseek-chat", api_key=key))
        >>> llm.chat([{"role": "user", "content": "用一句话介绍 PostgreSQL"}])  # doctest: +SKIP

    Not for streaming or tool calls: it returns one complete text reply.
    """

    def _new_client(self, kwargs: dict[str, Any]) -> openai.OpenAI:
        client: openai.OpenAI = self._openai.OpenAI(**kwargs)
        return client

    def chat(self, messages: Messages, *, json_mode: bool | None = None) -> str:
        """Send a conversation and return the reply text.

        Args:
            messages: ``[{"role": "system"|"user"|"assistant", "content": ...}, ...]``.
            json_mode: ask for a JSON object reply; None follows ``settings.json_mode``.

        Returns:
            The text of the first choice.

        Raises:
            LLMError: the endpoint failed after the retries, refused the request (4xx)
                or answered with no message; the client's error is chained.
        """
        tries = self._tries(messages, json_mode)
        while True:
            try:
                return _content(self._client.chat.completions.create(**tries.request()))
            except self._openai.OpenAIError as exc:
                time.sleep(tries.wait_after(exc))

    def __call__(self, prompt: str) -> str:
        """Send one user message and return the reply: the ``llm_chat_func`` shape."""
        return self.chat(_user_prompt(prompt))

    def close(self) -> None:
        """Close the HTTP connections."""
        self._client.close()

    def __enter__(self) -> OpenAICompatibleLLM:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncOpenAICompatibleLLM(_LLMBase["openai.AsyncOpenAI"]):
    """The asyncio twin of :class:`OpenAICompatibleLLM`: same settings, retries and methods.

    Example:
        >>> async with AsyncOpenAICompatibleLLM(settings) as llm:  # doctest: +SKIP
        ...     reply = await llm("hello")
    """

    def _new_client(self, kwargs: dict[str, Any]) -> openai.AsyncOpenAI:
        client: openai.AsyncOpenAI = self._openai.AsyncOpenAI(**kwargs)
        return client

    async def chat(self, messages: Messages, *, json_mode: bool | None = None) -> str:
        """Send a conversation and return the reply text; see :meth:`OpenAICompatibleLLM.chat`."""
        tries = self._tries(messages, json_mode)
        while True:
            try:
                return _content(await self._client.chat.completions.create(**tries.request()))
            except self._openai.OpenAIError as exc:
                await asyncio.sleep(tries.wait_after(exc))

    async def __call__(self, prompt: str) -> str:
        """Send one user message and return the reply: the async ``llm_chat_func`` shape."""
        return await self.chat(_user_prompt(prompt))

    async def aclose(self) -> None:
        """Close the HTTP connections."""
        await self._client.close()

    async def __aenter__(self) -> AsyncOpenAICompatibleLLM:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


__all__ = ["AsyncOpenAICompatibleLLM", "OpenAICompatibleLLM"]
