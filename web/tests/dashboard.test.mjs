// Real-browser test of the schedmate dashboard (web/ui, served by `schedmate serve` at /).
//
//   node web/tests/dashboard.test.mjs --url http://127.0.0.1:8787/ --screenshot out.png \
//        [--expect-jobs N] [--expect-failures N] [--expect-nodes N] [--xss-job ID] \
//        [--expect-anomalies N] [--why-job ID --expect-reason CODE] \
//        [--whatif JSON --expect-whatif-gpus BASE,SCENARIO]
//
// Drives Debian's /usr/bin/chromium (override with $CHROMIUM) through playwright-core; never
// downloads a browser. Compares what the page shows with what the JSON API answers (every job,
// failure, action and node appears with its texts), checks that a job name holding markup is shown
// as text, that a running job's loss/step-time chart is drawn, that the page loads nothing from
// another origin and logs no errors, then writes a full-page screenshot. The other pages: the
// anomalies view (every anomaly of /v1/anomalies with its fields, counts per kind, refreshed by
// the poll), a job's page (the why-answer of /v1/jobs/{id}/why: reason, explanation, expected
// start, evidence and suggestions) and the what-if page (a run from the form shows the numbers
// POST /v1/whatif answers for the same body; a bad value marks its field). Screenshots of those
// go beside the main one (-anomalies.png, -job.png, -whatif.png). Exit 0 = pass, 1 = fail.

import { chromium } from 'playwright-core';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

function parseArgs(argv) {
  const out = {};
  for (let i = 0; i < argv.length; ++i) {
    const a = argv[i];
    if (!a.startsWith('--')) throw new Error('unexpected argument ' + a);
    const key = a.slice(2);
    const value = argv[i + 1];
    if (value === undefined || value.startsWith('--')) throw new Error(a + ' needs a value');
    out[key] = value;
    ++i;
  }
  return out;
}

const args = parseArgs(process.argv.slice(2));
if (!args.url || !args.screenshot) {
  console.error('usage: dashboard.test.mjs --url URL --screenshot PNG [--expect-jobs N] ' +
                '[--expect-failures N] [--expect-nodes N] [--xss-job ID]');
  process.exit(2);
}
const base = new URL(args.url);
const failures = [];
let checks = 0;
function check(cond, what) {
  ++checks;
  if (!cond) {
    failures.push(what);
    console.error('FAIL: ' + what);
  }
}

async function api(path) {
  const res = await fetch(new URL(path, base));
  if (!res.ok) throw new Error(path + ': HTTP ' + res.status);
  return res.json();
}

// Every job of GET /v1/jobs, following `next` a small page at a time (so the cursor is used).
async function allJobs() {
  const out = { jobs: [] };
  let after = '';
  for (let i = 0; i < 1000; ++i) {
    const page = await api('/v1/jobs?limit=2' + (after ? '&after=' + encodeURIComponent(after) : ''));
    out.jobs.push(...page.jobs);
    out.updated_at = page.updated_at;
    if (page.next === null) return out;
    after = page.next;
  }
  throw new Error('/v1/jobs: no last page');
}

// The page's requests for the job list, whatever their query.
const jobListUrl = (u) => u.pathname === '/v1/jobs';

