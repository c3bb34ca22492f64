// Live progress for background jobs: every element with data-job-url is polled
// until its job finishes, then the page reloads to show the result.
(function () {
  "use strict";
  const items = document.querySelectorAll("[data-job-url]");
  items.forEach(function (el) {
    const url = el.getAttribute("data-job-url");
    if (!url) return;
    const bar = el.querySelector("progress");
    const status = el.querySelector('[data-field="status"]');
    const detail = el.querySelector('[data-field="detail"]');
    function poll() {
      fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } })
        .then(function (r) { return r.json(); })
        .then(function (job) {
          if (bar) bar.value = job.percent;
          if (status) status.textContent = job.phase || job.status;
          if (detail) detail.textContent = job.done + " of " + job.total;
          if (["succeeded", "failed", "cancelled"].indexOf(job.status) >= 0) {
            window.location.reload();
          } else {
            window.setTimeout(poll, 1000);
          }
        })
        .catch(function () { window.setTimeout(poll, 3000); });
    }
    poll();
  });
})();
