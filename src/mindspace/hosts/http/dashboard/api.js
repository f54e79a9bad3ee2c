// The API client: bearer token from sessionStorage, JSON requests, and the SSE stream
// read with fetch (so the token travels in a header, never in the URL).

const TOKEN_KEY = "mindspace.token";

export class ApiError extends Error {
  constructor(status, body) {
    super(body && body.error ? body.error : `HTTP ${status}`);
    this.status = status;
    this.body = body;
  }
}

export function setToken(token) {
  if (token) sessionStorage.setItem(TOKEN_KEY, token);
  else sessionStorage.removeItem(TOKEN_KEY);
}

function headers(extra = {}) {
  const token = sessionStorage.getItem(TOKEN_KEY);
  return token ? { ...extra, Authorization: `Bearer ${token}` } : extra;
}

export async function api(path, { method = "GET", body, signal } = {}) {
  const init = { method, headers: headers(), signal };
  if (body !== undefined) {
    init.headers = headers({ "Content-Type": "application/json" });
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  let data = null;
  try {
    data = await response.json();
  } catch {
    data = null;
  }
  if (!response.ok) throw new ApiError(response.status, data);
  return data;
}

export const enc = encodeURIComponent;

// Read the assistant's SSE stream; calls onItem(kind, item) and onState("live"|"offline").
// Reconnects with a growing delay until stop() is called.
export function openStream(key, onItem, onState) {
  let stopped = false;
  let controller = null;
  let delay = 1000;

  async function once() {
    controller = new AbortController();
    const response = await fetch(`/v1/assistants/${enc(key)}/stream`, {
      headers: headers({ Accept: "text/event-stream" }),
      signal: controller.signal,
    });
    if (!response.ok || !response.body) throw new ApiError(response.status, null);
    onState("live");
    delay = 1000;
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value;
      let end;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const chunk = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        let kind = "message";
        const data = [];
        for (const line of chunk.split("\n")) {
          if (line.startsWith("event: ")) kind = line.slice(7);
          else if (line.startsWith("data: ")) data.push(line.slice(6));
        }
        if (data.length) {
          try {
            onItem(kind, JSON.parse(data.join("\n")));
          } catch (err) {
            console.warn("bad stream item", err);
          }
        }
      }
    }
  }

  (async () => {
    while (!stopped) {
      try {
        await once();
      } catch (err) {
        if (stopped) return;
      }
      onState("offline");
      if (stopped) return;
      await new Promise((resolve) => setTimeout(resolve, delay));
      delay = Math.min(delay * 2, 15000);
    }
  })();

  return () => {
    stopped = true;
    if (controller) controller.abort();
  };
}
