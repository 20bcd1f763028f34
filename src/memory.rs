//! Device memory routines (`acc_malloc`, `acc_memcpy_*`, `acc_deviceptr`, ...). On devices that
//! share host memory, device memory is host memory: allocations are tracked, and every copy is
//! checked against a live allocation, so no safe call reaches freed or foreign memory. On the
//! nvidia device addresses are CUDA device addresses, and every copy is checked to lie inside
//! one of the device's allocations (an `acc::malloc` or present data). wgpu buffers have no
//! addresses: there acc makes up one for each buffer, which these routines understand (and
//! check the same way) but the GPU and other libraries do not (`host_data use_device` gives
//! the `wgpu::Buffer`).

use acc_core::data::{DataVar, DeviceCopy};
use acc_core::present::{BufferId, BYTES};
use acc_core::{host_alloc, Error, Result};

use crate::routines::runtime;

mod variables;
pub use variables::{deviceptr_mut, memcpy_from_device_raw, memcpy_to_device_raw};

/// An address in device memory, from [`malloc`] or [`deviceptr`]. It is only an address: using
/// it goes through the routines here, which check it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DevicePtr {
    addr: usize,
}

impl DevicePtr {
    pub(crate) fn from_addr(addr: usize) -> DevicePtr {
        DevicePtr { addr }
    }

    /// The address as a number.
    ///
    /// # Examples
    ///
    /// ```rust
    /// # fn main() -> acc::Result<()> {
    /// let p = acc::malloc(64)?;
    /// assert_ne!(p.addr(), 0);
    /// assert_eq!(p.offset(16).addr(), p.addr() + 16);
    /// acc::free(p)?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn addr(self) -> usize {
        self.addr
    }
    /// The address `bytes` further on.
    ///
    /// # Examples
    ///
    /// ```rust
    /// # fn main() -> acc::Result<()> {
    /// let p = acc::malloc(4 * std::mem::size_of::<u32>())?;
    /// acc::memcpy_to_device(p.offset(8), &[7u32, 8])?; // elements 2 and 3
    /// let mut back = [0u32; 4];
    /// acc::memcpy_from_device(&mut back, p)?;
    /// assert_eq!(back, [0, 0, 7, 8]);
    /// acc::free(p)?;
    /// # Ok(())
    /// # }
    /// ```
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

/// Where the current device's memory routines go: host memory (devices sharing it), or the
/// device's own memory and present table.
enum Memory {
    Host,
    Own(std::sync::Arc<dyn acc_core::Device>),
}

fn memory() -> Result<Memory> {
    let d = runtime().current_device()?;
    Ok(if d.own_memory().is_some() {
        Memory::Own(d)
    } else {
        Memory::Host
    })
}

/// The allocations [`malloc`] made on devices with their own memory: (device, address,
/// buffer), so that [`free`] finds the buffer of an address.
static DEVICE_ALLOCS: std::sync::Mutex<Vec<(usize, u64, BufferId)>> =
    std::sync::Mutex::new(Vec::new());

fn device_key(d: &std::sync::Arc<dyn acc_core::Device>) -> usize {
    std::sync::Arc::as_ptr(d) as *const () as usize
}

/// No address: `what` on a device whose buffers have none (wgpu).
fn no_addresses(what: &str, d: &dyn acc_core::Device) -> Error {
    Error::Unsupported {
        what: format!(
            "{what} on the {} device: its buffers have no addresses (use `host_data use_device` for a buffer another library can use)",
            d.device_type()
        ),
    }
}

/// The memory of `d`, a device with its own.
fn own<'d>(d: &'d dyn acc_core::Device, what: &str) -> Result<acc_core::OwnMemory<'d>> {
    d.own_memory().ok_or_else(|| no_addresses(what, d))
}

/// The device buffer and offset holding `bytes` bytes at device address `p`.
fn buffer_at(
    d: &dyn acc_core::Device,
    p: DevicePtr,
    bytes: usize,
    what: &str,
) -> Result<(BufferId, usize)> {
    own(d, what)?
        .memory
        .buffer_at(p.addr as u64, bytes)
        .ok_or_else(|| Error::Unsupported {
            what: format!(
                "{what}: {bytes} bytes at device address {:#x} are not inside one allocation of the {} device",
                p.addr,
                d.device_type()
            ),
        })
}

