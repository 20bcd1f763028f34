//! The `Device` trait every backend implements, and what a device can tell about itself.

use crate::device_type::DeviceType;
use crate::error::Result;

/// A device property for `acc::get_property` (`acc_device_property_t`, OpenACC 3.x 3.2.6).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Property {
    /// Total memory of the device in bytes (for devices that share the host's memory, the
    /// host's; 0 where the device cannot tell, as wgpu adapters).
    Memory,
    /// Free memory of the device in bytes (for devices that share the host's memory, the
    /// host's available memory; 0 where the device cannot tell).
    FreeMemory,
    /// Whether the device shares memory with the host: `"1"` or `"0"`.
    SharedMemorySupport,
    /// The device's name.
    Name,
    /// The device's vendor.
    Vendor,
    /// The driver, or for host devices the `acc` version.
    Driver,
}

/// One device of one [`DeviceType`], as a backend in `acc-device` provides it.
///
/// Devices that run the host twin (the region's Rust code compiled by rustc) return the way they
/// run it from `Device::host_execution`; devices with their own memory add kernel launches and
/// data movement in later backends.
pub trait Device: Send + Sync + 'static {
    /// The type of this device.
    fn device_type(&self) -> DeviceType;
    /// Its number among the devices of its type, from 0.
    fn number(&self) -> usize;
    /// A property, as text (numbers in decimal).
    fn property(&self, property: Property) -> String;
    /// What matters to `acc` beyond the OpenACC properties, as (what, value) pairs for
    /// `acc-info`: compute capability or adapter backend, 64-bit support, launch limits.
    fn details(&self) -> Vec<(&'static str, String)> {
        Vec::new()
    }
    /// Whether the device reads and writes host memory directly, so data clauses move nothing
    /// (OpenACC 3.3 section 2.6.1, "shared memory").
    fn shares_host_memory(&self) -> bool;
    /// How the device runs a region's host twin: `None` for sequentially on the calling thread,
    /// or the threads that share its parallel loops.
    fn host_threads(&self) -> Option<&dyn HostThreads> {
        None
    }
    /// What the device's compiler made of `kernel` (its entry points' registers, shared and
    /// local memory), for `ACC_INFO=2`, once it has run; empty where the device cannot say.
    fn kernel_resources(&self, kernel: &crate::ir::Kernel) -> Vec<String> {
        let _ = kernel;
        Vec::new()
    }
    /// What the device's target offers the kernel plan ([`crate::ir::plan`]), which `ACC_INFO`
    /// reports as the device runs it (devices that run kernels).
    fn caps(&self) -> Option<crate::ir::plan::Caps> {
        None
    }
    /// Whether the device runs regions as kernels (see [`Device::launch_kernel`]) rather than
    /// as their host twin.
    fn runs_kernels(&self) -> bool {
        false
    }
    /// Runs `kernel` with `args` (one per parameter): read arrays are copied in, written ones
    /// copied in and back out, reductions returned. Devices that run host twins refuse.
    fn launch_kernel(
        &self,
        kernel: &crate::ir::Kernel,
        args: &mut [crate::ir::args::KernelArg<'_>],
    ) -> Result<crate::ir::args::KernelOutput> {
        let _ = (kernel, args);
        Err(crate::Error::Unsupported {
            what: format!(
                "the {} device runs regions on the host, not as kernels",
                self.device_type()
            ),
        })
    }
    /// Runs `kernel` as [`Device::launch_kernel`] does, on activity queue `queue` after the
    /// queues in `waits` (every queue for `None`: a bare `wait` clause; 3.3 section 2.16). A device may return before the kernel has run
    /// where nothing comes back to the host; the default runs it at once, which keeps every
    /// queue's order. The kernel is shared: a device may keep it and know it again by its
    /// address, without comparing its IR (the runtime keeps each region's kernel for good).
    fn launch_kernel_queued(
        &self,
        kernel: &std::sync::Arc<crate::ir::Kernel>,
        args: &mut [crate::ir::args::KernelArg<'_>],
        queue: crate::queue::Queue,
        waits: Option<&[crate::queue::Queue]>,
    ) -> Result<crate::ir::args::KernelOutput> {
        let _ = (queue, waits);
        self.launch_kernel(kernel.as_ref(), args)
    }
    /// Waits until queue `queue` has finished what it was given (`acc_wait`).
    fn synchronize_queue(&self, queue: crate::queue::Queue) -> Result<()> {
        let _ = queue;
        self.synchronize()
    }
    /// Makes `waiter` wait, without blocking the host, until `on` has finished what it was
    /// given so far (`acc_wait_async`, the `wait` directive with `async`).
    fn queue_wait(&self, waiter: crate::queue::Queue, on: crate::queue::Queue) -> Result<()> {
        let _ = waiter;
        self.synchronize_queue(on)
    }
    /// Orders the device's work around host code that uses its memory through another API
    /// (`host_data use_device`, 3.3 section 2.8): before the code (`entering`), what the
    /// device was given is made to run first; after it, what the code gave the device through
    /// that API comes before the device's next work. The default waits for the device both
    /// times.
    fn interop_barrier(&self, entering: bool) -> Result<()> {
        let _ = entering;
        self.synchronize()
    }
    /// The device's own handles, for other libraries to work beside it (on wgpu, its
    /// `wgpu::Device` and `wgpu::Queue`), type-erased; `None` where it has none to give.
    fn interop_handles(&self) -> Option<Box<dyn std::any::Any + Send + Sync>> {
        None
    }
    /// The native stream of queue `queue` (a `CUstream` on nvidia, 0 for the default
    /// stream), made if it does not exist yet (`acc_get_cuda_stream`); `None` on devices
    /// without CUDA streams.
    fn cuda_stream(&self, queue: crate::queue::Queue) -> Option<Result<usize>> {
        let _ = queue;
        None
    }
    /// Makes async queue `queue` run on the native stream `stream` (a `CUstream` of the
    /// device's context, owned by the caller) from now on (`acc_set_cuda_stream`); `None` on
    /// devices without CUDA streams.
    ///
    /// # Safety
    /// `stream` must be a valid stream of the device's CUDA context, kept alive while the
    /// queue may use it.
    unsafe fn set_cuda_stream(
        &self,
        queue: crate::queue::Queue,
        stream: usize,
    ) -> Option<Result<()>> {
        let _ = (queue, stream);
        None
    }
    /// Whether `queue` (every queue for `None`) has finished what it was given, without
    /// waiting (`acc_async_test`).
    fn queue_done(&self, queue: Option<crate::queue::Queue>) -> bool {
        let _ = queue;
        self.synchronize().is_ok()
    }
    /// The device's own memory and its present table, for devices that do not share the
    /// host's memory (`None` for those that do: every variable is present there already).
    fn own_memory(&self) -> Option<OwnMemory<'_>> {
        None
    }
    /// Waits until everything the device was given has finished (`acc_wait` and its
    /// relatives). Devices that finish each operation before returning have nothing to do.
    fn synchronize(&self) -> Result<()> {
        Ok(())
    }
    /// Releases what the device holds (`acc_shutdown`); it may be initialized again later.
    fn shutdown(&self) -> Result<()> {
        Ok(())
    }
}

