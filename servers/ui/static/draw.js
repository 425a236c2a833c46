// Loci's own small canvas drawing: the memory graph and a stacked bar plot. No library, no network.
//
// The graph is laid out by layout.js (clusters packed apart), then scaled to fit inside the canvas.
// Edges are drawn first, at least a pixel wide, then nodes with a white rim, then labels: only for the
// nodes that matter most (a recall's hits, the selected node, the most used and most linked), each put
// beside its node where its box stays inside the canvas and overlaps no label placed before it; a node
// without room for its label gets none. Hovering a node shows its id and label in a tip (#graph-tip).
// What was drawn is kept for the tests: `clusters`, `labels` (boxes in canvas pixels), `where(id)`.
"use strict";

const KIND_COLOURS = { semantic: "#3b7dd8", episodic: "#e8912d", procedural: "#2f9e69" };
const EDGE_COLOURS = { ground: "#d9963f", distill: "#2f9e69", related: "#7b8794" };
const REGION_COLOURS = ["#3b7dd8", "#e8912d", "#2f9e69", "#9b59b6", "#d64545", "#16a3b8", "#8d6e63", "#7b8794"];
const MAX_LABELS = 24;
const LABEL_CHARS = 44;
const LABEL_FONT = "11px system-ui, sans-serif";
const MARGIN = 12;

function nodeRadius(node) {
  return 4 + 2.5 * Math.log2(1 + (node.uses || 0));
}

function shortLabel(node) {
  const text = node.label || "";
  return text.length > LABEL_CHARS ? text.slice(0, LABEL_CHARS - 1) + "…" : text;
}

function overlaps(a, b) {
  return a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
}

class GraphCanvas {
  constructor(canvas, tip, onPick) {
    this.canvas = canvas;
    this.tip = tip;
    this.onPick = onPick;
    this.piece = { nodes: [], edges: [] };
    this.byId = new Map();
    this.hits = new Set();
    this.spread = new Set();
    this.selected = null;
    this.hovered = null;
    this.clusters = [];
    this.labels = [];
    canvas.addEventListener("click", (event) => this.click(event));
    canvas.addEventListener("mousemove", (event) => this.hover(this.nodeAt(event)));
    canvas.addEventListener("mouseleave", () => this.hover(null));
    window.addEventListener("resize", () => { this.fit(); this.draw(); });
  }

  show(piece, hits, spread) {
    this.piece = piece;
    this.hits = new Set(hits || []);
    this.spread = new Set(spread || []);
    this.byId = new Map(piece.nodes.map((n) => [n.id, n]));
    this.hovered = null;
    this.tip.hidden = true;
    const box = this.canvas.getBoundingClientRect();
    this.layoutClusters = layoutPiece(piece.nodes, piece.edges, box.width || 800, box.height || 600, nodeRadius);
    this.fit();
    this.draw();
  }

  // Scale and centre the laid-out piece so every node, with its radius, is inside the canvas.
  fit() {
    const box = this.canvas.getBoundingClientRect(), nodes = this.piece.nodes;
    if (!nodes.length) { this.view = { scale: 1, ox: box.width / 2, oy: box.height / 2 }; return; }
    const reach = Math.max(...nodes.map(nodeRadius)) + MARGIN;
    const xs = nodes.map((n) => n.x), ys = nodes.map((n) => n.y);
    const minX = Math.min(...xs), maxX = Math.max(...xs), minY = Math.min(...ys), maxY = Math.max(...ys);
    const scale = Math.min((box.width - 2 * reach) / (maxX - minX || 1), (box.height - 2 * reach) / (maxY - minY || 1), 2.5);
    this.view = {
      scale,
      ox: box.width / 2 - ((minX + maxX) / 2) * scale,
      oy: box.height / 2 - ((minY + maxY) / 2) * scale,
    };
    this.clusters = (this.layoutClusters || []).map((c) => ({
      members: c.members, unlinked: c.unlinked,
      x: c.x * scale + this.view.ox, y: c.y * scale + this.view.oy, r: c.r * scale,
    }));
  }

  screen(node) {
    return [node.x * this.view.scale + this.view.ox, node.y * this.view.scale + this.view.oy];
  }

  draw() {
    const canvas = this.canvas, ratio = window.devicePixelRatio || 1;
    const box = canvas.getBoundingClientRect();
    canvas.width = box.width * ratio;
    canvas.height = box.height * ratio;
    const g = canvas.getContext("2d");
    g.setTransform(ratio, 0, 0, ratio, 0, 0);
    g.clearRect(0, 0, box.width, box.height);
    if (!this.view) return;
    this.drawEdges(g);
    this.labels = this.placeLabels(g, box);
    this.drawLabels(g, true);
    this.drawNodes(g);  // over the labels' backing, so a label never hides a node
    this.drawLabels(g, false);
  }