/// Copies `bytes` bytes between two `acc::malloc` allocations in host memory (devices that
/// share it), after checking both ranges (`(from, to)`: how errors name them).
fn copy_in_host_allocations(
    dst: DevicePtr,
    src: DevicePtr,
    bytes: usize,
    (from, to): (&'static str, &'static str),
) -> Result<()> {
    host_alloc::with_range(src.addr, bytes, from, |_| ())?;
    host_alloc::with_range(dst.addr, bytes, to, |_| ())?;
    // SAFETY: both ranges were just checked to lie in live allocations, which no Rust
    // reference points into; `copy` allows overlap. (The two checks take the table lock
    // separately; a concurrent free of either allocation by another thread is a race the
    // caller creates, as with acc_free in C.)
    unsafe { std::ptr::copy(src.addr as *const u8, dst.addr as *mut u8, bytes) };
    Ok(())
}

/// Devices `dst_dev` and `src_dev` of the current device type.
fn device_pair(
    dst_dev: usize,
    src_dev: usize,
) -> Result<(
    std::sync::Arc<dyn acc_core::Device>,
    std::sync::Arc<dyn acc_core::Device>,
)> {
    let rt = runtime();
    let ty = rt.current_device_type()?;
    Ok((rt.device(ty, dst_dev)?, rt.device(ty, src_dev)?))
}

/// Copies `len` elements of `elem` between buffers of two devices with their own memory, once
/// both are idle (`memcpy_d2d`, `memcpy_peer`).
fn copy_between_devices(
    (to, d): (&dyn acc_core::Device, (BufferId, usize)),
    (from, s): (&dyn acc_core::Device, (BufferId, usize)),
    elem: acc_core::present::ElemLayout,
    len: usize,
    what: &str,
) -> Result<()> {
    to.synchronize()?;
    from.synchronize()?;
    let peer = own(from, what)?.memory;
    own(to, what)?.memory.copy_from_peer(elem, d, peer, s, len)
}

/// `acc_malloc`: `bytes` bytes of zeroed device memory. On the nvidia device its address is a
/// CUDA device address (for CUDA libraries too); on wgpu, whose buffers have no addresses, one
/// acc makes up for the buffer, which acc's memory routines understand.
///
/// # Examples
///
/// ```rust
/// # fn main() -> acc::Result<()> {
/// let p = acc::malloc(4 * std::mem::size_of::<f64>())?;
/// let mut back = [9.0f64; 4];
/// acc::memcpy_from_device(&mut back, p)?;
/// assert_eq!(back, [0.0; 4]); // zeroed
/// acc::free(p)?;
/// # Ok(())
/// # }
/// ```
pub fn malloc(bytes: usize) -> Result<DevicePtr> {
    match memory()? {
        Memory::Host => host_alloc::malloc(bytes).map(|addr| DevicePtr { addr }),
        Memory::Own(d) => {
            let mem = own(&*d, "acc::malloc")?;
            let buf = mem.memory.alloc_bytes(bytes)?;
            match mem.memory.address(buf) {
                Some(addr) => {
                    DEVICE_ALLOCS
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push((device_key(&d), addr, buf));
                    Ok(DevicePtr {
                        addr: addr as usize,
                    })
                }
                None => {
                    mem.memory.free(buf);
                    Err(no_addresses("acc::malloc", &*d))
                }
            }
        }
    }
}

/// `acc_free`: frees memory from [`malloc`].
///
/// # Examples
///
/// ```rust
/// # fn main() -> acc::Result<()> {
/// let p = acc::malloc(64)?;
/// acc::memcpy_to_device(p, &[1u8; 64])?;
/// acc::free(p)?;
/// // Freed memory is out of reach: errors, not accesses.
/// assert!(acc::free(p).is_err());
/// assert!(acc::memcpy_to_device(p, &[1u8]).is_err());
/// # Ok(())
/// # }
/// ```
pub fn free(p: DevicePtr) -> Result<()> {
    match memory()? {
        Memory::Host => host_alloc::free(p.addr),
        Memory::Own(d) => {
            let mut allocs = DEVICE_ALLOCS.lock().unwrap_or_else(|e| e.into_inner());
            let at = allocs
                .iter()
                .position(|&(k, a, _)| k == device_key(&d) && a == p.addr as u64)
                .ok_or_else(|| Error::Unsupported {
                    what: format!(
                        "acc::free: {:#x} is not an address acc::malloc gave on the {} device",
                        p.addr,
                        d.device_type()
                    ),
                })?;
            let (_, _, buf) = allocs.remove(at);
            if let Some(mem) = d.own_memory() {
                mem.memory.free(buf);
            }
            Ok(())
        }
    }
}

