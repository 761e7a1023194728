// Perspecta human evaluation page: one item at a time, keyboard first.
// Modes: loading -> (notice) -> item -> (feedback) -> next item ... -> done.
"use strict";

const annotator = document.body.dataset.annotator;
const api = (path) => `/api/a/${encodeURIComponent(annotator)}/${path}`;
const $ = (id) => document.getElementById(id);

let mode = "loading";
let item = null;        // the item shown (JSON from the server)
let shownAt = null;     // performance.now() when its images were on screen
let lastTask = null;    // task of the previous item, for the task-change notice
let pendingNext = null;  // state.next waiting behind the task notice
let pendingState = null; // state waiting behind the feedback panel
let zoom = 1;

function setMode(m) {
  mode = m;
  document.body.dataset.mode = m;
  for (const id of ["notice", "item", "feedback", "done"]) $(id).hidden = (id !== m);
}

async function call(method, path, body) {
  const opts = { method, headers: {} };
  if (body !== undefined) {
    opts.headers["Content-Type"] = "application/json";
    opts.body = JSON.stringify(body);
  }
  const res = await fetch(api(path), opts);
  let data = {};
  try { data = await res.json(); } catch (e) { /* empty body */ }
  return { status: res.status, data };
}

function showProgress(state) {
  $("progress").textContent = `${state.done} / ${state.total}`;
  $("bar").max = Math.max(1, state.total);
  $("bar").value = state.done;
}

async function start() {
  const { status, data } = await call("GET", "state");
  if (status !== 200) { $("message").textContent = data.error || `error ${status}`; return; }
  advance(data);
}

// Go to the next item of the plan; announce a new task first.
function advance(state) {
  showProgress(state);
  const next = state.next;
  if (!next) { setMode("done"); $("task").textContent = ""; return; }
  if (next.task !== lastTask) {
    pendingNext = next;
    $("notice-title").textContent = `Task ${next.task_number} of ${next.n_tasks}: ${next.task}`;
    $("notice-text").textContent = next.task_title || "";
    setMode("notice");
    $("notice-go").focus();
    return;
  }
  load(next.id);
}

function leaveNotice() {
  lastTask = pendingNext.task;
  load(pendingNext.id);
}

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function figure(img) {
  const fig = el("figure", img.panorama ? "pano" : "still");
  const im = el("img");
  im.src = img.url;
  im.alt = img.caption || `image ${img.index + 1}`;
  if (img.panorama) {
    const box = el("div", "pano-box");
    box.appendChild(im);
    fig.appendChild(box);
    const tools = el("div", "pano-tools");
    const minus = el("button", "", "−"); minus.type = "button"; minus.title = "zoom out (-)";
    const plus = el("button", "", "+"); plus.type = "button"; plus.title = "zoom in (+)";
    minus.addEventListener("click", () => setZoom(zoom / 1.5));
    plus.addEventListener("click", () => setZoom(zoom * 1.5));
    tools.append(minus, plus, el("span", "hint", "360° panorama: scroll sideways; + / − zoom"));
    fig.appendChild(tools);
  } else {
    fig.appendChild(im);
  }
  if (img.caption) fig.appendChild(el("figcaption", "", img.caption));
  return fig;
}

function setZoom(z) {
  zoom = Math.min(6, Math.max(1, z));
  for (const im of document.querySelectorAll(".pano-box img")) im.style.width = `${zoom * 100}%`;
}

