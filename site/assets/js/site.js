// Progressive enhancements shared by every page: the theme toggle and the
// "/" shortcut that focuses the search box. Pages work without them.
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

function setupSlash() {
  document.addEventListener("keydown", (ev) => {
    if (ev.key !== "/" || ev.ctrlKey || ev.metaKey || ev.altKey) return;
    const t = ev.target;
    if (t instanceof HTMLElement && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName))) return;
    const input = document.getElementById("search-input");
    if (!input) return;
    ev.preventDefault();
    input.focus();
  });
}

setupThemeToggle();
setupSlash();
