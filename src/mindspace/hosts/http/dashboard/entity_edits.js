// Correcting an entity card: edit, add or remove an attribute and remove an observation.
// Removals ask first; every change is one PATCH /entities/{name} with actor=dashboard
// (editActions' `entity`), after which the tab reloads from the server.

import { empty, fill, h } from "./dom.js";

const button = (label, cls, onclick) => h("button", { type: "button", class: cls, onclick }, label);
const actions = (...buttons) => h("span", { class: "actions" }, buttons);

// A confirm step in `slot`: the question, a danger button that runs `go`, and Cancel.
function confirmIn(slot, question, label, go, back) {
  slot.classList.add("editing");
  fill(
    slot,
    h(
      "div",
      { class: "confirm" },
      h("span", {}, question),
      button(label, "confirm-delete small danger", async () => {
        slot.classList.remove("editing");
        if (!(await go())) back();
      }),
      button("Cancel", "cancel small", back),
    ),
  );
}

// One attribute as a row: its value with Edit and Remove (Remove asks first).
function attributeRow(entity, key, value, ops) {
  const row = h("div", { class: "attr-row", dataset: { attribute: key } });
  const show = () => {
    row.classList.remove("editing");
    fill(
      row,
      h("span", { class: "attr-key" }, key),
      h("span", { class: "attr-value" }, value),
      actions(button("Edit", "edit small", startEdit), button("Remove", "delete small danger", askRemove)),
    );
  };
  const startEdit = () => {
    row.classList.add("editing");
    const input = h("input", { class: "attr-input", "aria-label": `new value of ${key}` });
    input.value = value;
    const save = async () => {
      const next = input.value.trim();
      if (!next || next === value) return show();
      row.classList.remove("editing");
      if (!(await ops.setAttribute(entity, key, next))) startEdit();
    };
    input.addEventListener("keydown", (event) => {
      if (event.key === "Escape") show();
      else if (event.key === "Enter") save();
    });
    fill(row, h("span", { class: "attr-key" }, key), input, actions(button("Save", "save small", save), button("Cancel", "cancel small", show)));
    input.focus();
  };
  const askRemove = () => confirmIn(row, `Remove attribute “${key}” (${value})?`, "Remove attribute", () => ops.removeAttribute(entity, key), show);
  show();
  return row;
}

// "Add attribute": a key and a value; an existing key gets the new value.
function addAttribute(entity, ops) {
  const key = h("input", { class: "new-attr-key", placeholder: "attribute", "aria-label": "attribute name", maxlength: 64 });
  const value = h("input", { class: "new-attr-value", placeholder: "value", "aria-label": "attribute value" });
  const set = async (event) => {
    event.preventDefault();
    const k = key.value.trim();
    const v = value.value.trim();
    if (!k || !v) return;
    // The form counts as busy while focused (edits.js busy()): leave it so the reload runs.
    if (await ops.setAttribute(entity, k, v)) {
      key.value = value.value = "";
      document.activeElement.blur();
    }
  };
  return h("form", { class: "row add-attr", onsubmit: set }, key, value, h("button", { type: "submit", class: "small" }, "Set"));
}

export function attributeEditor(entity, attributes, ops) {
  const rows = Object.entries(attributes).map(([k, v]) => attributeRow(entity, k, v, ops));
  return h("div", { class: "attrs-edit" }, rows.length ? rows : empty("none yet (consolidated while dreaming)"), addAttribute(entity, ops));
}

// The newest `shown` observations, each with Remove; the index sent counts the whole list.
export function observationList(entity, observations, ops, shown = 6) {
  const start = Math.max(0, observations.length - shown);
  return h(
    "ul",
    { class: "plain observations" },
    observations.slice(start).map((o, i) => {
      const index = start + i;
      const item = h("li", { class: `observation ${o.consolidated ? "muted" : ""}`, dataset: { index: String(index) } });
      const show = () => {
        item.classList.remove("editing");
        fill(
          item,
          h("span", { class: "obs-text" }, o.text),
          " ",
          h("span", { class: "muted" }, `(${o.source_type}${o.consolidated ? ", consolidated" : ""})`),
          " ",
          actions(button("Remove", "delete small danger", ask)),
        );
      };
      const ask = () => confirmIn(item, `Remove the observation “${o.text}”?`, "Remove observation", () => ops.removeObservation(entity, index), show);
      show();
      return item;
    }),
  );
}
