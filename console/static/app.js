// Switchyard console: a hash-routed single page over the authenticated JSON API.
//
// Login: the API key is kept in sessionStorage (this tab only) and sent as
// Authorization: Bearer. Opening the console with the key in the fragment
// (/console/#key=KEY or /console/#/requests?key=KEY) logs in with it; the page removes it
// from the address bar at once. Everything shown is built with DOM calls and textContent
// (data is never parsed as HTML), so model output and prompts cannot inject markup.

import { chart, legend, PALETTE } from './chart.js';
import { diffText, renderDiff, diffStats } from './diff.js';

const KEY = 'switchyard.apiKey';
const main = document.getElementById('main');
let timer = null; // the current page's refresh timer
let generation = 0; // bumped on each navigation; stale async renders check it

// ---------- small DOM helpers ----------

/** h creates an element: h('td', {class: 'num'}, 'text', child, ...). */
function h(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else if (k === 'class') e.className = v;
    else e.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    e.append(c instanceof Node ? c : String(c));
  }
  return e;
}

function table(headers, rows) {
  return h('table', {},
    h('thead', {}, h('tr', {}, headers.map((x) => (typeof x === 'string' ? h('th', {}, x) : h('th', { class: x.class }, x.text))))),
    rows instanceof HTMLElement && rows.tagName === 'TBODY' ? rows : h('tbody', {}, rows));
}

const fmt = {
  usd(v) {
    if (v === undefined || v === null) return '—';
    if (v === 0) return '$0';
    if (Math.abs(v) < 0.01) return '$' + v.toPrecision(2);
    return '$' + v.toFixed(2);
  },
  ms(v) {
    if (v === undefined || v === null) return '—';
    if (v > 0 && v < 10) return v.toFixed(v < 1 ? 2 : 1) + ' ms';
    if (v >= 10000) return (v / 1000).toFixed(1) + ' s';
    if (v >= 1000) return (v / 1000).toFixed(2) + ' s';
    return Math.round(v) + ' ms';
  },
  int(v) { return v === undefined || v === null ? '—' : Number(v).toLocaleString('en-US'); },
  pct(v) { return v === undefined || v === null ? '—' : (v * 100).toFixed(1) + '%'; },
  score(v) { return v === undefined || v === null ? '—' : Number(v).toFixed(3); },
  time(s) {
    if (!s) return '—';
    const d = new Date(s);
    if (Number.isNaN(d.getTime())) return String(s);
    const today = new Date().toDateString() === d.toDateString();
    return today ? d.toLocaleTimeString('en-GB') : d.toLocaleString('en-GB');
  },
};

function outcomePill(outcome) {
  const cls = outcome === 'ok' || outcome === 'completed' || outcome === 'active' ? 'ok'
    : outcome === 'cancelled' || outcome === 'skipped' || outcome === 'queued' || outcome === 'running' || outcome === 'interrupted' ? 'warn' : 'bad';
  return h('span', { class: 'pill ' + cls }, outcome);
}

// ---------- API ----------

class APIError extends Error {
  constructor(status, body) {
    super((body && body.message) || `HTTP ${status}`);
    this.status = status;
    this.body = body;
  }
}

/** api GETs a JSON API path with the key; a 401 logs out. */
async function api(path) {
  const key = sessionStorage.getItem(KEY);
  const resp = await fetch(path, { headers: { Authorization: 'Bearer ' + key, Accept: 'application/json' }, cache: 'no-store' });
  let body = null;
  try { body = await resp.json(); } catch { /* not JSON */ }
  if (resp.status === 401) {
    sessionStorage.removeItem(KEY);
    showLogin('The server refused the key (401). Enter a valid API key.');
    throw new APIError(401, body);
  }
  if (!resp.ok) throw new APIError(resp.status, body);
  return body;
}

function q(params) {
  const u = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') u.set(k, v);
  const s = u.toString();
  return s ? '?' + s : '';
}

// ---------- login and routing ----------

/** takeKeyFromFragment moves key=... from the URL fragment into sessionStorage. */
function takeKeyFromFragment() {
  const hash = location.hash.slice(1);
  const [route, query] = hash.startsWith('/') ? [hash.split('?')[0], hash.split('?')[1] || ''] : ['', hash];
  const params = new URLSearchParams(query);
  const key = params.get('key');
  if (!key) return;
  sessionStorage.setItem(KEY, key);
  params.delete('key');
  const rest = params.toString();
  history.replaceState(null, '', location.pathname + location.search + '#' + (route || '/usage') + (rest ? '?' + rest : ''));
}

function showLogin(message) {
  clearInterval(timer);
  generation++;
  document.getElementById('nav').hidden = true;
  document.getElementById('logout').hidden = true;
  main.replaceChildren(document.getElementById('login-template').content.cloneNode(true));
  const err = document.getElementById('login-error');
  if (message) { err.textContent = message; err.hidden = false; }
  document.getElementById('login-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    const key = document.getElementById('login-key').value.trim();
    if (!key) return;
    sessionStorage.setItem(KEY, key);
    route();
  });
}

