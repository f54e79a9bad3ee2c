// The A-MEM link graph as SVG, laid out by a small deterministic force simulation.

import { empty, h, svg } from "./dom.js";

const WIDTH = 900;
const HEIGHT = 520;

function layout(nodes, edges) {
  // Fruchterman-Reingold with a pull towards the centre (for memories without links),
  // started from a circle so the picture is the same on every load.
  const n = nodes.length;
  const pos = nodes.map((_, i) => {
    const angle = (2 * Math.PI * i) / Math.max(1, n);
    const radius = 0.3 * Math.min(WIDTH, HEIGHT);
    return { x: WIDTH / 2 + radius * Math.cos(angle), y: HEIGHT / 2 + radius * Math.sin(angle) };
  });
  const index = new Map(nodes.map((node, i) => [node.id, i]));
  const links = edges.map((e) => [index.get(e.source), index.get(e.target), e.score]).filter(([a, b]) => a !== undefined && b !== undefined);
  const k = 0.45 * Math.sqrt((WIDTH * HEIGHT) / Math.max(1, n));
  const steps = 300;
  for (let step = 0; step < steps; step++) {
    const disp = pos.map(() => ({ x: 0, y: 0 }));
    for (let i = 0; i < n; i++) {
      for (let j = i + 1; j < n; j++) {
        const dx = pos[i].x - pos[j].x || 0.01;
        const dy = pos[i].y - pos[j].y || 0.01;
        const d = Math.max(1, Math.sqrt(dx * dx + dy * dy));
        const push = (k * k) / d;
        disp[i].x += (dx / d) * push;
        disp[i].y += (dy / d) * push;
        disp[j].x -= (dx / d) * push;
        disp[j].y -= (dy / d) * push;
      }
    }
    for (const [a, b, score] of links) {
      const dx = pos[a].x - pos[b].x;
      const dy = pos[a].y - pos[b].y;
      const d = Math.max(1, Math.sqrt(dx * dx + dy * dy));
      const pull = ((d * d) / k) * (0.5 + score);
      disp[a].x -= (dx / d) * pull;
      disp[a].y -= (dy / d) * pull;
      disp[b].x += (dx / d) * pull;
      disp[b].y += (dy / d) * pull;
    }
    const heat = (WIDTH / 8) * (1 - step / steps) + 1;
    for (let i = 0; i < n; i++) {
      disp[i].x += (WIDTH / 2 - pos[i].x) * 1.2;
      disp[i].y += (HEIGHT / 2 - pos[i].y) * 2;
      const length = Math.sqrt(disp[i].x * disp[i].x + disp[i].y * disp[i].y) || 1;
      pos[i].x += (disp[i].x / length) * Math.min(length, heat);
      pos[i].y += (disp[i].y / length) * Math.min(length, heat);
      pos[i].x = Math.max(24, Math.min(WIDTH - 24, pos[i].x));
      pos[i].y = Math.max(24, Math.min(HEIGHT - 24, pos[i].y));
    }
  }
  return { pos, links };
}

export function linkGraph(data, showDetail) {
  if (!data.nodes.length) return [empty("No semantic memories yet: the journal is consolidated into memory while the assistant sleeps.")];
  const { pos, links } = layout(data.nodes, data.edges);
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
        class: `node imp-${node.importance >= 8 ? "high" : node.importance <= 3 ? "low" : "mid"}${node.linked ? "" : " lonely"}`,
        "data-memory": node.id,
        tabindex: 0,
        onclick: () => showDetail(node),
        onfocus: () => showDetail(node),
      },
      svg("title", {}, `${node.id}: ${node.content}`),
    ),
  );
  const summary = h("p", { class: "hint" }, `${data.nodes.length} memories, ${data.edges.length} links; ${data.processed} of ${data.total_memories} memories processed by dreaming.`);
  return [summary, svg("svg", { viewBox: `0 0 ${WIDTH} ${HEIGHT}`, class: "graph", role: "img", "aria-label": "A-MEM link graph" }, edges, nodes)];
}
