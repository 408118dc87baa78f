//! Stable slice colours: the same name family gets the same colour in every trace and every session.
//!
//! A name's family is the name without digits, template arguments or parameter lists, so
//! `ProfilerStep#3` and `ProfilerStep#4` match, and so do the instantiations of one kernel template.
//! The family is hashed (FNV-1a, fixed, not the std hasher whose seed varies) onto [`HASHED`] palette
//! slots; memory copies, memsets and synchronisations get fixed slots so they read the same everywhere.
//! The palette is defined here in light and dark variants; the page paints with it, nothing more.

/// Number of palette slots chosen by hashing a family.
pub const HASHED: u8 = 16;
/// Fixed slot for GPU memory copies (`gpu_memcpy`, 1.x `Memcpy`).
pub const MEMCPY: u8 = HASHED;
/// Fixed slot for GPU memsets.
pub const MEMSET: u8 = HASHED + 1;
/// Fixed slot for synchronisation (`cuda_sync`, `cudaStreamSynchronize`, ...).
pub const SYNC: u8 = HASHED + 2;

/// `(light, dark)` CSS colours, indexed by slot. Light theme: mid-tone fills for dark text; dark
/// theme: deeper fills for light text.
pub const PALETTE: [(&str, &str); HASHED as usize + 3] = [
    ("#8fb8de", "#3b6a98"),
    ("#9fd39a", "#3f7a3a"),
    ("#f2b97a", "#9a5e1c"),
    ("#c9a7e0", "#6d4a8c"),
    ("#f0a3a3", "#974040"),
    ("#92d6cf", "#2f7b73"),
    ("#e6d27c", "#85741c"),
    ("#b8c0cc", "#56606e"),
    ("#a9c7f5", "#4666a4"),
    ("#d6b48f", "#7a5736"),
    ("#f5a9cf", "#964470"),
    ("#b5dd7d", "#5a7d26"),
    ("#8fd0ee", "#2d7294"),
    ("#dcb0f2", "#7c4b98"),
    ("#f6c39a", "#a0612d"),
    ("#a3d9b1", "#3c7a4f"),
    ("#e86a5a", "#b8493b"),
    ("#c0c0c0", "#6b6b6b"),
    ("#f0504f", "#d03b3a"),
];

/// The family of a name: see the module docs.
pub fn family(name: &str) -> String {
    let name = name.strip_prefix("void ").unwrap_or(name);
    let cut = name.find(['<', '(']).unwrap_or(name.len());
    // `(anonymous namespace)::kernel<...>`: a cut this early would merge every such kernel.
    let head = if cut < 4 || name[..cut].ends_with("::") {
        &name[..name.find('<').unwrap_or(name.len())]
    } else {
        &name[..cut]
    };
    head.chars()
        .filter(|c| !c.is_ascii_digit() && *c != '#')
        .collect::<String>()
        .trim()
        .to_string()
}

/// The palette slot of a slice from its name and category.
pub fn slot(name: &str, cat: &str) -> u8 {
    match cat {
        "gpu_memcpy" | "Memcpy" => return MEMCPY,
        "gpu_memset" | "Memset" => return MEMSET,
        "cuda_sync" => return SYNC,
        _ => {}
    }
    if name.contains("Synchronize") {
        return SYNC;
    }
    (fnv1a(family(name).as_bytes()) % HASHED as u64) as u8
}

fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families() {
        assert_eq!(family("ProfilerStep#12"), "ProfilerStep");
        assert_eq!(family("aten::add_"), "aten::add_");
        assert_eq!(
            family("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>(int, T2, T3)"),
            "at::native::vectorized_elementwise_kernel"
        );
        assert_eq!(
            family("void at::native::(anonymous namespace)::distribution_elementwise_grid_stride_kernel<float, 4>(int)"),
            "at::native::(anonymous namespace)::distribution_elementwise_grid_stride_kernel"
        );
        assert_eq!(family("nn.Module: Linear_0"), "nn.Module: Linear_");
        assert_eq!(family(""), "");
    }

    #[test]
    fn slots_are_stable_and_in_range() {
        assert_eq!(
            slot("ProfilerStep#1", "user_annotation"),
            slot("ProfilerStep#2", "user_annotation")
        );
        assert_eq!(
            slot("Memcpy HtoD (Pageable -> Device)", "gpu_memcpy"),
            MEMCPY
        );
        assert_eq!(slot("Memset (Device)", "gpu_memset"), MEMSET);
        assert_eq!(slot("cudaStreamSynchronize", "cuda_runtime"), SYNC);
        // Pinned: a change of hash or palette size would recolour every user's traces.
        assert_eq!(slot("aten::mm", "cpu_op"), (fnv1a(b"aten::mm") % 16) as u8);
        for name in [
            "a",
            "aten::conv2d",
            "cudaLaunchKernel",
            "ncclKernel_AllReduce",
        ] {
            assert!(slot(name, "kernel") < HASHED);
        }
    }
}
