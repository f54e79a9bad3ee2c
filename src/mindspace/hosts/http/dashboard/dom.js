// Building DOM nodes without innerHTML: everything shown is text, so user content can
// never become markup.

export function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name === "class") node.className = value;
    else if (name === "dataset") Object.assign(node.dataset, value);
    else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value === true ? "" : String(value));
  }
  append(node, children);
  return node;
}

function append(node, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

export function fill(node, ...children) {
  node.replaceChildren();
  append(node, children);
  return node;
}

export function svg(tag, attrs = {}, ...children) {
  const node = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export function bar(percent, cls = "") {
  // Widths go through the CSSOM: the page's CSP allows no inline style attributes.
  const value = Math.max(0, Math.min(100, Number(percent) || 0));
  const inner = h("span", { class: "fill" });
  inner.style.width = `${value}%`;
  return h(
    "span",
    { class: `bar ${cls}`, role: "progressbar", "aria-valuenow": value, "aria-valuemin": 0, "aria-valuemax": 100 },
    inner,
  );
}

export function when(stamp) {
  if (!stamp) return "–";
  return String(stamp).replace("T", " ").replace(/:\d\dZ$/, "").replace(/Z$/, "");
}

export function badge(text, cls = "", title = undefined) {
  return h("span", { class: `badge ${cls}`, title }, text);
}

// What a status looks like: green only for things that are up, done or fine; anything
// unknown is grey, never green. The colour legend in the overview says the same.
const STATUS = {
  live: "ok", awake: "ok", ok: "ok", done: "ok", completed: "ok", approved: "ok", success: "ok",
  active: "info", running: "info", pending: "warn", queued: "warn",
  asleep: "sleep", sleep: "sleep", sleeping: "sleep",
  paused: "warn", connecting: "warn", warning: "warn",
  offline: "bad", error: "bad", failed: "bad", abandoned: "bad", rejected: "bad", critical: "bad",
};

export function statusClass(status) {
  return STATUS[String(status).toLowerCase()] || "subtle";
}

export function statusBadge(status, title = undefined) {
  return badge(status, `status ${statusClass(status)}`, title);
}

export function empty(text) {
  return h("p", { class: "hint" }, text);
}

// A list of `items`, each drawn by `item`, or the `none` line when there are none.
export function listOr(none, tag, attrs, items, item) {
  if (!items.length) return empty(none);
  return h(tag, attrs, items.map(item));
}
