// What the page (app.js) and its MCP App views (mcp-app.js, servers/apps.py) both render: escaped text and a run.
// Everything shown goes through `esc`: memory text and a run's turns are data, never markup.
"use strict";

const esc = (text) => String(text ?? "").replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
const when = (seconds) => (seconds ? new Date(seconds * 1000).toLocaleString() : "");

// A run's result as a person reads it: a done run is a success only once feedback says it was right.
// `partial` and `failed` say so whatever the feedback; a done run judged wrong is shown wrong, not done.
function result(run, verdict) {
  if (run.status !== "done") return { text: run.status, tone: { partial: "partial", failed: "failed" }[run.status] || "open" };
  if (verdict === "bad") return { text: "done, judged wrong", tone: "wrong" };
  if (verdict === "good") return { text: "done, judged right", tone: "right" };
  return { text: "done, not judged", tone: "open" };
}

function verdictCells(verdict, note) {
  const said = verdict ? `<span class="verdict-${esc(verdict)}">${verdict === "good" ? "✓ good" : "✗ bad"}</span>` : "";
  return `<td class="verdict">${said}</td><td class="feedback-note">${note ? `“${esc(note)}”` : ""}</td>`;
}

// The title, result and answer of a run.
function runHead(run, verdict) {
  const shown = result(run, verdict);
  return `<h2 id="run-title">${esc(run.id)}: ${esc(run.task)}</h2>
    <p>result <b id="run-result" class="tone-${esc(shown.tone)}">${esc(shown.text)}</b>${run.reason ? " (" + esc(run.reason) + ")" : ""}` +
    ` · model ${esc(run.model)} · ${esc(run.tokens)} tokens</p>
    <h3>Answer</h3><div class="text" id="answer">${esc(run.answer)}</div>`;
}

function turnRow(t) {
  const regions = Object.entries(t.prompt_tokens || {}).map(([k, v]) => `${esc(k)} ${esc(v)}`).join(" · ");
  const action = t.tool ? "call" : "answer";
  return `<tr><td>${esc(t.turn)}</td><td>${action}</td><td>${esc(t.tool || "")}</td>` +
    `<td class="args">${esc(t.tool ? JSON.stringify(t.arguments) : t.answer)}</td><td>${esc(t.observation_id || "")}</td>` +
    `<td>${esc(t.result_tokens)}</td><td>${regions}</td><td>${esc(t.evaluated_tokens)} / ${esc(t.reused_tokens)}</td></tr>`;
}

function turnsTable(turns) {
  return `<h3>Turns</h3>
    <table id="turns"><thead><tr><th>turn</th><th>action</th><th>tool</th><th>arguments / answer</th><th>observation</th>
      <th>size</th><th>prompt tokens by region</th><th>evaluated / reused</th></tr></thead><tbody>${(turns || []).map(turnRow).join("")}</tbody></table>`;
}

// The cited ranges, with their lines where the run's view read them back (the page's), else the range alone.
function evidenceList(evidence) {
  const items = (evidence || []).map((c) => {
    const lines = c.text ?? c.error;
    return `<li><b>${esc(c.id)}:${esc(c.start)}-${esc(c.end)}</b>${lines == null ? "" : `<pre>${esc(lines)}</pre>`}</li>`;
  }).join("");
  return `<h3>Evidence</h3><ul id="evidence">${items || "<li>none cited</li>"}</ul>`;
}

function episodeBlock(ep) {
  const grounds = ep ? ep.grounds.map((g) => `<li>${esc(g.kind)} → ${esc(g.id)} (${esc(g.node_kind)}) ${esc(g.text.slice(0, 100))}</li>`).join("") : "";
  return `<h3>Episode</h3><div id="episode">${ep ? `${esc(ep.node)} · status <b>${esc(ep.status)}</b> · outcome ${esc(ep.outcome ?? "unknown")}<ul>${grounds}</ul>` : "no episode"}</div>`;
}