/// `acc_memcpy_to_device`: copies `src` to device memory at `dst`.
///
/// # Examples
///
/// ```rust
/// # fn main() -> acc::Result<()> {
/// let p = acc::malloc(3 * std::mem::size_of::<f64>())?;
/// acc::memcpy_to_device(p, &[1.5f64, 2.5, 3.5])?;
/// let mut back = [0.0f64; 3];
/// acc::memcpy_from_device(&mut back, p)?;
/// assert_eq!(back, [1.5, 2.5, 3.5]);
/// // Past the end of the allocation: an error, nothing written.
/// assert!(acc::memcpy_to_device(p.offset(16), &[0.0f64; 2]).is_err());
/// acc::free(p)?;
/// # Ok(())
/// # }
/// ```
pub fn memcpy_to_device<T: DeviceCopy>(dst: DevicePtr, src: &[T]) -> Result<()> {
    let bytes = std::mem::size_of_val(src);
    // SAFETY: `T: DeviceCopy` is plain data, read as its bytes.
    let src_bytes = unsafe { std::slice::from_raw_parts(src.as_ptr().cast::<u8>(), bytes) };
    match memory()? {
        Memory::Host => host_alloc::with_range(dst.addr, bytes, "acc::memcpy_to_device", |p| {
            // SAFETY: `p..p + bytes` lies in a live allocation (checked, table locked) that no
            // Rust reference points into; `src` is plain data.
            unsafe { std::ptr::copy_nonoverlapping(src_bytes.as_ptr(), p, bytes) }
        }),
        Memory::Own(d) => {
            if bytes == 0 {
                return Ok(());
            }
            let (buf, at) = buffer_at(&*d, dst, bytes, "acc::memcpy_to_device")?;
            let mem = own(&*d, "acc::memcpy_to_device")?;
            d.synchronize()?;
            mem.memory.upload_bytes(buf, at, src_bytes)
        }
    }
}

/// `acc_memcpy_from_device`: copies device memory at `src` into `dst`.
///
/// # Examples
///
/// ```rust
/// # fn main() -> acc::Result<()> {
/// let p = acc::malloc(4 * std::mem::size_of::<i32>())?;
/// acc::memcpy_to_device(p, &[1i32, 2, 3, 4])?;
/// let mut tail = [0i32; 2];
/// acc::memcpy_from_device(&mut tail, p.offset(8))?; // elements 2 and 3
/// assert_eq!(tail, [3, 4]);
/// // Past the end of the allocation: an error.
/// assert!(acc::memcpy_from_device(&mut tail, p.offset(12)).is_err());
/// acc::free(p)?;
/// # Ok(())
/// # }
/// ```
pub fn memcpy_from_device<T: DeviceCopy>(dst: &mut [T], src: DevicePtr) -> Result<()> {
    let bytes = std::mem::size_of_val(dst);
    // SAFETY: `T: DeviceCopy` is valid for any bytes a device holds; written as bytes.
    let dst_bytes = unsafe { std::slice::from_raw_parts_mut(dst.as_mut_ptr().cast::<u8>(), bytes) };
    match memory()? {
        Memory::Host => host_alloc::with_range(src.addr, bytes, "acc::memcpy_from_device", |p| {
            // SAFETY: as above; the allocation was zeroed when made.
            unsafe { std::ptr::copy_nonoverlapping(p, dst_bytes.as_mut_ptr(), bytes) }
        }),
        Memory::Own(d) => {
            if bytes == 0 {
                return Ok(());
            }
            let (buf, at) = buffer_at(&*d, src, bytes, "acc::memcpy_from_device")?;
            let mem = own(&*d, "acc::memcpy_from_device")?;
            d.synchronize()?;
            mem.memory.download_bytes(buf, at, dst_bytes)
        }
    }
}

