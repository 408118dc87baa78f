// The "Python frames" toggle: hides or shows the `python_function` slices of a `with_stack` trace
// in the timeline (the session re-lays the lanes, so operators and labels take the rows the frames
// held), remembered per trace in localStorage. Session methods are awaited, as the worker's
// clients answer them.

const PREFIX = "sightline.pythonFrames.";

function remembered(key) {
  try {
    return localStorage.getItem(PREFIX + key) !== "hidden";
  } catch {
    return true; // Storage can be refused (sandboxed frames, privacy settings): show them.
  }
}

function remember(key, show) {
  try {
    if (show) localStorage.removeItem(PREFIX + key);
    else localStorage.setItem(PREFIX + key, "hidden");
  } catch {
    // Not remembered; the toggle still works for this page.
  }
}

/**
 * Wires `button` to `session` for the trace known as `traceKey`; `redraw` repaints the timeline.
 * The button is hidden for traces without Python frames.
 */
export async function setupPythonToggle(button, session, traceKey, redraw) {
  const has = await session.has_python_frames();
  button.hidden = !has;
  button.onclick = null;
  if (!has) return;
  let show = remembered(traceKey);
  const apply = async () => {
    button.textContent = show ? "Hide Python frames" : "Show Python frames";
    button.setAttribute("aria-pressed", String(!show));
    if (await session.set_python_frames(show)) redraw();
  };
  button.onclick = async () => {
    show = !show;
    remember(traceKey, show);
    await apply();
  };
  await apply();
}
