//! Peak throughput per device and data type: the roofs of the roofline.
//!
//! Dense (no structured sparsity) peaks at boost clock, as the vendors' datasheets state them;
//! where a datasheet gives only the sparse figure (marked `*` there), the dense one is half of it.
//! A *matrix* peak is what Tensor Cores (NVIDIA) or Matrix Cores (AMD) reach for GEMMs,
//! convolutions and attention; a *vector* peak is the FP32 rate of the ordinary cores, used for
//! elementwise, normalization and reduction ops whatever their dtype. FP32 GEMMs use the FP32
//! matrix peak, not TF32: PyTorch leaves `torch.backends.cuda.matmul.allow_tf32` off by default.
//! NVIDIA has no FP32 Tensor Core path, so its FP32 matrix peak is the FP32 rate; AMD's Matrix
//! Cores run FP32 (and FP64) at twice the vector rate on CDNA 2 and FP64 at twice on CDNA 3.
//!
//! A device is chosen by the `name` in the trace's `deviceProperties` (`NVIDIA H100 80GB HBM3`,
//! `Tesla V100-SXM2-32GB`, `AMD Instinct MI300X VF`): the name is cut into whole tokens at every
//! character that is not a letter or digit, and an entry matches when all its tokens are among
//! them (case does not matter). Of the entries that match, the one with the most tokens wins, so
//! `H100 PCIe` beats `H100`, and `L4` never matches `NVIDIA L40` or `L40S`, nor `H200` a `GH200`
//! (a Grace Hopper part whose memory differs; it is not in the table, so no roofs are drawn).
//!
//! MI250X and MI250 carry two graphics compute dies, and each one is a device of its own to
//! PyTorch (a trace is one die's): their entries are the datasheet's per-package figures halved.
//! An MI300X in a compute partition mode (CPX: 8 devices) is not told apart; its roofs are the
//! whole device's.

use serde::Serialize;

/// One device's roofs. TFLOP/s and TB/s.
#[derive(Debug, Clone, Copy, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Peaks {
    pub device: &'static str,
    pub mem_tb_s: f64,
    /// FP64 on the vector units.
    pub fp64: f64,
    /// FP64 on Tensor/Matrix Cores (the vector rate where there are none for FP64).
    pub fp64_matrix: f64,
    /// FP32 on the vector units: the roof of elementwise, normalization and reduction ops.
    pub fp32: f64,
    /// FP32 GEMMs without TF32: the vector rate on NVIDIA, Matrix Cores on AMD.
    pub fp32_matrix: f64,
    /// Matrix FP32 via TF32 (0 where there is none).
    pub tf32: f64,
    pub bf16: f64,
    pub fp16: f64,
    /// 0 where there is none.
    pub fp8: f64,
    /// True for GPUs whose Tensor/Matrix Cores run TF32 or BF16 (so an FP32 GEMM leaves speed
    /// on the table).
    pub tensor_cores_for_fp32_work: bool,
    /// The datasheet the figures are from.
    pub source: &'static str,
}

const H100_SHEET: &str = "NVIDIA H100 Tensor Core GPU datasheet";
const H200_SHEET: &str = "NVIDIA H200 Tensor Core GPU datasheet";
const A100_SHEET: &str = "NVIDIA A100 Tensor Core GPU datasheet";
const V100_SHEET: &str = "NVIDIA Tesla V100 GPU datasheet";
const V100S_SHEET: &str = "NVIDIA V100S datasheet";
const L40S_SHEET: &str = "NVIDIA L40S datasheet";
const MI300X_SHEET: &str = "AMD Instinct MI300X accelerator datasheet";