/// `acc_memcpy_device`: copies `bytes` bytes between two places in device memory.
///
/// # Examples
///
/// ```rust
/// # fn main() -> acc::Result<()> {
/// let p = acc::malloc(64)?;
/// acc::memcpy_to_device(p, &[1.5f64, 2.5, 3.5])?;
/// acc::memcpy_device(p.offset(32), p, 24)?; // bytes 0..24 to 32..56
/// let mut back = [0.0f64; 3];
/// acc::memcpy_from_device(&mut back, p.offset(32))?;
/// assert_eq!(back, [1.5, 2.5, 3.5]);
/// acc::free(p)?;
/// # Ok(())
/// # }
/// ```
pub fn memcpy_device(dst: DevicePtr, src: DevicePtr, bytes: usize) -> Result<()> {
    match memory()? {
        Memory::Host => copy_in_host_allocations(
            dst,
            src,
            bytes,
            (
                "acc::memcpy_device (source)",
                "acc::memcpy_device (destination)",
            ),
        ),
        Memory::Own(d) => {
            if bytes == 0 {
                return Ok(());
            }
            let to = buffer_at(&*d, dst, bytes, "acc::memcpy_device (destination)")?;
            let from = buffer_at(&*d, src, bytes, "acc::memcpy_device (source)")?;
            let mem = own(&*d, "acc::memcpy_device")?;
            d.synchronize()?;
            mem.memory.copy_between(to, from, bytes)
        }
    }
}

/// A present section of device `d` for `memcpy_d2d`: its buffer and first element.
fn present_on(
    d: &dyn acc_core::Device,
    host: (usize, usize),
    elem: acc_core::present::ElemLayout,
    which: &str,
    location: acc_core::Location,
) -> Result<(BufferId, usize)> {
    let mem = own(d, "acc::memcpy_d2d")?;
    let name = format!("acc::memcpy_d2d {which}");
    mem.table
        .lookup(
            host.0,
            host.1,
            elem,
            acc_core::present::Named {
                name: &name,
                location,
            },
        )?
        .map(|p| (p.buf, p.first))
        .ok_or(Error::NotPresent {
            var: format!(
                "{which} of acc::memcpy_d2d on {} device {}",
                d.device_type(),
                d.number()
            ),
            location,
        })
}

/// `acc_memcpy_d2d` (3.3 section 3.2.30): copies the device copy of `src`, present on device
/// `src_dev`, to the device copy of `dst`, present on device `dst_dev` (device numbers of the
/// current device type), without going through the host where the devices reach each other
/// (NVIDIA GPUs with peer access; otherwise the copy is staged through host memory). The host
/// data of `dst` is not written on devices with their own memory; on devices that share host
/// memory, device memory is host memory and this is `dst.copy_from_slice(src)`. Waits for both
/// devices first and for the copy.
///
/// Errors: the lengths differ, a device number is out of range, or a side is not present.
/// See [`memcpy_peer`] for device addresses, which other threads can be given.
///
/// # Examples
///
/// ```
/// let a = vec![1.0f64; 8];
/// let mut b = vec![0.0f64; 8];
/// acc::copyin(&a).unwrap();
/// acc::create(&b).unwrap();
/// let dev = acc::get_device_num(acc::get_device_type());
/// acc::memcpy_d2d(&mut b[..4], &a[4..], dev, dev).unwrap();
/// acc::copyout(&mut b).unwrap();
/// acc::delete(&a).unwrap();
/// assert_eq!(b, [1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0]);
/// ```
#[track_caller]
pub fn memcpy_d2d<T: DeviceCopy>(
    dst: &mut [T],
    src: &[T],
    dst_dev: usize,
    src_dev: usize,
) -> Result<()> {
    let location = acc_core::Location::caller();
    if dst.len() != src.len() {
        return Err(Error::Unsupported {
            what: format!(
                "acc::memcpy_d2d at {location}: the destination has {} elements and the source {}",
                dst.len(),
                src.len()
            ),
        });
    }
    let (to, from) = device_pair(dst_dev, src_dev)?;
    if to.own_memory().is_none() || from.own_memory().is_none() {
        // Device memory is host memory.
        to.synchronize()?;
        from.synchronize()?;
        dst.copy_from_slice(src);
        return Ok(());
    }
    if dst.is_empty() {
        return Ok(());
    }
    let elem = crate::__rt::layout::<T>();
    let bytes = std::mem::size_of_val(src);
    let d = present_on(
        &*to,
        (dst.as_ptr() as usize, bytes),
        elem,
        "destination",
        location,
    )?;
    let s = present_on(
        &*from,
        (src.as_ptr() as usize, bytes),
        elem,
        "source",
        location,
    )?;
    copy_between_devices((&*to, d), (&*from, s), elem, src.len(), "acc::memcpy_d2d")
}

