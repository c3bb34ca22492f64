// The study dashboard: poll the cached snapshot (GET /api/dashboard/studies/<id>/) and
// redraw the tables in place. Text only (textContent): nothing from the data becomes HTML.
const root = document.getElementById("dashboard-root");
const note = document.getElementById("dash-note");
const EVERY_MS = 3000;

const fmt = (x, digits = 3) => (x === null || x === undefined ? "–" : Number(x).toFixed(digits));
const when = (iso) => (iso ? iso.replace("T", " ").slice(0, 19) : "—");

function cell(tag, text, cls) {
  const el = document.createElement(tag);
  el.textContent = text === null || text === undefined ? "" : String(text);
  if (cls) el.className = cls;
  return el;
}

function rows(tableId, items, build) {
  const body = document.querySelector(`#${tableId} tbody`);
  if (!body) return;
  if (!items.length) {
    const td = cell("td", "None yet.", "muted");
    td.colSpan = document.querySelectorAll(`#${tableId} thead th`).length || 1;
    const tr = document.createElement("tr");
    tr.append(td);
    body.replaceChildren(tr);
    return;
  }
  body.replaceChildren(...items.map((item) => {
    const tr = document.createElement("tr");
    build(tr, item);
    return tr;
  }));
}

function setField(scope, field, value) {
  const el = scope.querySelector(`[data-field="${field}"]`);
  if (el) el.textContent = value === null || value === undefined ? "–" : String(value);
}

function drawProgress(s) {
  const totals = document.getElementById("dash-totals");
  setField(totals, "done", s.totals.done);
  setField(totals, "total", s.totals.total);
  setField(totals, "judgments", s.totals.judgments);
  setField(totals, "judges", s.totals.judges);
  setField(totals, "coverage", `${Math.round(100 * s.coverage.coverage)} %`);
  setField(totals, "k", s.coverage.k);
  const proj = document.getElementById("dash-projection");
  setField(proj, "per_hour", s.projection.per_hour);
  setField(proj, "finish_at", when(s.projection.finish_at));
  setField(proj, "cost_spent", s.projection.cost_spent);
  setField(proj, "cost_projected", s.projection.cost_projected);
  setField(proj, "currency", s.projection.currency);
  setField(proj, "active_median", s.time.active_seconds_median);
  rows("dash-judges", s.judges, (tr, j) => {
    tr.dataset.judge = j.judge;
    tr.append(cell("td", j.judge + (j.excluded ? " (excluded)" : "")), cell("td", j.done, "num"),
      cell("td", j.total, "num"));
    const td = document.createElement("td");
    const bar = document.createElement("progress");
    bar.max = j.total || 1;
    bar.value = j.done;
    bar.setAttribute("aria-label", `${j.judge}: ${j.done} of ${j.total}`);
    td.append(bar);
    tr.append(td, cell("td", fmt((j.active_seconds || 0) / 60, 1), "num"), cell("td", when(j.last_submitted_at)));
  });
  rows("dash-coverage", s.coverage.histogram, (tr, h) => tr.append(cell("td", h.judges, "num"), cell("td", h.items, "num")));
  rows("dash-links", s.links, (tr, l) => tr.append(cell("td", l.label), cell("td", l.state),
    cell("td", l.seats === null ? "no cap" : l.seats, "num"), cell("td", l.taken, "num"), cell("td", l.joined, "num"),
    cell("td", l.completed, "num")));
}

function drawQc(s) {
  // The QC rows are computed with the answers (at most every 30 s by default), not at every refresh.
  document.getElementById("dash-qc-note").textContent = s.answers_at
    ? `Verdicts computed ${when(s.answers_at)}, with the answers.` : "";
  rows("dash-qc", s.qc, (tr, q) => {
    tr.dataset.judge = q.judge;
    const tests = q.tests.map((t) => `${t.name}: ${t.pvalue === null ? "–" : fmt(t.pvalue, 3)}`).join("; ");
    const verdict = q.verdict + (q.flags.length ? ` (${q.flags.join(", ")})` : "");
    tr.append(cell("td", q.judge), cell("td", verdict, `verdict-${q.verdict.replace(/ /g, "-")}`),
      cell("td", tests || "—"), cell("td", `${q.attention.failed} of ${q.attention.answered}`, "num"),
      cell("td", q.screened_out ? `${q.screened_out.rule}: ${q.screened_out.reason}` : "—"));
  });
}

