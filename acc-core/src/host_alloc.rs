//! Device memory of devices that share host memory (`acc_malloc` and friends on host and
//! multicore): host allocations, tracked so that every copy is checked against a live
//! allocation and no safe call can reach freed or foreign memory.

use std::alloc::Layout;
use std::collections::BTreeMap;
use std::sync::Mutex;

use crate::error::{Error, Result};

const ALIGN: usize = 256;

static ALLOCS: Mutex<BTreeMap<usize, usize>> = Mutex::new(BTreeMap::new());

/// Allocations an owner frees itself (`acc::DeviceVec`): `acc::free` refuses them.
static OWNED: Mutex<std::collections::BTreeSet<usize>> =
    Mutex::new(std::collections::BTreeSet::new());

/// [`malloc`] for an owner that frees it with [`free_owned`]; [`free`] refuses it.
pub fn malloc_owned(bytes: usize) -> Result<usize> {
    let addr = malloc(bytes)?;
    OWNED.lock().unwrap_or_else(|e| e.into_inner()).insert(addr);
    Ok(addr)
}

/// Frees what [`malloc_owned`] made.
pub fn free_owned(addr: usize) -> Result<()> {
    OWNED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .remove(&addr);
    free(addr)
}

fn table() -> std::sync::MutexGuard<'static, BTreeMap<usize, usize>> {
    ALLOCS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Allocates `bytes` zeroed bytes; returns the address.
pub fn malloc(bytes: usize) -> Result<usize> {
    let layout =
        Layout::from_size_align(bytes.max(1), ALIGN).map_err(|_| Error::OutOfMemory { bytes })?;
    // SAFETY: the layout has a non-zero size.
    let p = unsafe { std::alloc::alloc_zeroed(layout) };
    if p.is_null() {
        return Err(Error::OutOfMemory { bytes });
    }
    table().insert(p as usize, bytes);
    Ok(p as usize)
}

/// Frees an allocation made by [`malloc`].
pub fn free(addr: usize) -> Result<()> {
    if OWNED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .contains(&addr)
    {
        return Err(Error::InvalidDevicePtr {
            addr,
            what: "acc::free (the memory of an acc::DeviceVec, freed when it drops)",
        });
    }
    let bytes = table().remove(&addr).ok_or(Error::InvalidDevicePtr {
        addr,
        what: "acc::free",
    })?;
    let layout = Layout::from_size_align(bytes.max(1), ALIGN).expect("valid when allocated");
    // SAFETY: `addr` was returned by `alloc_zeroed` with this layout and is removed from the
    // table, so it is freed once.
    unsafe { std::alloc::dealloc(addr as *mut u8, layout) };
    Ok(())
}

/// Runs `f` with a pointer to bytes `addr..addr + bytes`, which must lie inside one live
/// allocation; the table stays locked meanwhile, so the allocation cannot be freed under `f`.
pub fn with_range<R>(
    addr: usize,
    bytes: usize,
    what: &'static str,
    f: impl FnOnce(*mut u8) -> R,
) -> Result<R> {
    let t = table();
    let (&base, &len) = t
        .range(..=addr)
        .next_back()
        .ok_or(Error::InvalidDevicePtr { addr, what })?;
    if addr >= base + len.max(1) {
        return Err(Error::InvalidDevicePtr { addr, what });
    }
    let offset = addr - base;
    if offset.checked_add(bytes).is_none_or(|end| end > len) {
        return Err(Error::DeviceCopyOutOfBounds {
            what,
            allocation: len,
            offset,
            bytes,
        });
    }
    Ok(f(addr as *mut u8))
}

/// Whether `addr` lies inside a live allocation.
pub fn contains(addr: usize) -> bool {
    let t = table();
    t.range(..=addr)
        .next_back()
        .is_some_and(|(&b, &l)| addr < b + l.max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checks_ranges() {
        let a = malloc(64).unwrap();
        assert!(with_range(a + 8, 56, "t", |_| ()).is_ok());
        assert!(matches!(
            with_range(a + 8, 57, "t", |_| ()),
            Err(Error::DeviceCopyOutOfBounds { .. })
        ));
        free(a).unwrap();
        assert!(free(a).is_err());
        assert!(!contains(a));
    }
}