const profile = mkdtempSync(join(tmpdir(), 'schedmate-chromium-'));
// A fresh, empty profile directory for every run (playwright passes it as --user-data-dir).
const browser = await chromium.launchPersistentContext(profile, {
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  viewport: { width: 1440, height: 900 },
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
         '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
let exitCode = 1;
try {
  const page = browser.pages()[0] || await browser.newPage();
  const pageErrors = [];
  const foreign = [];
  page.on('pageerror', (e) => pageErrors.push('pageerror: ' + e.message));

  page.on('request', (r) => {
    const u = new URL(r.url());
    if (u.origin !== base.origin && u.protocol !== 'data:') foreign.push(r.url());
  });
  // The what-if page's bad-input check provokes one 400 (its response and the console line
  // Chromium logs for it are expected, once each).
  const provoked = { response: 0, console: 0 };
  page.on('console', (m) => {
    if (m.type() !== 'error') return;
    if (provoked.console > 0 && m.text().includes('status of 400')) {
      --provoked.console;
      return;
    }
    pageErrors.push('console: ' + m.text());
  });
  page.on('response', (r) => {
    if (provoked.response > 0 && r.status() === 400 && r.url().endsWith('/v1/whatif')) {
      --provoked.response;
      return;
    }
    if (r.status() >= 400) pageErrors.push('HTTP ' + r.status() + ' for ' + r.url());
  });
  page.on('dialog', (d) => { pageErrors.push('dialog opened: ' + d.message()); d.dismiss(); });

  const resp = await page.goto(base.href, { waitUntil: 'domcontentloaded' });
  check(resp && resp.status() === 200, 'GET / answers 200');
  await page.waitForSelector('body[data-loaded="true"]', { timeout: 20000 });
  await page.waitForSelector('#charts svg.chart', { timeout: 10000 });

  const [jobs, fails, actions, nodes] = await Promise.all([
    allJobs(), api('/v1/failures'), api('/v1/actions'), api('/v1/nodes')]);

  // Queue: one row per job, with its name, user, state and GPUs as text.
  const rows = await page.$$eval('#jobs tbody tr[data-job-id]', (trs) => trs.map((tr) => ({
    id: tr.dataset.jobId,
    cells: Array.from(tr.cells).map((c) => c.textContent),
  })));
  check(rows.length === jobs.jobs.length,
        `queue shows ${rows.length} rows for ${jobs.jobs.length} jobs`);
  for (const j of jobs.jobs) {
    const r = rows.find((x) => x.id === j.id);
    check(r !== undefined, `job ${j.id} has a row`);
    if (!r) continue;
    check(r.cells[1] === j.name, `job ${j.id} name shown as ${JSON.stringify(r.cells[1])}`);
    check(r.cells[2] === j.user, `job ${j.id} user`);
    check(r.cells[3] === j.state, `job ${j.id} state`);
    check(r.cells[4] === String(j.gpus), `job ${j.id} GPUs`);
    if (j.prediction) check(/\d/.test(r.cells[5]), `job ${j.id} predicted duration shown`);
    if (j.state === 'RUNNING' && j.metrics && j.metrics.stalled) {
      check(r.cells[8].includes('stalled'), `job ${j.id} marked stalled: ${r.cells[8]}`);
    }
    if (j.state === 'RUNNING' && j.metrics && j.metrics.progress !== null) {
      const pct = Math.round(j.metrics.progress * 100) + '%';
      check(r.cells[6].includes(pct), `job ${j.id} progress ${pct} in ${JSON.stringify(r.cells[6])}`);
    }
    if (j.state === 'PENDING') {
      const e = j.start_estimate;
      if (e && e.estimated_start !== null) {
        check(/starts (now|in )/.test(r.cells[7]), `job ${j.id} start estimate: ${r.cells[7]}`);
      }
      const reason = (e && e.pending_reason) || j.reason;
      if (reason && reason !== 'None') check(r.cells[8].includes(reason), `job ${j.id} reason ${reason}`);
    }
  }
  const running = rows.filter((r) => r.cells[3] === 'RUNNING').map((r) => r.id);
  const order = rows.map((r) => r.cells[3]);
  check(order.indexOf('PENDING') === -1 || order.lastIndexOf('RUNNING') < order.indexOf('PENDING'),
        'running jobs listed before pending ones');

  // Failures and actions.
  const frows = await page.$$eval('#failures tbody tr[data-failure-id]', (trs) =>
    trs.map((tr) => ({ id: tr.dataset.failureId, text: tr.textContent })));
  check(frows.length === fails.failures.length,
        `failures panel shows ${frows.length} of ${fails.failures.length}`);
  for (const f of fails.failures) {
    const r = frows.find((x) => x.id === String(f.id));
    check(r !== undefined, `failure ${f.id} has a row`);
    if (!r) continue;
    for (const t of [f.class, f.category, f.reason, f.evidence, f.engine]) {
      if (t) check(r.text.includes(t), `failure ${f.id} shows ${JSON.stringify(t)}`);
    }
  }
  const arows = await page.$$eval('#actions tbody tr[data-action-id]', (trs) =>
    trs.map((tr) => ({ id: tr.dataset.actionId, text: tr.textContent })));
  check(arows.length === actions.actions.length,
        `actions panel shows ${arows.length} of ${actions.actions.length}`);
  for (const a of actions.actions) {
    const r = arows.find((x) => x.id === String(a.id));
    check(r !== undefined && r.text.includes(a.kind) && r.text.includes(a.outcome) &&
          r.text.includes(a.detail || a.reason) && (!a.dry_run || r.text.includes('dry-run')),
          `action ${a.id} (${a.kind}) shows kind, outcome, detail`);
  }

  // Nodes.
  const nrows = await page.$$eval('#nodes tbody tr[data-node]', (trs) =>
    trs.map((tr) => ({ name: tr.dataset.node, text: tr.textContent })));
  check(nrows.length === nodes.nodes.length, `nodes panel shows ${nrows.length} of ${nodes.nodes.length}`);
  for (const n of nodes.nodes) {
    const r = nrows.find((x) => x.name === n.name);
    check(r !== undefined && r.text.includes(n.state), `node ${n.name} state`);
    if (r && n.drained) {
      check(r.text.includes('drained') && r.text.includes(n.reason), `node ${n.name} drained + reason`);
    }
  }

  // Markup in data stays text: nothing was created from the job name, nothing ran.
  check(await page.$$eval('img', (x) => x.length) === 0, 'no <img> element on the page');
  check(await page.evaluate(() => window.__xss === undefined), 'injected handler never ran');
  if (args['xss-job']) {
    const name = await page.$eval(`#jobs tr[data-job-id="${args['xss-job']}"] td.name`,
                                  (td) => ({ text: td.textContent, children: td.children.length }));
    check(name.text.includes('<img') && name.children === 0,
          `job ${args['xss-job']} name is plain text: ${JSON.stringify(name)}`);
  }

  // Chart of the selected running job; then pick another running job.
  if (running.length > 0) {
    const sel = await page.$eval('#jobs tr.selected', (tr) => tr.dataset.jobId).catch(() => null);
    check(sel === running[0], `first running job selected by default (got ${sel})`);
    const samples = (await api(`/v1/jobs/${running[0]}/metrics?limit=500`)).samples;
    // The page plots against the step when any sample has one (and leaves out those without).
    const byStep = samples.some((s) => s.step !== null);
    const plotted = samples.filter((s) => !byStep || s.step !== null);
    const withLoss = plotted.filter((s) => s.loss !== null).length;
    const withStep = plotted.filter((s) => s.step_time_s !== null).length;
    check(withLoss >= 2, `job ${running[0]} has a loss series to draw (${withLoss} points)`);
    const drawn = await page.$$eval('#charts .chart-box', (boxes) => boxes.map((b) => ({
      chart: b.dataset.chart,
      points: b.querySelector('polyline') ?
        b.querySelector('polyline').getAttribute('points').trim().split(/\s+/).length : 0,
    })));
    const loss = drawn.find((d) => d.chart === 'loss');
    const step = drawn.find((d) => d.chart === 'step_time');
    check(loss && loss.points === withLoss, `loss chart has ${loss && loss.points} of ${withLoss} points`);
    check(step && step.points === withStep, `step-time chart has ${step && step.points} of ${withStep} points`);
    if (running.length > 1) {
      await page.click(`#jobs tr[data-job-id="${running[1]}"]`);
      await page.waitForFunction((id) => {
        const t = document.getElementById('chart-title').textContent;
        return t.startsWith('job ' + id + ' ');
      }, running[1], { timeout: 5000 });
      check(await page.$eval('#jobs tr.selected', (tr) => tr.dataset.jobId) === running[1],
            'clicking a running job selects it');
      await page.click(`#jobs tr[data-job-id="${running[0]}"]`);
      await page.waitForFunction((id) =>
        document.getElementById('chart-title').textContent.startsWith('job ' + id + ' '),
      running[0], { timeout: 5000 });
    }
  }

  const shotBeside = (suffix) => args.screenshot.replace(/\.png$/, '') + '-' + suffix + '.png';
  const goTo = async (hash, page_) => {
    await page.evaluate((h) => { location.hash = h; }, hash);
    await page.waitForSelector(`#page-${page_}:not(.hidden)`, { timeout: 5000 });
  };

  // Anomalies: every anomaly of the API with its fields, counts per kind, refreshed by the poll.
  if (args['expect-anomalies'] !== undefined) {
    const raw = await api('/v1/anomalies');
    const list = Array.isArray(raw) ? raw : raw.anomalies;
    check(list.length === Number(args['expect-anomalies']),
          `expect-anomalies=${args['expect-anomalies']} (API has ${list.length})`);
    await goTo('#/anomalies', 'anomalies');
    const readRows = () => page.$$eval('#anomalies tbody tr[data-kind]', (trs) => trs.map((tr) => ({
      kind: tr.dataset.kind, subject: tr.dataset.subject, severity: tr.dataset.severity,
      since: tr.dataset.since, cells: Array.from(tr.cells).map((c) => c.textContent),
    })));
    const arows = await readRows();
    check(arows.length === list.length, `anomalies page shows ${arows.length} of ${list.length}`);
    for (const a of list) {
      const subject = a.job_id ? 'job ' + a.job_id : 'node ' + a.node;
      const r = arows.find((x) => x.kind === a.kind && x.subject === subject);
      check(r !== undefined, `anomaly ${a.kind} of ${subject} has a row`);
      if (!r) continue;
      check(r.cells[0] === a.kind && r.cells[1] === subject, `anomaly ${a.kind} kind and subject`);
      check(r.severity === a.severity && r.cells[3] === a.severity, `anomaly ${a.kind} severity`);
      check(r.since === String(a.since), `anomaly ${a.kind} since ${a.since}`);
      check(r.cells[4] === a.evidence, `anomaly ${a.kind} evidence ${JSON.stringify(r.cells[4])}`);
      check(r.cells[5] === a.suggestion, `anomaly ${a.kind} suggestion`);
    }
    const counts = await page.$$eval('#anomaly-counts li', (lis) =>
      Object.fromEntries(lis.map((li) => [li.dataset.kind, Number(li.querySelector('.n').textContent)])));
    const want = {};
    for (const a of list) want[a.kind] = (want[a.kind] || 0) + 1;
    check(JSON.stringify(counts) === JSON.stringify(Object.fromEntries(Object.entries(want).sort())),
          `counts per kind ${JSON.stringify(counts)} vs ${JSON.stringify(want)}`);
    check(await page.$eval('.tile[data-tile="anomalies"] .value', (e) => e.textContent) ===
          String(list.length), 'anomalies tile');
    await page.screenshot({ path: shotBeside('anomalies'), fullPage: true });
    // The next poll brings a new anomaly (markup in its evidence stays text).
    const extra = { kind: 'node_failures', node: 'gpu9', since: 1800000000, severity: 'critical',
                    evidence: '<b>3 failures</b> in 24 h', suggestion: 'drain gpu9' };
    await page.route('**/v1/anomalies', (route) => route.fulfill({
      status: 200, contentType: 'application/json', body: JSON.stringify(list.concat([extra])) }));
    await page.waitForFunction((n) => document.querySelectorAll('#anomalies tbody tr[data-kind]').length === n,
                               list.length + 1, { timeout: 15000 }).catch(() => {});
    const after = await readRows();
    const e = after.find((x) => x.subject === 'node gpu9');
    check(after.length === list.length + 1 && e && e.cells[4] === extra.evidence,
          'a new anomaly appears at the next refresh, as text');
    check(after[0] && after[0].severity === 'critical', 'critical anomalies are listed first');
    check(await page.$$eval('#anomalies b', (x) => x.length) === 0, 'anomaly evidence stays text');
    await page.unroute('**/v1/anomalies');
  }

  // A job's page: the why-answer, field by field.
  if (args['why-job']) {
    const id = args['why-job'];
    const why = await api(`/v1/jobs/${id}/why`);
    if (args['expect-reason']) check(why.reason_code === args['expect-reason'], `job ${id} waits on ${why.reason_code}`);
    check(why.evidence.length > 0, `job ${id} has evidence`);
    await goTo('#/job/' + id, 'job');
    await page.waitForSelector(`#why[data-job-id="${id}"]:not(.hidden)`, { timeout: 15000 });
    const shown = await page.evaluate(() => ({
      reason: document.getElementById('why-reason').textContent,
      code: document.getElementById('why').dataset.reasonCode,
      explanation: document.getElementById('why-explanation').textContent,
      at: document.getElementById('why-expected').dataset.at,
      expected: document.getElementById('why-expected').textContent,
      evidence: Array.from(document.querySelectorAll('#why-evidence tbody tr[data-kind]')).map((tr) => ({
        kind: tr.dataset.kind, value: tr.dataset.value, jobId: tr.dataset.jobId,
        cells: Array.from(tr.cells).map((c) => c.textContent), at: tr.cells[5].dataset.at || '' })),
      suggestions: Array.from(document.querySelectorAll('#why-suggestions tbody tr[data-change]')).map((tr) => ({
        change: tr.dataset.change, at: tr.dataset.expectedStart,
        cells: Array.from(tr.cells).map((c) => c.textContent) })),
    }));
    check(shown.reason === why.reason_code && shown.code === why.reason_code, `job ${id} reason ${shown.reason}`);
    check(shown.explanation === why.explanation, `job ${id} explanation`);
    const at = why.expected_start === null ? '' : String(why.expected_start);
    check(shown.at === at, `job ${id} expected start ${shown.at} vs ${at}`);
    check(at === '' || /^(now|in )/.test(shown.expected), `job ${id} expected start shown: ${shown.expected}`);
    check(shown.evidence.length === why.evidence.length, `job ${id} evidence rows ${shown.evidence.length}`);
    why.evidence.forEach((e, i) => {
      const r = shown.evidence[i] || { cells: [] };
      check(r.kind === e.kind && r.cells[1] === e.text, `evidence ${i} (${e.kind}) text`);
      check(r.value === (e.value === undefined ? '' : String(e.value)), `evidence ${i} value`);
      check(r.jobId === (e.job_id || ''), `evidence ${i} job`);
      check(r.at === (e.at === undefined ? '' : String(e.at)), `evidence ${i} time`);
    });
    check(shown.suggestions.length === why.suggestions.length, `job ${id} suggestions`);
    why.suggestions.forEach((x, i) => {
      const r = shown.suggestions[i] || { cells: [] };
      check(r.change === x.change && r.cells[0] === x.change, `suggestion ${i} change ${x.change}`);
      check(r.at === (x.expected_start === null ? '' : String(x.expected_start)), `suggestion ${i} start`);
      check(r.cells[2] === x.why, `suggestion ${i} why`);
    });
    await page.screenshot({ path: shotBeside('job'), fullPage: true });
  }

  // What-if: the form's run shows what POST /v1/whatif answers for the same body.
  if (args.whatif) {
    const body = JSON.parse(args.whatif);
    await goTo('#/whatif', 'whatif');
    const fill = async (name, value) => page.fill(`#whatif-form [name="${name}"]`, value);
    await fill('add_nodes', (body.add_nodes || []).join(', '));
    await fill('remove_nodes', (body.remove_nodes || []).join(', '));
    await fill('load', String(body.load === undefined ? 1 : body.load));
    await fill('policy', body.policy || '');
    await fill('seeds', String(body.seeds === undefined ? 3 : body.seeds));
    await fill('set', Object.entries(body.set || {}).map(([k, v]) => k + '=' + v).join('\n'));
    await page.click('#whatif-run');
    await page.waitForSelector('#whatif-form[data-state="done"], #whatif-form[data-state="error"]',
                               { timeout: 60000 });
    check(await page.$eval('#whatif-form', (f) => f.dataset.state) === 'done',
          'what-if run done: ' + await page.$eval('#whatif-status', (s) => s.textContent));
    const res = await fetch(new URL('/v1/whatif', base), {
      method: 'POST', headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(Object.assign({ load: 1, seeds: 3 }, body)) });
    check(res.status === 200, 'POST /v1/whatif answers 200');
    const want = await res.json();
    const cells = await page.$$eval('#whatif-summary tbody tr[data-metric]', (trs) =>
      Object.fromEntries(trs.map((tr) => [tr.dataset.metric,
        [tr.cells[1].dataset.value, tr.cells[2].dataset.value, tr.cells[1].textContent]])));
    for (const m of ['avg_queue_s', 'p95_queue_s', 'avg_jct_s', 'utilisation', 'jobs']) {
      const c = cells[m] || [];
      check(c[0] === String(want.baseline[m]) && c[1] === String(want.scenario[m]),
            `what-if ${m}: page ${c[0]} -> ${c[1]}, API ${want.baseline[m]} -> ${want.scenario[m]}`);
      check(/\d/.test(c[2] || ''), `what-if ${m} shown as a number`);
    }
    const gpus = cells.gpus || [];
    check(gpus[0] === String(want.cluster.baseline_gpus) && gpus[1] === String(want.cluster.scenario_gpus),
          `what-if GPUs ${gpus[0]} -> ${gpus[1]}`);
    if (args['expect-whatif-gpus']) {
      check(`${gpus[0]},${gpus[1]}` === args['expect-whatif-gpus'], `expect-whatif-gpus=${args['expect-whatif-gpus']}`);
    }
    const parts = await page.$$eval('#whatif-partitions tbody tr[data-partition]', (trs) => trs.map((tr) => ({
      name: tr.dataset.partition, values: Array.from(tr.cells).slice(1).map((c) => c.dataset.value) })));
    const names = Object.keys(want.baseline.per_partition).sort();
    check(JSON.stringify(parts.map((p) => p.name)) === JSON.stringify(names),
          `partitions ${parts.map((p) => p.name)} vs ${names}`);
    for (const p of parts) {
      const a = want.baseline.per_partition[p.name], b = want.scenario.per_partition[p.name];
      const expected = [a.jobs, a.avg_queue_s, b.avg_queue_s, a.p95_queue_s, b.p95_queue_s, a.avg_jct_s, b.avg_jct_s]
        .map((v) => String(v));
      check(JSON.stringify(p.values) === JSON.stringify(expected), `partition ${p.name} values`);
    }
    await page.screenshot({ path: shotBeside('whatif'), fullPage: true });
    // A value the service refuses: the page names the field and keeps the last result.
    provoked.response = provoked.console = 1;
    await fill('seeds', '1000');
    await page.click('#whatif-run');
    await page.waitForSelector('#whatif-form[data-state="error"]', { timeout: 30000 });
    const err = await page.$eval('#whatif-form', (f) => ({ status: f.dataset.status, field: f.dataset.errorField,
      invalid: f.querySelector('[name="seeds"]').classList.contains('invalid') }));
    check(err.status === '400' && err.field === 'seeds' && err.invalid, `bad seeds marked: ${JSON.stringify(err)}`);
    check(!(await page.$eval('#whatif-result', (d) => d.classList.contains('hidden'))), 'last result kept');
    await fill('seeds', String(body.seeds === undefined ? 3 : body.seeds));
  }
  if (args['expect-anomalies'] !== undefined || args['why-job'] || args.whatif) {
    await goTo('#/', 'overview');
  }

  // Expectations from the caller's fixture, so an empty API cannot pass.
  const expect = (key, actual) => {
    if (args[key] !== undefined) check(actual === Number(args[key]), `${key}=${args[key]} (got ${actual})`);
  };
  expect('expect-jobs', rows.length);
  expect('expect-failures', frows.length);
  expect('expect-nodes', nrows.length);
  expect('expect-stalled', rows.filter((r) => r.cells[8].includes('stalled')).length);

  // Summary tiles agree with the API.
  const tile = (id) => page.$eval(`.tile[data-tile="${id}"] .value`, (e) => e.textContent);
  check(await tile('running') === String(jobs.jobs.filter((j) => j.state === 'RUNNING').length), 'running tile');
  check(await tile('failures') === String(fails.failures.length), 'failures tile');
  check(await tile('drained') === String(nodes.nodes.filter((n) => n.drained).length), 'drained tile');

  check(await page.$eval('#error', (e) => e.classList.contains('hidden')), 'no error banner');
  check(foreign.length === 0, 'no request left the origin: ' + foreign.join(', '));
  check(pageErrors.length === 0, 'no page errors: ' + pageErrors.join(' | '));

  await page.mouse.move(0, 0);
  await page.screenshot({ path: args.screenshot, fullPage: true });

  // When the API stops answering, the page says so and keeps the last data it had.
  await page.route(jobListUrl, (route) => route.abort());
  await page.waitForSelector('#error:not(.hidden)', { timeout: 15000 });
  check((await page.$eval('#error', (e) => e.textContent)).includes('API unreachable'),
        'error banner names the problem');
  check((await page.$$('#jobs tbody tr[data-job-id]')).length === rows.length,
        'queue kept while the API is down');
  await page.unroute(jobListUrl);
  await page.waitForSelector('#error.hidden', { state: 'attached', timeout: 15000 })
    .catch(() => {});
  check(await page.$eval('#error', (e) => e.classList.contains('hidden')),
        'banner cleared once the API answers again');

  // A queue of 1,200 jobs, served 500 a page: the page follows `next` for all of them, shows the
  // first 1,000 (running first) and says how many more; its next page shows the other 200.
  const big = [];
  for (let i = 0; i < 1200; ++i) {
    big.push({ id: String(5000 + i), name: '<b>bulk ' + i + '</b>', user: 'u' + (i % 7),
               state: i < 3 ? 'RUNNING' : 'PENDING', reason: 'Priority', gpus: 1,
               prediction: null, metrics: null, start_estimate: null, restarts: 0,
               excluded_nodes: [], start: null, exit_code: 0 });
  }
  const bigPages = [];
  await page.route(jobListUrl, (route) => {
    const u = new URL(route.request().url());
    const limit = Math.min(500, Number(u.searchParams.get('limit') || 200));
    const after = u.searchParams.get('after');
    const from = after ? big.findIndex((j) => j.id === after) + 1 : 0;
    const slice = big.slice(from, from + limit);
    const next = from + limit < big.length ? slice[slice.length - 1].id : null;
    bigPages.push(after || '');
    route.fulfill({ status: 200, contentType: 'application/json', body: JSON.stringify(
      { updated_at: jobs.updated_at, jobs: slice, limit, next, total: big.length }) });
  });
  await page.waitForFunction(() => document.querySelectorAll('#jobs tbody tr[data-job-id]').length === 1000,
                             null, { timeout: 15000 }).catch(() => {});
  check(await page.$$eval('#jobs tbody tr[data-job-id]', (x) => x.length) === 1000,
        'a 1,200-job queue shows 1,000 rows');
  check((await page.$eval('#jobs tbody tr.more', (tr) => tr.textContent).catch(() => ''))
    .includes('200 more jobs'), 'and says 200 more');
  check(bigPages.slice(0, 3).join(',') === ',5499,5999',
        'the page followed next through 3 pages: ' + bigPages.slice(0, 3).join(','));
  check(await page.$$eval('#jobs b', (x) => x.length) === 0, 'bulk names stay text');
  await page.click('#queue-next');
  const second = await page.$$eval('#jobs tbody tr[data-job-id]', (x) => x.map((tr) => tr.dataset.jobId));
  check(second.length === 200 && second[199] === '6199',
        `the queue's next page shows the other 200 jobs (${second.length}, last ${second[199]})`);
  check((await page.$eval('#queue-range', (e) => e.textContent)).includes('1001–1200 of 1200'),
        'the pager names the rows shown');
  await page.click('#queue-prev');
  check(await page.$$eval('#jobs tbody tr[data-job-id]', (x) => x.length) === 1000,
        'and back to the first 1,000');
  await page.unroute(jobListUrl);
  console.log(`dashboard: ${checks - failures.length}/${checks} checks passed; screenshot ${args.screenshot}`);
  exitCode = failures.length === 0 ? 0 : 1;
} catch (err) {
  console.error('FAIL: ' + (err && err.stack ? err.stack : err));
  exitCode = 1;
} finally {
  await browser.close();
  rmSync(profile, { recursive: true, force: true });
}
process.exit(exitCode);