/// A device's own memory with the present table kept over it (OpenACC 3.3 section 2.6).
#[derive(Clone, Copy)]
pub struct OwnMemory<'a> {
    /// Which host ranges have a device copy.
    pub table: &'a crate::present::PresentTable,
    /// Where the copies live.
    pub memory: &'a dyn crate::present::DeviceMemory,
}

/// Threads that run chunks of a parallel loop's iteration space (the multicore device).
pub trait HostThreads: Send + Sync {
    /// How many threads run chunks at once.
    fn parallelism(&self) -> usize;
    /// Runs `task(0)`, ..., `task(tasks - 1)`, spread over the threads, and returns when all
    /// have finished. A panic in a task is resumed on the calling thread.
    fn run(&self, tasks: usize, task: &(dyn Fn(usize) + Sync));
}

/// A backend: the devices of one type that this build and machine provide.
pub trait Backend: Send + Sync + 'static {
    /// The type of the devices it provides.
    fn device_type(&self) -> DeviceType;
    /// How many devices of that type are present (0 when none are).
    fn count(&self) -> usize;
    /// Opens device `num` (`num < count()`); later calls return the same device.
    fn open(&self, num: usize) -> Result<std::sync::Arc<dyn Device>>;
    /// Whether the best of these devices may be chosen when the user names no device type:
    /// software rasterizers are usable on request but are not "the best device present".
    fn is_default_candidate(&self) -> bool {
        self.count() > 0
    }
    /// Why there are no devices, when `count()` is 0.
    fn absent_reason(&self) -> String {
        String::from("none was found")
    }
    /// Forgets opened devices after shutting them down (`acc_shutdown`).
    fn shutdown(&self) -> Result<()> {
        Ok(())
    }
}

/// The devices a backend has opened, by number: each is opened once, and forgotten on
/// `acc_shutdown`.
pub struct Opened<T> {
    devices: std::sync::Mutex<std::collections::HashMap<usize, std::sync::Arc<T>>>,
}

impl<T> Default for Opened<T> {
    fn default() -> Self {
        Opened {
            devices: Default::default(),
        }
    }
}

impl<T: Device> Opened<T> {
    /// Device `num`, opened with `open` the first time.
    pub fn get_or_open(
        &self,
        num: usize,
        open: impl FnOnce(usize) -> Result<T>,
    ) -> Result<std::sync::Arc<dyn Device>> {
        let mut devices = self.devices.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(d) = devices.get(&num) {
            return Ok(std::sync::Arc::clone(d) as std::sync::Arc<dyn Device>);
        }
        let d = std::sync::Arc::new(open(num)?);
        devices.insert(num, std::sync::Arc::clone(&d));
        Ok(d)
    }

    /// Forgets every opened device.
    pub fn clear(&self) {
        self.devices
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
    }
}
