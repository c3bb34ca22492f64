// Metric pages: (1) the start form shows only the chosen metric's parameters;
// (2) running runs and PEM trainings are polled (URLs from the json_script block
// "metric-poll") and the page reloads when one finishes. No inline script: CSP.
(function () {
  "use strict";

  const select = document.getElementById("id_metric");
  const groups = document.querySelectorAll("fieldset.metric-params");
  function showChosen() {
    if (!select) return;
    groups.forEach(function (fs) {
      const on = fs.getAttribute("data-metric") === select.value;
      fs.hidden = !on;
      fs.disabled = !on;
    });
  }
  if (select && groups.length) {
    select.addEventListener("change", showChosen);
    showChosen();
  }

  const data = document.getElementById("metric-poll");
  if (!data) return;
  let jobs = [];
  try { jobs = JSON.parse(data.textContent) || []; } catch (e) { jobs = []; }
  const FINISHED = ["succeeded", "failed", "cancelled"];

  jobs.forEach(function (job) {
    const row = document.getElementById((String(job.id).indexOf("pem-") === 0 ? "" : "run-") + job.id);
    const bar = row ? row.querySelector("progress") : null;
    const status = row ? row.querySelector('[data-field="status"]') : null;
    const detail = row ? row.querySelector('[data-field="detail"]') : null;
    function poll() {
      fetch(job.url, { credentials: "same-origin", headers: { Accept: "application/json" } })
        .then(function (r) { if (!r.ok) throw new Error(r.status); return r.json(); })
        .then(function (s) {
          if (bar) { bar.value = s.percent; bar.textContent = s.percent + "%"; }
          if (status) status.textContent = s.phase || s.status;
          if (detail && s.total) detail.textContent = s.done + " of " + s.total + (s.unit ? " " + s.unit : "");
          if (FINISHED.indexOf(s.status) >= 0) {
            window.location.reload();
          } else {
            window.setTimeout(poll, 1000);
          }
        })
        .catch(function () { window.setTimeout(poll, 3000); });
    }
    window.setTimeout(poll, 500);
  });
})();