function drawAnswers(s) {
  const a = s.answers || {};
  const answersNote = document.getElementById("dash-answers-note");
  if (!a.available) {
    answersNote.textContent = a.reason || "Not computed yet.";
    ["dash-agreement", "dash-ranking", "dash-metrics"].forEach((id) => rows(id, [], () => {}));
    return;
  }
  const level = a.settings.significance_level === null || a.settings.significance_level === undefined
    ? `${Math.round(100 * a.settings.confidence_level)} % intervals` : `level ${a.settings.significance_level}`;
  answersNote.textContent = `Computed ${when(s.answers_at)} (${a.settings.n_boot} bootstrap resamples, ${level})` +
    (s.answers_current ? "." : "; new judgments since — the next refresh includes them.") +
    (a.note ? ` ${a.note}` : ""); // what a protocol's answers leave out (ESA: span agreement is in the report)
  // What the ranking ranks by: mean scores (absolute), Bradley–Terry strengths (side by side).
  const measure = document.querySelector("#dash-ranking thead th[data-field='measure']");
  if (measure) measure.textContent = a.ranking.measure || "Mean";
  rows("dash-agreement", a.agreement, (tr, g) => tr.append(cell("td", `${g.criterion} (${g.level})`),
    cell("td", fmt(g.alpha), "num"), cell("td", g.ci_low === null && g.ci_high === null ? "—" : `[${fmt(g.ci_low)}, ${fmt(g.ci_high)}]`),
    cell("td", g.n_items, "num")));
  let last = null;
  rows("dash-ranking", a.ranking.systems, (tr, r) => {
    tr.dataset.system = r.system;
    if (last !== null && r.cluster !== last) tr.className = "cluster-sep";
    last = r.cluster;
    tr.append(cell("td", r.rank, "num"), cell("td", r.system), cell("td", fmt(r.mean), "num"),
      cell("td", `[${fmt(r.ci_low)}, ${fmt(r.ci_high)}]`), cell("td", r.cluster === null ? "—" : r.cluster, "num"),
      cell("td", r.pvalue_vs_next === null ? "—" : fmt(r.pvalue_vs_next), "num"));
  });
  const system = Object.fromEntries((a.metrics.system || []).map((m) => [m.metric, m.statistic]));
  rows("dash-metrics", a.metrics.segment || [], (tr, m) => tr.append(cell("td", m.metric), cell("td", fmt(m.statistic), "num"),
    cell("td", fmt(system[m.metric]), "num")));
}

function drawPlan(plan, adaptive) {
  const p = document.getElementById("dash-plan");
  if (plan && plan.status === "done") {
    const r = plan.ranking_right;
    p.textContent = `Plan: ${plan.n_originals} originals × ${plan.judges_per_item || plan.n_judges} judges per item — ` +
      `P(ranking right) ${fmt(r.estimate, 2)} [${fmt(r.low, 2)}, ${fmt(r.high, 2)}] over ${r.n} simulations; ` +
      `α interval width ${fmt(plan.agreement_width, 2)}.`;
  } else if (plan && plan.status === "computing") {
    p.textContent = plan.started ? "Planning: the simulations are running." : "Planning: the plan waits for a worker.";
  } else if (plan && plan.status === "failed") {
    p.textContent = `The last plan failed: ${plan.error || "no reason given"}`;
  }
  const el = document.getElementById("dash-adaptive");
  if (adaptive && adaptive.enabled) {
    el.textContent = `Adaptive allocation on: P(ranking wrong) ≤ ${fmt(adaptive.wrong_bound, 3)} after ` +
      `${adaptive.judgments_seen} judgments by ${adaptive.judges_seen || 0} judges` + (adaptive.stopped_at ? `; stopped ${when(adaptive.stopped_at)}: ${adaptive.stop_reason}` : ".");
  } else {
    el.textContent = adaptive && adaptive.stopped_at ? `Stopped ${when(adaptive.stopped_at)}: ${adaptive.stop_reason}` : "Adaptive allocation off: judges rate their items in their seeded order.";
  }
}

function apply(data) {
  const s = data.snapshot;
  if (s) {
    drawProgress(s);
    drawQc(s);
    drawAnswers(s);
    drawPlan(data.plan, s.adaptive);
  }
  root.dataset.version = s ? s.version : "";
  if (s) showChecked(data.current);
  else {
    root.dataset.current = String(data.current);
    note.textContent = "The first figures are being computed…";
  }
}

// The note under the figures: when they were last checked and whether new data are waiting for
// the next refresh (an unchanged answer, a 304, says only this).
function showChecked(current) {
  root.dataset.current = String(current);
  note.textContent = `Updated ${new Date().toLocaleTimeString()}${current ? "" : " (refreshing: new data)"}; refreshes every few seconds.`;
}

// The ETag of the last answer drawn: sent back with each poll, so that an unchanged answer
// comes as a 304 without a body (the snapshot is hundreds of KiB at 500 judges). The browser
// does not do this by itself: a signed-in person's answers are never stored (no-store).
let lastEtag = null;
// The server says when the answer may next change (Paraeval-Poll-After, seconds): no sooner.
let waitMs = EVERY_MS;

function poll() {
  const headers = { Accept: "application/json" };
  if (lastEtag) headers["If-None-Match"] = lastEtag;
  fetch(root.dataset.url, { credentials: "same-origin", cache: "no-store", headers })
    .then((r) => {
      const after = Number(r.headers.get("Paraeval-Poll-After"));
      waitMs = after > 0 ? Math.max(EVERY_MS, after * 1000) : EVERY_MS;
      // A 304 says whether the snapshot drawn is still current in a header (it has no body):
      // the study moving past it does not change its ETag, so it is not sent again for that.
      if (r.status === 304) return { unchanged: true, current: r.headers.get("Paraeval-Current") === "true" };
      if (!r.ok) return Promise.reject(r.status);
      return r.json().then((data) => {
        lastEtag = r.headers.get("ETag");
        return data;
      });
    })
    .then((data) => {
      if (!data.unchanged) apply(data);
      else if (root.dataset.version) showChecked(data.current);
    })
    .catch(() => {
      note.textContent = "Could not refresh; retrying.";
      waitMs = EVERY_MS;
    })
    .finally(() => window.setTimeout(poll, waitMs));
}

if (root && root.dataset.url) poll();
