"""Deciding one turn: ask the model until its reply is a valid action, a bounded number of times.

`Decider.decide` is a pipeline of small layers, one concern each, as httpx's
`send -> _send_handling_auth -> ... -> _send_single_request`:

    decide        the retry loop: a rejected reply goes back with its reason
    _attempt      one try: ask for an action, and for an answer check it
    _ask_action   budget the prompt, ask under the action schema, validate   (runtime.prompt.build,
                  runtime.loop.action, runtime.loop.turn)
    _write        the answer in plain words, when the action only decided to answer
    _check        clean the answer; what is wrong with it (runtime.reading.answers)
    _ground       whether it may say `done` on the lines shown (runtime.reading.judge.judge: the one check,
                  pure, on the regions' typed lines and fields; again with the lines it cites)
    _settle       the evidence, or the best line quoted instead, and the reason
    _ask          one model call, charged to the run's ledger

Each layer that changes the answer (written, extracted, cleaned, its evidence found, the best line
quoted instead) puts a new `Action` on the try's step; none rewrites the model's action in place.

A reply that fails a check goes back to the model with the reason, up to
`max_retries` times: a constrained action at a little temperature (at 0 it
would repeat itself), a free-text answer at 0 (the reason shown changes it).
In `AnswerStyle.TEXT` the action only decides to answer, and a second,
bounded call without a schema writes the answer in plain words on the same
prompt prefix (so a local model reuses its KV cache). Every answer is first
cleaned (`runtime.reading.answers.clean_answer`: cut at its first repeated
sentence, the prompt's own sentences dropped).

An answer is sent back once, with the reason, when it is not an answer
(empty, cut off, the prompt's own words), or when it is not grounded: a
name, number, identifier or quoted phrase of it is on no line shown
(`runtime.reading.judge.judge`, by `runtime.reading.answers.ungrounded`); the second ask shows the best lines for the
task in the reason. A reading run (a small model answering from the documents
whole or the lines found, in one call capped at `READ_TOKENS`, as plain
retrieval caps it) writes no free text when a shown line holds the kind of
value asked (a date, the value of a name the question asks about, an
option, an exception, a field's value: `runtime.reading.spans`): its answer
is that span, the one the model finds likeliest among several, citing its
line, and it passes the same checks (when it fails them it stays the
answer, `partial`, with the reason). A
reading run is never sent back: on the real-file set each of its 11 second answers
rambled about the lines, and each cost a second call; the lines it found
are its better second try. An answer with no claim of its own beyond the task's is never `done`
(`runtime.reading.values.own_claims`), nor is a number a later line about the
task changes (`runtime.reading.values.superseded`), nor a value that is not
the one a shown line assigns to the name asked about
(`runtime.reading.values.not_the_value`). If the next answer is no better, it is `partial` and
the reason names what no line holds: when some of its claims stand, the
answer keeps the model's words and cites the line shown that holds them;
when none does, the run answers with the best line of the documents for
the task instead, quoted with its id (`runtime.reading.look.quote_lines`).
An answer is never the prompt, and never `done` on a claim no line holds. Evidence the
model cites must exist; when the run has documents, an answer that cites
none gets the document line its claims or words are on
(`runtime.reading.answers.locate_evidence`), or the reason that it has none.
Every call is charged to the run's one token account, its ledger, which its
children and note calls charge too; the run's `tokens` are read from it
(`runtime.loop.agent`), whether it finishes, fails or is cancelled.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Any

from loci.memory.context.store import ContextStore
from loci.memory.errors import ModelBehaviorError
from loci.memory.graph.quoted import NOTICE
from loci.runtime.loop.action import Action, InvalidAction, action_schema, parse_action
from loci.runtime.loop.records import Limits
from loci.runtime.loop.turn import FinalAnswer, ToolCall, TurnRules, check_answer_evidence, check_state, trace_of
from loci.runtime.models.base import Model, Reply, Request, can_score
from loci.runtime.models.ledger import Ledger
from loci.runtime.prompt.build import Prompt, RegionSizes, build_prompt
from loci.runtime.prompt.regions import EXAMPLE_TEXTS, AnswerStyle, Regions, system_text
from loci.runtime.prompt.shown import Lines, ShownLine
from loci.runtime.reading.answers import (
    answer_problem,
    clean_answer,
    complete_sentences,
    locate_evidence,
    supporting_line,
)
from loci.runtime.reading.evidence import Cited, check_evidence
from loci.runtime.reading.judge import Shown, judge
from loci.runtime.reading.look import Line, best_lines, quote_lines
from loci.runtime.reading.spans import answer_kind, candidate_spans, choose_span
from loci.runtime.reading.values import own_claims

__all__ = ["ANSWER_TOKENS", "INSTRUCTIONS", "READ_ANSWER", "READ_TOKENS", "Decider"]

RETRY_TEMPERATURE = 0.7
ANSWER_TOKENS = 96
READ_TOKENS = 48  # a reading run's answer is a few words: capped as plain retrieval caps it
WRITE_ANSWER = (
    "Task: {task}\nWrite the answer to the task now, in plain words, from the documents. Write only the answer."
)
# A reading run asks as plain retrieval would (`runtime.loop.state`): the lines, then the question.
READ_ANSWER = "Answer the question from the lines above, in a few words.\nQuestion: {task}\nAnswer:"
INSTRUCTIONS = (
    WRITE_ANSWER.format(task=""),
    READ_ANSWER.format(task=""),
    "This is your last turn: answer the task now.",
)


@dataclass
class _Try:
    """One turn's tries so far."""

    retries: int = 0
    sent_back: bool = False
    started: float = field(default_factory=time.monotonic)