/// The address form of [`memcpy_d2d`]: copies `bytes` bytes from device address `src` of
/// device `src_dev` to device address `dst` of device `dst_dev` (current device type; the
/// addresses from [`deviceptr`] or [`malloc`] on those devices). A [`DevicePtr`] can be sent
/// to another thread, so threads that each drive one GPU can exchange halos without naming
/// each other's host data. Each range must lie inside one allocation of its device (on
/// devices that share host memory: an [`malloc`] allocation).
///
/// # Examples
///
/// ```rust
/// # fn main() -> acc::Result<()> {
/// // Device addresses of one device here; with several GPUs, of two of them.
/// let dev = acc::get_device_num(acc::get_device_type());
/// let p = acc::malloc(24)?;
/// acc::memcpy_to_device(p, &[1.5f64, 2.5, 3.5])?;
/// let q = acc::malloc(24)?;
/// acc::memcpy_peer(q.offset(8), dev, p, dev, 16)?; // p's first two elements to q's last two
/// let mut back = [0.0f64; 3];
/// acc::memcpy_from_device(&mut back, q)?;
/// assert_eq!(back, [0.0, 1.5, 2.5]);
/// acc::free(q)?;
/// acc::free(p)?;
/// # Ok(())
/// # }
/// ```
pub fn memcpy_peer(
    dst: DevicePtr,
    dst_dev: usize,
    src: DevicePtr,
    src_dev: usize,
    bytes: usize,
) -> Result<()> {
    let (to, from) = device_pair(dst_dev, src_dev)?;
    if to.own_memory().is_none() || from.own_memory().is_none() {
        to.synchronize()?;
        from.synchronize()?;
        return copy_in_host_allocations(
            dst,
            src,
            bytes,
            (
                "acc::memcpy_peer (source)",
                "acc::memcpy_peer (destination)",
            ),
        );
    }
    if bytes == 0 {
        return Ok(());
    }
    let d = buffer_at(&*to, dst, bytes, "acc::memcpy_peer (destination)")?;
    let s = buffer_at(&*from, src, bytes, "acc::memcpy_peer (source)")?;
    if to.device_type() == acc_core::DeviceType::Nvidia {
        // CUDA widens nothing: bytes are elements (and peers copy directly).
        return copy_between_devices((&*to, d), (&*from, s), BYTES, bytes, "acc::memcpy_peer");
    }
    // Raw bytes through the host, as they are, whatever the device widens.
    to.synchronize()?;
    from.synchronize()?;
    let mut staging = vec![0u8; bytes];
    own(&*from, "acc::memcpy_peer")?
        .memory
        .download_bytes(s.0, s.1, &mut staging)?;
    own(&*to, "acc::memcpy_peer")?
        .memory
        .upload_bytes(d.0, d.1, &staging)
}

