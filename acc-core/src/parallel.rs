//! Splitting a parallel loop's iteration space into chunks run by a device's host threads, with
//! one result per chunk returned in chunk order (so reductions combine deterministically for a
//! given number of threads).

use std::sync::OnceLock;

use crate::device::HostThreads;
use crate::icv::Inherited;

/// Chunks per thread: enough to even out uneven iterations, few enough that each chunk is a long
/// sequential loop the compiler can vectorize.
const CHUNKS_PER_THREAD: u64 = 4;

/// How many chunks a loop of `trips` iterations is split into on `threads` threads.
pub fn chunk_count(trips: u64, threads: usize) -> usize {
    trips.min(threads.max(1) as u64 * CHUNKS_PER_THREAD) as usize
}

/// The iterations `[k0, k1)` of chunk `c` of `chunks` over `trips` iterations.
pub fn chunk_bounds(trips: u64, chunks: usize, c: usize) -> (u64, u64) {
    let chunks = chunks as u128;
    let lo = (trips as u128 * c as u128 / chunks) as u64;
    let hi = (trips as u128 * (c as u128 + 1) / chunks) as u64;
    (lo, hi)
}

/// Runs `body(k0, k1)` over chunks of `0..trips` on `threads`, each chunk on a thread that
/// inherits the launching thread's ICVs, and returns the chunks' results in order.
pub fn parallel_chunks<R, F>(
    threads: &dyn HostThreads,
    inherited: &Inherited,
    trips: u64,
    body: F,
) -> Vec<R>
where
    R: Send + Sync,
    F: Fn(u64, u64) -> R + Sync,
{
    let chunks = chunk_count(trips, threads.parallelism());
    if chunks == 0 {
        return Vec::new();
    }
    let slots: Vec<OnceLock<R>> = (0..chunks).map(|_| OnceLock::new()).collect();
    threads.run(chunks, &|c| {
        let (k0, k1) = chunk_bounds(trips, chunks, c);
        let r = inherited.run(|| body(k0, k1));
        // Each chunk index runs exactly once, so the slot is empty.
        let _ = slots[c].set(r);
    });
    slots
        .into_iter()
        .map(|s| s.into_inner().expect("HostThreads::run ran every chunk"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_cover_the_space_exactly() {
        for trips in [0u64, 1, 7, 8, 9, 1000, u64::MAX] {
            let n = chunk_count(trips, 3);
            let mut next = 0;
            for c in 0..n {
                let (lo, hi) = chunk_bounds(trips, n, c);
                assert_eq!(lo, next);
                assert!(hi >= lo);
                next = hi;
            }
            assert_eq!(next, if n == 0 { 0 } else { trips });
        }
    }
}
