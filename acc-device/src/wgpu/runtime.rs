use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use acc_core::ir::args::{KernelArg as Arg, KernelOutput as Launched, ScalarValue};
use acc_core::ir::{Kernel, ParamId, ParamKind, Scalar};
use acc_core::{DeviceType, Error, Result};

use acc_core::present::{BufferId, ElemLayout, PresentTable};
use acc_core::queue::Queue;
use std::sync::atomic::{AtomicU64, Ordering};

use super::memory::{STAGING, STORAGE};
use super::pool::BufferPool;
use crate::wgsl::{lower_variant, widened_in_buffers, Binding, Lowered, Target, WORKGROUP_SIZE};

fn annotate_param(e: Error, name: &str) -> Error {
    match e {
        Error::Unsupported { what } => Error::Unsupported {
            what: format!("{what} (variable `{name}`)"),
        },
        other => other,
    }
}

/// The bytes of a scalar parameter, as the module lowered for `target` lays it out
/// (`usize`/`isize` are 64-bit where shaders have 64-bit integers; where they are 32-bit,
/// larger values are an error).
fn scalar_bytes(v: ScalarValue, target: Target) -> Result<Vec<u8>> {
    let narrow = |x: i128, what: &str| -> Result<Vec<u8>> {
        if (i32::MIN as i128..=u32::MAX as i128).contains(&x) {
            Ok((x as u32).to_le_bytes().to_vec())
        } else {
            Err(Error::Unsupported {
                what: format!("on wgpu: a {what} value of {x} (32-bit there)"),
            })
        }
    };
    Ok(match v {
        ScalarValue::Bool(b) => (b as u32).to_le_bytes().to_vec(),
        ScalarValue::I32(v) => v.to_le_bytes().to_vec(),
        ScalarValue::U32(v) => v.to_le_bytes().to_vec(),
        ScalarValue::I64(v) => v.to_le_bytes().to_vec(),
        ScalarValue::U64(v) => v.to_le_bytes().to_vec(),
        ScalarValue::ISize(v) if target.wide_usize() => v.to_le_bytes().to_vec(),
        ScalarValue::USize(v) if target.wide_usize() => v.to_le_bytes().to_vec(),
        // The limits map to the 32-bit limits, as in arrays.
        ScalarValue::ISize(i64::MAX) => i32::MAX.to_le_bytes().to_vec(),
        ScalarValue::ISize(i64::MIN) => i32::MIN.to_le_bytes().to_vec(),
        ScalarValue::USize(u64::MAX) => u32::MAX.to_le_bytes().to_vec(),
        ScalarValue::ISize(v) => narrow(v as i128, "isize")?,
        ScalarValue::USize(v) => narrow(v as i128, "usize")?,
        ScalarValue::F32(v) => v.to_le_bytes().to_vec(),
        ScalarValue::F64(v) => v.to_le_bytes().to_vec(),
    })
}

/// The 32-bit words a device buffer holds for host array data of element type `t` (booleans,
/// 8/16-bit integers, and `usize`/`isize` where the adapter has no 64-bit integers: see
/// [`widened_in_buffers`]).
pub(super) fn widen(t: Scalar, host: &[u8], name: &str) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(host.len() * 4);
    let word = |w: u32, out: &mut Vec<u8>| out.extend_from_slice(&w.to_le_bytes());
    match t {
        Scalar::Bool | Scalar::U8 => host.iter().for_each(|&b| word(b as u32, &mut out)),
        Scalar::I8 => host
            .iter()
            .for_each(|&b| word(b as i8 as i32 as u32, &mut out)),
        Scalar::U16 => host
            .chunks_exact(2)
            .for_each(|c| word(u16::from_le_bytes([c[0], c[1]]) as u32, &mut out)),
        Scalar::I16 => host
            .chunks_exact(2)
            .for_each(|c| word(i16::from_le_bytes([c[0], c[1]]) as i32 as u32, &mut out)),
        Scalar::USize | Scalar::ISize => {
            for c in host.chunks_exact(8) {
                let v = i64::from_le_bytes(c.try_into().expect("8 bytes"));
                // The limits map to the 32-bit limits (as `usize::MAX` in kernel code does):
                // sentinels keep their meaning; other values must fit.
                let v = match (t, v) {
                    (Scalar::USize, -1) => u32::MAX as i64,
                    (Scalar::ISize, i64::MAX) => i32::MAX as i64,
                    (Scalar::ISize, i64::MIN) => i32::MIN as i64,
                    (_, v) => v,
                };
                let fits = if t == Scalar::USize {
                    (0..=u32::MAX as i64).contains(&v)
                } else {
                    (i32::MIN as i64..=i32::MAX as i64).contains(&v)
                };
                if !fits {
                    return Err(Error::Unsupported { what: format!("on wgpu: `{name}` holds the value {v}, beyond the 32 bits of {t} there") });
                }
                word(v as u32, &mut out);
            }
        }
        _ => out.extend_from_slice(host),
    }
    Ok(out)
}

