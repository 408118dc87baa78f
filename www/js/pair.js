// Two traces chosen together (Open… with two files, or two files dropped): the ranks of one
// distributed job, or a before and after to compare. Kineto writes `distributedInfo` (rank,
// world_size) in the first lines of a trace, before its events, so the head of each file says
// which: two different ranks of one world size are a job; anything else is a pair to compare.
// Only the head is read (inflated in the browser for .gz); the trace itself is read later, by
// whichever view opens it.

import { fileHead } from "./load.js";

/** `{ rank, worldSize }` from a trace's `distributedInfo`, or null (none in its head). */
export async function distributedOf(file) {
  let text;
  try {
    text = await headText(file);
  } catch {
    return null;
  }
  const at = text.indexOf('"distributedInfo"');
  if (at < 0) return null;
  const info = text.slice(at, at + 4000);
  // `"rank":` and not `"ranks":` (the process groups' lists).
  const rank = /"rank"\s*:\s*(\d+)/.exec(info);
  const world = /"world_size"\s*:\s*(\d+)/.exec(info);
  return rank && world ? { rank: Number(rank[1]), worldSize: Number(world[1]) } : null;
}

/** Whether two files are two ranks of one job. */
export async function ranksOfOneJob(a, b) {
  const [x, y] = await Promise.all([distributedOf(a), distributedOf(b)]);
  return !!(x && y && x.worldSize === y.worldSize && x.rank !== y.rank);
}

/** The head of a file's text, inflated when it is gzip. */
async function headText(file) {
  return new TextDecoder().decode(await fileHead(file));
}
