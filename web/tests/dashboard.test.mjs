// Real-browser test of the schedmate dashboard (web/ui, served by `schedmate serve` at /).
//
//   node web/tests/dashboard.test.mjs --url http://127.0.0.1:8787/ --screenshot out.png \
//        [--expect-jobs N] [--expect-failures N] [--expect-nodes N] [--xss-job ID]
//
// Drives Debian's /usr/bin/chromium (override with $CHROMIUM) through playwright-core; never
// downloads a browser. Compares what the page shows with what the JSON API answers (every job,
// failure, action and node appears with its texts), checks that a job name holding markup is shown
// as text, that a running job's loss/step-time chart is drawn, that the page loads nothing from
// another origin and logs no errors, then writes a full-page screenshot. Exit 0 = pass, 1 = fail.

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
  page.on('console', (m) => { if (m.type() === 'error') pageErrors.push('console: ' + m.text()); });
  page.on('request', (r) => {
    const u = new URL(r.url());
    if (u.origin !== base.origin && u.protocol !== 'data:') foreign.push(r.url());
  });
  page.on('response', (r) => {
    if (r.status() >= 400) pageErrors.push('HTTP ' + r.status() + ' for ' + r.url());
  });
  page.on('dialog', (d) => { pageErrors.push('dialog opened: ' + d.message()); d.dismiss(); });

  const resp = await page.goto(base.href, { waitUntil: 'domcontentloaded' });
  check(resp && resp.status() === 200, 'GET / answers 200');
  await page.waitForSelector('body[data-loaded="true"]', { timeout: 20000 });
  await page.waitForSelector('#charts svg.chart', { timeout: 10000 });

  const [jobs, fails, actions, nodes] = await Promise.all([
    api('/v1/jobs'), api('/v1/failures'), api('/v1/actions'), api('/v1/nodes')]);

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
  await page.route('**/v1/jobs', (route) => route.abort());
  await page.waitForSelector('#error:not(.hidden)', { timeout: 15000 });
  check((await page.$eval('#error', (e) => e.textContent)).includes('API unreachable'),
        'error banner names the problem');
  check((await page.$$('#jobs tbody tr[data-job-id]')).length === rows.length,
        'queue kept while the API is down');
  await page.unroute('**/v1/jobs');
  await page.waitForSelector('#error.hidden', { state: 'attached', timeout: 15000 })
    .catch(() => {});
  check(await page.$eval('#error', (e) => e.classList.contains('hidden')),
        'banner cleared once the API answers again');

  // A queue of 1,200 jobs: the page shows the first 1,000 (running first) and says how many more.
  const big = { updated_at: jobs.updated_at, jobs: [] };
  for (let i = 0; i < 1200; ++i) {
    big.jobs.push({ id: String(5000 + i), name: '<b>bulk ' + i + '</b>', user: 'u' + (i % 7),
                    state: i < 3 ? 'RUNNING' : 'PENDING', reason: 'Priority', gpus: 1,
                    prediction: null, metrics: null, start_estimate: null, restarts: 0,
                    excluded_nodes: [], start: null, exit_code: 0 });
  }
  await page.route('**/v1/jobs', (route) => route.fulfill({
    status: 200, contentType: 'application/json', body: JSON.stringify(big) }));
  await page.waitForFunction(() => document.querySelectorAll('#jobs tbody tr[data-job-id]').length === 1000,
                             null, { timeout: 15000 }).catch(() => {});
  check(await page.$$eval('#jobs tbody tr[data-job-id]', (x) => x.length) === 1000,
        'a 1,200-job queue shows 1,000 rows');
  check((await page.$eval('#jobs tbody tr.more', (tr) => tr.textContent).catch(() => ''))
    .includes('200 more jobs'), 'and says 200 more');
  check(await page.$$eval('#jobs b', (x) => x.length) === 0, 'bulk names stay text');
  await page.unroute('**/v1/jobs');
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