/// Writes device words back into host array data of element type `t`.
pub(super) fn narrow(t: Scalar, words: &[u8], host: &mut [u8]) {
    let w = |i: usize| u32::from_le_bytes(words[4 * i..4 * i + 4].try_into().expect("4 bytes"));
    match t {
        Scalar::Bool => host
            .iter_mut()
            .enumerate()
            .for_each(|(i, b)| *b = (w(i) != 0) as u8),
        Scalar::U8 | Scalar::I8 => host
            .iter_mut()
            .enumerate()
            .for_each(|(i, b)| *b = w(i) as u8),
        Scalar::U16 | Scalar::I16 => host
            .chunks_exact_mut(2)
            .enumerate()
            .for_each(|(i, c)| c.copy_from_slice(&(w(i) as u16).to_le_bytes())),
        Scalar::USize => host.chunks_exact_mut(8).enumerate().for_each(|(i, c)| {
            let v = if w(i) == u32::MAX {
                u64::MAX
            } else {
                w(i) as u64
            };
            c.copy_from_slice(&v.to_le_bytes())
        }),
        Scalar::ISize => host.chunks_exact_mut(8).enumerate().for_each(|(i, c)| {
            let v = match w(i) as i32 {
                i32::MAX => i64::MAX,
                i32::MIN => i64::MIN,
                v => v as i64,
            };
            c.copy_from_slice(&v.to_le_bytes())
        }),
        _ => host.copy_from_slice(&words[..host.len()]),
    }
}

/// The adapters wgpu finds, best first (discrete, integrated, virtual, CPU).
pub fn adapters() -> Vec<wgpu::Adapter> {
    let instance =
        wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
    let mut list = pollster::block_on(instance.enumerate_adapters(wgpu::Backends::all()));
    list.sort_by_key(|a| match a.get_info().device_type {
        wgpu::DeviceType::DiscreteGpu => 0,
        wgpu::DeviceType::IntegratedGpu => 1,
        wgpu::DeviceType::VirtualGpu => 2,
        wgpu::DeviceType::Cpu => 3,
        wgpu::DeviceType::Other => 4,
    });
    list
}

/// wgpu devices a program gave acc ([`adopt`]), numbered after the adapters.
static ADOPTED: Mutex<Vec<(wgpu::Device, wgpu::Queue)>> = Mutex::new(Vec::new());

/// Makes a program's own wgpu `device` and `queue` one of acc's wgpu devices, so that regions
/// run on them beside the program's own work (their features decide what kernels may use:
/// request `SHADER_F64`, `SHADER_INT64` and, on Vulkan, `PASSTHROUGH_SHADERS` for exact float
/// arithmetic). Returns its device number, after the adapters'.
pub fn adopt(device: wgpu::Device, queue: wgpu::Queue) -> usize {
    let mut adopted = ADOPTED.lock().unwrap_or_else(|e| e.into_inner());
    adopted.push((device, queue));
    adapters().len() + adopted.len() - 1
}

/// How many devices programs gave acc.
pub(super) fn adopted_count() -> usize {
    ADOPTED.lock().unwrap_or_else(|e| e.into_inner()).len()
}

/// Whether an adapter of this type is a GPU (a software renderer reports `Cpu`).
fn is_hardware(t: wgpu::DeviceType) -> bool {
    matches!(
        t,
        wgpu::DeviceType::DiscreteGpu
            | wgpu::DeviceType::IntegratedGpu
            | wgpu::DeviceType::VirtualGpu
    )
}

/// NVIDIA's PCI vendor id.
const NVIDIA_VENDOR: u32 = 0x10de;

/// How many loop iterations llvmpipe lets one invocation run.
const LLVMPIPE_LOOP_LIMIT: u32 = 65_535;

/// A kernel's variant on the device: its pipelines and the buffers its launches reuse.
pub struct Compiled {
    lowered: Lowered,
    /// The target it was lowered for (the device's, or its 32-bit-index variant).
    target: Target,
    layout: wgpu::BindGroupLayout,
    pipelines: Vec<wgpu::ComputePipeline>,
    /// Buffers every launch of the kernel uses, kept between launches (launches of one
    /// device run one at a time), and bind groups over present buffers.
    scratch: Mutex<Scratch>,
}

