// The context-window viewer: recent ticks, and for one tick every prompt component with
// its tokens and content, the execution pattern with source_layers, and the tool calls.

import { badge, bar, empty, h, listOr, statusBadge, when } from "./dom.js";

export function tickList(ticks, selected, pick) {
  if (!ticks.length) return [empty("No ticks yet on this server (idle ticks are not kept).")];
  return ticks.map((t) =>
    h(
      "li",
      { class: t.number === selected ? "selected" : "", dataset: { tick: t.number } },
      h(
        "button",
        { type: "button", onclick: () => pick(t.number) },
        h("span", { class: "num" }, `#${t.number}`),
        badge(t.kind, t.kind === "sleep" ? "warn" : "info"),
        t.status === "failed" ? badge("failed", "bad") : null,
        h("span", { class: "muted" }, when(t.at)),
        t.tokens !== null ? h("span", { class: "muted" }, `${t.tokens} tok`) : null,
        h("span", { class: "calls" }, t.tool_calls.map((c) => h("span", { class: c.ok ? "call ok" : "call bad" }, c.name))),
      ),
    ),
  );
}

function patternTable(pattern) {
  const fields = ["mode", "max_iterations", "allowed_categories", "terminal_ends_loop", "dangerous_requires_confirm", "multi_tool_enabled", "sub_agents_enabled"];
  return h(
    "table",
    { class: "pattern" },
    h("thead", {}, h("tr", {}, h("th", {}, "setting"), h("th", {}, "value"), h("th", {}, "source layer"))),
    h(
      "tbody",
      {},
      fields.map((f) => {
        const value = pattern[f];
        const shown = Array.isArray(value) ? value.join(", ") : value === null ? "any" : String(value);
        const layer = (pattern.source_layers || {})[f] || "–";
        return h("tr", {}, h("td", {}, f), h("td", {}, h("code", {}, shown)), h("td", {}, badge(layer, `layer-${layer.split(":")[0]}`)));
      }),
    ),
  );
}

function components(prompt) {
  const max = Math.max(1, ...prompt.components.map((c) => c.tokens));
  return h(
    "div",
    { class: "components" },
    h("p", { class: "hint" }, `${prompt.estimated_tokens} tokens estimated in ${prompt.message_count} messages; components below in id order.`),
    prompt.components.map((c) =>
      h(
        "details",
        { class: c.tokens ? "component" : "component empty", dataset: { component: c.key } },
        h(
          "summary",
          {},
          h("code", { class: "cid" }, String(c.id)),
          h("span", { class: "ckey" }, c.key),
          bar((c.tokens / max) * 100, "tokens"),
          h("span", { class: "ctok" }, `${c.tokens} tokens`),
          c.truncated ? badge("truncated", "warn") : null,
        ),
        c.content ? h("pre", {}, c.content) : empty("(empty)"),
      ),
    ),
  );
}

function toolCalls(loop) {
  return listOr("No tool calls.", "ol", { class: "toolcalls" }, loop.calls, (c) =>
    h(
      "li",
      {},
      h(
        "details",
        {},
        h("summary", {}, badge(c.ok ? "ok" : "failed", c.ok ? "ok" : "bad"), " ", h("strong", {}, c.name), h("span", { class: "muted" }, ` iteration ${c.iteration} · ${c.status}`)),
        h("h4", {}, "arguments"),
        h("pre", {}, c.arguments),
        h("h4", {}, "result"),
        h("pre", {}, JSON.stringify(c.result, null, 2)),
      ),
    ),
  );
}

function assessment(loop) {
  if (loop.assessment) return h("p", { class: "hint", dataset: { assessment: "applied" } }, "Layer-3 assessment: ", h("code", {}, JSON.stringify(loop.assessment)));
  if (loop.assessment_problem) return h("p", { class: "hint", dataset: { assessment: "ignored" } }, `Layer-3 assessment ignored: ${loop.assessment_problem}`);
  return null;
}

// Sessions a tick's tools ran (goal_decompose, sub-agents), each with its own prompt,
// pattern and calls; a sub-agent's own side sessions nest inside it.
function sideSessions(loop) {
  const sides = loop.side_sessions || [];
  if (!sides.length) return [];
  return [
    h("h3", {}, `Side sessions (${sides.length})`),
    sides.map((side) =>
      h(
        "details",
        { class: "side-session", dataset: { context: side.context_type } },
        h("summary", {}, badge(side.context_type, "subtle"), " ", h("span", { class: "muted" }, side.task || "")),
        side.pattern ? patternTable(side.pattern) : null,
        side.loop ? [h("h4", {}, `Tool calls (stopped by ${side.loop.stopped_by}, ${side.loop.iterations} iterations)`), toolCalls(side.loop), sideSessions(side.loop)] : null,
        side.prompt ? [h("h4", {}, "Prompt components"), components(side.prompt)] : null,
      ),
    ),
  ];
}

export function tickDetail(tick) {
  const parts = [
    h(
      "div",
      { class: "row" },
      h("strong", {}, `Tick #${tick.number}`),
      badge(tick.kind, "info"),
      statusBadge(tick.status),
      tick.context_type ? badge(tick.context_type, "subtle") : null,
      h("span", { class: "muted" }, when(tick.at)),
    ),
  ];
  if (tick.reply) parts.push(h("blockquote", { class: "reply" }, tick.reply));
  if (tick.error) parts.push(h("p", { class: "error" }, tick.error));
  if (tick.pattern) parts.push(h("h3", {}, "Execution pattern"), patternTable(tick.pattern));
  if (tick.loop) {
    parts.push(h("h3", {}, `Tool calls (stopped by ${tick.loop.stopped_by}, ${tick.loop.iterations} iterations)`), toolCalls(tick.loop));
    const assessed = assessment(tick.loop);
    if (assessed) parts.push(assessed);
    parts.push(...sideSessions(tick.loop));
  }
  if (tick.prompt) parts.push(h("h3", {}, "Prompt components"), components(tick.prompt));
  if (tick.sleep) {
    parts.push(h("h3", {}, `Sleep tick: ${tick.sleep.phase || "–"} → ${tick.sleep.phase_after || "awake"}`));
    parts.push(h("pre", {}, JSON.stringify(tick.sleep.operations, null, 2)));
  }
  // Sessions the tick itself ran in other contexts (reflection, pre-compaction extraction).
  parts.push(...sideSessions({ side_sessions: tick.side_sessions }));
  return parts;
}
