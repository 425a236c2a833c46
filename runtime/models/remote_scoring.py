"""Scoring candidate replies on an OpenAI-compatible server that reports log-probabilities.

A chat endpoint reports the log-probabilities of what it generates, not of
given text; so each candidate is made the generated text. The candidate is
split by the server's own tokenizer (`POST /extras/tokenize` on
llama-cpp-python's server, `POST /tokenize` on llama.cpp's), then one request
a candidate, `POST /chat/completions`, with
- the same `messages`, so the server applies the model's own chat template
  (the prompt a generation would see, as the llama backend scores after);
- a `grammar` of token references (`<[id]>`) that admits exactly those
  tokens and one space after them: the reply is the candidate as its
  tokenizer splits it, not another spelling of the same text;
- `temperature` 0, `logprobs` and `top_logprobs`.

The logprobs a server reports are the model's, before the grammar (which
acts in the sampler, on a copy of the logits): each candidate token's
log-probability is the one the llama backend computes for the same GGUF.
The space after the candidate stands where the turn could end: its
`top_logprobs` are the model's choices after the candidate, and the end of
the turn is the control token among them (text `""` in llama-cpp-python's
server, `<|im_end|>` and kin in others). llama-cpp-python keys those choices
by text, so several control tokens share one entry, which keeps the place of
the likeliest and the value of the last; `end_logprob` takes the value when
it fits that place, else the middle of the place's neighbours. When the end
is not among the `top_logprobs`, its log-probability is at most the least of
them and at most the mass they leave: the lower of the two stands for it (an
upper bound, so an unlikely end reads likelier than it is, never the reverse).

`RemoteScorer.probe` asks once whether the server does all this; a server
that has no tokenizer endpoint, rejects the fields, ignores the grammar or
sends no logprobs is a plain OpenAI endpoint, and the model does not score.
"""

from __future__ import annotations

import json
import math
from typing import Any

import anyio
import httpx

from loci.memory.errors import BackendError
from loci.runtime.models.base import Continuation
from loci.runtime.models.http_errors import TRANSIENT, translate_httpx

__all__ = ["TOP_LOGPROBS", "RemoteScorer", "Unfollowed", "continuation_from", "end_logprob", "grammar_for"]

TOP_LOGPROBS = 100
# How the end of a turn reads among the top log-probabilities: llama-cpp-python renders control tokens as "".
END_TEXTS = frozenset({"", "<|im_end|>", "<|eot_id|>", "<|end|>", "<end_of_turn>", "</s>", "<|endoftext|>"})
AFTER = " "  # the one character after the candidate: its top choices are where the turn could end
PROBE = ([{"role": "user", "content": "Reply with one word."}], ["yes"])
# Where a server tokenizes text, and the body it takes: llama-cpp-python's, then llama.cpp's.
TOKENIZERS = (("/extras/tokenize", "input"), ("/tokenize", "content"))
SHOWN = 200


class Unfollowed(BackendError):
    """The server's reply is not the candidate it was made to generate, with log-probabilities."""


def grammar_for(tokens: list[int]) -> str:
    """A GBNF grammar whose only sentence is exactly `tokens`, then `AFTER`."""
    return "root ::= " + " ".join(f"<[{token}]>" for token in tokens) + f" {json.dumps(AFTER)}"


