// The A-MEM link graph as SVG. Connected memories are laid out as clusters (one small force
// simulation per connected component, packed in rows, biggest first); memories without
// links sit in a row of their own. No randomness: the same graph gives the same picture.

import { empty, h, svg } from "./dom.js";

const WIDTH = 900; // the widest drawing; a narrower card draws at its own width (text stays legible)
const MIN_WIDTH = 300;
const NODE_SPACE = 20; // radius a cluster needs per sqrt(member)
const LONELY_STEP = 30; // spacing of the unlinked memories' grid
const PAD = 16;
const LABEL_SPACE = 14; // under each cluster, for its label
const LABEL_WIDTH = 130; // a cluster's slot is at least as wide as its label
const EXCERPT = 90; // characters of content in the hover label

// Connected components of the link graph (union-find), biggest first, then by first node.
function components(n, links) {
  const parent = Array.from({ length: n }, (_, i) => i);
  const find = (i) => (parent[i] === i ? i : (parent[i] = find(parent[i])));
  for (const [a, b] of links) {
    const ra = find(a);
    const rb = find(b);
    if (ra !== rb) parent[Math.max(ra, rb)] = Math.min(ra, rb);
  }
  const groups = new Map();
  for (let i = 0; i < n; i++) {
    const root = find(i);
    if (!groups.has(root)) groups.set(root, []);
    groups.get(root).push(i);
  }
  return [...groups.values()].sort((x, y) => y.length - x.length || x[0] - y[0]);
}

// Fruchterman-Reingold inside one cluster, started from a circle, pulled to its centre.
function layoutCluster(members, links, radius) {
  const n = members.length;
  const local = new Map(members.map((node, i) => [node, i]));
  const pos = members.map((_, i) => {
    const angle = (2 * Math.PI * i) / n;
    return { x: 0.6 * radius * Math.cos(angle), y: 0.6 * radius * Math.sin(angle) };
  });
  const own = links.filter(([a]) => local.has(a)).map(([a, b, score]) => [local.get(a), local.get(b), score]);
  const k = (1.6 * radius) / Math.sqrt(n);
  const steps = n > 200 ? 80 : n > 120 ? 120 : 220; // a big cluster settles in fewer steps
  for (let step = 0; step < steps; step++) {
    const disp = pos.map(() => ({ x: 0, y: 0 }));
    for (let i = 0; i < n; i++) {
      for (let j = i + 1; j < n; j++) {
        const dx = pos[i].x - pos[j].x || 0.01 * (i - j);
        const dy = pos[i].y - pos[j].y || 0.01;
        const d = Math.max(1, Math.hypot(dx, dy));
        const push = (k * k) / d;
        disp[i].x += (dx / d) * push;
        disp[i].y += (dy / d) * push;
        disp[j].x -= (dx / d) * push;
        disp[j].y -= (dy / d) * push;
      }
    }
    for (const [a, b, score] of own) {
      const dx = pos[a].x - pos[b].x;
      const dy = pos[a].y - pos[b].y;
      const d = Math.max(1, Math.hypot(dx, dy));
      const pull = ((d * d) / k) * (0.5 + score);
      disp[a].x -= (dx / d) * pull;
      disp[a].y -= (dy / d) * pull;
      disp[b].x += (dx / d) * pull;
      disp[b].y += (dy / d) * pull;
    }
    const heat = (radius / 3) * (1 - step / steps) + 0.5;
    for (let i = 0; i < n; i++) {
      disp[i].x -= pos[i].x * 0.3;
      disp[i].y -= pos[i].y * 0.3;
      const length = Math.hypot(disp[i].x, disp[i].y) || 1;
      pos[i].x += (disp[i].x / length) * Math.min(length, heat);
      pos[i].y += (disp[i].y / length) * Math.min(length, heat);
      const out = Math.hypot(pos[i].x, pos[i].y);
      const room = radius - 10;
      if (out > room) {
        pos[i].x *= room / out;
        pos[i].y *= room / out;
      }
    }
  }
  return pos;
}

// Clusters packed left to right in rows; the unlinked memories in a grid below them.
export function layout(nodes, edges, drawnWidth = WIDTH) {
  const index = new Map(nodes.map((node, i) => [node.id, i]));
  const links = edges.map((e) => [index.get(e.source), index.get(e.target), e.score]).filter(([a, b]) => a !== undefined && b !== undefined && a !== b);
  const groups = components(nodes.length, links);
  const clusters = groups.filter((g) => g.length > 1);
  const lonely = groups.filter((g) => g.length === 1).map((g) => g[0]).sort((a, b) => a - b);
  const pos = new Array(nodes.length);
  const hulls = [];
  let x = PAD;
  let y = PAD;
  let rowHeight = 0;
  for (const members of clusters) {
    const radius = Math.min(drawnWidth / 2 - PAD, NODE_SPACE * Math.sqrt(members.length) + 14);
    const slot = Math.max(2 * radius, LABEL_WIDTH);
    if (x + slot > drawnWidth - PAD && x > PAD) {
      x = PAD;
      y += rowHeight + PAD;
      rowHeight = 0;
    }
    const cx = x + slot / 2;
    const cy = y + radius;
    layoutCluster(members, links, radius).forEach((p, i) => {
      pos[members[i]] = { x: cx + p.x, y: cy + p.y };
    });
    hulls.push({ cx, cy, r: radius, size: members.length });
    x += slot + PAD;
    rowHeight = Math.max(rowHeight, 2 * radius + LABEL_SPACE);
  }
  let height = clusters.length ? y + rowHeight + PAD : PAD;
  let band = null;
  if (lonely.length) {
    const perRow = Math.floor((drawnWidth - 2 * PAD) / LONELY_STEP);
    const top = height + 14;
    lonely.forEach((node, i) => {
      pos[node] = { x: PAD + 12 + (i % perRow) * LONELY_STEP, y: top + 12 + Math.floor(i / perRow) * LONELY_STEP };
    });
    const rows = Math.ceil(lonely.length / perRow);
    band = { y: height, height: rows * LONELY_STEP + 14 };
    height = top + rows * LONELY_STEP + PAD;
  }
  return { pos, links, hulls, band, height: Math.max(height, 120) };
}