  // Links inside a cluster drawn strong; links between clusters, which cross the canvas, lighter and thin.
  drawEdges(g) {
    const home = new Map();
    this.clusters.forEach((c, i) => c.members.forEach((id) => home.set(id, i)));
    for (const e of this.piece.edges) {
      const a = this.byId.get(e.src), b = this.byId.get(e.dst);
      if (!a || !b) continue;
      const [ax, ay] = this.screen(a), [bx, by] = this.screen(b), spread = this.spread.has(e.id);
      const across = home.get(e.src) !== home.get(e.dst);
      g.globalAlpha = spread ? 0.9 : across ? 0.35 : 0.75;
      g.strokeStyle = spread ? "#d64545" : EDGE_COLOURS[e.kind] || EDGE_COLOURS.related;
      g.lineWidth = spread ? 2 + 2 * e.weight : across ? 1 : 1 + 2 * e.weight;
      g.beginPath(); g.moveTo(ax, ay); g.lineTo(bx, by); g.stroke();
    }
    g.globalAlpha = 1;
  }

  drawNodes(g) {
    g.lineWidth = 1;
    for (const node of this.piece.nodes) {
      const [sx, sy] = this.screen(node), r = nodeRadius(node);
      g.fillStyle = KIND_COLOURS[node.kind] || "#7b8794";
      g.strokeStyle = "#fff";
      g.beginPath(); g.arc(sx, sy, r, 0, 2 * Math.PI); g.fill(); g.stroke();
    }
    const rings = [...this.hits].map((id) => [id, "#d64545"]);
    if (this.selected) rings.push([this.selected, "#1f2933"]);
    if (this.hovered) rings.push([this.hovered, "#f0b429"]);
    g.lineWidth = 3;
    for (const [id, colour] of rings) {
      const node = this.byId.get(id);
      if (!node) continue;
      const [sx, sy] = this.screen(node);
      g.strokeStyle = colour;
      g.beginPath(); g.arc(sx, sy, nodeRadius(node) + 3, 0, 2 * Math.PI); g.stroke();
    }
  }

  // Which nodes earn a label, most deserving first: the selected one, the hits, each cluster's most linked
  // node (largest cluster first: it names the cluster, e.g. a conversation's session), then the most used.
  labelOrder() {
    const degree = new Map();
    for (const e of this.piece.edges) for (const id of [e.src, e.dst]) degree.set(id, (degree.get(id) || 0) + 1);
    const hubs = new Map();
    this.clusters.forEach((c, i) => {
      if (c.unlinked || c.members.length < 3) return;
      const hub = c.members.reduce((a, b) => ((degree.get(b) || 0) > (degree.get(a) || 0) ? b : a));
      hubs.set(hub, this.clusters.length - i);
    });
    const rank = (n) => (n.id === this.selected ? 1e12 : 0) + (this.hits.has(n.id) ? 1e9 : 0) + (hubs.get(n.id) || 0) * 1e6 +
      Math.min(n.uses || 0, 999) * 1e3 + Math.min(degree.get(n.id) || 0, 999);
    return [...this.piece.nodes].sort((a, b) => rank(b) - rank(a));
  }

  placeLabels(g, box) {
    g.font = LABEL_FONT;
    const placed = [], discs = this.piece.nodes.map((n) => { const [x, y] = this.screen(n); return { x, y, r: nodeRadius(n) }; });
    for (const node of this.labelOrder()) {
      if (placed.length >= MAX_LABELS) break;
      const text = shortLabel(node);
      if (!text) continue;
      const [sx, sy] = this.screen(node), r = nodeRadius(node), w = g.measureText(text).width + 6, h = 15;
      const spots = [[sx + r + 3, sy - h / 2], [sx - r - 3 - w, sy - h / 2], [sx - w / 2, sy - r - 3 - h], [sx - w / 2, sy + r + 3]];
      let best = null, covered = Infinity;
      for (const [x, y] of spots) {
        const at = { id: node.id, text, x, y, w, h };
        if (x < 0 || y < 0 || x + w > box.width || y + h > box.height || placed.some((p) => overlaps(p, at))) continue;
        const hides = discs.filter((d) => d.x + d.r > x && d.x - d.r < x + w && d.y + d.r > y && d.y - d.r < y + h).length;
        if (hides < covered) { best = at; covered = hides; }
      }
      if (best) placed.push(best);
    }
    return placed;
  }

