// The page: four views over the JSON API of `loci ui`. The session token comes from the URL's fragment.
"use strict";

const token = (() => {
  const match = location.hash.match(/token=([^&]+)/);
  if (match) {
    sessionStorage.setItem("loci-token", decodeURIComponent(match[1]));
    history.replaceState(null, "", location.pathname);
  }
  return sessionStorage.getItem("loci-token") || "";
})();

// The project the page shows, among those its token reaches (`/api/projects`); none chosen: the token's first.
const project = sessionStorage.getItem("loci-project") || "";

const $ = (selector) => document.querySelector(selector);
const count = (n) => Number(n).toLocaleString("en");

async function api(path, options = {}, started = null) {
  const headers = { ...(options.headers || {}) };
  if (token) headers.Authorization = `Bearer ${token}`;
  if (project) headers["X-Loci-Project"] = project;
  const response = await (started || fetch(path, { ...options, headers }));
  const body = await response.json();
  if (!response.ok) throw new Error(body.error || `HTTP ${response.status}`);
  return body;
}

// ---- the memory graph ----------------------------------------------------

const graph = new GraphCanvas($("#graph"), $("#graph-tip"), (id) => showNode(id));

let totals = null;

function describe(piece) {
  const what = piece.view === "recall" ? ` (the top of the recall for "${piece.query}" and their neighbours).` :
    piece.view === "around" ? ` (the neighbourhood of ${piece.center}).` :
    piece.folded_runs ? ` (the most used; ${count(piece.folded_runs)} run records folded: see Runs).` : " (the most used).";
  if (!totals) return `Drawn: ${count(piece.nodes.length)} memories and ${count(piece.edges.length)} links${what} Counting the rest…`;
  const hidden = totals.total_nodes - piece.nodes.length;
  return `Drawn: ${count(piece.nodes.length)} of ${count(totals.total_nodes)} memories and ${count(piece.edges.length)} of ` +
    `${count(totals.total_edges)} links; ${count(hidden)} ${hidden === 1 ? "memory" : "memories"} not drawn${what}`;
}

// The counts scan the home's tables, so they come after the first draw, and again after each view.
async function countRest(piece) {
  totals = await api("/api/totals");
  if (graph.piece === piece) {
    $("#graph-note").textContent = describe(piece);
    document.body.dataset.counted = piece.view;
  }
}

function showPiece(piece, hits, spread) {
  graph.show(piece, hits ? hits.map((h) => h.id) : [], spread);
  delete document.body.dataset.counted;
  $("#graph-note").textContent = describe(piece);
  countRest(piece).catch((error) => { $("#graph-note").textContent = error.message; });
  $("#hits").innerHTML = (hits || []).map((h) =>
    `<li data-id="${esc(h.id)}">${esc(h.id)} <span>score ${h.score}</span> ${esc(graph.byId.get(h.id)?.label || "")}</li>`).join("");
  document.body.dataset.graph = piece.view;
  if (window.lociFirstDraw === undefined) window.lociFirstDraw = performance.now();
}

async function loadTop() {
  const early = window.lociEarly;  // the first view's request, started in the page's head
  window.lociEarly = null;
  showPiece(await api("/api/graph", {}, early));
}

async function recall(query) {
  try {
    const piece = await api(`/api/recall?q=${encodeURIComponent(query)}&k=20`);
    showPiece(piece, piece.hits, piece.spread);
  } catch (error) {
    $("#graph-note").textContent = error.message;
  }
}

async function showNode(id) {
  const node = await api(`/api/node/${encodeURIComponent(id)}`);
  graph.selected = node.id;
  graph.draw();
  const events = node.history.events.map((e) =>
    `<tr><td>${esc(when(e.at))}</td><td>${esc(e.op)}</td><td>${esc(e.cause)}</td>` +
    `<td>${esc(e.before ? JSON.stringify(e.before) : "")} → ${esc(e.after ? JSON.stringify(e.after) : "")}</td></tr>`).join("");
  const neighbours = node.neighbors.map((n) =>
    `<li class="link" data-id="${esc(n.id)}">${esc(n.id)} (${esc(n.kind)}, ${esc(n.edge.kind)} ${n.edge.weight}) ${esc(n.text.slice(0, 80))}</li>`).join("");
  const sources = node.history.sources.map((s) => `<li>${esc(s.episode)} run ${esc(s.run_id)} outcome ${esc(s.outcome)}: ${esc(s.task)}</li>`).join("");
  $("#detail").innerHTML = `
    <h3 id="node-id">${esc(node.id)} · ${esc(node.kind)}${node.status ? " · " + esc(node.status) : ""}</h3>
    <div class="text">${esc(node.text)}</div>
    <p class="note">uses ${node.uses} · successes ${node.successes} · failures ${node.failures} · ${node.edge_count} links</p>
    <h3>Metadata</h3><pre>${esc(JSON.stringify(node.meta, null, 1))}</pre>
    <h3>Neighbours <button type="button" id="around">draw them</button></h3><ul id="neighbours">${neighbours}</ul>
    ${sources ? `<h3>Source episodes</h3><ul>${sources}</ul>` : ""}
    <h3>History</h3><table id="history"><thead><tr><th>at</th><th>event</th><th>cause</th><th>change</th></tr></thead><tbody>${events}</tbody></table>`;
  $("#around").onclick = async () => showPiece(await api(`/api/around/${encodeURIComponent(node.id)}`));
}

