// Progressive enhancements shared by every page: the theme toggle, the
// env-table filter, the contents list that follows the reader and the copy
// buttons on code blocks (the search box is js/search/ui.js). Pages work
// without them.
import { MAX_QUERY_RUNES, MAX_TERMS } from "../gen/search/spec.js";
import { MAX_QUERY } from "./linkquery.js";

const root = document.documentElement;

function currentTheme() {
  if (root.dataset.theme === "dark" || root.dataset.theme === "light") return root.dataset.theme;
  return window.matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light";
}

function setupThemeToggle() {
  const btn = document.getElementById("theme-toggle");
  if (!btn) return;
  const render = () => {
    const dark = currentTheme() === "dark";
    btn.setAttribute("aria-pressed", String(dark));
    btn.textContent = dark ? "Light theme" : "Dark theme";
  };
  btn.hidden = false;
  render();
  btn.addEventListener("click", () => {
    const next = currentTheme() === "dark" ? "light" : "dark";
    root.dataset.theme = next;
    try { localStorage.setItem("theme", next); } catch (e) { /* storage may be off */ }
    render();
  });
  window.matchMedia("(prefers-color-scheme: dark)").addEventListener("change", render);
  // Whatever sets the theme (another tab's choice, a test), the label follows.
  new MutationObserver(render).observe(root, { attributes: true, attributeFilter: ["data-theme"] });
}

setupThemeToggle();

// The environment-variable table: the full table is in the HTML; this adds
// filtering by text, component and debugging-only flag. The filter lives in
// the query (?q=&c=&d=1), so a reload or a shared link keeps it; a row a link
// targets (#NCCL_IB_HCA) is always shown, highlighted (CSS :target) and
// scrolled to the middle of the window with its meaning beside it.
// MAX_FILTER and MAX_FILTER_WORDS bound the environment table's filter:
// the search box's own caps, from the module the generator writes from
// generator/searchdb (esbuild keeps only these two of its constants).
const MAX_FILTER = MAX_QUERY_RUNES;
const MAX_FILTER_WORDS = MAX_TERMS;

function setupEnvFilter() {
  const table = document.getElementById("env-table");
  const box = document.querySelector(".env-filter");
  if (!table || !box) return;
  const q = document.getElementById("env-q");
  const comp = document.getElementById("env-c");
  const dbg = document.getElementById("env-d");
  const count = document.getElementById("env-n");
  const rows = Array.from(table.tBodies[0].rows);
  const text = rows.map((r) => r.textContent.toLowerCase());
  // Only the query's first MAX_QUERY characters are read (linkquery.js).
  const search = () => window.location.search.slice(0, MAX_QUERY);
  const params = new URLSearchParams(search());
  // The filter is a few words: a link's ?q= is cut to MAX_FILTER
  // characters and at most MAX_FILTER_WORDS words are matched, as the
  // search box bounds its query (a 1 MB link's words against every row
  // stalled the page for seconds).
  const linkQ = params.get("q") || "";
  const cut = linkQ.length > MAX_FILTER;
  const linkFilter = linkQ.slice(0, MAX_FILTER);
  q.maxLength = MAX_FILTER;
  q.value = linkFilter;
  if (params.get("c") && Array.from(comp.options).some((o) => o.value === params.get("c"))) comp.value = params.get("c");
  dbg.checked = params.get("d") === "1";
  const apply = (save) => {
    const words = [...new Set(q.value.toLowerCase().split(/\s+/).filter(Boolean))].slice(0, MAX_FILTER_WORDS);
    const c = comp.value;
    const target = targetRow();
    let shown = 0;
    rows.forEach((r, i) => {
      const ok = r === target || ((!c || r.dataset.component === c) && (!dbg.checked || r.dataset.debug === "true") &&
        words.every((w) => text[i].includes(w)));
      if (r.hidden === ok) r.hidden = !ok;
      if (ok) shown++;
    });
    count.textContent = `${shown} of ${rows.length} variables` + (cut && q.value === linkFilter ? ` (the link's filter was cut to its first ${MAX_FILTER} characters)` : "");
    if (save) {
      const p = new URLSearchParams(search());
      const set = (k, v) => (v ? p.set(k, v) : p.delete(k));
      set("q", q.value.trim());
      set("c", c);
      set("d", dbg.checked ? "1" : "");
      const qs = p.toString();
      history.replaceState(history.state, "", `${window.location.pathname}${qs ? `?${qs}` : ""}${window.location.hash}`);
    }
  };
  const targetRow = () => {
    const id = decodeURIComponent(window.location.hash.slice(1));
    const el = id && document.getElementById(id);
    return el && el.parentElement === table.tBodies[0] ? el : null;
  };
  const reveal = () => {
    const r = targetRow();
    if (!r) return;
    apply(false);
    r.scrollIntoView({ block: "center" });
  };
  box.hidden = false;
  [q, comp, dbg].forEach((el) => el.addEventListener("input", () => apply(true)));
  apply(false);
  // Showing the filter moved the rows: bring the targeted one back, after
  // the browser's own jump to the fragment (at load).
  if (document.readyState === "complete") reveal();
  else window.addEventListener("load", () => requestAnimationFrame(reveal), { once: true });
  window.addEventListener("hashchange", reveal);
}

