// The dashboard: picks an assistant, renders its state, chats with it, and follows the
// live stream. No build step: plain ES modules served by the same application.

import { api, ApiError, enc, openStream, setToken } from "./api.js";
import { tickDetail, tickList } from "./context.js";
import { fill, h, statusClass, when } from "./dom.js";
import { busy, editActions, historyEntries } from "./edits.js";
import { linkGraph } from "./graph.js";
import { gauge, metricsCard, modeCard } from "./overview.js";
import { readRoute, routeHash } from "./router.js";
import * as views from "./views.js";

const $ = (sel) => document.querySelector(sel);
const state = { key: null, keys: [], tab: "overview", stopStream: null, journalOffset: 0, historyOffset: 0, tick: null, pending: new Map() };
const JOURNAL_PAGE = 20;
const HISTORY_PAGE = 20;

function base() {
  return `/v1/assistants/${enc(state.key)}`;
}

function notice(text) {
  const box = $("#notice");
  box.hidden = !text;
  box.textContent = text || "";
}

async function guarded(action) {
  try {
    return await action();
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) {
      $("#token-form").hidden = false;
      notice("This server needs an API token: paste it above (it stays in this tab only).");
    } else if (err instanceof ApiError && err.body) {
      notice(`${err.body.error}${err.body.suggestion ? ` – ${err.body.suggestion}` : ""}`);
    } else {
      notice(String(err));
    }
    return null;
  }
}

async function control(action) {
  await guarded(() => api(`${base()}/${action}`, { method: "POST", body: {} }));
  refresh();
}

// -- loading panels -------------------------------------------------------------------------
async function loadOverview() {
  const [summary, mode, goals, projects, memory, working] = await Promise.all([
    api(base()),
    api(`${base()}/mode`),
    api(`${base()}/goals`),
    api(`${base()}/projects`),
    api(`${base()}/session-memory`),
    api(`${base()}/working-memory`),
  ]);
  const status = summary.assistant;
  const modeBadge = $("#mode-badge");
  modeBadge.textContent = mode.mode === "sleep" ? "asleep" : "awake";
  modeBadge.className = `badge status ${statusClass(modeBadge.textContent)}`;
  const since = mode.since ? ` since ${when(mode.since)}` : "";
  modeBadge.title = mode.mode === "sleep" ? `Asleep${since}: ${mode.reason}` : `Awake${since}: ${mode.reason}`;
  const phase = $("#phase-badge");
  phase.hidden = mode.mode !== "sleep";
  phase.textContent = mode.sleep_phase ? `phase: ${mode.sleep_phase}` : "";
  const count = $("#approvals-count");
  count.hidden = !status.counts.pending_approvals;
  count.textContent = String(status.counts.pending_approvals);
  fill($("#mode-card .body"), modeCard(mode, control));
  fill($("#gauge-card .body"), gauge(status));
  fill($("#metrics-card .body"), metricsCard(status));
  fill($("#goals-card .body"), views.goalTree(goals, { compact: true }));
  fill($("#projects-card .body"), views.projects(projects, { compact: true }));
  fill($("#session-card .body"), views.sessionMemory(memory, edits.session));
  fill($("#working-card .body"), views.workingMemory(working));
}

async function loadJournal() {
  const form = new FormData($("#journal-form"));
  const params = new URLSearchParams({ offset: state.journalOffset, limit: JOURNAL_PAGE });
  for (const [k, v] of form.entries()) if (String(v).trim()) params.set(k, String(v).trim());
  const data = await api(`${base()}/journal?${params}`);
  fill($("#reflection"), views.reflection(data));
  fill($("#journal-list"), views.journalEntries(data, edits.journal));
  const last = Math.min(data.total, data.offset + data.entries.length);
  $("#journal-range").textContent = data.total ? `${data.offset + 1}–${last} of ${data.total}` : "0 entries";
  $("#journal-prev").disabled = data.offset === 0;
  $("#journal-next").disabled = last >= data.total;
}

async function loadMemory() {
  const form = new FormData($("#memory-form"));
  const params = new URLSearchParams({ limit: 30 });
  for (const [k, v] of form.entries()) if (String(v).trim()) params.set(k, String(v).trim());
  fill($("#memory-list"), views.memories(await api(`${base()}/memories?${params}`), edits.memory));
}

async function loadHistory() {
  const data = await api(`${base()}/history?offset=${state.historyOffset}&limit=${HISTORY_PAGE}`);
  fill($("#history-list"), historyEntries(data));
  const last = Math.min(data.total, data.offset + data.entries.length);
  $("#history-range").textContent = data.total ? `${data.offset + 1}–${last} of ${data.total}` : "no changes";
  $("#history-prev").disabled = data.offset === 0;
  $("#history-next").disabled = last >= data.total;
}

function forgotten(entity, lines) {
  notice(`Forgot ${entity}${lines.length ? `: ${lines.join(", ")}` : ""}. The History tab lists it.`);
  refresh({ keepNotice: true });
}

const edits = editActions(base, guarded, () => refresh());

