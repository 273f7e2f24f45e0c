// The search box. Progressive enhancement of a plain <form role="search"> that, without
// JavaScript, submits to the A–Z index. With JavaScript:
// - "/" focuses the box (unless the user is typing in a field);
// - the search engine (worker.js) starts on first focus, not on page load;
// - results appear in a listbox under the box (ARIA 1.2 combobox pattern): kind badge,
//   title, breadcrumb and a snippet with the matched words highlighted;
// - ArrowDown/ArrowUp move through results, Enter opens the active (or first) result,
//   Escape closes the list, then clears the box;
// - "No results" and load errors are shown in a status line (a polite live region).
// The site's base URL comes from <html data-base="…/">; every URL is resolved against it.

import { MAX_QUERY_RUNES } from '../../gen/search/spec.js';

const KIND_LABEL = {
  env: 'env var',
  section: 'section',
  symbol: 'symbol',
  correction: 'correction',
  page: 'page',
  log: 'review log',
};

// One typed character would match a large part of the index as a prefix; wait for two.
const MIN_CHARS = 2;

function baseURL() {
  return new URL(document.documentElement.dataset.base || './', document.baseURI);
}

function isEditable(el) {
  if (!el) {
    return false;
  }
  const tag = el.tagName;
  return el.isContentEditable || tag === 'INPUT' || tag === 'TEXTAREA' || tag === 'SELECT';
}

