"""The regions carry the question, the recalled notes and the shown lines as fields, filled as the prompt is built."""

from __future__ import annotations

from loci.memory.context.store import ContextStore
from loci.memory.engines.sqlite.store import Store
from loci.runtime.prompt.fit import number_lines
from loci.runtime.prompt.regions import Observation, Regions
from loci.runtime.prompt.shown import ShownLine
from loci.runtime.prompt.window import Window


def words(text: str) -> int:
    return len(text.split())


async def test_the_question_and_its_notes_are_two_fields_the_task_shows_together(store: Store) -> None:
    notes = '<stored-notes source="loci">\n- mem:2: the shed opens at dawn\n</stored-notes>'
    regions = Regions(" When does the shed open? ", [], [], Window(ContextStore(store, words), words), notes=notes)
    assert regions.question == "When does the shed open?" and regions.notes == notes
    assert regions.task == f" When does the shed open? \n\n{notes}"
    assert regions.render()["task"] == f"Task: {regions.task}"


async def test_the_documents_are_typed_lines_and_the_prompt_shows_them_numbered(store: Store) -> None:
    contexts = ContextStore(store, words)
    doc = await contexts.add_text("doc", "ports.py", "POP3_PORT = 110\nPOP3_SSL_PORT = 995")
    documents = number_lines(doc, "POP3_PORT = 110\nPOP3_SSL_PORT = 995")
    assert list(documents.rows()) == [
        ShownLine(doc.id, 1, "POP3_PORT = 110"),
        ShownLine(doc.id, 2, "POP3_SSL_PORT = 995"),
    ]
    regions = Regions("Which port?", [], [doc], Window(contexts, words), documents=documents)
    rendered = regions.render()["task"]
    assert f"{doc.id} ports.py (lines 1-2):\n1| POP3_PORT = 110\n2| POP3_SSL_PORT = 995" in rendered
    assert [row.text for row in regions.shown().rows()] == ["POP3_PORT = 110", "POP3_SSL_PORT = 995"]


async def test_a_tool_result_is_read_into_rows_once_as_it_enters(store: Store) -> None:
    head = "doc:4 lines 9-9:\n9| TIMEOUT = 30"
    observation = Observation("obs:1", "context_read", head, 8, False, False)
    regions = Regions("What is TIMEOUT?", [], [], Window(ContextStore(store, words), words), observation=observation)
    assert list(regions.shown().rows()) == [ShownLine("doc:4", 9, "TIMEOUT = 30")]
    assert regions.material(task=False).endswith(head)  # the text the model read, as it read it
