// Source links for the Python frames of a `with_stack=True` trace, in the details panel. PyTorch
// names a frame `path/file.py(123): function`; the panel then offers "Open in editor", a link
// PREFIX + path + ":" + line (for an absolute path only; the prefix is a setting kept in
// localStorage, `vscode://file/` by default, so `vscode://file/home/me/train.py:123`), and "Copy
// path:line" (the clipboard, or a selected text field to copy from where the page may not write
// the clipboard). A relative path (site-packages frames are written relative) gets the copy only.
// Safety: the frame's name is set as text; the link's path is percent-encoded (encodeURI, and `#`
// and `?` too), and its scheme is the configured prefix's, which may not be a scheme that runs or
// embeds content in the page (javascript:, data:, ...).

import { el } from "./dom.js";

const KEY = "sightline.editorLinkPrefix";
export const DEFAULT_PREFIX = "vscode://file/";
/** Schemes a link prefix may not use: they run script, embed content or read local files. */
const REFUSED = new Set(["javascript", "data", "vbscript", "blob", "about", "file", "filesystem"]);
const FRAME = /^(.+\.py)\((\d+)\): (.*)$/s;

/** `{ path, line, fn }` of a Python frame's name, or null. */
export function pythonFrame(name) {
  const m = FRAME.exec(name || "");
  return m ? { path: m[1], line: Number(m[2]), fn: m[3] } : null;
}

/** A POSIX absolute path or a Windows drive path. */
export function isAbsolute(path) {
  return path.startsWith("/") || /^[A-Za-z]:[\\/]/.test(path);
}

/** The prefix trimmed if it is a usable link prefix (`scheme:...`, not a refused scheme), else null. */
export function checkPrefix(prefix) {
  const p = String(prefix || "").trim();
  const m = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(p);
  if (!m || REFUSED.has(m[1].toLowerCase()) || /[\s"<>\\^`{|}]/.test(p)) return null;
  return p;
}

export function editorPrefix() {
  try {
    return checkPrefix(localStorage.getItem(KEY)) || DEFAULT_PREFIX;
  } catch {
    return DEFAULT_PREFIX; // Storage can be refused (sandboxed frames): the default.
  }
}

function storePrefix(prefix) {
  try {
    if (prefix === DEFAULT_PREFIX) localStorage.removeItem(KEY);
    else localStorage.setItem(KEY, prefix);
  } catch {
    // Not kept; it still applies on this page until it reloads.
  }
  current = prefix;
}

let current = null;

/**
 * The editor link for `path` at `line` under `prefix`, or null when the path is relative or the
 * prefix is refused. Backslashes become slashes; a prefix ending in "/" and a path starting with
 * one are joined with a single slash.
 */
export function editorHref(prefix, path, line) {
  const p = checkPrefix(prefix);
  if (!p || !isAbsolute(path) || !Number.isInteger(line)) return null;
  let encoded = encodeURI(path.replace(/\\/g, "/")).replace(/[#?]/g, (c) => encodeURIComponent(c));
  if (p.endsWith("/") && encoded.startsWith("/")) encoded = encoded.slice(1);
  const href = `${p}${encoded}:${line}`;
  // Only the configured scheme: the result must parse with the prefix's own scheme.
  const scheme = p.slice(0, p.indexOf(":") + 1).toLowerCase();
  try {
    if (new URL(href).protocol !== scheme) return null;
  } catch {
    return null;
  }
  return href;
}

/** The source actions for a slice named `name` (an element), or null if it is not a Python frame. */
export function sourceLinks(name) {
  const frame = pythonFrame(name);
  if (!frame) return null;
  if (current === null) current = editorPrefix();
  const box = el("div", "source-links");
  const where = `${frame.path}:${frame.line}`;
  const status = el("span", "muted source-status");
  status.setAttribute("aria-live", "polite");

  let open = null;
  if (isAbsolute(frame.path)) {
    open = el("a", "button source-open", "Open in editor");
    open.rel = "noopener noreferrer";
    const href = editorHref(current, frame.path, frame.line);
    if (href) open.href = href;
    open.title = href || "";
    box.append(open);
  }
  const copy = el("button", "source-copy", "Copy path:line");
  copy.type = "button";
  copy.title = where;
  copy.addEventListener("click", () => copyText(where, box, status));
  box.append(copy, status);

  if (open) {
    // The link prefix, kept in this browser.
    const settings = el("details", "source-settings");
    const summary = el("summary", "", "Editor link");
    summary.title = "The link prefix: PREFIX + absolute path + :line";
    const input = document.createElement("input");
    input.type = "text";
    input.value = current;
    input.spellcheck = false;
    input.setAttribute("aria-label", "Editor link prefix");
    const save = el("button", "", "Save");
    save.type = "button";
    const reset = el("button", "", "Default");
    reset.type = "button";
    const said = el("span", "muted source-settings-status");
    const apply = (value) => {
      const p = checkPrefix(value);
      if (!p) {
        said.textContent = "Not used: a prefix starts with a scheme (vscode://file/, cursor://file/, ...); javascript:, data: and file: are refused.";
        return;
      }
      storePrefix(p);
      input.value = p;
      const href = editorHref(p, frame.path, frame.line);
      if (href) open.href = href;
      else open.removeAttribute("href");
      open.title = href || "";
      said.textContent = `Links open ${p}…`;
    };
    save.addEventListener("click", () => apply(input.value));
    input.addEventListener("keydown", (ev) => {
      if (ev.key === "Enter") apply(input.value);
    });
    reset.addEventListener("click", () => apply(DEFAULT_PREFIX));
    settings.append(summary, input, save, reset, said);
    box.append(settings);
  }
  return box;
}

/** Copies `text`; where the clipboard cannot be written, shows it selected in a field. */
async function copyText(text, box, status) {
  try {
    if (!navigator.clipboard || !navigator.clipboard.writeText) throw new Error("no clipboard");
    await navigator.clipboard.writeText(text);
    status.textContent = `Copied ${text}`;
  } catch {
    let field = box.querySelector(".source-copy-field");
    if (!field) {
      field = document.createElement("input");
      field.type = "text";
      field.readOnly = true;
      field.className = "source-copy-field";
      field.setAttribute("aria-label", "Path and line to copy");
      box.append(field);
    }
    field.value = text;
    field.focus();
    field.select();
    status.textContent = "The page may not write the clipboard here: copy it from the field (Ctrl+C).";
  }
}
