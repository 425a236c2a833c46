"""Scoring candidates through an OpenAI-compatible server, against replies staged by `httpx.MockTransport`."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from loci.memory.errors import BackendError
from loci.runtime.models.base import can_score
from loci.runtime.models.openai import OpenAIModel
from loci.runtime.models.remote_scoring import end_logprob, grammar_for

URL = "http://mock.test/v1"
ASK = [{"role": "user", "content": "What is the value of BPF?"}]
VOCABULARY = {"": [], "yes": [7], "53": [5, 3], "2": [2]}


def scored(tokens: list[tuple[str, float]], after: list[tuple[str, float]]) -> dict[str, Any]:
    """A chat completion as llama-cpp-python's server sends it for a grammar-forced candidate and a space."""
    content = [{"token": t, "logprob": lp, "top_logprobs": []} for t, lp in tokens]
    content.append({"token": " ", "logprob": -4.0, "top_logprobs": [{"token": t, "logprob": lp} for t, lp in after]})
    text = "".join(t for t, _ in tokens) + " "
    return {"choices": [{"message": {"role": "assistant", "content": text}, "logprobs": {"content": content}}]}


YES = scored([("yes", -0.2)], [("", -0.1)])


class Server:
    """Tokenizes at `tokenize` (llama-cpp-python's path by default) and answers chats with the next reply."""

    def __init__(
        self, *replies: httpx.Response | Callable[[httpx.Request], httpx.Response], tokenize: str = "/extras/tokenize"
    ) -> None:
        self.replies = list(replies)
        self.tokenize = tokenize
        self.chats: list[dict[str, Any]] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        if request.url.path == self.tokenize:
            return httpx.Response(200, json={"tokens": VOCABULARY[body.get("input", body.get("content"))]})
        if request.url.path != "/v1/chat/completions":
            return httpx.Response(404, json={"detail": "Not Found"})
        self.chats.append(body)
        reply = self.replies.pop(0)
        return reply(request) if callable(reply) else reply

    def model(self) -> OpenAIModel:
        return OpenAIModel("local", URL, client=httpx.AsyncClient(transport=httpx.MockTransport(self)), backoff=0.0)


def test_the_grammar_admits_exactly_the_tokens_and_one_space() -> None:
    assert grammar_for([5, 3]) == 'root ::= <[5]> <[3]> " "'


def test_the_end_of_the_turn_is_the_control_token_among_the_choices_after_the_candidate() -> None:
    assert end_logprob([("\n", -1.0), ("", -2.5), (" is", -3.0)]) == -2.5
    assert end_logprob([("\n", -1.0), ("<|im_end|>", -2.5), (" is", -3.0)]) == -2.5
    # Several control tokens under one text: the place is the likeliest's, the value the last's.
    assert end_logprob([("\n", -1.0), ("", -9.0), (" is", -1.2)]) == pytest.approx(-1.1)
    # Not among them: at most the least of them, and at most the mass they leave.
    assert end_logprob([("a", -1.0), ("b", -2.0)]) == -2.0
    assert end_logprob([("a", math.log(0.5)), ("b", math.log(0.45))]) == pytest.approx(math.log(0.05))
    # The generated token, appended after the top when it is not among them, is not one of the choices.
    assert end_logprob([("\n", -1.0), ("", -2.0), (" ", -0.5)]) == -2.0


async def test_a_server_that_reports_logprobs_scores_each_candidate_from_the_forced_reply() -> None:
    first = httpx.Response(200, json=scored([("5", -2.0), ("3", -1.0)], [("", -0.5), ("\n", -1.5)]))
    second = httpx.Response(200, json=scored([("2", -1.5)], [(" *", -0.3), ("", -2.0)]))
    server = Server(httpx.Response(200, json=YES), first, second)
    async with server.model() as model:
        assert not can_score(model)
        assert await model.discover_scoring() is True and can_score(model)
        result = await model.score(ASK, ["53", "2", ""])
    assert [r.logprobs for r in result] == [(-2.0, -1.0), (-1.5,), ()]
    assert [r.end for r in result] == [-0.5, -2.0, float("-inf")]
    asked = server.chats[1]
    assert asked["messages"] == ASK and asked["grammar"] == 'root ::= <[5]> <[3]> " "'
    assert asked["temperature"] == 0.0 and asked["max_tokens"] == 3
    assert asked["logprobs"] is True and asked["top_logprobs"] > 0


async def test_llama_servers_tokenizer_is_found_where_llama_cpp_pythons_is_not() -> None:
    server = Server(httpx.Response(200, json=YES), tokenize="/tokenize")
    async with server.model() as model:
        assert await model.discover_scoring() is True


async def test_a_plain_openai_endpoint_does_not_score() -> None:
    refused = httpx.Response(400, json={"error": {"message": "Unrecognized request argument supplied: grammar"}})
    server = Server(refused, refused, tokenize="/nowhere")
    async with server.model() as model:
        assert await model.discover_scoring() is False
        assert not can_score(model)
        with pytest.raises(BackendError, match="cannot score"):
            await model.score(ASK, ["53"])
    assert server.chats == []  # without a tokenizer there is nothing to ask the chat endpoint


async def test_a_server_that_ignores_the_grammar_does_not_score() -> None:
    free = httpx.Response(200, json={"choices": [{"message": {"content": "Sure! Yes."}, "logprobs": None}]})
    async with Server(free, free).model() as model:
        assert await model.discover_scoring() is False


async def test_a_reply_that_is_not_the_candidate_scores_it_as_impossible_not_as_another() -> None:
    wrong = httpx.Response(200, json=scored([("5", -2.0)], [("", -0.5)]))
    async with Server(httpx.Response(200, json=YES), wrong).model() as model:
        await model.discover_scoring()
        [result] = await model.score(ASK, ["53"])
    assert result.logprobs == () and result.end == float("-inf")


async def test_a_busy_server_is_asked_again_and_one_that_stays_down_is_an_error() -> None:
    def slow(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("busy", request=request)

    answer = httpx.Response(200, json=scored([("5", -2.0), ("3", -1.0)], [("", -0.5)]))
    server = Server(httpx.Response(200, json=YES), slow, httpx.Response(503, json={"detail": "busy"}), answer)
    async with server.model() as model:
        await model.discover_scoring()
        [result] = await model.score(ASK, ["53"])
    assert result.logprobs == (-2.0, -1.0)
    down = httpx.Response(500, json={"detail": "boom"})
    async with Server(httpx.Response(200, json=YES), *[down] * 4).model() as model:
        await model.discover_scoring()
        with pytest.raises(BackendError, match="500"):
            await model.score(ASK, ["53"])