/// (tokens of the device name, peaks).
const TABLE: &[(&[&str], Peaks)] = &[
    // NVIDIA H100 Tensor Core GPU datasheet, H100 SXM column: FP64 34, FP64 Tensor Core 67,
    // FP32 67, TF32 Tensor Core 989*, BF16/FP16 1,979*, FP8 3,958* (* with sparsity); 3.35 TB/s.
    // The dense figures are the Hopper architecture white paper's 494.7 / 989.4 / 1,978.9.
    // PyTorch names it "NVIDIA H100 80GB HBM3".
    (
        &["H100"],
        Peaks {
            device: "H100 SXM",
            mem_tb_s: 3.35,
            fp64: 34.0,
            fp64_matrix: 67.0,
            fp32: 67.0,
            fp32_matrix: 67.0,
            tf32: 494.7,
            bf16: 989.4,
            fp16: 989.4,
            fp8: 1978.9,
            tensor_cores_for_fp32_work: true,
            source: H100_SHEET,
        },
    ),
    // Same datasheet, H100 PCIe column: FP64 26, FP64 Tensor Core 51, FP32 51, TF32 756*,
    // BF16/FP16 1,513*, FP8 3,026*; 2 TB/s.
    (
        &["H100", "PCIE"],
        Peaks {
            device: "H100 PCIe",
            mem_tb_s: 2.0,
            fp64: 26.0,
            fp64_matrix: 51.0,
            fp32: 51.0,
            fp32_matrix: 51.0,
            tf32: 378.0,
            bf16: 756.5,
            fp16: 756.5,
            fp8: 1513.0,
            tensor_cores_for_fp32_work: true,
            source: H100_SHEET,
        },
    ),
    // Same datasheet, H100 NVL column: FP64 30, FP64 Tensor Core 60, FP32 60, TF32 835*,
    // BF16/FP16 1,671*, FP8 3,341*; 3.9 TB/s.
    (
        &["H100", "NVL"],
        Peaks {
            device: "H100 NVL",
            mem_tb_s: 3.9,
            fp64: 30.0,
            fp64_matrix: 60.0,
            fp32: 60.0,
            fp32_matrix: 60.0,
            tf32: 417.5,
            bf16: 835.5,
            fp16: 835.5,
            fp8: 1670.5,
            tensor_cores_for_fp32_work: true,
            source: H100_SHEET,
        },
    ),
    // NVIDIA H200 Tensor Core GPU datasheet, H200 SXM column: the H100 SXM's figures (FP64 34,
    // FP64 Tensor Core 67, FP32 67, TF32 989*, BF16/FP16 1,979*, FP8 3,958*) with 4.8 TB/s.
    (
        &["H200"],
        Peaks {
            device: "H200 SXM",
            mem_tb_s: 4.8,
            fp64: 34.0,
            fp64_matrix: 67.0,
            fp32: 67.0,
            fp32_matrix: 67.0,
            tf32: 494.7,
            bf16: 989.4,
            fp16: 989.4,
            fp8: 1978.9,
            tensor_cores_for_fp32_work: true,
            source: H200_SHEET,
        },
    ),
    // Same datasheet, H200 NVL column: FP64 30, FP64 Tensor Core 60, FP32 60, TF32 835*,
    // BF16/FP16 1,671*, FP8 3,341*; 4.8 TB/s.
    (
        &["H200", "NVL"],
        Peaks {
            device: "H200 NVL",
            mem_tb_s: 4.8,
            fp64: 30.0,
            fp64_matrix: 60.0,
            fp32: 60.0,
            fp32_matrix: 60.0,
            tf32: 417.5,
            bf16: 835.5,
            fp16: 835.5,
            fp8: 1670.5,
            tensor_cores_for_fp32_work: true,
            source: H200_SHEET,
        },
    ),
    // NVIDIA GB200 NVL72 / HGX B200 datasheet, "Individual Blackwell GPU Specifications", HGX
    // B200 column: FP64/FP64 Tensor Core 37, FP32 75, TF32 Tensor Core 2.2 PF*, FP16/BF16
    // 4.5 PF*, FP8 9 PF*; 180 GB HBM3E at 7.7 TB/s. (The 1,000 W figures of the Blackwell
    // technical brief, FP32 80 and FP64 40, are not the datasheet's.)
    (
        &["B200"],
        Peaks {
            device: "B200 (HGX)",
            mem_tb_s: 7.7,
            fp64: 37.0,
            fp64_matrix: 37.0,
            fp32: 75.0,
            fp32_matrix: 75.0,
            tf32: 1100.0,
            bf16: 2250.0,
            fp16: 2250.0,
            fp8: 4500.0,
            tensor_cores_for_fp32_work: true,
            source: "NVIDIA HGX B200 datasheet (per GPU)",
        },
    ),
    // NVIDIA A100 Tensor Core GPU datasheet, every A100: FP64 9.7, FP64 Tensor Core 19.5,
    // FP32 19.5, TF32 156, BF16/FP16 312 (dense; 312*/624* with sparsity). Memory: 1,555 GB/s
    // (40GB PCIe and SXM), 1,935 GB/s (80GB PCIe), 2,039 GB/s (80GB SXM). PyTorch's names:
    // "NVIDIA A100-SXM4-80GB", "NVIDIA A100-SXM4-40GB", "NVIDIA A100-PCIE-40GB",
    // "NVIDIA A100 80GB PCIe"; OEM boards such as "A100-PG509-200" are 80GB SXM parts.
    (
        &["A100"],
        Peaks {
            device: "A100 SXM 80GB",
            mem_tb_s: 2.039,
            ..A100
        },
    ),
    (
        &["A100", "40GB"],
        Peaks {
            device: "A100 SXM 40GB",
            mem_tb_s: 1.555,
            ..A100
        },
    ),
    (
        &["A100", "PCIE"],
        Peaks {
            device: "A100 PCIe 80GB",
            mem_tb_s: 1.935,
            ..A100
        },
    ),
    (
        &["A100", "PCIE", "40GB"],
        Peaks {
            device: "A100 PCIe 40GB",
            mem_tb_s: 1.555,
            ..A100
        },
    ),
    // NVIDIA Tesla V100 GPU datasheet, V100 SXM2 (also the DGX Station's "V100-DGXS"): FP64 7.8,
    // FP32 15.7, Tensor Performance 125 (FP16); 900 GB/s. No TF32 or BF16 Tensor Cores: BF16
    // runs at the FP32 rate.
    (
        &["V100"],
        Peaks {
            device: "V100 SXM2",
            mem_tb_s: 0.9,
            fp64: 7.8,
            fp64_matrix: 7.8,
            fp32: 15.7,
            fp32_matrix: 15.7,
            tf32: 0.0,
            bf16: 15.7,
            fp16: 125.0,
            fp8: 0.0,
            tensor_cores_for_fp32_work: false,
            source: V100_SHEET,
        },
    ),
    // Same datasheet, V100 PCIe: FP64 7, FP32 14, Tensor 112; 900 GB/s.
    (
        &["V100", "PCIE"],
        Peaks {
            device: "V100 PCIe",
            mem_tb_s: 0.9,
            fp64: 7.0,
            fp64_matrix: 7.0,
            fp32: 14.0,
            fp32_matrix: 14.0,
            tf32: 0.0,
            bf16: 14.0,
            fp16: 112.0,
            fp8: 0.0,
            tensor_cores_for_fp32_work: false,
            source: V100_SHEET,
        },
    ),
    // NVIDIA V100S datasheet (PCIe): FP64 8.2, FP32 16.4, Tensor 130; 1,134 GB/s.
    (
        &["V100S"],
        Peaks {
            device: "V100S PCIe",
            mem_tb_s: 1.134,
            fp64: 8.2,
            fp64_matrix: 8.2,
            fp32: 16.4,
            fp32_matrix: 16.4,
            tf32: 0.0,
            bf16: 16.4,
            fp16: 130.0,
            fp8: 0.0,
            tensor_cores_for_fp32_work: false,
            source: V100S_SHEET,
        },
    ),
    // NVIDIA L40S datasheet: FP32 91.6, TF32 Tensor Core 183 (366*), BF16/FP16 362.05 (733*),
    // FP8 733 (1,466*); 864 GB/s. FP64 is not on Ada datasheets: compute capability 8.9 runs
    // it at 1/64 of FP32 (CUDA C++ Programming Guide, arithmetic instruction throughput).
    (
        &["L40S"],
        Peaks {
            device: "L40S",
            mem_tb_s: 0.864,
            fp64: 91.6 / 64.0,
            fp64_matrix: 91.6 / 64.0,
            fp32: 91.6,
            fp32_matrix: 91.6,
            tf32: 183.0,
            bf16: 362.05,
            fp16: 362.05,
            fp8: 733.0,
            tensor_cores_for_fp32_work: true,
            source: L40S_SHEET,
        },
    ),
    // NVIDIA L40 datasheet: FP32 90.5, TF32 Tensor Core 90.5 (181*), BF16/FP16 181.05
    // (362.1*), FP8 362 (724*); 864 GB/s. FP64 1/64 of FP32, as the L40S.
    (
        &["L40"],
        Peaks {
            device: "L40",
            mem_tb_s: 0.864,
            fp64: 90.5 / 64.0,
            fp64_matrix: 90.5 / 64.0,
            fp32: 90.5,
            fp32_matrix: 90.5,
            tf32: 90.5,
            bf16: 181.05,
            fp16: 181.05,
            fp8: 362.0,
            tensor_cores_for_fp32_work: true,
            source: "NVIDIA L40 datasheet",
        },
    ),
    // NVIDIA L4 Tensor Core GPU datasheet: FP32 30.3, TF32 Tensor Core 120*, BF16/FP16 242*,
    // FP8 485*; 300 GB/s. FP64 1/64 of FP32, as the L40S.
    (
        &["L4"],
        Peaks {
            device: "L4",
            mem_tb_s: 0.3,
            fp64: 30.3 / 64.0,
            fp64_matrix: 30.3 / 64.0,
            fp32: 30.3,
            fp32_matrix: 30.3,
            tf32: 60.0,
            bf16: 121.0,
            fp16: 121.0,
            fp8: 242.5,
            tensor_cores_for_fp32_work: true,
            source: "NVIDIA L4 Tensor Core GPU datasheet",
        },
    ),
    // AMD Instinct MI300X datasheet: FP64 vector 81.7, FP64 matrix 163.4, FP32 vector 163.4,
    // FP32 matrix 163.4, TF32 653.7, FP16/BF16 1,307.4, FP8 2,614.9 (dense; the sparse figures
    // are twice these); 5.3 TB/s.
    (
        &["MI300X"],
        Peaks {
            device: "MI300X",
            mem_tb_s: 5.3,
            ..MI300X
        },
    ),
    // AMD Instinct MI325X datasheet: the MI300X's compute figures with 6 TB/s of HBM3E.
    (
        &["MI325X"],
        Peaks {
            device: "MI325X",
            mem_tb_s: 6.0,
            source: "AMD Instinct MI325X accelerator datasheet",
            ..MI300X
        },
    ),
    // AMD Instinct MI250X datasheet, per package of two dies: FP64/FP32 vector 47.9, FP64/FP32
    // matrix 95.7, FP16/BF16 383; 3.2 TB/s (3,276.8 GB/s). Halved: one die is one device.
    (
        &["MI250X"],
        Peaks {
            device: "MI250X (one die)",
            mem_tb_s: 1.6384,
            fp64: 23.95,
            fp64_matrix: 47.85,
            fp32: 23.95,
            fp32_matrix: 47.85,
            tf32: 0.0,
            bf16: 191.5,
            fp16: 191.5,
            fp8: 0.0,
            tensor_cores_for_fp32_work: true,
            source: "AMD Instinct MI250X accelerator datasheet (per package, halved per die)",
        },
    ),
    // AMD Instinct MI250 datasheet, per package: FP64/FP32 vector 45.3, FP64/FP32 matrix 90.5,
    // FP16/BF16 362.1; 3.2 TB/s. Halved per die. ROCm names both parts "AMD Instinct
    // MI250X/MI250"; that name gets the MI250X's roofs (the entry below), the higher of the two.
    (
        &["MI250"],
        Peaks {
            device: "MI250 (one die)",
            mem_tb_s: 1.6384,
            fp64: 22.65,
            fp64_matrix: 45.25,
            fp32: 22.65,
            fp32_matrix: 45.25,
            tf32: 0.0,
            bf16: 181.05,
            fp16: 181.05,
            fp8: 0.0,
            tensor_cores_for_fp32_work: true,
            source: "AMD Instinct MI250 accelerator datasheet (per package, halved per die)",
        },
    ),
    (
        &["MI250X", "MI250"],
        Peaks {
            device: "MI250X (one die; the name does not tell MI250X from MI250)",
            mem_tb_s: 1.6384,
            fp64: 23.95,
            fp64_matrix: 47.85,
            fp32: 23.95,
            fp32_matrix: 47.85,
            tf32: 0.0,
            bf16: 191.5,
            fp16: 191.5,
            fp8: 0.0,
            tensor_cores_for_fp32_work: true,
            source: "AMD Instinct MI250X accelerator datasheet (per package, halved per die)",
        },
    ),
    // AMD Instinct MI210 datasheet (one die): FP64/FP32 vector 22.6, FP64/FP32 matrix 45.3,
    // FP16/BF16 181; 1.6 TB/s (1,638.4 GB/s).
    (
        &["MI210"],
        Peaks {
            device: "MI210",
            mem_tb_s: 1.6384,
            fp64: 22.6,
            fp64_matrix: 45.3,
            fp32: 22.6,
            fp32_matrix: 45.3,
            tf32: 0.0,
            bf16: 181.0,
            fp16: 181.0,
            fp8: 0.0,
            tensor_cores_for_fp32_work: true,
            source: "AMD Instinct MI210 accelerator datasheet",
        },
    ),
];