class RemoteScorer:
    """Scores candidates through one server's tokenizer and chat endpoint (see the module's docstring)."""

    def __init__(
        self,
        client: httpx.AsyncClient,
        base_url: str,
        model: str,
        headers: dict[str, str],
        *,
        retries: int = 3,
        backoff: float = 0.5,
    ) -> None:
        self.client = client
        self.retries = retries
        self.backoff = backoff
        self.base_url = base_url.rstrip("/")
        self.root = self.base_url.removesuffix("/v1")
        self.url = f"{self.base_url}/chat/completions"
        self.model = model
        self.headers = headers
        self._tokenizer: tuple[str, str] | None = None
        self._prefix: list[int] = []  # what the tokenizer puts before any text (a BOS), taken off

    async def probe(self) -> bool:
        """Whether the server tokenizes, follows a token grammar and reports log-probabilities."""
        for path, field in TOKENIZERS:
            self._tokenizer = (f"{self.root}{path}", field)
            try:
                self._prefix = await self._tokenize("", strip=False)
                await self.score(*PROBE, strict=True)
            except BackendError:
                continue
            return True
        self._tokenizer = None
        return False

    async def score(
        self, messages: list[dict[str, str]], candidates: list[str], *, strict: bool = False
    ) -> list[Continuation]:
        """Each candidate's `Continuation`. One the server would not generate as given (a text holding a control
        token's name) scores as impossible, as an empty one does, unless `strict`; a failed exchange raises."""
        scored: list[Continuation] = []
        for candidate in candidates:
            tokens = await self._tokenize(candidate) if candidate else []
            try:
                if not tokens:
                    raise Unfollowed(f"{candidate!r} has no tokens")
                body = await self._post(self.url, self._body(messages, tokens))
                scored.append(continuation_from(body, candidate, len(tokens), self.url))
            except Unfollowed:
                if strict:
                    raise
                scored.append(Continuation((), float("-inf")))
        return scored

    def _body(self, messages: list[dict[str, str]], tokens: list[int]) -> dict[str, Any]:
        return {
            "model": self.model,
            "messages": messages,
            "grammar": grammar_for(tokens),
            "max_tokens": len(tokens) + 1,
            "temperature": 0.0,
            "logprobs": True,
            "top_logprobs": TOP_LOGPROBS,
            "stream": False,
        }

    async def _tokenize(self, text: str, *, strip: bool = True) -> list[int]:
        if self._tokenizer is None:
            raise BackendError(f"{self.base_url} has no tokenizer Loci knows")
        url, field = self._tokenizer
        body = await self._post(url, {field: text})
        tokens = body.get("tokens") if isinstance(body, dict) else None
        if not isinstance(tokens, list) or not all(isinstance(token, int) for token in tokens):
            raise BackendError(f"{url} sent no tokens")
        if strip and self._prefix and tokens[: len(self._prefix)] == self._prefix:
            tokens = tokens[len(self._prefix) :]
        return tokens

    async def _post(self, url: str, body: dict[str, Any]) -> Any:
        """One exchange, tried again (with backoff) on what another attempt may fix, as generation is: a
        timeout, a lost connection, a 5xx. A busy server finishes the first attempt's prompt meanwhile, so the
        next one finds it in its cache."""
        for attempt in range(self.retries + 1):
            try:
                with translate_httpx(url):
                    response = await self.client.post(url, json=body, headers=self.headers)
            except TRANSIENT:
                if attempt == self.retries:
                    raise
            else:
                if response.status_code < 500 or attempt == self.retries:
                    break
            await anyio.sleep(self.backoff * 2**attempt)
        if response.status_code >= 400:
            raise BackendError(f"{url} answered {response.status_code}: {response.text.strip()[:SHOWN]}")
        try:
            return response.json()
        except ValueError as exc:
            raise BackendError(f"{url} sent a malformed reply") from exc


def continuation_from(body: Any, candidate: str, count: int, url: str) -> Continuation:
    """The candidate's `Continuation` from a chat completion that generated its `count` tokens and a space;
    `Unfollowed` when the reply is something else, or carries no log-probabilities."""
    try:
        choice = body["choices"][0]
        text = choice["message"]["content"]
        content = choice["logprobs"]["content"]
        entries = [(float(e["logprob"]), e.get("top_logprobs") or []) for e in content]
    except (KeyError, IndexError, TypeError, ValueError) as exc:
        raise Unfollowed(f"{url} sent no log-probabilities for a scored reply") from exc
    if text != candidate + AFTER or len(entries) != count + 1:
        raise Unfollowed(f"{url} did not follow the grammar: it replied {text[:80]!r} for {candidate[:80]!r}")
    top = [(str(t.get("token")), float(t.get("logprob"))) for t in entries[-1][1] if isinstance(t, dict)]
    return Continuation(tuple(logprob for logprob, _ in entries[:-1]), end_logprob(top))


def end_logprob(top: list[tuple[str, float]]) -> float:
    """The log-probability of the turn ending, from the top choices at that place (highest first)."""
    if len(top) > 1 and top[-1][0] == AFTER and top[-1][1] > top[-2][1]:
        top = top[:-1]  # llama-cpp-python appends the generated token when it is not among the top
    values = [logprob for _, logprob in top]
    place = next((i for i, (token, _) in enumerate(top) if token in END_TEXTS), None)
    if place is None:
        left = 1.0 - sum(math.exp(value) for value in values)
        return min(min(values, default=0.0), math.log(left) if left > 1e-12 else -27.6)
    value = values[place]
    lower = values[place + 1] if place + 1 < len(values) else value
    if value >= lower:
        return value
    if place == 0:
        left = 1.0 - sum(math.exp(v) for i, v in enumerate(values) if i != place)
        return max(lower, math.log(left)) if left > 1e-12 else lower
    return (values[place - 1] + lower) / 2
