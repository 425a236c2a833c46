"""Outlines by format: headings, definitions, keys, paragraphs and pages, each with its lines."""

from __future__ import annotations

from loci.memory.context.outline import Entry, build_outline


def numbered(text: str) -> list[tuple[int, str]]:
    return list(enumerate(text.splitlines(keepends=True), start=1))


def brief(entries: list[Entry]) -> list[tuple[str, int, int, int]]:
    return [(e.title, e.level, e.start, e.end) for e in entries]


def test_markdown_headings_with_ranges_ignoring_fenced_code() -> None:
    text = "# Intro\nhello\n## Setup\n```\n# not a heading\n```\nSecond\n------\ntext\n# End\nbye\n"
    outline = build_outline("markdown", numbered(text), 11)
    assert brief(outline.entries) == [("Intro", 1, 1, 9), ("Setup", 2, 3, 6), ("Second", 2, 7, 9), ("End", 1, 10, 11)]


def test_python_definitions_nested_via_ast() -> None:
    text = (
        "import os\n\n"
        "class Store:\n"
        "    def open(self):\n"
        "        pass\n\n"
        "    @property\n"
        "    def path(self):\n"
        "        return 1\n\n"
        "async def main():\n"
        "    def inner():\n"
        "        pass\n"
    )
    outline = build_outline("python", numbered(text), 13)
    assert brief(outline.entries) == [
        ("class Store", 1, 3, 9),
        ("def open", 2, 4, 5),
        ("def path", 2, 7, 9),
        ("async def main", 1, 11, 13),
        ("def inner", 2, 12, 13),
    ]
    assert [e.kind for e in outline.entries] == ["class", "function", "function", "function", "function"]


def test_broken_python_falls_back_to_regex() -> None:
    text = "def ok():\n    pass\n\nclass Half(:\n    def method(self):\n        pass\n"
    outline = build_outline("python", numbered(text), 6)
    assert brief(outline.entries) == [("def ok", 1, 1, 3), ("class Half", 1, 4, 6), ("def method", 2, 5, 6)]


def test_javascript_and_typescript_definitions() -> None:
    text = (
        "export async function load(path) {\n"
        "  return 1;\n"
        "}\n"
        "export class Store {\n"
        "  constructor(db) {\n"
        "    if (db) {\n"
        "    }\n"
        "  }\n"
        "  async read(id: string): Promise<void> {\n"
        "  }\n"
        "}\n"
        "const add = (a, b) => a + b;\n"
        "interface Options {\n"
        "}\n"
    )
    outline = build_outline("typescript", numbered(text), 14)
    assert brief(outline.entries) == [
        ("function load", 1, 1, 3),
        ("class Store", 1, 4, 11),
        ("fn constructor", 2, 5, 8),
        ("fn read", 2, 9, 11),
        ("function add", 1, 12, 12),
        ("type Options", 1, 13, 14),
    ]


def test_go_and_rust_definitions() -> None:
    go = "package main\n\ntype Server struct {\n}\n\nfunc (s *Server) Run() error {\n}\n\nfunc main() {\n}\n"
    assert [e.title for e in build_outline("go", numbered(go), 10).entries] == ["type Server", "func Run", "func main"]
    rust = (
        "pub struct Store {}\n\nimpl Store {\n    pub async fn open() {}\n    fn close(&self) {}\n}\n\nfn main() {}\n"
    )
    outline = build_outline("rust", numbered(rust), 8)
    assert brief(outline.entries) == [
        ("type Store", 1, 1, 2),
        ("impl Store", 1, 3, 7),
        ("fn open", 2, 4, 4),
        ("fn close", 2, 5, 7),
        ("fn main", 1, 8, 8),
    ]


def test_text_paragraphs_each_with_its_lines() -> None:
    text = "First paragraph\ngoes on.\n\nSecond one.\n\n\nThird\n"
    outline = build_outline("text", numbered(text), 7)
    assert brief(outline.entries) == [("First paragraph", 1, 1, 3), ("Second one.", 1, 4, 6), ("Third", 1, 7, 7)]
    assert {e.kind for e in outline.entries} == {"paragraph"}


def test_many_paragraphs_become_pages() -> None:
    text = "".join(f"paragraph {i}\n\n" for i in range(1000))
    outline = build_outline("text", numbered(text), 2000, limit=50)
    assert len(outline.entries) <= 50 and not outline.truncated
    assert {e.kind for e in outline.entries} == {"page"}
    assert outline.entries[0].start == 1 and outline.entries[-1].end == 2000
    assert all(a.end + 1 == b.start for a, b in zip(outline.entries, outline.entries[1:], strict=False))


def test_jsonl_records_and_json_keys() -> None:
    jsonl = '{"id": 1}\n{"id": 2}\n'
    assert brief(build_outline("jsonl", numbered(jsonl), 2).entries) == [('{"id": 1}', 1, 1, 1), ('{"id": 2}', 1, 2, 2)]
    json_text = '{\n  "name": "x",\n  "deps": {\n    "a": 1,\n      "deep": 2\n  }\n}\n'
    outline = build_outline("json", numbered(json_text), 7)
    assert brief(outline.entries) == [("name", 1, 2, 2), ("deps", 1, 3, 7), ("a", 2, 4, 7)]


def test_long_outlines_drop_deep_levels_then_cut() -> None:
    text = "".join(f"# H{i}\n## sub\n" for i in range(30))
    outline = build_outline("markdown", numbered(text), 60, limit=40)
    assert [e.level for e in outline.entries] == [1] * 30 and not outline.truncated
    outline = build_outline("markdown", numbered(text), 60, limit=10)
    assert len(outline.entries) == 10 and outline.truncated
