// The end of a field study: after a short pause (time to note the code), go back to the platform.
const link = document.getElementById("completion-link");
if (link) {
  const seconds = Number(link.dataset.autoRedirect || 0);
  if (seconds > 0) setTimeout(() => { window.location.assign(link.href); }, seconds * 1000);
}
