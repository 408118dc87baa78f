// How a Session call's result crosses from wasm to page code, in the worker and on the page alike.

/**
 * `value` as plain data: a wasm-bindgen object (a `Frame`) becomes an object holding what each of
 * its zero-argument methods returns, and is freed; typed arrays are listed in `transfer`, so a
 * postMessage moves their buffers instead of copying them.
 */
export function portable(value, transfer = []) {
  if (ArrayBuffer.isView(value)) {
    transfer.push(value.buffer);
    return value;
  }
  if (value && typeof value === "object" && "__wbg_ptr" in value) {
    const out = {};
    const proto = Object.getPrototypeOf(value);
    for (const name of Object.getOwnPropertyNames(proto)) {
      const f = proto[name];
      if (name === "constructor" || name === "free" || name.startsWith("__") || typeof f !== "function" || f.length > 0) continue;
      out[name] = portable(value[name](), transfer);
    }
    value.free();
    return out;
  }
  return value;
}
