//! Device data for other libraries (3.3 section 2.8, `host_data`): inside
//! `#[acc::host_data(use_device(a))] { .. }` each listed variable is a [`DeviceSlice`], which
//! says where its data is on the current device: a CUDA device address for cuBLAS, cuFFT or
//! a kernel of one's own through cudarc, a `wgpu::Buffer` for a compute shader of one's own.
//! [`wgpu_device`] gives the wgpu device and queue acc uses, [`get_cuda_stream`] a queue's CUDA
//! stream; the `wgpu` and `cudarc` crates are re-exported at the versions acc uses.

use std::marker::PhantomData;

use acc_core::present::{Named, RawHandle};
use acc_core::queue::Queue;
use acc_core::{Error, Result};

use crate::routines::runtime;

/// The wgpu crate, at the version acc uses (feature `wgpu`).
#[cfg(feature = "wgpu")]
pub use acc_device::deps::wgpu;

/// The cudarc crate, at the version acc uses (feature `cuda`): its `driver` and `nvrtc`
/// modules, and `cublas` with acc's feature `cublas` (`use acc::cudarc::cublas::CudaBlas`).
#[cfg(feature = "cuda")]
pub use acc_device::deps::cudarc;

/// Where a variable's data is on the current device, inside `host_data use_device` (3.3
/// section 2.8). On devices that share host memory (host, multicore), and for data that is not
/// present under `if_present` or with `if(false)`, it is the host's data. It borrows the host
/// variable, so that the data stays where it is while the slice is used.
///
/// # Examples
///
/// ```
/// #[acc::offload]
/// fn where_is(a: &mut Vec<f32>) -> (usize, bool, Option<u64>) {
///     let found;
///     #[acc::data(copy(a))]
///     {
///         #[acc::host_data(use_device(a))]
///         {
///             // A CUDA library would take `a.cu_deviceptr()` on nvidia, a shader of one's
///             // own `a.wgpu_buffer()` on wgpu (see examples/cublas_gemm.rs and
///             // examples/wgpu_interop.rs).
///             found = (a.len(), a.on_host(), a.cu_deviceptr());
///         }
///     }
///     found
/// }
///
/// acc::set_device_type(acc::DeviceType::Host);
/// let mut a = vec![1.0f32; 100];
/// assert_eq!(where_is(&mut a), (100, true, None));
/// ```
pub struct DeviceSlice<'a, T> {
    len: usize,
    place: Place,
    _host: PhantomData<&'a [T]>,
}

enum Place {
    Host(*const u8),
    Cuda(u64),
    #[cfg(feature = "wgpu")]
    Wgpu {
        buffer: acc_device::deps::wgpu::Buffer,
        offset: u64,
    },
}

