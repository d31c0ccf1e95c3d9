// referee dashboard: the little behaviour plain HTML lacks. No libraries, no network.
// A table row with data-href opens its link when clicked anywhere (not only on the id).
document.addEventListener("click", (event) => {
  const row = event.target.closest("tr[data-href]");
  if (!row || event.target.closest("a, button, input, select, label")) return;
  if (event.metaKey || event.ctrlKey) window.open(row.dataset.href, "_blank");
  else window.location.href = row.dataset.href;
});
// Number keys 1-4 pick a label in the viewer's audit form; Enter in the note submits it.
document.addEventListener("keydown", (event) => {
  if (event.target.closest("input[type=text], textarea, select")) return;
  const choice = document.querySelector(`form.label-form input[data-key="${event.key}"]`);
  if (choice) { choice.checked = true; choice.focus(); }
});
