//! Arrays that live in device memory (3.3 section 2.7.4, `deviceptr`): an [`DeviceVec`] is
//! allocated on the current device and never copied to or from the host by data clauses; a
//! compute construct names it in `deviceptr(..)` and indexes it as any array.
//!
//! How it is made: a zeroed host allocation of the same size (pages the host never touches,
//! so it costs address space, not memory) names the device memory in the present table, as
//! `acc::map_data` names `acc::malloc` memory; regions and the memory routines find it
//! there. On devices that share host memory that allocation is the data itself, made by
//! `acc::malloc` (so the memory routines reach it there too).

use std::sync::Arc;

use acc_core::data::{DataVar, DataVarMut, DeviceCopy};
use acc_core::present::{BufferId, Named};
use acc_core::{Device, DeviceType, Error, Result};

use crate::memory::DevicePtr;
use crate::routines::runtime;

mod foreign;

/// An array of `T` in the memory of the device current when it was made: what `deviceptr(..)`
/// names in a compute construct (3.3 section 2.7.4). Its elements move only when asked
/// ([`DeviceVec::to_vec`], [`DeviceVec::copy_from_slice`], the memory routines on
/// [`DeviceVec::as_ptr`]); data clauses on it find it present and copy nothing.
///
/// Indexing it from host code (`d[i]` outside a region) works where device memory is host
/// memory (the host and multicore devices) and panics elsewhere: the host cannot read GPU
/// memory directly.
///
/// # Examples
///
/// ```
/// #[acc::offload]
/// fn scale(d: &mut acc::DeviceVec<f32>, x: &[f32]) {
///     #[acc::parallel_loop(deviceptr(d), copyin(x))]
///     for i in 0..x.len() {
///         d[i] = 2.0 * d[i] + x[i];
///     }
/// }
///
/// # fn main() -> acc::Result<()> {
/// let mut d = acc::DeviceVec::from_slice(&[1.0f32, 2.0, 3.0])?;
/// scale(&mut d, &[10.0, 20.0, 30.0]);
/// assert_eq!(d.to_vec()?, [12.0, 24.0, 36.0]);
/// # Ok(())
/// # }
/// ```
pub struct DeviceVec<T: DeviceCopy> {
    /// Zeroed host memory of `len` elements (dangling when empty): the device memory's name in
    /// the present table; the data itself, from `acc::malloc`, on devices that share host
    /// memory.
    host: std::ptr::NonNull<T>,
    len: usize,
    /// The device memory, on a device with its own.
    device: Option<(Arc<dyn Device>, BufferId)>,
}

impl<T: DeviceCopy> DeviceVec<T> {
    /// `len` zeroed elements in the current device's memory.
    ///
    /// # Examples
    ///
    /// ```
    /// # fn main() -> acc::Result<()> {
    /// let d = acc::DeviceVec::<f64>::zeroed(1000)?;
    /// assert_eq!(d.len(), 1000);
    /// assert!(d.to_vec()?.iter().all(|&x| x == 0.0));
    /// # Ok(())
    /// # }
    /// ```
    pub fn zeroed(len: usize) -> Result<DeviceVec<T>> {
        let bytes = std::mem::size_of::<T>()
            .checked_mul(len)
            .ok_or(Error::OutOfMemory { bytes: usize::MAX })?;
        let d = runtime().current_device()?;
        let Some(mem) = d.own_memory() else {
            let host = if bytes == 0 {
                std::ptr::NonNull::dangling()
            } else {
                // `acc::malloc` memory: 256-byte aligned, zeroed.
                assert!(
                    std::mem::align_of::<T>() <= 256,
                    "acc::DeviceVec: element alignment above 256"
                );
                let addr = acc_core::host_alloc::malloc_owned(bytes)?;
                std::ptr::NonNull::new(addr as *mut T).ok_or(Error::OutOfMemory { bytes })?
            };
            return Ok(DeviceVec {
                host,
                len,
                device: None,
            });
        };
        let elem = crate::__rt::layout::<T>();
        let buf = mem.memory.alloc(elem, len.max(1))?;
        DeviceVec::named(d, buf, len)
    }

