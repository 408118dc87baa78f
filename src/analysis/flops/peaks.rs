//! Peak throughput per device and data type: the roofs of the roofline.
//!
//! Dense (no structured sparsity) peaks at boost clock, as the vendors' datasheets state them.
//! A *matrix* peak is what Tensor Cores (NVIDIA) or Matrix Cores (AMD) reach for GEMMs,
//! convolutions and attention; a *vector* peak is the FP32 rate of the ordinary cores, used for
//! elementwise, normalization and reduction ops whatever their dtype. FP32 GEMMs use the FP32
//! peak, not TF32: PyTorch leaves `torch.backends.cuda.matmul.allow_tf32` off by default.
//! A device is chosen by the `name` in the trace's `deviceProperties` (first match in the table).

use serde::Serialize;

/// One device's roofs. TFLOP/s and TB/s.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Peaks {
    pub device: &'static str,
    pub mem_tb_s: f64,
    pub fp64: f64,
    pub fp32: f64,
    /// Matrix FP32 via TF32 (0 where there is none).
    pub tf32: f64,
    pub bf16: f64,
    pub fp16: f64,
    /// 0 where there is none.
    pub fp8: f64,
    /// True for GPUs whose Tensor/Matrix Cores run TF32 or BF16 (so an FP32 GEMM leaves speed
    /// on the table).
    pub tensor_cores_for_fp32_work: bool,
}

