"""Scoring continuations on a GGUF: the log-probability of each candidate answer after one prompt.

The prompt is formatted by the model's own chat template (as a chat
completion formats it, with the assistant's turn opened) and evaluated
once, reusing the longest prefix llama.cpp still holds in its KV cache;
then each candidate's tokens are decoded from that prefix in one batch that
asks for the logits of every position, so a candidate of n tokens costs one
decode of n tokens, and the prompt is never evaluated again. Each
candidate's score is the log-probability of each of its tokens and of the
end of the turn after it (`Continuation`).

This needs no `logits_all` at load: the batch asks for the logits of its own
positions, so generation keeps its one row of logits a token. Afterwards the
context holds the prompt again (`n_tokens` and the token record match the
KV cache), so the next generation on the same prefix reuses it.

It reaches into llama-cpp-python's `Llama` (`_ctx`, `_batch`, `input_ids`,
`n_tokens`): the public `create_completion(logprobs=...)` would need
`logits_all` for every call and would evaluate the prompt once per candidate.
"""

from __future__ import annotations

from typing import Any

from loci.runtime.models.base import Continuation

__all__ = ["chat_prompt_tokens", "score_continuations"]


def chat_prompt_tokens(llm: Any, messages: list[dict[str, str]]) -> list[int]:
    """The tokens a chat completion of `messages` would evaluate before its first reply token."""
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    template = llm.metadata.get("tokenizer.chat_template")
    if not template:
        prompt = "\n".join(m["content"] for m in messages) + "\n"
        return list(llm.tokenize(prompt.encode("utf-8"), add_bos=True, special=True))
    eos, bos = llm.token_eos(), llm.token_bos()
    formatter = Jinja2ChatFormatter(
        template=template,
        eos_token=llm._model.token_get_text(eos) if eos != -1 else "",
        bos_token=llm._model.token_get_text(bos) if bos != -1 else "",
    )
    result = formatter(messages=messages)
    return list(llm.tokenize(result.prompt.encode("utf-8"), add_bos=not result.added_special, special=True))


def score_continuations(llm: Any, messages: list[dict[str, str]], candidates: list[str]) -> list[Continuation]:
    """Each candidate's token log-probabilities after the chat prompt of `messages` (blocking; hold the lock)."""
    import numpy as np

    prompt = chat_prompt_tokens(llm, messages)
    end = _end_of_turn(llm)
    _evaluate_prompt(llm, prompt)
    first = _log_softmax(np.ctypeslib.as_array(llm._ctx.get_logits_ith(-1), shape=(llm.n_vocab(),)).copy())
    base = len(prompt)
    scored: list[Continuation] = []
    try:
        for candidate in candidates:
            tokens = list(llm.tokenize(candidate.encode("utf-8"), add_bos=False, special=False))
            if not tokens or base + len(tokens) >= llm.n_ctx():
                scored.append(Continuation((), float("-inf")))
                continue
            llm._ctx.kv_cache_seq_rm(-1, base, -1)
            llm._batch.set_batch(batch=tokens, n_past=base, logits_all=True)
            llm._ctx.decode(llm._batch)
            rows = np.ctypeslib.as_array(llm._ctx.get_logits(), shape=(len(tokens), llm.n_vocab())).copy()
            steps = [first, *(_log_softmax(row) for row in rows)]
            logprobs = tuple(float(steps[i][token]) for i, token in enumerate(tokens))
            scored.append(Continuation(logprobs, float(steps[-1][end])))
    finally:
        llm._ctx.kv_cache_seq_rm(-1, base, -1)
        llm.n_tokens = base
        llm._requires_eval = True  # the last logits are a candidate's: a generation on this prompt evaluates again
    return scored


def _evaluate_prompt(llm: Any, prompt: list[int]) -> None:
    """`prompt` in the KV cache, reusing the longest prefix it holds (at least the last token evaluated anew,
    so its logits are the prompt's)."""
    held = llm.input_ids[: llm.n_tokens]
    reuse = 0
    for a, b in zip(held, prompt[:-1], strict=False):
        if a != b:
            break
        reuse += 1
    llm.n_tokens = reuse
    llm.eval(prompt[reuse:])


def _end_of_turn(llm: Any) -> int:
    """The token that ends the assistant's turn: the template's `<|im_end|>` when it has one, else end-of-text."""
    ids = llm.tokenize(b"<|im_end|>", add_bos=False, special=True)
    return ids[0] if len(ids) == 1 else llm.token_eos()


def _log_softmax(logits: Any) -> Any:
    import numpy as np

    shifted = logits - logits.max()
    return shifted - np.log(np.exp(shifted).sum())