impl<T> DeviceSlice<'_, T> {
    /// Its number of elements.
    ///
    /// # Examples
    ///
    /// ```rust
    /// #[acc::offload]
    /// fn device_len(a: &mut [f32]) -> usize {
    ///     let r;
    ///     #[acc::data(copy(a))]
    ///     {
    ///         #[acc::host_data(use_device(a))]
    ///         {
    ///             r = a.len();
    ///         }
    ///     }
    ///     r
    /// }
    ///
    /// let mut a = vec![1.0f32; 100];
    /// assert_eq!(device_len(&mut a), 100);
    /// ```
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it has no elements.
    ///
    /// # Examples
    ///
    /// ```rust
    /// #[acc::offload]
    /// fn emptiness(a: &mut [f32]) -> (bool, bool) {
    ///     let r;
    ///     #[acc::data(copy(a))]
    ///     {
    ///         #[acc::host_data(use_device(a))]
    ///         {
    ///             r = (a.is_empty(), a.slice(5..5).is_empty());
    ///         }
    ///     }
    ///     r
    /// }
    ///
    /// let mut a = vec![1.0f32; 100];
    /// assert_eq!(emptiness(&mut a), (false, true));
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The address of its first element on the device: a CUDA device address on nvidia (for
    /// CUDA libraries, not to be dereferenced on the host), the host address on devices that
    /// share host memory. A wgpu buffer has no address: null there (see
    /// [`DeviceSlice::wgpu_buffer`]).
    ///
    /// # Examples
    ///
    /// ```rust
    /// #[acc::offload]
    /// fn address(a: &mut [f32]) -> (usize, bool) {
    ///     let r;
    ///     #[acc::data(copy(a))]
    ///     {
    ///         #[acc::host_data(use_device(a))]
    ///         {
    ///             r = (a.as_ptr() as usize, a.on_host());
    ///         }
    ///     }
    ///     r
    /// }
    ///
    /// let mut a = vec![1.0f32; 100];
    /// let host = a.as_ptr() as usize;
    /// let (addr, on_host) = address(&mut a);
    /// // The host's address where the device shares host memory; elsewhere the device's (nvidia)
    /// // or null (wgpu).
    /// assert_eq!(addr == host, on_host);
    /// ```
    pub fn as_ptr(&self) -> *const T {
        match &self.place {
            Place::Host(p) => p.cast(),
            Place::Cuda(a) => *a as usize as *const T,
            #[cfg(feature = "wgpu")]
            Place::Wgpu { .. } => std::ptr::null(),
        }
    }

    /// [`DeviceSlice::as_ptr`], for libraries that write through it.
    ///
    /// # Examples
    ///
    /// ```rust
    /// #[acc::offload]
    /// fn same_address(a: &mut [f32]) -> bool {
    ///     let r;
    ///     #[acc::data(copy(a))]
    ///     {
    ///         #[acc::host_data(use_device(a))]
    ///         {
    ///             // A library that writes the data (cuBLAS on nvidia) takes this one.
    ///             r = a.as_mut_ptr().cast_const() == a.as_ptr();
    ///         }
    ///     }
    ///     r
    /// }
    ///
    /// let mut a = vec![1.0f32; 100];
    /// assert!(same_address(&mut a));
    /// ```
    pub fn as_mut_ptr(&self) -> *mut T {
        self.as_ptr().cast_mut()
    }

    /// The CUDA device address of its first element (a `CUdeviceptr`), on the nvidia device.
    ///
    /// # Examples
    ///
    /// ```rust
    /// #[acc::offload]
    /// fn cuda_address(a: &mut [f32]) -> (Option<u64>, usize) {
    ///     let r;
    ///     #[acc::data(copy(a))]
    ///     {
    ///         #[acc::host_data(use_device(a))]
    ///         {
    ///             // On nvidia: the address for cuBLAS, cuFFT or a kernel through acc::cudarc.
    ///             r = (a.cu_deviceptr(), a.as_ptr() as usize);
    ///         }
    ///     }
    ///     r
    /// }
    ///
    /// let mut a = vec![1.0f32; 100];
    /// match cuda_address(&mut a) {
    ///     (Some(p), addr) => assert_eq!(p as usize, addr),
    ///     (None, _) => assert_ne!(acc::get_device_type(), acc::DeviceType::Nvidia),
    /// }
    /// ```
    pub fn cu_deviceptr(&self) -> Option<u64> {
        match self.place {
            Place::Cuda(a) => Some(a),
            _ => None,
        }
    }

    /// Its wgpu buffer, the byte offset of its first element there and its length in bytes,
    /// on the wgpu device (feature `wgpu`).
    ///
    /// # Examples
    ///
    /// ```rust
    /// #[acc::offload]
    /// fn buffer_range(a: &mut [f32]) -> Option<(u64, u64)> {
    ///     let r;
    ///     #[acc::data(copy(a))]
    ///     {
    ///         #[acc::host_data(use_device(a))]
    ///         {
    ///             // On wgpu the buffer goes into a bind group of one's own
    ///             // (examples/wgpu_interop.rs).
    ///             r = a.wgpu_buffer().map(|(_buffer, offset, bytes)| (offset, bytes));
    ///         }
    ///     }
    ///     r
    /// }
    ///
    /// let mut a = vec![1.0f32; 100];
    /// match buffer_range(&mut a) {
    ///     Some(range) => assert_eq!(range, (0, 400)), // all of a buffer of its own, from byte 0
    ///     None => assert_ne!(acc::get_device_type(), acc::DeviceType::Wgpu),
    /// }
    /// ```
    #[cfg(feature = "wgpu")]
    pub fn wgpu_buffer(&self) -> Option<(&acc_device::deps::wgpu::Buffer, u64, u64)> {
        match &self.place {
            Place::Wgpu { buffer, offset } => Some((
                buffer,
                *offset,
                (self.len * std::mem::size_of::<T>()) as u64,
            )),
            _ => None,
        }
    }

    /// Its elements `range`, where they are (the device's, or the host's), as `&a[range]`
    /// would name them: a halo row for a library call, say.
    ///
    /// # Panics
    /// Where `range` is out of bounds, as slicing does.
    ///
    /// # Examples
    ///
    /// ```rust
    /// #[acc::offload]
    /// fn row_of(a: &mut [f32]) -> (usize, usize) {
    ///     let r;
    ///     #[acc::data(copy(a))]
    ///     {
    ///         #[acc::host_data(use_device(a))]
    ///         {
    ///             let row = a.slice(10..20); // as `&a[10..20]` names it
    ///             r = (row.len(), row.as_ptr() as usize - a.as_ptr() as usize);
    ///         }
    ///     }
    ///     r
    /// }
    ///
    /// let mut a = vec![1.0f32; 100];
    /// let (len, offset) = row_of(&mut a);
    /// assert_eq!(len, 10);
    /// if acc::get_device_type() != acc::DeviceType::Wgpu {
    ///     assert_eq!(offset, 10 * std::mem::size_of::<f32>()); // (wgpu buffers have no addresses)
    /// }
    /// ```
    pub fn slice(&self, range: std::ops::Range<usize>) -> DeviceSlice<'_, T> {
        assert!(
            range.start <= range.end && range.end <= self.len,
            "DeviceSlice::slice: {}..{} is out of range for length {}",
            range.start,
            range.end,
            self.len
        );
        let skip = range.start * std::mem::size_of::<T>();
        let place = match &self.place {
            Place::Host(p) => Place::Host(p.wrapping_add(skip)),
            Place::Cuda(a) => Place::Cuda(a + skip as u64),
            #[cfg(feature = "wgpu")]
            Place::Wgpu { buffer, offset } => Place::Wgpu {
                buffer: buffer.clone(),
                offset: offset + skip as u64,
            },
        };
        DeviceSlice {
            len: range.len(),
            place,
            _host: PhantomData,
        }
    }

    /// Whether it is the host's data (a device sharing host memory, or data not present).
    ///
    /// # Examples
    ///
    /// ```rust
    /// #[acc::offload]
    /// fn seen_on_host(a: &mut [f32]) -> bool {
    ///     let r;
    ///     #[acc::data(copy(a))]
    ///     {
    ///         #[acc::host_data(use_device(a))]
    ///         {
    ///             r = a.on_host();
    ///         }
    ///     }
    ///     r
    /// }
    ///
    /// let ty = acc::get_device_type();
    /// let shared = acc::get_property(acc::get_device_num(ty), ty, acc::Property::SharedMemorySupport) == "1";
    /// let mut a = vec![1.0f32; 100];
    /// assert_eq!(seen_on_host(&mut a), shared); // a GPU's copy of present data is not on the host
    /// ```
    pub fn on_host(&self) -> bool {
        matches!(self.place, Place::Host(_))
    }
}