    /// `len` elements in device buffer `buf` of `d` (a device with memory of its own), named
    /// in its present table by zeroed host pages. On error, `buf` is freed.
    fn named(d: Arc<dyn Device>, buf: BufferId, len: usize) -> Result<DeviceVec<T>> {
        let mem = own(&*d)?;
        let elem = crate::__rt::layout::<T>();
        let host = match zeroed_host::<T>(len) {
            Ok(h) => h,
            Err(e) => {
                mem.memory.free(buf);
                return Err(e);
            }
        };
        let bytes = std::mem::size_of::<T>() * len;
        if let Err(e) = mem.table.map(
            (host.as_ptr() as usize, bytes),
            elem,
            buf,
            Named::unlocated("acc::DeviceVec"),
        ) {
            mem.memory.free(buf);
            // SAFETY: made above for `len` elements, not shared.
            unsafe { free_host(host, len) };
            return Err(e);
        }
        Ok(DeviceVec {
            host,
            len,
            device: Some((d, buf)),
        })
    }

    /// A copy of `data` in the current device's memory.
    ///
    /// # Examples
    ///
    /// ```
    /// # fn main() -> acc::Result<()> {
    /// let d = acc::DeviceVec::from_slice(&[1u32, 2, 3])?;
    /// assert_eq!(d.to_vec()?, [1, 2, 3]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn from_slice(data: &[T]) -> Result<DeviceVec<T>> {
        let mut d = DeviceVec::zeroed(data.len())?;
        d.copy_from_slice(data)?;
        Ok(d)
    }

    /// Its number of elements.
    ///
    /// # Examples
    ///
    /// ```
    /// # fn main() -> acc::Result<()> {
    /// assert_eq!(acc::DeviceVec::<i32>::zeroed(7)?.len(), 7);
    /// # Ok(())
    /// # }
    /// ```
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it has no elements.
    ///
    /// # Examples
    ///
    /// ```
    /// # fn main() -> acc::Result<()> {
    /// assert!(acc::DeviceVec::<i32>::zeroed(0)?.is_empty());
    /// # Ok(())
    /// # }
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether its memory is host memory (made on a device that shares it), so that host
    /// code may index it.
    ///
    /// # Examples
    ///
    /// ```
    /// # fn main() -> acc::Result<()> {
    /// acc::set_device_type(acc::DeviceType::Multicore);
    /// let mut d = acc::DeviceVec::<f32>::zeroed(4)?;
    /// assert!(d.on_host());
    /// d[2] = 1.5; // device memory is host memory here
    /// assert_eq!(d.to_vec()?, [0.0, 0.0, 1.5, 0.0]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn on_host(&self) -> bool {
        self.device.is_none()
    }

    /// The device address of its first element, for the memory routines
    /// ([`crate::memcpy_to_device`], [`crate::memcpy_peer`], ...) and, on nvidia, for CUDA
    /// libraries (a CUDA device address).
    ///
    /// # Examples
    ///
    /// ```
    /// # fn main() -> acc::Result<()> {
    /// let d = acc::DeviceVec::<f64>::zeroed(4)?;
    /// acc::memcpy_to_device(d.as_ptr().offset(16), &[2.5f64, 3.5])?;
    /// assert_eq!(d.to_vec()?, [0.0, 0.0, 2.5, 3.5]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn as_ptr(&self) -> DevicePtr {
        match &self.device {
            Some((d, buf)) => {
                // Elements the device widens have no address in the host's layout: 0, which
                // the memory routines refuse.
                let elem = crate::__rt::layout::<T>();
                let addr = d
                    .own_memory()
                    .filter(|m| {
                        m.memory
                            .raw_buffer(*buf, elem)
                            .is_some_and(|r| r.elem_bytes == std::mem::size_of::<T>())
                    })
                    .and_then(|m| m.memory.address(*buf))
                    .unwrap_or(0);
                DevicePtr::from_addr(addr as usize)
            }
            None => DevicePtr::from_addr(self.host.as_ptr() as usize),
        }
    }

    /// Its elements, copied to the host.
    ///
    /// # Examples
    ///
    /// ```
    /// # fn main() -> acc::Result<()> {
    /// let d = acc::DeviceVec::from_slice(&[1i64, -1])?;
    /// assert_eq!(d.to_vec()?, [1, -1]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn to_vec(&self) -> Result<Vec<T>> {
        let Some((d, buf)) = &self.device else {
            return Ok(self.host_elems().to_vec());
        };
        if self.len == 0 {
            return Ok(Vec::new());
        }
        let mut out = self.host_elems().to_vec(); // (zeros: the shadow)
        d.synchronize()?;
        let mem = own(&**d)?;
        let elem = crate::__rt::layout::<T>();
        mem.memory
            .download(*buf, elem, 0, acc_core::data::bytes_of_mut(&mut out))?;
        Ok(out)
    }

    /// Copies `src` (of the same length) into it.
    ///
    /// # Examples
    ///
    /// ```
    /// # fn main() -> acc::Result<()> {
    /// let mut d = acc::DeviceVec::<u8>::zeroed(3)?;
    /// d.copy_from_slice(&[7, 8, 9])?;
    /// assert_eq!(d.to_vec()?, [7, 8, 9]);
    /// assert!(d.copy_from_slice(&[1, 2]).is_err()); // another length
    /// # Ok(())
    /// # }
    /// ```
    pub fn copy_from_slice(&mut self, src: &[T]) -> Result<()> {
        if src.len() != self.len() {
            return Err(Error::Unsupported {
                what: format!(
                    "acc::DeviceVec::copy_from_slice: {} elements into {}",
                    src.len(),
                    self.len()
                ),
            });
        }
        let Some((d, buf)) = &self.device else {
            self.host_elems_mut().copy_from_slice(src);
            return Ok(());
        };
        if src.is_empty() {
            return Ok(());
        }
        d.synchronize()?;
        let mem = own(&**d)?;
        mem.memory.upload(
            *buf,
            crate::__rt::layout::<T>(),
            0,
            acc_core::data::bytes_of(src),
        )
    }

    fn host_elems(&self) -> &[T] {
        // SAFETY: `len` initialized (zeroed, then written as `T`s) elements at `host`, owned.
        unsafe { std::slice::from_raw_parts(self.host.as_ptr(), self.len) }
    }

    fn host_elems_mut(&mut self) -> &mut [T] {
        // SAFETY: as above, and `&mut self` makes it the only reference.
        unsafe { std::slice::from_raw_parts_mut(self.host.as_ptr(), self.len) }
    }

    /// The device type whose memory holds it (`None`: host memory).
    fn device_type(&self) -> Option<DeviceType> {
        self.device.as_ref().map(|(d, _)| d.device_type())
    }
}

