/**
 * The dashboard's one page: plain HTML and a script that reads /api/state every 3 s and draws the tables and the
 * chart with DOM calls (text is never parsed as HTML). Changing a limit and redriving a job each ask `confirm()` first.
 */
export function dashboardPage(context: { token: string; table: string; queueUrl: string }): string {
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
  td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; }
  .muted { color: #777; } .error { color: #b00; } input { width: 5em; }
  #status { font-size: .9em; } svg { border: 1px solid #ddd; background: #fafafa; }
</style>
</head>
<body>
<h1>Sluice <span class="muted" id="table"></span></h1>
<div id="status" class="muted">loading…</div>
<h2>Pools</h2>
<table id="pools"><thead><tr><th>pool</th><th class="n">limit</th><th class="n">in use</th><th class="n">free</th><th class="n">waiting</th><th class="n">rate</th><th>change limit</th></tr></thead><tbody></tbody></table>
<h2>Runs in progress, last hour <span class="muted">(sampled while this dashboard runs)</span></h2>
<svg id="chart" width="720" height="180" role="img" aria-label="runs in progress per pool"></svg>
<div id="legend"></div>
<h2>Holders</h2>
<table id="holders"><thead><tr><th>pool</th><th>job</th><th>kind</th><th>name</th><th>state</th><th>run id</th><th class="n">held for</th></tr></thead><tbody></tbody></table>
<h2>Waiting, in the order they will start</h2>
<table id="waiting"><thead><tr><th>pool</th><th class="n">#</th><th>job</th><th>kind</th><th>name</th><th class="n">waiting for</th></tr></thead><tbody></tbody></table>
<h2>Recent jobs</h2>
<table id="jobs"><thead><tr><th>job</th><th>pool</th><th>kind</th><th>name</th><th>state</th><th class="n">attempts</th><th>updated</th><th>run id</th><th>last error</th></tr></thead><tbody></tbody></table>
<h2>Dead-letter queue</h2>
<table id="dlq"><thead><tr><th>job</th><th>pool</th><th>name</th><th class="n">age</th><th>reason</th><th></th></tr></thead><tbody></tbody></table>
<script type="application/json" id="context">${data}</script>
<script>
const ctx = JSON.parse(document.getElementById('context').textContent);
document.getElementById('table').textContent = ctx.table;
const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b'];
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
function chart(history, pools) {
  const svg = document.getElementById('chart'), W = 720, H = 180, pad = 24, NS = 'http://www.w3.org/2000/svg';
  svg.replaceChildren();
  const legend = document.getElementById('legend'); legend.replaceChildren();
  if (history.length === 0) return;
  // From the first sample of the last hour to now: a dashboard started a minute ago shows that minute, not a flat hour.
  const t1 = history[history.length - 1].at, t0 = Math.min(t1 - 60000, Math.max(history[0].at, t1 - 3600000));
  const names = pools.map((p) => p.name);
  const top = Math.max(1, ...pools.map((p) => (p.unlimited ? 0 : p.limit)), ...history.flatMap((s) => Object.values(s.inUse)));
  const x = (t) => pad + ((t - t0) / (t1 - t0)) * (W - 2 * pad), y = (v) => H - pad - (v / top) * (H - 2 * pad);
  const label = (text, lx, ly) => { const t = document.createElementNS(NS, 'text'); t.setAttribute('x', lx); t.setAttribute('y', ly); t.setAttribute('font-size', '11'); t.textContent = text; svg.append(t); };
  label(String(top), 2, 14); label('0', 2, H - pad); label(new Date(t0).toLocaleTimeString(), pad, H - 6); label('now', W - pad - 20, H - 6);
  names.forEach((name, i) => {
    const line = document.createElementNS(NS, 'polyline');
    line.setAttribute('fill', 'none'); line.setAttribute('stroke', COLORS[i % COLORS.length]); line.setAttribute('stroke-width', '2');
    line.setAttribute('data-pool', name);
    // A step line: the count holds until the next sample.
    const points = []; let last = null;
    for (const s of history.filter((s) => s.at >= t0)) { const v = s.inUse[name] || 0; if (last !== null) points.push(x(s.at).toFixed(1) + ',' + y(last).toFixed(1)); points.push(x(s.at).toFixed(1) + ',' + y(v).toFixed(1)); last = v; }
    if (last !== null) points.push(x(t1).toFixed(1) + ',' + y(last).toFixed(1));
    line.setAttribute('points', points.join(' '));
    svg.append(line);
    const key = document.createElement('span'); key.style.color = COLORS[i % COLORS.length]; key.textContent = '■ ' + name + '  '; legend.append(key);
  });
}
function render(state) {
  const now = state.at;
  fill('pools', state.pools.map((p) => {
    const tr = document.createElement('tr'); tr.dataset.pool = p.name;
    tr.append(cell(p.name), cell(p.limit, 'n limit'), cell(p.inUse, 'n in-use'), cell(Math.max(0, p.limit - p.inUse), 'n free'), cell(p.waiting, 'n waiting'), cell(p.startsPerSecond === undefined ? '-' : p.startsPerSecond + '/s', 'n rate'));
    const td = document.createElement('td'); const input = document.createElement('input'); input.type = 'number'; input.min = '0'; input.value = p.limit;
    input.setAttribute('aria-label', 'new limit for ' + p.name); input.onfocus = () => (editing = true); input.onblur = () => (editing = false);
    const button = document.createElement('button'); button.textContent = 'set'; button.className = 'set-limit'; button.onclick = () => setLimit(p.name, input);
    td.append(input, ' ', button); tr.append(td); return tr;
  }), 'no pools yet', 6);
  fill('holders', state.pools.flatMap((p) => p.held.map((h) => {
    const tr = document.createElement('tr'); tr.dataset.job = h.jobId;
    tr.append(cell(p.name), cell(h.jobId), cell(h.kind), cell(h.target, 'name'), cell(h.state), cell(h.executionId), cell(age(now - h.since), 'n')); return tr;
  })), 'no slot is held', 7);
  fill('waiting', state.pools.flatMap((p) => p.next.map((w, i) => {
    const tr = document.createElement('tr'); tr.append(cell(p.name), cell(i + 1, 'n'), cell(w.jobId), cell(w.kind), cell(w.target, 'name'), cell(age(now - w.since), 'n')); return tr;
  })), 'nobody waits', 6);
  fill('jobs', state.recentJobs.map((j) => {
    const tr = document.createElement('tr'); tr.dataset.job = j.jobId;
    tr.append(cell(j.jobId), cell(j.pool), cell(j.kind), cell(j.target, 'name'), cell(j.state, 'state'), cell(j.attempts, 'n'), cell(age(now - j.updatedAt) + ' ago'), cell(j.executionId), cell(j.lastError, 'error'));
    return tr;
  }), 'no jobs yet', 9);
  fill('dlq', (state.deadLetters || []).map((l) => {
    const tr = document.createElement('tr'); if (l.jobId) tr.dataset.job = l.jobId;
    tr.append(cell(l.jobId || '(not a job)'), cell(l.pool), cell(l.target, 'name'), cell(age(now - l.sentAt), 'n'), cell(l.reason || 'failed in the acquirer maxReceiveCount times'));
    const td = document.createElement('td');
    if (l.jobId) { const b = document.createElement('button'); b.textContent = 'redrive'; b.className = 'redrive'; b.onclick = () => redrive(l.jobId); td.append(b); }
    tr.append(td); return tr;
  }), 'empty', 6);
  chart(state.history, state.pools);
  document.body.dataset.updated = String(state.at);
}
async function refresh() {
  if (editing) return;
  try { const res = await fetch('/api/state'); const state = await res.json(); if (!res.ok) throw new Error(state.error); render(state);
    if (Date.now() > noticeUntil) { const s = document.getElementById('status'); s.textContent = 'updated ' + new Date(state.at).toLocaleTimeString() + ' · refreshes every 3 s'; s.className = 'muted'; } }
  catch (e) { const s = document.getElementById('status'); s.textContent = 'could not read Sluice: ' + e.message; s.className = 'error'; }
}
refresh(); setInterval(refresh, 3000);
</script>
</body>
</html>
`;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