async function loadTicks() {
  const data = await api(`${base()}/ticks`);
  if (state.tick === null && data.ticks.length) state.tick = data.ticks[0].number;
  fill($("#tick-list"), tickList(data.ticks, state.tick, pickTick));
  if (state.tick !== null && data.ticks.some((t) => t.number === state.tick)) {
    const one = await api(`${base()}/ticks/${state.tick}`);
    fill($("#tick-detail"), tickDetail(one.tick));
  }
}

function pickTick(number) {
  state.tick = number;
  guarded(loadTicks);
}

async function decide(id, action) {
  await guarded(() => api(`${base()}/approvals/${enc(id)}/${action}`, { method: "POST", body: { decided_by: "dashboard" } }));
  refresh();
}

const LOADERS = {
  overview: loadOverview,
  goals: async () => fill($("#tab-goals .body"), views.goalTree(await api(`${base()}/goals`), { ops: edits.goal })),
  projects: async () => fill($("#tab-projects .body"), views.projects(await api(`${base()}/projects`))),
  journal: loadJournal,
  memories: loadMemory,
  entities: async () => fill($("#entity-list"), views.entities(await api(`${base()}/entities`), { ops: edits, done: forgotten })),
  links: async () => {
    const data = await api(`${base()}/memory-links`);
    fill($("#graph"), linkGraph(data, showMemory, $("#graph").clientWidth - 2));
  },
  context: loadTicks,
  approvals: async () => fill($("#approval-list"), views.approvals(await api(`${base()}/approvals`), decide)),
  history: loadHistory,
};

function showMemory(node) {
  fill($("#graph-detail"), h("strong", {}, node.id), ` · importance ${node.importance}`, node.source_entity ? ` · ${node.source_entity}` : "", h("p", {}, node.content));
}

let refreshTimer = null;
let keepNotice = false;
function refresh({ keepNotice: keep = false } = {}) {
  clearTimeout(refreshTimer);
  keepNotice = keepNotice || keep;
  refreshTimer = setTimeout(async () => {
    if (!state.key) return;
    const ok = await guarded(async () => {
      if (state.tab !== "overview") await loadOverview();
      // An open editor or confirm step stays as it is until it is saved or cancelled.
      if (!busy()) await LOADERS[state.tab]();
      document.body.dataset.loaded = state.tab; // which tab's data is on screen (tests wait for it)
      return true;
    });
    if (ok && !keepNotice) notice("");
    keepNotice = false;
  }, 150);
}

// -- chat -------------------------------------------------------------------------------------
function chatLine(who, text, cls) {
  const line = h("div", { class: `msg ${cls}` }, h("span", { class: "who" }, who), h("span", { class: "text" }, text));
  $("#chat-log").append(line);
  $("#chat-log").scrollTop = $("#chat-log").scrollHeight;
  return line;
}

function settle(eventId, reply, failed) {
  const line = state.pending.get(eventId);
  if (!line) return;
  state.pending.delete(eventId);
  line.classList.remove("waiting");
  line.classList.toggle("failed", Boolean(failed));
  line.querySelector(".text").textContent = reply || (failed ? `(failed: ${failed})` : "(no reply)");
}

async function sendChat(event) {
  event.preventDefault();
  const input = $("#chat-text");
  const text = input.value.trim();
  const who = $("#chat-as").value.trim() || "Visitor";
  if (!text || !state.key) return;
  input.value = "";
  chatLine(who, text, "mine");
  const sent = await guarded(() => api(`${base()}/events`, { method: "POST", body: { content: text, source_entity: who, type: "say" } }));
  if (!sent) return;
  const line = chatLine(state.key, "…", "theirs waiting");
  line.dataset.event = sent.event_id;
  state.pending.set(sent.event_id, line);
  poll(sent.event_id, state.key);
}

async function poll(eventId, key) {
  for (let i = 0; i < 120 && state.pending.has(eventId) && key === state.key; i++) {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const data = await guarded(() => api(`/v1/assistants/${enc(key)}/events/${enc(eventId)}`));
    if (data && data.event.status === "done") settle(eventId, data.event.reply);
    if (data && data.event.status === "failed") settle(eventId, null, data.event.error);
  }
}

// -- live stream ------------------------------------------------------------------------------
function onItem(kind, item) {
  if (kind === "reply" && item.data.event_id) settle(item.data.event_id, item.data.text);
  if (["tick_finished", "mode_changed", "tick_recorded", "event_queued"].includes(kind)) refresh();
}

const LIVE_TITLE = {
  live: "Live updates: the stream is open; panels refresh on every tick.",
  offline: "Offline: the stream is closed (server down or unreachable); retrying. Panels may be stale.",
  connecting: "Live updates: connecting to the stream",
  idle: "No assistant to follow yet",
};

function setLive(status) {
  const live = $("#live");
  live.textContent = `● ${status}`;
  live.className = `live status-${statusClass(status)}`;
  live.title = LIVE_TITLE[status] || status;
}

