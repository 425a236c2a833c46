// Where the graph's nodes go: clusters found in the links, each laid out on its own, packed apart.
//
// One force layout over a few hundred nodes of an imported conversation makes a hairball: every session
// is tied to the others by a few entity links, so the whole piece collapses into one or two dense blobs.
// So the layout works in three steps, all deterministic (the same piece is always drawn the same way):
//   1. clusters: label propagation over the weighted links, then splinters merged into the cluster they are
//      most tied to (a session and its turns end up together); nodes with no link form one group of their own;
//   2. each cluster gets a small force layout of its own, then is cut to a disc whose area grows with its size;
//   3. the discs are packed, largest first, on a spiral stretched to the canvas's shape, each placed at the
//      first spot where it overlaps no disc already placed; so clusters never overlap, and a gap shows them apart.
// Everything is in canvas pixels; draw.js then scales the whole to fit inside the canvas.
"use strict";

const LAYOUT_ROUNDS = 60;
const SMALL = 4;
const TIED = 0.12;

function weightedLinks(nodes, edges) {
  const index = new Map(nodes.map((n, i) => [n.id, i]));
  const links = [];
  for (const e of edges) {
    const a = index.get(e.src), b = index.get(e.dst);
    if (a !== undefined && b !== undefined && a !== b) links.push([a, b, Math.max(0.05, e.weight)]);
  }
  return links;
}

// Label propagation: each node takes the label its links weigh most, ties to the smaller label.
function clusterLabels(n, links) {
  const near = Array.from({ length: n }, () => []);
  for (const [a, b, w] of links) { near[a].push([b, w]); near[b].push([a, w]); }
  const label = Int32Array.from({ length: n }, (_, i) => i);
  for (let round = 0; round < 30; round++) {
    let changed = false;
    for (let i = 0; i < n; i++) {
      if (!near[i].length) continue;
      const weight = new Map();
      for (const [j, w] of near[i]) weight.set(label[j], (weight.get(label[j]) || 0) + w);
      let best = label[i], most = weight.get(label[i]) || 0;
      for (const [l, w] of weight) if (w > most + 1e-9 || (Math.abs(w - most) <= 1e-9 && l < best)) { best = l; most = w; }
      if (best !== label[i]) { label[i] = best; changed = true; }
    }
    if (!changed) break;
  }
  mergeSplinters(label, near);
  const groups = new Map(), alone = [];
  for (let i = 0; i < n; i++) {
    if (!near[i].length) { alone.push(i); continue; }
    if (!groups.has(label[i])) groups.set(label[i], []);
    groups.get(label[i]).push(i);
  }
  const clusters = [...groups.values()].sort((a, b) => b.length - a.length || a[0] - b[0]);
  if (alone.length) clusters.push(alone);
  return { clusters, unlinked: alone.length ? clusters.length - 1 : -1 };
}

// A splinter joins the cluster it is most tied to: one under SMALL nodes (two turns cut off their session)
// whenever it has a tie, a larger one when its ties weigh TIED per node (half a session, whose turns are
// each tied to the session's node); a few entity links between two sessions are far lighter.
function mergeSplinters(label, near) {
  for (let round = 0; round < 4; round++) {
    const size = new Map();
    for (let i = 0; i < label.length; i++) if (near[i].length) size.set(label[i], (size.get(label[i]) || 0) + 1);
    const ties = new Map();  // label -> (other label -> weight)
    for (let i = 0; i < label.length; i++) {
      if (!ties.has(label[i])) ties.set(label[i], new Map());
      const mine = ties.get(label[i]);
      for (const [j, w] of near[i]) if (label[j] !== label[i]) mine.set(label[j], (mine.get(label[j]) || 0) + w);
    }
    const into = new Map();
    for (const [own, others] of ties) {
      let best = null, most = 0;
      for (const [other, w] of others) if (w > most || (w === most && best !== null && other < best)) { best = other; most = w; }
      const mine = size.get(own) || 0, theirs = size.get(best) || 0;
      const smaller = mine < theirs || (mine === theirs && own > best);
      if (best !== null && smaller && (mine < SMALL || most >= TIED * mine)) into.set(own, best);
    }
    if (!into.size) return;
    const root = (l) => { while (into.has(l)) l = into.get(l); return l; };
    for (let i = 0; i < label.length; i++) label[i] = root(label[i]);
  }
}

// Nodes drawn large (the much used) are pushed apart until no two discs touch (a few passes, bounded).
function separate(radii, px, py) {
  const n = radii.length;
  for (let pass = 0; pass < 20; pass++) {
    let moved = false;
    for (let i = 0; i < n; i++) {
      for (let j = i + 1; j < n; j++) {
        const ex = px[j] - px[i], ey = py[j] - py[i], room = radii[i] + radii[j] + 4, d2 = ex * ex + ey * ey;
        if (d2 >= room * room) continue;
        const d = Math.sqrt(d2) || 0.01, push = (room - d) / 2, ux = d2 ? ex / d : 1, uy = ey / d;
        px[i] -= ux * push; py[i] -= uy * push; px[j] += ux * push; py[j] += uy * push;
        moved = true;
      }
    }
    if (!moved) return;
  }
}

