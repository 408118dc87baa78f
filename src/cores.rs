//! Work split over two cores where the process may use a second one: natively, not in wasm, whose
//! module has no threads (the page parallelizes with workers instead), nor where the CPU set the
//! process is allowed (as `taskset` gives it) has one core.

/// `a` and `b`, at once on two threads when `big` and [`two_cores`]; one after the other
/// otherwise.
pub(crate) fn both<A: Send, B: Send>(
    big: bool,
    a: impl FnOnce() -> A + Send,
    b: impl FnOnce() -> B + Send,
) -> (A, B) {
    if !(big && two_cores()) {
        return (a(), b());
    }
    std::thread::scope(|s| {
        let other = s.spawn(b);
        let a = a();
        match other.join() {
            Ok(b) => (a, b),
            Err(panic) => std::panic::resume_unwind(panic),
        }
    })
}

/// Whether this process may use a second core.
pub(crate) fn two_cores() -> bool {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    !cfg!(target_arch = "wasm32")
        && *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get())) > 1
}
