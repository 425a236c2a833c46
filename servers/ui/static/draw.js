// Loci's own small canvas drawing: a force-laid graph and a stacked bar plot. No library, no network.
"use strict";

const KIND_COLOURS = { semantic: "#3b7dd8", episodic: "#e8912d", procedural: "#2f9e69" };
const EDGE_COLOURS = { ground: "#e8b36b", distill: "#6fcf9f", related: "#b6c0ca" };
const REGION_COLOURS = ["#3b7dd8", "#e8912d", "#2f9e69", "#9b59b6", "#d64545", "#16a3b8", "#8d6e63", "#7b8794"];

function nodeRadius(node) {
  return 4 + 2.5 * Math.log2(1 + (node.uses || 0));
}

// A deterministic layout: nodes start on a spiral, then repel each other and are pulled along their edges.
function layout(nodes, edges, width, height) {
  const index = new Map(nodes.map((n, i) => [n.id, i]));
  const n = nodes.length;
  const x = new Float64Array(n), y = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const a = i * 2.399963, r = 12 * Math.sqrt(i + 1);
    x[i] = Math.cos(a) * r;
    y[i] = Math.sin(a) * r;
  }
  const links = edges.map((e) => [index.get(e.src), index.get(e.dst), e.weight]).filter((l) => l[0] !== undefined && l[1] !== undefined);
  const rounds = Math.max(20, Math.min(200, Math.floor(4e6 / Math.max(1, n * n))));
  const k = Math.sqrt((width * height) / Math.max(1, n)) * 0.6;
  let heat = k * 2;
  const dx = new Float64Array(n), dy = new Float64Array(n);
  for (let round = 0; round < rounds; round++) {
    dx.fill(0); dy.fill(0);
    for (let i = 0; i < n; i++) {
      for (let j = i + 1; j < n; j++) {
        let ex = x[i] - x[j], ey = y[i] - y[j];
        const d2 = ex * ex + ey * ey + 0.01;
        const f = (k * k) / d2;
        dx[i] += ex * f; dy[i] += ey * f; dx[j] -= ex * f; dy[j] -= ey * f;
      }
    }
    for (const [a, b, w] of links) {
      const ex = x[a] - x[b], ey = y[a] - y[b];
      const d = Math.sqrt(ex * ex + ey * ey) + 0.01;
      const f = (d * d) / k * (0.5 + w) / d;
      dx[a] -= ex * f; dy[a] -= ey * f; dx[b] += ex * f; dy[b] += ey * f;
    }
    for (let i = 0; i < n; i++) {
      dx[i] -= x[i] * 0.01; dy[i] -= y[i] * 0.01;  // a little gravity keeps islands near the middle
      const d = Math.sqrt(dx[i] * dx[i] + dy[i] * dy[i]) + 0.01;
      const step = Math.min(d, heat);
      x[i] += (dx[i] / d) * step; y[i] += (dy[i] / d) * step;
    }
    heat *= 0.96;
  }
  nodes.forEach((node, i) => { node.x = x[i]; node.y = y[i]; });
}

class GraphCanvas {
  constructor(canvas, onPick) {
    this.canvas = canvas;
    this.onPick = onPick;
    this.piece = { nodes: [], edges: [] };
    this.hits = new Set();
    this.spread = new Set();
    this.selected = null;
    canvas.addEventListener("click", (event) => this.click(event));
    window.addEventListener("resize", () => this.draw());
  }

  show(piece, hits, spread) {
    this.piece = piece;
    this.hits = new Set(hits || []);
    this.spread = new Set(spread || []);
    this.byId = new Map(piece.nodes.map((n) => [n.id, n]));
    const box = this.canvas.getBoundingClientRect();
    layout(piece.nodes, piece.edges, box.width || 800, box.height || 600);
    this.fit();
    this.draw();
  }

  fit() {
    const box = this.canvas.getBoundingClientRect();
    const xs = this.piece.nodes.map((n) => n.x), ys = this.piece.nodes.map((n) => n.y);
    const minX = Math.min(...xs, 0), maxX = Math.max(...xs, 1), minY = Math.min(...ys, 0), maxY = Math.max(...ys, 1);
    // Room for the labels, which are drawn to the right of their nodes.
    const left = 30, right = 230, pad = 30;
    const scale = Math.min((box.width - left - right) / (maxX - minX || 1), (box.height - 2 * pad) / (maxY - minY || 1), 4);
    this.view = {
      scale,
      ox: left + (box.width - left - right) / 2 - ((minX + maxX) / 2) * scale,
      oy: box.height / 2 - ((minY + maxY) / 2) * scale,
    };
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
    for (const e of this.piece.edges) {
      const a = this.byId.get(e.src), b = this.byId.get(e.dst);
      if (!a || !b) continue;
      const [ax, ay] = this.screen(a), [bx, by] = this.screen(b);
      g.strokeStyle = this.spread.has(e.id) ? "#d64545" : EDGE_COLOURS[e.kind] || "#b6c0ca";
      g.lineWidth = (this.spread.has(e.id) ? 1.5 : 0.4) + 2.5 * e.weight;
      g.beginPath(); g.moveTo(ax, ay); g.lineTo(bx, by); g.stroke();
    }
    for (const node of this.piece.nodes) {
      const [sx, sy] = this.screen(node), r = nodeRadius(node);
      g.fillStyle = KIND_COLOURS[node.kind] || "#7b8794";
      g.beginPath(); g.arc(sx, sy, r, 0, 2 * Math.PI); g.fill();
      if (this.hits.has(node.id) || node.id === this.selected) {
        g.strokeStyle = node.id === this.selected ? "#1f2933" : "#d64545";
        g.lineWidth = 3;
        g.beginPath(); g.arc(sx, sy, r + 3, 0, 2 * Math.PI); g.stroke();
      }
    }
    g.fillStyle = "#1f2933";
    g.font = "11px system-ui, sans-serif";
    const labelled = this.piece.nodes.length <= 60 ? this.piece.nodes : this.piece.nodes.filter((n) => this.hits.has(n.id) || n.id === this.selected);
    for (const node of labelled) {
      const [sx, sy] = this.screen(node);
      g.fillText(`${node.id} ${node.label.slice(0, 32)}`, sx + nodeRadius(node) + 4, sy + 4);
    }
  }

  click(event) {
    const box = this.canvas.getBoundingClientRect();
    const px = event.clientX - box.left, py = event.clientY - box.top;
    let best = null, bestD = Infinity;
    for (const node of this.piece.nodes) {
      const [sx, sy] = this.screen(node);
      const d = Math.hypot(sx - px, sy - py);
      if (d < bestD && d <= nodeRadius(node) + 6) { best = node; bestD = d; }
    }
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
