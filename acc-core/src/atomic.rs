//! Atomic accesses for the `atomic` construct (OpenACC 3.3 section 2.12): read, write, update and
//! capture on every scalar type, really atomic across the threads that run a region.
//!
//! The read and the write of `x` happen atomically together; evaluating the other operand does
//! not (3.3 section 2.12). Updates are compare-and-swap loops over the value's bits.

use std::sync::atomic::{
    AtomicBool, AtomicI16, AtomicI32, AtomicI64, AtomicI8, AtomicIsize, AtomicU16, AtomicU32,
    AtomicU64, AtomicU8, AtomicUsize, Ordering,
};
use std::sync::Mutex;

/// Scalar types the `atomic` construct applies to.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be accessed atomically",
    note = "`atomic` applies to scalars: integers, f32, f64 and bool (OpenACC 3.3 section 2.12)"
)]
pub trait AtomicScalar: Copy {
    /// Atomically reads `*p`.
    ///
    /// # Safety
    /// `p` must be valid for reads and writes and every concurrent access to `*p` atomic.
    unsafe fn atomic_load(p: *mut Self) -> Self;
    /// Atomically writes `v` to `*p`.
    ///
    /// # Safety
    /// As [`AtomicScalar::atomic_load`].
    unsafe fn atomic_store(p: *mut Self, v: Self);
    /// Atomically replaces `*p` by `f(*p)`; returns the old and the new value.
    ///
    /// # Safety
    /// As [`AtomicScalar::atomic_load`].
    unsafe fn atomic_update(p: *mut Self, f: impl FnMut(Self) -> Self) -> (Self, Self);
}

/// Stripes of locks for values whose address is not aligned for a native atomic (64-bit values
/// on 32-bit targets).
static FALLBACK: [Mutex<()>; 16] = [const { Mutex::new(()) }; 16];

fn fallback_lock(addr: usize) -> std::sync::MutexGuard<'static, ()> {
    FALLBACK[(addr >> 3) % FALLBACK.len()]
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}

macro_rules! atomic_int {
    ($($t:ty => $a:ty),*) => {$(
        #[diagnostic::do_not_recommend]
        impl AtomicScalar for $t {
            #[inline]
            unsafe fn atomic_load(p: *mut Self) -> Self {
                if (p as usize) % std::mem::align_of::<$a>() != 0 {
                    let _g = fallback_lock(p as usize);
                    return p.read();
                }
                <$a>::from_ptr(p).load(Ordering::SeqCst)
            }
            #[inline]
            unsafe fn atomic_store(p: *mut Self, v: Self) {
                if (p as usize) % std::mem::align_of::<$a>() != 0 {
                    let _g = fallback_lock(p as usize);
                    return p.write(v);
                }
                <$a>::from_ptr(p).store(v, Ordering::SeqCst)
            }
            #[inline]
            unsafe fn atomic_update(p: *mut Self, mut f: impl FnMut(Self) -> Self) -> (Self, Self) {
                if (p as usize) % std::mem::align_of::<$a>() != 0 {
                    let _g = fallback_lock(p as usize);
                    let old = p.read();
                    let new = f(old);
                    p.write(new);
                    return (old, new);
                }
                let a = <$a>::from_ptr(p);
                let mut old = a.load(Ordering::Relaxed);
                loop {
                    let new = f(old);
                    match a.compare_exchange_weak(old, new, Ordering::SeqCst, Ordering::Relaxed) {
                        Ok(_) => return (old, new),
                        Err(cur) => old = cur,
                    }
                }
            }
        }
    )*};
}
atomic_int!(i8 => AtomicI8, i16 => AtomicI16, i32 => AtomicI32, i64 => AtomicI64,
    isize => AtomicIsize, u8 => AtomicU8, u16 => AtomicU16, u32 => AtomicU32, u64 => AtomicU64,
    usize => AtomicUsize, bool => AtomicBool);

macro_rules! atomic_float {
    ($($t:ty => $bits:ty),*) => {$(
        #[diagnostic::do_not_recommend]
        impl AtomicScalar for $t {
            #[inline]
            unsafe fn atomic_load(p: *mut Self) -> Self {
                <$t>::from_bits(<$bits>::atomic_load(p.cast()))
            }
            #[inline]
            unsafe fn atomic_store(p: *mut Self, v: Self) {
                <$bits>::atomic_store(p.cast(), v.to_bits())
            }
            #[inline]
            unsafe fn atomic_update(p: *mut Self, mut f: impl FnMut(Self) -> Self) -> (Self, Self) {
                let (o, n) = <$bits>::atomic_update(p.cast(), |b| f(<$t>::from_bits(b)).to_bits());
                (<$t>::from_bits(o), <$t>::from_bits(n))
            }
        }
    )*};
}
atomic_float!(f32 => u32, f64 => u64);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn update_under_contention() {
        let mut x = 0.0f64;
        let p = &mut x as *mut f64 as usize;
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(move || {
                    for _ in 0..10_000 {
                        unsafe { f64::atomic_update(p as *mut f64, |v| v + 1.0) };
                    }
                });
            }
        });
        assert_eq!(x, 40_000.0);
    }
}
