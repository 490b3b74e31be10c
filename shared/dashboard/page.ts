/**
 * The dashboard's one page: plain HTML and a script that reads /api/state every 3 s (with its token, as every /api/
 * call) and draws the tables and the charts with DOM calls (text is never parsed as HTML; a link's href is set only to
 * an https:// console URL). Changing a limit and redriving a job each ask `confirm()` first.
 */
export function dashboardPage(context: { token: string; table: string; queueUrl: string; jobsEveryMs: number }): string {
  const data = JSON.stringify(context).replace(/</g, '\\u003c');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Sluice: ${escapeHtml(context.table)}</title>
<style>
  body { font: 14px system-ui, sans-serif; margin: 1.5em; color: #222; }
  h1 { font-size: 1.3em; margin: 0 0 .2em; } h2 { font-size: 1.05em; margin: 1.4em 0 .4em; }
  table { border-collapse: collapse; } td, th { padding: .2em .7em; border-bottom: 1px solid #ddd; text-align: left; }
  td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; } td.n { white-space: nowrap; }
  .muted { color: #777; } .error { color: #b00; } input { width: 5em; }
  #status { font-size: .9em; } svg { border: 1px solid #ddd; background: #fafafa; vertical-align: middle; }
  svg.bins { border: 0; background: none; } td.ids { max-width: 30em; font-size: .9em; } select { margin-left: .5em; }
</style>
</head>
<body>
<h1>Sluice <span class="muted" id="table"></span></h1>
<div id="status" class="muted">loading…</div>
<h2>Pools</h2>
<table id="pools"><thead><tr><th>pool</th><th class="n">limit</th><th class="n">in use</th><th class="n">free</th><th class="n">waiting</th><th class="n">rate</th><th>change limit</th></tr></thead><tbody></tbody></table>
<h2>Last <select id="window" aria-label="how far back the history goes"><option value="24h">24 hours</option><option value="6h">6 hours</option><option value="1h">hour</option></select> <span class="muted" id="day-at"></span></h2>
<table id="day"><thead><tr><th>pool</th><th>runs in progress (dashed: the limit now)</th><th class="n">succeeded</th><th class="n">failed</th><th class="n">dead-lettered</th><th class="n">p50</th><th class="n">p90</th><th class="n">max</th><th>run durations</th></tr></thead><tbody></tbody></table>
<h2>Job set runs <span class="muted" id="sets-at"></span></h2>
<table id="set-runs"><thead><tr><th>set</th><th>run</th><th>started</th><th class="n">total</th><th class="n">ended</th><th class="n">succeeded</th><th class="n">failed</th><th class="n">open</th><th>failed jobs</th></tr></thead><tbody></tbody></table>
<h2>Holders</h2>
<table id="holders"><thead><tr><th>pool</th><th>job</th><th>kind</th><th>name</th><th>state</th><th>run id</th><th class="n">held for</th></tr></thead><tbody></tbody></table>
<h2>Waiting, in the order they will start</h2>
<table id="waiting"><thead><tr><th>pool</th><th class="n">#</th><th>job</th><th>kind</th><th>name</th><th class="n">waiting for</th></tr></thead><tbody></tbody></table>
<h2>Latest jobs <label class="muted">state<select id="state-filter" aria-label="show the latest jobs in this state"><option value="">any</option></select></label> <span class="muted" id="jobs-at"></span></h2>
<table id="jobs"><thead><tr><th>job</th><th>pool</th><th>kind</th><th>name</th><th>state</th><th class="n">attempts</th><th>updated</th><th>run id</th><th>last error</th></tr></thead><tbody></tbody></table>
<h2>Dead-letter queue <span class="muted" id="dlq-count"></span></h2>
<table id="dlq"><thead><tr><th>job</th><th>pool</th><th>name</th><th class="n">dead-lettered</th><th>reason</th><th></th></tr></thead><tbody></tbody></table>
<script type="application/json" id="context">${data}</script>
<script>
const ctx = JSON.parse(document.getElementById('context').textContent);
document.getElementById('table').textContent = ctx.table;
let editing = false;
function age(ms) {
  const s = Math.max(0, Math.floor(ms / 1000)), p = (n) => String(n).padStart(2, '0');
  if (s < 60) return s + 's';
  if (s < 3600) return Math.floor(s / 60) + 'm ' + p(s % 60) + 's';
  if (s < 86400) return Math.floor(s / 3600) + 'h ' + p(Math.floor((s % 3600) / 60)) + 'm';
  return Math.floor(s / 86400) + 'd ' + p(Math.floor((s % 86400) / 3600)) + 'h';
}
function cell(text, cls) { const td = document.createElement('td'); td.textContent = text == null ? '' : String(text); if (cls) td.className = cls; return td; }
function fill(id, rows, empty, columns) {
  const body = document.querySelector('#' + id + ' tbody');
  body.replaceChildren();
  if (rows.length === 0) { const tr = document.createElement('tr'); const td = cell(empty, 'muted'); td.colSpan = columns; tr.append(td); body.append(tr); }
  for (const row of rows) body.append(row);
}
async function post(path, body) {
  const res = await fetch(path, { method: 'POST', headers: { 'content-type': 'application/json', 'x-sluice-token': ctx.token }, body: JSON.stringify(body) });
  const answer = await res.json();
  if (!res.ok) throw new Error(answer.error || res.statusText);
  return answer;
}
// What a change did (or why it failed) stays 10 s before the refresh line takes its place again.
let noticeUntil = 0;
function say(text, error) { const s = document.getElementById('status'); s.textContent = text; s.className = error ? 'error' : 'muted'; noticeUntil = Date.now() + 10000; }
async function setLimit(pool, input) {
  const limit = Number(input.value);
  if (!Number.isInteger(limit) || limit < 0) return say('the limit must be a whole number, 0 or more', true);
  if (!confirm('Set the limit of pool ' + pool + ' to ' + limit + '?' + (limit === 0 ? ' 0 pauses it: running jobs go on, nothing new starts.' : ''))) return;
  try { const r = await post('/api/pools/' + encodeURIComponent(pool) + '/limit', { limit }); say('pool ' + pool + ': limit ' + r.limit + ', ' + r.admitted + ' waiting let in'); }
  catch (e) { say('could not set the limit: ' + e.message, true); }
  editing = false; refresh();
}
async function redrive(id) {
  if (!confirm('Send job ' + id + ' to the job queue again, with its original body? Do it once its cause is fixed.')) return;
  try { const r = await post('/api/dlq/redrive', { id }); const x = r.results[0]; say(x.outcome === 'resent' ? 'job ' + id + ' sent again' : 'job ' + id + ' kept in the DLQ: ' + x.reason, x.outcome !== 'resent'); }
  catch (e) { say('could not redrive: ' + e.message, true); }
  refresh();
}
const DAY_W = 420, DAY_H = 64, NS = 'http://www.w3.org/2000/svg';
const WINDOWS = { '24h': ['24 h', '12 h'], '6h': ['6 h', '3 h'], '1h': ['60 min', '30 min'] };
let historyWindow = '24h';
const BIN_LABELS = ['under 1 min', '1-5 min', '5-15 min', '15-60 min', '1-3 h', '3-12 h', '12 h or more'];
function svgOf(tag, attributes, text) {
  const el = document.createElementNS(NS, tag);
  for (const [name, value] of Object.entries(attributes)) el.setAttribute(name, String(value));
  if (text !== undefined) el.textContent = text;
  return el;
}
// Runs in progress over the window (the most at once in each of its buckets), as a step line, and the pool's limit.
function dayChart(pool, limit) {
  const [whole, half] = WINDOWS[historyWindow];
  const n = pool.inProgress.length, top = Math.max(1, limit ?? 0, ...pool.inProgress), pad = 4;
  const limitText = limit === undefined ? 'unlimited' : 'limit ' + limit;
  const x = (i) => (pad + (i / n) * (DAY_W - 2 * pad)).toFixed(1), y = (v) => (DAY_H - pad - (v / top) * (DAY_H - 2 * pad)).toFixed(1);
  const svg = svgOf('svg', { width: DAY_W, height: DAY_H, class: 'day', role: 'img', 'data-pool': pool.pool,
    'aria-label': 'runs in progress in pool ' + pool.pool + ' over the last ' + whole + ', at most ' + Math.max(0, ...pool.inProgress) + ' at once; ' + limitText });
  svg.append(svgOf('title', {}, pool.pool + ': at most ' + Math.max(0, ...pool.inProgress) + ' at once in the last ' + whole + ' (' + (limit === undefined ? 'unlimited' : 'limit now ' + limit) + ')'));
  const points = pool.inProgress.flatMap((v, i) => [x(i) + ',' + y(v), x(i + 1) + ',' + y(v)]);
  svg.append(svgOf('polyline', { class: 'in-progress', fill: 'none', stroke: '#1f77b4', 'stroke-width': 1.5, points: points.join(' ') }));
  if (limit !== undefined) svg.append(svgOf('line', { class: 'limit', 'data-limit': limit, x1: pad, x2: DAY_W - pad, y1: y(limit), y2: y(limit), stroke: '#d62728', 'stroke-dasharray': '4 3' }));
  if (limit !== undefined) svg.append(svgOf('text', { x: pad + 2, y: Math.max(10, Math.min(DAY_H - 18, Number(y(limit)) - 2)), 'font-size': 10, fill: '#d62728' }, limitText));
  svg.append(svgOf('text', { x: pad, y: DAY_H - 6, 'font-size': 9, fill: '#777' }, '-' + whole));
  svg.append(svgOf('text', { x: DAY_W / 2, y: DAY_H - 6, 'font-size': 9, fill: '#777', 'text-anchor': 'middle' }, '-' + half));
  svg.append(svgOf('text', { x: DAY_W - pad - 2, y: DAY_H - 6, 'font-size': 9, fill: '#777', 'text-anchor': 'end' }, 'now'));
  return svg;
}
function binsChart(d) {
  const W = 112, H = 28, w = W / BIN_LABELS.length, top = Math.max(1, ...(d ? d.bins : []));
  const svg = svgOf('svg', { width: W, height: H + 10, class: 'bins', role: 'img', 'aria-label': 'run durations' });
  if (d) svg.append(svgOf('text', { x: 0, y: H + 9, 'font-size': 8, fill: '#777' }, '<1 min'), svgOf('text', { x: W, y: H + 9, 'font-size': 8, fill: '#777', 'text-anchor': 'end' }, '12 h+'));
  (d ? d.bins : []).forEach((count, i) => {
    const h = Math.round((count / top) * (H - 2));
    const bar = svgOf('rect', { x: i * w + 1, y: H - h, width: w - 2, height: h, fill: '#7f9fbf', 'data-bin': i, 'data-count': count });
    bar.append(svgOf('title', {}, BIN_LABELS[i] + ': ' + count + (count === 1 ? ' run' : ' runs')));
    svg.append(svgOf('rect', { x: i * w + 1, y: 0, width: w - 2, height: H, fill: 'transparent' }), bar);
  });
  return svg;
}
// Short: seconds under 10 minutes, minutes under an hour, then hours and minutes.
function duration(ms) {
  if (ms === undefined) return '-';
  const s = Math.round(ms / 1000);
  if (s < 600) return age(ms);
  return s < 3600 ? Math.floor(s / 60) + 'm' : age(ms);
}
// A link to the run in the AWS console, opened in a new tab with no way back to this page; only an https:// URL.
function runCell(id, url) {
  const linked = Boolean(url && id && url.startsWith('https://'));
  const td = cell(linked ? '' : id);
  if (linked) { const a = document.createElement('a'); a.href = url; a.textContent = id; a.target = '_blank'; a.rel = 'noopener noreferrer'; a.className = 'console'; td.append(a); }
  td.className = 'run';
  return td;
}
let stateFilter = '';
document.getElementById('state-filter').onchange = (e) => { stateFilter = e.target.value; if (lastState) renderJobs(lastState); };
document.getElementById('window').onchange = (e) => { historyWindow = e.target.value; if (lastState) renderHistory(lastState); };
let lastState;
function renderJobs(state) {
  const now = state.at;
  const select = document.getElementById('state-filter');
  const states = [...new Set(state.recentJobs.map((j) => j.state))].sort();
  if (stateFilter && !states.includes(stateFilter)) states.push(stateFilter);
  if ([...select.options].slice(1).map((o) => o.value).join() !== states.join()) {
    select.replaceChildren(new Option('any', ''), ...states.map((st) => new Option(st, st)));
    select.value = stateFilter;
  }
  const shown = state.recentJobs.filter((j) => !stateFilter || j.state === stateFilter).slice(0, 30);
  fill('jobs', shown.map((j) => {
    const tr = document.createElement('tr'); tr.dataset.job = j.jobId; tr.dataset.state = j.state;
    tr.append(cell(j.jobId), cell(j.pool), cell(j.kind), cell(j.target, 'name'), cell(j.state, 'state'), cell(j.attempts, 'n'), cell(age(now - j.updatedAt) + ' ago'), runCell(j.executionId, j.consoleUrl), cell(j.lastError, 'error'));
    return tr;
  }), stateFilter ? 'no ' + stateFilter + ' job among the latest' : 'no jobs yet', 9);
}
function renderHistory(state) {
  // An unlimited pool's chart has no limit line.
  const limits = Object.fromEntries(state.pools.map((p) => [p.name, p.unlimited ? undefined : p.limit]));
  fill('day', state.history[historyWindow].pools.map((h) => {
    const tr = document.createElement('tr'); tr.dataset.pool = h.pool; const d = h.durations;
    const chartCell = document.createElement('td'); chartCell.append(dayChart(h, limits[h.pool]));
    const binsCell = document.createElement('td'); binsCell.append(binsChart(d));
    tr.append(cell(h.pool), chartCell, cell(h.succeeded, 'n succeeded'), cell(h.failed, 'n failed'), cell(h.dead, 'n dead'), cell(duration(d && d.p50), 'n p50'), cell(duration(d && d.p90), 'n p90'), cell(duration(d && d.max), 'n max'), binsCell);
    return tr;
  }), 'no pools yet', 9);
}
function render(state) {
  const now = state.at;
  fill('pools', state.pools.map((p) => {
    const tr = document.createElement('tr'); tr.dataset.pool = p.name;
    tr.append(cell(p.name), cell(p.unlimited ? 'unlimited' : p.limit, 'n limit'), cell(p.inUse, 'n in-use'), cell(p.unlimited ? '-' : Math.max(0, p.limit - p.inUse), 'n free'), cell(p.waiting, 'n waiting'), cell(p.startsPerSecond === undefined ? '-' : p.startsPerSecond + '/s', 'n rate'));
    const td = document.createElement('td'); const input = document.createElement('input'); input.type = 'number'; input.min = '0'; input.value = p.limit;
    input.setAttribute('aria-label', 'new limit for ' + p.name); input.onfocus = () => (editing = true); input.onblur = () => (editing = false);
    const button = document.createElement('button'); button.textContent = 'set'; button.className = 'set-limit'; button.onclick = () => setLimit(p.name, input);
    // Focus moving from the input to its button (a click) keeps the row: a refresh in between would swallow the click.
    button.onfocus = () => (editing = true); button.onblur = () => (editing = false);
    td.append(input, ' ', button); tr.append(td); return tr;
  }), 'no pools yet', 6);
  fill('holders', state.pools.flatMap((p) => p.held.map((h) => {
    const tr = document.createElement('tr'); tr.dataset.job = h.jobId;
    tr.append(cell(p.name), cell(h.jobId), cell(h.kind), cell(h.target, 'name'), cell(h.state), runCell(h.executionId, h.consoleUrl), cell(age(now - h.since), 'n')); return tr;
  })), 'no slot is held', 7);
  fill('waiting', state.pools.flatMap((p) => p.next.map((w, i) => {
    const tr = document.createElement('tr'); tr.append(cell(p.name), cell(i + 1, 'n'), cell(w.jobId), cell(w.kind), cell(w.target, 'name'), cell(age(now - w.since), 'n')); return tr;
  })), 'nobody waits', 6);
  lastState = state;
  renderJobs(state);
  const readAt = '(as of ' + new Date(state.jobsAt).toLocaleTimeString() + ', read every ' + Math.round(ctx.jobsEveryMs / 1000) + ' s' + (state.jobsTruncated ? '; the table is larger than one read takes: of the part read' : '') + ')';
  document.getElementById('jobs-at').textContent = readAt;
  document.getElementById('day-at').textContent = '(from the job records, ' + readAt.slice(1);
  renderHistory(state);
  document.getElementById('sets-at').textContent = '(as of ' + new Date(state.setRunsAt).toLocaleTimeString() + '; each failed job: sluice sets failed SET RUN)';
  fill('set-runs', state.setRuns.map((r) => {
    const tr = document.createElement('tr'); tr.dataset.set = r.set; tr.dataset.run = r.run;
    const more = r.failed - r.failedIds.length;
    tr.append(cell(r.set), cell(r.run), cell(age(now - r.startedAt) + ' ago' + (r.completedAt === undefined ? ', open' : ', took ' + age(r.completedAt - r.startedAt))), cell(r.total, 'n total'), cell(r.ended, 'n ended'), cell(r.succeeded, 'n succeeded'), cell(r.failed, 'n failed'), cell(r.open, 'n open'), cell(r.failedIds.join(', ') + (more > 0 ? ' and ' + more + ' more' : ''), 'ids'));
    return tr;
  }), 'no job set runs', 9);
  // The DLQ's messages are never received for this view (that would hide them from a redrive): its depth comes from
  // the queue's attributes, and the rows are the jobs the table records as dead-lettered, with their reasons.
  const q = state.deadLetterQueue;
  document.getElementById('dlq-count').textContent = '(' + q.visible + (q.visible === 1 ? ' message' : ' messages') +
    (q.inFlight ? ', ' + q.inFlight + ' being read by another tool' : '') + ' in the queue; below, the jobs dead-lettered; each message: sluice dlq list)';
  fill('dlq', state.deadLettered.map((j) => {
    const tr = document.createElement('tr'); tr.dataset.job = j.jobId;
    tr.append(cell(j.jobId), cell(j.pool), cell(j.target, 'name'), cell(age(now - j.deadLetteredAt) + ' ago', 'n'), cell(j.lastError, 'reason'));
    const td = document.createElement('td'); const b = document.createElement('button'); b.textContent = 'redrive'; b.className = 'redrive'; b.onclick = () => redrive(j.jobId); td.append(b);
    tr.append(td); return tr;
  }), 'empty', 6);
  document.body.dataset.updated = String(state.at);
}
async function refresh() {
  if (editing) return;
  // Looked at again once the state is in: an edit begun while it was read keeps its row (a render would replace the
  // input being typed in, and its button, with the table's value).
  try { const res = await fetch('/api/state', { headers: { 'x-sluice-token': ctx.token } }); const state = await res.json(); if (!res.ok) throw new Error(state.error); if (editing) return; render(state);
    if (Date.now() > noticeUntil) { const s = document.getElementById('status'); s.textContent = 'updated ' + new Date(state.at).toLocaleTimeString() + ' · refreshes every 3 s'; s.className = 'muted'; } }
  catch (e) { const s = document.getElementById('status'); s.textContent = 'could not read Sluice: ' + e.message; s.className = 'error'; }
  finally { document.body.dataset.reads = String(++reads); } // each read of the state done with, shown or not
}
let reads = 0;
refresh(); setInterval(refresh, 3000);
</script>
</body>
</html>
`;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