/// `acc_deviceptr`: the device address of `a`'s data, when present (its host address on
/// devices that share host memory; on wgpu, the address acc makes up for its buffer, or
/// `None` for 8- and 16-bit elements, which wgpu buffers hold widened to 32 bits).
///
/// # Examples
///
/// ```rust
/// # fn main() -> acc::Result<()> {
/// let ty = acc::get_device_type();
/// let shared = acc::get_property(acc::get_device_num(ty), ty, acc::Property::SharedMemorySupport) == "1";
/// let a = vec![1.0f32; 100];
/// acc::copyin(&a)?;
/// match acc::deviceptr(&a) {
///     // Device memory is host memory.
///     Some(p) if shared => assert_eq!(p.addr(), a.as_ptr() as usize),
///     // nvidia: a CUDA device address, for CUDA libraries and `memcpy_peer`; wgpu: acc's
///     // own address of the buffer.
///     Some(p) => assert_eq!(acc::hostptr(p), Some(a.as_ptr().cast())),
///     None => unreachable!("`a` is present"),
/// }
/// acc::delete(&a)?;
/// # Ok(())
/// # }
/// ```
pub fn deviceptr<V: DataVar + ?Sized>(a: &V) -> Option<DevicePtr> {
    let elems = a.elems();
    match memory().ok()? {
        Memory::Host => Some(DevicePtr {
            addr: elems.as_ptr() as usize,
        }),
        Memory::Own(d) => {
            let mem = d.own_memory()?;
            let elem = crate::__rt::layout::<V::Elem>();
            let place = mem
                .table
                .lookup(
                    elems.as_ptr() as usize,
                    std::mem::size_of_val(elems),
                    elem,
                    acc_core::present::Named::unlocated("acc::deviceptr"),
                )
                .ok()??;
            let raw = mem.memory.raw_buffer(place.buf, place.elem)?;
            // Elements the device widens (8- and 16-bit ones on wgpu) have no address with
            // the host's layout.
            if raw.elem_bytes != std::mem::size_of::<V::Elem>() {
                return None;
            }
            let addr = mem.memory.address(place.buf)?;
            Some(DevicePtr {
                addr: (addr + (place.first * raw.elem_bytes) as u64) as usize,
            })
        }
    }
}

/// `acc_hostptr`: the host address that device address `p` mirrors (`p` itself on devices
/// that share host memory; on nvidia, where `p` is in present data).
///
/// # Examples
///
/// ```rust
/// # fn main() -> acc::Result<()> {
/// let a = vec![1.0f32; 100];
/// acc::copyin(&a)?;
/// let p = acc::deviceptr(&a).expect("present");
/// assert_eq!(acc::hostptr(p), Some(a.as_ptr().cast()));
/// assert_eq!(acc::hostptr(p.offset(8)), Some(a[2..].as_ptr().cast()));
/// acc::delete(&a)?;
/// # Ok(())
/// # }
/// ```
pub fn hostptr(p: DevicePtr) -> Option<*const u8> {
    match memory().ok()? {
        Memory::Host => Some(p.addr as *const u8),
        Memory::Own(d) => {
            let mem = d.own_memory()?;
            let (buf, at) = mem.memory.buffer_at(p.addr as u64, 1)?;
            mem.table.host_of(buf, at).map(|a| a as *const u8)
        }
    }
}

/// `acc_map_data`: declares that device memory `p` (from [`malloc`]) holds `a`: `a` is present
/// there from now on, without a copy, until [`unmap_data`]; its data is moved only by
/// `update` and the memory routines. Devices that share host memory need no mapping: `a` is
/// present there already.
///
/// # Examples
///
/// ```rust
/// # fn main() -> acc::Result<()> {
/// let ty = acc::get_device_type();
/// let shared = acc::get_property(acc::get_device_num(ty), ty, acc::Property::SharedMemorySupport) == "1";
/// let mut a = vec![0.0f32; 4];
/// let p = acc::malloc(std::mem::size_of_val(&a[..]))?;
/// acc::memcpy_to_device(p, &[1.0f32, 2.0, 3.0, 4.0])?;
/// acc::map_data(&a, p)?; // `a` is present in `p`'s memory; nothing copied
/// assert!(acc::is_present(&a));
/// acc::update_self(&mut a)?; // device to host: what `p` holds (in shared memory, `a` itself)
/// assert_eq!(a, if shared { [0.0f32; 4] } else { [1.0, 2.0, 3.0, 4.0] });
/// acc::unmap_data(&a)?;
/// acc::free(p)?;
/// # Ok(())
/// # }
/// ```
#[track_caller]
pub fn map_data<V: DataVar + ?Sized>(a: &V, p: DevicePtr) -> Result<()> {
    let elems = a.elems();
    match memory()? {
        Memory::Host => Ok(()),
        Memory::Own(d) => {
            let bytes = std::mem::size_of_val(elems);
            let (buf, at) = buffer_at(&*d, p, bytes.max(1), "acc::map_data")?;
            if at != 0 {
                return Err(Error::Unsupported {
                    what: "acc::map_data: the device address must be the start of an acc::malloc allocation".into(),
                });
            }
            let mem = own(&*d, "acc::map_data")?;
            let elem = crate::__rt::layout::<V::Elem>();
            let host_size = std::mem::size_of::<V::Elem>();
            if let Some(raw) = mem.memory.raw_buffer(buf, elem) {
                if raw.elem_bytes != host_size {
                    return Err(Error::Unsupported {
                        what: format!(
                            "acc::map_data: elements of {host_size} bytes take {} on the {} device (it widens them), so device memory in the host's layout cannot hold them; put the array in a data clause instead",
                            raw.elem_bytes,
                            d.device_type()
                        ),
                    });
                }
            }
            mem.table.map(
                (elems.as_ptr() as usize, bytes),
                elem,
                buf,
                acc_core::present::Named::at_caller("the array"),
            )
        }
    }
}

