// Researcher's progress page: poll the progress JSON and update the numbers in place.
const root = document.getElementById("progress-root");
const note = document.getElementById("refresh-note");
const EVERY_MS = 5000;

function setText(scope, field, value) {
  const el = scope.querySelector(`[data-field="${field}"]`);
  if (el) el.textContent = String(value);
}

function apply(data) {
  ["done", "total", "judgments", "revisions"].forEach((f) => setText(root, f, data[f]));
  data.judges.forEach((j) => {
    const row = root.querySelector(`tr[data-judge="${CSS.escape(j.judge)}"]`);
    if (!row) return;
    setText(row, "done", j.done);
    setText(row, "total", j.total);
    setText(row, "last", j.last_submitted_at ? j.last_submitted_at.replace("T", " ").slice(0, 19) : "—");
    const bar = row.querySelector("progress");
    if (bar) {
      bar.max = j.total || 1;
      bar.value = j.done;
      bar.setAttribute("aria-label", `${j.judge}: ${j.done} of ${j.total}`);
    }
  });
  data.systems.forEach((s) => {
    const row = root.querySelector(`tr[data-system="${CSS.escape(s.system)}"]`);
    if (!row) return;
    setText(row, "rated", s.rated);
    setText(row, "assigned", s.assigned);
  });
  if (note) note.textContent = `Updated ${new Date().toLocaleTimeString()}; refreshes every few seconds.`;
}

function poll() {
  fetch(root.dataset.url, { credentials: "same-origin", headers: { Accept: "application/json" } })
    .then((r) => (r.ok ? r.json() : Promise.reject(r.status)))
    .then(apply)
    .catch(() => {
      if (note) note.textContent = "Could not refresh; retrying.";
    })
    .finally(() => window.setTimeout(poll, EVERY_MS));
}

if (root && root.dataset.url) window.setTimeout(poll, EVERY_MS);
