// Renderers for the state panels. Each takes the API's JSON and returns DOM nodes.

import { badge, bar, empty, h, listOr, statusBadge, when } from "./dom.js";
import { editable, forgetButton } from "./edits.js";
import { attributeEditor, observationList } from "./entity_edits.js";

const STATE_CLASS = { stranger: "subtle", acquaintance: "info", friend: "ok", ally: "ok strong" };

// With `ops` (editActions().goal) each goal's description can be edited and the goal deleted.
export function goalTree(data, { compact = false, ops = null } = {}) {
  if (!data.goals.length) return empty("No goals yet. Ask the assistant for something in the chat.");
  const render = (goal) =>
    h(
      "li",
      { class: `goal ${goal.status}`, dataset: { goalId: goal.id } },
      h(
        "div",
        { class: "goal-row" },
        bar(goal.progress, goal.status === "completed" ? "done" : ""),
        h("span", { class: "pct" }, `${Math.floor(goal.progress)}%`),
        ops ? editable({ kind: "goal", id: goal.id, text: goal.description, ops, tag: "span", textClass: "desc-text" }) : h("span", { class: "desc" }, goal.description),
        statusBadge(goal.status),
        compact ? null : badge(goal.priority, `prio-${goal.priority}`),
        compact ? null : h("code", { class: "id" }, goal.id),
      ),
      goal.subtasks.length ? h("ul", {}, goal.subtasks.map(render)) : null,
    );
  const c = data.counts;
  return [
    h("p", { class: "hint" }, `${data.total} goals: ${c.active} active, ${c.completed} completed, ${c.abandoned} abandoned`),
    h("ul", { class: "tree" }, data.goals.map(render)),
  ];
}

export function projects(data, { compact = false } = {}) {
  return listOr("No projects yet.", "ul", { class: "projects" }, data.projects, (p) =>
    h(
      "li",
      { class: p.key === data.active ? "active-project" : "" },
      h(
        "div",
        { class: "row" },
        p.key === data.active ? badge("▶ active", "ok") : statusBadge(p.status),
        h("strong", {}, p.key),
        h("span", { class: "muted" }, `last active ${when(p.last_active)}`),
      ),
      h("div", {}, p.summary),
      compact || !p.context ? null : h("pre", { class: "context-text" }, p.context),
    ),
  );
}

// Session memory: the facts and patterns in every prompt. With `ops` (editActions' session
// entry) each item has Edit and Delete, and each list a form to add one.
export function sessionMemory(data, ops) {
  const list = (title, items, fmt = (x) => x) =>
    h("div", {}, h("h3", {}, `${title} (${items.length})`), items.length ? h("ul", { class: "plain" }, items.map((x) => h("li", {}, fmt(x)))) : empty("none"));
  const editableList = (title, kind, list, items) =>
    h(
      "div",
      { class: "session-list", dataset: { list } },
      h("h3", {}, `${title} (${items.length})`),
      items.length
        ? h("ul", { class: "plain" }, items.map((text, i) => editable({ kind: `session-${kind}`, id: i, text, ops: ops[kind], what: kind, tag: "li" })))
        : empty("none"),
      addItem(kind, list),
    );
  const addItem = (kind, list) => {
    const input = h("input", { type: "text", name: "text", placeholder: kind === "fact" ? "Dave prefers red wine" : "Regulars order before noon", "aria-label": `new ${kind}` });
    const add = async (event) => {
      event.preventDefault();
      const text = input.value.trim();
      if (!text) return;
      // The form counts as busy while focused (edits.js busy()): leave it so the reload runs.
      document.activeElement.blur();
      if (await ops.add(list, text)) input.value = "";
    };
    return h("form", { class: "row add-attr add-session", onsubmit: add }, input, h("button", { type: "submit", class: "small" }, `Add ${kind}`));
  };
  const completed = list("Completed tasks", data.completed_tasks.slice(-8), (t) => `${t.description} (${when(t.timestamp)})`);
  if (!ops) return [list("Key facts", data.key_facts), list("Learned patterns", data.learned_patterns), completed];
  return [editableList("Key facts", "fact", "facts", data.key_facts), editableList("Learned patterns", "pattern", "patterns", data.learned_patterns), completed];
}

export function workingMemory(data) {
  const entries = Object.entries(data.conversations || {});
  return listOr("No active conversations.", "ul", { class: "plain" }, entries, ([who, c]) =>
    h("li", {}, h("strong", {}, who), ` – ${c.topic} `, h("span", { class: "muted" }, `(${c.messages.length} messages, last ${when(c.last_message_at)})`)),
  );
}

function importanceClass(value) {
  if (value >= 8) return "imp-high";
  if (value <= 3) return "imp-low";
  return "imp-mid";
}

