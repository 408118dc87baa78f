//! Values kept per lane in one list, for the analyses' tables by lane and slice.

/// Values kept per lane in one list: lane `l`'s are `values[start[l]..start[l + 1]]`, read and
/// written as `x[l][i]` like a `Vec<Vec<T>>`, without an allocation and a 24-byte header per
/// lane: on 100,000 one-slice threads those had cost more than the values. Each lane's length is
/// fixed when made ([`PerLane::filled`]).
#[derive(Debug, Clone)]
pub struct PerLane<T> {
    start: Vec<u32>,
    values: Vec<T>,
}

impl<T: Clone> PerLane<T> {
    /// `lens[l]` copies of `value` for each lane `l`.
    pub fn filled(lens: impl IntoIterator<Item = usize>, value: T) -> PerLane<T> {
        let mut start = vec![0u32];
        let mut n = 0usize;
        for len in lens {
            n += len;
            start.push(u32::try_from(n).expect("at most 2^32 values per lane table"));
        }
        PerLane {
            start,
            values: vec![value; n],
        }
    }
}

impl PerLane<u32> {
    /// `items` (lane, value) grouped by lane, each lane's in the order they come (see
    /// [`crate::ordered::grouped`]); `items` is called twice.
    pub fn grouped<I: Iterator<Item = (usize, u32)>>(
        lanes: usize,
        items: impl Fn() -> I,
    ) -> PerLane<u32> {
        let (start, values) = crate::ordered::grouped(lanes, items);
        PerLane { start, values }
    }
}

impl<T> PerLane<T> {
    /// No lanes (what a graph joined from several ranks holds).
    pub fn empty() -> PerLane<T> {
        PerLane {
            start: vec![0],
            values: Vec::new(),
        }
    }

    /// The number of lanes.
    pub fn lanes(&self) -> usize {
        self.start.len() - 1
    }

    /// Lane `l`'s values; empty for a lane past the end.
    pub fn get(&self, l: usize) -> Option<&[T]> {
        (l < self.lanes()).then(|| &self[l])
    }

    /// Each lane's values, in lane order.
    pub fn iter(&self) -> impl Iterator<Item = &[T]> {
        (0..self.lanes()).map(|l| &self[l])
    }

    /// Bytes held (capacity: what the allocator gave).
    pub fn heap_bytes(&self) -> usize {
        self.start.capacity() * 4 + self.values.capacity() * std::mem::size_of::<T>()
    }
}

impl<T> std::ops::Index<usize> for PerLane<T> {
    type Output = [T];
    fn index(&self, l: usize) -> &[T] {
        &self.values[self.start[l] as usize..self.start[l + 1] as usize]
    }
}

impl<T> std::ops::IndexMut<usize> for PerLane<T> {
    fn index_mut(&mut self, l: usize) -> &mut [T] {
        &mut self.values[self.start[l] as usize..self.start[l + 1] as usize]
    }
}
