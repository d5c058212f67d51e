// schedmate dashboard: a read-only view that polls the JSON API of `schedmate serve`.
//
// Contract: every value that comes from the API (job names, users, log lines, reasons) reaches
// the page through textContent or an SVG text node, never through innerHTML, so a job named
// `<img src=x onerror=...>` is shown as text. Relative times are measured against the server's
// `updated_at`, not the browser's clock. No network access other than the same-origin API.
'use strict';

(function () {
  const POLL_MS = 4000;
  const MAX_QUEUE_ROWS = 1000;  // a huge queue stays responsive; the rest is in /v1/jobs
  const SVG_NS = 'http://www.w3.org/2000/svg';
  const state = { selected: null, lastOk: null };

  // ---- DOM helpers (text only) ----
  function el(tag, opts, children) {
    const node = document.createElement(tag);
    if (opts) {
      if (opts.cls) node.className = opts.cls;
      if (opts.text !== undefined && opts.text !== null) node.textContent = String(opts.text);
      if (opts.title) node.title = String(opts.title);
      if (opts.data) for (const [k, v] of Object.entries(opts.data)) node.dataset[k] = String(v);
    }
    for (const c of children || []) if (c) node.appendChild(c);
    return node;
  }
  function td(text, cls, title) { return el('td', { text: text, cls: cls, title: title }); }
  function badge(text, kind, title) {
    return el('span', { cls: 'badge ' + (kind || ''), text: text, title: title });
  }
  function svg(tag, attrs) {
    const node = document.createElementNS(SVG_NS, tag);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
    return node;
  }
  function replaceRows(table, rows, emptyText, columns) {
    const body = document.querySelector('#' + table + ' tbody');
    body.replaceChildren();
    if (rows.length === 0) {
      const cell = el('td', { cls: 'empty', text: emptyText });
      cell.colSpan = columns;
      body.appendChild(el('tr', {}, [cell]));
      return;
    }
    for (const r of rows) body.appendChild(r);
  }
  function setText(id, text) { document.getElementById(id).textContent = text; }

  // ---- formatting ----
  function fmtDur(s) {
    if (s === null || s === undefined || !isFinite(s)) return '–';
    s = Math.max(0, Math.round(s));
    if (s < 60) return s + 's';
    const m = Math.floor(s / 60);
    if (m < 60) return m + 'm' + (s % 60 ? ' ' + (s % 60) + 's' : '');
    const h = Math.floor(m / 60);
    if (h < 48) return h + 'h' + (m % 60 ? ' ' + String(m % 60).padStart(2, '0') + 'm' : '');
    const d = Math.floor(h / 24);
    return d + 'd ' + (h % 24) + 'h';
  }
  function iso(t) {
    if (t === null || t === undefined) return '';
    return new Date(t * 1000).toISOString().replace('.000Z', 'Z');
  }
  function ago(t, now) {
    if (t === null || t === undefined) return '–';
    const d = now - t;
    if (d < 0) return 'in ' + fmtDur(-d);
    return d < 1 ? 'now' : fmtDur(d) + ' ago';
  }
  function until(t, now) {
    if (t === null || t === undefined) return '–';
    const d = t - now;
    return d <= 0 ? 'now' : 'in ' + fmtDur(d);
  }
  function num(v, digits) {
    if (v === null || v === undefined || !isFinite(v)) return '–';
    const a = Math.abs(v);
    if (a !== 0 && (a < 1e-3 || a >= 1e6)) return v.toExponential(2);
    return Number(v.toFixed(digits === undefined ? 3 : digits)).toString();
  }
  function stateKind(s) {
    switch ((s || '').toUpperCase()) {
      case 'RUNNING': return 'ok';
      case 'PENDING': return 'wait';
      case 'FAILED': case 'NODE_FAIL': case 'TIMEOUT': case 'OUT_OF_MEMORY': return 'bad';
      case 'COMPLETED': return 'muted';
      default: return '';
    }
  }

  // ---- API ----
  async function getJson(path) {
    const res = await fetch(path, { cache: 'no-store', headers: { Accept: 'application/json' } });
    if (!res.ok) throw new Error(path + ': HTTP ' + res.status);
    return res.json();
  }

  // ---- rendering ----
  function renderStatus(health, now, dryRun) {
    const box = document.getElementById('status');
    const parts = [
      badge(health.slurm_ok ? 'Slurm OK' : 'Slurm unreachable', health.slurm_ok ? 'ok' : 'bad',
            health.last_error || ''),
      dryRun ? badge('dry-run', 'wait', 'actions are recorded, not executed') : null,
      el('span', { cls: 'meta', text: 'updated ' + iso(now) + ' · tick ' + health.ticks })];
    box.replaceChildren(...parts.filter((n) => n !== null));
  }

  function renderTiles(jobs, failures, nodes) {
    const running = jobs.filter((j) => j.state === 'RUNNING');
    const pending = jobs.filter((j) => j.state === 'PENDING');
    const stalled = running.filter((j) => j.metrics && j.metrics.stalled);
    const gpusBusy = running.reduce((a, j) => a + (j.gpus || 0), 0);
    const gpusTotal = nodes.reduce((a, n) => a + (n.gpus_total || 0), 0);
    const drained = nodes.filter((n) => n.drained);
    const tile = (label, value, kind, id) =>
      el('div', { cls: 'tile ' + (kind || ''), data: { tile: id } }, [
        el('div', { cls: 'value', text: value }), el('div', { cls: 'label', text: label })]);
    document.getElementById('tiles').replaceChildren(
      tile('running', running.length, 'ok', 'running'),
      tile('pending', pending.length, pending.length ? 'wait' : '', 'pending'),
      tile('stalled', stalled.length, stalled.length ? 'bad' : '', 'stalled'),
      tile('GPUs busy', gpusBusy + ' / ' + gpusTotal, '', 'gpus'),
      tile('failures', failures.length, failures.length ? 'bad' : '', 'failures'),
      tile('drained nodes', drained.length, drained.length ? 'bad' : '', 'drained'));
  }

  function predictedCell(p) {
    if (!p) return td('–', 'muted');
    const cell = el('td', { title: (p.explanation || '') + ' [' + (p.engine || '') + ']' });
    cell.appendChild(el('span', { cls: 'strong', text: fmtDur(p.duration_s) }));
    cell.appendChild(el('span', { cls: 'range', text: ' (' + fmtDur(p.low_s) + '–' + fmtDur(p.high_s) + ')' }));
    if (p.confidence !== undefined && p.confidence !== null)
      cell.appendChild(el('span', { cls: 'range', text: ' · conf ' + Math.round(p.confidence * 100) + '%' }));
    return cell;
  }

  function progressCell(j) {
    const m = j.metrics;
    if (!m || m.progress === null || m.progress === undefined) {
      return td(m && m.step !== null && m.step !== undefined ? 'step ' + m.step : '–', 'muted');
    }
    const pct = Math.max(0, Math.min(1, m.progress));
    const bar = el('div', { cls: 'bar' + (m.stalled ? ' stalled' : '') }, [
      svgBar(pct)]);
    const label = Math.round(pct * 100) + '%' +
      (m.step !== null && m.total_steps ? ' (' + m.step + '/' + m.total_steps + ')' : '');
    return el('td', { title: m.note || '' }, [bar, el('span', { cls: 'range', text: label })]);
  }
  // A progress bar drawn as SVG (no inline style attributes, so the page's CSP holds).
  function svgBar(frac) {
    const s = svg('svg', { viewBox: '0 0 100 6', preserveAspectRatio: 'none', class: 'barsvg' });
    s.appendChild(svg('rect', { x: 0, y: 0, width: 100, height: 6, rx: 3, class: 'bar-bg' }));
    s.appendChild(svg('rect', { x: 0, y: 0, width: (frac * 100).toFixed(2), height: 6, rx: 3,
                                class: 'bar-fg' }));
    return s;
  }

  function etaCell(j, now) {
    if (j.state === 'RUNNING') {
      const m = j.metrics;
      if (m && m.eta_s !== null && m.eta_s !== undefined) return td(fmtDur(m.eta_s) + ' left');
      if (j.prediction && j.start !== null)
        return td('~' + fmtDur(j.start + j.prediction.duration_s - now) + ' left (predicted)',
                  'muted');
      return td('–', 'muted');
    }
    if (j.state === 'PENDING') {
      const e = j.start_estimate;
      if (!e || e.estimated_start === null || e.estimated_start === undefined)
        return td(e && e.note ? e.note : 'not estimated yet', 'muted');
      return td('starts ' + until(e.estimated_start, now), '', iso(e.estimated_start) +
                (e.note ? ' — ' + e.note : ''));
    }
    return td('–', 'muted');
  }

  function notesCell(j) {
    const cell = el('td', { cls: 'notes' });
    const m = j.metrics;
    if (m && m.stalled) cell.appendChild(badge('stalled', 'bad', m.note || ''));
    if (m && m.slowdown) cell.appendChild(badge('slowdown', 'wait', m.note || ''));
    if (j.restarts > 0) cell.appendChild(badge('restarts ' + j.restarts, 'muted'));
    if (j.state === 'PENDING') {
      const reason = (j.start_estimate && j.start_estimate.pending_reason) || j.reason;
      if (reason && reason !== 'None') cell.appendChild(el('span', { cls: 'reason', text: reason }));
    }
    if (j.state !== 'RUNNING' && j.state !== 'PENDING' && j.exit_code)
      cell.appendChild(el('span', { cls: 'reason', text: 'exit ' + j.exit_code }));
    if (j.excluded_nodes && j.excluded_nodes.length)
      cell.appendChild(el('span', { cls: 'range', text: ' excl. ' + j.excluded_nodes.join(',') }));
    if (m && m.loss !== null && m.loss !== undefined && j.state === 'RUNNING')
      cell.appendChild(el('span', { cls: 'range', text: ' loss ' + num(m.loss) }));
    return cell;
  }

  function jobOrder(a, b) {
    const rank = (s) => (s === 'RUNNING' ? 0 : s === 'PENDING' ? 1 : 2);
    const d = rank(a.state) - rank(b.state);
    if (d) return d;
    if (a.id.length !== b.id.length) return a.id.length - b.id.length;
    return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
  }

  function renderJobs(jobs, now) {
    const sorted = jobs.slice().sort(jobOrder);
    const rows = sorted.slice(0, MAX_QUEUE_ROWS).map((j) => {
      const running = j.state === 'RUNNING';
      const tr = el('tr', {
        cls: (running ? 'clickable' : '') + (state.selected === j.id ? ' selected' : ''),
        data: { jobId: j.id, state: j.state },
      }, [
        td(j.id, 'mono'),
        td(j.name, 'name', j.name),
        td(j.user),
        el('td', {}, [badge(j.state, stateKind(j.state))]),
        td(j.gpus, 'num'),
        predictedCell(j.prediction),
        running ? progressCell(j) : td('–', 'muted'),
        etaCell(j, now),
        notesCell(j),
      ]);
      if (running) {
        tr.tabIndex = 0;
        const pick = () => { selectJob(j.id); };
        tr.addEventListener('click', pick);
        tr.addEventListener('keydown', (ev) => { if (ev.key === 'Enter') pick(); });
      }
      return tr;
    });
    const r = jobs.filter((j) => j.state === 'RUNNING').length;
    const p = jobs.filter((j) => j.state === 'PENDING').length;
    setText('queue-count', r + ' running · ' + p + ' pending');
    if (sorted.length > MAX_QUEUE_ROWS) {
      const more = el('td', { cls: 'empty', text: (sorted.length - MAX_QUEUE_ROWS) +
        ' more jobs not shown (the full list is at /v1/jobs)' });
      more.colSpan = 9;
      rows.push(el('tr', { cls: 'more' }, [more]));
    }
    replaceRows('jobs', rows, 'No jobs in the queue.', 9);
  }

  function renderFailures(failures, now) {
    const rows = failures.map((f) => {
      const ev = el('td', { cls: 'evidence' });
      if (f.evidence_line) ev.appendChild(el('span', { cls: 'lineno', text: 'line ' + f.evidence_line }));
      ev.appendChild(el('code', { text: f.evidence || '' }));
      return el('tr', { data: { failureId: f.id, jobId: f.job_id, cls: f.class } }, [
        td(ago(f.at, now), 'nowrap', iso(f.at)),
        td(f.job_id, 'mono'),
        el('td', {}, [badge(f.class, f.class === 'infra' ? 'bad' : f.class === 'app' ? 'wait' : 'muted')]),
        td(f.category),
        td(f.reason, 'reason'),
        ev,
        td(f.engine, 'muted nowrap'),
      ]);
    });
    setText('failures-count', String(failures.length));
    replaceRows('failures', rows, 'No failures diagnosed.', 7);
  }

  function renderActions(actions, now) {
    const rows = actions.map((a) => {
      const kind = a.outcome === 'done' ? 'ok' : a.outcome === 'failed' ? 'bad'
        : a.outcome === 'dry-run' ? 'wait' : 'muted';
      const outcome = el('td', {}, [
        badge(a.outcome, kind),
        a.dry_run && a.outcome !== 'dry-run' ? badge('dry-run', 'wait', 'recorded in dry-run mode') : null]);
      return el('tr', { data: { actionId: a.id, kind: a.kind } }, [
        td(ago(a.at, now), 'nowrap', iso(a.at)),
        td(a.job_id || '–', 'mono'),
        td(a.node || '–', 'mono'),
        td(a.kind, 'strong'),
        outcome,
        td(a.detail || a.reason, 'reason', a.reason),
      ]);
    });
    setText('actions-count', String(actions.length));
    replaceRows('actions', rows, 'No actions taken.', 6);
  }

  // The order mode's last ranking (GET /v1/scheduling); in advise mode the panel says so.
  function renderOrder(sched) {
    const secs = (s) => (s >= 3600 ? (s / 3600).toFixed(1) + 'h' : s >= 60 ? Math.round(s / 60) + 'm' : s + 's');
    const rows = sched.ranking.map((r) => el('tr', { data: { jobId: r.job_id, reason: r.reason } }, [
      td(String(r.rank + 1), 'num'),
      td(r.job_id, 'mono'),
      td(r.reason.replace('_', ' ')),
      td(secs(r.predicted_s), 'num'),
      td(secs(r.waited_s), 'num'),
      td(String(r.priority), 'num mono'),
      td(r.target === r.priority ? '=' : String(r.target), 'num mono'),
    ]));
    const summary = sched.mode === 'order'
      ? sched.policy + ' · ' + sched.changes_total + ' changes, ' + sched.restored_total +
        ' restored, longest wait ' + secs(sched.longest_wait_s) + ' (bound ' + secs(sched.max_wait_s) + ')' +
        (sched.dry_run ? ' · dry run' : '')
      : 'advise mode: Slurm orders the queue';
    setText('order-summary', summary);
    replaceRows('order', rows, sched.mode === 'order' ? 'No pending jobs to order.'
      : 'Advise mode: schedmate does not reorder the queue.', 7);
  }

  function renderNodes(nodes) {
    const rows = nodes.map((n) => {
      const st = el('td', {}, [badge(n.state, n.drained ? 'bad' : n.available ? 'ok' : 'muted'),
                               n.drained ? badge('drained', 'bad') : null]);
      const frac = n.gpus_total ? n.gpus_used / n.gpus_total : 0;
      const gpus = el('td', {}, [el('div', { cls: 'bar' }, [svgBar(frac)]),
                                 el('span', { cls: 'range', text: n.gpus_used + ' / ' + n.gpus_total })]);
      return el('tr', { data: { node: n.name, drained: n.drained } }, [
        td(n.name, 'mono'), st, gpus, td(n.cpus, 'num'), td(n.reason || '', 'reason')]);
    });
    setText('nodes-count', String(nodes.length));
    replaceRows('nodes', rows, 'No nodes reported.', 5);
  }

  // ---- charts ----
  // One line chart: points [{x, y}], drawn in a fixed viewBox that scales with the card.
  function lineChart(title, unit, points, xLabel) {
    const W = 640, H = 220, L = 56, R = 14, T = 30, B = 30;
    const box = svg('svg', { viewBox: '0 0 ' + W + ' ' + H, class: 'chart', role: 'img' });
    const label = svg('title', {});
    label.textContent = title;
    box.appendChild(label);
    const head = svg('text', { x: L, y: 16, class: 'chart-title' });
    head.textContent = title + (unit ? ' (' + unit + ')' : '');
    box.appendChild(head);
    if (points.length === 0) {
      const t = svg('text', { x: W / 2, y: H / 2, class: 'chart-empty', 'text-anchor': 'middle' });
      t.textContent = 'no samples yet';
      box.appendChild(t);
      return box;
    }
    let x0 = Math.min(...points.map((p) => p.x)), x1 = Math.max(...points.map((p) => p.x));
    let y0 = Math.min(...points.map((p) => p.y)), y1 = Math.max(...points.map((p) => p.y));
    if (x1 === x0) { x0 -= 1; x1 += 1; }
    if (y1 === y0) { const pad = Math.abs(y0) * 0.1 || 1; y0 -= pad; y1 += pad; }
    const padY = (y1 - y0) * 0.08;
    y0 -= padY; y1 += padY;
    const sx = (x) => L + ((x - x0) / (x1 - x0)) * (W - L - R);
    const sy = (y) => T + (1 - (y - y0) / (y1 - y0)) * (H - T - B);
    for (let i = 0; i <= 4; ++i) {  // horizontal grid with value labels
      const v = y0 + ((y1 - y0) * i) / 4;
      const y = sy(v);
      box.appendChild(svg('line', { x1: L, x2: W - R, y1: y, y2: y, class: 'grid' }));
      const t = svg('text', { x: L - 6, y: y + 4, class: 'tick', 'text-anchor': 'end' });
      t.textContent = num(v, 3);
      box.appendChild(t);
    }
    for (const [v, anchor] of [[x0, 'start'], [x1, 'end']]) {
      const t = svg('text', { x: sx(v), y: H - 10, class: 'tick', 'text-anchor': anchor });
      t.textContent = num(v, 0);
      box.appendChild(t);
    }
    const xl = svg('text', { x: (L + W - R) / 2, y: H - 10, class: 'tick', 'text-anchor': 'middle' });
    xl.textContent = xLabel;
    box.appendChild(xl);
    const d = points.map((p) => sx(p.x).toFixed(1) + ',' + sy(p.y).toFixed(1)).join(' ');
    box.appendChild(svg('polyline', { points: d, class: 'line' }));
    for (const p of points.length <= 60 ? points : [points[points.length - 1]]) {
      const c = svg('circle', { cx: sx(p.x).toFixed(1), cy: sy(p.y).toFixed(1), r: 2.5, class: 'dot' });
      const tip = svg('title', {});
      tip.textContent = xLabel + ' ' + num(p.x, 0) + ': ' + num(p.y, 4);
      c.appendChild(tip);
      box.appendChild(c);
    }
    const last = points[points.length - 1];
    const lt = svg('text', { x: W - R, y: 16, class: 'chart-last', 'text-anchor': 'end' });
    lt.textContent = 'last ' + num(last.y, 4);
    box.appendChild(lt);
    return box;
  }

  async function renderChart() {
    const holder = document.getElementById('charts');
    if (!state.selected) {
      setText('chart-title', '');
      holder.replaceChildren(el('p', { cls: 'empty', text: 'No running job selected.' }));
      return;
    }
    const id = state.selected;
    const data = await getJson('/v1/jobs/' + encodeURIComponent(id) + '/metrics?limit=500');
    if (state.selected !== id) return;  // the selection changed while loading
    const samples = (data.samples || []).slice().sort((a, b) => a.at - b.at);
    // Plot against the training step when the log reports one (samples without a step, e.g.
    // before the first step line, are left out); otherwise against seconds since the first sample.
    const hasStep = (s) => s.step !== null && s.step !== undefined;
    const byStep = samples.some(hasStep);
    const xOf = (s) => (byStep ? s.step : s.at - samples[0].at);
    const series = (key) => samples
      .filter((s) => s[key] !== null && s[key] !== undefined && (!byStep || hasStep(s)))
      .map((s) => ({ x: xOf(s), y: s[key] }));
    const xLabel = byStep ? 'step' : 'seconds';
    const job = (state.jobs || []).find((j) => j.id === id);
    setText('chart-title', 'job ' + id + (job ? ' · ' + job.name : '') + ' · ' + samples.length +
            ' samples');
    holder.replaceChildren(
      el('div', { cls: 'chart-box', data: { chart: 'loss' } }, [lineChart('Loss', '', series('loss'), xLabel)]),
      el('div', { cls: 'chart-box', data: { chart: 'step_time' } },
         [lineChart('Step time', 's', series('step_time_s'), xLabel)]));
  }

  function selectJob(id) {
    state.selected = id;
    history.replaceState(null, '', '#job=' + encodeURIComponent(id));
    for (const tr of document.querySelectorAll('#jobs tbody tr'))
      tr.classList.toggle('selected', tr.dataset.jobId === id);
    renderChart().catch(showError);
  }

  function showError(err) {
    const box = document.getElementById('error');
    box.textContent = 'API unreachable: ' + (err && err.message ? err.message : String(err)) +
      (state.lastOk ? ' — showing data from ' + iso(state.lastOk) : '');
    box.classList.remove('hidden');
  }

  async function refresh() {
    try {
      const [health, jobs, failures, actions, nodes, sched] = await Promise.all([
        getJson('/healthz'), getJson('/v1/jobs'), getJson('/v1/failures'),
        getJson('/v1/actions'), getJson('/v1/nodes'), getJson('/v1/scheduling')]);
      const now = jobs.updated_at || health.updated_at;
      state.jobs = jobs.jobs;
      const running = jobs.jobs.filter((j) => j.state === 'RUNNING').sort(jobOrder);
      if (!running.some((j) => j.id === state.selected))
        state.selected = running.length ? running[0].id : null;
      renderStatus(health, now, actions.dry_run || health.dry_run);
      renderTiles(jobs.jobs, failures.failures, nodes.nodes);
      renderJobs(jobs.jobs, now);
      renderFailures(failures.failures, now);
      renderActions(actions.actions, now);
      renderNodes(nodes.nodes);
      renderOrder(sched);
      await renderChart();
      state.lastOk = now;
      document.getElementById('error').classList.add('hidden');
      document.body.dataset.loaded = 'true';
    } catch (err) {
      showError(err);
    }
  }

  // Polls while the tab is visible; a hidden tab asks nothing and refreshes when shown again.
  async function loop() {
    if (!document.hidden) await refresh();
    setTimeout(loop, POLL_MS);
  }

  document.addEventListener('DOMContentLoaded', () => {
    const m = /^#job=([0-9_]+)$/.exec(location.hash);
    if (m) state.selected = m[1];
    document.addEventListener('visibilitychange', () => { if (!document.hidden) refresh(); });
    loop();
  });
})();
