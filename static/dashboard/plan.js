// The planner page: while the simulations run, poll the plan and reload when it is done.
const box = document.getElementById("plan-result");

function poll() {
  fetch(box.dataset.url, { credentials: "same-origin", headers: { Accept: "application/json" } })
    .then((r) => (r.ok ? r.json() : Promise.reject(r.status)))
    .then((plan) => {
      if (plan.status && plan.status !== "computing") window.location.reload();
      else window.setTimeout(poll, 2000);
    })
    .catch(() => window.setTimeout(poll, 5000));
}

if (box && box.dataset.status === "computing") window.setTimeout(poll, 2000);
