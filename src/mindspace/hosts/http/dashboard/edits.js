// Correcting the assistant's mind from the dashboard: inline edits, deletes behind a confirm
// step, forgetting an entity after a dry run, and the history of every change. Changes go
// through the PATCH/DELETE/forget routes with actor=dashboard, so the history names us.

import { api, enc } from "./api.js";
import { badge, empty, fill, h, when } from "./dom.js";

export const ACTOR = "dashboard";
const VALUE_CHARS = 160;

// Is an editor or a confirm step open in the shown tab? Refreshes then leave it alone, so a
// tick arriving on the stream never throws away half-typed text.
export function busy() {
  return document.querySelector(".tab.active .editing, .tab.active .forget-panel, .tab.active .add-attr:focus-within") !== null;
}

// The edit/delete endpoints for one assistant; each returns true when the change went through.
export function editActions(base, guarded, after) {
  const send = (path, method, body) =>
    guarded(async () => {
      await api(`${base()}${path}${path.includes("?") ? "&" : "?"}actor=${ACTOR}`, { method, body });
      after();
      return true;
    });
  return {
    memory: {
      save: (id, content) => send(`/memories/${enc(id)}`, "PATCH", { content }),
      remove: (id) => send(`/memories/${enc(id)}`, "DELETE"),
    },
    journal: {
      save: (id, content) => send(`/journal/${enc(id)}`, "PATCH", { content }),
      remove: (id) => send(`/journal/${enc(id)}`, "DELETE"),
    },
    goal: {
      save: (id, description) => send(`/goals/${enc(id)}`, "PATCH", { description }),
      remove: (id) => send(`/goals/${enc(id)}`, "DELETE"),
    },
    // Session memory's items by list and position (0-based); a delete moves later ones up.
    session: {
      fact: {
        save: (i, text) => send(`/session-memory/facts/${i}`, "PATCH", { text }),
        remove: (i) => send(`/session-memory/facts/${i}`, "DELETE"),
      },
      pattern: {
        save: (i, text) => send(`/session-memory/patterns/${i}`, "PATCH", { text }),
        remove: (i) => send(`/session-memory/patterns/${i}`, "DELETE"),
      },
      add: (list, text) => send(`/session-memory/${list}`, "POST", { text }),
    },
    entity: {
      setAttribute: (name, key, value) => send(`/entities/${enc(name)}`, "PATCH", { attributes: { [key]: value } }),
      removeAttribute: (name, key) => send(`/entities/${enc(name)}`, "PATCH", { attributes: { [key]: null } }),
      removeObservation: (name, index) => send(`/entities/${enc(name)}`, "PATCH", { remove_observations: [index] }),
    },
    // The dry run names ids; the newest 200 memories and entries give their text to show.
    dryRun: (entity) =>
      guarded(async () => {
        const plan = await api(`${base()}/entities/${enc(entity)}/forget?dry_run=true&actor=${ACTOR}`, { method: "POST" });
        const texts = new Map();
        if (plan.memory_ids.length) for (const m of (await api(`${base()}/memories?limit=200`)).memories) texts.set(`memory:${m.id}`, m.content);
        if (plan.journal_entry_ids.length) for (const e of (await api(`${base()}/journal?limit=200`)).entries) texts.set(`journal:${e.id}`, e.content);
        return { plan, texts };
      }),
    forget: (entity) => guarded(() => api(`${base()}/entities/${enc(entity)}/forget?actor=${ACTOR}`, { method: "POST" })),
  };
}

// A record's text with Edit and Delete: Edit swaps in a text box (Save/Cancel), Delete asks
// first. `ops` is one of editActions' entries; without it the text is shown read-only.
export function editable({ kind, id, text, ops, what = kind, tag = "div", textClass = "content" }) {
  const box = h(tag, { class: "editable", dataset: { kind, id: String(id) } });
  if (!ops) return fill(box, h("div", { class: textClass }, text));
  const actions = (...buttons) => h("span", { class: "actions" }, buttons);
  const button = (label, cls, onclick) => h("button", { type: "button", class: cls, onclick }, label);
  const show = () => {
    box.classList.remove("editing");
    fill(
      box,
      h("div", { class: textClass }, text),
      actions(button("Edit", "edit small", startEdit), button("Delete", "delete small danger", askDelete)),
    );
  };
  const startEdit = () => {
    box.classList.add("editing");
    const area = h("textarea", { class: "edit-text", rows: Math.min(8, 2 + Math.floor(text.length / 70)), "aria-label": `new text of ${what} ${id}` });
    area.value = text;
    const save = async () => {
      const value = area.value.trim();
      if (!value || value === text) return show();
      if (await ops.save(id, value)) {
        text = value;
        show();
      }
    };
    // Ctrl+Enter (or Cmd+Enter) saves, Escape cancels.
    area.addEventListener("keydown", (event) => {
      if (event.key === "Escape") show();
      else if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) save();
    });
    fill(box, area, actions(button("Save", "save small", save), button("Cancel", "cancel small", show)));
    area.focus();
  };
  const askDelete = () => {
    box.classList.add("editing");
    const remove = async () => {
      if (!(await ops.remove(id))) return;
      box.classList.remove("editing");
      fill(box, h("div", { class: `${textClass} muted` }, "(deleted)"));
    };
    fill(
      box,
      h("div", { class: textClass }, text),
      h(
        "div",
        { class: "confirm" },
        h("span", {}, `Delete this ${what}? The history keeps what it was.`),
        button(`Delete ${what}`, "confirm-delete small danger", remove),
        button("Cancel", "cancel small", show),
      ),
    );
  };
  show();
  return box;
}