$("#search").addEventListener("submit", (event) => { event.preventDefault(); if ($("#q").value.trim()) recall($("#q").value); });
$("#top").addEventListener("click", loadTop);
$("#hits").addEventListener("click", (event) => { const li = event.target.closest("li"); if (li) showNode(li.dataset.id); });
$("#detail").addEventListener("click", (event) => { const li = event.target.closest("li.link"); if (li) showNode(li.dataset.id); });

// ---- runs ------------------------------------------------------------------

async function loadRuns() {
  const runs = await api("/api/runs");
  $("#runs tbody").innerHTML = runs.map((r) => {
    const shown = result(r, r.verdict);
    return `<tr data-id="${esc(r.id)}"><td>${esc(r.id)}</td><td>${esc(r.task)}</td>` +
      `<td class="result tone-${shown.tone}" title="${esc(r.reason || "")}">${esc(shown.text)}</td>` +
      verdictCells(r.verdict, r.feedback) +
      `<td>${esc(r.model)}</td><td>${esc(when(r.started))}</td><td>${r.turns}</td></tr>`;
  }).join("");
}

async function showRun(id) {
  const run = await api(`/api/runs/${encodeURIComponent(id)}`);
  document.querySelectorAll("#runs tbody tr").forEach((tr) => tr.classList.toggle("on", tr.dataset.id === run.id));
  const ep = run.episode;
  $("#run").innerHTML = `
    ${runHead(run, ep && ep.verdict)}
    <table id="verdict"><tbody><tr><th>feedback</th>${ep ? verdictCells(ep.verdict, ep.feedback) : "<td>no episode to judge</td>"}</tr></tbody></table>
    <div class="feedback"><button type="button" id="good">Good</button><button type="button" id="bad">Bad</button>
      <input id="note" placeholder="a note with the feedback (optional)"><span id="feedback-result"></span></div>
    ${turnsTable(run.turns)}
    <h3>Prompt tokens per turn, by region</h3><canvas id="plot"></canvas>
    ${evidenceList(run.evidence)}
    ${episodeBlock(ep)}`;
  document.body.dataset.plotRegions = plotRegions($("#plot"), run.turns).join(",");
  $("#good").onclick = () => feedback(run.id, "good");
  $("#bad").onclick = () => feedback(run.id, "bad");
}

async function feedback(id, outcome) {
  try {
    const result = await api(`/api/runs/${encodeURIComponent(id)}/feedback`, {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ outcome, note: $("#note").value }),
    });
    await loadRuns();
    await showRun(id);
    $("#feedback-result").textContent = result.counted ? `counted on ${result.episode}` : result.note;
  } catch (error) {
    $("#feedback-result").textContent = error.message;
  }
}

$("#runs tbody").addEventListener("click", (event) => { const tr = event.target.closest("tr"); if (tr) showRun(tr.dataset.id); });

// ---- procedures and jobs -------------------------------------------------------

async function loadWork() {
  const [procedures, queue, digests] = await Promise.all([api("/api/procedures"), api("/api/jobs"), api("/api/digests")]);
  $("#procedures tbody").innerHTML = procedures.map((p) =>
    `<tr><td>${esc(p.id)}</td><td class="status-${esc(p.status)}">${esc(p.status)}</td><td>${p.success_mean} ± ${p.success_sd}</td>` +
    `<td>${p.successes} / ${p.failures}</td><td>${p.sources.map((s) => `${esc(s.id)} (run ${esc(s.run_id)}, ${esc(s.outcome ?? "?")})`).join(", ")}</td>` +
    `<td>${esc(p.text)}</td></tr>`).join("") || `<tr><td colspan="6">no procedures yet</td></tr>`;
  $("#job-counts").textContent = Object.entries(queue.counts).map(([k, v]) => `${k} ${v}`).join(" · ");
  $("#jobs tbody").innerHTML = queue.jobs.map((j) =>
    `<tr><td>${j.id}</td><td>${esc(j.kind)}</td><td class="status-${esc(j.status)}">${esc(j.status)}</td>` +
    `<td>${j.attempts} / ${j.max_attempts}</td><td>${esc(j.error || "")}</td></tr>`).join("");
  $("#digests tbody").innerHTML = digests.map((d) =>
    `<tr><td>${d.id}</td><td>${esc(d.status)}</td><td>${esc(d.strategy)}</td><td>${esc(d.question)}</td><td>${d.chunk}</td>` +
    `<td>${count(d.tokens_read)}</td><td>${esc(d.error || "")}</td></tr>`).join("") || `<tr><td colspan="7">no digest jobs</td></tr>`;
}

