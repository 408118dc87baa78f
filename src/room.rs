//! How the columns that grow with the input are given room: reserved for the whole input, from the
//! density read so far, once its size is known, instead of doubling. Doubling leaves a column with
//! up to twice its size spare and, in wasm (whose memory keeps its high-water mark), each old block
//! as a hole; the trace parser's slices, args and events and the snapshot reader's trace entries
//! grow this way.

/// How much room to make for something `n` of which fill the room there is, `offset` bytes into
/// the input whose range is `expect`: what the whole input will hold at the density read so far,
/// and 5% more, once its size is known and a 64th of it is read (earlier, a trace's metadata or a
/// first thread can be all there is); doubling before that, or without a size. At least an eighth
/// more, so that a projection that falls short near the end costs few copies.
pub(crate) fn room(expect: Option<(u64, u64)>, n: usize, offset: u64) -> usize {
    let doubled = (2 * n).max(1024);
    let Some((start, end)) = expect else {
        return doubled;
    };
    let (read, total) = (offset.saturating_sub(start), end.saturating_sub(start));
    if read == 0 || read < total / 64 {
        return doubled;
    }
    let projected = n as f64 * (total as f64 / read as f64) * 1.05;
    (projected as usize).max(n + (n / 8).max(1024))
}

/// Makes room in `v` as [`room`] says when it is full: for the lists that grow with the input
/// (instants, flow points, memory events), which doubling would leave with up to twice their size
/// spare and, in wasm, their old blocks as holes.
pub(crate) fn make_room<T>(v: &mut Vec<T>, expect: Option<(u64, u64)>, offset: u64) {
    if v.len() == v.capacity() {
        let want = room(expect, v.len(), offset);
        v.reserve_exact(want - v.len());
    }
}
