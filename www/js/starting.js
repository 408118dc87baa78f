// Opens asked for while the page starts. app.js wires its controls only once the wasm module is
// compiled and the first worker has started, which on a slow machine or network takes seconds;
// until then nothing else listens, and a file chosen with Open… or Open job folder…, a file or
// folder dropped on the page, or a click on "Try a sample" would be lost (a drop or the link would
// even navigate away). This module listens from the page's first moments instead: it keeps the
// latest such choice and shows the progress box at the stage "Starting" with the name of what will
// open. app.js takes the choice once it is ready (`take()`, which stops these listeners) and opens
// it as if it had just been made. A trace named by the address (`?url=`, `#url=`) is opened by
// url.js or ranks.js once the page is ready; meanwhile it is shown as starting too, and a choice
// made meanwhile replaces it. Cancel forgets them both. Names are set as text.

import { readLink } from "./url.js";

const $ = (id) => document.getElementById(id);

const hasFiles = (ev) => ev.dataTransfer && Array.from(ev.dataTransfer.types || []).includes("Files");

/**
 * What a drop holds, taken while its event's data is readable (it is not after the event): its
 * files and, for each file item, its entry (a folder's is walked later, by ranks.js).
 */
export function dropContents(dataTransfer) {
  const items = Array.from(dataTransfer.items || []).filter((i) => i.kind === "file");
  return {
    files: Array.from(dataTransfer.files || []),
    entries: items.map((i) => (i.webkitGetAsEntry ? i.webkitGetAsEntry() : null)),
  };
}

/** The name the progress box shows for a choice. */
function nameOf(files) {
  return files.length === 1 ? files[0].name : `${files.length} files`;
}

/**
 * Starts listening. Returns `{ take() }`; `take()` stops listening and returns
 * `{ open, address, replaced }`: `open` is the latest choice (`{ input }`, a file input whose
 * `files` hold it; `{ drop }`, a drop's `dropContents`; `{ href }`, the sample link) or null;
 * `replaced` is true once a choice or a Cancel came, so what the address asks for (`url`,
 * `compare`) is not to be opened; `address` is true when the address names a trace still to be
 * opened (and shown as starting meanwhile).
 */
export function queueOpens() {
  const inputs = /** @type {HTMLInputElement[]} */ ([$("file-input"), $("folder-input")]);
  const links = [$("sample-link"), $("sample-link-2")];
  let open = null;
  let replaced = false;
  const address = readLink().url !== null;
  const listening = [];
  const on = (target, type, fn) => {
    target.addEventListener(type, fn);
    listening.push([target, type, fn]);
  };

  function showStarting(name) {
    document.body.dataset.state = "loading";
    document.body.dataset.stage = "starting";
    $("empty").hidden = true;
    $("error-box").hidden = true;
    $("loading").hidden = false;
    $("progress-stage").textContent = "Starting";
    $("progress-name").textContent = name;
    $("progress").removeAttribute("value");
    $("progress-text").textContent = "the viewer is loading; the trace opens as soon as it is ready";
  }

  function choose(choice, name) {
    // The latest choice wins: an input that held an earlier one lets it go.
    for (const input of inputs) if (input !== choice.input) input.value = "";
    open = choice;
    replaced = true;
    showStarting(name);
  }

  /** Back to the empty page: nothing to open (Cancel, or the dialog that held the choice emptied). */
  function forget() {
    open = null;
    replaced = true;
    for (const input of inputs) input.value = "";
    document.body.dataset.state = "empty";
    delete document.body.dataset.stage;
    $("loading").hidden = true;
    $("empty").hidden = false;
  }

  for (const input of inputs) {
    on(input, "change", () => {
      if (input.files.length > 0) choose({ input }, nameOf(Array.from(input.files)));
      else if (open && open.input === input) forget();
    });
  }
  for (const link of links) {
    on(link, "click", (ev) => {
      ev.preventDefault();
      const href = link.getAttribute("href");
      choose({ href }, decodeURIComponent(href.split("/").pop()));
    });
  }
  on(window, "dragover", (ev) => {
    if (!hasFiles(ev)) return;
    // Without this the browser would open the dropped file itself, leaving the page.
    ev.preventDefault();
    ev.dataTransfer.dropEffect = "copy";
  });
  on(window, "drop", (ev) => {
    ev.preventDefault();
    if (!ev.dataTransfer) return;
    const drop = dropContents(ev.dataTransfer);
    if (drop.files.length > 0) choose({ drop }, nameOf(drop.files));
  });
  on($("cancel"), "click", forget);

  // A file chosen before this script ran (while the page's modules downloaded) is still in its input.
  for (const input of inputs) if (input.files.length > 0) choose({ input }, nameOf(Array.from(input.files)));
  if (!open && address) {
    // Several `url`s are the ranks of one job (ranks.js).
    const urls = new URLSearchParams(location.search).getAll("url");
    const href = readLink().url;
    showStarting(urls.length > 1 ? `${urls.length} traces` : decodeURIComponent(href.split(/[?#]/)[0].split("/").pop() || href));
  }

  return {
    take() {
      for (const [target, type, fn] of listening) target.removeEventListener(type, fn);
      listening.length = 0;
      return { open, address: address && !replaced, replaced };
    },
  };
}