@dataclass
class Decider:
    """Asks for one turn's action on behalf of a run; charges every call to the run's account."""

    model: Model
    contexts: ContextStore
    sizes: RegionSizes
    limits: Limits
    ledger: Ledger
    style: AnswerStyle
    documents: list[str]  # the ids an answer's evidence is looked for in

    async def decide(self, regions: Regions, turn: int, rules: TurnRules) -> FinalAnswer | ToolCall:
        tried = _Try()
        while True:
            try:
                step = await self._attempt(regions, rules, tried)
            except InvalidAction as exc:
                tried.retries += 1
                if tried.retries > self.limits.max_retries:
                    raise ModelBehaviorError(
                        f"turn {turn}: the model's reply was invalid {tried.retries} times; last: {exc}"
                    ) from exc
                regions.error = str(exc)
                continue
            regions.error = None
            return self._record(turn, step, tried)

    async def _attempt(self, regions: Regions, rules: TurnRules, tried: _Try) -> _Step:
        """One try: the action; for an answer, its text checked and grounded, or an `InvalidAction` to send back."""
        last_try = tried.retries >= self.limits.max_retries
        step = await self._ask_action(regions, rules, tried.retries, last_try=last_try)
        if not step.action.is_answer:
            return step
        await self._write(step, regions, tried.retries)
        problem = self._check(step, regions)
        grounding = False
        if problem is None:
            problem = await self._ground(step, regions)
            grounding = problem is not None
        # A run reading the lines found is not sent back: its second answer, with the best lines in the reason,
        # rambled about the lines, and the lines it then quotes are its better try. One reading the documents
        # whole is sent back once, as a run shown them whole always was.
        # An answer extracted from a line is not sent back either: asked again, the same line gives the same spans.
        may_send_back = not tried.sent_back and not last_try and not regions.looked and not step.extracted
        if problem and may_send_back:
            tried.sent_back = True
            raise InvalidAction(await self._with_best_lines(problem, regions) if grounding else problem)
        await self._settle(step, regions, problem, last_try=last_try)
        return step

    async def _ask_action(self, regions: Regions, rules: TurnRules, retries: int, *, last_try: bool) -> _Step:
        """The model's action under the schema, parsed and its state held to size; with answers as text and no
        tool allowed there is nothing to decide, and the answer is asked for at once."""
        text_answer = self.style is AnswerStyle.TEXT
        if text_answer and not (rules.allow_tools and rules.tools):
            return _Step(Action(state=regions.state, answer=""))
        allow = {"allow_tools": rules.allow_tools, "allow_answer": rules.allow_answer}
        schema = action_schema(rules.tools, **allow, text_answer=text_answer)
        prompt = build_prompt(regions.render(**allow, forced=rules.forced), self.sizes, self.model.count_tokens)
        reply = await self._ask(prompt.messages, schema, self.sizes.reply, retries)
        action = parse_action(reply.text, rules.tools, **allow, text_answer=text_answer)
        cut = check_state(action, self.sizes.state, self.model.count_tokens, last_try=last_try)
        return _Step(action, prompt, reply, state_cut=cut)

    async def _write(self, step: _Step, regions: Regions, retries: int) -> None:
        """Write the answer as free text when the action only decided to answer (a second, bounded call)."""
        if self.style is not AnswerStyle.TEXT or step.action.answer:
            return
        regions.state = step.action.state
        prompt = build_prompt(
            regions.render(allow_tools=False, instruction=self._instruction(regions)),
            self.sizes,
            self.model.count_tokens,
        )
        # a run without tools (reading, or shown its documents whole) answers with a line's span when one fits
        if not regions.tools and await self._extract(step, regions, prompt):
            step.prompt = step.prompt or prompt
            step.reply = step.reply or Reply(step.action.answer or "", sum(prompt.tokens.values()), 0)
            return
        cap = min(READ_TOKENS if regions.reading else ANSWER_TOKENS, self.sizes.reply)
        reply = await self._ask(prompt.messages, None, cap, retries)
        text = reply.text.strip()
        if reply.completion_tokens >= cap:  # capped: keep its whole sentences, or say it was cut off
            text, step.cut_off = complete_sentences(text) or text, not complete_sentences(text)
        step.action = replace(step.action, answer=text)
        step.prompt, step.reply = step.prompt or prompt, step.reply or reply

    async def _extract(self, step: _Step, regions: Regions, prompt: Prompt) -> bool:
        """When a shown line holds the kind of value asked (a date, a name's value, an option, an exception, a
        field's value: `runtime.reading.spans`), the answer is its span that the model finds likeliest as its
        reply (a lone one as it is; the first, on a model that cannot score), citing its line; False when none
        does (or among dates, on a model that cannot score), and the answer is written as free text."""
        if not self.documents:
            return False
        documents = [obj.source or obj.name for obj in regions.objects]
        spans = candidate_spans(regions.shown(), regions.question, documents=documents)
        if len(spans) > 1 and not can_score(self.model):
            # a model that cannot score takes the first of a line's value, option or exception, as ranked; among
            # a line's dates it writes free text, as it did before spans
            spans = [] if answer_kind(regions.question) == "date" else spans[:1]
        if not spans:
            return False
        span = await choose_span(self.model, prompt.messages, spans)
        if span is None:
            return False
        if len(spans) > 1:
            self.ledger.charge(sum(prompt.tokens.values()) + sum(self.model.count_tokens(s.text) for s in spans))
        step.action = replace(
            step.action, answer=span.text, evidence=[{"id": span.id, "start": span.number, "end": span.number}]
        )
        step.extracted, step.guessed = True, span.guessed
        return True

    def _check(self, step: _Step, regions: Regions) -> str | None:
        """The answer cleaned of the prompt's own words and repeats; what is wrong with it, or None."""
        frame = "\n".join([system_text(regions.tools, self.style), *EXAMPLE_TEXTS, *INSTRUCTIONS, NOTICE])
        frame += "\n" + regions.render()["observation"]
        material = regions.material()
        answer = step.action.answer
        step.action = replace(step.action, answer=clean_answer(answer or "", frame=frame, material=material) or answer)
        task = regions.question if regions.reading else ""  # a small model reading tends to echo the question
        said = step.action.answer or ""
        return answer_problem(said, frame=frame, material=material, cut_off=step.cut_off, task=task)

    async def _ground(self, step: _Step, regions: Regions) -> str | None:
        """Why the answer may not say `done` on the lines shown, or None (the one check:
        `runtime.reading.judge.judge`)."""
        if not self.documents:
            return None  # without documents, there is nothing an answer must rest on
        answer = step.action.answer or ""
        # lines are weighed for the question without the words naming its documents (`Regions.asked`)
        lines = regions.shown()
        # the line a span was read off is about the question, unless it was a guess (a file's first person)
        chosen = tuple(_read_off(lines, step.action.evidence)) if step.extracted and not step.guessed else ()
        shown = Shown(lines, regions.task, ranked=regions.asked_task, asked=regions.asked, chosen=chosen)
        verdict = judge(answer, shown)
        if verdict.missing and (cited := await self._cited(step, regions.asked_task)):
            # Lines read in an earlier turn have left the prompt (the window keeps a line a turn): the answer
            # stands on the lines it cites, or that the runtime finds its claims on, when they hold every claim.
            verdict = judge(answer, shown.citing(cited))
        return verdict.reason

    async def _cited(self, step: _Step, task: str) -> tuple[ShownLine, ...]:
        """The lines the answer cites, else the document line that holds its claims (which then becomes its
        evidence, so `_evidence` does not look for it again); none when there are none."""
        if not step.action.evidence:
            found = await locate_evidence(self.contexts, step.action.answer or "", self.documents, task)
            step.action = replace(step.action, evidence=found)
        try:
            spans = await check_evidence(self.contexts, step.action.evidence)
        except InvalidAction:
            return ()  # evidence that does not exist is sent back by the evidence check, not here
        return tuple(
            ShownLine(span.id, number, line)
            for span in spans
            for number, line in enumerate(span.text.split("\n"), span.start)
        )

    async def _with_best_lines(self, problem: str, regions: Regions) -> str:
        lines = await best_lines(self.contexts, regions.asked, self.documents, k=3)
        shown = quote_lines(lines, most=3)
        return f"{problem}; answer only with what these lines say:\n{shown}" if shown else problem

    async def _settle(self, step: _Step, regions: Regions, problem: str | None, *, last_try: bool) -> None:
        """The answer's evidence and reason: what it cites or where its words are, or the best line instead."""
        if problem and step.extracted:  # a span stays the answer, on the line it is on, `partial`
            step.evidence, _ = await check_answer_evidence(self.contexts, step.action, last_try=True)
            step.reason = f"{problem}; the answer is the span of the cited line that the model finds likeliest"
        elif problem and (self.documents or "prompt" in problem):  # never the prompt; the best line instead
            step.evidence, step.reason = await self._found_lines(step, regions, problem)
        elif problem:
            step.reason = f"not an answer: {problem}"
        else:
            step.evidence, step.reason = await self._evidence(step, regions.asked_task, last_try=last_try)
            # a span of a line is a claim of its own (`Litigation`, the title of a section), unless it only restates
            # the task, which `_check` says
            answer = step.action.answer or ""
            own = (step.extracted and any(c.isalnum() for c in answer)) or own_claims(answer, regions.question)
            if step.reason is None and self.documents and not own:
                step.reason = "no claim of its own: the answer names no value, name, date or phrase the task does not"

    def _record(self, turn: int, step: _Step, tried: _Try) -> FinalAnswer | ToolCall:
        assert step.prompt is not None and step.reply is not None
        trace = trace_of(turn, step.action, step.prompt, step.reply, tried.retries, time.monotonic() - tried.started)
        trace.state_cut = step.state_cut
        if not step.action.is_answer:
            return ToolCall(trace)
        return FinalAnswer(trace, step.evidence, step.reason)

    async def _ask(self, messages: list[dict[str, str]], schema: dict | None, max_tokens: int, retries: int) -> Reply:
        purpose = "act" if schema is not None else "answer"
        # A constrained action retried at temperature 0 repeats itself, so it samples a little; a free-text
        # answer is retried with the problem shown, which changes it, and sampling makes a small model ramble.
        temperature = RETRY_TEMPERATURE if retries and schema is not None else 0.0
        reply = await self.model.generate(
            Request(messages, schema=schema, max_tokens=max_tokens, temperature=temperature, purpose=purpose)
        )
        self.ledger.charge(reply.prompt_tokens + reply.completion_tokens)
        return reply

    @staticmethod
    def _instruction(regions: Regions) -> str:
        return READ_ANSWER.format(task=regions.question) if regions.reading else WRITE_ANSWER.format(task=regions.task)

    async def _found_lines(self, step: _Step, regions: Regions, problem: str) -> tuple[list[Cited], str]:
        """What the run answers with when the model's answer cannot stand: the line shown that holds what of
        it does stand, else the best line for the task, quoted with its id."""
        said = step.action.answer or ""
        spot = supporting_line(said, regions.shown(), regions.asked_task) if "grounded" in problem else None
        if spot:
            lines = [Line(spot[0], spot[1], spot[2], 0.0)]
        elif self.documents:
            lines = await best_lines(self.contexts, regions.asked, self.documents, k=1)
        else:
            lines = []
        cited = [{"id": line.id, "start": line.number, "end": line.number} for line in lines]
        which = "the line that holds what of it stands" if spot else "the best line"
        if spot:  # some of the model's answer stands: it stays, `partial`, the line that holds that cited beside it
            step.action = replace(step.action, evidence=cited)
            evidence, _ = await check_answer_evidence(self.contexts, step.action, last_try=True)
            return evidence, f"{problem}; {which} is cited"
        step.action = replace(
            step.action, answer=quote_lines(lines, most=1) or "(no answer: nothing found)", evidence=cited
        )
        evidence, _ = await check_answer_evidence(self.contexts, step.action, last_try=True)
        return evidence, f"not an answer: {problem}; {which} is quoted instead"

    async def _evidence(self, step: _Step, task: str, *, last_try: bool) -> tuple[list[Cited], str | None]:
        """The cited evidence, checked; without any, the document line the answer's words are on."""
        evidence, reason = await check_answer_evidence(self.contexts, step.action, last_try=last_try)
        if evidence or reason or not self.documents:
            return evidence, reason  # without documents, there is nothing an answer must rest on
        found = await locate_evidence(self.contexts, step.action.answer or "", self.documents, task)
        if not found:
            return [], "no evidence: the answer's words are on no line of the documents"
        step.action = replace(step.action, evidence=found)
        return await check_answer_evidence(self.contexts, step.action, last_try=True)


@dataclass
class _Step:
    """One try's action, the prompt and reply that made it, and what the checks found."""

    action: Action
    prompt: Prompt | None = None
    reply: Reply | None = None
    state_cut: bool = False
    cut_off: bool = False
    extracted: bool = False  # the answer is a span of a line shown, chosen by the model's likelihood
    guessed: bool = False  # that line was chosen for want of one about the question (`Span.guessed`)
    evidence: list[Cited] = field(default_factory=list)
    reason: str | None = None


def _read_off(lines: Lines, evidence: list[dict[str, Any]]) -> list[ShownLine]:
    """The shown lines a span answer cites (its evidence's document and line)."""
    cited = {(span.get("id"), span.get("start")) for span in evidence}
    return [row for row in lines.rows() if (row.document, row.number) in cited]