// enhance turns one search form into the live search box. Returns false when the form has
// no search input.
export function enhance(form) {
  const input = form.querySelector('input[type="search"], input[name="q"]');
  if (!input || form.dataset.searchEnhanced) {
    return false;
  }
  form.dataset.searchEnhanced = 'true';
  const base = baseURL();
  const uid = input.id || 'search-input';
  input.id = uid;

  const panel = document.createElement('div');
  panel.className = 'search-panel';
  const status = document.createElement('p');
  status.className = 'search-status';
  status.id = `${uid}-status`;
  status.setAttribute('role', 'status');
  const list = document.createElement('ul');
  list.className = 'search-results';
  list.id = `${uid}-listbox`;
  list.setAttribute('role', 'listbox');
  list.setAttribute('aria-label', 'Search results');
  list.hidden = true;
  panel.append(list, status);
  form.append(panel);

  input.setAttribute('role', 'combobox');
  input.setAttribute('aria-autocomplete', 'list');
  input.setAttribute('aria-expanded', 'false');
  input.setAttribute('aria-controls', list.id);
  input.setAttribute('autocomplete', 'off');
  input.setAttribute('spellcheck', 'false');
  input.setAttribute('maxlength', String(MAX_QUERY_RUNES));
  if (!input.getAttribute('aria-keyshortcuts')) {
    input.setAttribute('aria-keyshortcuts', '/');
  }
  // The "/" shortcut needs this script and a keyboard: the page's own
  // placeholder does not mention it (a phone has no "/" key to press), and
  // it is named where a pointer that hovers suggests a keyboard.
  if (window.matchMedia('(any-hover: hover)').matches && input.placeholder === 'Search') {
    input.placeholder = 'Search (press /)';
  }

  let worker = null;
  let state = 'idle'; // idle | loading | ready | failed
  let loadError = '';
  let seq = 0; // id of the latest search sent
  let results = [];
  let active = -1;
  let inflight = false; // a search was sent and its answer has not arrived
  let pending = false; // the text changed while a search was in flight

  const setStatus = (text, isError = false) => {
    status.textContent = text;
    status.classList.toggle('search-error', isError);
  };

  const close = () => {
    list.hidden = true;
    input.setAttribute('aria-expanded', 'false');
    input.removeAttribute('aria-activedescendant');
    active = -1;
  };

  const setActive = (i) => {
    const items = list.children;
    if (active >= 0 && items[active]) {
      items[active].setAttribute('aria-selected', 'false');
    }
    active = i;
    if (i >= 0 && items[i]) {
      items[i].setAttribute('aria-selected', 'true');
      input.setAttribute('aria-activedescendant', items[i].id);
      items[i].scrollIntoView({ block: 'nearest' });
    } else {
      input.removeAttribute('aria-activedescendant');
    }
  };

  const go = (r) => {
    window.location.assign(new URL(r.url, base).href);
  };

  const render = (q, rs) => {
    results = rs;
    list.dataset.query = q; // which query the list shows (tests wait on it)
    active = -1;
    list.replaceChildren();
    input.removeAttribute('aria-activedescendant');
    rs.forEach((r, i) => {
      const li = document.createElement('li');
      li.id = `${uid}-opt-${i}`;
      li.className = 'search-result';
      li.setAttribute('role', 'option');
      li.setAttribute('aria-selected', 'false');
      li.dataset.url = new URL(r.url, base).href;
      const kind = document.createElement('span');
      kind.className = `search-kind search-kind-${r.kind}`;
      kind.textContent = KIND_LABEL[r.kind] ?? r.kind;
      const title = document.createElement('span');
      title.className = 'search-title';
      title.textContent = r.title;
      const crumb = document.createElement('span');
      crumb.className = 'search-crumb';
      crumb.textContent = r.breadcrumb;
      const snip = document.createElement('span');
      snip.className = 'search-snippet';
      snip.innerHTML = r.snippet; // escaped by query.js, only <mark> is markup
      li.append(kind, ' ', title, ' ', crumb, ' ', snip);
      li.addEventListener('mousedown', (ev) => ev.preventDefault()); // keep focus in the box
      li.addEventListener('click', () => go(r));
      list.append(li);
    });
    if (rs.length > 0) {
      list.hidden = false;
      input.setAttribute('aria-expanded', 'true');
      setStatus(rs.length === 1 ? '1 result' : `${rs.length} results`);
    } else {
      close();
      setStatus(q.trim() === '' ? '' : `No results for “${q.trim()}”.`);
    }
  };

  const fail = (message) => {
    state = 'failed';
    loadError = message;
    close();
    setStatus(`Search is unavailable: ${message}. The A–Z index lists every page.`, true);
  };

  const start = () => {
    if (worker || state === 'failed') {
      return;
    }
    state = 'loading';
    try {
      worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
    } catch (e) {
      fail(String(e?.message ?? e));
      return;
    }
    worker.onmessage = (ev) => {
      const m = ev.data || {};
      if (m.type === 'ready') {
        // A search sent while loading is answered next; only a stale "Loading" goes.
        state = 'ready';
        if (input.value.trim().length < MIN_CHARS && status.textContent.startsWith('Loading')) {
          setStatus('');
        }
      } else if (m.type === 'results') {
        settle();
        if (m.id === seq) {
          render(String(m.q ?? ''), m.results || []);
        }
      } else if (m.type === 'error') {
        if (m.id !== undefined) {
          settle();
        }
        if (m.id === undefined) {
          fail(m.message);
        } else if (m.id === seq && state !== 'failed') {
          close();
          setStatus(`Search failed: ${m.message}`, true);
        }
      }
    };
    worker.onerror = (ev) => {
      ev.preventDefault();
      fail(ev.message || 'the search worker could not start');
    };
    worker.postMessage({ type: 'init', base: base.href });
  };

  const send = () => {
    const q = input.value;
    if (q.trim().length < MIN_CHARS) {
      seq++;
      render('', []);
      return;
    }
    if (state === 'failed') {
      setStatus(`Search is unavailable: ${loadError}. The A–Z index lists every page.`, true);
      return;
    }
    start();
    if (state !== 'ready') {
      setStatus('Loading search…');
    }
    seq++;
    inflight = true;
    worker.postMessage({ type: 'search', id: seq, q, limit: 10 });
  };

  // One search at a time: a keystroke while a search runs marks the box as
  // changed, and the newest text is searched as soon as the answer arrives.
  // The first keystroke is searched at once, with no debounce delay.
  const request = () => {
    if (inflight) {
      pending = true;
      return;
    }
    send();
  };
  const settle = () => {
    inflight = false;
    if (pending) {
      pending = false;
      send();
    }
  };

  input.addEventListener('focus', start);
  input.addEventListener('input', request);
  input.addEventListener('keydown', (ev) => {
    const n = results.length;
    switch (ev.key) {
      case 'ArrowDown':
        if (n > 0) {
          ev.preventDefault();
          if (list.hidden) {
            list.hidden = false;
            input.setAttribute('aria-expanded', 'true');
          }
          setActive(active + 1 >= n ? 0 : active + 1);
        }
        break;
      case 'ArrowUp':
        if (n > 0) {
          ev.preventDefault();
          if (list.hidden) {
            list.hidden = false;
            input.setAttribute('aria-expanded', 'true');
          }
          setActive(active <= 0 ? n - 1 : active - 1);
        }
        break;
      case 'Escape':
        if (!list.hidden) {
          ev.preventDefault();
          close();
        } else if (input.value !== '') {
          ev.preventDefault();
          input.value = '';
          seq++;
          render('', []);
        }
        break;
      default:
    }
  });
  form.addEventListener('submit', (ev) => {
    if (state === 'failed') {
      return; // let the form take the user to the A–Z index
    }
    ev.preventDefault();
    if (results.length > 0 && !list.hidden) {
      go(results[active >= 0 ? active : 0]);
    } else if (input.value.trim() !== '') {
      send();
    }
  });
  form.addEventListener('focusout', (ev) => {
    if (!form.contains(ev.relatedTarget)) {
      close();
    }
  });
  input.addEventListener('click', () => {
    if (results.length > 0 && list.hidden) {
      list.hidden = false;
      input.setAttribute('aria-expanded', 'true');
    }
  });
  return true;
}

function init() {
  const forms = [...document.querySelectorAll('form[role="search"]')].filter(enhance);
  if (forms.length === 0) {
    return;
  }
  const input = forms[0].querySelector('[role="combobox"]');
  document.addEventListener('keydown', (ev) => {
    if (ev.key === '/' && !ev.ctrlKey && !ev.metaKey && !ev.altKey && !isEditable(document.activeElement)) {
      ev.preventDefault();
      input.focus();
      input.select();
    }
  });
}

if (document.readyState === 'loading') {
  document.addEventListener('DOMContentLoaded', init);
} else {
  init();
}
