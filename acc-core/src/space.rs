//! Iteration spaces of loops associated with a `loop` construct (OpenACC 3.3 section 2.9).
//!
//! A loop's iterator is a Rust range (`a..b`, `a..=b`) optionally followed by `.rev()` and
//! `.step_by(s)` in any order; its iterations are `start + k * step` for `k` in `0..trips`.
//! Devices split `0..trips` (or, for `collapse`, the product of several loops' trip counts)
//! and turn each `k` back into the loop variable's value.

use std::ops::{Range, RangeInclusive};

/// Integer types a parallel loop may count with.
pub trait LoopIndex: Copy + PartialOrd + Send + Sync + 'static {
    /// The value as a wide signed integer.
    fn to_i128(self) -> i128;
    /// `self + k * step` in the type's wrapping arithmetic; exact whenever the true value fits.
    fn offset(self, k: u64, step: i128) -> Self;
    /// `self + k` in the type's wrapping arithmetic.
    fn offset_unit(self, k: u64) -> Self;
}

macro_rules! loop_index {
    ($($t:ty),*) => {$(
        impl LoopIndex for $t {
            #[inline(always)]
            fn to_i128(self) -> i128 { self as i128 }
            #[inline(always)]
            fn offset(self, k: u64, step: i128) -> Self {
                self.wrapping_add((k as $t).wrapping_mul(step as $t))
            }
            #[inline(always)]
            fn offset_unit(self, k: u64) -> Self { self.wrapping_add(k as $t) }
        }
    )*};
}
loop_index!(i8, i16, i32, i64, isize, u8, u16, u32, u64, usize);

fn trips_between(first: i128, last_inclusive: i128) -> u64 {
    if last_inclusive < first {
        return 0;
    }
    let n = last_inclusive - first + 1;
    u64::try_from(n).unwrap_or_else(|_| {
        panic!("acc: a parallel loop of {n} iterations exceeds the limit of 2^64-1 iterations")
    })
}

/// The space of `a..b` or `a..=b`: step 1, the form almost every loop has, kept apart so chunks
/// are plain counted loops.
#[derive(Clone, Copy, Debug)]
pub struct UnitSpace<T> {
    start: T,
    trips: u64,
}

impl<T: LoopIndex> UnitSpace<T> {
    /// The space of `r`.
    pub fn new(r: Range<T>) -> Self {
        let trips = trips_between(r.start.to_i128(), r.end.to_i128() - 1);
        UnitSpace {
            start: r.start,
            trips,
        }
    }
    /// The space of `r`.
    pub fn inclusive(r: RangeInclusive<T>) -> Self {
        let (s, e) = r.into_inner();
        UnitSpace {
            start: s,
            trips: trips_between(s.to_i128(), e.to_i128()),
        }
    }
    /// Number of iterations.
    #[inline]
    pub fn trips(&self) -> u64 {
        self.trips
    }
    /// The loop variable's value in iteration `k`.
    #[inline(always)]
    pub fn value(&self, k: u64) -> T {
        self.start.offset_unit(k)
    }
    /// The loop variable's values in iterations `k0..k1`.
    #[inline(always)]
    pub fn chunk(&self, k0: u64, k1: u64) -> impl Iterator<Item = T> {
        let start = self.start;
        (k0..k1).map(move |k| start.offset_unit(k))
    }
    /// The same space as a general strided one.
    pub fn strided(self) -> StridedSpace<T> {
        StridedSpace {
            start: self.start,
            step: 1,
            trips: self.trips,
        }
    }
}

/// The space of a range with any `.rev()` and `.step_by(s)` applied.
#[derive(Clone, Copy, Debug)]
pub struct StridedSpace<T> {
    start: T,
    step: i128,
    trips: u64,
}

impl<T: LoopIndex> StridedSpace<T> {
    /// The space of `r`.
    pub fn new(r: Range<T>) -> Self {
        UnitSpace::new(r).strided()
    }
    /// The space of `r`.
    pub fn inclusive(r: RangeInclusive<T>) -> Self {
        UnitSpace::inclusive(r).strided()
    }
    /// The space of `.rev()` applied to this one.
    pub fn rev(self) -> Self {
        if self.trips == 0 {
            return self;
        }
        let last = self.start.offset(self.trips - 1, self.step);
        StridedSpace {
            start: last,
            step: -self.step,
            trips: self.trips,
        }
    }
    /// The space of `.step_by(s)` applied to this one.
    ///
    /// # Panics
    /// When `s` is 0, as `Iterator::step_by` does.
    pub fn step_by(self, s: usize) -> Self {
        assert!(
            s != 0,
            "acc: step_by(0) in a parallel loop (the step must be positive)"
        );
        let s128 = s as i128;
        let trips = self.trips.div_ceil(s as u64).min(self.trips);
        StridedSpace {
            start: self.start,
            step: self.step * s128,
            trips,
        }
    }
    /// Number of iterations.
    #[inline]
    pub fn trips(&self) -> u64 {
        self.trips
    }
    /// The loop variable's value in iteration `k`.
    #[inline(always)]
    pub fn value(&self, k: u64) -> T {
        self.start.offset(k, self.step)
    }
    /// The loop variable's values in iterations `k0..k1`.
    #[inline(always)]
    pub fn chunk(&self, k0: u64, k1: u64) -> impl Iterator<Item = T> {
        let (start, step) = (self.start, self.step);
        (k0..k1).map(move |k| start.offset(k, step))
    }
}