/// The compute shared by every A100 (memory set per entry).
const A100: Peaks = Peaks {
    device: "A100",
    mem_tb_s: 0.0,
    fp64: 9.7,
    fp64_matrix: 19.5,
    fp32: 19.5,
    fp32_matrix: 19.5,
    tf32: 156.0,
    bf16: 312.0,
    fp16: 312.0,
    fp8: 0.0,
    tensor_cores_for_fp32_work: true,
    source: A100_SHEET,
};

/// The compute shared by the MI300X and MI325X (memory set per entry).
const MI300X: Peaks = Peaks {
    device: "MI300X",
    mem_tb_s: 0.0,
    fp64: 81.7,
    fp64_matrix: 163.4,
    fp32: 163.4,
    fp32_matrix: 163.4,
    tf32: 653.7,
    bf16: 1307.4,
    fp16: 1307.4,
    fp8: 2614.9,
    tensor_cores_for_fp32_work: true,
    source: MI300X_SHEET,
};

/// The whole tokens of a device name, upper-cased.
fn tokens(name: &str) -> Vec<String> {
    name.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|t| !t.is_empty())
        .map(str::to_ascii_uppercase)
        .collect()
}

/// The peaks of a device by its `deviceProperties` name, if it is in the table: the entry
/// with the most tokens among those whose tokens are all in the name.
pub fn lookup(name: &str) -> Option<Peaks> {
    let have = tokens(name);
    TABLE
        .iter()
        .filter(|(key, _)| key.iter().all(|k| have.iter().any(|t| t == k)))
        .max_by_key(|(key, _)| key.len())
        .map(|(_, p)| *p)
}