async function load(id) {
  setMode("loading");
  const { status, data } = await call("GET", `item/${id}`);
  if (status !== 200) { $("message").textContent = data.error || `error ${status}`; return; }
  item = data;
  $("message").textContent = "";
  $("task").textContent = `${item.suite}/${item.task}`;
  $("item").dataset.itemId = item.id;
  $("item").dataset.answerType = item.answer_type;
  const blocks = $("blocks");
  blocks.replaceChildren();
  for (const b of item.blocks) {
    if (b.kind === "text") blocks.appendChild(el("p", "q", b.text));
    else {
      const row = el("div", b.images.length >= 3 ? "row many" : "row");
      for (const img of b.images) row.appendChild(figure(img));
      blocks.appendChild(row);
    }
  }
  const choices = $("choices");
  choices.replaceChildren();
  choices.className = item.choices.some((c) => c.image) ? "tiles" : "buttons";
  for (const c of item.choices) {
    const btn = el("button", "choice");
    btn.type = "button";
    btn.dataset.label = c.label;
    const key = item.answer_type === "yesno" ? c.key : `${c.number} / ${c.label}`;
    btn.appendChild(el("span", "key", key));
    if (c.image) btn.appendChild(figure(c.image));
    else btn.appendChild(el("span", "text", c.text));
    btn.addEventListener("click", () => submit(c.label));
    choices.appendChild(btn);
  }
  $("open-form").hidden = item.answer_type !== "open";
  $("open-answer").value = "";
  $("raw-prompt").textContent = item.prompt;
  $("raw").open = false;
  showFlag(item.flagged);
  setZoom(1);
  await Promise.all([...document.querySelectorAll("#item img")].map(
    (im) => im.decode().catch(() => null)));
  setMode("item");
  shownAt = performance.now();
  if (item.answer_type === "open") $("open-answer").focus();
  else document.activeElement && document.activeElement.blur();
}

function showFlag(flagged) {
  item.flagged = flagged;
  $("flag-state").textContent = flagged ? "Flagged as ambiguous" : "";
  $("item").dataset.flagged = flagged ? "1" : "0";
}

async function toggleFlag() {
  if (mode !== "item") return;
  const want = !item.flagged;
  const { status, data } = await call("POST", `flag/${item.id}`, { flagged: want });
  if (status === 200) showFlag(data.flagged);
  else $("message").textContent = data.error || `error ${status}`;
}

async function submit(answer) {
  if (mode !== "item") return;
  const rt = performance.now() - shownAt;
  setMode("loading");
  const { status, data } = await call("POST", `answer/${item.id}`, { answer, client_rt_ms: rt });
  if (status === 400) { $("message").textContent = data.error; setMode("item"); return; }
  if (status !== 200 && status !== 409) { $("message").textContent = data.error || `error ${status}`; return; }
  lastTask = `${item.suite}/${item.task}`;
  if (status === 200 && data.correct !== undefined) {
    pendingState = data.state;
    $("feedback").className = data.correct ? "right" : "wrong";
    $("feedback-text").textContent = data.correct ? "Correct." : `Incorrect — the answer is ${data.gold}.`;
    setMode("feedback");
    return;
  }
  advance(data.state);
}

document.addEventListener("keydown", (ev) => {
  if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
  const k = ev.key;
  if (mode === "notice" || mode === "feedback") {
    if (k === "Enter" || k === " ") {
      ev.preventDefault();
      if (mode === "notice") leaveNotice(); else advance(pendingState);
    }
    return;
  }
  if (mode !== "item" || !item) return;
  if (ev.target === $("open-answer")) return;  // typing; Enter submits the form
  if (k === "?" || k === "/") { ev.preventDefault(); toggleFlag(); return; }
  if (k === "+" || k === "=") { setZoom(zoom * 1.5); return; }
  if (k === "-") { setZoom(zoom / 1.5); return; }
  const up = k.toUpperCase();
  if (item.answer_type === "yesno") {
    if (up === "Y" || k === "1") submit("yes");
    else if (up === "N" || k === "2") submit("no");
    return;
  }
  if (item.answer_type === "mcq") {
    const byNumber = /^[1-9]$/.test(k) ? item.choices[Number(k) - 1] : undefined;
    const byLetter = item.choices.find((c) => c.label === up);
    const c = byNumber || byLetter;
    if (c) submit(c.label);
  }
});

$("open-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  const text = $("open-answer").value.trim();
  if (text) submit(text);
});
$("flag").addEventListener("click", toggleFlag);
$("notice-go").addEventListener("click", leaveNotice);
$("feedback-go").addEventListener("click", () => advance(pendingState));

start();