impl<T> std::fmt::Debug for DeviceSlice<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let at = match &self.place {
            Place::Host(p) => format!("host {p:?}"),
            Place::Cuda(a) => format!("cuda {a:#x}"),
            #[cfg(feature = "wgpu")]
            Place::Wgpu { offset, .. } => format!("wgpu buffer at byte {offset}"),
        };
        f.debug_struct("DeviceSlice")
            .field("len", &self.len)
            .field("at", &at)
            .finish()
    }
}

/// The slice of `elems` for `use_device` on the current device: its device buffer where it is
/// present, else (`if_present`, `if(false)`, shared memory) the host's data.
pub(crate) fn device_slice<'a, T>(
    elems: &'a [T],
    elem: acc_core::present::ElemLayout,
    var: Named<'_>,
    use_host: bool,
) -> Result<DeviceSlice<'a, T>> {
    let host = DeviceSlice {
        len: elems.len(),
        place: Place::Host(elems.as_ptr().cast()),
        _host: PhantomData,
    };
    let device = runtime().current_device()?;
    let Some(mem) = device.own_memory() else {
        return Ok(host);
    };
    let bytes = std::mem::size_of_val(elems);
    let addr = elems.as_ptr() as usize;
    if use_host || bytes == 0 {
        return Ok(host);
    }
    let Some(placement) = mem.table.lookup(addr, bytes, elem, var)? else {
        return Ok(host);
    };
    let raw = mem
        .memory
        .raw_buffer(placement.buf, placement.elem)
        .ok_or_else(|| Error::Unsupported {
            what: format!(
                "`use_device({})`: the {} device cannot hand its buffers to other libraries",
                var.name,
                device.device_type()
            ),
        })?;
    if raw.elem_bytes != std::mem::size_of::<T>() {
        return Err(Error::Unsupported {
            what: format!(
                "`use_device({})`: its elements take {} bytes on the {} device against {} on the host (the device widens them); other libraries would misread them",
                var.name,
                raw.elem_bytes,
                device.device_type(),
                std::mem::size_of::<T>()
            ),
        });
    }
    let offset = (placement.first * raw.elem_bytes) as u64;
    let place = match raw.handle {
        RawHandle::Cuda(a) => Place::Cuda(a + offset),
        #[cfg(feature = "wgpu")]
        RawHandle::Wgpu(b) => match b.downcast::<acc_device::deps::wgpu::Buffer>() {
            Ok(buffer) => Place::Wgpu {
                buffer: *buffer,
                offset,
            },
            Err(_) => {
                return Err(Error::Unsupported {
                    what: "internal error: a wgpu buffer of another type".into(),
                })
            }
        },
        #[cfg(not(feature = "wgpu"))]
        RawHandle::Wgpu(_) => {
            return Err(Error::Unsupported {
                what: "internal error: a wgpu buffer in a build without wgpu".into(),
            })
        }
    };
    Ok(DeviceSlice {
        len: elems.len(),
        place,
        _host: PhantomData,
    })
}