fn own(d: &dyn Device) -> Result<acc_core::OwnMemory<'_>> {
    d.own_memory().ok_or_else(|| Error::Unsupported {
        what: format!(
            "internal error: the {} device has no memory of its own",
            d.device_type()
        ),
    })
}

/// `len` zeroed `T`s of host memory (a zeroed allocation: the host never touches its pages
/// unless it writes them); dangling when empty. Zero is a valid `DeviceCopy` value.
fn zeroed_host<T: DeviceCopy>(len: usize) -> Result<std::ptr::NonNull<T>> {
    if len == 0 || std::mem::size_of::<T>() == 0 {
        return Ok(std::ptr::NonNull::dangling());
    }
    let layout = std::alloc::Layout::array::<T>(len)
        .map_err(|_| Error::OutOfMemory { bytes: usize::MAX })?;
    // SAFETY: a layout of non-zero size.
    let p = unsafe { std::alloc::alloc_zeroed(layout) }.cast::<T>();
    std::ptr::NonNull::new(p).ok_or(Error::OutOfMemory {
        bytes: layout.size(),
    })
}

/// Frees what [`zeroed_host`] made.
///
/// # Safety
/// `p` came from `zeroed_host::<T>(len)` and is not used after.
unsafe fn free_host<T>(p: std::ptr::NonNull<T>, len: usize) {
    if len == 0 || std::mem::size_of::<T>() == 0 {
        return;
    }
    if let Ok(layout) = std::alloc::Layout::array::<T>(len) {
        // SAFETY: allocated with this layout (the caller's contract).
        unsafe { std::alloc::dealloc(p.as_ptr().cast(), layout) };
    }
}

