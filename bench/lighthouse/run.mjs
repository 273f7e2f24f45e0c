// Lighthouse scores of the built site (make bench): serves a public/ tree
// built for http://127.0.0.1:PORT/ from this process and runs Lighthouse's
// default (mobile) configuration on the home page, a subsystem page, the env
// table and the estimator in Debian's Chromium. Prints the four category
// scores per page and, for performance, the audits that cost the most.
//
//   node bench/lighthouse/run.mjs PUBLIC_DIR PORT [--json FILE]
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import lighthouse from 'lighthouse';
import * as chromeLauncher from 'chrome-launcher';

const [publicDir, portArg, ...rest] = process.argv.slice(2);
if (!publicDir || !portArg) {
  console.error('usage: node bench/lighthouse/run.mjs PUBLIC_DIR PORT [--json FILE]');
  process.exit(2);
}
const port = Number(portArg);
const jsonOut = rest[0] === '--json' ? rest[1] : '';

const pages = [
  ['home', '/'],
  ['subsystem', '/distributed-nav/subsystems/processgroupnccl/'],
  ['env', '/env/'],
  ['estimator', '/playground/estimator/'],
];

const types = {
  '.html': 'text/html; charset=utf-8', '.css': 'text/css', '.js': 'text/javascript', '.mjs': 'text/javascript',
  '.json': 'application/json', '.svg': 'image/svg+xml', '.wasm': 'application/wasm', '.db': 'application/octet-stream',
  '.xml': 'application/xml', '.txt': 'text/plain', '.pdf': 'application/pdf', '.png': 'image/png',
};

// A static server like GitHub Pages: index.html for directories, 404.html
// (when the site has one) for anything missing, gzip for text and wasm,
// ten minutes of caching.
const root = path.resolve(publicDir);
const server = http.createServer((req, res) => {
  const url = new URL(req.url, `http://127.0.0.1:${port}`);
  let p = path.join(root, decodeURIComponent(url.pathname));
  if (!p.startsWith(root)) {
    res.writeHead(403).end();
    return;
  }
  if (fs.existsSync(p) && fs.statSync(p).isDirectory()) p = path.join(p, 'index.html');
  if (!fs.existsSync(p)) {
    const nf = path.join(root, '404.html');
    res.writeHead(404, { 'Content-Type': types['.html'] });
    res.end(fs.existsSync(nf) ? fs.readFileSync(nf) : 'not found');
    return;
  }
  const type = types[path.extname(p)] || 'application/octet-stream';
  const headers = { 'Content-Type': type, 'Cache-Control': 'max-age=600' };
  if (/gzip/.test(req.headers['accept-encoding'] || '') && /text|javascript|json|svg|xml|wasm/.test(type)) {
    headers['Content-Encoding'] = 'gzip';
    res.writeHead(200, headers);
    fs.createReadStream(p).pipe(zlib.createGzip()).pipe(res);
    return;
  }
  res.writeHead(200, headers);
  fs.createReadStream(p).pipe(res);
});
await new Promise((ok) => server.listen(port, '127.0.0.1', ok));

const chrome = await chromeLauncher.launch({
  chromePath: process.env.CHROME_PATH || '/usr/bin/chromium',
  chromeFlags: ['--headless=new', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync'],
});

const categories = ['performance', 'accessibility', 'best-practices', 'seo'];
const results = [];
try {
  for (const [name, p] of pages) {
    const r = await lighthouse(`http://127.0.0.1:${port}${p}`, { port: chrome.port, output: 'json', logLevel: 'error', onlyCategories: categories });
    const lhr = r.lhr;
    const scores = Object.fromEntries(categories.map((c) => [c, Math.round((lhr.categories[c]?.score ?? 0) * 100)]));
    // What holds performance back: the metrics, and the audits that fail
    // with the largest estimated saving.
    const metrics = Object.fromEntries(['first-contentful-paint', 'largest-contentful-paint', 'total-blocking-time', 'cumulative-layout-shift', 'speed-index']
      .map((id) => [id, lhr.audits[id]?.displayValue || '']));
    const costly = Object.values(lhr.audits)
      .filter((a) => a.score !== null && a.score < 0.9 && (a.details?.overallSavingsMs || a.numericValue) && lhr.categories.performance.auditRefs.some((ref) => ref.id === a.id))
      .sort((a, b) => (b.details?.overallSavingsMs || 0) - (a.details?.overallSavingsMs || 0))
      .slice(0, 4)
      .map((a) => `${a.title}${a.displayValue ? ` (${a.displayValue})` : ''}`);
    const failing = categories.filter((c) => c !== 'performance').flatMap((c) => lhr.categories[c].auditRefs
      .filter((ref) => ref.weight > 0 && lhr.audits[ref.id].score !== null && lhr.audits[ref.id].score < 1)
      .map((ref) => `${c}: ${lhr.audits[ref.id].title}`));
    results.push({ name, path: p, scores, metrics, costly, failing });
    console.log(`${name.padEnd(10)} ${p}`);
    console.log(`  performance ${scores.performance}  accessibility ${scores.accessibility}  best practices ${scores['best-practices']}  SEO ${scores.seo}`);
    console.log(`  FCP ${metrics['first-contentful-paint']}, LCP ${metrics['largest-contentful-paint']}, TBT ${metrics['total-blocking-time']}, CLS ${metrics['cumulative-layout-shift']}, SI ${metrics['speed-index']}`);
    for (const c of costly) console.log(`  costs performance: ${c}`);
    for (const f of failing) console.log(`  fails ${f}`);
  }
} finally {
  await chrome.kill();
  server.close();
}
if (jsonOut) fs.writeFileSync(jsonOut, JSON.stringify(results, null, 2));