export function journalEntries(data, ops = null) {
  if (!data.entries.length) return [empty("No journal entries match.")];
  return data.entries.map((e) =>
    h(
      "li",
      { class: `entry ${e.is_synthesis ? "synthesis" : ""}` },
      h(
        "div",
        { class: "meta" },
        h("span", { class: `importance ${importanceClass(e.importance)}`, title: "importance" }, String(e.importance)),
        h("span", { class: "muted" }, `#${e.id} · ${when(e.timestamp)}`),
        badge(e.importance_method, `method-${e.importance_method}`),
        badge(`trust ${Number(e.source_trust).toFixed(2)}`, "subtle"),
        badge(e.source_type, "subtle"),
        e.source_entity ? badge(e.source_entity, "info") : null,
        e.consolidated ? badge("consolidated", "ok") : null,
      ),
      editable({ kind: "journal", id: e.id, text: e.content, ops, what: "journal entry" }),
      e.tags.length || e.related_projects.length
        ? h("div", { class: "tags" }, e.tags.map((t) => h("span", { class: "tag" }, `#${t}`)), e.related_projects.map((p) => h("span", { class: "tag project" }, p)))
        : null,
    ),
  );
}

export function reflection(data) {
  const state = data.reflection;
  const pct = Math.min(100, (state.cumulative_importance / state.threshold) * 100);
  return [
    h("span", {}, `Importance towards the next reflection: ${state.cumulative_importance} / ${state.threshold}`),
    bar(pct, pct >= 100 ? "warn" : ""),
    h("span", { class: "muted" }, `${state.reflection_count} reflections so far · last ${when(state.last_reflection_time)}`),
  ];
}

export function memories(data, ops = null) {
  const items = data.memories || [];
  const none = data.query ? `Nothing recalled for “${data.query}”.` : "No semantic memories yet (they come from the journal while sleeping).";
  return listOr(none, "ol", { class: "memories" }, items, (m) =>
    h(
      "li",
      { dataset: { memory: m.id }, class: m.metadata.valid_to ? "replaced" : null },
      h(
        "div",
        { class: "meta" },
        m.score !== undefined ? h("span", { class: "score", title: "the fused score (BM25 and vectors) that ranks the results" }, `rank score ${Number(m.score).toFixed(3)}`) : null,
        m.relevance !== undefined && m.relevance !== null ? badge(`cosine ${Number(m.relevance).toFixed(2)}`, "subtle") : null,
        h("code", { class: "id" }, m.id),
        badge(`trust ${Number(m.metadata.source_trust).toFixed(2)}`, "subtle"),
        badge(`importance ${m.metadata.importance}`, importanceClass(m.metadata.importance)),
        m.metadata.source_entity ? badge(m.metadata.source_entity, "info") : null,
        h("span", { class: "muted" }, when(m.metadata.occurred_at)),
        m.metadata.mentions > 1 ? badge(`said ${m.metadata.mentions}×`, "subtle", "the same fact, said again: one memory, several sources") : null,
        m.metadata.valid_to ? badge(`replaced ${when(m.metadata.valid_to)}`, "warn", `no longer current: replaced by ${m.metadata.superseded_by || "a newer fact"}`) : null,
      ),
      editable({ kind: "memory", id: m.id, text: m.content, ops }),
    ),
  );
}

// With `forget` ({ ops, done }) each card offers "Forget…" (dry run first, then confirm),
// and edits of its attributes and observations through `ops.entity`.
export function entities(data, forget = null) {
  if (!data.entities.length) return [empty("No one has spoken to the assistant yet.")];
  const edit = forget && forget.ops.entity;
  return data.entities.map((e) => {
    const rel = e.relationship;
    const attrs = Object.entries(e.attributes || {});
    return h(
      "article",
      { class: "card entity", dataset: { entity: e.entity_id } },
      h("div", { class: "row entity-head" }, h("h2", {}, e.entity_id, " ", badge(e.entity_type, "subtle")), forget ? forgetButton(e.entity_id, forget.ops, forget.done) : null),
      h(
        "div",
        { class: "row" },
        badge(rel.state, STATE_CLASS[rel.state] || ""),
        bar(rel.favorability * 100, "fav"),
        h("span", { class: "muted" }, `favorability ${Number(rel.favorability).toFixed(2)} · ${rel.interaction_count} interactions`),
      ),
      h("p", { class: "muted" }, `first seen ${when(e.first_seen)} · last seen ${when(e.last_seen)}`),
      h("h3", {}, "Attributes"),
      edit
        ? attributeEditor(e.entity_id, e.attributes || {}, edit)
        : attrs.length
          ? h("dl", { class: "attrs" }, attrs.map(([k, v]) => [h("dt", {}, k), h("dd", {}, v)]))
          : empty("none yet (consolidated while dreaming)"),
      h("h3", {}, `Observations (${e.observations.length})`),
      edit
        ? observationList(e.entity_id, e.observations, edit)
        : h(
            "ul",
            { class: "plain" },
            e.observations.slice(-6).map((o) => h("li", { class: o.consolidated ? "muted" : "" }, o.text, " ", h("span", { class: "muted" }, `(${o.source_type}${o.consolidated ? ", consolidated" : ""})`))),
          ),
    );
  });
}

export function approvals(data, decide) {
  return listOr("Nothing waits for approval.", "ul", { class: "plain" }, data.approvals, (a) =>
    h(
      "li",
      { class: "approval" },
      h("strong", {}, a.tool),
      h("code", {}, a.arguments),
      h("span", { class: "muted" }, ` requested ${when(a.requested_at)} `),
      h("button", { type: "button", onclick: () => decide(a.id, "approve") }, "Approve"),
      h("button", { type: "button", class: "danger", onclick: () => decide(a.id, "reject") }, "Reject"),
    ),
  );
}
