// Number formatting with units, shared by the tables, the details panel and the tooltip.

/** A duration in ns with three significant digits: 850 ns, 12.3 µs, 1.50 ms, 2.04 s. */
export function duration(ns) {
  if (typeof ns !== "number" || !Number.isFinite(ns)) return "–";
  const a = Math.abs(ns);
  const [unit, name] = a >= 1e9 ? [1e9, "s"] : a >= 1e6 ? [1e6, "ms"] : a >= 1e3 ? [1e3, "µs"] : [1, "ns"];
  const v = ns / unit;
  const d = unit === 1 || Math.abs(v) >= 100 ? 0 : Math.abs(v) >= 10 ? 1 : 2;
  return `${v.toFixed(d)} ${name}`;
}

/** Bytes in decimal units: 512 B, 1.2 kB, 34.5 MB. */
export function bytes(n) {
  if (typeof n !== "number" || !Number.isFinite(n)) return "–";
  const a = Math.abs(n);
  const [unit, name] = a >= 1e9 ? [1e9, "GB"] : a >= 1e6 ? [1e6, "MB"] : a >= 1e3 ? [1e3, "kB"] : [1, "B"];
  return unit === 1 ? `${n} B` : `${(n / unit).toFixed(Math.abs(n / unit) >= 100 ? 0 : 1)} ${name}`;
}

/**
 * Memory as PyTorch's `key_averages().table()` and `sightline ops` print it: powers of 1024 with
 * two decimals, labelled B, KB, MB, GB (960.03 MB, not 1.0 GB).
 */
export function memory(n) {
  if (typeof n !== "number" || !Number.isFinite(n)) return "–";
  const a = Math.abs(n);
  const K = 1024;
  const [unit, name] = a >= K ** 3 ? [K ** 3, "GB"] : a >= K ** 2 ? [K ** 2, "MB"] : a >= K ? [K, "KB"] : [1, "B"];
  return unit === 1 ? `${n} B` : `${(n / unit).toFixed(2)} ${name}`;
}

export function count(n) {
  return typeof n === "number" ? n.toLocaleString("en-US") : String(n ?? "");
}

export function percent(x) {
  return typeof x === "number" && Number.isFinite(x) ? `${x.toFixed(x >= 10 ? 1 : 2)} %` : "–";
}

/** MB with one decimal, for the progress line. */
export function mb(n) {
  return `${(n / 1e6).toFixed(1)} MB`;
}

/** A column as the core declares it, sent beside a table's rows. @typedef {import("../generated/answers.js").Column} Declared */

/** formatValue's kind for each declared unit (memory as PyTorch prints it, powers of 1024). */
const UNIT_KINDS = { text: "text", count: "int", ns: "ns", us: "us", bytes: "memory", pct: "pct", fraction: "fraction", ratio: "change", number: "num", flag: "text", data: "text" };

/** How the values of a declared unit are formatted and sorted (a formatValue kind). */
export function unitKind(unit) {
  return UNIT_KINDS[unit] ?? "text";
}

/** A declared label as the page heads it: `{device}` as "device", the first letter capitalised. */
export function declaredLabel(text) {
  const s = text.replace(/\{device\}/g, "device");
  return s.charAt(0).toUpperCase() + s.slice(1);
}

/**
 * How a column's values are shown, guessed from its key (for the tables that do not declare
 * their columns: slices by name, a range, memory) as the analyses name them:
 * `*_ns` durations, `*_us` microseconds, `*_bytes`/`*mem*` bytes, `*_pct`/`*percent*`/`*_share`
 * percentages, counts for other integers, text otherwise.
 */
export function kindOf(key, sample) {
  const k = key.toLowerCase();
  if (typeof sample !== "number") return "text";
  if (k.endsWith("_ns") || k === "ns") return "ns";
  if (k.endsWith("_us") || k === "us") return "us";
  if (k.endsWith("_bytes") || k.includes("mem") || k === "bytes") return "bytes";
  if (k.endsWith("_pct") || k.includes("percent") || k.endsWith("_share")) return "pct";
  return Number.isInteger(sample) ? "int" : "num";
}

