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

async function send(path, body, asText) {
  const key = sessionStorage.getItem(KEY);
  if (!key) throw new Error("Enter an API key first.");
  const init = { method: body ? "POST" : "GET", headers: { Authorization: "Bearer " + key } };
  if (body instanceof FormData) {
    init.body = body;
  } else if (body) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  if (!response.ok) {
    const problem = await response.json().catch(() => ({}));
    throw new Error(problem.detail || problem.title || "request failed");
  }
  return asText ? response.text() : response.json();
}

const call = (path, body) => send(path, body, false);

function showError(error) {
  $("error").textContent = error ? String(error.message || error) : "";
  $("error").hidden = !error;
}

// Snippets of the last narrative answer's search, by chunk id: the text a citation points at
// and its expanded context (the same search the answer read, screened for this key).
let snippets = {};
// The sentences of the last answer citing each marker: what a card shows for a passage the
// page's own search did not return (the answer may have searched again, deeper).
let citing = {};

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
  if (!context) {
    box.append(el("p", "Not among this page's search results; the answer quotes from it:", "note"));
    for (const text of citing[source.marker] || []) box.append(el("mark", text), " ");
  } else if (at >= 0) {
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
    // "one" says nothing; a scale no source states is said after the unit, never hidden
    const scale = figure.scale === "one" || figure.scale === "unknown" ? "" : figure.scale;
    const unstated = figure.scale === "unknown" ? "(scale not stated in the source)" : "";
    const unit = [scale, figure.currency || figure.unit, unstated].filter(Boolean).join(" ");
    card.append(el("div", (figure.value || "") + " " + unit, "value"));
    card.append(el("div", [figure.metric, figure.entity, figure.period].filter(Boolean).join(" · ")));
    card.append(el("div", "Source: " + [figure.source_doc_id, figure.locator].filter(Boolean).join(", ")));
    box.append(card);
  }
}

function renderAnswer(answer) {
  const sources = answer.sources || [];
  citing = {};
  for (const sentence of answer.sentences || []) {
    for (const marker of sentence.markers || []) (citing[marker] ||= []).push(sentence.text);
  }
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
      const about = lib.description ? ` — ${lib.description}` : "";
      list.append(el("li", `${lib.library_id}: ${lib.documents} documents, ${lib.chunks} chunks${about}`));
    }
  } catch (error) { showError(error); }
}

const sleep = (ms) => new Promise((done) => setTimeout(done, ms));

async function upload(event) {
  event.preventDefault();
  showError(null);
  const form = new FormData();
  form.append("library", $("upload-library").value);
  for (const file of $("upload-files").files) form.append("files", file, file.name);
  const bar = $("upload-progress");
  bar.hidden = false;
  bar.value = 0;
  try {
    let job = await call("/v1/documents", form);
    while (job.state === "queued" || job.state === "running") {
      bar.max = job.total || 1;
      bar.value = job.done;
      $("upload-state").textContent = `${job.state}: ${job.done} of ${job.total} documents`;
      await sleep(300);
      job = await call("/v1/jobs/" + job.job_id);
    }
    bar.max = 1;
    bar.value = 1;
    const docs = (job.result && job.result.documents) || [];
    $("upload-state").textContent = `${job.state}: ` +
      docs.map((d) => `${d.doc_id} ${d.status}${d.reason ? " (" + d.reason + ")" : ""}`).join(", ") +
      (job.error && !docs.length ? " " + job.error : "");
    loadLibraries();
  } catch (error) { showError(error); }
}

async function previewWorkflow(event) {
  event.preventDefault();
  showError(null);
  const form = new FormData();
  const file = $("wf-file").files[0];
  form.append("file", file, file.name);
  try {
    const svg = await send("/v1/workflows/preview?format=svg", form, true);
    const picture = $("wf-picture");
    if (picture.src) URL.revokeObjectURL(picture.src);
    picture.src = URL.createObjectURL(new Blob([svg], { type: "image/svg+xml" }));
    picture.hidden = false;
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
$("upload-form").addEventListener("submit", upload);
$("wf-form").addEventListener("submit", previewWorkflow);
$("refresh-libraries").addEventListener("click", loadLibraries);
$("card-close").addEventListener("click", () => $("source-card").close());
$("key-state").textContent = sessionStorage.getItem(KEY) ? "key set for this tab" : "no key";
if (sessionStorage.getItem(KEY)) loadLibraries();