const TIERS = [
  ["profile", "entity profile"],
  ["observations", "observations"],
  ["working_memory", "working-memory conversations"],
  ["messages", "conversation messages"],
  ["memories", "memories"],
  ["journal_entries", "journal entries"],
  ["journal_vectors", "journal vectors"],
  ["memory_links", "memory links"],
  ["session_facts", "session facts naming them"],
  ["events", "events (their text and reply)"],
];

// Where copies of the entity's words are blanked besides (history, documents, ticks...).
function redactedLine(redacted) {
  const places = Object.entries(redacted || {}).filter(([, n]) => n);
  return places.length ? `Copies of their words blanked in: ${places.map(([p, n]) => `${p} (${n})`).join(", ")}.` : null;
}

function countLines(counts) {
  return TIERS.filter(([key]) => counts[key]).map(([key, label]) => `${counts[key]} ${label}`);
}

// "Forget…" on an entity card: first the dry run (what would go), then the real thing.
export function forgetButton(entity, ops, done) {
  const slot = h("div", { class: "forget-slot" });
  const start = async () => {
    const found = await ops.dryRun(entity);
    if (!found) return;
    const { plan, texts } = found;
    const lines = countLines(plan.counts);
    const items = (label, prefix, list) =>
      list.length
        ? h("li", {}, `${label}:`, h("ul", {}, list.map((x) => h("li", { dataset: { id: String(x) } }, h("code", {}, String(x)), " ", shown(texts.get(`${prefix}:${x}`) || "")))))
        : null;
    const go = async () => {
      const report = await ops.forget(entity);
      if (!report) return;
      fill(slot);
      done(entity, countLines(report.counts));
    };
    fill(
      slot,
      h(
        "div",
        { class: "forget-panel", role: "alertdialog", "aria-label": `forget ${entity}` },
        h("strong", {}, `Forgetting ${entity} removes:`),
        lines.length ? h("ul", { class: "plain forget-counts" }, lines.map((l) => h("li", {}, l))) : empty("nothing is stored about them."),
        h("ul", { class: "plain forget-ids" }, items("memories", "memory", plan.memory_ids), items("journal entries", "journal", plan.journal_entry_ids)),
        redactedLine(plan.redacted) ? h("p", { class: "hint forget-redacted" }, redactedLine(plan.redacted)) : null,
        h("p", { class: "hint" }, "This cannot be undone; the history records that it happened."),
        h(
          "div",
          { class: "row" },
          h("button", { type: "button", class: "danger confirm-forget", onclick: go }, `Forget ${entity}`),
          h("button", { type: "button", class: "cancel", onclick: () => fill(slot, opener) }, "Cancel"),
        ),
      ),
    );
  };
  const opener = h("button", { type: "button", class: "forget danger small", onclick: start }, "Forget…");
  return fill(slot, opener);
}

// -- history ------------------------------------------------------------------------------
function shown(value) {
  const text = typeof value === "string" ? value : JSON.stringify(value);
  if (text === undefined) return "–";
  return text.length > VALUE_CHARS ? `${text.slice(0, VALUE_CHARS - 1)}…` : text;
}

// The fields an update changed, as "field: before → after".
function changes(before, after) {
  const keys = [...new Set([...Object.keys(before || {}), ...Object.keys(after || {})])];
  const changed = keys.filter((k) => JSON.stringify((before || {})[k]) !== JSON.stringify((after || {})[k]));
  return changed.map((k) =>
    h("li", { class: "change" }, h("code", {}, k), ": ", h("del", {}, shown((before || {})[k])), " → ", h("ins", {}, shown((after || {})[k]))),
  );
}

function summary(entry) {
  const { before, after, action } = entry;
  if (action === "update") return h("ul", { class: "plain changes" }, changes(before, after));
  if (action === "forget") {
    const lines = before && before.counts ? countLines(before.counts) : [];
    return h("p", {}, `forgot everything about ${entry.target_key}`, lines.length ? `: ${lines.join(", ")}` : "");
  }
  const record = action === "delete" ? before : after;
  const observed = record && Array.isArray(record.observations) && record.observations.length ? `observation “${record.observations[record.observations.length - 1].text}”` : null;
  const text = record && (record.content || record.description || record.text || observed);
  return h("p", {}, `${action === "delete" ? "deleted" : "created"}: `, text ? shown(text) : shown(record));
}

export function historyEntries(data) {
  if (!data.entries.length) return [empty("No changes yet: edits, deletions and forgetting are listed here.")];
  return data.entries.map((e) =>
    h(
      "li",
      { class: `history-entry ${e.action}`, dataset: { action: e.action, target: e.target_key } },
      h(
        "div",
        { class: "meta" },
        h("span", { class: "muted" }, when(e.at)),
        badge(e.action, e.action === "forget" || e.action === "delete" ? "bad" : "info"),
        h("span", { class: "who", title: "who made the change" }, `${e.actor_kind}: ${e.actor}`),
        e.via ? badge(e.via, "subtle") : null,
        h("span", {}, `${e.target_kind} `, h("code", {}, e.target_key)),
      ),
      summary(e),
      h(
        "details",
        { class: "raw" },
        h("summary", {}, "before / after"),
        h("h4", {}, "before"),
        h("pre", {}, JSON.stringify(e.before, null, 2)),
        h("h4", {}, "after"),
        h("pre", {}, JSON.stringify(e.after, null, 2)),
      ),
    ),
  );
}