// ---- documents -------------------------------------------------------------

let shownDocument = null;

async function loadDocuments() {
  const [listed, recorded] = await Promise.all([api("/api/documents"), api("/api/records")]);
  $("#doc-note").textContent = `${count(listed.total)} ${listed.total === 1 ? "document" : "documents"}`;
  $("#documents").innerHTML = listed.documents.map((d) =>
    `<li data-id="${esc(d.id)}" title="${esc(d.path || d.name)}"><b>${esc(d.shown)}</b> <span class="note">${esc(d.id)} · ` +
    `${count(d.lines)} lines, ${count(d.tokens)} tokens</span><div class="path">${esc(d.path || "(no file)")}</div></li>`).join("") ||
    "<li class=\"none\">no documents loaded</li>";
  const kinds = { obs: "tool results", turn: "turns", note: "notes" };
  $("#records-note").textContent = Object.entries(recorded.counts).map(([k, v]) => `${count(v)} ${kinds[k] || k}`).join(" · ") +
    (recorded.total > recorded.records.length ? ` (the newest ${recorded.records.length})` : "");
  $("#records").innerHTML = recorded.records.map((o) =>
    `<li data-id="${esc(o.id)}" data-kind="${esc(o.kind)}">${esc(o.id)} ${esc(o.name)}` +
    ` <span class="note">${o.run ? esc(o.run) + " · " : ""}${count(o.lines)} lines</span></li>`).join("");
}

async function showDocument(id) {
  shownDocument = id;
  const outline = await api(`/api/outline/${encodeURIComponent(id)}`);
  const listed = document.querySelector(`#documents li[data-id="${CSS.escape(id)}"]`);
  $("#doc-title").textContent = listed ? `${id} · ${listed.title}` : id;
  $("#outline").innerHTML = outline.entries.map((e) =>
    `<li class="link" data-start="${e.start}" data-end="${e.end}">${esc(e.title)} <span class="note">${e.start}-${e.end}</span></li>`).join("");
  await readRange(1, null);
}

let lastRead = 0;  // a read that answers after a later one was asked shows nothing: the later one is what was asked for

async function readRange(start, end) {
  const asked = ++lastRead;
  const span = await api(`/api/read/${encodeURIComponent(shownDocument)}?start=${start}${end ? "&end=" + end : ""}`);
  if (asked !== lastRead) return;
  $("#start").value = span.start;
  $("#end").value = span.end;
  $("#text").textContent = span.text;
}

for (const list of ["#documents", "#records"]) {
  $(list).addEventListener("click", (event) => { const li = event.target.closest("li[data-id]"); if (li) showDocument(li.dataset.id); });
}
$("#outline").addEventListener("click", (event) => { const li = event.target.closest("li"); if (li) readRange(li.dataset.start, li.dataset.end); });
$("#range").addEventListener("submit", (event) => { event.preventDefault(); if (shownDocument) readRange($("#start").value, $("#end").value); });

// ---- views -------------------------------------------------------------------

const loaders = { graph: loadTop, runs: loadRuns, work: loadWork, documents: loadDocuments };
const loaded = new Set(["graph"]);

document.querySelectorAll("header nav button").forEach((button) => button.addEventListener("click", async () => {
  const view = button.dataset.view;
  document.querySelectorAll("header nav button").forEach((b) => b.classList.toggle("on", b === button));
  document.querySelectorAll(".view").forEach((v) => v.classList.toggle("on", v.id === `view-${view}`));
  if (view === "graph") graph.draw();
  if (view !== "graph" || !loaded.has(view)) await loaders[view]();
  loaded.add(view);
  document.body.dataset.view = view;
}));

$("#token-state").textContent = token ? "session token: yes (feedback allowed)" : "no session token: open the URL loci ui printed to give feedback";
loadTop().catch((error) => { $("#graph-note").textContent = error.message; });

// Several projects: a choice in the header; choosing one shows the page again over it.
api("/api/projects").then((reach) => {
  if (project && !reach.all && !reach.projects.includes(project)) {
    sessionStorage.removeItem("loci-project");
    location.reload();
    return;
  }
  if (reach.projects.length < 2) return;
  const select = $("#project");
  select.innerHTML = reach.projects.map((p) => `<option>${esc(p)}</option>`).join("");
  select.value = project || reach.projects[0];
  select.hidden = false;
  select.addEventListener("change", () => { sessionStorage.setItem("loci-project", select.value); location.reload(); });
}).catch(() => {});
