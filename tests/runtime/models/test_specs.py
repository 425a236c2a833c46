"""Spec strings and API keys: one parser and one key lookup for chat models and embedders."""

from __future__ import annotations

import httpx
import pytest

from loci.memory.errors import BackendError, BackendTimeout, BackendUnreachable, UsageError
from loci.runtime.models.base import Request
from loci.runtime.models.discover import server_context_window
from loci.runtime.models.embedders import embedder_from_spec
from loci.runtime.models.http_errors import TRANSIENT, translate_httpx
from loci.runtime.models.openai import OpenAIModel
from loci.runtime.models.specs import Spec, parse_spec

URL = "http://127.0.0.1:9/v1"


def test_a_spec_splits_into_backend_name_and_url() -> None:
    assert parse_spec("openai:local@http://127.0.0.1:8080/v1") == Spec("openai", "local", "http://127.0.0.1:8080/v1")
    assert parse_spec("llama:/models/x.gguf") == Spec("llama", "/models/x.gguf")
    assert parse_spec("openai:gpt-4.1-mini") == Spec("openai", "gpt-4.1-mini", None)
    with pytest.raises(UsageError, match="bad model spec 'bogus:x'; use llama:default"):
        parse_spec("bogus:x")


def test_an_embedder_spec_is_read_by_the_same_parser_with_its_own_backends() -> None:
    with pytest.raises(UsageError, match="bad embedder spec 'scripted:x.json'; use none, llama:PATH.gguf"):
        embedder_from_spec("scripted:x.json")
    with pytest.raises(UsageError, match="names no model"):
        embedder_from_spec("openai:")


def _recording(seen: list[httpx.Request], response: httpx.Response) -> httpx.MockTransport:
    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return response

    return httpx.MockTransport(handler)


@pytest.mark.parametrize("variable", ["LOCI_API_KEY", "OPENAI_API_KEY"])
async def test_the_embedder_and_the_model_send_the_same_key(monkeypatch: pytest.MonkeyPatch, variable: str) -> None:
    monkeypatch.delenv("LOCI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv(variable, "sk-test")
    seen: list[httpx.Request] = []
    body = {"data": [{"index": 0, "embedding": [1.0, 0.0]}]}
    async with httpx.AsyncClient(transport=_recording(seen, httpx.Response(200, json=body))) as client:
        embed = embedder_from_spec(f"openai:emb@{URL}", client=client)
        assert embed is not None
        assert await embed(["a fact"]) == [[1.0, 0.0]]
    await _ask_model(seen)
    assert [request.headers["authorization"] for request in seen] == ["Bearer sk-test"] * 2


async def test_loci_api_key_comes_before_openai_api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOCI_API_KEY", "loci")
    monkeypatch.setenv("OPENAI_API_KEY", "openai")
    seen: list[httpx.Request] = []
    await _ask_model(seen)
    assert seen[0].headers["authorization"] == "Bearer loci"


async def _ask_model(seen: list[httpx.Request]) -> None:
    reply = httpx.Response(200, json={"choices": [{"message": {"content": "hi"}}]})
    async with httpx.AsyncClient(transport=_recording(seen, reply)) as client:
        model = OpenAIModel("m", URL, client=client)
        assert (await model.generate(Request([{"role": "user", "content": "hello"}]))).text == "hi"


@pytest.mark.parametrize(
    ("raised", "expected", "message"),
    [
        (httpx.ReadTimeout("slow"), BackendTimeout, f"{URL} did not answer in time"),
        (httpx.ConnectError("refused"), BackendUnreachable, f"cannot reach {URL}: refused"),
        (httpx.RemoteProtocolError("broke"), BackendUnreachable, f"lost the connection to {URL}: broke"),
        (httpx.DecodingError("bad"), BackendError, f"{URL}: bad"),
        (httpx.UnsupportedProtocol("no scheme"), UsageError, f"{URL} is not a URL Loci can call"),
        (httpx.InvalidURL("bad"), UsageError, f"{URL} is not a URL Loci can call"),
    ],
)
def test_httpx_errors_become_the_tree_in_one_place(raised: Exception, expected: type, message: str) -> None:
    with pytest.raises(expected, match=message) as caught, translate_httpx(URL):
        raise raised
    assert caught.value.__cause__ is raised
    assert isinstance(caught.value, TRANSIENT) == (expected in (BackendTimeout, BackendUnreachable))


async def test_the_embedder_reports_a_timeout_as_a_backend_timeout() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("slow", request=request)

    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
        embed = embedder_from_spec(f"openai:emb@{URL}", client=client)
        assert embed is not None
        with pytest.raises(BackendTimeout, match=f"{URL}/embeddings did not answer in time"):
            await embed(["x"])


async def test_discovery_treats_an_unreachable_server_as_unknown() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=request)

    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
        assert await server_context_window(client, URL, "m") is None
