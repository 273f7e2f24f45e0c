// Progressive enhancements shared by every page: the theme toggle and the
// env-table filter (the search box is js/search/ui.js). Pages work without
// them.
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
}

setupThemeToggle();

// The environment-variable table: the full table is in the HTML; this adds
// filtering by text, component and debugging-only flag.
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
  const apply = () => {
    const words = q.value.toLowerCase().split(/\s+/).filter(Boolean);
    const c = comp.value;
    let shown = 0;
    rows.forEach((r, i) => {
      const ok = (!c || r.dataset.component === c) && (!dbg.checked || r.dataset.debug === "true") &&
        words.every((w) => text[i].includes(w));
      r.hidden = !ok;
      if (ok) shown++;
    });
    count.textContent = `${shown} of ${rows.length} variables`;
  };
  box.hidden = false;
  [q, comp, dbg].forEach((el) => el.addEventListener("input", apply));
  apply();
}

setupEnvFilter();

// The service worker (sw.js) caches the wasm, the search engine and
// search.db after the first visit; pages work without it.
if ("serviceWorker" in navigator && root.dataset.sw) {
  navigator.serviceWorker.register(root.dataset.sw, { scope: root.dataset.base || "/" }).catch(() => {});
}
