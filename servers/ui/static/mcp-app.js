// The page's recall and run views as an MCP App (servers/apps.py): the host hands the view a tool's result over
// postMessage (JSON-RPC, the apps extension's `ui/` methods), and the view renders it with render.js, as the page
// does. It reaches nothing on the network: a run's record is read through the host (`resources/read`), on the
// client's own connection, so the server answers for the token's project only.
"use strict";

const view = document.body.dataset.view;
const pending = new Map();
let nextId = 1;
let hostCapabilities = {};

function request(method, params) {
  const id = nextId++;
  window.parent.postMessage({ jsonrpc: "2.0", id, method, params }, "*");
  return new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
}

function notify(method, params) {
  window.parent.postMessage({ jsonrpc: "2.0", method, params }, "*");
}

// A memory's text comes framed for models (`<stored-notes source="loci">TEXT</stored-notes>`); a person reads TEXT.
const OPEN = '<stored-notes source="loci">';
const CLOSE = "</stored-notes>";
const unframed = (text) => {
  const s = String(text ?? "");
  return s.startsWith(OPEN) && s.endsWith(CLOSE) ? s.slice(OPEN.length, s.length - CLOSE.length) : s;
};

function showText(result) {
  const text = (result.content || []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
  document.querySelector("#run").innerHTML = `<pre>${esc(text)}</pre>`;
}

function showRecall(result) {
  const hits = result.structuredContent && result.structuredContent.result;
  if (result.isError || !Array.isArray(hits)) return showText(result);
  document.querySelector("#note").textContent = `${hits.length} ${hits.length === 1 ? "memory" : "memories"} recalled, best first`;
  document.querySelector("#hits").innerHTML = hits.map((h) =>
    `<li data-id="${esc(h.id)}"><b>${esc(h.id)}</b> <span class="note">${esc(h.kind)} · score ${esc(h.score)}</span>` +
    `<div class="text">${esc(unframed(h.text))}</div></li>`).join("");
}

// The run's record (`loci://runs/N`) when the host reads resources for the view, else what the tool answered.
async function showRun(result) {
  const answered = result.structuredContent;
  if (result.isError || !answered || !answered.run) return showText(result);
  let run = { id: answered.run, ...answered, turns: [] };
  if (hostCapabilities.serverResources) {
    try {
      const read = await request("resources/read", { uri: `loci://runs/${answered.run.replace(/^run:/, "")}` });
      run = JSON.parse(read.contents[0].text);
    } catch (error) {
      document.querySelector("#note").textContent = `the run's record could not be read: ${error.message}`;
    }
  }
  document.querySelector("#note").textContent = "";
  document.querySelector("#run").innerHTML = `${runHead(run, null)}${turnsTable(run.turns)}${evidenceList(run.evidence)}`;
}

window.addEventListener("message", (event) => {
  const message = event.data;
  if (event.source !== window.parent || !message || message.jsonrpc !== "2.0") return;
  if (message.method === undefined && pending.has(message.id)) {
    const { resolve, reject } = pending.get(message.id);
    pending.delete(message.id);
    message.error ? reject(new Error(message.error.message || "the host refused")) : resolve(message.result);
  } else if (message.method === "ui/notifications/tool-result") {
    Promise.resolve((view === "run" ? showRun : showRecall)(message.params || {})).then(() => {
      document.body.dataset.shown = view;
    });
  } else if (message.method !== undefined && message.id !== undefined) {
    // The host's requests: a ping or the teardown before it removes the view are answered; nothing else is served.
    const answered = message.method === "ping" || message.method === "ui/resource-teardown";
    const error = { code: -32601, message: `the view does not serve ${message.method}` };
    window.parent.postMessage({ jsonrpc: "2.0", id: message.id, ...(answered ? { result: {} } : { error }) }, "*");
  }
});

// The host sizes the frame to the view (inline, its height follows what is shown).
let lastSize = "";
new ResizeObserver(() => {
  const size = { width: document.documentElement.scrollWidth, height: document.documentElement.scrollHeight };
  if (JSON.stringify(size) !== lastSize) {
    lastSize = JSON.stringify(size);
    notify("ui/notifications/size-changed", size);
  }
}).observe(document.documentElement);

request("ui/initialize", {
  appInfo: { name: `loci-${view}`, version: "1" },
  appCapabilities: { availableDisplayModes: ["inline"] },
  protocolVersion: "2026-01-26",
}).then((initialized) => {
  hostCapabilities = initialized.hostCapabilities || {};
  notify("ui/notifications/initialized", {});
});
