use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use acc_core::ir::launch::{KernelArg as Arg, KernelOutput as Launched, ScalarValue};
use acc_core::ir::{Kernel, ParamId, ParamKind, Scalar};
use acc_core::{DeviceType, Error, Result};

use acc_core::present::{BufferId, ElemLayout, Named, PresentTable};
use acc_core::queue::Queue;
use std::sync::atomic::{AtomicU64, Ordering};

use super::memory::{STAGING, STORAGE};
use super::pool::BufferPool;
use crate::wgsl::{lower, widened_in_buffers, Binding, Lowered, Target, WORKGROUP_SIZE};

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

/// Bytes of one reduction partial on the device (`bool` travels as a `u32`).
fn partial_size(t: Scalar, target: Target) -> usize {
    if widened_in_buffers(t, target) {
        4
    } else {
        t.size() as usize
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

struct Compiled {
    lowered: Lowered,
    layout: wgpu::BindGroupLayout,
    pipelines: Vec<wgpu::ComputePipeline>,
    /// Buffers every launch of the kernel uses, kept between launches (launches of one
    /// device run one at a time), and bind groups over present buffers.
    scratch: Mutex<Scratch>,
}

/// The per-kernel buffers that are not the user's arrays.
struct Scratch {
    params: wgpu::Buffer,
    status: wgpu::Buffer,
    locals: Option<wgpu::Buffer>,
    /// Per kernel reduction, room for one partial per workgroup of the largest grid.
    partials: Vec<wgpu::Buffer>,
    /// Bind groups by the buffers they bind, when all are long-lived (present data).
    groups: HashMap<Vec<wgpu::Buffer>, wgpu::BindGroup>,
    /// The host loops' values of each dispatch of a pass, a slot of
    /// [`WgpuDevice::host_value_stride`] bytes each, when the kernel has host loops.
    host_values: Option<wgpu::Buffer>,
}

/// Most dispatches recorded in one compute pass (a host loop's launches go in several).
const DISPATCHES_PER_PASS: usize = 4096;

/// Bytes of the status buffer (five `u32`, see [`Binding::Status`]).
const STATUS_BYTES: u64 = 20;

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
    cache: Mutex<HashMap<String, Arc<Compiled>>>,
    /// One launch at a time: wgpu's error scopes belong to the device, so a launch's errors are
    /// its own only while no other launch runs.
    launching: Mutex<()>,
    /// What is present on the device, and the buffers holding it.
    present: PresentTable,
    pub(super) buffers: Mutex<HashMap<BufferId, wgpu::Buffer>>,
    pub(super) next_buffer: AtomicU64,
    /// Buffers freed for reuse.
    pub(super) pool: BufferPool,
    /// Launches that returned before their kernel ran, per queue: the last one's number (in
    /// submission order) and submission.
    queued: Mutex<HashMap<Queue, (u64, wgpu::SubmissionIndex)>>,
    /// Number of the last queued launch known to have finished (set by wgpu's callbacks,
    /// which run in submission order).
    finished: Arc<AtomicU64>,
    /// Queued launches so far (the next one's number is this plus one).
    queued_count: AtomicU64,
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
        let limits = adapter.limits();
        let desc = wgpu::DeviceDescriptor {
            label: Some("acc"),
            required_features: features,
            required_limits: limits.clone(),
            ..Default::default()
        };
        let (device, queue) = pollster::block_on(adapter.request_device(&desc))
            .map_err(|e| no_device(format!("adapter {} could not start: {e}", info.name)))?;
        // Errors outside a launch's error scopes are reported, not turned into panics.
        device.on_uncaptured_error(Arc::new(|e: wgpu::Error| {
            eprintln!("acc: wgpu error outside a launch: {e}")
        }));
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
        };
        Ok(WgpuDevice {
            number: index,
            info,
            device,
            queue,
            target,
            max_workgroups: limits.max_compute_workgroups_per_dimension.max(1),
            cache: Mutex::new(HashMap::new()),
            launching: Mutex::new(()),
            present: PresentTable::new(),
            buffers: Mutex::new(HashMap::new()),
            next_buffer: AtomicU64::new(1),
            pool: BufferPool::default(),
            queued: Mutex::new(HashMap::new()),
            finished: Arc::new(AtomicU64::new(0)),
            queued_count: AtomicU64::new(0),
        })
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
        let _one_at_a_time = self.launching.lock().unwrap_or_else(|e| e.into_inner());
        let validation = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let memory = self.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let result = self.launch_in_scope(kernel, args, queue);
        let wgpu_error =
            pollster::block_on(memory.pop()).or_else(|| pollster::block_on(validation.pop()));
        match wgpu_error {
            Some(e) => Err(Error::Unsupported {
                what: format!("internal error: wgpu refused `{}`: {e}", kernel.name),
            }),
            None => result,
        }
    }

    /// Bytes between two dispatches' host values: `n` values of 8 bytes, aligned as dynamic
    /// storage offsets must be.
    fn host_value_stride(&self, n: usize) -> u64 {
        let align = u64::from(self.device.limits().min_storage_buffer_offset_alignment).max(8);
        (8 * n as u64).max(8).next_multiple_of(align)
    }

    fn launch_in_scope(
        &self,
        kernel: &Kernel,
        args: &mut [Arg<'_>],
        queue: Queue,
    ) -> Result<Launched> {
        if args.len() != kernel.params.len() {
            return Err(Error::Unsupported {
                what: format!(
                    "internal error: {} arguments for {} parameters",
                    args.len(),
                    kernel.params.len()
                ),
            });
        }
        // Accesses proven in bounds for these arguments need no checks; where every index
        // value fits 32 bits as well, the kernel computes them in 32 bits (`ACC_NARROW=0`
        // keeps 64), as on nvidia.
        let proof = acc_core::ir::narrow::prove_launch(kernel, args, self.target.wide_usize());
        let proven = proof.in_bounds;
        let target = Target {
            narrow_usize: proven && proof.fits_32,
            ..self.target
        };
        let compiled = self.compile(kernel, proven, target)?;
        let l = &compiled.lowered;

        // The grid: enough workgroups for the largest array, within the device's limit; the
        // grid-stride loops cover any trip count.
        let largest = args
            .iter()
            .zip(&kernel.params)
            .filter_map(|(a, p)| match (a, &p.kind) {
                (Arg::Read(d), ParamKind::Array { elem, .. }) => {
                    Some(d.len() / elem.size() as usize)
                }
                (Arg::Write(d), ParamKind::Array { elem, .. }) => {
                    Some(d.len() / elem.size() as usize)
                }
                _ => None,
            })
            .max()
            .unwrap_or(1);
        // Loops whose iteration counts are known on the host size the grid by the largest of
        // them (a loop whose iterations take a workgroup each wants one per iteration, the
        // others one per 256); otherwise the largest array stands in for the count.
        // (One count for every dispatch: a fold of partials reads it from the parameters.)
        let mut wanted = 0u64;
        l.program.run(args, &mut |e, count, _| {
            if !l.single[e] {
                let iterations = count.unwrap_or(largest as u64);
                wanted = wanted.max(if l.workgroup_per_iteration[e] {
                    iterations
                } else {
                    iterations.div_ceil(WORKGROUP_SIZE as u64)
                });
            }
            Ok(())
        })?;
        if wanted == 0 {
            wanted = (largest as u64).div_ceil(WORKGROUP_SIZE as u64);
        }
        let groups = wanted.clamp(1, u64::from(self.max_workgroups.min(65_535))) as u32;

        let mut params = vec![0u8; l.params_size as usize];
        for slot in &l.params {
            let Arg::Scalar(v) = &args[slot.param as usize] else {
                return Err(Error::Unsupported {
                    what: format!("internal error: parameter {} is a scalar", slot.param),
                });
            };
            // A scalar the kernel never reads (a reduction's original value, combined on the
            // host) need not fit the device's types.
            let read = kernel
                .function
                .exprs
                .iter()
                .any(|(_, e)| *e == acc_core::ir::Expr::Param(slot.param));
            let b = match scalar_bytes(*v, target) {
                Ok(b) => b,
                Err(_) if !read => vec![0; 8],
                Err(e) => return Err(annotate_param(e, &kernel.params[slot.param as usize].name)),
            };
            let b = &b[..(b.len()).min(l.params_size as usize - slot.offset as usize)];
            params[slot.offset as usize..slot.offset as usize + b.len()].copy_from_slice(b);
        }
        // Arrays: present ones are bound where they are (3.3 section 2.6.2: present data is
        // used in place); the others are copied in for this launch, and out if written.
        let mut placed: HashMap<ParamId, (wgpu::Buffer, usize, usize)> = HashMap::new();
        for (p, param) in kernel.params.iter().enumerate() {
            let ParamKind::Array { elem, .. } = param.kind else {
                continue;
            };
            let data: &[u8] = match &args[p] {
                Arg::Read(d) => d,
                Arg::Write(d) => d,
                Arg::Scalar(_) => continue,
            };
            let layout = ElemLayout::from(elem);
            let var = Named::unlocated(&param.name);
            if let Some(at) =
                self.present
                    .lookup(data.as_ptr() as usize, data.len(), layout, var)?
            {
                placed.insert(p as ParamId, (self.buffer(at.buf)?, at.first, at.len));
            }
        }
        if let Some(o) = l.groups_offset {
            params[o as usize..o as usize + 4].copy_from_slice(&groups.to_le_bytes());
        }
        for slot in &l.arrays {
            let p = slot.param as usize;
            let (first, len) = match (placed.get(&slot.param), &args[p], &kernel.params[p].kind) {
                (Some(&(_, first, len)), _, _) => (first, len),
                (None, Arg::Read(d), ParamKind::Array { elem, .. }) => {
                    (0, d.len() / elem.size() as usize)
                }
                (None, Arg::Write(d), ParamKind::Array { elem, .. }) => {
                    (0, d.len() / elem.size() as usize)
                }
                _ => (0, 0),
            };
            let word = |x: usize| -> Result<[u8; 4]> {
                u32::try_from(x)
                    .map(u32::to_le_bytes)
                    .map_err(|_| Error::Unsupported {
                        what: format!(
                            "on wgpu: array `{}` has {x} elements, more than 32-bit indices reach",
                            kernel.params[p].name
                        ),
                    })
            };
            let o = slot.offset as usize;
            params[o..o + 4].copy_from_slice(&word(first)?);
            params[o + 4..o + 8].copy_from_slice(&word(len)?);
        }
        let mut scratch = compiled.scratch.lock().unwrap_or_else(|e| e.into_inner());
        self.queue.write_buffer(&scratch.params, 0, &params);
        self.queue
            .write_buffer(&scratch.status, 0, &[0; STATUS_BYTES as usize]);
        if let Some(locals) = &scratch.locals {
            self.queue
                .write_buffer(locals, 0, &vec![0; l.locals_size as usize]);
        }
        // Arrays that are not present, in buffers from the pool (given back after the launch).
        let mut temporaries: Vec<wgpu::Buffer> = Vec::new();
        let mut buffers: Vec<wgpu::Buffer> = Vec::new();
        let mut readback: Vec<(usize, usize)> = Vec::new(); // (binding, bytes) copied out
        for (i, b) in l.bindings.iter().enumerate() {
            let buf = match b {
                Binding::Array(p) if placed.contains_key(p) => placed[p].0.clone(),
                Binding::Array(p) => {
                    let data: &[u8] = match &args[*p as usize] {
                        Arg::Read(d) => d,
                        Arg::Write(d) => d,
                        Arg::Scalar(_) => {
                            return Err(Error::Unsupported {
                                what: format!("internal error: parameter {p} is an array"),
                            })
                        }
                    };
                    // Structs travel bit for bit.
                    let ParamKind::Array {
                        elem: array_elem, ..
                    } = kernel.params[*p as usize].kind
                    else {
                        return Err(Error::Unsupported {
                            what: format!("internal error: parameter {p} is an array"),
                        });
                    };
                    let device_elem =
                        super::memory::device_elem_size(ElemLayout::from(array_elem), target)
                            .map_err(|e| annotate_param(e, &kernel.params[*p as usize].name))?;
                    let data: Cow<[u8]> = match array_elem.scalar() {
                        Some(t) if widened_in_buffers(t, target) => {
                            Cow::Owned(widen(t, data, &kernel.params[*p as usize].name)?)
                        }
                        _ => Cow::Borrowed(data),
                    };
                    if matches!(args[*p as usize], Arg::Write(_)) {
                        readback.push((i, data.len()));
                    }
                    // wgpu buffers may not be empty; an empty array gets one element it never
                    // reads (its length in the shader comes from `len`, which the IR passes).
                    let contents: Cow<[u8]> = if data.is_empty() {
                        Cow::Owned(vec![0; device_elem])
                    } else {
                        data
                    };
                    let t = self.pool.take(
                        &self.device,
                        (contents.len() as u64).next_multiple_of(4),
                        STORAGE,
                        "acc temporary",
                    );
                    let start = acc_core::observe::timing().then(std::time::Instant::now);
                    self.queue.write_buffer(&t, 0, &contents);
                    if let Some(start) = start {
                        acc_core::observe::time::transfer(true, contents.len(), start.elapsed());
                    }
                    temporaries.push(t.clone());
                    t
                }
                Binding::Params => scratch.params.clone(),
                Binding::Status => {
                    if l.status_used {
                        readback.push((i, STATUS_BYTES as usize));
                    }
                    scratch.status.clone()
                }
                Binding::Locals => {
                    if l.reductions.iter().any(|r| r.entry.is_none()) || l.result.is_some() {
                        readback.push((i, l.locals_size as usize));
                    }
                    scratch.locals.clone().ok_or_else(|| Error::Unsupported {
                        what: "internal error: no locals buffer".into(),
                    })?
                }
                Binding::HostValues => {
                    scratch
                        .host_values
                        .clone()
                        .ok_or_else(|| Error::Unsupported {
                            what: "internal error: no host values buffer".into(),
                        })?
                }
                Binding::Partials(r) => {
                    // Partials of a reduction into a region local stay on the device.
                    if l.reductions[*r].into.is_some() {
                        readback.push((
                            i,
                            groups as usize
                                * l.reductions[*r].len as usize
                                * partial_size(l.reductions[*r].ty, target),
                        ));
                    }
                    scratch.partials[*r].clone()
                }
            };
            buffers.push(buf);
        }
        // Empty arrays are bound to a one-element buffer they never index: their length in
        // the shader is the parameter `n`, 0.
        let host_vars = l.program.host_vars();
        let make_group = |buffers: &[wgpu::Buffer]| {
            let entries: Vec<wgpu::BindGroupEntry> = buffers
                .iter()
                .enumerate()
                .map(|(i, b)| wgpu::BindGroupEntry {
                    binding: i as u32,
                    resource: if l.bindings[i] == Binding::HostValues {
                        // One dispatch's slot, placed by the dynamic offset.
                        wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                            buffer: b,
                            offset: 0,
                            size: std::num::NonZeroU64::new(8 * host_vars as u64),
                        })
                    } else {
                        b.as_entire_binding()
                    },
                })
                .collect();
            self.device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: None,
                layout: &compiled.layout,
                entries: &entries,
            })
        };
        // Temporaries come from the pool, so the same buffers come back launch after launch.
        let group = {
            if scratch.groups.len() >= BIND_GROUPS_KEPT && !scratch.groups.contains_key(&buffers) {
                scratch.groups.clear();
            }
            scratch
                .groups
                .entry(buffers.clone())
                .or_insert_with(|| make_group(&buffers))
                .clone()
        };
        let host_values_buffer = scratch.host_values.clone();
        drop(scratch);

        acc_core::observe::notify(acc_core::observe::Notify::Launch, || {
            format!(
                "wgpu kernel `{}`: {} entry point(s), {groups} workgroups of {WORKGROUP_SIZE}",
                kernel.name,
                compiled.pipelines.len()
            )
        });
        for (b, p) in l.bindings.iter().filter_map(|b| match b {
            Binding::Array(p) => Some((b, *p)),
            _ => None,
        }) {
            if placed.contains_key(&p) {
                continue;
            }
            let _ = b;
            let (name, bytes, back) = match &args[p as usize] {
                Arg::Read(d) => (&kernel.params[p as usize].name, d.len(), false),
                Arg::Write(d) => (&kernel.params[p as usize].name, d.len(), true),
                Arg::Scalar(_) => continue,
            };
            acc_core::observe::notify(acc_core::observe::Notify::Transfer, || {
                format!(
                    "transfer `{name}`: {bytes} bytes to the device{}",
                    if back { " and back" } else { "" }
                )
            });
        }
        // The dispatches in the order the kernel's program gives (host loops repeat some), in
        // passes of at most DISPATCHES_PER_PASS, each long program's earlier passes submitted
        // while later ones are recorded.
        let new_encoder = || {
            self.device
                .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                    label: Some(&kernel.name),
                })
        };
        // Each dispatch's host values go to its slot of the host values buffer, written before
        // the pass that reads them is submitted.
        let stride = self.host_value_stride(host_vars);
        let host_buffer = host_values_buffer;
        let record = |encoder: &mut wgpu::CommandEncoder, batch: &[usize], values: &[u8]| {
            if let (Some(b), false) = (&host_buffer, values.is_empty()) {
                self.queue.write_buffer(b, 0, values);
            }
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: None,
                timestamp_writes: None,
            });
            if host_vars == 0 {
                pass.set_bind_group(0, &group, &[]);
            }
            for (d, &e) in batch.iter().enumerate() {
                if host_vars > 0 {
                    pass.set_bind_group(0, &group, &[(d as u64 * stride) as u32]);
                }
                pass.set_pipeline(&compiled.pipelines[e]);
                pass.dispatch_workgroups(if l.single[e] { 1 } else { groups }, 1, 1);
            }
        };
        let mut batch = Vec::new();
        let mut values: Vec<u8> = Vec::new();
        l.program.run(args, &mut |e, _, host| {
            if e >= compiled.pipelines.len() {
                return Err(Error::Unsupported {
                    what: format!("internal error: `{}` has no entry point {e}", kernel.name),
                });
            }
            if host_vars > 0 {
                values.resize(batch.len() * stride as usize, 0);
                for (n, &v) in host.iter().enumerate() {
                    // Indices of 32 bits hold a host loop's `usize`/`isize` only within them.
                    let narrow = match l.program.host_var(n) {
                        Some((name, Scalar::USize)) if !target.wide_usize() => {
                            (!(0..=i128::from(u32::MAX)).contains(&v)).then_some(name)
                        }
                        Some((name, Scalar::ISize)) if !target.wide_usize() => {
                            (!(i128::from(i32::MIN)..=i128::from(i32::MAX)).contains(&v))
                                .then_some(name)
                        }
                        _ => None,
                    };
                    if let Some(name) = narrow {
                        return Err(Error::Unsupported {
                            what: format!(
                                "on wgpu: the loop variable `{name}` of `{}` reaches {v}, more than this launch's 32-bit indices hold",
                                kernel.name
                            ),
                        });
                    }
                    values.extend_from_slice(&(v as u64).to_le_bytes());
                }
            }
            batch.push(e);
            if batch.len() == DISPATCHES_PER_PASS {
                let mut encoder = new_encoder();
                record(&mut encoder, &batch, &values);
                self.queue.submit([encoder.finish()]);
                batch.clear();
                values.clear();
            }
            Ok(())
        })?;
        let mut encoder = new_encoder();
        record(&mut encoder, &batch, &values);
        let shape = || {
            let grids: Vec<String> = l
                .single
                .iter()
                .map(|&s| {
                    if s {
                        "1x1".into()
                    } else {
                        format!("{groups}x{WORKGROUP_SIZE}")
                    }
                })
                .collect();
            format!("workgroups x invocations: {}", grids.join(", "))
        };
        if readback.is_empty() {
            // Nothing comes back and nothing can go wrong: the host goes on.
            let index = self.queue.submit([encoder.finish()]);
            if acc_core::observe::timing() {
                // `ACC_TIME`: from submission to the queue's report that it ran.
                let pending = QueuedTime {
                    submitted: std::time::Instant::now(),
                    done: Arc::new(Mutex::new(None)),
                    device: self.device.clone(),
                };
                let done = Arc::clone(&pending.done);
                self.queue.on_submitted_work_done(move || {
                    *done.lock().unwrap_or_else(|e| e.into_inner()) =
                        Some(std::time::Instant::now());
                });
                acc_core::observe::time::launch(
                    shape,
                    acc_core::observe::time::DeviceTime::Pending(
                        Box::new(pending),
                        acc_core::observe::time::Clock::WgpuQueue,
                    ),
                );
            }
            let number = self.queued_count.fetch_add(1, Ordering::Relaxed) + 1;
            let finished = Arc::clone(&self.finished);
            self.queue.on_submitted_work_done(move || {
                finished.fetch_max(number, Ordering::Relaxed);
            });
            self.queued
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(queue, (number, index));
            for t in temporaries {
                self.pool.give(t);
            }
            return Ok(Launched::default());
        }
        let staging: Vec<(usize, wgpu::Buffer)> = readback
            .iter()
            .map(|&(i, bytes)| {
                let size = (bytes as u64).next_multiple_of(4).max(4);
                let s = self.pool.take(&self.device, size, STAGING, "acc readback");
                encoder.copy_buffer_to_buffer(&buffers[i], 0, &s, 0, size);
                (i, s)
            })
            .collect();
        let submitted = acc_core::observe::timing().then(std::time::Instant::now);
        self.queue.submit([encoder.finish()]);
        for (_, s) in &staging {
            s.slice(..).map_async(wgpu::MapMode::Read, |_| {});
        }
        self.device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| Error::Unsupported {
                what: format!("wgpu device lost while running `{}`: {e}", kernel.name),
            })?;
        if let Some(t) = submitted {
            acc_core::observe::time::launch(
                shape,
                acc_core::observe::time::DeviceTime::Measured(
                    t.elapsed(),
                    acc_core::observe::time::Clock::WgpuQueue,
                ),
            );
        }
        for t in temporaries {
            self.pool.give(t);
        }

        let mut launched = Launched::default();
        let mut oob = None;
        for (i, s) in &staging {
            let data = s
                .slice(..)
                .get_mapped_range()
                .map_err(|e| Error::Unsupported {
                    what: format!("reading back the results of `{}`: {e}", kernel.name),
                })?
                .to_vec();
            s.unmap();
            self.pool.give(s.clone());
            match &l.bindings[*i] {
                Binding::Array(p) => {
                    let elem = match kernel.params[*p as usize].kind {
                        ParamKind::Array { elem, .. } => elem.scalar(),
                        ParamKind::Scalar(s) => Some(s),
                    };
                    if let Arg::Write(d) = &mut args[*p as usize] {
                        acc_core::observe::time::transfer(false, d.len(), Default::default());
                        match elem {
                            Some(t) if widened_in_buffers(t, target) => narrow(t, &data, d),
                            _ => d.copy_from_slice(&data[..d.len()]),
                        }
                    }
                }
                Binding::Status => {
                    let w = |k: usize| {
                        u32::from_le_bytes(data[4 * k..4 * k + 4].try_into().expect("4 bytes"))
                    };
                    match w(0) {
                        0 => {}
                        2 => {
                            return Err(Error::Unsupported {
                                what: format!(
                                    "the adapter {} ended a loop of `{}` early: Mesa's llvmpipe stops the loops of one invocation after 65,535 iterations in all, so this kernel cannot run correctly on it (it runs on GPUs and on the multicore device)",
                                    self.info.name, kernel.name
                                ),
                            })
                        }
                        3 => {
                            return Err(Error::Unsupported {
                                what: format!(
                                    "a loop of `{}` has more iterations than wgpu counts (2^32 - 1 in one invocation, 2^63 over the grid); it runs on the nvidia and multicore devices",
                                    kernel.name
                                ),
                            })
                        }
                        _ => oob = Some((w(1), (w(4) as u64) << 32 | w(2) as u64, w(3))),
                    }
                }
                Binding::Partials(r) => {
                    let slot = l.reductions[*r];
                    // A reduction into a region local was folded on the device.
                    if let Some(into) = slot.into {
                        launched.push_partials(
                            kernel,
                            into,
                            slot.op,
                            slot.ty,
                            slot.len as usize,
                            groups as usize,
                            &data,
                            partial_size(slot.ty, target),
                            target.index_bytes(),
                        );
                    }
                }
                Binding::Locals => {
                    launched.read_locals(&l.reductions, l.result, &data, target.index_bytes())
                }
                Binding::Params | Binding::HostValues => {}
            }
        }
        if let Some((p, index, len)) = oob {
            let name = kernel
                .params
                .get(p as usize)
                .map_or("?", |p| p.name.as_str());
            return Err(Error::IndexOutOfBounds {
                array: name.to_string(),
                index,
                len: len as u64,
            });
        }
        Ok(launched)
    }
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

    /// Waits until submission `index` (every submission for `None`) has run.
    fn wait_for(&self, index: Option<wgpu::SubmissionIndex>) -> Result<()> {
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

mod compile;
mod device;

use device::QueuedTime;
pub use device::WgpuBackend;