// A force layout of one cluster around (0, 0), nodes `spacing` apart and their discs (`size`) apart; returns
// its radius.
function layoutCluster(members, links, spacing, x, y, size) {
  const n = members.length, at = new Map(members.map((m, i) => [m, i]));
  const px = new Float64Array(n), py = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const a = i * 2.399963, r = spacing * 0.6 * Math.sqrt(i + 0.5);
    px[i] = Math.cos(a) * r; py[i] = Math.sin(a) * r;
  }
  const own = links.filter(([a, b]) => at.has(a) && at.has(b)).map(([a, b, w]) => [at.get(a), at.get(b), w]);
  const k = spacing, dx = new Float64Array(n), dy = new Float64Array(n);
  let heat = spacing * Math.sqrt(n);
  for (let round = 0; round < LAYOUT_ROUNDS && n > 1; round++) {
    dx.fill(0); dy.fill(0);
    for (let i = 0; i < n; i++) {
      for (let j = i + 1; j < n; j++) {
        const ex = px[i] - px[j], ey = py[i] - py[j], d2 = ex * ex + ey * ey + 0.01, f = (k * k) / d2;
        dx[i] += ex * f; dy[i] += ey * f; dx[j] -= ex * f; dy[j] -= ey * f;
      }
    }
    for (const [a, b, w] of own) {
      const ex = px[a] - px[b], ey = py[a] - py[b], d = Math.sqrt(ex * ex + ey * ey) + 0.01, f = (d / k) * (0.5 + w);
      dx[a] -= ex * f; dy[a] -= ey * f; dx[b] += ex * f; dy[b] += ey * f;
    }
    for (let i = 0; i < n; i++) {
      dx[i] -= px[i] * 0.05; dy[i] -= py[i] * 0.05;  // a pull to the middle keeps the cluster round
      const d = Math.sqrt(dx[i] * dx[i] + dy[i] * dy[i]) + 0.01, step = Math.min(d, heat);
      px[i] += (dx[i] / d) * step; py[i] += (dy[i] / d) * step;
    }
    heat *= 0.93;
  }
  let cx = 0, cy = 0;
  for (let i = 0; i < n; i++) { cx += px[i]; cy += py[i]; }
  cx /= n; cy /= n;
  let reach = 0;
  for (let i = 0; i < n; i++) { px[i] -= cx; py[i] -= cy; reach = Math.max(reach, Math.hypot(px[i], py[i])); }
  // cut to a disc of the area `n` nodes need, so one long chain does not take the whole canvas
  const room = spacing * 0.75 * Math.sqrt(n), shrink = reach > room ? room / reach : 1;
  for (let i = 0; i < n; i++) { px[i] *= shrink; py[i] *= shrink; }
  const sizes = members.map((m) => size[m]);
  separate(sizes, px, py);
  let radius = spacing * 0.5;
  members.forEach((m, i) => { x[m] = px[i]; y[m] = py[i]; radius = Math.max(radius, Math.hypot(px[i], py[i]) + sizes[i]); });
  return radius;
}

// The nodes with no link: a sunflower disc, in the order they came (most used first).
function layoutUnlinked(members, spacing, x, y) {
  members.forEach((m, i) => {
    const a = i * 2.399963, r = spacing * 0.7 * Math.sqrt(i + 0.5);
    x[m] = Math.cos(a) * r; y[m] = Math.sin(a) * r;
  });
  return Math.max(spacing * 0.5, spacing * 0.7 * Math.sqrt(members.length));
}

// Discs packed largest first (the unlinked nodes' disc `last`): each goes to the first free spot on a spiral
// stretched by `aspect`. A spot too crowded for a disc stays too crowded for a disc as large (discs are only
// added), so discs of one size resume the search where the last of them was placed.
function packDiscs(radii, gap, aspect, last) {
  const order = radii.map((r, i) => i).filter((i) => i !== last).sort((a, b) => radii[b] - radii[a] || a - b);
  if (last >= 0) order.push(last);
  const placed = [], centres = new Array(radii.length), resume = new Map();
  const step = Math.max(2, Math.min(...radii, 1e9) * 0.5);
  for (const c of order) {
    const r = radii[c], size = Math.ceil(r);
    let spot = [0, 0], t = resume.get(size) || 0;
    for (; placed.length; t++) {
      const a = t * 0.35, s = step * Math.sqrt(t) * 1.6;
      const sx = Math.cos(a) * s * Math.sqrt(aspect), sy = (Math.sin(a) * s) / Math.sqrt(aspect);
      if (placed.every(([ox, oy, or]) => Math.hypot(sx - ox, sy - oy) >= r + or + gap)) { spot = [sx, sy]; break; }
    }
    resume.set(size, t);
    placed.push([spot[0], spot[1], r]);
    centres[c] = spot;
  }
  return centres;
}

// Positions every node (node.x, node.y; `radius(node)` is how large it is drawn) and returns the clusters:
// [{members: [ids], x, y, r, unlinked}].
function layoutPiece(nodes, edges, width, height, radius) {
  const n = nodes.length;
  if (!n) return [];
  const links = weightedLinks(nodes, edges);
  const { clusters, unlinked } = clusterLabels(n, links);
  const spacing = Math.max(14, Math.min(60, Math.sqrt((width * height) / n) * 0.55));
  const x = new Float64Array(n), y = new Float64Array(n), size = nodes.map(radius);
  const radii = clusters.map((members, c) =>
    c === unlinked ? layoutUnlinked(members, spacing, x, y) : layoutCluster(members, links, spacing, x, y, size));
  const centres = packDiscs(radii, spacing * 1.2, Math.max(0.5, Math.min(2.5, width / Math.max(1, height))), unlinked);
  return clusters.map((members, c) => {
    const [cx, cy] = centres[c];
    for (const m of members) { nodes[m].x = x[m] + cx; nodes[m].y = y[m] + cy; }
    return { members: members.map((m) => nodes[m].id), x: cx, y: cy, r: radii[c], unlinked: c === unlinked };
  });
}
