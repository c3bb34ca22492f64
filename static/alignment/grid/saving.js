// Saving: drafts (PUT, debounced, one at a time) and the submission (POST), with the
// revision the server hands back, conflicts (409: the pair changed elsewhere) and the
// unsaved edits sent on the way out.
//
// opts: data (the page's grid-data), readonly, lists() → {sure, possible},
// activeSeconds() → number, statusEl, badge, submitBtn (each may be null).

import { msg } from "./messages.js";

export function makeSaver(opts) {
  var data = opts.data, readonly = opts.readonly, statusEl = opts.statusEl, badge = opts.badge;
  var submitBtn = opts.submitBtn;
  var revision = data.revision, dirty = false, timer = null, blocked = false, submitting = false;
  var queue = Promise.resolve();
  function httpError(status) { return msg("msgHttpError", "error {status}", { status: status }); }
  function setStatus(text, isError) {
    if (!statusEl) return;
    statusEl.textContent = text;
    statusEl.classList.toggle("error", !!isError);
  }
  function links() {
    var l = opts.lists();
    return { sure: l.sure, possible: l.possible, revision: revision, active_seconds: Math.round(opts.activeSeconds()) };
  }
  function send(url, method, body, keepalive) {
    return fetch(url, {
      method: method, credentials: "same-origin", keepalive: !!keepalive,
      headers: { "Content-Type": "application/json", Accept: "application/json", "X-CSRFToken": data.csrf_token },
      body: JSON.stringify(body),
    }).then(function (r) {
      return r.json().catch(function () { return {}; }).then(function (json) { return { ok: r.ok, status: r.status, body: json }; });
    });
  }
  function conflict(detail) {
    blocked = true;
    setStatus((detail || msg("msgChangedElsewhere", "This pair changed elsewhere.")) + " "
      + msg("msgReload", "Reload the page to continue."), true);
    if (submitBtn) submitBtn.disabled = true;
  }
  function scheduleSave() {
    if (readonly || blocked) return;
    dirty = true;
    setStatus(msg("msgUnsaved", "Unsaved changes…"));
    window.clearTimeout(timer);
    timer = window.setTimeout(saveNow, 600);
  }
  // Saves run one at a time (each needs the revision the previous one returned).
  function saveNow() {
    window.clearTimeout(timer);
    queue = queue.then(function () {
      if (!dirty || blocked || submitting) return;
      dirty = false;
      setStatus(msg("msgSaving", "Saving…"));
      return send(data.urls.draft, "PUT", links()).then(function (res) {
        if (res.ok) {
          revision = res.body.revision;
          if (badge) badge.textContent = msg("msgDraftSaved", "Draft saved");
          if (dirty) { setStatus(msg("msgUnsaved", "Unsaved changes…")); timer = window.setTimeout(saveNow, 600); }
          else setStatus(msg("msgSaved", "Saved"));
        } else if (res.status === 409) {
          conflict(res.body.detail);
        } else {
          dirty = true;
          setStatus(msg("msgNotSaved", "Not saved: {detail}", { detail: res.body.detail || httpError(res.status) }), true);
        }
      }, function () {
        dirty = true;
        setStatus(msg("msgNotSavedOffline", "Not saved (no connection); retrying…"), true);
        timer = window.setTimeout(saveNow, 3000);
      });
    });
    return queue;
  }
  function submit() {
    if (readonly || blocked || submitting) return;
    submitting = true;
    if (submitBtn) submitBtn.disabled = true;
    window.clearTimeout(timer);
    setStatus(msg("msgSubmitting", "Submitting…"));
    queue = queue.then(function () {
      return send(data.urls.submit, "POST", links()).then(function (res) {
        if (res.ok) {
          dirty = false;
          setStatus(msg("msgSubmitted", "Submitted"));
          window.location.assign(res.body.next_url || data.urls.after_submit);
          return;
        }
        submitting = false;
        if (res.status === 409) return conflict(res.body.detail);
        if (submitBtn) submitBtn.disabled = false;
        setStatus(msg("msgNotSubmitted", "Not submitted: {detail}", { detail: res.body.detail || httpError(res.status) }), true);
      }, function () {
        submitting = false;
        if (submitBtn) submitBtn.disabled = false;
        setStatus(msg("msgNotSubmittedOffline", "Not submitted (no connection); try again."), true);
      });
    });
  }
  if (!readonly) {
    // Leaving with unsaved edits: send them on the way out, and ask if one is still pending.
    window.addEventListener("pagehide", function () {
      if (dirty && !blocked && !submitting) send(data.urls.draft, "PUT", links(), true).catch(function () {});
    });
    window.addEventListener("beforeunload", function (e) {
      if (dirty && !blocked && !submitting) { e.preventDefault(); e.returnValue = ""; }
    });
  }
  return { scheduleSave: scheduleSave, saveNow: saveNow, submit: submit };
}