/// The wgpu device and queue acc runs regions on, when the current device is a wgpu one
/// (feature `wgpu`): a program's own shaders on them can use the buffers of
/// [`DeviceSlice::wgpu_buffer`], and their submissions run in order with acc's.
///
/// # Examples
///
/// ```rust
/// use acc::DeviceType;
///
/// match acc::wgpu_device() {
///     // The current device is a wgpu one: shaders of one's own can run on it.
///     Some((device, _queue)) => {
///         assert_eq!(acc::get_device_type(), DeviceType::Wgpu);
///         println!("{:?}", device.features());
///     }
///     None => assert_ne!(acc::get_device_type(), DeviceType::Wgpu),
/// }
/// acc::set_device_type(DeviceType::Host);
/// assert!(acc::wgpu_device().is_none());
/// ```
#[cfg(feature = "wgpu")]
pub fn wgpu_device() -> Option<(
    acc_device::deps::wgpu::Device,
    acc_device::deps::wgpu::Queue,
)> {
    let device = runtime().current_device().ok()?;
    device
        .interop_handles()?
        .downcast::<(
            acc_device::deps::wgpu::Device,
            acc_device::deps::wgpu::Queue,
        )>()
        .ok()
        .map(|b| *b)
}

/// Gives acc a program's own wgpu `device` and `queue` (feature `wgpu`): they become a wgpu
/// device of acc, whose number this returns (after the adapters'), for
/// [`set_device_num`](crate::set_device_num). Regions on it run beside the program's own work
/// on the same queue, in order with it. Its features decide what kernels may use: request
/// `SHADER_F64` and `SHADER_INT64` where the adapter has them, and on Vulkan
/// `PASSTHROUGH_SHADERS` for float arithmetic that rounds as Rust's.
///
/// # Examples
///
/// ```no_run
/// use acc::wgpu;
///
/// #[acc::parallel_loop(copy(v))]
/// fn squares(v: &mut [u32]) {
///     for i in 0..v.len() {
///         v[i] = (i * i) as u32;
///     }
/// }
///
/// // The program's own device and queue (on the first adapter; pollster runs the futures).
/// let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
/// let adapters = pollster::block_on(instance.enumerate_adapters(wgpu::Backends::all()));
/// let adapter = adapters.into_iter().next().expect("a wgpu adapter");
/// let descriptor = wgpu::DeviceDescriptor::default();
/// let (device, queue) = pollster::block_on(adapter.request_device(&descriptor)).expect("a device");
/// let n = acc::wgpu_adopt(device, queue); // numbered after the adapters
/// acc::set_device_num(n, acc::DeviceType::Wgpu);
/// let mut v = vec![0u32; 1000];
/// squares(&mut v); // runs on the program's device, in order with its own work on the queue
/// assert_eq!(v[999], 999 * 999);
/// ```
#[cfg(feature = "wgpu")]
pub fn wgpu_adopt(
    device: acc_device::deps::wgpu::Device,
    queue: acc_device::deps::wgpu::Queue,
) -> usize {
    acc_device::wgpu::adopt(device, queue)
}