/// (substring of the device name, peaks). More specific names come first.
const TABLE: &[(&str, Peaks)] = &[
    // NVIDIA H100 Tensor Core GPU datasheet (nvidia.com/en-us/data-center/h100), H100 SXM column:
    // FP64 34, FP32 67, TF32 494.7 (989 with sparsity), BF16/FP16 989.4, FP8 1978.9; 3.35 TB/s.
    (
        "H100 PCIe",
        // Same datasheet, H100 PCIe column: FP64 26, FP32 51, TF32 378, BF16/FP16 756,
        // FP8 1513; 2 TB/s.
        Peaks {
            device: "H100 PCIe",
            mem_tb_s: 2.0,
            fp64: 26.0,
            fp32: 51.0,
            tf32: 378.0,
            bf16: 756.0,
            fp16: 756.0,
            fp8: 1513.0,
            tensor_cores_for_fp32_work: true,
        },
    ),
    (
        "H100 NVL",
        // H100 datasheet, H100 NVL column (per GPU): FP64 30, FP32 60, TF32 417.5, BF16/FP16
        // 835.5, FP8 1670.5; 3.9 TB/s.
        Peaks {
            device: "H100 NVL",
            mem_tb_s: 3.9,
            fp64: 30.0,
            fp32: 60.0,
            tf32: 417.5,
            bf16: 835.5,
            fp16: 835.5,
            fp8: 1670.5,
            tensor_cores_for_fp32_work: true,
        },
    ),
    (
        "H100",
        Peaks {
            device: "H100 SXM",
            mem_tb_s: 3.35,
            fp64: 34.0,
            fp32: 67.0,
            tf32: 494.7,
            bf16: 989.4,
            fp16: 989.4,
            fp8: 1978.9,
            tensor_cores_for_fp32_work: true,
        },
    ),
    (
        "H200",
        // NVIDIA H200 Tensor Core GPU datasheet, H200 SXM: the H100 SXM's compute with 4.8 TB/s
        // of HBM3e.
        Peaks {
            device: "H200 SXM",
            mem_tb_s: 4.8,
            fp64: 34.0,
            fp32: 67.0,
            tf32: 494.7,
            bf16: 989.4,
            fp16: 989.4,
            fp8: 1978.9,
            tensor_cores_for_fp32_work: true,
        },
    ),
    (
        "B200",
        // NVIDIA HGX B200 datasheet, per GPU (the sparse figures halved): FP64 40, FP32 80,
        // TF32 1100, BF16/FP16 2250, FP8 4500; 8 TB/s HBM3e.
        Peaks {
            device: "B200",
            mem_tb_s: 8.0,
            fp64: 40.0,
            fp32: 80.0,
            tf32: 1100.0,
            bf16: 2250.0,
            fp16: 2250.0,
            fp8: 4500.0,
            tensor_cores_for_fp32_work: true,
        },
    ),
    (
        "A100-PCIE-40GB",
        // NVIDIA A100 Tensor Core GPU datasheet: FP64 9.7, FP32 19.5, TF32 156, BF16/FP16 312
        // for every A100; memory 1,555 GB/s (40GB PCIe), 1,935 GB/s (80GB PCIe), 1,555 GB/s
        // (40GB SXM), 2,039 GB/s (80GB SXM).
        Peaks {
            device: "A100 PCIe 40GB",
            mem_tb_s: 1.555,
            fp64: 9.7,
            fp32: 19.5,
            tf32: 156.0,
            bf16: 312.0,
            fp16: 312.0,
            fp8: 0.0,
            tensor_cores_for_fp32_work: true,
        },
    ),
    (
        "A100-PCIE",
        Peaks {
            device: "A100 PCIe 80GB",
            mem_tb_s: 1.935,
            fp64: 9.7,
            fp32: 19.5,
            tf32: 156.0,
            bf16: 312.0,
            fp16: 312.0,
            fp8: 0.0,
            tensor_cores_for_fp32_work: true,
        },
    ),
    (
        "A100-SXM4-40GB",
        Peaks {
            device: "A100 SXM 40GB",
            mem_tb_s: 1.555,
            fp64: 9.7,
            fp32: 19.5,
            tf32: 156.0,
            bf16: 312.0,
            fp16: 312.0,
            fp8: 0.0,
            tensor_cores_for_fp32_work: true,
        },
    ),
    (
        // Other A100 names (SXM4-80GB, and OEM boards such as A100-PG509-200, an 80GB SXM part).
        "A100",
        Peaks {
            device: "A100 SXM 80GB",
            mem_tb_s: 2.039,
            fp64: 9.7,
            fp32: 19.5,
            tf32: 156.0,
            bf16: 312.0,
            fp16: 312.0,
            fp8: 0.0,
            tensor_cores_for_fp32_work: true,
        },
    ),
    (
        "V100-PCIE",
        // NVIDIA Tesla V100 datasheet, PCIe: FP64 7, FP32 14, Tensor (FP16) 112; 900 GB/s. No
        // BF16 or TF32: BF16 runs at the FP32 rate.
        Peaks {
            device: "V100 PCIe",
            mem_tb_s: 0.9,
            fp64: 7.0,
            fp32: 14.0,
            tf32: 0.0,
            bf16: 14.0,
            fp16: 112.0,
            fp8: 0.0,
            tensor_cores_for_fp32_work: false,
        },
    ),
    (
        "V100",
        // Tesla V100 datasheet, SXM2 (and DGX Station's DGXS): FP64 7.8, FP32 15.7, Tensor 125;
        // 900 GB/s.
        Peaks {
            device: "V100 SXM2",
            mem_tb_s: 0.9,
            fp64: 7.8,
            fp32: 15.7,
            tf32: 0.0,
            bf16: 15.7,
            fp16: 125.0,
            fp8: 0.0,
            tensor_cores_for_fp32_work: false,
        },
    ),
    (
        "L40S",
        // NVIDIA L40S datasheet (sparse figures halved): FP32 91.6, TF32 183, BF16/FP16 362.05,
        // FP8 733; 864 GB/s. FP64 is 1/64 of FP32.
        Peaks {
            device: "L40S",
            mem_tb_s: 0.864,
            fp64: 1.4,
            fp32: 91.6,
            tf32: 183.0,
            bf16: 362.05,
            fp16: 362.05,
            fp8: 733.0,
            tensor_cores_for_fp32_work: true,
        },
    ),
    (
        "L4",
        // NVIDIA L4 datasheet (sparse figures halved): FP32 30.3, TF32 60, BF16/FP16 121,
        // FP8 242.5; 300 GB/s.
        Peaks {
            device: "L4",
            mem_tb_s: 0.3,
            fp64: 0.5,
            fp32: 30.3,
            tf32: 60.0,
            bf16: 121.0,
            fp16: 121.0,
            fp8: 242.5,
            tensor_cores_for_fp32_work: true,
        },
    ),
    (
        "MI325X",
        // AMD Instinct MI325X datasheet: the MI300X's compute; 6 TB/s HBM3E.
        Peaks {
            device: "MI325X",
            mem_tb_s: 6.0,
            fp64: 163.4,
            fp32: 163.4,
            tf32: 653.7,
            bf16: 1307.4,
            fp16: 1307.4,
            fp8: 2614.9,
            tensor_cores_for_fp32_work: true,
        },
    ),
    (
        "MI300X",
        // AMD Instinct MI300X datasheet: FP64/FP32 matrix 163.4, TF32 653.7, BF16/FP16 1307.4,
        // FP8 2614.9 (dense); 5.3 TB/s.
        Peaks {
            device: "MI300X",
            mem_tb_s: 5.3,
            fp64: 163.4,
            fp32: 163.4,
            tf32: 653.7,
            bf16: 1307.4,
            fp16: 1307.4,
            fp8: 2614.9,
            tensor_cores_for_fp32_work: true,
        },
    ),
    (
        "MI250X",
        // AMD Instinct MI250X datasheet: FP64/FP32 matrix 95.7, FP16/BF16 383; 3.2 TB/s. No
        // TF32.
        Peaks {
            device: "MI250X",
            mem_tb_s: 3.2,
            fp64: 95.7,
            fp32: 95.7,
            tf32: 0.0,
            bf16: 383.0,
            fp16: 383.0,
            fp8: 0.0,
            tensor_cores_for_fp32_work: true,
        },
    ),
    (
        "MI210",
        // AMD Instinct MI210 datasheet: FP64/FP32 matrix 45.3, FP16/BF16 181; 1.6 TB/s.
        Peaks {
            device: "MI210",
            mem_tb_s: 1.6,
            fp64: 45.3,
            fp32: 45.3,
            tf32: 0.0,
            bf16: 181.0,
            fp16: 181.0,
            fp8: 0.0,
            tensor_cores_for_fp32_work: true,
        },
    ),
];

/// The peaks of a device by its `deviceProperties` name, if it is in the table.
pub fn lookup(name: &str) -> Option<Peaks> {
    TABLE
        .iter()
        .find(|(key, _)| name.contains(key))
        .map(|(_, p)| *p)
}

impl Peaks {
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
            "fp64" => self.fp64,
            _ => self.fp32,
        }
    }
}