/// Visits the iterations `k0..k1` of the collapsed space of loops with trip counts `trips`
/// (outermost first) as runs of the innermost loop: each item holds the outer loops' iteration
/// numbers and the innermost loop's iterations `lo..hi`. An iterator, so that a loop over it
/// keeps the run's body in the caller's function, where its array views are parameters the
/// optimizer knows do not alias (a closure called per run, capturing them, was not vectorized:
/// half the speed of the same loops written gang/vector on two cores).
pub struct CollapsedRuns<const N: usize> {
    trips: [u64; N],
    k: u64,
    k1: u64,
}

impl<const N: usize> CollapsedRuns<N> {
    /// The runs of iterations `k0..k1` of loops with trip counts `trips` (outermost first).
    #[inline]
    pub fn new(trips: [u64; N], k0: u64, k1: u64) -> Self {
        let k1 = if trips[N - 1] == 0 { k0 } else { k1 };
        CollapsedRuns { trips, k: k0, k1 }
    }
}

impl<const N: usize> Iterator for CollapsedRuns<N> {
    /// The outer loops' iteration numbers, and the innermost loop's iterations `lo..hi`.
    type Item = ([u64; N], u64, u64);
    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.k >= self.k1 {
            return None;
        }
        let inner = self.trips[N - 1];
        let mut idx = [0u64; N];
        let mut rest = self.k / inner;
        let lo = self.k % inner;
        for level in (0..N - 1).rev() {
            idx[level] = rest % self.trips[level];
            rest /= self.trips[level];
        }
        let hi = inner.min(lo + (self.k1 - self.k));
        idx[N - 1] = lo;
        self.k += hi - lo;
        Some((idx, lo, hi))
    }
}

/// The product of trip counts of collapsed loops.
///
/// # Panics
/// When the product exceeds 2^64-1 iterations.
pub fn collapsed_trips(trips: &[u64]) -> u64 {
    trips.iter().try_fold(1u64, |a, &t| a.checked_mul(t)).unwrap_or_else(|| {
        panic!("acc: collapsed loops of {trips:?} iterations exceed the limit of 2^64-1 iterations")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all<T: LoopIndex>(s: &StridedSpace<T>) -> Vec<T> {
        s.chunk(0, s.trips()).collect()
    }

    #[test]
    fn matches_std_iterators() {
        let r = 3i32..20;
        assert_eq!(
            all(&StridedSpace::new(r.clone())),
            r.clone().collect::<Vec<_>>()
        );
        assert_eq!(
            all(&StridedSpace::new(r.clone()).rev()),
            r.clone().rev().collect::<Vec<_>>()
        );
        assert_eq!(
            all(&StridedSpace::new(r.clone()).step_by(4)),
            r.clone().step_by(4).collect::<Vec<_>>()
        );
        assert_eq!(
            all(&StridedSpace::new(r.clone()).step_by(4).rev()),
            r.clone().step_by(4).rev().collect::<Vec<_>>()
        );
        assert_eq!(
            all(&StridedSpace::new(r.clone()).rev().step_by(3)),
            r.clone().rev().step_by(3).collect::<Vec<_>>()
        );
        let u = 0u8..=255;
        assert_eq!(
            all(&StridedSpace::inclusive(u.clone()).rev()),
            u.clone().rev().collect::<Vec<_>>()
        );
        let (hi, lo) = (5usize, 2usize);
        assert_eq!(UnitSpace::new(hi..lo).trips(), 0);
        assert_eq!(
            UnitSpace::inclusive(-3i64..=3)
                .chunk(2, 5)
                .collect::<Vec<_>>(),
            vec![-1, 0, 1]
        );
    }

    #[test]
    fn collapsed_runs_cover_every_point_once() {
        let trips = [3u64, 4, 5];
        let total = collapsed_trips(&trips);
        let mut seen = vec![];
        for (k0, k1) in [(0, 7), (7, 23), (23, total)] {
            for (o, lo, hi) in CollapsedRuns::new(trips, k0, k1) {
                for i in lo..hi {
                    seen.push((o[0], o[1], i));
                }
            }
        }
        let expect: Vec<_> = (0..3)
            .flat_map(|a| (0..4).flat_map(move |b| (0..5).map(move |c| (a, b, c))))
            .collect();
        assert_eq!(seen, expect);
    }
}
