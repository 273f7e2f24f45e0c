// Service worker (published as sw.js at the site's root, so that its scope
// is the whole site, under a GitHub Pages sub-path too). It keeps the heavy,
// rarely changing files in a cache after the first visit, so that a second
// visit and offline reading start without the network: the playground's
// wasm binaries and wasm_exec.js, the search engine (its modules,
// SQLite's wasm) and search.db. Every other same-origin GET (pages, CSS,
// scripts) goes to the network first and falls back to the copy kept from
// the last visit when offline.
//
// VERSION is a hash of those files' content, written when the site is
// built (layouts/baseof.html), so a deploy that changes any of
// them is a new worker: it takes over at once and deletes the old caches.
const VERSION = '{{ .version }}';
const CACHE = `distnav-${VERSION}`;
const PAGES = 'distnav-pages';
const BASE = new URL('./', self.location).pathname;
const HEAVY = new Set({{ .heavy }}.map((p) => BASE + p));

self.addEventListener('install', () => self.skipWaiting());

self.addEventListener('activate', (event) => {
  event.waitUntil((async () => {
    for (const k of await caches.keys()) {
      if (k.startsWith('distnav-') && k !== CACHE && k !== PAGES) await caches.delete(k);
    }
    await self.clients.claim();
  })());
});

// cacheFirst answers from the versioned cache, filling it on a miss.
async function cacheFirst(req) {
  const cache = await caches.open(CACHE);
  const hit = await cache.match(req);
  if (hit) return hit;
  const resp = await fetch(req);
  if (resp.ok) await cache.put(req, resp.clone());
  return resp;
}

// networkFirst keeps the latest copy of a page for offline reading.
async function networkFirst(req) {
  const cache = await caches.open(PAGES);
  try {
    const resp = await fetch(req);
    if (resp.ok) await cache.put(req, resp.clone());
    return resp;
  } catch (e) {
    const hit = await cache.match(req);
    if (hit) return hit;
    throw e;
  }
}

self.addEventListener('fetch', (event) => {
  const req = event.request;
  const url = new URL(req.url);
  if (req.method !== 'GET' || url.origin !== self.location.origin || !url.pathname.startsWith(BASE)) return;
  event.respondWith(HEAVY.has(url.pathname) ? cacheFirst(req) : networkFirst(req));
});
