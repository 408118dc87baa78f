// What went wrong, in words: the page's and the workers' messages name a failure this way.

/**
 * The words of a thrown value: an Error's message, else the value as text (wasm-bindgen throws the
 * Session's errors as strings, and a rejected promise may carry anything).
 * @param {unknown} err
 * @returns {string}
 */
export function errorText(err) {
  return err instanceof Error ? err.message : String(err);
}