// -- wiring -----------------------------------------------------------------------------------
// Show a tab (the URL already says it: tab clicks go through the hash, see router.js).
function selectTab(tab) {
  state.tab = tab;
  for (const button of document.querySelectorAll("#tabs button")) {
    const on = button.dataset.tab === tab;
    button.classList.toggle("active", on);
    if (on) {
      button.setAttribute("aria-current", "page");
      // on a narrow screen the tab bar scrolls: keep the shown tab in view
      button.scrollIntoView({ block: "nearest", inline: "nearest" });
    }
    else button.removeAttribute("aria-current");
  }
  for (const section of document.querySelectorAll(".tab")) section.classList.toggle("active", section.id === `tab-${tab}`);
  refresh();
}

function writeRoute() {
  const params = readRoute().params;
  if (state.key) params.set("assistant", state.key);
  history.replaceState(null, "", routeHash(state.tab, params));
}

function openTab(tab) {
  const params = readRoute().params;
  if (state.key) params.set("assistant", state.key);
  const hash = routeHash(tab, params);
  if (location.hash === hash) selectTab(tab);
  else location.hash = hash; // a history entry; the hashchange handler shows the tab
}

// Back, forward, a pasted link: show what the URL names.
function followRoute() {
  const { tab, params } = readRoute();
  const wanted = params.get("assistant");
  if (wanted && wanted !== state.key && state.keys.includes(wanted)) {
    $("#assistant").value = wanted;
    selectAssistant(wanted, { tab });
  } else if (tab !== state.tab) selectTab(tab);
}

function selectAssistant(key, { tab = state.tab } = {}) {
  state.key = key;
  state.tick = null;
  state.journalOffset = 0;
  state.historyOffset = 0;
  fill($("#chat-log"));
  if (state.stopStream) state.stopStream();
  setLive("connecting");
  state.stopStream = openStream(key, onItem, setLive);
  selectTab(tab);
  writeRoute();
}

async function loadAssistants() {
  const data = await guarded(() => api("/v1/assistants"));
  if (!data) return;
  $("#token-form").hidden = true;
  state.keys = data.assistants;
  const select = $("#assistant");
  fill(select, data.assistants.map((k) => h("option", { value: k }, k)));
  const none = !data.assistants.length;
  $("#empty-state").hidden = !none;
  $("#main").hidden = none;
  $("#tabs").hidden = none;
  if (none) {
    setLive("idle");
    $("#create-key").focus();
    return;
  }
  const wanted = readRoute().params.get("assistant");
  const key = data.assistants.includes(wanted) ? wanted : data.assistants[0];
  select.value = key;
  selectAssistant(key);
}

// The empty state's form: POST /v1/assistants, then open the new assistant.
async function createAssistant(event) {
  event.preventDefault();
  const key = $("#create-key").value.trim();
  if (!key) return;
  // the API's rule for keys (CreateAssistant), said in words before asking
  if (!/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/.test(key)) {
    notice(`${JSON.stringify(key)} cannot be a key: use letters, digits, '_', '.' or '-' (at most 64), starting with a letter or digit, e.g. barkeep.`);
    return;
  }
  const made = await guarded(() => api("/v1/assistants", { method: "POST", body: { key } }));
  if (!made) return;
  notice("");
  $("#create-key").value = "";
  const params = readRoute().params;
  params.set("assistant", key);
  history.replaceState(null, "", routeHash("overview", params));
  await loadAssistants();
}

// The previous/next buttons of a paged list (#NAME-prev, #NAME-next): they move state[offset]
// by a page and reload.
function pager(name, offset, size) {
  $(`#${name}-prev`).addEventListener("click", () => {
    state[offset] = Math.max(0, state[offset] - size);
    refresh();
  });
  $(`#${name}-next`).addEventListener("click", () => {
    state[offset] += size;
    refresh();
  });
}

function start() {
  const { tab, params } = readRoute();
  if (params.get("token")) {
    setToken(params.get("token"));
    params.delete("token");
  }
  state.tab = tab;
  history.replaceState(null, "", routeHash(tab, params));
  window.addEventListener("hashchange", followRoute);
  $("#create-form").addEventListener("submit", createAssistant);
  for (const button of document.querySelectorAll("#tabs button")) button.addEventListener("click", () => openTab(button.dataset.tab));
  $("#assistant").addEventListener("change", (e) => selectAssistant(e.target.value));
  $("#chat-form").addEventListener("submit", sendChat);
  $("#tick-now").addEventListener("click", async () => {
    if (state.key) await guarded(() => api(`${base()}/tick`, { method: "POST" }));
    refresh();
  });
  $("#token-form").addEventListener("submit", (e) => {
    e.preventDefault();
    setToken($("#token").value.trim());
    $("#token").value = "";
    loadAssistants();
  });
  $("#journal-form").addEventListener("submit", (e) => {
    e.preventDefault();
    state.journalOffset = 0;
    refresh();
  });
  pager("journal", "journalOffset", JOURNAL_PAGE);
  $("#memory-form").addEventListener("submit", (e) => {
    e.preventDefault();
    refresh();
  });
  pager("history", "historyOffset", HISTORY_PAGE);
  loadAssistants();
}

start();
