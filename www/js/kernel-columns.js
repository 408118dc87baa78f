// The kernel table's columns: those the rows carry (with the FLOPs ones, roofline.js), and the
// TensorBoard plugin's per-kernel GPU figures beside each other: mean occupancy, then estimated SM
// efficiency ("SM eff.": min(blocks per SM, 1), weighted by duration) and mean blocks per SM. A
// figure no kernel of the trace has (ROCm and other devices record no blocks per SM) is left out.

import { flopsColumns } from "./roofline.js";

/** Labels, kinds and header tooltips of the kernel figures, in the order they are shown. */
const FIGURES = [
  ["mean_occupancy_pct", "Mean occupancy %", "pct", "Estimated achieved occupancy the trace records per launch, averaged weighted by duration"],
  ["est_sm_efficiency_pct", "SM eff.", "pct", "Estimated SM efficiency: min(blocks per SM, 1) of each launch, averaged weighted by duration (TensorBoard plugin)"],
  ["mean_blocks_per_sm", "Blocks/SM", "num", "Thread blocks per SM of each launch, averaged weighted by duration"],
];

export function kernelColumns(rows) {
  const figures = FIGURES.filter(([k]) => rows.some((r) => typeof r[k] === "number")).map(([key, label, kind, title]) => ({ key, label, kind, title }));
  const cols = flopsColumns(rows).filter((c) => !FIGURES.some(([k]) => k === c.key));
  // The figures go where the occupancy column was (after the share of device time otherwise).
  const inferred = flopsColumns(rows).map((c) => c.key);
  const at = inferred.indexOf("mean_occupancy_pct");
  const after = at > 0 ? inferred[at - 1] : "gpu_time_pct";
  const i = cols.findIndex((c) => c.key === after);
  cols.splice(i < 0 ? cols.length : i + 1, 0, ...figures);
  return cols;
}
