// The header's ⋯ menu. The bar stays one line at any width (style.css): on a narrow page the
// less used controls (Open job folder…, Compare with…, the Python frames and critical path
// toggles) fold into a menu that this button opens; on a wide one the button is not shown and
// they sit in the bar. The menu closes on a choice, a click elsewhere or Escape.

const $ = (id) => document.getElementById(id);

export function startHeader() {
  const button = $("bar-more-button");
  const menu = $("bar-more");
  const show = (open) => {
    menu.classList.toggle("open", open);
    button.setAttribute("aria-expanded", String(open));
  };
  button.addEventListener("click", (ev) => {
    ev.stopPropagation();
    show(!menu.classList.contains("open"));
  });
  // A choice in the menu (a click on one of its buttons or labels) closes it.
  menu.addEventListener("click", (ev) => {
    if (/** @type {Element} */ (ev.target).closest("button, label")) show(false);
  });
  document.addEventListener("click", (ev) => {
    if (!menu.contains(/** @type {Node} */ (ev.target)) && ev.target !== button) show(false);
  });
  document.addEventListener("keydown", (ev) => {
    if (ev.key === "Escape") show(false);
  });
}