/// `acc_set_cuda_stream` (NVHPC): async queue `q` on the current device runs on CUDA stream
/// `stream` from now on, so that acc's work on that queue is ordered with a CUDA library's
/// work on the stream (the library's stream, not acc's, carries both). What the queue was
/// given before is waited for first. An error on a device without CUDA streams, and for
/// [`ASYNC_SYNC`](crate::ASYNC_SYNC) (the synchronous queue's stream is acc's own).
///
/// A null `stream` gives the queue back to a stream of acc's own, after waiting for what the
/// program's stream was given: do that before destroying the stream.
///
/// # Safety
/// `stream` must be null or a valid `CUstream` of the current device's primary context (the
/// one `cudarc::driver::CudaContext::new(n)` gives), and must stay alive until the queue is
/// set to another stream (or null) or the device is shut down: acc waits on every queue's
/// stream at `wait` without arguments, at data-region ends and at shutdown. acc never destroys
/// it.
///
/// # Examples
///
/// ```no_run
/// # fn main() -> acc::Result<()> {
/// use acc::cudarc::driver::CudaContext;
/// let ctx = CudaContext::new(0).expect("a CUDA device");
/// let stream = ctx.new_stream().expect("a stream");
/// // SAFETY: the stream belongs to the primary context and outlives queue 1's use of it.
/// unsafe { acc::set_cuda_stream(1, stream.cu_stream() as *mut std::ffi::c_void)? };
/// assert_eq!(acc::get_cuda_stream(1)?, stream.cu_stream() as *mut std::ffi::c_void);
/// acc::wait(1)?;
/// // SAFETY: null: queue 1 goes back to acc's own stream before `stream` is dropped.
/// unsafe { acc::set_cuda_stream(1, std::ptr::null_mut())? };
/// # Ok(())
/// # }
/// ```
pub unsafe fn set_cuda_stream(q: i32, stream: *mut std::ffi::c_void) -> Result<()> {
    let queue = Queue::resolve(Some(q as i64))?;
    let device = runtime().current_device()?;
    // SAFETY: the caller's contract, passed on.
    match unsafe { device.set_cuda_stream(queue, stream as usize) } {
        Some(r) => r,
        None => Err(Error::Unsupported {
            what: format!(
                "acc::set_cuda_stream on the {} device (it has no CUDA streams)",
                device.device_type()
            ),
        }),
    }
}

/// `acc_get_cuda_stream` (NVHPC): the CUDA stream (`CUstream`) of activity queue `q` on the
/// current device ([`ASYNC_SYNC`](crate::ASYNC_SYNC) for the stream synchronous regions run
/// on; a queue's stream is made on first use), for CUDA libraries to run in order with acc's
/// work. An error on a device without CUDA streams.
///
/// Once the synchronous queue's stream is handed out, the nvidia device no longer records
/// regions launched while the GPU is busy to submit them in batches (a library may queue work
/// on that stream at any time, and it must come after the regions before it): each region is
/// then launched at once, for the rest of the process.
///
/// # Examples
///
/// ```rust
/// match acc::get_cuda_stream(1) {
///     // nvidia: queue 1's stream, the same each time, for CUDA libraries to run in order
///     // with acc's work on queue 1.
///     Ok(stream) => {
///         assert!(!stream.is_null());
///         assert_eq!(acc::get_cuda_stream(1).ok(), Some(stream));
///     }
///     // Devices without CUDA streams: an error naming the device.
///     Err(e) => assert!(e.to_string().contains("no CUDA streams"), "{e}"),
/// }
/// ```
pub fn get_cuda_stream(q: i32) -> Result<*mut std::ffi::c_void> {
    let queue = Queue::resolve(Some(q as i64))?;
    let device = runtime().current_device()?;
    match device.cuda_stream(queue) {
        Some(s) => s.map(|s| s as *mut std::ffi::c_void),
        None => Err(Error::Unsupported {
            what: format!(
                "acc::get_cuda_stream on the {} device (it has no CUDA streams)",
                device.device_type()
            ),
        }),
    }
}
