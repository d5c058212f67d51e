// schedmate dashboard: a read-only view that polls the JSON API of `schedmate serve`.
//
// Contract: every value that comes from the API (job names, users, log lines, reasons) reaches
// the page through textContent or an SVG text node, never through innerHTML, so a job named
// `<img src=x onerror=...>` is shown as text. Relative times are measured against the server's
// `updated_at`, not the browser's clock. No network access other than the same-origin API.
'use strict';

(function () {
  const POLL_MS = 4000;
  const MAX_QUEUE_ROWS = 1000;  // rows per queue page: a huge queue stays responsive
  const JOB_PAGE = 5000;        // jobs per GET /v1/jobs request (the API's largest page)
  const MAX_JOB_PAGES = 400;    // 2,000,000 jobs: a cursor that never ends is an error
  const SVG_NS = 'http://www.w3.org/2000/svg';
  const state = { selected: null, lastOk: null, page: 'overview', jobPage: null, anomalies: [],
                  queuePage: 0, multiCluster: false };

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

  // Every live job: GET /v1/jobs page by page, following `next` (the last job id of a page).
  // Pages are read from the view current at each request: a job is listed once, as of its
  // page (the API's paging guarantee), and updated_at is the last page's. 'no-cache' lets the
  // browser revalidate a page it has with its ETag (304 when the view has not changed).
  // A companion watching several clusters lists one cluster per request: every cluster of
  // GET /v1/clusters is read in its order, and each job carries its `cluster`.
  async function getClusterJobs(cluster, jobs) {
    let after = '';
    const only = cluster === null ? '' : '&cluster=' + encodeURIComponent(cluster);
    for (let i = 0; i < MAX_JOB_PAGES; ++i) {
      const path = '/v1/jobs?limit=' + JOB_PAGE + only +
        (after ? '&after=' + encodeURIComponent(after) : '');
      const res = await fetch(path, { cache: 'no-cache', headers: { Accept: 'application/json' } });
      if (!res.ok) throw new Error(path + ': HTTP ' + res.status);
      const page = await res.json();
      for (const j of page.jobs) jobs.push(j);
      if (page.next === null || page.next === undefined) return page.updated_at;
      after = page.next;
    }
    throw new Error('/v1/jobs: more than ' + MAX_JOB_PAGES + ' pages');
  }

  async function getAllJobs() {
    const clusters = (await getJson('/v1/clusters')).clusters || [];
    const jobs = [];
    state.multiCluster = clusters.length > 1;
    if (!state.multiCluster) return { updated_at: await getClusterJobs(null, jobs), jobs };
    let updated = null;
    for (const c of clusters) {
      const at = await getClusterJobs(c.name, jobs);
      if (updated === null || (at !== null && at > updated)) updated = at;
    }
    return { updated_at: updated, jobs };
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

  function renderTiles(jobs, failures, nodes, anomalies) {
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
      tile('drained nodes', drained.length, drained.length ? 'bad' : '', 'drained'),
      tile('anomalies', anomalies.length, anomalies.length ? 'wait' : '', 'anomalies'));
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
    if (a.id !== b.id) return a.id < b.id ? -1 : 1;
    const ca = a.cluster || '', cb = b.cluster || '';  // the same id on two clusters
    return ca < cb ? -1 : ca > cb ? 1 : 0;
  }

  function renderJobs(jobs, now) {
    const sorted = jobs.slice().sort(jobOrder);
    const pages = Math.max(1, Math.ceil(sorted.length / MAX_QUEUE_ROWS));
    state.queuePage = Math.min(Math.max(0, state.queuePage), pages - 1);
    const first = state.queuePage * MAX_QUEUE_ROWS;
    const shown = sorted.slice(first, first + MAX_QUEUE_ROWS);
    const rows = shown.map((j) => {
      const running = j.state === 'RUNNING';
      const tr = el('tr', {
        cls: (running ? 'clickable' : '') + (state.selected === j.id ? ' selected' : ''),
        data: { jobId: j.id, state: j.state },
      }, [
        el('td', { cls: 'mono' }, state.multiCluster && j.cluster
          ? [jobLink(j.id), el('span', { cls: 'muted', text: ' ' + j.cluster })] : [jobLink(j.id)]),
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
    const after = sorted.length - first - shown.length;
    if (after > 0) {
      const more = el('td', { cls: 'empty', text: after + ' more jobs on the next pages' });
      more.colSpan = 9;
      rows.push(el('tr', { cls: 'more' }, [more]));
    }
    replaceRows('jobs', rows, 'No jobs in the queue.', 9);
    document.getElementById('queue-pager').classList.toggle('hidden', pages === 1);
    setText('queue-range', shown.length ? 'jobs ' + (first + 1) + '–' + (first + shown.length) +
            ' of ' + sorted.length + ' · page ' + (state.queuePage + 1) + ' of ' + pages : '');
    document.getElementById('queue-prev').disabled = state.queuePage === 0;
    document.getElementById('queue-next').disabled = state.queuePage >= pages - 1;
  }

  function turnQueuePage(delta) {
    state.queuePage += delta;
    renderJobs(state.jobs || [], state.now);
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

  // ---- pages ----
  // #/ (or #job=ID: the overview with that running job charted), #/job/ID, #/anomalies,
  // #/whatif. Every page is refreshed by the same poll.
  function route() {
    const h = location.hash;
    let page = 'overview';
    let m;
    if ((m = /^#\/job\/([0-9_]{1,32})$/.exec(h))) {
      page = 'job';
      state.jobPage = m[1];
    } else if (h === '#/anomalies') {
      page = 'anomalies';
    } else if (h === '#/whatif') {
      page = 'whatif';
    }
    state.page = page;
    for (const p of ['overview', 'job', 'anomalies', 'whatif'])
      document.getElementById('page-' + p).classList.toggle('hidden', p !== page);
    for (const a of document.querySelectorAll('nav.tabs a'))
      a.classList.toggle('active', a.dataset.page === page);
    const nav = document.getElementById('nav-job');
    nav.classList.toggle('hidden', page !== 'job');
    if (page === 'job') {
      nav.textContent = 'Job ' + state.jobPage;
      nav.href = '#/job/' + state.jobPage;
    }
    document.body.dataset.page = page;
  }

  function jobLink(id) {
    const a = el('a', { text: id, cls: 'joblink' });
    a.href = '#/job/' + encodeURIComponent(id);
    a.addEventListener('click', (ev) => ev.stopPropagation());  // not the row's chart selection
    return a;
  }

  // ---- job page: why a job waits (GET /v1/jobs/{id}/why) ----
  async function renderJobPage(now) {
    const id = state.jobPage;
    const job = (state.jobs || []).find((j) => j.id === id);
    setText('job-title', id);
    const missing = document.getElementById('job-missing');
    const why = document.getElementById('why');
    if (!job) {
      setText('job-meta', '');
      missing.textContent = 'Job ' + id + ' is not in the queue schedmate sees.';
      missing.classList.remove('hidden');
      why.classList.add('hidden');
      return;
    }
    missing.classList.add('hidden');
    setText('job-meta', job.name + ' · ' + job.user + ' · ' + job.state + ' · ' + job.gpus + ' GPUs');
    const res = await fetch('/v1/jobs/' + encodeURIComponent(id) + '/why',
                            { cache: 'no-store', headers: { Accept: 'application/json' } });
    if (state.jobPage !== id) return;  // the page changed while loading
    if (!res.ok) {  // e.g. the job left the queue since the list was read
      const body = await res.json().catch(() => ({}));
      missing.textContent = 'No explanation for job ' + id + ': ' + (body.error || 'HTTP ' + res.status);
      missing.classList.remove('hidden');
      why.classList.add('hidden');
      return;
    }
    renderWhy(await res.json(), now);
  }

  function timeCell(t, now) {
    if (t === null || t === undefined) return td('–', 'muted');
    const cell = td(t > now ? until(t, now) : ago(t, now), 'nowrap', iso(t));
    cell.dataset.at = String(t);
    return cell;
  }

  function renderWhy(a, now) {
    const box = document.getElementById('why');
    box.dataset.jobId = a.job_id;
    box.dataset.reasonCode = a.reason_code || '';
    box.classList.remove('hidden');
    setText('why-reason', a.reason_code || a.state);
    setText('why-kind', (a.reason_kind || '') + (a.reason_code && !a.reason_known ? ' (code not known to schedmate)' : ''));
    setText('why-explanation', a.explanation || '');
    const exp = document.getElementById('why-expected');
    exp.dataset.at = a.expected_start === null || a.expected_start === undefined ? '' : String(a.expected_start);
    exp.textContent = exp.dataset.at === '' ? 'not estimated'
      : until(a.expected_start, now) + ' (' + iso(a.expected_start) + ')';
    const ev = (a.evidence || []).map((e) => {
      const v = e.value === undefined || e.value === null ? '' : String(e.value);
      return el('tr', { data: { kind: e.kind, jobId: e.job_id || '', node: e.node || '', value: v } }, [
        td(e.kind, 'mono'),
        td(e.text, 'reason'),
        e.job_id ? el('td', { cls: 'mono' }, [jobLink(e.job_id)]) : td('', 'muted'),
        td(e.node || '', 'mono'),
        td(e.partition || ''),
        timeCell(e.at, now),
        td(v, 'num'),
        td(e.source || '', 'muted'),
      ]);
    });
    replaceRows('why-evidence', ev, 'No evidence.', 8);
    const sg = (a.suggestions || []).map((x) => {
      const t = x.expected_start === null || x.expected_start === undefined ? '' : String(x.expected_start);
      return el('tr', { data: { change: x.change, expectedStart: t } }, [
        el('td', {}, [el('code', { text: x.change })]),
        t === '' ? td('not estimated', 'muted') : td(until(x.expected_start, now), 'nowrap', iso(x.expected_start)),
        td(x.why, 'reason'),
      ]);
    });
    replaceRows('why-suggestions', sg, 'Nothing to suggest.', 3);
  }

  // ---- anomalies (GET /v1/anomalies) ----
  function anomalyList(data) {
    if (Array.isArray(data)) return data;
    return data && Array.isArray(data.anomalies) ? data.anomalies : [];
  }

  function severityKind(s) {
    return s === 'critical' ? 'bad' : s === 'warning' ? 'wait' : 'muted';
  }

  function cmp(a, b) { return a < b ? -1 : a > b ? 1 : 0; }

  function renderAnomalies(list, now) {
    const rank = { critical: 0, warning: 1, info: 2 };
    // Most severe first, then oldest, then kind and subject (a stable order across polls).
    const sorted = list.slice().sort((a, b) =>
      (rank[a.severity] ?? 3) - (rank[b.severity] ?? 3) || a.since - b.since ||
      cmp(a.kind, b.kind) ||
      cmp(String(a.job_id || a.node || ''), String(b.job_id || b.node || '')));
    const rows = sorted.map((a) => el('tr', {
      data: { kind: a.kind, subject: a.job_id ? 'job ' + a.job_id : 'node ' + a.node,
              severity: a.severity, since: a.since },
    }, [
      td(a.kind, 'strong'),
      a.job_id ? el('td', { cls: 'mono' }, [document.createTextNode('job '), jobLink(a.job_id)])
        : td('node ' + (a.node || ''), 'mono'),
      td(ago(a.since, now), 'nowrap', iso(a.since)),
      el('td', {}, [badge(a.severity, severityKind(a.severity))]),
      td(a.evidence, 'reason'),
      td(a.suggestion, 'reason'),
    ]));
    replaceRows('anomalies', rows, 'No anomalies flagged.', 6);
    const counts = new Map();
    for (const a of list) counts.set(a.kind, (counts.get(a.kind) || 0) + 1);
    const kinds = Array.from(counts.keys()).sort();
    document.getElementById('anomaly-counts').replaceChildren(...kinds.map((k) =>
      el('li', { data: { kind: k } }, [el('span', { cls: 'n', text: counts.get(k) }),
                                       el('span', { text: ' ' + k })])));
    setText('anomalies-count', String(list.length));
    setText('nav-anomalies', list.length ? String(list.length) : '');
  }

  // ---- what-if (POST /v1/whatif, the same run as `schedmate whatif`) ----
  function whatifStatus(text, kind) {
    const s = document.getElementById('whatif-status');
    s.textContent = text;
    s.className = kind || 'muted';
  }

  // The request body from the form; throws {field, message} for a line it cannot read.
  function whatifBody(form) {
    const list = (v) => v.split(/[\s,]+/).map((x) => x.trim()).filter((x) => x !== '');
    const body = {};
    const add = list(form.elements.add_nodes.value);
    if (add.length) body.add_nodes = add;
    const rem = list(form.elements.remove_nodes.value);
    if (rem.length) body.remove_nodes = rem;
    const load = form.elements.load.value.trim();
    if (load !== '') body.load = Number(load);
    const policy = form.elements.policy.value.trim();
    if (policy !== '') body.policy = policy;
    const seeds = form.elements.seeds.value.trim();
    if (seeds !== '') body.seeds = Number(seeds);
    const lines = form.elements.set.value.split('\n').map((x) => x.trim()).filter((x) => x !== '');
    if (lines.length) {
      body.set = {};
      lines.forEach((line, i) => {
        const eq = line.indexOf('=');
        if (eq <= 0) throw { field: 'set', message: 'set: line ' + (i + 1) + ': expected KEY=VALUE' };
        body.set[line.slice(0, eq).trim()] = line.slice(eq + 1).trim();
      });
    }
    return body;
  }

  async function runWhatIf(form) {
    for (const i of form.querySelectorAll('.invalid')) {
      i.classList.remove('invalid');
      i.removeAttribute('aria-invalid');
    }
    const markField = (field) => {
      const input = form.querySelector('[data-field="' + field + '"]');
      if (input) { input.classList.add('invalid'); input.setAttribute('aria-invalid', 'true'); }
      form.dataset.errorField = field || '';
    };
    let body;
    try {
      body = whatifBody(form);
    } catch (e) {
      markField(e.field);
      whatifStatus(e.message, 'bad');
      return;
    }
    const button = document.getElementById('whatif-run');
    button.disabled = true;
    form.dataset.state = 'running';
    whatifStatus('running…');
    try {
      const res = await fetch('/v1/whatif', {
        method: 'POST', cache: 'no-store',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
        body: JSON.stringify(body),
      });
      const data = await res.json().catch(() => ({ error: 'HTTP ' + res.status }));
      if (!res.ok) {
        form.dataset.state = 'error';
        form.dataset.status = String(res.status);
        markField(data.field);
        whatifStatus(res.status === 429 ? 'another what-if is running; try again shortly'
          : data.error || 'HTTP ' + res.status, 'bad');
        return;
      }
      renderWhatIf(data);
      form.dataset.state = 'done';
      form.dataset.status = String(res.status);
      form.dataset.errorField = '';
      const took = data.timing_s.baseline + data.timing_s.scenario_max;
      whatifStatus('done: ' + data.history_jobs + ' jobs of ' + data.history_source + ', ' +
                   (took < 1 ? (took * 1000).toFixed(1) + ' ms' : took.toFixed(2) + ' s') +
                   ' per baseline + scenario run');
    } finally {
      button.disabled = false;
    }
  }

  function metricCell(v, fmt) {
    const cell = td(v === null || v === undefined ? '–' : fmt(v), 'num');
    if (v !== null && v !== undefined) cell.dataset.value = String(v);
    return cell;
  }

  function renderWhatIf(r) {
    const pct = (v) => (v * 100).toFixed(1) + '%';
    const secs = (v) => num(v, 1) + ' s';
    const whole = (v) => String(v);
    // The relative change; for waits and JCT (lowerIsBetter) coloured by whether it helps.
    const change = (a, b, lowerIsBetter) => {
      if (!isFinite(a) || !isFinite(b) || a === 0) return td(a === b ? '0%' : '–', 'num muted');
      const d = ((b - a) / a) * 100;
      const tone = !lowerIsBetter || d === 0 ? '' : d < 0 ? 'good' : 'worse';
      const cell = td((d > 0 ? '+' : '') + d.toFixed(1) + '%', 'num ' + tone);
      cell.dataset.value = d.toFixed(3);
      return cell;
    };
    const rows = [
      ['avg_queue_s', 'Avg queue wait', secs, true],
      ['p95_queue_s', 'p95 queue wait', secs, true],
      ['avg_jct_s', 'Avg JCT', secs, true],
      ['utilisation', 'GPU utilisation', pct, false],
      ['jobs', 'Jobs finished', whole, false],
    ].map(([key, label, fmt, lowerIsBetter]) => {
      const a = r.baseline[key], b = r.scenario[key];
      const sp = r.spread && r.spread[key] ? r.spread[key].stdev : null;
      return el('tr', { data: { metric: key } }, [
        td(label), metricCell(a, fmt), metricCell(b, fmt),
        key === 'jobs' ? td('', 'num') : change(a, b, lowerIsBetter),
        sp === null || r.spread.runs < 2 ? td('–', 'num muted') : metricCell(sp, fmt)]);
    });
    rows.push(el('tr', { data: { metric: 'gpus' } }, [
      td('Cluster GPUs'), metricCell(r.cluster.baseline_gpus, whole),
      metricCell(r.cluster.scenario_gpus, whole),
      change(r.cluster.baseline_gpus, r.cluster.scenario_gpus, false), td('', 'num')]));
    replaceRows('whatif-summary', rows, '', 5);
    const names = Array.from(new Set(Object.keys(r.baseline.per_partition || {})
      .concat(Object.keys(r.scenario.per_partition || {})))).sort();
    const prow = names.map((n) => {
      const a = (r.baseline.per_partition || {})[n] || {};
      const b = (r.scenario.per_partition || {})[n] || {};
      return el('tr', { data: { partition: n } }, [
        td(n, 'mono'), metricCell(a.jobs, whole),
        metricCell(a.avg_queue_s, secs), metricCell(b.avg_queue_s, secs),
        metricCell(a.p95_queue_s, secs), metricCell(b.p95_queue_s, secs),
        metricCell(a.avg_jct_s, secs), metricCell(b.avg_jct_s, secs)]);
    });
    replaceRows('whatif-partitions', prow, 'No partitions.', 8);
    setText('whatif-changes', 'baseline: ' + r.policy.baseline + ' on ' + r.cluster.baseline_gpus +
            ' GPUs · scenario: ' + (r.changes.length ? r.changes.join(', ') : 'no change') +
            (r.spread.runs > 1 ? ' · mean of ' + r.spread.runs + ' seeds (' + r.spread.seeds.join(', ') + ')' : ''));
    document.getElementById('whatif-notes').replaceChildren(
      ...(r.notes || []).map((n) => el('li', { text: n })));
    document.getElementById('whatif-result').classList.remove('hidden');
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
      const [health, jobs, failures, actions, nodes, sched, anomalies] = await Promise.all([
        getJson('/healthz'), getAllJobs(), getJson('/v1/failures'),
        getJson('/v1/actions'), getJson('/v1/nodes'), getJson('/v1/scheduling'),
        getJson('/v1/anomalies')]);
      const now = jobs.updated_at || health.updated_at;
      state.now = now;
      state.jobs = jobs.jobs;
      state.anomalies = anomalyList(anomalies);
      const running = jobs.jobs.filter((j) => j.state === 'RUNNING').sort(jobOrder);
      if (!running.some((j) => j.id === state.selected))
        state.selected = running.length ? running[0].id : null;
      renderStatus(health, now, actions.dry_run || health.dry_run);
      renderTiles(jobs.jobs, failures.failures, nodes.nodes, state.anomalies);
      renderJobs(jobs.jobs, now);
      renderFailures(failures.failures, now);
      renderActions(actions.actions, now);
      renderNodes(nodes.nodes);
      renderOrder(sched);
      renderAnomalies(state.anomalies, now);
      await renderChart();
      if (state.page === 'job') await renderJobPage(now);
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
    route();
    window.addEventListener('hashchange', () => { route(); refresh(); });
    document.getElementById('whatif-form').addEventListener('submit', (ev) => {
      ev.preventDefault();
      runWhatIf(ev.target).catch((err) => whatifStatus('failed: ' + err.message, 'bad'));
    });
    document.addEventListener('visibilitychange', () => { if (!document.hidden) refresh(); });
    document.getElementById('queue-prev').addEventListener('click', () => turnQueuePage(-1));
    document.getElementById('queue-next').addEventListener('click', () => turnQueuePage(1));
    loop();
  });
})();
