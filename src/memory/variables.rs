//! The memory routines through a variable's own address (`acc_memcpy_*(acc_deviceptr(a))`,
//! 3.3 sections 3.2.25–3.2.27). On devices with their own memory, [`deviceptr`](super::deviceptr)
//! gives an address in acc's device memory, which the safe routines check. On devices that
//! share host memory it gives the variable's own host memory, whose lifetime and borrows acc
//! cannot see: copying through it is sound only while the variable lives and nothing else
//! uses it, which only the caller can promise. These routines take that promise (`unsafe`)
//! and are otherwise the safe ones, so one program runs on every device.

use acc_core::data::{DataVarMut, DeviceCopy};
use acc_core::host_alloc;

use super::{memory, DevicePtr, Memory};
use crate::Result;

/// `acc_deviceptr` for a variable that [`memcpy_to_device_raw`] will write: the same address
/// as [`deviceptr`](super::deviceptr), taken from a mutable borrow so that, on devices that
/// share host memory, writing the variable through it is allowed.
///
/// # Examples
///
/// ```rust
/// # fn main() -> acc::Result<()> {
/// let mut a = vec![0.0f32; 8];
/// acc::copyin(&a)?;
/// let p = acc::deviceptr_mut(&mut a).expect("present");
/// assert_eq!(Some(p), acc::deviceptr(&a));
/// acc::delete(&a)?;
/// # Ok(())
/// # }
/// ```
pub fn deviceptr_mut<V: DataVarMut + ?Sized>(a: &mut V) -> Option<DevicePtr> {
    let p = super::deviceptr(&*a)?;
    Some(match memory().ok()? {
        // The same address, with the mutable borrow's permission exposed.
        Memory::Host => DevicePtr::from_addr(a.elems_mut().as_mut_ptr() as usize),
        Memory::Own(_) => p,
    })
}

/// `acc_memcpy_from_device` where `src` may be a variable's address from
/// [`deviceptr`](super::deviceptr): copies `dst.len()` elements from device memory at `src`.
/// Addresses acc allocated ([`malloc`](super::malloc), present data on devices with their own
/// memory) are checked as [`memcpy_from_device`](super::memcpy_from_device) checks them.
///
/// # Safety
///
/// On devices that share host memory, when `src` is not inside an [`malloc`](super::malloc)
/// allocation, it must come from `deviceptr(&a)` (or [`deviceptr_mut`]) of a variable `a`
/// that is still alive, with `dst`'s bytes inside `a`'s elements from `src` on, and nothing
/// may write `a` during the call. On devices with their own memory every address is checked
/// and nothing is required.
///
/// # Examples
///
/// ```rust
/// # fn main() -> acc::Result<()> {
/// let a: Vec<f64> = (0..16).map(f64::from).collect();
/// acc::copyin(&a)?;
/// let p = acc::deviceptr(&a).expect("present");
/// let mut part = [0.0f64; 4];
/// // SAFETY: `a` is alive and not written during the copy; elements 8..12 are inside it.
/// unsafe { acc::memcpy_from_device_raw(&mut part, p.offset(8 * 8))? };
/// assert_eq!(part, [8.0, 9.0, 10.0, 11.0]);
/// acc::delete(&a)?;
/// # Ok(())
/// # }
/// ```
pub unsafe fn memcpy_from_device_raw<T: DeviceCopy>(dst: &mut [T], src: DevicePtr) -> Result<()> {
    if !is_variable_address(src)? {
        return super::memcpy_from_device(dst, src);
    }
    let bytes = std::mem::size_of_val(dst);
    // SAFETY: the caller promises `src..src + bytes` lies in a live variable that nothing
    // writes meanwhile; `dst` is a distinct `&mut` (it cannot alias a variable read through a
    // shared borrow's address without the caller breaking that promise); `T: DeviceCopy` is
    // valid for any bytes.
    unsafe {
        std::ptr::copy_nonoverlapping(
            std::ptr::with_exposed_provenance::<u8>(src.addr()),
            dst.as_mut_ptr().cast::<u8>(),
            bytes,
        )
    };
    Ok(())
}

/// `acc_memcpy_to_device` where `dst` may be a variable's address from [`deviceptr_mut`]:
/// copies `src` to device memory at `dst`. Addresses acc allocated are checked as
/// [`memcpy_to_device`](super::memcpy_to_device) checks them. On devices that share host
/// memory this writes the variable itself (device memory is host memory); elsewhere it writes
/// the device copy, which `update self` brings back.
///
/// # Safety
///
/// On devices that share host memory, when `dst` is not inside an [`malloc`](super::malloc)
/// allocation, it must come from [`deviceptr_mut`]`(&mut a)` of a variable `a` that is still
/// alive and has not been used since (no reference to its elements taken before is used
/// after the call), with `src`'s bytes inside `a`'s elements from `dst` on. On devices with
/// their own memory every address is checked and nothing is required.
///
/// # Examples
///
/// ```rust
/// # fn main() -> acc::Result<()> {
/// let mut a = vec![0i32; 8];
/// acc::copyin(&a)?;
/// let p = acc::deviceptr_mut(&mut a).expect("present");
/// // SAFETY: `a` is alive, unused until the copy returns; elements 2..4 are inside it.
/// unsafe { acc::memcpy_to_device_raw(p.offset(2 * 4), &[7i32, 8])? };
/// acc::copyout(&mut a)?; // the device copy back (shared memory: `a` was written already)
/// assert_eq!(a, [0, 0, 7, 8, 0, 0, 0, 0]);
/// # Ok(())
/// # }
/// ```
pub unsafe fn memcpy_to_device_raw<T: DeviceCopy>(dst: DevicePtr, src: &[T]) -> Result<()> {
    if !is_variable_address(dst)? {
        return super::memcpy_to_device(dst, src);
    }
    let bytes = std::mem::size_of_val(src);
    // SAFETY: the caller promises `dst..dst + bytes` lies in a live variable whose mutable
    // borrow exposed this address and which no reference uses meanwhile; `src` is plain data
    // and cannot overlap it (it would be a live shared borrow of the variable).
    unsafe {
        std::ptr::copy_nonoverlapping(
            src.as_ptr().cast::<u8>(),
            std::ptr::with_exposed_provenance_mut::<u8>(dst.addr()),
            bytes,
        )
    };
    Ok(())
}

/// Whether `p` is (by the caller's promise) a variable's own host memory: the current device
/// shares host memory and `p` is not in an allocation acc made there.
fn is_variable_address(p: DevicePtr) -> Result<bool> {
    Ok(matches!(memory()?, Memory::Host) && !host_alloc::contains(p.addr()))
}
