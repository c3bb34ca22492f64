// Report page: while a report is being built, poll its status (URLs from the
// json_script block "report-poll"), move the <progress> bar, name the phase, and
// reload the page when the build has finished. No inline script: CSP.
(function () {
  "use strict";
  const data = document.getElementById("report-poll");
  if (!data) return;
  let jobs = [];
  try { jobs = JSON.parse(data.textContent) || []; } catch (e) { jobs = []; }
  const FINISHED = ["succeeded", "failed", "cancelled"];

  jobs.forEach(function (job) {
    const card = document.getElementById("report-job-" + job.id);
    const bar = card ? card.querySelector("progress") : null;
    const status = card ? card.querySelector('[data-field="status"]') : null;
    const detail = card ? card.querySelector('[data-field="detail"]') : null;
    function poll() {
      fetch(job.url, { credentials: "same-origin", headers: { Accept: "application/json" } })
        .then(function (r) { if (!r.ok) throw new Error(String(r.status)); return r.json(); })
        .then(function (s) {
          if (bar) { bar.value = s.percent; bar.textContent = s.percent + "%"; }
          if (status) status.textContent = s.phase || s.status;
          if (detail && s.total) detail.textContent = s.done + " of " + s.total + " " + (s.unit || "");
          if (FINISHED.indexOf(s.status) >= 0) {
            window.location.reload();
          } else {
            window.setTimeout(poll, 700);
          }
        })
        .catch(function () { window.setTimeout(poll, 2500); });
    }
    window.setTimeout(poll, 400);
  });
})();