const pages = {
  usage: usagePage,
  requests: requestsPage,
  conversations: conversationsPage,
  routers: routersPage,
  optimize: optimizePage,
  keys: keysPage,
};

/** route renders the page named by the fragment (#/page/arg). */
async function route() {
  clearInterval(timer);
  const gen = ++generation;
  // The current route, for tests and styling (the key is never part of it).
  document.body.dataset.route = location.hash;
  if (!sessionStorage.getItem(KEY)) { showLogin(); return; }
  document.getElementById('nav').hidden = false;
  document.getElementById('logout').hidden = false;
  const path = location.hash.replace(/^#\/?/, '').split('?')[0];
  const [name, ...rest] = path.split('/');
  const page = pages[name] ? name : 'usage';
  for (const a of document.querySelectorAll('nav a')) a.classList.toggle('active', a.dataset.page === page);
  const view = h('div', { class: 'view', 'data-page': page });
  main.replaceChildren(view);
  try {
    await pages[page](view, rest.map(decodeURIComponent).join('/'), gen);
    view.setAttribute('data-loaded', 'true');
  } catch (e) {
    if (e instanceof APIError && e.status === 401) return;
    if (gen === generation) view.append(h('p', { class: 'error' }, 'Could not load: ' + e.message));
  }
}

/** every runs f now and then every ms milliseconds while the page is shown. */
function every(ms, gen, f) {
  timer = setInterval(() => {
    if (gen !== generation) return;
    f().catch((e) => console.warn('refresh failed', e));
  }, ms);
}

// ---------- page 1: spend and latency per model ----------

async function usagePage(view, _arg, gen) {
  const params = new URLSearchParams(location.hash.split('?')[1] || '');
  const win = params.get('window') === '24h' ? '24h' : '1h';
  const sel = h('select', { id: 'window', onchange: (ev) => { location.hash = '#/usage?window=' + ev.target.value; } },
    h('option', { value: '1h', selected: win === '1h' }, 'last hour'),
    h('option', { value: '24h', selected: win === '24h' }, 'last 24 hours'));
  const body = h('div', {});
  const tags = h('div', {});
  view.append(h('h1', {}, 'Spend and latency per model'),
    h('div', { class: 'toolbar' }, sel, h('button', { type: 'button', onclick: () => draw() }, 'Refresh'),
      h('span', { class: 'muted' }, 'This key\'s completions since this server started (kept in memory).')),
    body, tags);
  async function draw() {
    const s = await api('/api/v1/usage/series' + q({ window: win }));
    // The daily spend per request tag, kept in the store (absent on a server without it).
    const spend = await api('/api/v1/usage/spend' + q({ by: 'tag' })).catch(() => null);
    if (gen !== generation) return;
    body.replaceChildren(...renderSeries(s));
    tags.replaceChildren(...(spend ? renderTagSpend(spend) : []));
  }
  await draw();
  every(30000, gen, draw);
}

function renderSeries(s) {
  if (!s.models.length) return [h('p', { class: 'empty' }, 'No requests in this window yet.')];
  const start = Date.parse(s.start), end = Date.parse(s.end), step = s.step_seconds * 1000;
  const tot = { requests: 0, errors: 0, cost: 0, lat: 0, tokens: 0 };
  for (const m of s.models) {
    tot.requests += m.total.requests; tot.errors += m.total.errors; tot.cost += m.total.cost_usd;
    tot.lat += m.total.latency_ms_sum; tot.tokens += m.total.prompt_tokens + m.total.completion_tokens;
  }
  const shown = s.models.slice(0, PALETTE.length);
  // Cost per step with empty steps as 0, so the line falls to the axis between requests.
  const costSeries = shown.map((m) => {
    const by = new Map(m.points.map((p) => [Date.parse(p.t), p.cost_usd]));
    const points = [];
    for (let t = start; t < end; t += step) points.push({ x: t, y: by.get(t) || 0, title: `${m.model} ${new Date(t).toLocaleTimeString('en-GB')}: ${fmt.usd(by.get(t) || 0)}` });
    return { name: m.model, points, markers: false };
  });
  // Latency only where there were requests; a gap where there were none.
  const latSeries = shown.map((m) => ({
    name: m.model,
    points: m.points.map((p) => ({ x: Date.parse(p.t), y: p.latency_ms_mean,
      title: `${m.model} ${new Date(Date.parse(p.t)).toLocaleTimeString('en-GB')}: mean ${fmt.ms(p.latency_ms_mean)}, max ${fmt.ms(p.latency_ms_max)}, ${p.requests} requests` })),
  }));
  const stepLabel = s.step_seconds >= 3600 ? s.step_seconds / 3600 + ' h' : s.step_seconds / 60 + ' min';
  const names = shown.map((m) => m.model);
  const rows = s.models.map((m) => h('tr', {},
    h('td', {}, m.model), h('td', { class: 'num' }, fmt.int(m.total.requests)),
    h('td', { class: 'num' + (m.total.errors ? ' bad' : '') }, fmt.int(m.total.errors)),
    h('td', { class: 'num' }, fmt.int(m.total.prompt_tokens + m.total.completion_tokens)),
    h('td', { class: 'num' }, fmt.usd(m.total.cost_usd)),
    h('td', { class: 'num' }, fmt.ms(m.total.requests ? m.total.latency_ms_sum / m.total.requests : null)),
    h('td', { class: 'num' }, fmt.ms(m.total.latency_ms_max))));
  return [
    h('div', { class: 'card stats' },
      stat(fmt.int(tot.requests), 'requests'), stat(fmt.int(tot.errors), 'errors'), stat(fmt.usd(tot.cost), 'spend (USD)'),
      stat(fmt.int(tot.tokens), 'tokens'), stat(fmt.ms(tot.requests ? tot.lat / tot.requests : null), 'mean latency')),
    h('div', { class: 'row' },
      h('div', { class: 'card', id: 'spend-chart' }, h('h2', {}, `Spend per ${stepLabel} (USD)`),
        chart({ series: costSeries, time: true, xDomain: [start, end], yMin: 0, yFormat: fmt.usd, title: 'Spend per model', height: 240 }),
        legend(names)),
      h('div', { class: 'card', id: 'latency-chart' }, h('h2', {}, `Mean latency per ${stepLabel}`),
        chart({ series: latSeries, time: true, xDomain: [start, end], yMin: 0, yFormat: fmt.ms, gap: step * 1.5, title: 'Latency per model', height: 240 }),
        legend(names))),
    h('div', { class: 'card' }, h('h2', {}, 'Per model'),
      table(['Model', { text: 'Requests', class: 'num' }, { text: 'Errors', class: 'num' }, { text: 'Tokens', class: 'num' },
        { text: 'Spend', class: 'num' }, { text: 'Mean latency', class: 'num' }, { text: 'Max latency', class: 'num' }], rows)),
  ];
}

// renderTagSpend totals the daily spend rows per tag over their days, costliest first.
function renderTagSpend(sp) {
  const per = new Map();
  for (const r of sp.data) {
    const t = per.get(r.tag) || { tag: r.tag, requests: 0, tokens: 0, cost: 0, hits: 0, saved: 0 };
    t.requests += r.requests; t.tokens += r.prompt_tokens + r.completion_tokens; t.cost += r.cost_usd;
    t.hits += r.cache_hits || 0; t.saved += r.saved_usd || 0;
    per.set(r.tag, t);
  }
  const all = [...per.values()].sort((a, b) => b.cost - a.cost || a.tag.localeCompare(b.tag));
  return [h('div', { class: 'card', id: 'tag-spend' }, h('h2', {}, `Spend per request tag, ${sp.from} to ${sp.to}`),
    all.length
      ? table(['Tag', { text: 'Requests', class: 'num' }, { text: 'Tokens', class: 'num' }, { text: 'Spend', class: 'num' },
        { text: 'Cache hits', class: 'num' }, { text: 'Saved', class: 'num' }],
      all.map((t) => h('tr', { class: 'tag-spend' }, h('td', { class: 'mono' }, t.tag), h('td', { class: 'num' }, fmt.int(t.requests)),
        h('td', { class: 'num' }, fmt.int(t.tokens)), h('td', { class: 'num' }, fmt.usd(t.cost)),
        h('td', { class: 'num' }, fmt.int(t.hits)), h('td', { class: 'num' }, fmt.usd(t.saved)))))
      : h('p', { class: 'empty' }, 'No tagged requests yet: send tags in metadata.tags or the X-Switchyard-Tags header.'))];
}

function stat(value, label) {
  return h('div', { class: 'stat' }, h('b', {}, value), h('span', {}, label));
}

// ---------- page 2: recent requests with their attempts ----------

async function requestsPage(view, _arg, gen) {
  const body = h('tbody', {});
  const more = h('button', { type: 'button', hidden: true }, 'Older requests');
  let before = 0;
  const tag = new URLSearchParams(location.hash.split('?')[1] || '').get('tag') || '';
  view.append(h('h1', {}, 'Recent requests', tag ? h('span', { class: 'muted' }, ' of ', h('span', { class: 'mono' }, tag)) : null),
    h('div', { class: 'toolbar' }, h('button', { type: 'button', onclick: () => load(true) }, 'Refresh'),
      h('span', { class: 'muted' }, 'Newest first; each with its upstream attempts (retries, fallbacks, continuations).')),
    h('div', { class: 'card' }, h('table', { id: 'requests' },
      h('thead', {}, h('tr', {}, ['Time', 'Model', 'Outcome', 'Latency', 'TTFT', 'Tokens', 'Cost', 'Conversation']
        .map((x, i) => h('th', { class: i >= 3 && i <= 6 ? 'num' : null }, x)))),
      body), more));
  more.addEventListener('click', () => load(false));
  async function load(fresh) {
    const page = await api('/api/v1/usage/requests' + q({ limit: 50, before: fresh ? '' : before, tag }));
    if (gen !== generation) return;
    if (fresh) body.replaceChildren();
    if (fresh && !page.data.length) body.append(h('tr', {}, h('td', { colspan: 8, class: 'empty' }, 'No requests yet.')));
    for (const r of page.data) body.append(...requestRows(r));
    before = page.next_before || 0;
    more.hidden = !before;
  }
  await load(true);
}

function requestRows(r) {
  const rows = [h('tr', { class: 'request', 'data-id': r.id },
    h('td', {}, fmt.time(r.start)),
    h('td', {}, r.model, r.stream ? h('span', { class: 'muted' }, ' · stream') : null,
      r.cache === 'hit' || r.cache === 'partial' ? h('span', { class: 'muted cache-hit', title: 'answered from the response cache' }, ' · cache ' + r.cache) : null,
      r.tag ? h('div', { class: 'muted' }, r.tag) : null,
      r.tags ? h('div', { class: 'muted tags' }, r.tags.join(' · ')) : null),
    h('td', {}, outcomePill(r.outcome), r.error ? h('div', { class: 'muted' }, r.error) : null),
    h('td', { class: 'num' }, fmt.ms(r.latency_ms)),
    h('td', { class: 'num' }, r.ttft_ms ? fmt.ms(r.ttft_ms) : '—'),
    h('td', { class: 'num' }, fmt.int(r.total_tokens), r.usage_estimated ? h('span', { class: 'muted', title: 'counted locally' }, ' est.') : null),
    h('td', { class: 'num' }, r.price_known ? fmt.usd(r.cost_usd) : h('span', { class: 'muted', title: 'no price in the catalogue' }, 'unknown'),
      r.saved_usd ? h('div', { class: 'muted', title: 'what the cached answer cost when it was made' }, 'saved ' + fmt.usd(r.saved_usd)) : null),
    h('td', {}, r.conversation_id ? h('a', { href: '#/conversations/' + encodeURIComponent(r.conversation_id) }, r.conversation_id.slice(0, 8) + '…') : '—'))];
  r.attempts.forEach((a, i) => {
    rows.push(h('tr', { class: 'sub attempt' + (i === r.attempts.length - 1 ? ' last-sub' : '') },
      h('td', { class: 'muted nowrap' }, `attempt ${i + 1}`),
      h('td', {}, a.model, a.continued_from !== undefined ? h('span', { class: 'muted' }, ` · continued at ${a.continued_from}`) : null),
      h('td', {}, outcomePill(a.outcome), a.kind ? h('span', { class: 'mono' }, ' ' + a.kind) : null,
        a.error ? h('div', { class: 'muted' }, a.error) : null),
      h('td', { class: 'num' }, fmt.ms(a.latency_ms)), h('td', {}), h('td', {}), h('td', {}), h('td', {})));
  });
  if (!r.attempts.length) rows[0].classList.add('no-attempts');
  return rows;
}

// ---------- virtual keys ----------

async function keysPage(view, _arg, gen) {
  const keys = await api('/api/v1/keys');
  if (gen !== generation) return;
  const limit = (k) => [k.max_budget_usd ? fmt.usd(k.max_budget_usd) + (k.budget_duration ? ' / ' + k.budget_duration : '') : null,
    k.max_requests ? fmt.int(k.max_requests) + ' requests' : null, k.max_tokens ? fmt.int(k.max_tokens) + ' tokens' : null,
    k.requests_per_minute ? k.requests_per_minute + '/min' : null,
    k.tokens_per_minute ? fmt.int(k.tokens_per_minute) + ' tokens/min' : null].filter(Boolean).join(', ') || 'none';
  view.append(h('h1', {}, 'Virtual keys'), h('div', { class: 'card' }, keys.data.length
    ? table(['Key', 'Name', 'Models', 'Limits', { text: 'Spent', class: 'num' }, { text: 'Requests', class: 'num' }, { text: 'Tokens', class: 'num' }, 'Expires', 'Created'],
      keys.data.map((k) => h('tr', { class: 'virtual-key' },
        h('td', {}, h('a', { href: '#/requests?tag=' + encodeURIComponent('key:' + k.id), class: 'mono' }, k.id)),
        h('td', {}, k.name || '—'), h('td', {}, (k.models || []).join(', ') || 'all'), h('td', {}, limit(k)),
        h('td', { class: 'num' }, fmt.usd(k.spend.cost_usd)), h('td', { class: 'num' }, fmt.int(k.spend.requests)),
        h('td', { class: 'num' }, fmt.int(k.spend.tokens)),
        h('td', {}, k.expired ? outcomePill('expired') : k.expires_at ? fmt.time(k.expires_at) : 'never'),
        h('td', {}, fmt.time(k.created_at)))))
    : h('p', { class: 'empty' }, 'No virtual keys yet: issue one with switchyard keys issue or POST /api/v1/keys.')),
  h('p', { class: 'muted' }, 'Spend is in the current budget period for keys with a budget duration. A key\'s id opens its requests.'));
}

// ---------- page 3: conversations ----------

async function conversationsPage(view, id, gen) {
  if (id) return messagesPage(view, id, gen);
  const body = h('tbody', {});
  const more = h('button', { type: 'button', hidden: true }, 'More');
  let cursor = '';
  view.append(h('h1', {}, 'Conversations'),
    h('div', { class: 'card' }, table(['Title', 'Updated', { text: 'Messages', class: 'num' }, 'Id'], body), more));
  more.addEventListener('click', () => load());
  async function load() {
    const page = await api('/api/v1/conversations' + q({ limit: 50, cursor }));
    if (gen !== generation) return;
    if (!cursor && !page.data.length) body.append(h('tr', {}, h('td', { colspan: 4, class: 'empty' }, 'No conversations yet.')));
    for (const c of page.data) {
      const href = '#/conversations/' + encodeURIComponent(c.id);
      body.append(h('tr', { class: 'conversation' }, h('td', {}, h('a', { href }, c.title || '(untitled)')),
        h('td', {}, fmt.time(c.updated_at)), h('td', { class: 'num' }, c.message_count), h('td', { class: 'mono muted' }, c.id)));
    }
    cursor = page.next_cursor || '';
    more.hidden = !cursor;
  }
  await load();
}

async function messagesPage(view, id, gen) {
  const list = h('div', { class: 'messages', id: 'messages' });
  const more = h('button', { type: 'button', hidden: true }, 'Later messages');
  let cursor = '';
  view.append(h('p', {}, h('a', { href: '#/conversations' }, '← Conversations')),
    h('h1', {}, 'Conversation ', h('span', { class: 'mono muted' }, id)), list, more);
  more.addEventListener('click', () => load());
  async function load() {
    const page = await api(`/api/v1/conversations/${encodeURIComponent(id)}/messages` + q({ limit: 100, cursor }));
    if (gen !== generation) return;
    for (const m of page.data) {
      const text = (m.content || []).map((b) => b.text).join('\n');
      list.append(h('article', { class: 'msg ' + m.role },
        h('header', {}, m.role, m.model ? ' · ' + m.model : '', ' · ', fmt.time(m.created)),
        h('div', { class: 'text' }, text)));
    }
    cursor = page.next_cursor || '';
    more.hidden = !cursor;
  }
  await load();
}

// ---------- page 4: training jobs and router models ----------

async function routersPage(view, modelID, gen) {
  if (modelID) return routerModelPage(view, modelID, gen);
  const [jobs, models] = await Promise.all([api('/api/v1/routers/train/jobs?limit=50'), api('/api/v1/routers/models?limit=50')]);
  if (gen !== generation) return;
  const modelRows = models.data.map((m) => h('tr', { class: 'router-model' },
    h('td', {}, h('a', { href: '#/routers/' + encodeURIComponent(m.model_id) }, m.model_id)),
    h('td', {}, outcomePill(m.status)),
    h('td', { class: 'num' }, m.num_classes),
    h('td', { class: 'num' }, fmt.pct(m.metrics?.top1_hit_rate)),
    h('td', { class: 'num' }, fmt.pct(m.metrics?.baseline_top1_hit_rate)),
    h('td', { class: 'num' }, fmt.pct(m.metrics?.top3_hit_rate)),
    h('td', { class: 'num' }, fmt.pct(m.metrics?.accuracy)),
    h('td', {}, fmt.time(m.created_at))));
  const jobRows = jobs.data.map((j) => h('tr', { class: 'training-job' },
    h('td', { class: 'mono' }, j.training_job_id), h('td', {}, outcomePill(j.status)),
    h('td', {}, j.model_id ? h('a', { href: '#/routers/' + encodeURIComponent(j.model_id) }, j.model_id) : '—'),
    h('td', { class: 'num' }, j.training_config ? fmt.int(j.training_config.rows) : '—'),
    h('td', { class: 'num' }, j.training_config ? j.training_config.timing.total_time_seconds.toFixed(1) + ' s' : '—'),
    h('td', {}, fmt.time(j.created_at)), h('td', { class: 'muted' }, j.error_message || '')));
  view.append(h('h1', {}, 'Routers'),
    h('div', { class: 'card' }, h('h2', {}, 'Router models'),
      models.data.length ? table(['Model', 'Status', { text: 'Classes', class: 'num' }, { text: 'Top-1', class: 'num' },
        { text: 'Baseline top-1', class: 'num' }, { text: 'Top-3', class: 'num' }, { text: 'Accuracy', class: 'num' }, 'Created'], modelRows)
        : h('p', { class: 'empty' }, 'No router models yet: train one with switchyard train or POST /api/v1/routers/train.')),
    h('div', { class: 'card' }, h('h2', {}, 'Training jobs'),
      jobs.data.length ? table(['Job', 'Status', 'Model', { text: 'Rows', class: 'num' }, { text: 'Time', class: 'num' }, 'Created', 'Error'], jobRows)
        : h('p', { class: 'empty' }, 'No training jobs.')));
  if (jobs.data.some((j) => j.status === 'queued' || j.status === 'running')) {
    every(3000, gen, async () => { if (gen === generation) route(); });
  }
}

async function routerModelPage(view, id, gen) {
  const m = await api('/api/v1/routers/models' + q({ model_id: id }));
  if (gen !== generation) return;
  view.append(h('p', {}, h('a', { href: '#/routers' }, '← Routers')), h('h1', {}, 'Router model ', h('span', { class: 'mono' }, m.model_id)));
  const mt = m.metrics;
  view.append(h('div', { class: 'card stats' },
    stat(fmt.pct(mt?.top1_hit_rate), 'top-1 hit rate'), stat(fmt.pct(mt?.baseline_top1_hit_rate), `baseline top-1 (${mt?.baseline_model || '—'})`),
    stat(fmt.pct(mt?.top3_hit_rate), 'top-3 hit rate'), stat(fmt.pct(mt?.accuracy), 'accuracy'),
    stat(fmt.score(mt?.mean_score), 'mean score'), stat(fmt.score(mt?.calibration_error), 'calibration error'),
    stat(fmt.int(mt?.holdout_rows), 'held-out rows'),
    ...(mt?.tasks ? [stat(fmt.int(mt.tasks), 'task labels'), stat(fmt.score(mt.task_prior_weight || 0), 'task prior weight')] : []),
    ...(mt?.task_experts ? [stat(fmt.int(mt.task_experts), 'task experts'), stat(fmt.score(mt.task_expert_weight || 0), 'task expert weight')] : [])));
  const t = m.tradeoff;
  const card = h('div', { class: 'card', id: 'frontier' }, h('h2', {}, 'Cost / quality frontier'));
  view.append(card);
  const pts = (t?.frontier || []).filter((p) => p.mean_price !== null && p.mean_price !== undefined);
  if (!pts.length) {
    card.append(h('p', { class: 'empty' }, t ? 'No model of this router has a known price, so there is no frontier.' : 'This model has no tradeoff measurements.'));
  } else {
    const def = t.default_tolerance;
    // Tolerances that pick the same models land on one point: one marker, one label.
    const merged = [];
    for (const p of pts) {
      const same = merged.find((m) => m.x === p.mean_price && m.y === p.mean_score);
      if (same) { same.tols.push(p.tolerance); continue; }
      merged.push({ x: p.mean_price, y: p.mean_score, tols: [p.tolerance], changed: p.changed });
    }
    for (const m of merged) {
      m.label = 'tol ' + m.tols.join(', ');
      m.hollow = !m.tols.includes(def);
      m.r = m.hollow ? 3.5 : 6;
      m.title = `tolerance ${m.tols.join(', ')}: score ${fmt.score(m.y)}, price ${m.x.toPrecision(3)}, ${fmt.pct(m.changed)} picks changed`;
    }
    card.append(
      h('p', { class: 'muted' }, `Held-out mean score against mean price (${t.price_unit}) of the picks at each tradeoff tolerance; `,
        `the default tolerance (${def}) keeps the score within ${t.max_quality_loss} of no tradeoff.`),
      chart({
        title: 'Cost/quality frontier',
        xLabel: 'mean price (' + t.price_unit + ')', yLabel: 'mean score',
        // Joined in tolerance order: the path from no tradeoff to the cheapest picks.
        series: [{ name: 'frontier', markers: true, sort: false, points: merged }],
        width: 1180, height: 320,
      }),
      table(['Tolerance', { text: 'Mean score', class: 'num' }, { text: 'Points given up', class: 'num' }, { text: 'Mean price', class: 'num' }, { text: 'Picks changed', class: 'num' }, { text: 'Rows', class: 'num' }],
        t.frontier.map((p) => h('tr', { class: p.tolerance === def ? 'default' : null },
          h('td', {}, String(p.tolerance), p.tolerance === def ? h('span', { class: 'muted' }, ' (default)') : null),
          h('td', { class: 'num' }, fmt.score(p.mean_score)),
          // The loss against no tradeoff, ± its standard error: on a few hundred rows the
          // one-point rule of the default tolerance is itself uncertain by about a point.
          h('td', { class: 'num' }, p.tolerance === 0 ? '—'
            : (100 * (t.frontier[0].mean_score - p.mean_score)).toFixed(1) + (p.loss_stderr ? ' ± ' + (100 * p.loss_stderr).toFixed(1) : '')),
          h('td', { class: 'num' }, p.mean_price === null ? '—' : p.mean_price.toPrecision(3)),
          h('td', { class: 'num' }, fmt.pct(p.changed)), h('td', { class: 'num' }, p.rows)))));
  }
  view.append(h('div', { class: 'card' }, h('h2', {}, 'Details'), table(['Field', 'Value'], [
    ['Status', m.status], ['Embedding model', m.embedding_model], ['Classes', (m.classes || []).join(', ')],
    ['Training job', m.training_job_id], ['Created', fmt.time(m.created_at)], ['Last used', fmt.time(m.last_used_at)],
    ['Ranking', mt?.ranking || '—'], ['Version', m.version],
  ].map(([k, v]) => h('tr', {}, h('td', {}, k), h('td', {}, v))))));
}

// ---------- page 5: optimization jobs ----------

// Per job, the (iteration, best score) seen while polling a running job's status, so the
// live chart keeps its history across refreshes of this tab.
const liveScores = new Map();

async function optimizePage(view, jobID, gen) {
  if (jobID) return optimizeJobPage(view, jobID, gen);
  const jobs = await api('/api/v1/optimize/jobs?limit=50');
  if (gen !== generation) return;
  view.append(h('h1', {}, 'Optimization jobs'), h('div', { class: 'card' }, jobs.data.length
    ? table(['Job', 'Status', 'Models', { text: 'Iteration', class: 'num' }, { text: 'Baseline', class: 'num' }, { text: 'Best', class: 'num' }, 'Created'],
      jobs.data.map((j) => h('tr', { class: 'optimize-job' },
        h('td', {}, h('a', { href: '#/optimize/' + encodeURIComponent(j.job_id), class: 'mono' }, j.job_id)),
        h('td', {}, outcomePill(j.status)), h('td', {}, (j.target_models || []).join(', ')),
        h('td', { class: 'num' }, `${j.current_iteration} / ${j.n_iterations}`),
        h('td', { class: 'num' }, fmt.score(j.baseline_score)), h('td', { class: 'num' }, fmt.score(j.best_score)),
        h('td', {}, fmt.time(j.created_at)))))
    : h('p', { class: 'empty' }, 'No optimization jobs yet: start one with switchyard optimize or POST /api/v1/optimize.')));
  if (jobs.data.some((j) => j.status === 'queued' || j.status === 'running')) {
    every(3000, gen, async () => { if (gen === generation) route(); });
  }
}

async function optimizeJobPage(view, id, gen) {
  const head = h('div', {});
  const body = h('div', {});
  view.append(h('p', {}, h('a', { href: '#/optimize' }, '← Optimization jobs')), h('h1', {}, 'Optimization job ', h('span', { class: 'mono' }, id)), head, body);
  let finished = false;
  async function poll() {
    const st = await api('/api/v1/optimize/status' + q({ job_id: id }));
    if (gen !== generation) return;
    head.replaceChildren(statusCard(st));
    if (st.status === 'queued' || st.status === 'running') {
      const seen = liveScores.get(id) || [];
      const note = (iteration, best) => {
        if (best === undefined || seen.some((p) => p.model === st.current_model && p.iteration === iteration)) return;
        seen.push({ model: st.current_model, iteration, best });
      };
      note(0, st.baseline_score);
      note(st.current_iteration, st.best_score);
      liveScores.set(id, seen);
      body.replaceChildren(liveChart(seen, st.n_iterations));
      return;
    }
    finished = true;
    clearInterval(timer);
    let res;
    try {
      res = await api('/api/v1/optimize/results' + q({ job_id: id }));
    } catch (e) {
      if (e instanceof APIError && e.status === 409) return; // not finished after all: the next poll
      throw e;
    }
    if (gen !== generation) return;
    body.replaceChildren(...res.results.map(modelResult));
    if (!res.results.length) body.append(h('p', { class: 'empty' }, res.error_message || 'No results.'));
  }
  await poll();
  if (!finished) every(2000, gen, poll);
}

function statusCard(st) {
  return h('div', { class: 'card stats', id: 'job-status' },
    h('div', { class: 'stat' }, h('b', {}, outcomePill(st.status)), h('span', {}, 'status')),
    stat(`${st.current_iteration} / ${st.n_iterations}`, 'iteration'),
    stat(`${st.models_done} / ${(st.target_models || []).length}`, 'models done'),
    stat(fmt.score(st.baseline_score), 'baseline score'), stat(fmt.score(st.best_score), 'best score'),
    st.current_model ? stat(st.current_model, 'current model') : null,
    st.error_message ? h('p', { class: 'error' }, st.error_message) : null);
}

function liveChart(seen, n) {
  if (!seen.length) return h('p', { class: 'empty' }, 'Waiting for the baseline score…');
  const models = [...new Set(seen.map((p) => p.model))];
  return h('div', { class: 'card', id: 'live-chart' }, h('h2', {}, 'Best train score per iteration (live)'),
    chart({ title: 'Best score per iteration', xLabel: 'iteration', yLabel: 'best train score', xInteger: true, width: 1180,
      xDomain: [0, Math.max(n, 1)], yDomain: scoreDomain(seen.map((p) => p.best)),
      series: models.map((m) => ({ name: m, step: true, markers: true,
        points: seen.filter((p) => p.model === m).map((p) => ({ x: p.iteration, y: p.best })) })), height: 240 }),
    legend(models));
}

/** scoreDomain is [0, 1] for scores within it, else their range. */
function scoreDomain(ys) {
  const lo = Math.min(0, ...ys), hi = Math.max(1, ...ys);
  return [lo, hi];
}

function modelResult(r) {
  const hist = r.history || [];
  const scored = hist.filter((it) => it.train_score !== undefined && it.train_score !== null);
  // Best so far: the score of the latest kept iteration (the baseline at first).
  let best = null;
  const bestLine = [];
  for (const it of hist) {
    if (it.iteration === 0 && it.train_score !== undefined) best = it.train_score;
    else if (it.kept && it.train_score !== undefined) best = it.train_score;
    if (best !== null) bestLine.push({ x: it.iteration, y: best });
  }
  const card = h('div', { class: 'card model-result', 'data-model': r.model },
    h('h2', {}, r.model, ' ', h('span', { class: 'pill ' + (r.complete ? 'ok' : 'warn') }, r.complete ? 'complete' : 'incomplete')),
    h('div', { class: 'stats' },
      stat(fmt.score(r.baseline_score), 'baseline (train)'), stat(fmt.score(r.train_score), 'best (train)'),
      stat(fmt.score(r.original_test_score), 'original (test)'), stat(fmt.score(r.test_score), 'best (test)'),
      stat(`${r.iterations_kept} / ${r.iterations_run}`, 'kept / run'), stat(fmt.usd(r.cost_usd), 'cost'), stat(fmt.int(r.tokens), 'tokens')),
    r.agent_code_url ? h('p', {}, h('a', { href: r.agent_code_url, class: 'agent-link', download: 'agent.py' }, 'Download the best agent.py')) : null);
  if (scored.length) {
    card.append(chart({ title: 'Train score per iteration', xLabel: 'iteration', yLabel: 'train score',
      xDomain: [0, Math.max(r.iterations_run, 1)], yDomain: scoreDomain(scored.map((it) => it.train_score)),
      series: [
        { name: 'best so far', points: bestLine, step: true, markers: false, color: PALETTE[0] },
        { name: 'variants', line: false, markers: true, color: PALETTE[2],
          points: scored.map((it) => ({ x: it.iteration, y: it.train_score, hollow: !(it.kept || it.iteration === 0),
            title: `iteration ${it.iteration}: ${fmt.score(it.train_score)}${it.kept ? ' (kept)' : ''}${it.note ? ' — ' + it.note : ''}` })) },
      ], xInteger: true, width: 1180, height: 260 }),
    h('p', { class: 'muted' }, 'Line: best score so far. Filled dots: kept variants (and the baseline); hollow: rejected.'));
  }
  // The prompt diff of each kept variant against the prompt it replaced.
  const kept = hist.filter((it) => it.kept && it.iteration > 0);
  card.append(h('h3', {}, `Kept variants (${kept.length})`));
  let prev = hist.find((it) => it.iteration === 0)?.prompt ?? r.original_prompt;
  if (!kept.length) card.append(h('p', { class: 'empty' }, 'No variant beat the original prompt.'));
  for (const it of kept) {
    const ops = diffText(prev, it.prompt);
    const { added, removed } = diffStats(ops);
    card.append(h('details', { class: 'variant', open: kept.length <= 3 },
      h('summary', {}, `Iteration ${it.iteration}: train score ${fmt.score(it.train_score)} (+${added} / −${removed} words)`),
      renderDiff(ops)));
    prev = it.prompt;
  }
  const rejected = hist.filter((it) => !it.kept && it.iteration > 0).length;
  if (rejected) card.append(h('p', { class: 'muted' }, `${rejected} rejected variant(s) not shown.`));
  return card;
}

// ---------- start ----------

document.getElementById('logout').addEventListener('click', () => {
  sessionStorage.removeItem(KEY);
  showLogin('Key forgotten.');
});
window.addEventListener('hashchange', () => { takeKeyFromFragment(); route(); });
takeKeyFromFragment();
route();
