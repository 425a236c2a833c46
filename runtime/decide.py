"""Deciding one turn: ask the model until its reply is a valid action, a bounded number of times.

    prompt   the regions, each cut to its size        (runtime.prompt.build)
    ask      one model call under the action schema   (runtime.models.base)
    check    parse, state size, answer text, evidence (runtime.action, runtime.turn, runtime.answers)

A reply that fails a check goes back to the model with the reason, up to
`max_retries` times: a constrained action at a little temperature (at 0 it
would repeat itself), a free-text answer at 0 (the reason shown changes it).
In `AnswerStyle.TEXT` the action only decides to answer, and a second,
bounded call without a schema writes the answer in plain words on the same
prompt prefix (so a local model reuses its KV cache). An answer that is not
an answer (empty, cut off, the prompt's own words) is sent back once; if
the next is no better, the run answers with the best-matching lines of the
documents instead, quoted with their ids (`runtime.look`), and says why it
is `partial`: an answer is never the prompt. Every answer is first cleaned
(`runtime.answers.clean_answer`: cut at its first repeated sentence, the
prompt's own sentences dropped).
Evidence the model cites must exist; when the run has documents, an answer
that cites none gets the document line its words are on
(`runtime.answers.locate_evidence`), or the reason that it has none.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from memory.context.store import ContextStore
from memory.errors import ModelBehaviorError
from runtime.action import Action, InvalidAction, action_schema, parse_action
from runtime.answers import answer_problem, clean_answer, complete_sentences, locate_evidence
from runtime.evidence import Cited
from runtime.look import best_lines, quote_lines
from runtime.models.base import Model, Reply, Request
from runtime.models.ledger import Ledger
from runtime.prompt.build import RegionSizes, build_prompt
from runtime.prompt.regions import EXAMPLE_TEXTS, AnswerStyle, Regions, system_text
from runtime.run import Limits, RunResult
from runtime.turn import FinalAnswer, ToolCall, TurnRules, check_answer_evidence, check_state, trace_of

__all__ = ["ANSWER_TOKENS", "INSTRUCTIONS", "READ_ANSWER", "Decider"]

RETRY_TEMPERATURE = 0.7
ANSWER_TOKENS = 96
WRITE_ANSWER = (
    "Task: {task}\nWrite the answer to the task now, in plain words, from the documents. Write only the answer."
)
# A reading run asks as plain retrieval would (`runtime.reading`): the lines, then the question.
READ_ANSWER = "Answer the question from the lines above, in a few words.\nQuestion: {task}\nAnswer:"
INSTRUCTIONS = (
    WRITE_ANSWER.format(task=""),
    READ_ANSWER.format(task=""),
    "This is your last turn: answer the task now.",
)


@dataclass
class Decider:
    """Asks for one turn's action on behalf of a run; charges every call to the run's ledger."""

    model: Model
    contexts: ContextStore
    sizes: RegionSizes
    limits: Limits
    ledger: Ledger
    style: AnswerStyle
    documents: list[str]  # the ids an answer's evidence is looked for in

    async def decide(self, regions: Regions, turn: int, rules: TurnRules, result: RunResult) -> FinalAnswer | ToolCall:
        text_answer = self.style is AnswerStyle.TEXT
        # With answers as text and no tool allowed, there is nothing to decide: ask for the answer at once.
        direct = text_answer and not (rules.allow_tools and rules.tools)
        allow = {"allow_tools": rules.allow_tools, "allow_answer": rules.allow_answer}
        schema = action_schema(rules.tools, **allow, text_answer=text_answer)
        retries, sent_back, started, state_cut = 0, False, time.monotonic(), False
        while True:
            last_try = retries >= self.limits.max_retries
            try:
                if direct:
                    prompt, reply, action = None, None, Action(state=regions.state, answer="")
                else:
                    prompt = build_prompt(
                        regions.render(**allow, forced=rules.forced), self.sizes, self.model.count_tokens
                    )
                    reply = await self._ask(prompt.messages, schema, self.sizes.reply, retries, result)
                    action = parse_action(reply.text, rules.tools, **allow, text_answer=text_answer)
                    state_cut = check_state(action, self.sizes.state, self.model.count_tokens, last_try=last_try)
                if action.is_answer:
                    problem, written = await self._answer_text(action, regions, result, retries)
                    prompt, reply = prompt or written[0], reply or written[1]
                    # a reading run does not send back: the lines it found are the better second try
                    if problem and not sent_back and not last_try and not regions.reading:
                        sent_back = True
                        raise InvalidAction(problem)
                    evidence, unverified = await self._evidence(action, last_try=last_try)
            except InvalidAction as exc:
                retries += 1
                if retries > self.limits.max_retries:
                    raise ModelBehaviorError(
                        f"turn {turn}: the model's reply was invalid {retries} times; last: {exc}"
                    ) from exc
                regions.error = str(exc)
                continue
            regions.error = None
            assert prompt is not None and reply is not None
            trace = trace_of(turn, action, prompt, reply, retries, time.monotonic() - started)
            trace.state_cut = state_cut
            if not action.is_answer:
                return ToolCall(trace)
            if problem and (self.documents or "prompt" in problem):  # never the prompt; the lines found instead
                evidence, unverified = await self._found_lines(action, regions.task, problem)
            elif problem:
                unverified = f"not an answer: {problem}"
            return FinalAnswer(trace, evidence, unverified)

    async def _ask(
        self, messages: list[dict[str, str]], schema: dict | None, max_tokens: int, retries: int, result: RunResult
    ) -> Reply:
        purpose = "act" if schema is not None else "answer"
        # A constrained action retried at temperature 0 repeats itself, so it samples a little; a free-text
        # answer is retried with the problem shown, which changes it, and sampling makes a small model ramble.
        temperature = RETRY_TEMPERATURE if retries and schema is not None else 0.0
        reply = await self.model.generate(
            Request(messages, schema=schema, max_tokens=max_tokens, temperature=temperature, purpose=purpose)
        )
        result.tokens += reply.prompt_tokens + reply.completion_tokens
        self.ledger.charge(reply.prompt_tokens + reply.completion_tokens)
        return reply

    async def _answer_text(
        self, action: Action, regions: Regions, result: RunResult, retries: int
    ) -> tuple[str | None, tuple]:
        """Write the answer as free text when the action only decided to answer; what is wrong with the
        answer (or None), and the prompt and reply of the text call (None, None without one)."""
        written: tuple = (None, None)
        cut_off = False
        if self.style is AnswerStyle.TEXT and not action.answer:
            regions.state = action.state
            prompt = build_prompt(
                regions.render(allow_tools=False, instruction=self._instruction(regions)),
                self.sizes,
                self.model.count_tokens,
            )
            cap = min(ANSWER_TOKENS, self.sizes.reply)
            reply = await self._ask(prompt.messages, None, cap, retries, result)
            text = reply.text.strip()
            if reply.completion_tokens >= cap:  # capped: keep its whole sentences, or say it was cut off
                text, cut_off = complete_sentences(text) or text, not complete_sentences(text)
            action.answer, written = text, (prompt, reply)
        system = system_text(regions.tools, self.style)
        frame = "\n".join([system, *EXAMPLE_TEXTS, *INSTRUCTIONS, regions.render()["observation"]])
        material = "\n".join([regions.task, regions.documents, regions.observation.head if regions.observation else ""])
        action.answer = clean_answer(action.answer or "", frame=frame, material=material) or action.answer
        text = action.answer or ""
        task = regions.task if regions.reading else ""  # a small model reading tends to echo the question
        problem = answer_problem(text, frame=frame, material=material, cut_off=cut_off, task=task)
        return problem, written

    @staticmethod
    def _instruction(regions: Regions) -> str:
        return (READ_ANSWER if regions.reading else WRITE_ANSWER).format(task=regions.task)

    async def _found_lines(self, action: Action, task: str, problem: str) -> tuple[list[Cited], str]:
        """What the run answers with when the model wrote no answer: the lines found, quoted with their ids."""
        lines = await best_lines(self.contexts, task, self.documents or None, k=2) if self.documents else []
        action.answer = quote_lines(lines, most=1) or "(no answer: nothing found)"
        action.evidence = [{"id": line.id, "start": line.number, "end": line.number} for line in lines]
        evidence, _ = await check_answer_evidence(self.contexts, action, last_try=True)
        return evidence, f"not an answer: {problem}; the lines found are quoted instead"

    async def _evidence(self, action: Action, *, last_try: bool) -> tuple[list[Cited], str | None]:
        """The cited evidence, checked; without any, the document line the answer's words are on."""
        evidence, reason = await check_answer_evidence(self.contexts, action, last_try=last_try)
        if evidence or reason or not self.documents:
            return evidence, reason  # without documents, there is nothing an answer must rest on
        action.evidence = await locate_evidence(self.contexts, action.answer or "", self.documents)
        if not action.evidence:
            return [], "no evidence: the answer's words are on no line of the documents"
        return await check_answer_evidence(self.contexts, action, last_try=True)
