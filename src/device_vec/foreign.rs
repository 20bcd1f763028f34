//! [`DeviceVec`]s of memory another library allocated (3.3 section 3.2.24 `acc_map_data`
//! takes such memory in C): a cudarc `CudaSlice`, a CUDA device address, a `wgpu::Buffer`.
//! The device checks the memory is its own and large enough
//! ([`acc_core::present::DeviceMemory::adopt`]); from then on it is present device data like
//! any `DeviceVec`, used in regions through `deviceptr(..)` and by the memory routines.

use acc_core::data::DeviceCopy;
use acc_core::present::Foreign;
use acc_core::{DeviceType, Error, Result};

use super::{own, DeviceVec};
use crate::routines::runtime;

impl<T: DeviceCopy> DeviceVec<T> {
    /// A `DeviceVec` of a cudarc allocation (feature `cuda`): acc takes it over, and frees it
    /// when the `DeviceVec` is dropped. The slice must be on the current nvidia device (made
    /// through `acc::cudarc` on the primary context, `CudaContext::new(n)`, which acc uses);
    /// what its stream was given is waited for first.
    ///
    /// An error where the current device is not nvidia, or the slice belongs to another device.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use acc::cudarc::driver::CudaContext;
    ///
    /// #[acc::offload]
    /// fn add_one(d: &mut acc::DeviceVec<f32>) {
    ///     #[acc::parallel_loop(deviceptr(d))]
    ///     for i in 0..d.len() {
    ///         d[i] += 1.0;
    ///     }
    /// }
    ///
    /// # fn main() -> acc::Result<()> {
    /// acc::set_device_type(acc::DeviceType::Nvidia);
    /// let ctx = CudaContext::new(acc::get_device_num(acc::DeviceType::Nvidia)).expect("a CUDA device");
    /// let slice = ctx.default_stream().clone_htod(&[1.0f32, 2.0, 3.0]).expect("a copy");
    /// let mut d = acc::DeviceVec::from_cuda_slice(slice)?;
    /// add_one(&mut d);
    /// assert_eq!(d.to_vec()?, [2.0, 3.0, 4.0]);
    /// # Ok(())
    /// # }
    /// ```
    #[cfg(feature = "cuda")]
    pub fn from_cuda_slice(slice: crate::cudarc::driver::CudaSlice<T>) -> Result<DeviceVec<T>> {
        use crate::cudarc::driver::DevicePtr;
        slice
            .stream()
            .synchronize()
            .map_err(|e| Error::Unsupported {
                what: format!(
                    "acc::DeviceVec::from_cuda_slice: waiting for the slice's stream: {e:?}"
                ),
            })?;
        let len = slice.len();
        let addr = slice.device_ptr(slice.stream()).0;
        DeviceVec::adopt(
            DeviceType::Nvidia,
            "acc::DeviceVec::from_cuda_slice",
            Foreign::Cuda {
                addr,
                keep: Some(Box::new(slice)),
            },
            len,
        )
    }

    /// A `DeviceVec` of `len` elements at CUDA device address `addr` of another library's
    /// memory (feature `cuda`), which acc uses but does not free. The driver is asked whether
    /// the address is device memory of the current nvidia device with room for `len`
    /// elements; an error if not.
    ///
    /// # Safety
    /// The memory must stay allocated while the `DeviceVec` lives, and the other library's
    /// work on it must be finished (or ordered with acc's, [`crate::get_cuda_stream`]) before
    /// acc uses it, and acc's before the library's.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use acc::cudarc::driver::{CudaContext, DevicePtr};
    ///
    /// # fn main() -> acc::Result<()> {
    /// acc::set_device_type(acc::DeviceType::Nvidia);
    /// let ctx = CudaContext::new(0).expect("a CUDA device");
    /// let stream = ctx.default_stream();
    /// let slice = stream.clone_htod(&[5u32, 6]).expect("a copy");
    /// stream.synchronize().expect("the copy");
    /// let addr = slice.device_ptr(&stream).0;
    /// // SAFETY: `slice` outlives `d`, and nothing else uses it meanwhile.
    /// let d = unsafe { acc::DeviceVec::<u32>::from_cuda_ptr(addr, 2)? };
    /// assert_eq!(d.to_vec()?, [5, 6]);
    /// drop(d);
    /// drop(slice);
    /// # Ok(())
    /// # }
    /// ```
    #[cfg(feature = "cuda")]
    pub unsafe fn from_cuda_ptr(addr: u64, len: usize) -> Result<DeviceVec<T>> {
        DeviceVec::adopt(
            DeviceType::Nvidia,
            "acc::DeviceVec::from_cuda_ptr",
            Foreign::Cuda { addr, keep: None },
            len,
        )
    }

