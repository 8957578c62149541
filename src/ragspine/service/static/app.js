// The RAGSpine page: ask, read cited answers, open sources, list libraries. No build step.
"use strict";
const KEY = "ragspine-api-key";
const $ = (id) => document.getElementById(id);

function el(tag, text, cls) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  if (cls) node.className = cls;
  return node;
}

async function call(path, body) {
  const key = sessionStorage.getItem(KEY);
  if (!key) throw new Error("Enter an API key first.");
  const init = { method: body ? "POST" : "GET", headers: { Authorization: "Bearer " + key } };
  if (body) { init.headers["Content-Type"] = "application/json"; init.body = JSON.stringify(body); }
  const response = await fetch(path, init);
  const data = await response.json();
  if (!response.ok) throw new Error(data.detail || data.title || "request failed");
  return data;
}

function showError(error) {
  $("error").textContent = error ? String(error.message || error) : "";
  $("error").hidden = !error;
}

// Snippets of the last narrative answer's search, by chunk id: the text a citation points at
// and its expanded context (the same search the answer read, screened for this key).
let snippets = {};

function locatorText(locator) {
  if (!locator) return "";
  if (typeof locator === "string") return locator;
  const parts = [];
  if (locator.heading_path && locator.heading_path.length) parts.push(locator.heading_path.join(" › "));
  for (const name of ["page", "paragraph", "row", "section"]) {
    if (locator[name] !== undefined) parts.push(name + " " + locator[name]);
  }
  return parts.join(", ");
}

function openSource(source) {
  const snippet = snippets[source.chunk_id] || {};
  $("card-title").textContent = [source.library_id, source.doc_id].filter(Boolean).join(" / ");
  $("card-locator").textContent = locatorText(source.source_locator);
  const box = $("card-text");
  box.textContent = "";
  if (source.channel === "fact") {
    const fact = source.fact || {};
    box.append(el("p", [fact.metric, fact.entity, fact.period, fact.channel].filter(Boolean).join(" · ")));
    $("source-card").showModal();
    return;
  }
  const context = snippet.prompt_text || snippet.text || "";
  const child = snippet.text || "";
  const at = child ? context.indexOf(child) : -1;
  if (at >= 0) {
    box.append(context.slice(0, at), el("mark", child), context.slice(at + child.length));
  } else {
    box.append(el("mark", child || context));
  }
  $("source-card").showModal();
}

function renderText(text, list) {
  const sources = {};
  for (const source of list) sources[source.marker] = source;
  const out = $("answer-text");
  out.textContent = "";
  const parts = text.split(/(\[\d+\])/);
  for (const part of parts) {
    const match = /^\[(\d+)\]$/.exec(part);
    const source = match && sources[Number(match[1])];
    if (source) {
      const button = el("button", part, "cite");
      button.type = "button";
      button.setAttribute("aria-label", "Open source " + match[1]);
      button.addEventListener("click", () => openSource(source));
      out.append(button);
    } else {
      out.append(part);
    }
  }
}

function renderFacts(figures) {
  const box = $("facts");
  box.textContent = "";
  for (const figure of figures || []) {
    const card = el("div", undefined, "fact");
    const unit = [figure.scale, figure.currency || figure.unit].filter(Boolean).join(" ");
    card.append(el("div", (figure.value || "") + " " + unit, "value"));
    card.append(el("div", [figure.metric, figure.entity, figure.period].filter(Boolean).join(" · ")));
    card.append(el("div", "Source: " + [figure.source_doc_id, figure.locator].filter(Boolean).join(", ")));
    box.append(card);
  }
}

function renderAnswer(answer) {
  const sources = answer.sources || [];
  renderText(answer.text || "", sources);
  renderFacts(answer.figures);
  const list = $("sources");
  list.textContent = "";
  sources.forEach((source) => {
    const item = el("li");
    const button = el("button", "[" + source.marker + "] " + (source.doc_id || "source") + " " +
      locatorText(source.source_locator), "cite");
    button.type = "button";
    button.addEventListener("click", () => openSource(source));
    item.append(button);
    list.append(item);
  });
  $("trace-text").textContent = JSON.stringify(
    { route: answer.route, route_reason: answer.route_reason, status: answer.status, trace: answer.trace },
    null, 1);
  $("answer").hidden = false;
}

async function ask(event) {
  event.preventDefault();
  showError(null);
  const question = $("question").value;
  try {
    const answer = await call("/v1/ask", { question });
    snippets = {};
    if ((answer.sources || []).some((s) => s.channel === "chunk")) {
      const found = await call("/v1/search", { question, top_k: 10 });
      for (const snippet of found.snippets || []) snippets[snippet.chunk_id] = snippet;
    }
    renderAnswer(answer);
  } catch (error) { showError(error); }
}

async function loadLibraries() {
  showError(null);
  try {
    const list = $("libraries");
    list.textContent = "";
    for (const lib of await call("/v1/libraries")) {
      list.append(el("li", `${lib.library_id}: ${lib.documents} documents, ${lib.chunks} chunks — ${lib.description}`));
    }
  } catch (error) { showError(error); }
}

function useKey(event) {
  event.preventDefault();
  const value = $("key").value.trim();
  if (value) sessionStorage.setItem(KEY, value);
  $("key").value = "";
  $("key-state").textContent = sessionStorage.getItem(KEY) ? "key set for this tab" : "no key";
  loadLibraries();
}

$("key-form").addEventListener("submit", useKey);
$("ask-form").addEventListener("submit", ask);
$("refresh-libraries").addEventListener("click", loadLibraries);
$("card-close").addEventListener("click", () => $("source-card").close());
$("key-state").textContent = sessionStorage.getItem(KEY) ? "key set for this tab" : "no key";
if (sessionStorage.getItem(KEY)) loadLibraries();
