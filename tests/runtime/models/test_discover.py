"""Learning a local server's context window and its model's size, through httpx.MockTransport."""

from __future__ import annotations

import httpx

from loci.runtime.models.discover import server_context_window, server_parameters
from loci.runtime.models.openai import OpenAIModel


def client_for(routes: dict[str, object]) -> httpx.AsyncClient:
    def handler(request: httpx.Request) -> httpx.Response:
        body = routes.get(request.url.path)
        return httpx.Response(404, json={"error": "no"}) if body is None else httpx.Response(200, json=body)

    return httpx.AsyncClient(transport=httpx.MockTransport(handler))


async def test_llama_server_props_give_the_window() -> None:
    async with client_for({"/props": {"default_generation_settings": {"n_ctx": 16384}}}) as client:
        assert await server_context_window(client, "http://127.0.0.1:8080/v1", "local") == 16384


async def test_vllm_models_give_the_window_of_the_named_model() -> None:
    models = {"data": [{"id": "small", "max_model_len": 4096}, {"id": "big", "max_model_len": 32768}]}
    async with client_for({"/v1/models": models}) as client:
        assert await server_context_window(client, "http://127.0.0.1:8000/v1", "big") == 32768


async def test_a_server_that_says_nothing_keeps_the_default() -> None:
    async with client_for({"/v1/models": {"data": [{"id": "x"}]}}) as client:
        model = OpenAIModel("x", "http://127.0.0.1:9000/v1", client=client, context_window=8192)
        assert await model.discover_context_window() is None
        assert model.context_window == 8192


async def test_an_unreachable_server_keeps_the_default() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=request)

    async with httpx.AsyncClient(transport=httpx.MockTransport(refuse)) as client:
        assert await server_context_window(client, "http://127.0.0.1:9/v1", "x") is None


async def test_the_served_models_size_comes_from_its_meta_else_its_name() -> None:
    llama_cpp = {"data": [{"id": "local", "meta": {"n_params": 1_711_376_384, "n_ctx_train": 8192}}]}
    async with client_for({"/v1/models": llama_cpp}) as client:
        model = OpenAIModel("local", "http://127.0.0.1:8080/v1", client=client)
        assert await model.discover_parameters() == 1_711_376_384 and model.parameters == 1_711_376_384
    named = {"data": [{"id": "/models/SmolLM2-135M-Instruct.Q4_1.gguf", "owned_by": "me"}]}
    async with client_for({"/v1/models": named}) as client:
        assert await server_parameters(client, "http://127.0.0.1:8000/v1", "smollm2") == 135_000_000
    async with client_for({"/v1/models": {"data": [{"id": "gpt-4o"}]}}) as client:
        model = OpenAIModel("gpt-4o", "http://127.0.0.1:9000/v1", client=client)
        assert await model.discover_parameters() is None and model.parameters is None  # Q4_1, 4o: no size
