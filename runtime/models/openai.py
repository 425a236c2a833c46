"""The `openai` backend: any OpenAI-compatible `/v1` endpoint, over httpx.

One request is one streamed `POST {base_url}/chat/completions`, read as
server-sent events; text reaches `Request.on_text` as it arrives. The layers,
one method each: `generate` (switches structured mode once if the server
rejects it) → `_with_retries` (backoff on what another attempt may fix) →
`_attempt` (one HTTP exchange) → `_read_reply` (SSE or plain JSON into a
`_Collector`).

Structured output has three modes, because servers disagree:
- `json_schema`, the default, what OpenAI and vLLM accept;
- `json_object` with a `schema` key, which llama-cpp-python's server turns
  into a grammar (its 0.3.x server rejects `json_schema`: the backend then
  falls back to `json_object` by itself, once, and keeps it);
- `tools`: one forced function `act` whose parameters are the schema; its
  arguments are the reply's text.

Failures: connection errors, timeouts, 429 and 5xx are retried with
exponential backoff (a short `Retry-After` is honoured); other statuses
raise `BackendError` with the server's own message at once. httpx's
exceptions become Loci's in `runtime.models.http_errors`, which says which are
transient. A reply that broke off after text was streamed is not retried:
its text is already out.

Token counts come from the server's `usage` when it sends one, else from
tiktoken (`runtime.models.tokens`), which works offline.

Scoring (`score`, `runtime.models.base.Continuation`) goes through the same
endpoint where the server can do it: llama-cpp-python's and llama.cpp's
servers generate a given candidate under a grammar and report its tokens'
log-probabilities (`runtime.models.remote_scoring`). `discover_scoring` asks
once; until it has said yes, `can_score` is False and the runtime keeps free
generation, as for any plain OpenAI endpoint.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import anyio
import httpx

from loci.memory.errors import BackendError, UsageError
from loci.runtime.models.base import Continuation, Reply, Request
from loci.runtime.models.discover import server_context_window, server_parameters
from loci.runtime.models.http_errors import TRANSIENT, translate_httpx
from loci.runtime.models.keys import KEY_VARIABLES, OPENAI_URL, key_from_env
from loci.runtime.models.remote_scoring import RemoteScorer
from loci.runtime.models.tokens import count_tokens, tiktoken_encoding

__all__ = ["STRUCTURED_MODES", "OpenAIModel"]

STRUCTURED_MODES = ("json_schema", "json_object", "tools")
MAX_RETRY_AFTER = 20.0
SHOWN = 200


class _Retry(Exception):
    """An attempt failed in a way that another attempt may fix (a 429 or a 5xx)."""

    def __init__(self, error: BackendError, delay: float | None = None) -> None:
        super().__init__(str(error))
        self.error = error
        self.delay = delay


class _SchemaRejected(BackendError):
    """The server does not understand `response_format: json_schema`."""


def _server_message(response: httpx.Response) -> str:
    """The error message in a response body, or its text."""
    try:
        body = response.json()
    except ValueError:
        return response.text.strip()[:SHOWN] or response.reason_phrase
    return _message_in(body)


def _message_in(body: Any) -> str:
    """The message in an OpenAI (`error.message`) or FastAPI (`detail`) error body."""
    if isinstance(body, dict):
        error = body.get("error", body.get("detail"))
        if isinstance(error, dict) and "message" in error:
            return str(error["message"])[: SHOWN * 2]
        if error is not None:
            return (error if isinstance(error, str) else json.dumps(error))[: SHOWN * 2]
    return json.dumps(body)[:SHOWN]


def _retry_after(response: httpx.Response) -> float | None:
    try:
        return max(0.0, float(response.headers["retry-after"]))
    except (KeyError, ValueError):
        return None


def _structured_fields(mode: str, schema: dict[str, Any]) -> dict[str, Any]:
    """The request fields that ask for JSON following `schema`."""
    if mode == "json_schema":
        spec = {"name": "action", "schema": schema, "strict": False}
        return {"response_format": {"type": "json_schema", "json_schema": spec}}
    if mode == "json_object":
        return {"response_format": {"type": "json_object", "schema": schema}}
    function = {"name": "act", "description": "Take the next action.", "parameters": schema}
    return {
        "tools": [{"type": "function", "function": function}],
        "tool_choice": {"type": "function", "function": {"name": "act"}},
    }


class _Collector:
    """Builds one reply from streamed chunks (or from one whole response)."""

    def __init__(self, on_text: Callable[[str], None] | None) -> None:
        self.on_text = on_text
        self.parts: list[str] = []
        self.usage: dict[str, Any] | None = None
        self.finish_reason: str | None = None

    def add(self, chunk: dict[str, Any], url: str) -> None:
        if "error" in chunk:
            raise BackendError(f"{url} failed mid-reply: {_message_in(chunk)}")
        self.usage = chunk.get("usage") or self.usage
        for choice in chunk.get("choices") or []:
            delta = choice.get("delta") or choice.get("message") or {}
            self._text(delta.get("content"))
            for call in delta.get("tool_calls") or []:
                self._text((call.get("function") or {}).get("arguments"))
            self.finish_reason = choice.get("finish_reason") or self.finish_reason

    def _text(self, piece: str | None) -> None:
        if piece:
            self.parts.append(piece)
            if self.on_text:
                self.on_text(piece)


class OpenAIModel:
    """A model behind an OpenAI-compatible chat-completions endpoint."""

    serial = False  # the server takes requests concurrently (and batches or queues them): nothing here to wait for

    def __init__(
        self,
        model: str,
        base_url: str = OPENAI_URL,
        *,
        api_key: str | None = None,
        client: httpx.AsyncClient | None = None,
        context_window: int = 8192,
        connect_timeout: float = 5.0,
        read_timeout: float = 120.0,
        retries: int = 3,
        backoff: float = 0.5,
        structured: str = "json_schema",
    ) -> None:
        if structured not in STRUCTURED_MODES:
            raise UsageError(f"structured must be one of {', '.join(STRUCTURED_MODES)}, not {structured!r}")
        if retries < 0:
            raise UsageError(f"retries must be 0 or more, not {retries}")
        self.model = model
        self.name = f"openai:{model}"
        self.context_window = context_window
        self.parameters: int | None = None  # a remote model says it only where the server does (`discover`)
        self.can_score = False  # until `discover_scoring` finds that the server reports log-probabilities
        self.base_url = base_url.rstrip("/")
        self.url = f"{self.base_url}/chat/completions"
        self.structured = structured
        self.retries = retries
        self.backoff = backoff
        self._key = api_key or key_from_env()
        self._timeout = httpx.Timeout(read_timeout, connect=connect_timeout)
        self._owns_client = client is None
        self._client = client or httpx.AsyncClient(timeout=self._timeout)
        headers = {"Authorization": f"Bearer {self._key}"} if self._key else {}
        self._scorer = RemoteScorer(self._client, self.base_url, model, headers, retries=retries, backoff=backoff)

    def count_tokens(self, text: str) -> int:
        return count_tokens(tiktoken_encoding(self.model), text)

    async def generate(self, request: Request) -> Reply:
        started = time.perf_counter()
        try:
            return await self._with_retries(request, started)
        except _SchemaRejected:
            self.structured = "json_object"
            return await self._with_retries(request, started)

    async def discover_context_window(self) -> int | None:
        """Take the server's context window when it says it (llama.cpp, vLLM); keep the current one otherwise."""
        found = await server_context_window(self._client, self.base_url, self.model)
        if found:
            self.context_window = found
        return found

    async def discover_parameters(self) -> int | None:
        """Take the served model's parameter count when the server says it, or its name does; else keep None."""
        found = await server_parameters(self._client, self.base_url, self.model)
        if found:
            self.parameters = found
        return found

    async def discover_scoring(self) -> bool:
        """Whether the server scores given replies (`score`): one probe, whose answer `can_score` keeps."""
        self.can_score = await self._scorer.probe()
        return self.can_score

    async def score(self, messages: list[dict[str, str]], candidates: list[str]) -> list[Continuation]:
        """Each candidate reply's token log-probabilities after the chat prompt of `messages`, and of the turn
        ending after it (one request a candidate; the server keeps the prompt in its cache between them)."""
        if not self.can_score:
            raise BackendError(f"{self.base_url} does not report log-probabilities, so {self.name} cannot score")
        return await self._scorer.score(messages, candidates)

    async def aclose(self) -> None:
        if self._owns_client:
            await self._client.aclose()

    async def __aenter__(self) -> OpenAIModel:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def _with_retries(self, request: Request, started: float) -> Reply:
        for attempt in range(self.retries + 1):
            collector = _Collector(request.on_text)
            try:
                await self._attempt(request, collector)
            except (_Retry, *TRANSIENT) as failed:
                error, delay = (failed.error, failed.delay) if isinstance(failed, _Retry) else (failed, None)
                if collector.parts or attempt == self.retries:
                    raise error from error.__cause__
                await anyio.sleep(self.backoff * 2**attempt if delay is None else delay)
                continue
            return self._reply(request, collector, time.perf_counter() - started)
        raise AssertionError("unreachable: the last attempt returns or raises")

    async def _attempt(self, request: Request, collector: _Collector) -> None:
        headers = {"Authorization": f"Bearer {self._key}"} if self._key else {}
        with translate_httpx(self.url):
            async with self._client.stream(
                "POST", self.url, json=self._body(request), headers=headers, timeout=self._timeout
            ) as response:
                if response.status_code >= 400:
                    await response.aread()
                    raise self._status_error(response, request)
                await self._read_reply(response, collector)

    def _body(self, request: Request) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": request.messages,
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if request.schema is not None:
            body.update(_structured_fields(self.structured, request.schema))
        return body

    def _status_error(self, response: httpx.Response, request: Request) -> Exception:
        status, message = response.status_code, _server_message(response)
        said = f"{self.url} answered {status}: {message}"
        if self.structured == "json_schema" and request.schema is not None and "response_format" in message:
            return _SchemaRejected(said)
        if status == 401:
            problem = "the API key was refused" if self._key else "no API key was sent"
            return BackendError(f"{said} ({problem}: set {' or '.join(KEY_VARIABLES)})")
        if status == 429 or status >= 500:
            delay = _retry_after(response)
            if delay is not None and delay > MAX_RETRY_AFTER:
                return BackendError(f"{said} (it asks to retry after {delay:.0f} s)")
            return _Retry(BackendError(said), delay)
        return BackendError(said)

    async def _read_reply(self, response: httpx.Response, collector: _Collector) -> None:
        if response.headers.get("content-type", "").startswith("application/json"):
            collector.add(self._parse(await response.aread(), "reply"), self.url)
            return
        async for line in response.aiter_lines():
            field, _, value = line.partition(":")
            if not line.strip() or line.startswith(":") or field in ("event", "id", "retry"):
                continue
            if field == "data" and value.strip() == "[DONE]":
                return
            what = f"stream line {line[:SHOWN]!r}"
            collector.add(self._parse(value if field == "data" else "", what), self.url)

    def _parse(self, text: str | bytes, what: str) -> dict[str, Any]:
        try:
            chunk = json.loads(text)
        except ValueError:
            chunk = None
        if not isinstance(chunk, dict):
            raise BackendError(f"{self.url} sent a malformed {what}")
        return chunk

    def _reply(self, request: Request, collector: _Collector, seconds: float) -> Reply:
        text = "".join(collector.parts)
        usage = collector.usage or {}
        prompt = usage.get("prompt_tokens")
        if prompt is None:
            prompt = sum(3 + self.count_tokens(str(m.get("content") or "")) for m in request.messages) + 3
        completion = usage.get("completion_tokens")
        if completion is None:
            completion = self.count_tokens(text)
        cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens") or 0
        raw = {"usage": collector.usage, "finish_reason": collector.finish_reason, "structured": self.structured}
        return Reply(text, prompt, completion, reused_tokens=cached, seconds=seconds, raw=raw)
