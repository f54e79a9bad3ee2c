// The overview's cards: the context-window gauge, the mode with sleep and wake, and the
// session's metrics with tool-use health.

import { badge, bar, h, svg, when } from "./dom.js";

const ADVISORY_CLASS = { normal: "ok", warning: "warn", critical: "bad" };

export function gauge(status) {
  const usage = status.token_usage;
  const pct = Math.max(0, Math.min(100, usage.usage_percentage));
  const level = status.token_advisory.level;
  const angle = Math.PI * (1 - pct / 100);
  const x = 100 + 80 * Math.cos(angle);
  const y = 100 - 80 * Math.sin(angle);
  const arc = (from, to, cls) => {
    const a1 = Math.PI * (1 - from / 100);
    const a2 = Math.PI * (1 - to / 100);
    return svg("path", { d: `M ${100 + 80 * Math.cos(a1)} ${100 - 80 * Math.sin(a1)} A 80 80 0 0 1 ${100 + 80 * Math.cos(a2)} ${100 - 80 * Math.sin(a2)}`, class: `arc ${cls}` });
  };
  return [
    svg(
      "svg",
      { viewBox: "0 0 200 120", class: "gauge", role: "img", "aria-label": `context ${pct}% used` },
      arc(0, 60, "zone-normal"),
      arc(60, 80, "zone-warning"),
      arc(80, 100, "zone-critical"),
      svg("line", { x1: 100, y1: 100, x2: x, y2: y, class: "needle" }),
      svg("circle", { cx: 100, cy: 100, r: 5, class: "hub" }),
      svg("text", { x: 100, y: 88, class: "gauge-value", "text-anchor": "middle" }, `${pct}%`),
    ),
    h("div", { class: "row center" }, badge(level.toUpperCase(), ADVISORY_CLASS[level] || ""), h("span", {}, status.token_advisory.message)),
    h("p", { class: "muted center" }, `${usage.estimated_used.toLocaleString()} of ${usage.model_limit.toLocaleString()} tokens (${usage.source})`),
  ];
}

export function modeCard(mode, control) {
  const asleep = mode.mode === "sleep";
  return [
    h("div", { class: "row" }, badge(asleep ? "asleep" : "awake", asleep ? "sleep" : "ok"), asleep ? badge(`${mode.sleep_phase} · ${mode.sleep_depth}`, "warn") : null),
    // A new assistant has never changed mode: no "since", only the reason ("started").
    h("p", {}, mode.since ? `since ${when(mode.since)}: ${mode.reason}` : `${asleep ? "asleep" : "awake"}: ${mode.reason}`),
    h("p", { class: "muted" }, `ticks every ${mode.tick_rate}s · schedule ${mode.schedule.enabled ? `on (${mode.schedule.sleep_start_hour}:00 for ${mode.schedule.sleep_duration_hours}h)` : "off"}`),
    mode.cooldown_until ? h("p", { class: "muted" }, `wake cooldown until ${when(mode.cooldown_until)}`) : null,
    h(
      "div",
      { class: "row" },
      asleep
        ? h("button", { type: "button", id: "wake-btn", onclick: () => control("wake") }, "Wake")
        : h("button", { type: "button", id: "sleep-btn", onclick: () => control("sleep") }, "Sleep"),
    ),
  ];
}

export function metricsCard(summary) {
  const m = summary.session_metrics;
  const c = summary.counts;
  const ok = m.total_tool_calls ? (m.successful_calls / m.total_tool_calls) * 100 : 100;
  return [
    h("div", { class: "stat-row" }, stat(m.total_tool_calls, "tool calls"), stat(m.successful_calls, "ok"), stat(m.failed_calls, "failed")),
    bar(ok, "done"),
    h("p", { class: "muted" }, `session since ${when(m.session_start)} · model ${summary.model} · embedder ${summary.embedder || "none"}`),
    toolUseLine(summary.tool_use_health),
    backlogLine(summary.night_backlog),
    h(
      "div",
      { class: "stat-row small" },
      stat(c.active_goals, "active goals"),
      stat(c.journal_entries, "journal"),
      stat(c.memories, "memories"),
      stat(c.entities, "entities"),
      stat(c.open_events, "queued events"),
    ),
  ];
}

// The night's work left (carried over to the next sleep): entries unscored and
// unconsolidated, memories unlinked.
function backlogLine(backlog) {
  if (!backlog) return null;
  const { unscored, unconsolidated, unlinked } = backlog;
  const text = unscored || unconsolidated || unlinked
    ? `night work left: ${unscored.toLocaleString()} entries unscored · ${unconsolidated.toLocaleString()} unconsolidated · ${unlinked.toLocaleString()} memories unlinked`
    : "night work left: none";
  return h("p", { class: "muted", id: "night-backlog" }, text);
}

// One line of tool-use health over the last ticks, and the warning when tools go unused.
function toolUseLine(health) {
  if (!health) return null;
  if (!health.ticks) return h("p", { class: "muted", id: "tool-use" }, "tool use: no ticks yet");
  const extras = [
    [health.parsed_from_text, "written as text"],
    [health.repeated_calls, "repeated"],
    [health.cut_replies, "cut by the length limit"],
    [health.fallback_replies, "fallback replies"],
  ].filter(([n]) => n).map(([n, label]) => `${n} ${label}`);
  const text = `tool use (last ${health.ticks} ticks): ${health.valid_calls} valid, ${health.invalid_calls} invalid, ${health.text_only_answers} text-only` + (extras.length ? ` (${extras.join(", ")})` : "");
  return h(
    "div",
    { id: "tool-use" },
    h("p", { class: "muted" }, text),
    health.warning ? h("div", { class: "row" }, badge("warning", "warn"), h("span", {}, health.warning)) : null,
  );
}

function stat(value, label) {
  return h("div", { class: "stat" }, h("strong", {}, String(value)), h("span", {}, label));
}
