"""The page over a home like a user's (an imported conversation of over a thousand turns), in headless Chromium.

What a person must be able to read there, checked in the DOM and by the
geometry of what the canvas drew: clusters apart, labels that do not overlap
and stay inside the canvas, edges that show, a tip on hover; documents by
path and the runs' records apart from them; a run's result and verdict.
"""

from __future__ import annotations

import itertools
import math
from pathlib import Path
from typing import Any

import pytest

from tests.servers.ui.conftest import Served, rows
from tests.servers.ui.home import WRONG_NOTE

pytestmark = pytest.mark.slow

GREEN = (47, 158, 105)


def open_graph(page: Any, served: Served) -> None:
    page.goto(served.with_token)
    page.wait_for_function("document.body.dataset.counted === 'top'")


def drawn(page: Any) -> dict[str, Any]:
    """The canvas's size and, in its pixels, every node (centre, radius), cluster disc and label box."""
    return page.evaluate(
        """(() => {
          const box = graph.canvas.getBoundingClientRect();
          const nodes = graph.piece.nodes.map((n) => {
            const [x, y] = graph.screen(n);
            return { id: n.id, kind: n.kind, x, y, r: nodeRadius(n) };
          });
          return { width: box.width, height: box.height, nodes, clusters: graph.clusters, labels: graph.labels,
                   edges: graph.piece.edges };
        })()"""
    )


def overlap(a: dict[str, float], b: dict[str, float]) -> bool:
    across = a["x"] < b["x"] + b["w"] and b["x"] < a["x"] + a["w"]
    return across and a["y"] < b["y"] + b["h"] and b["y"] < a["y"] + a["h"]


def colour(page: Any, selector: str) -> tuple[int, ...]:
    css = page.eval_on_selector(selector, "el => getComputedStyle(el).color")
    return tuple(int(part) for part in css[css.index("(") + 1 : css.index(")")].split(",")[:3])


def test_the_overview_of_an_imported_conversation_draws_its_sessions_apart(
    page: Any, served: Served, shots: Path
) -> None:
    open_graph(page, served)
    seen = drawn(page)
    assert len(seen["nodes"]) == 300 and served.ids["turns"] > 1_000
    for node in seen["nodes"]:  # nothing off the canvas
        assert node["r"] <= node["x"] <= seen["width"] - node["r"], node
        assert node["r"] <= node["y"] <= seen["height"] - node["r"], node
    discs = [c for c in seen["clusters"] if not c["unlinked"]]
    assert len([c for c in discs if len(c["members"]) >= 10]) >= 6
    for a, b in itertools.combinations(seen["clusters"], 2):  # clusters never overlap
        assert math.hypot(a["x"] - b["x"], a["y"] - b["y"]) >= a["r"] + b["r"]
    # a conversation's session and its turns are one cluster: most ground links stay inside one
    home = {m: i for i, c in enumerate(seen["clusters"]) for m in c["members"]}
    grounds = [e for e in seen["edges"] if e["kind"] == "ground"]
    inside = [e for e in grounds if home[e["src"]] == home[e["dst"]]]
    assert len(grounds) > 200 and len(inside) >= 0.8 * len(grounds)
    page.screenshot(path=str(shots / "overview.png"))


def test_the_overviews_labels_do_not_overlap_and_stay_inside_the_canvas(page: Any, served: Served) -> None:
    open_graph(page, served)
    seen = drawn(page)
    labels = seen["labels"]
    assert 10 <= len(labels) < len(seen["nodes"]) / 5  # the top nodes only, not all three hundred
    for label in labels:
        assert label["x"] >= 0 and label["x"] + label["w"] <= seen["width"], label
        assert label["y"] >= 0 and label["y"] + label["h"] <= seen["height"], label
    for a, b in itertools.combinations(labels, 2):
        assert not overlap(a, b), (a, b)
    sessions = [label for label in labels if label["text"].startswith("Conversation session")]
    assert len(sessions) >= 6  # the largest clusters are named by their session


def test_the_overviews_edges_show_on_the_canvas(page: Any, served: Served) -> None:
    open_graph(page, served)
    seen = drawn(page)
    where = {n["id"]: n for n in seen["nodes"]}
    # the middle of each link, where no node and no label is drawn, must not be the white background
    points = []
    for edge in seen["edges"]:
        a, b = where[edge["src"]], where[edge["dst"]]
        x, y = (a["x"] + b["x"]) / 2, (a["y"] + b["y"]) / 2
        clear = all(math.hypot(n["x"] - x, n["y"] - y) > n["r"] + 4 for n in seen["nodes"])
        if clear and not any(overlap({"x": x - 2, "y": y - 2, "w": 4, "h": 4}, label) for label in seen["labels"]):
            points.append([x, y])
    assert len(points) > 100
    painted = page.evaluate(
        """(points) => {
          const ratio = window.devicePixelRatio || 1, g = graph.canvas.getContext("2d");
          return points.filter(([x, y]) => {
            const d = g.getImageData(Math.round(x * ratio) - 1, Math.round(y * ratio) - 1, 3, 3).data;
            for (let i = 0; i < d.length; i += 4) if (d[i + 3] > 60) return true;
            return false;
          }).length;
        }""",
        points,
    )
    assert painted >= 0.95 * len(points)


