// Tab routes in the URL hash: #/memories?assistant=barkeep. A tab click pushes a history
// entry (so back and forward move between tabs), a reload reads the tab back, and the
// older #assistant=KEY form still opens the overview.

export const TABS = ["overview", "goals", "projects", "journal", "memories", "entities", "links", "context", "approvals", "history"];

export function readRoute(hash = location.hash) {
  const raw = hash.replace(/^#/, "");
  let path = "";
  let query = raw;
  if (raw.startsWith("/")) {
    const mark = raw.indexOf("?");
    path = mark < 0 ? raw.slice(1) : raw.slice(1, mark);
    query = mark < 0 ? "" : raw.slice(mark + 1);
  }
  return { tab: TABS.includes(path) ? path : "overview", params: new URLSearchParams(query) };
}

export function routeHash(tab, params) {
  const query = params.toString();
  return `#/${tab}${query ? `?${query}` : ""}`;
}