export function formatValue(kind, v) {
  // A ratio NEW / BASE as the change in percent; none where BASE had nothing: it is new.
  if (kind === "change") return typeof v === "number" ? `${v >= 1 ? "+" : ""}${percent(100 * (v - 1))}` : "new";
  if (v === null || v === undefined) return "";
  switch (kind) {
    case "ns": return duration(v);
    case "us": return duration(v * 1e3);
    case "bytes": return bytes(v);
    case "memory": return memory(v);
    case "pct": return percent(v);
    case "fraction": return percent(100 * v);
    case "int": return count(v);
    case "num": return typeof v === "number" ? v.toLocaleString("en-US", { maximumFractionDigits: 3 }) : String(v);
    // Flags as the CLI prints them (Tensor Cores: yes / no).
    case "text": if (typeof v === "boolean") return v ? "yes" : "no";
    // falls through
    // Lists (input shapes) as Python prints them, as PyTorch's table shows them: [[32, 16], []].
    default: return Array.isArray(v) ? JSON.stringify(v).replace(/,/g, ", ") : typeof v === "object" ? JSON.stringify(v) : String(v);
  }
}

/** A column label from a key, for the tables that do not declare their columns: `self_cpu_us` -> "Self CPU", `self_cpu_pct` -> "Self CPU %". */
export function label(key) {
  const pct = /_pct$/i.test(key) ? " %" : "";
  const words = key
    .replace(/_(ns|us|bytes|pct)$/i, "")
    .split("_")
    .map((w) => ({ cpu: "CPU", gpu: "GPU", mem: "mem", avg: "avg" })[w] || w)
    .join(" ");
  return words.charAt(0).toUpperCase() + words.slice(1) + pct;
}

/** Template and wrapper names that say nothing about which kernel it is. */
const GENERIC = new Set(["gpu_kernel_impl", "gpu_kernel_impl_nocast", "BinaryFunctor", "AUnaryFunctor", "BUnaryFunctor", "operator", "lambda", "OffsetCalculator", "TrivialOffsetCalculator", "LoadWithoutCast", "StoreWithoutCast", "LoadWithCast", "StoreWithCast", "array", "Array", "Half", "BFloat16", "complex", "tuple", "pair", "function", "ReduceOp", "func_wrapper", "func_wrapper_t", "enable_if"]);

/** A scalar type, which tells no kernel from another by itself. */
const SCALAR = /^(?:unsigned |signed )?(?:float|double|int|long|bool|char|short|half|__half|__nv_bfloat16|__nv_half|Half|BFloat16|u?int\d+_t|void|float\d+_t)\b/;

/**
 * A C++ kernel or function name as a list shows it: its own name without namespaces, its template
 * arguments folded, and the first name among them that tells it apart from its siblings (a
 * functor, the operator whose lambda it runs) in brackets:
 * `void at::native::elementwise_kernel<128, 4, gpu_kernel_impl_nocast<BinaryFunctor<float, float,
 * float, binary_internal::MulFunctor<float> > > ...>(int, ...)` -> `elementwise_kernel<…>(MulFunctor)`.
 * Short template arguments of numbers and types (`wgrad_alg0_engine<float, 128, 6>`) stay, as
 * they tell variants apart; a name that is not a C++ signature is left as it is.
 */
export function shortName(name) {
  if (typeof name !== "string" || !(name.includes("<") || name.startsWith("void "))) return name;
  let s = name.startsWith("void ") ? name.slice(5) : name;
  // A return type written before the name (`std::enable_if<..., void>::type kernel<...>`).
  const type = s.match(/^std::enable_if<.*?>::type /);
  if (type) s = s.slice(type[0].length);
  // The name itself: up to its first template bracket or parameter list at depth 0 (a namespace
  // such as `(anonymous namespace)::` is skipped).
  s = s.replace(/\(anonymous namespace\)::/g, "");
  const open = s.search(/[<(]/);
  if (open < 0) return s;
  const base = s.slice(0, open).split("::").pop();
  if (s[open] === "(") return `${base}()`;
  // The template arguments: up to the matching bracket.
  let depth = 0;
  let end = open;
  for (; end < s.length; end++) {
    if (s[end] === "<") depth++;
    else if (s[end] === ">" && --depth === 0) break;
  }
  const args = s.slice(open + 1, end);
  // Names followed by a bracket or a parameter list: templates, functions and functors.
  let tag = null;
  for (const m of args.matchAll(/([A-Za-z_][\w]*(?:::[A-Za-z_~][\w]*)*)\s*[<(]/g)) {
    const last = m[1].split("::").pop();
    if (!GENERIC.has(last)) {
      tag = last;
      break;
    }
  }
  // Else the first argument where it is a name (cutlass's kernels carry their configuration so).
  const first = args.split(",")[0].trim();
  if (!tag && /^[A-Za-z_]/.test(first) && !SCALAR.test(first.split("::").pop())) tag = first.split("::").pop();
  if (tag) return `${base}<…>(${tag})`;
  return args.length <= 40 ? `${base}<${args}>` : `${base}<…>`;
}
