// Errors from an htmx call (the API's {"error", "detail"} JSON, or a page) shown in one place:
// htmx swaps nothing on a 4xx/5xx, and a silent click would look like success.
document.addEventListener("htmx:responseError", (event) => {
  const flash = document.getElementById("flash");
  if (!flash) return;
  let text = event.detail.xhr.responseText || event.detail.xhr.statusText;
  try {
    const body = JSON.parse(text);
    text = body.detail || body.error || text;
  } catch (_) { /* not JSON: show as is */ }
  flash.textContent = text;
  flash.hidden = false;
});
document.addEventListener("htmx:beforeRequest", () => {
  const flash = document.getElementById("flash");
  if (flash) flash.hidden = true;
});
