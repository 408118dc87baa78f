//! What a collective is (name, process group, message size) and the bandwidth NCCL's performance
//! notes (`nccl-tests/doc/PERFORMANCE.md`) define for it.
//!
//! - Names are normalised so that `Collective name` args (`allreduce`), `nccl:all_reduce` /
//!   `gloo:all_reduce` labels and kernel names (`ncclKernel_AllReduce_RING_LL_Sum_float`,
//!   `ncclDevKernel_AllGather_RING_LL`) agree: `all_reduce`, `all_gather`, `reduce_scatter`,
//!   `all_to_all`, `broadcast`, `reduce`, `send_recv`, `send`, `recv`, `barrier`; anything else is kept
//!   in lower case.
//! - Message size S (bytes), as the notes define it per operation: all-reduce, broadcast, reduce,
//!   all-to-all, send/recv: the input; all-gather: the whole output (`Out msg nelems`, else
//!   input x group size); reduce-scatter: the whole input.
//! - algbw = S / t. busbw = algbw x 2(n-1)/n for all-reduce, x (n-1)/n for all-gather, reduce-scatter
//!   and all-to-all, x 1 for broadcast, reduce and point-to-point (n = the group size).

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Collective {
    pub name: String,
    pub process_group: String,
    pub in_nelems: Option<i64>,
    pub out_nelems: Option<i64>,
    pub dtype: Option<String>,
    pub group_size: Option<i64>,
    /// S, as NCCL's performance notes define it for this operation.
    pub bytes: Option<i64>,
}

impl Collective {
    pub fn new(
        raw_name: &str,
        process_group: String,
        in_nelems: Option<i64>,
        out_nelems: Option<i64>,
        dtype: Option<String>,
        group_size: Option<i64>,
    ) -> Collective {
        let name = normalise(raw_name);
        let elem = dtype.as_deref().and_then(dtype_bytes);
        let n = group_size.unwrap_or(1).max(1);
        let nelems = match name.as_str() {
            "all_gather" => out_nelems.or(in_nelems.map(|x| x.saturating_mul(n))),
            "reduce_scatter" => in_nelems.or(out_nelems.map(|x| x.saturating_mul(n))),
            _ => in_nelems.or(out_nelems),
        };
        let bytes = nelems.zip(elem).map(|(a, b)| a.saturating_mul(b));
        Collective {
            name,
            process_group,
            in_nelems,
            out_nelems,
            dtype,
            group_size,
            bytes,
        }
    }

    /// True when every participant sends the same amount, so the size can help match instances.
    pub fn fixed_size(&self) -> bool {
        matches!(
            self.name.as_str(),
            "all_reduce" | "all_gather" | "reduce_scatter" | "broadcast" | "reduce"
        )
    }

    /// The size that takes part in matching instances across ranks (None for variable-size ones).
    pub fn size_key(&self) -> Option<i64> {
        if self.fixed_size() {
            self.bytes.or(self.in_nelems)
        } else {
            None
        }
    }

    /// busbw / algbw for a group of `n`.
    pub fn bus_factor(&self, n: i64) -> f64 {
        let n = n.max(1) as f64;
        match self.name.as_str() {
            "all_reduce" => 2.0 * (n - 1.0) / n,
            "all_gather" | "reduce_scatter" | "all_to_all" => (n - 1.0) / n,
            _ => 1.0,
        }
    }
}

/// Bytes per element of a dtype as PyTorch and NCCL spell it.
pub fn dtype_bytes(t: &str) -> Option<i64> {
    let t = t.trim().trim_start_matches("c10::").to_ascii_lowercase();
    Some(match t.as_str() {
        "double" | "float64" | "f64" | "long int" | "long" | "int64" | "int64_t" | "i64"
        | "uint64" | "complexfloat" | "complex64" => 8,
        "float" | "float32" | "f32" | "int" | "int32" | "int32_t" | "i32" | "uint32" => 4,
        "half" | "float16" | "f16" | "bfloat16" | "bf16" | "short int" | "short" | "int16" => 2,
        "char" | "signed char" | "unsigned char" | "int8" | "int8_t" | "uint8" | "uint8_t"
        | "i8" | "u8" | "bool" | "byte" | "float8_e4m3fn" | "float8_e5m2" | "fp8" => 1,
        "complexdouble" | "complex128" => 16,
        _ => return None,
    })
}

/// The normalised name of a collective, from any of its spellings.
pub fn normalise(raw: &str) -> String {
    let raw = raw.trim();
    let raw = raw.split_once(':').map_or(raw, |x| x.1);
    let squashed: String = raw
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .collect::<String>()
        .to_ascii_lowercase();
    const NAMES: &[(&str, &str)] = &[
        ("allreduce", "all_reduce"),
        ("allgather", "all_gather"),
        ("reducescatter", "reduce_scatter"),
        ("alltoall", "all_to_all"),
        ("broadcast", "broadcast"),
        ("sendrecv", "send_recv"),
        ("barrier", "barrier"),
        ("reduce", "reduce"),
        ("send", "send"),
        ("recv", "recv"),
    ];
    NAMES
        .iter()
        .find(|(k, _)| squashed.contains(k))
        .map_or_else(|| raw.to_ascii_lowercase(), |(_, v)| v.to_string())
}

/// The collective a kernel name says: `ncclKernel_AllReduce_RING_LL_Sum_float(...)` -> `AllReduce`.
pub fn kernel_collective(kernel: &str) -> String {
    let head = kernel.split('(').next().unwrap_or(kernel);
    head.split('_').nth(1).unwrap_or(head).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_agree_across_spellings() {
        for s in [
            "allreduce",
            "nccl:all_reduce",
            "gloo:all_reduce",
            "AllReduce",
        ] {
            assert_eq!(normalise(s), "all_reduce", "{s}");
        }
        assert_eq!(normalise("_allgather_base"), "all_gather");
        assert_eq!(normalise("nccl:all_to_all"), "all_to_all");
        assert_eq!(normalise("_reduce_scatter_base"), "reduce_scatter");
        assert_eq!(normalise("SendRecv"), "send_recv");
        assert_eq!(
            kernel_collective(
                "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long)"
            ),
            "AllReduce"
        );
        assert_eq!(
            kernel_collective("ncclDevKernel_AllGather_RING_LL(x)"),
            "AllGather"
        );
    }

    #[test]
    fn message_size_and_bus_factor_follow_nccl() {
        let c = |name: &str, i, o| {
            Collective::new(name, "0".into(), i, o, Some("float".into()), Some(8))
        };
        assert_eq!(c("allreduce", Some(100), None).bytes, Some(400));
        assert_eq!(c("allgather", Some(100), None).bytes, Some(3200));
        assert_eq!(c("allgather", Some(100), Some(800)).bytes, Some(3200));
        assert_eq!(c("reduce_scatter", Some(800), Some(100)).bytes, Some(3200));
        assert_eq!(c("allreduce", None, None).bus_factor(8), 2.0 * 7.0 / 8.0);
        assert_eq!(c("allgather", None, None).bus_factor(8), 7.0 / 8.0);
        assert_eq!(c("broadcast", None, None).bus_factor(8), 1.0);
        assert_eq!(dtype_bytes("c10::BFloat16"), Some(2));
        assert_eq!(dtype_bytes("long int"), Some(8));
    }
}