function excerpt(text) {
  const flat = String(text).replace(/\s+/g, " ").trim();
  return flat.length > EXCERPT ? `${flat.slice(0, EXCERPT - 1)}…` : flat;
}

function importance(node) {
  return node.importance >= 8 ? "high" : node.importance <= 3 ? "low" : "mid";
}

function legend() {
  const item = (swatch, text) => h("span", { class: "legend-item" }, swatch, text);
  const dot = (cls) => h("span", { class: `swatch ${cls}` });
  return h(
    "div",
    { class: "legend", role: "list", "aria-label": "legend" },
    item(dot("imp-high"), "importance 8–10"),
    item(dot("imp-mid"), "importance 4–7"),
    item(dot("imp-low"), "importance 1–3"),
    item(dot("lonely"), "faded: not linked yet"),
    item(h("span", { class: "swatch edge" }), "link (thicker: more similar)"),
    item(h("span", { class: "swatch hull" }), "cluster: memories linked to each other"),
    item(h("span", { class: "swatch size" }), "size: importance"),
  );
}

// The hover label: a text with a backing box, placed next to the node and kept inside.
function hoverLabel(drawn) {
  const box = svg("rect", { class: "label-box", rx: 4, ry: 4, x: 0, y: 0, width: 0, height: 0 });
  const text = svg("text", { class: "label-text", x: 0, y: 0 });
  const group = svg("g", { class: "hover-label", visibility: "hidden", "aria-hidden": "true" }, box, text);
  const show = (node, at, height) => {
    text.textContent = excerpt(node.content);
    const textWidth = (text.getComputedTextLength ? text.getComputedTextLength() : 0) || 6.5 * text.textContent.length;
    const left = Math.max(4, Math.min(drawn - textWidth - 16, at.x + 12));
    const top = at.y - 30 < 4 ? at.y + 14 : at.y - 30;
    box.setAttribute("x", left);
    box.setAttribute("y", Math.min(height - 24, top));
    box.setAttribute("width", textWidth + 12);
    box.setAttribute("height", 22);
    text.setAttribute("x", left + 6);
    text.setAttribute("y", Math.min(height - 24, top) + 15);
    group.setAttribute("visibility", "visible");
  };
  const hide = () => group.setAttribute("visibility", "hidden");
  return { group, show, hide };
}

// `width`: the card's width in px; the drawing uses it (up to WIDTH) so that its text is
// drawn at its own size instead of being scaled down to a few pixels on a phone.
export function linkGraph(data, showDetail, width = WIDTH) {
  if (!data.nodes.length) return [empty("No semantic memories yet: the journal is consolidated into memory while the assistant sleeps.")];
  const drawn = Math.round(Math.max(MIN_WIDTH, Math.min(WIDTH, width > 0 ? width : WIDTH)));
  const { pos, links, hulls, band, height } = layout(data.nodes, data.edges, drawn);
  const label = hoverLabel(drawn);
  const hullNodes = hulls.map((c, i) =>
    svg(
      "g",
      { class: "cluster" },
      svg("circle", { cx: c.cx, cy: c.cy, r: c.r, class: "hull" }),
      svg("text", { x: c.cx, y: c.cy + c.r + 12, class: "hull-label", "text-anchor": "middle" }, `cluster ${i + 1} · ${c.size} memories`),
    ),
  );
  const bandNodes = band
    ? [svg("line", { x1: PAD, x2: drawn - PAD, y1: band.y, y2: band.y, class: "band-line" }), svg("text", { x: PAD, y: band.y + 11, class: "hull-label" }, "not linked yet")]
    : [];
  const edges = links.map(([a, b, score]) =>
    svg("line", { x1: pos[a].x, y1: pos[a].y, x2: pos[b].x, y2: pos[b].y, class: "edge", "stroke-width": 0.5 + 3 * Math.max(0, score - 0.5) }, svg("title", {}, `similarity ${score}`)),
  );
  const nodes = data.nodes.map((node, i) =>
    svg(
      "circle",
      {
        cx: pos[i].x,
        cy: pos[i].y,
        r: 4 + node.importance * 0.9,
        class: `node imp-${importance(node)}${node.linked ? "" : " lonely"}`,
        "data-memory": node.id,
        tabindex: 0,
        onclick: () => showDetail(node),
        onfocus: () => {
          label.show(node, pos[i], height);
          showDetail(node);
        },
        onblur: label.hide,
        onmouseenter: () => label.show(node, pos[i], height),
        onmouseleave: label.hide,
      },
      svg("title", {}, `${node.id}: ${node.content}`),
    ),
  );
  const summary = h(
    "p",
    { class: "hint" },
    `${data.nodes.length} memories in ${hulls.length} clusters, ${data.edges.length} links; ${data.processed} of ${data.total_memories} memories processed by dreaming.`,
  );
  return [
    summary,
    legend(),
    svg("svg", { viewBox: `0 0 ${drawn} ${height}`, class: "graph", role: "img", "aria-label": "A-MEM link graph" }, hullNodes, bandNodes, edges, nodes, label.group),
  ];
}