/// The per-kernel buffers that are not the user's arrays (its parameters and host values go
/// to the device's upload buffer: see [`batch`]).
struct Scratch {
    status: wgpu::Buffer,
    locals: Option<wgpu::Buffer>,
    /// Per kernel reduction, room for one partial per workgroup of the largest grid.
    partials: Vec<wgpu::Buffer>,
    /// Per spilled private array (`Binding::Spilled`), a copy for every invocation.
    spilled: Vec<wgpu::Buffer>,
    /// Bind groups by the buffers they bind, when all are long-lived (present data).
    groups: HashMap<Vec<wgpu::Buffer>, wgpu::BindGroup>,
}

/// How many bind groups a kernel keeps (present buffers come and go with data regions).
const BIND_GROUPS_KEPT: usize = 64;

/// One wgpu adapter, opened.
pub struct WgpuDevice {
    number: usize,
    info: wgpu::AdapterInfo,
    pub(super) device: wgpu::Device,
    pub(super) queue: wgpu::Queue,
    target: Target,
    max_workgroups: u32,
    /// The kernels loaded, with their variants and bounds proofs.
    kernels: acc_core::gpu::KernelCache<Compiled>,
    /// One launch at a time: wgpu's error scopes belong to the device, so a launch's errors are
    /// its own only while no other launch runs.
    launching: Mutex<()>,
    /// What is present on the device, and the buffers holding it.
    present: PresentTable,
    /// The bytes asked for each buffer (a buffer from the pool may be larger): the bounds of
    /// the memory routines' addresses.
    pub(super) buffer_bytes: Mutex<HashMap<BufferId, u64, acc_core::int_hash::IntKeys>>,
    pub(super) buffers: Mutex<HashMap<BufferId, wgpu::Buffer, acc_core::int_hash::IntKeys>>,
    /// The buffers another library made (`acc::DeviceVec::from_wgpu_buffer`): never reused.
    pub(super) adopted: Mutex<std::collections::HashSet<BufferId>>,
    pub(super) next_buffer: AtomicU64,
    /// Buffers freed for reuse.
    pub(super) pool: BufferPool,
    /// Launches recorded and not yet submitted, and the queues' last launches.
    pub(super) batch: Mutex<batch::Batch>,
    /// The buffer of the batch's parameters and host values ([`batch::UPLOAD_BYTES`]).
    uploads: wgpu::Buffer,
    /// Where kernels go to the driver as SPIR-V the device writes, their float operations
    /// kept from contracting ([`spirv`]); `None` where wgpu writes them.
    spirv: Option<spirv::Spirv>,
    /// Number of the last queued launch known to have finished (set by wgpu's callbacks,
    /// which run in submission order).
    finished: Arc<AtomicU64>,
}

fn no_device(reason: impl Into<String>) -> Error {
    Error::NoDevice {
        device_type: DeviceType::Wgpu,
        reason: reason.into(),
    }
}

impl WgpuDevice {
    /// Opens adapter `index` of [`adapters`], with f64 and 64-bit integers where it has them.
    pub fn open(index: usize) -> Result<WgpuDevice> {
        let list = adapters();
        let count = list.len();
        if index >= count {
            // The devices a program gave acc come after the adapters.
            let adopted = ADOPTED.lock().unwrap_or_else(|e| e.into_inner());
            let (device, queue) =
                adopted
                    .get(index - count)
                    .cloned()
                    .ok_or(Error::DeviceNumOutOfRange {
                        device_type: DeviceType::Wgpu,
                        num: index,
                        count: count + adopted.len(),
                    })?;
            drop(adopted);
            return Ok(WgpuDevice::with_device(index, device, queue, false));
        }
        let adapter = list
            .into_iter()
            .nth(index)
            .ok_or(Error::DeviceNumOutOfRange {
                device_type: DeviceType::Wgpu,
                num: index,
                count,
            })?;
        let info = adapter.get_info();
        let available = adapter.features();
        let mut features = wgpu::Features::empty();
        for f in [
            wgpu::Features::SHADER_F64,
            wgpu::Features::SHADER_INT64,
            wgpu::Features::SHADER_INT64_ATOMIC_ALL_OPS,
        ] {
            if available.contains(f) {
                features |= f;
            }
        }
        // Exact float arithmetic needs the SPIR-V the device writes (`spirv`).
        if info.backend == wgpu::Backend::Vulkan
            && available.contains(wgpu::Features::PASSTHROUGH_SHADERS)
            && !fast_float()
        {
            features |= wgpu::Features::PASSTHROUGH_SHADERS;
        }
        let desc = wgpu::DeviceDescriptor {
            label: Some("acc"),
            required_features: features,
            required_limits: adapter.limits(),
            ..Default::default()
        };
        let (device, queue) = pollster::block_on(adapter.request_device(&desc))
            .map_err(|e| no_device(format!("adapter {} could not start: {e}", info.name)))?;
        Ok(WgpuDevice::with_device(index, device, queue, true))
    }