setupEnvFilter();

// The service worker (sw.js) caches the wasm, the search engine and
// search.db after the first visit; pages work without it.
if ("serviceWorker" in navigator && root.dataset.sw) {
  navigator.serviceWorker.register(root.dataset.sw, { scope: root.dataset.base || "/" }).catch(() => {});
}

// The on-page contents list follows the reader: the entry of the section in
// view is marked (aria-current), and only that section's sub-headings are
// listed, so a long note's list stays short.
function setupTocFollow() {
  const toc = document.querySelector(".toc nav");
  if (!toc) return;
  const links = Array.from(toc.querySelectorAll('a[href^="#"]'));
  const targets = links.map((a) => document.getElementById(decodeURIComponent(a.getAttribute("href").slice(1))));
  if (targets.some((t) => !t)) {
    toc.parentElement.classList.add("nofollow");
    return;
  }
  let current = null;
  const mark = () => {
    // The last heading above the top third of the window is the current one.
    const line = window.innerHeight / 3;
    let i = 0;
    for (let k = 0; k < targets.length; k++) {
      if (targets[k].getBoundingClientRect().top <= line) i = k;
      else break;
    }
    const a = links[i];
    if (a === current) return;
    if (current) {
      current.classList.remove("current");
      current.removeAttribute("aria-current");
    }
    toc.querySelectorAll("li.open").forEach((li) => li.classList.remove("open"));
    current = a;
    a.classList.add("current");
    a.setAttribute("aria-current", "location");
    for (let li = a.closest("li"); li && toc.contains(li); li = li.parentElement.closest("li")) li.classList.add("open");
    const box = toc.parentElement;
    const r = a.getBoundingClientRect();
    const br = box.getBoundingClientRect();
    if (r.top < br.top || r.bottom > br.bottom) a.scrollIntoView({ block: "nearest" });
  };
  let queued = false;
  window.addEventListener("scroll", () => {
    if (queued) return;
    queued = true;
    requestAnimationFrame(() => {
      queued = false;
      mark();
    });
  }, { passive: true });
  // Marked at the first frame, with the page's own first layout, instead
  // of forcing that layout while this script runs.
  requestAnimationFrame(mark);
}

setupTocFollow();

// A copy button on every code block (the text stays selectable without it).
function setupCopyButtons() {
  if (!navigator.clipboard) return;
  document.querySelectorAll("main pre").forEach((pre) => {
    if (pre.closest(".pg-app")) return;
    const btn = document.createElement("button");
    btn.type = "button";
    btn.className = "copy-code";
    btn.textContent = "Copy";
    btn.setAttribute("aria-label", "Copy this code");
    btn.addEventListener("click", async () => {
      try {
        await navigator.clipboard.writeText(pre.innerText.replace(/\n$/, ""));
        btn.textContent = "Copied";
      } catch (e) {
        btn.textContent = "Press Ctrl+C";
        const r = document.createRange();
        r.selectNodeContents(pre);
        const sel = window.getSelection();
        sel.removeAllRanges();
        sel.addRange(r);
      }
      setTimeout(() => (btn.textContent = "Copy"), 2000);
    });
    const wrap = document.createElement("div");
    wrap.className = "code-block";
    pre.replaceWith(wrap);
    wrap.append(pre, btn);
  });
}

setupCopyButtons();
