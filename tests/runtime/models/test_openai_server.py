"""The openai backend against a real server: llama-cpp-python's, serving the bundled GGUF."""

from __future__ import annotations

import json

import anyio
import jsonschema
import pytest

from loci.runtime.models.base import Request
from loci.runtime.models.openai import OpenAIModel

pytestmark = pytest.mark.server

SCHEMA = {
    "type": "object",
    "properties": {"answer": {"type": "string", "maxLength": 40}},
    "required": ["answer"],
}
QUESTION = [
    {"role": "system", "content": "Answer in a few words."},
    {"role": "user", "content": "What is the capital of France?"},
]


async def test_replies_stream_from_a_real_server(llama_server: str) -> None:
    seen: list[str] = []
    async with OpenAIModel("smollm2", llama_server) as model:
        with anyio.fail_after(120):
            reply = await model.generate(Request(QUESTION, max_tokens=32, on_text=seen.append))
    assert len(seen) > 1
    assert reply.text.strip() and reply.text == "".join(seen)
    assert reply.prompt_tokens > 0 and reply.completion_tokens > 0 and reply.seconds > 0


async def test_structured_output_from_a_real_server_follows_the_schema(llama_server: str) -> None:
    async with OpenAIModel("smollm2", llama_server) as model:
        with anyio.fail_after(120):
            reply = await model.generate(Request(QUESTION, schema=SCHEMA, max_tokens=48))
        # llama-cpp-python's server rejects json_schema: the backend switched by itself.
        assert model.structured == "json_object"
    jsonschema.validate(json.loads(reply.text), SCHEMA)


async def test_forced_tool_call_from_a_real_server_follows_the_schema(llama_server: str) -> None:
    async with OpenAIModel("smollm2", llama_server, structured="tools") as model:
        with anyio.fail_after(120):
            reply = await model.generate(Request(QUESTION, schema=SCHEMA, max_tokens=48))
    jsonschema.validate(json.loads(reply.text), SCHEMA)
