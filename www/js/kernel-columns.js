// The kernel table's columns: as the core declares them (`KernelRow`'s columns, the FLOPs ones
// included), the TensorBoard plugin's per-kernel GPU figures among them (mean occupancy,
// estimated SM efficiency, mean blocks per SM). A figure no kernel of the trace has (ROCm and
// other devices record no blocks per SM) is left out.

import { declaredColumns } from "./table.js";

/** The figures shown only where some kernel has them. */
const FIGURES = ["mean_occupancy_pct", "est_sm_efficiency_pct", "mean_blocks_per_sm"];

/** @param {{rows: object[], columns: import("./format.js").Declared[]}} table */
export function kernelColumns(table) {
  return declaredColumns(table.columns).filter((c) => !FIGURES.includes(c.key) || table.rows.some((r) => typeof r[c.key] === "number"));
}