    /// A `DeviceVec` of the first `len` elements of a wgpu buffer (feature `wgpu`), made on
    /// the current wgpu device ([`crate::wgpu_device`]) with usage `STORAGE | COPY_SRC |
    /// COPY_DST`. acc keeps the handle until the `DeviceVec` is dropped (another clone of it
    /// may still be used by the program: wgpu orders the work of one queue).
    ///
    /// An error where the current device is not wgpu, the buffer is too small or lacks a
    /// usage, or `T` is an element wgpu holds widened (8- and 16-bit integers, `bool`), whose
    /// layout differs from the host's.
    ///
    /// # Examples
    ///
    /// ```
    /// use acc::wgpu;
    /// use acc::wgpu::util::DeviceExt;
    ///
    /// #[acc::offload]
    /// fn double(d: &mut acc::DeviceVec<f32>) {
    ///     #[acc::parallel_loop(deviceptr(d))]
    ///     for i in 0..d.len() {
    ///         d[i] *= 2.0;
    ///     }
    /// }
    ///
    /// # fn main() -> acc::Result<()> {
    /// if let Some((device, _queue)) = acc::wgpu_device() {
    ///     let buffer = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
    ///         label: Some("mine"),
    ///         contents: bytemuck_free_bytes(&[1.0f32, 2.0, 3.0]),
    ///         usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
    ///     });
    ///     let mut d = acc::DeviceVec::<f32>::from_wgpu_buffer(buffer.clone(), 3)?;
    ///     double(&mut d);
    ///     assert_eq!(d.to_vec()?, [2.0, 4.0, 6.0]); // `buffer` holds them too
    /// }
    /// # Ok(())
    /// # }
    /// fn bytemuck_free_bytes(v: &[f32]) -> &[u8] {
    ///     // SAFETY: f32s are plain bytes.
    ///     unsafe { std::slice::from_raw_parts(v.as_ptr().cast(), std::mem::size_of_val(v)) }
    /// }
    /// ```
    #[cfg(feature = "wgpu")]
    pub fn from_wgpu_buffer(buffer: crate::wgpu::Buffer, len: usize) -> Result<DeviceVec<T>> {
        DeviceVec::adopt(
            DeviceType::Wgpu,
            "acc::DeviceVec::from_wgpu_buffer",
            Foreign::Wgpu(Box::new(buffer)),
            len,
        )
    }

    /// `len` elements of `foreign` memory on the current device, which must be of type `ty`.
    fn adopt(ty: DeviceType, what: &str, foreign: Foreign, len: usize) -> Result<DeviceVec<T>> {
        let d = runtime().current_device()?;
        if d.device_type() != ty {
            return Err(Error::Unsupported {
                what: format!(
                    "{what}: the current device is {}, not {ty} (acc::set_device_type)",
                    d.device_type()
                ),
            });
        }
        let bytes = std::mem::size_of::<T>()
            .checked_mul(len)
            .ok_or(Error::OutOfMemory { bytes: usize::MAX })?;
        if bytes == 0 {
            // Nothing to use: an empty array of acc's own (what `foreign` owns is dropped).
            drop(foreign);
            return DeviceVec::zeroed(len);
        }
        let mem = own(&*d)?;
        let buf = mem.memory.adopt(foreign, bytes).map_err(|e| match e {
            Error::Unsupported { what: why } => Error::Unsupported {
                what: format!("{what}: {why}"),
            },
            e => e,
        })?;
        let elem = crate::__rt::layout::<T>();
        let held = mem.memory.raw_buffer(buf, elem).map(|r| r.elem_bytes);
        if held != Some(std::mem::size_of::<T>()) {
            mem.memory.free(buf);
            return Err(Error::Unsupported {
                what: format!(
                    "{what}: elements of `{}` are held in {} bytes on the {ty} device, not the {} of the other library's memory",
                    std::any::type_name::<T>(),
                    held.unwrap_or(0),
                    std::mem::size_of::<T>()
                ),
            });
        }
        DeviceVec::named(d, buf, len)
    }
}