def test_hovering_a_node_without_a_label_shows_its_id_and_text_in_a_tip(page: Any, served: Served, shots: Path) -> None:
    open_graph(page, served)
    seen = drawn(page)
    labelled = {label["id"] for label in seen["labels"]}
    node = next(n for n in seen["nodes"] if n["id"] not in labelled and n["kind"] == "semantic")
    assert page.is_hidden("#graph-tip")
    where = page.evaluate(f"graph.where('{node['id']}')")
    page.mouse.move(where["x"], where["y"])
    page.wait_for_selector("#graph-tip", state="visible")
    [(text,)] = rows(served.db, "SELECT text FROM memory_nodes WHERE id = ?", int(node["id"].removeprefix("mem:")))
    tip = page.inner_text("#graph-tip")
    assert tip.startswith(node["id"]) and text[:40] in tip
    canvas, shown = page.locator("#graph").bounding_box(), page.locator("#graph-tip").bounding_box()
    assert canvas["x"] <= shown["x"] and shown["x"] + shown["width"] <= canvas["x"] + canvas["width"]
    assert canvas["y"] <= shown["y"] and shown["y"] + shown["height"] <= canvas["y"] + canvas["height"]
    page.screenshot(path=str(shots / "hover.png"))
    page.mouse.move(1, 1)
    page.wait_for_selector("#graph-tip", state="hidden")


def test_documents_are_listed_by_path_and_what_runs_recorded_apart(page: Any, served: Served, shots: Path) -> None:
    open_graph(page, served)
    page.click("header nav button[data-view=documents]")
    page.wait_for_selector("#records li")
    documents = rows(served.db, "SELECT 'doc:' || id, source FROM context_objects WHERE kind = 'doc' ORDER BY id")
    listed = page.eval_on_selector_all("#documents li", "lis => lis.map(li => [li.dataset.id, li.innerText])")
    assert [d for d, _ in listed] == [d for d, _ in documents]
    bash, dpkg = (dict(listed)[doc] for doc in served.ids["docs"])
    assert bash.startswith("bash/copyright") and str(served.ids["licences"][0]) in bash
    assert dpkg.startswith("dpkg/copyright") and str(served.ids["licences"][1]) in dpkg
    records = page.eval_on_selector_all("#records li", "lis => lis.map(li => [li.dataset.id, li.innerText])")
    assert records and all(r.split(":")[0] in ("obs", "turn", "note") for r, _ in records)
    search = rows(served.db, "SELECT turns FROM runs WHERE id = ?", served.ids["runs"][4])[0][0]
    [found] = [text for r, text in records if f'"observation_id": "{r}"' in search]
    assert "context_search" in found and f"run:{served.ids['runs'][4]}" in found
    page.click(f"#documents li[data-id='{served.ids['docs'][1]}']")
    page.wait_for_function("document.getElementById('text').innerText.length > 0")
    assert str(served.ids["licences"][1]) in page.inner_text("#doc-title")
    first = served.ids["licences"][1].read_text(encoding="utf-8").splitlines()[0]
    assert page.inner_text("#text").startswith(first)
    page.screenshot(path=str(shots / "documents-by-path.png"))


def test_runs_show_a_partial_or_wrong_run_apart_from_a_success(page: Any, served: Served, shots: Path) -> None:
    open_graph(page, served)
    page.click("header nav button[data-view=runs]")
    page.wait_for_selector("#runs tbody tr")
    cells = dict(
        page.eval_on_selector_all(
            "#runs tbody tr", "trs => trs.map(tr => [tr.dataset.id, [...tr.cells].map(c => c.innerText)])"
        )
    )
    partial, wrong, right = served.ids["partial"], served.ids["wrong"], served.ids["runs"][1]
    assert cells[f"run:{partial}"][2:5] == ["partial", "", ""]
    assert cells[f"run:{wrong}"][2:5] == ["done, judged wrong", "✗ bad", f"“{WRONG_NOTE}”"]
    assert cells[f"run:{right}"][2:5] == ["done, judged right", "✓ good", "“right fee”"]
    assert cells[f"run:{served.ids['runs'][4]}"][2:4] == ["done, not judged", ""]
    row = "#runs tbody tr[data-id='run:{}'] td.result"
    assert colour(page, row.format(right)) == GREEN
    for run in (partial, wrong, served.ids["runs"][4]):
        assert colour(page, row.format(run)) != GREEN
    red, amber = colour(page, row.format(wrong)), colour(page, row.format(partial))
    assert red[0] > 180 > red[1] and amber[0] > amber[1] > amber[2]
    page.screenshot(path=str(shots / "runs.png"))
    page.click(f"#runs tbody tr[data-id='run:{wrong}']")
    page.wait_for_selector("#verdict")
    assert page.inner_text("#run-result") == "done, judged wrong"
    assert page.inner_text("#verdict").split("\t")[1:] == ["✗ bad", f"“{WRONG_NOTE}”"]
    page.click(f"#runs tbody tr[data-id='run:{partial}']")
    page.wait_for_function("document.getElementById('run-result').innerText === 'partial'")
    assert "token budget" in page.inner_text("#run")
