//! Device memory routines (`acc_malloc`, `acc_memcpy_*`, `acc_deviceptr`, ...). On devices that
//! share host memory, device memory is host memory: allocations are tracked, and every copy is
//! checked against a live allocation, so no safe call reaches freed or foreign memory.

use acc_core::data::{DataVar, DeviceCopy};
use acc_core::{host_alloc, Error, Result};

use crate::routines::runtime;

/// An address in device memory, from [`malloc`] or [`deviceptr`]. It is only an address: using
/// it goes through the routines here, which check it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DevicePtr {
    addr: usize,
}

impl DevicePtr {
    /// The address as a number.
    pub fn addr(self) -> usize {
        self.addr
    }
    /// The address `bytes` further on.
    pub fn offset(self, bytes: usize) -> DevicePtr {
        DevicePtr {
            addr: self.addr.wrapping_add(bytes),
        }
    }
}

fn shared_memory(what: &'static str) -> Result<()> {
    let d = runtime().current_device()?;
    if d.shares_host_memory() {
        Ok(())
    } else {
        Err(Error::Unsupported {
            what: format!("{what} on the {} device", d.device_type()),
        })
    }
}

/// `acc_malloc`: `bytes` bytes of zeroed device memory.
pub fn malloc(bytes: usize) -> Result<DevicePtr> {
    shared_memory("acc::malloc")?;
    host_alloc::malloc(bytes).map(|addr| DevicePtr { addr })
}

/// `acc_free`: frees memory from [`malloc`].
pub fn free(p: DevicePtr) -> Result<()> {
    host_alloc::free(p.addr)
}

/// `acc_memcpy_to_device`: copies `src` to device memory at `dst`.
pub fn memcpy_to_device<T: DeviceCopy>(dst: DevicePtr, src: &[T]) -> Result<()> {
    let bytes = std::mem::size_of_val(src);
    host_alloc::with_range(dst.addr, bytes, "acc::memcpy_to_device", |p| {
        // SAFETY: `p..p + bytes` lies in a live allocation (checked, table locked) that no Rust
        // reference points into; `src` is plain data.
        unsafe { std::ptr::copy_nonoverlapping(src.as_ptr().cast::<u8>(), p, bytes) }
    })
}

/// `acc_memcpy_from_device`: copies device memory at `src` into `dst`.
pub fn memcpy_from_device<T: DeviceCopy>(dst: &mut [T], src: DevicePtr) -> Result<()> {
    let bytes = std::mem::size_of_val(dst);
    host_alloc::with_range(src.addr, bytes, "acc::memcpy_from_device", |p| {
        // SAFETY: as above; `T: DeviceCopy` is valid for the bytes a device holds, and the
        // allocation was zeroed when made.
        unsafe { std::ptr::copy_nonoverlapping(p, dst.as_mut_ptr().cast::<u8>(), bytes) }
    })
}

/// `acc_memcpy_device`: copies `bytes` bytes between two places in device memory.
pub fn memcpy_device(dst: DevicePtr, src: DevicePtr, bytes: usize) -> Result<()> {
    host_alloc::with_range(src.addr, bytes, "acc::memcpy_device (source)", |_| ())?;
    host_alloc::with_range(dst.addr, bytes, "acc::memcpy_device (destination)", |_| ())?;
    // SAFETY: both ranges were just checked to lie in live allocations; `copy` allows overlap.
    // (The two checks take the table lock separately; a concurrent free of either allocation
    // by another thread is a race the caller creates, as with acc_free in C.)
    unsafe { std::ptr::copy(src.addr as *const u8, dst.addr as *mut u8, bytes) };
    Ok(())
}

/// `acc_deviceptr`: the device address of `a`'s data, when present. On devices that share host
/// memory this is the host address.
pub fn deviceptr<V: DataVar + ?Sized>(a: &V) -> Option<DevicePtr> {
    shared_memory("acc::deviceptr").ok()?;
    Some(DevicePtr {
        addr: a.elems().as_ptr() as usize,
    })
}

/// `acc_hostptr`: the host address that device address `p` mirrors. On devices that share host
/// memory this is `p` itself.
pub fn hostptr(p: DevicePtr) -> Option<*const u8> {
    shared_memory("acc::hostptr").ok()?;
    Some(p.addr as *const u8)
}

/// `acc_map_data`: declares that device memory `p` holds `a`. Devices that share host memory
/// need no mapping: `a` is already present there.
pub fn map_data<V: DataVar + ?Sized>(a: &V, p: DevicePtr) -> Result<()> {
    let _ = (a.elems(), p);
    shared_memory("acc::map_data")
}

/// `acc_unmap_data`: undoes [`map_data`].
pub fn unmap_data<V: DataVar + ?Sized>(a: &V) -> Result<()> {
    let _ = a.elems();
    shared_memory("acc::unmap_data")
}

/// `acc_attach`: attaches a device pointer (3.3 section 2.6.8). Nothing to do in shared memory.
pub fn attach<V: DataVar + ?Sized>(a: &V) -> Result<()> {
    let _ = a.elems();
    shared_memory("acc::attach")
}

/// `acc_detach`: undoes [`attach`].
pub fn detach<V: DataVar + ?Sized>(a: &V) -> Result<()> {
    let _ = a.elems();
    shared_memory("acc::detach")
}