    /// Device `index` over an opened wgpu device and its queue, with what they have
    /// (features, limits); `own`: acc opened it, and reports its errors outside launches.
    fn with_device(
        index: usize,
        device: wgpu::Device,
        queue: wgpu::Queue,
        own: bool,
    ) -> WgpuDevice {
        let info = device.adapter_info();
        let features = device.features();
        let limits = device.limits();
        let exact_float = info.backend == wgpu::Backend::Vulkan
            && features.contains(wgpu::Features::PASSTHROUGH_SHADERS)
            && !fast_float();
        if own {
            // Errors outside a launch's error scopes are reported, not turned into panics.
            device.on_uncaptured_error(Arc::new(|e: wgpu::Error| {
                eprintln!("acc: wgpu error outside a launch: {e}")
            }));
        }
        let target = Target {
            f64: features.contains(wgpu::Features::SHADER_F64),
            int64: features.contains(wgpu::Features::SHADER_INT64),
            int64_atomics: features.contains(
                wgpu::Features::SHADER_INT64 | wgpu::Features::SHADER_INT64_ATOMIC_ALL_OPS,
            ),
            // Mesa's llvmpipe (lavapipe) ends the loops of an invocation after 65,535
            // iterations in all (gallivm's loop limiter): kernels check for it there.
            loop_limit: info
                .name
                .contains("llvmpipe")
                .then_some(LLVMPIPE_LOOP_LIMIT),
            int64_compare_by_halves: info.vendor == NVIDIA_VENDOR,
            narrow_usize: false,
            fast_float: fast_float(),
        };
        let uploads = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("acc uploads"),
            size: batch::UPLOAD_BYTES,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let spirv = if exact_float {
            vulkan_api(&device).map(|(api, robust)| spirv::Spirv::new(api, robust))
        } else {
            None
        };
        WgpuDevice {
            number: index,
            info,
            device,
            queue,
            target,
            max_workgroups: limits.max_compute_workgroups_per_dimension.max(1),
            kernels: Default::default(),
            launching: Mutex::new(()),
            present: PresentTable::new(),
            buffers: Mutex::new(HashMap::default()),
            buffer_bytes: Mutex::new(HashMap::default()),
            adopted: Mutex::new(std::collections::HashSet::new()),
            next_buffer: AtomicU64::new(1),
            pool: BufferPool::default(),
            batch: Mutex::default(),
            uploads,
            spirv,
            finished: Arc::new(AtomicU64::new(0)),
        }
    }

    /// The adapter's name and backend.
    pub fn name(&self) -> String {
        format!(
            "{} ({:?}, {:?})",
            self.info.name, self.info.backend, self.info.device_type
        )
    }

    /// What its shaders can do.
    pub fn target(&self) -> Target {
        self.target
    }