/// One compute ceiling of a roofline.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Roof {
    /// `BF16 matrix`, `FP32 vector`, ...
    pub label: String,
    pub tflops: f64,
}

impl Peaks {
    /// The compute ceilings that ops of these (dtype, matrix) kinds run under, highest first;
    /// one per distinct roof.
    pub fn roofs<'a>(&self, used: impl Iterator<Item = (&'a str, bool)>) -> Vec<Roof> {
        let mut out: Vec<Roof> = Vec::new();
        for (dtype, matrix) in used {
            let tflops = self.tflops(dtype, matrix);
            let label = if !matrix {
                "FP32 vector".to_string()
            } else {
                // The dtype the peak is for (an unknown one runs at the FP32 matrix rate).
                let d = match dtype {
                    "bf16" | "fp16" | "fp64" => dtype,
                    "fp8" if self.fp8 > 0.0 => dtype,
                    _ => "fp32",
                };
                format!("{} matrix", d.to_ascii_uppercase())
            };
            if tflops > 0.0 && !out.iter().any(|r| r.label == label) {
                out.push(Roof { label, tflops });
            }
        }
        out.sort_by(|a, b| b.tflops.total_cmp(&a.tflops));
        out
    }

    /// The peak TFLOP/s for an op on `dtype` (short name, see [`super::models::short_dtype`]):
    /// the matrix peak for matrix ops, else the FP32 vector rate.
    pub fn tflops(&self, dtype: &str, matrix: bool) -> f64 {
        if !matrix {
            return self.fp32;
        }
        match dtype {
            "bf16" => self.bf16,
            "fp16" => self.fp16,
            "fp8" if self.fp8 > 0.0 => self.fp8,
            "fp64" => self.fp64_matrix,
            _ => self.fp32_matrix,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::lookup;

    fn device(name: &str) -> Option<&'static str> {
        lookup(name).map(|p| p.device)
    }

    #[test]
    fn names_as_pytorch_writes_them() {
        // The fixtures' deviceProperties.
        assert_eq!(device("NVIDIA H100 80GB HBM3"), Some("H100 SXM"));
        assert_eq!(device("NVIDIA A100-PG509-200"), Some("A100 SXM 80GB"));
        assert_eq!(device("Tesla V100-SXM2-32GB"), Some("V100 SXM2"));
        assert_eq!(device("Tesla V100-DGXS-32GB"), Some("V100 SXM2"));
        assert_eq!(device("AMD Instinct MI300X VF"), Some("MI300X"));
        // Other names the CUDA and ROCm runtimes report.
        assert_eq!(device("NVIDIA H100 PCIe"), Some("H100 PCIe"));
        assert_eq!(device("NVIDIA H100 NVL"), Some("H100 NVL"));
        assert_eq!(device("NVIDIA H200"), Some("H200 SXM"));
        assert_eq!(device("NVIDIA H200 NVL"), Some("H200 NVL"));
        assert_eq!(device("NVIDIA B200"), Some("B200 (HGX)"));
        assert_eq!(device("NVIDIA A100-SXM4-80GB"), Some("A100 SXM 80GB"));
        assert_eq!(device("NVIDIA A100-SXM4-40GB"), Some("A100 SXM 40GB"));
        assert_eq!(device("NVIDIA A100-PCIE-40GB"), Some("A100 PCIe 40GB"));
        assert_eq!(device("NVIDIA A100 80GB PCIe"), Some("A100 PCIe 80GB"));
        assert_eq!(device("Tesla V100-PCIE-16GB"), Some("V100 PCIe"));
        assert_eq!(device("Tesla V100S-PCIE-32GB"), Some("V100S PCIe"));
        assert_eq!(device("NVIDIA L4"), Some("L4"));
        assert_eq!(device("NVIDIA L40"), Some("L40"));
        assert_eq!(device("NVIDIA L40S"), Some("L40S"));
        assert_eq!(device("AMD Instinct MI300X"), Some("MI300X"));
        assert_eq!(device("AMD Instinct MI325X"), Some("MI325X"));
        assert_eq!(device("AMD Instinct MI210"), Some("MI210"));
        assert_eq!(device("AMD Instinct MI250X"), Some("MI250X (one die)"));
        assert_eq!(device("AMD Instinct MI250"), Some("MI250 (one die)"));
        assert!(device("AMD Instinct MI250X/MI250")
            .unwrap()
            .starts_with("MI250X (one die;"));
    }

    #[test]
    fn a_name_inside_another_token_does_not_match() {
        // Substrings of other parts' names.
        assert_eq!(device("NVIDIA GH200 480GB"), None);
        assert_eq!(device("NVIDIA H800"), None);
        assert_eq!(device("NVIDIA GeForce RTX 4090"), None);
        assert_eq!(device("NVIDIA L40G"), None);
        assert_eq!(device("NVIDIA A1000"), None);
        assert_eq!(device("AMD Instinct MI300A"), None);
        assert_eq!(device(""), None);
        // Case and separators do not matter.
        assert_eq!(device("nvidia l40s"), Some("L40S"));
        assert_eq!(device("NVIDIA_H100_PCIe"), Some("H100 PCIe"));
    }

    #[test]
    fn every_entry_is_reachable_and_dense() {
        for (key, p) in super::TABLE {
            assert_eq!(device(&key.join(" ")), Some(p.device), "{key:?}");
            // Dense figures throughout: each precision halving doubles the matrix rate, so a
            // sparse figure taken by mistake (twice the dense one) breaks a ratio.
            // (within 3%: datasheets round, B200 TF32 2.2 PF* beside BF16 4.5 PF*).
            let near = |a: f64, b: f64| (a / b - 1.0).abs() < 0.03;
            if p.tf32 > 0.0 {
                assert!(near(p.bf16, 2.0 * p.tf32), "{}", p.device);
            }
            if p.fp8 > 0.0 {
                assert!(near(p.fp8, 2.0 * p.bf16), "{}", p.device);
            }
            assert!(
                p.mem_tb_s > 0.0 && p.fp32 > 0.0 && p.fp64 > 0.0,
                "{}",
                p.device
            );
            assert!(
                p.fp32_matrix >= p.fp32 && p.fp64_matrix >= p.fp64,
                "{}",
                p.device
            );
        }
    }
}
