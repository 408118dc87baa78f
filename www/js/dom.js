// Small DOM helpers shared by the page's modules.

/**
 * A new `tag` element with class `cls` (none when empty or absent) and text `text` (none when
 * absent). Text is set as textContent, never parsed as HTML, so it may come from a trace.
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {string} [cls]
 * @param {string} [text]
 * @returns {HTMLElementTagNameMap[K]}
 */
export function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}