/// `acc_unmap_data`: undoes [`map_data`] (the device memory stays, for [`free`]).
///
/// # Examples
///
/// ```rust
/// # fn main() -> acc::Result<()> {
/// let ty = acc::get_device_type();
/// let shared = acc::get_property(acc::get_device_num(ty), ty, acc::Property::SharedMemorySupport) == "1";
/// let a = vec![1.0f32; 4];
/// let p = acc::malloc(std::mem::size_of_val(&a[..]))?;
/// acc::map_data(&a, p)?;
/// acc::update_device(&a)?; // host to device: into `p`
/// acc::unmap_data(&a)?;
/// assert_eq!(acc::is_present(&a), shared); // no longer present on a GPU...
/// let mut back = [0.0f32; 4];
/// acc::memcpy_from_device(&mut back, p)?; // ...but the memory stays, until `free`
/// // (In shared memory `a` is its own device copy: `p` was never written.)
/// assert_eq!(back, if shared { [0.0f32; 4] } else { [1.0; 4] });
/// acc::free(p)?;
/// # Ok(())
/// # }
/// ```
#[track_caller]
pub fn unmap_data<V: DataVar + ?Sized>(a: &V) -> Result<()> {
    let elems = a.elems();
    match memory()? {
        Memory::Host => Ok(()),
        Memory::Own(d) => {
            if elems.is_empty() {
                return Ok(());
            }
            let mem = own(&*d, "acc::unmap_data")?;
            mem.table.unmap(
                elems.as_ptr() as usize,
                acc_core::present::Named::at_caller("the array"),
            )
        }
    }
}

/// `acc_attach`: attaches a device pointer (3.3 section 2.6.8). Nothing to do in shared memory.
///
/// # Examples
///
/// ```rust
/// let ty = acc::get_device_type();
/// let shared = acc::get_property(acc::get_device_num(ty), ty, acc::Property::SharedMemorySupport) == "1";
/// let a = vec![1.0f32; 8];
/// // Nothing to attach where the device shares host memory; an error on the GPU devices.
/// assert_eq!(acc::attach(&a).is_ok(), shared);
/// assert_eq!(acc::detach(&a).is_ok(), shared);
/// ```
pub fn attach<V: DataVar + ?Sized>(a: &V) -> Result<()> {
    let _ = a.elems();
    shared_memory("acc::attach")
}

/// `acc_detach`: undoes [`attach`].
///
/// # Examples
///
/// ```rust
/// let ty = acc::get_device_type();
/// let shared = acc::get_property(acc::get_device_num(ty), ty, acc::Property::SharedMemorySupport) == "1";
/// let a = vec![1.0f32; 8];
/// if shared {
///     acc::attach(&a).expect("nothing to do in shared memory");
///     acc::detach(&a).expect("nothing to do in shared memory");
/// } else {
///     assert!(acc::detach(&a).is_err()); // not supported on the GPU devices
/// }
/// ```
pub fn detach<V: DataVar + ?Sized>(a: &V) -> Result<()> {
    let _ = a.elems();
    shared_memory("acc::detach")
}