// SAFETY: it owns its elements (host memory it alone points to) and a device buffer, which the
// device's own types let any thread use.
unsafe impl<T: DeviceCopy + Send> Send for DeviceVec<T> {}
// SAFETY: shared references only read.
unsafe impl<T: DeviceCopy + Sync> Sync for DeviceVec<T> {}

impl<T: DeviceCopy> Drop for DeviceVec<T> {
    fn drop(&mut self) {
        match self.device.take() {
            Some((d, buf)) => {
                let mut released = true;
                if let Some(mem) = d.own_memory() {
                    // Kernels queued on it run first.
                    let _ = d.synchronize();
                    if self.len > 0 {
                        released = mem
                            .table
                            .release_mapped(self.host.as_ptr() as usize)
                            .unwrap_or(true);
                    }
                    if released {
                        mem.memory.free(buf);
                    }
                }
                if released {
                    // SAFETY: made by `zeroed_host` for `len` elements; no longer in the table.
                    unsafe { free_host(self.host, self.len) };
                }
                // Otherwise a data construct still counts it (it was moved into the construct's
                // body and dropped there): the construct's end removes it from the table and
                // frees the buffer. Its host pages, which name it there until then, are left
                // allocated (untouched zeroed pages), so that no other data takes their
                // address while the entry lives.
            }
            None => {
                if self.len > 0 && std::mem::size_of::<T>() > 0 {
                    let _ = acc_core::host_alloc::free_owned(self.host.as_ptr() as usize);
                }
            }
        }
    }
}

impl<T: DeviceCopy> std::ops::Index<usize> for DeviceVec<T> {
    type Output = T;
    fn index(&self, i: usize) -> &T {
        if let Some(ty) = self.device_type() {
            host_index_panic(ty);
        }
        &self.host_elems()[i]
    }
}

impl<T: DeviceCopy> std::ops::IndexMut<usize> for DeviceVec<T> {
    fn index_mut(&mut self, i: usize) -> &mut T {
        if let Some(ty) = self.device_type() {
            host_index_panic(ty);
        }
        &mut self.host_elems_mut()[i]
    }
}

#[cold]
#[track_caller]
fn host_index_panic(ty: DeviceType) -> ! {
    panic!(
        "acc::DeviceVec: indexed on the host, but its elements are in the {ty} device's memory: index it in a region naming it in `deviceptr(..)`, or copy it with `to_vec`"
    )
}

impl<T: DeviceCopy> std::fmt::Debug for DeviceVec<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceVec")
            .field("len", &self.len())
            .field(
                "device",
                &self
                    .device_type()
                    .map_or("host memory".to_string(), |t| t.to_string()),
            )
            .finish()
    }
}

/// The present table names it by its host allocation (see the module's documentation); its
/// elements, read through this, are the data only where [`DeviceVec::on_host`].
#[diagnostic::do_not_recommend]
impl<T: DeviceCopy> DataVar for DeviceVec<T> {
    type Elem = T;
    fn elems(&self) -> &[T] {
        self.host_elems()
    }
}

#[diagnostic::do_not_recommend]
impl<T: DeviceCopy> DataVarMut for DeviceVec<T> {
    fn elems_mut(&mut self) -> &mut [T] {
        self.host_elems_mut()
    }
}

/// The host twin's indexing where the bounds were proven (still refused off host memory).
impl<T: DeviceCopy> crate::__rt::UncheckedIndex for DeviceVec<T> {
    type Output = T;
    #[inline(always)]
    fn length(&self) -> usize {
        self.len
    }
    #[inline(always)]
    unsafe fn at(&self, i: usize) -> &T {
        if let Some(ty) = self.device_type() {
            host_index_panic(ty);
        }
        debug_assert!(i < self.len);
        // SAFETY: the caller's `i < self.length()`.
        unsafe { &*self.host.as_ptr().add(i) }
    }
}

impl<T: DeviceCopy> crate::__rt::UncheckedIndexMut for DeviceVec<T> {
    #[inline(always)]
    unsafe fn at_mut(&mut self, i: usize) -> &mut T {
        if let Some(ty) = self.device_type() {
            host_index_panic(ty);
        }
        debug_assert!(i < self.len);
        // SAFETY: the caller's `i < self.length()`; `&mut self` makes it the only reference.
        unsafe { &mut *self.host.as_ptr().add(i) }
    }
}