  drawLabels(g, backing) {
    g.font = LABEL_FONT;
    g.textBaseline = "middle";
    g.fillStyle = backing ? "rgba(255, 255, 255, 0.85)" : "#1f2933";
    for (const label of this.labels) {
      if (backing) g.fillRect(label.x, label.y, label.w, label.h);
      else g.fillText(label.text, label.x + 3, label.y + label.h / 2);
    }
    g.textBaseline = "alphabetic";
  }

  nodeAt(event) {
    const box = this.canvas.getBoundingClientRect();
    const px = event.clientX - box.left, py = event.clientY - box.top;
    let best = null, bestD = Infinity;
    for (const node of this.piece.nodes) {
      const [sx, sy] = this.screen(node), d = Math.hypot(sx - px, sy - py);
      if (d < bestD && d <= nodeRadius(node) + 6) { best = node; bestD = d; }
    }
    return best;
  }

  // The tip beside the hovered node, kept inside the canvas.
  hover(node) {
    const id = node ? node.id : null;
    if (id === this.hovered) return;
    this.hovered = id;
    this.canvas.style.cursor = node ? "pointer" : "";
    if (!node) { this.tip.hidden = true; this.draw(); return; }
    const head = document.createElement("b"), kind = document.createElement("span"), text = document.createElement("div");
    head.textContent = node.id;
    kind.textContent = ` ${node.kind}${node.uses ? `, used ${node.uses}×` : ""}`;
    text.textContent = node.label;
    this.tip.replaceChildren(head, kind, text);
    this.tip.hidden = false;
    const box = this.canvas.getBoundingClientRect(), [sx, sy] = this.screen(node), r = nodeRadius(node);
    const w = this.tip.offsetWidth, h = this.tip.offsetHeight;
    const x = sx + r + 8 + w <= box.width ? sx + r + 8 : Math.max(0, sx - r - 8 - w);
    const y = Math.min(Math.max(0, sy - h / 2), box.height - h);
    this.tip.style.left = `${this.canvas.offsetLeft + x}px`;
    this.tip.style.top = `${this.canvas.offsetTop + y}px`;
    this.draw();
  }

  click(event) {
    const best = this.nodeAt(event);
    if (best) { this.selected = best.id; this.draw(); this.onPick(best.id); }
  }

  // Where a node is drawn, in page coordinates (the tests click there).
  where(id) {
    const node = this.byId && this.byId.get(id);
    if (!node) return null;
    const box = this.canvas.getBoundingClientRect(), [sx, sy] = this.screen(node);
    return { x: box.left + sx, y: box.top + sy };
  }
}

// Prompt tokens per turn, one stacked bar a turn, one colour a region.
function plotRegions(canvas, turns) {
  const regions = [];
  for (const t of turns) for (const name of Object.keys(t.prompt_tokens || {})) if (!regions.includes(name)) regions.push(name);
  const ratio = window.devicePixelRatio || 1, box = canvas.getBoundingClientRect();
  canvas.width = box.width * ratio; canvas.height = box.height * ratio;
  const g = canvas.getContext("2d");
  g.setTransform(ratio, 0, 0, ratio, 0, 0);
  g.clearRect(0, 0, box.width, box.height);
  const totals = turns.map((t) => Object.values(t.prompt_tokens || {}).reduce((a, b) => a + b, 0));
  const top = Math.max(1, ...totals), left = 50, bottom = 30, right = 150, height = box.height - bottom - 10;
  const slot = (box.width - left - right) / Math.max(1, turns.length);
  g.font = "11px system-ui, sans-serif";
  g.fillStyle = "#52606d";
  g.fillText(`${top} tokens`, 4, 14);
  g.fillText("0", 30, 10 + height);
  turns.forEach((t, i) => {
    let y = 10 + height;
    regions.forEach((name, r) => {
      const value = (t.prompt_tokens || {})[name] || 0, h = (value / top) * height;
      g.fillStyle = REGION_COLOURS[r % REGION_COLOURS.length];
      g.fillRect(left + i * slot + slot * 0.15, y - h, slot * 0.7, h);
      y -= h;
    });
    g.fillStyle = "#52606d";
    g.fillText(String(t.turn), left + i * slot + slot * 0.45, box.height - 12);
  });
  regions.forEach((name, r) => {
    g.fillStyle = REGION_COLOURS[r % REGION_COLOURS.length];
    g.fillRect(box.width - right + 12, 14 + r * 18, 12, 12);
    g.fillStyle = "#1f2933";
    g.fillText(name, box.width - right + 30, 24 + r * 18);
  });
  g.fillText("turn", left, box.height - 1);
  return regions;
}