    /// Runs `kernel` with `args` (one per parameter, in order): arrays are copied in, written
    /// arrays copied back, reductions combined. An out-of-range access is an error naming the
    /// array, the index and the length.
    pub fn launch(&self, kernel: &Kernel, args: &mut [Arg<'_>]) -> Result<Launched> {
        self.launch_on(kernel, args, Queue::Sync)
    }

    /// [`WgpuDevice::launch`] for activity queue `queue`. A launch that brings nothing back
    /// (no reduction, no value, no array that is not present written) and cannot report an
    /// error (its accesses proven in bounds for these arguments, no loop it could cut short)
    /// returns once submitted: the device's one queue runs submissions in order, so whatever
    /// later reads its results (a copy out, another kernel) comes after it, as 3.3 section 2.16
    /// asks, and the host goes on meanwhile. [`acc_core::Device::synchronize_queue`] waits for
    /// it.
    pub fn launch_on(
        &self,
        kernel: &Kernel,
        args: &mut [Arg<'_>],
        queue: Queue,
    ) -> Result<Launched> {
        self.launch_scoped(kernel, None, args, queue)
    }

    /// [`WgpuDevice::launch_on`] for a kernel the device may keep, and know again by its
    /// address (the runtime's regions: see [`acc_core::gpu::KernelCache::find`]).
    pub fn launch_shared(
        &self,
        kernel: &Arc<Kernel>,
        args: &mut [Arg<'_>],
        queue: Queue,
    ) -> Result<Launched> {
        self.launch_scoped(kernel, Some(kernel), args, queue)
    }

    /// A launch inside the device's error scopes (one launch at a time: the scopes are the
    /// device's).
    fn launch_scoped(
        &self,
        kernel: &Kernel,
        shared: Option<&Arc<Kernel>>,
        args: &mut [Arg<'_>],
        queue: Queue,
    ) -> Result<Launched> {
        let _one_at_a_time = self.launching.lock().unwrap_or_else(|e| e.into_inner());
        let validation = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let memory = self.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let order = acc_core::gpu::Order { queue, waits: None };
        let result = acc_core::gpu::launch(self, kernel, shared, args, order);
        let wgpu_error =
            pollster::block_on(memory.pop()).or_else(|| pollster::block_on(validation.pop()));
        match wgpu_error {
            Some(e) => Err(Error::Unsupported {
                what: format!("internal error: wgpu refused `{}`: {e}", kernel.name),
            }),
            None => result,
        }
    }
}

/// The Vulkan version of the physical device under `device`, and whether wgpu enabled
/// `VK_EXT_robustness2` on it (wgpu then turns on `robustBufferAccess2` where the device has
/// it, and writes buffer accesses unchecked), where it runs on Vulkan.
#[cfg(not(target_os = "macos"))]
fn vulkan_api(device: &wgpu::Device) -> Option<(u32, bool)> {
    // SAFETY: only a query of the physical device's properties through the device's own
    // instance; the guard is dropped before returning.
    let hal = unsafe { device.as_hal::<wgpu::hal::api::Vulkan>() }?;
    let instance = hal.shared_instance().raw_instance();
    // SAFETY: the physical device belongs to that instance.
    let props = unsafe { instance.get_physical_device_properties(hal.raw_physical_device()) };
    let robust = hal
        .enabled_device_extensions()
        .iter()
        .any(|e| e.to_bytes() == b"VK_EXT_robustness2");
    Some((props.api_version, robust))
}

#[cfg(target_os = "macos")]
fn vulkan_api(_: &wgpu::Device) -> Option<(u32, bool)> {
    None
}

impl WgpuDevice {
    /// The total of the adapter's device-local memory heaps, where it runs on Vulkan.
    #[cfg(not(target_os = "macos"))]
    fn vulkan_memory(&self) -> Option<u64> {
        // SAFETY: only a query of the physical device's memory properties through the
        // device's own instance; the guard is dropped before returning.
        let hal = unsafe { self.device.as_hal::<wgpu::hal::api::Vulkan>() }?;
        let instance = hal.shared_instance().raw_instance();
        // SAFETY: the physical device belongs to that instance.
        let props =
            unsafe { instance.get_physical_device_memory_properties(hal.raw_physical_device()) };
        let heaps = props.memory_heaps.get(..props.memory_heap_count as usize)?;
        // VK_MEMORY_HEAP_DEVICE_LOCAL_BIT
        Some(
            heaps
                .iter()
                .filter(|h| h.flags.as_raw() & 1 != 0)
                .map(|h| h.size)
                .sum(),
        )
    }

    #[cfg(target_os = "macos")]
    fn vulkan_memory(&self) -> Option<u64> {
        None
    }

    /// Waits until submission `index` (every submission for `None`) has run, submitting the
    /// batch first.
    fn wait_for(&self, index: Option<wgpu::SubmissionIndex>) -> Result<()> {
        self.submit_pending()?;
        let wait = wgpu::PollType::Wait {
            submission_index: index,
            timeout: None,
        };
        self.device
            .poll(wait)
            .map(|_| ())
            .map_err(|e| Error::Unsupported {
                what: format!("wgpu device lost while waiting for queued kernels: {e}"),
            })
    }
}

#[cfg(test)]
mod tests;

pub(super) mod batch;
mod compile;
mod device;
mod launch;
mod spirv;

use device::QueuedTime;
pub use device::WgpuBackend;

/// Whether `ACC_FAST_FLOAT=1` asks for the driver's float arithmetic on wgpu
/// ([`crate::wgsl::Target::fast_float`]), read once.
fn fast_float() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(acc_core::config::fast_float)
}
