//! Private arrays too large for a thread's own memory (3.3 sections 2.5.13, 2.5.14, 2.9.10:
//! NPB EP's `x[2*NK]`, 1 MiB with the standard MK = 16), spilled to device memory: one copy
//! per thread of a launch, in one buffer the launch provides, the grid capped to the copies
//! that fit. Decided here once; both emitters, the launch layout and `ACC_INFO` read it.
//!
//! The copies are interleaved: element `i` of thread `t`'s copy of array `a` is element
//! `i * threads + t` of `a`'s part of the buffer, so that adjacent threads touching the same
//! element (as a parallel loop over the array's owners does) touch adjacent addresses. `a`'s
//! part starts at byte `threads * offset`, `offset` the bytes of the spilled arrays before it
//! in one thread's share.

use super::{Kernel, Local, LocalId, Scalar};

/// Bytes of a private array a thread holds in its own memory (registers, or the local memory
/// the driver reserves for every thread the device runs at once); a larger one is spilled.
pub const THREAD_ARRAY_BYTES: u64 = 32 * 1024;

/// Whether private array `l` lives in device memory: past [`THREAD_ARRAY_BYTES`] with each
/// element taken as at least a 4-byte word (as WGSL holds narrow types). The same on every
/// target, so that `ACC_INFO` names the arrays every emitter spills; each lays them out with
/// its own element sizes ([`Spilled::of`]).
pub fn spills(l: &Local) -> bool {
    l.len
        .is_some_and(|n| u64::from(n) * u64::from(l.ty.size().max(4)) > THREAD_ARRAY_BYTES)
}

/// One spilled private array.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SpilledArray {
    pub local: LocalId,
    pub ty: Scalar,
    /// Its elements.
    pub len: u32,
    /// Bytes of one element on the target.
    pub elem_bytes: u32,
    /// Bytes of the spilled arrays before it in a thread's share (a multiple of 8).
    pub offset: u64,
}

impl SpilledArray {
    /// Bytes of one thread's copy.
    pub fn bytes(&self) -> u64 {
        u64::from(self.len) * u64::from(self.elem_bytes)
    }
}

/// The private arrays of a kernel that live in device memory.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Spilled {
    pub arrays: Vec<SpilledArray>,
    /// Bytes one thread's copies take (a multiple of 8; 0 when nothing is spilled).
    pub bytes_per_thread: u64,
}

impl Spilled {
    /// The private arrays of `k` that [`spills`] picks, laid out with `size` giving an
    /// element's bytes on the target. One the region's code outside its parallel loops writes
    /// (a construct's `firstprivate` copy, gang-redundant writes,
    /// [`Kernel::array_locals_layout`]) is spilled too: each thread's copy starts from the
    /// locals buffer, as a thread's own copy of a smaller one does.
    pub fn of(k: &Kernel, size: impl Fn(Scalar) -> u32) -> Spilled {
        let mut spilled = Spilled::default();
        for (i, l) in k.function.locals.iter().enumerate() {
            let Some(len) = l.len.filter(|_| spills(l)) else {
                continue;
            };
            let elem_bytes = size(l.ty);
            let bytes = u64::from(len) * u64::from(elem_bytes);
            let local = i as LocalId;
            spilled.arrays.push(SpilledArray {
                local,
                ty: l.ty,
                len,
                elem_bytes,
                offset: spilled.bytes_per_thread,
            });
            spilled.bytes_per_thread = (spilled.bytes_per_thread + bytes).next_multiple_of(8);
        }
        spilled
    }

    /// The spilled array of local `l`, if it is one.
    pub fn get(&self, l: LocalId) -> Option<&SpilledArray> {
        self.arrays.iter().find(|a| a.local == l)
    }

    pub fn is_empty(&self) -> bool {
        self.arrays.is_empty()
    }
}

/// `bytes` in KiB, MiB or GiB as a reader wants it (`128 KiB`).
pub fn show_bytes(bytes: u64) -> String {
    const K: u64 = 1024;
    match bytes {
        b if b >= K * K * K && b % (K * K * K) == 0 => format!("{} GiB", b / (K * K * K)),
        b if b >= K * K && b % (K * K) == 0 => format!("{} MiB", b / (K * K)),
        b if b >= K && b % K == 0 => format!("{} KiB", b / K),
        b => format!("{b} bytes"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::KernelBuilder;

    #[test]
    fn arrays_past_a_threads_memory_are_spilled_in_order() {
        let mut b = KernelBuilder::new("spill");
        let small = b.local_array("small", Scalar::F64, 4096);
        let big = b.local_array("big", Scalar::F64, 4097);
        let odd = b.local_array("odd", Scalar::U8, 40_001);
        let also = b.local_array("also", Scalar::F32, 10_000);
        let k = b.finish().unwrap();
        let s = Spilled::of(&k, Scalar::size);
        let locals: Vec<LocalId> = s.arrays.iter().map(|a| a.local).collect();
        assert_eq!(locals, vec![big.id(), odd.id(), also.id()]);
        assert!(s.get(small.id()).is_none());
        assert_eq!(s.arrays[1].offset, 4097 * 8);
        // The byte array ends off a multiple of 8: the next starts on one.
        assert_eq!(
            s.arrays[2].offset,
            (4097 * 8 + 40_001u64).next_multiple_of(8)
        );
        assert_eq!(s.bytes_per_thread, s.arrays[2].offset + 40_000);
        assert_eq!(show_bytes(s.arrays[0].bytes()), "32776 bytes");
        assert_eq!(show_bytes(128 * 1024), "128 KiB");
        // Narrow elements count as 4-byte words, whatever the target's layout.
        let byte = |n| Local {
            name: "b".into(),
            ty: Scalar::U8,
            len: Some(n),
        };
        assert!(!spills(&byte(8192)) && spills(&byte(8193)));
    }
}
