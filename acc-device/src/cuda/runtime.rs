use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{
    CudaContext, CudaFunction, CudaSlice, CudaStream, DevicePtr, LaunchConfig, PushKernelArg,
};

use acc_core::ir::launch::{KernelArg as Arg, KernelOutput as Launched, ScalarValue};
use acc_core::ir::{Kernel, ParamKind};
use acc_core::present::{BufferId, DeviceMemory, ElemLayout, Named, PresentTable};
use acc_core::queue::Queue;
use acc_core::{DeviceType, Error, Result};

use super::memory::{keep_pool_memory, Pinned, Staging};
use super::module_cache;
use crate::ptx::{lower_with, partial_size, Lowered, Target, BLOCK_SIZE, PRIVATE_ARRAY_BIT};

pub(crate) fn cuda_error(what: &str, e: impl std::fmt::Debug) -> Error {
    Error::Unsupported {
        what: format!("CUDA: {what}: {e:?}"),
    }
}

fn no_device(reason: impl Into<String>) -> Error {
    Error::NoDevice {
        device_type: DeviceType::Nvidia,
        reason: reason.into(),
    }
}

/// Whether the CUDA driver library can be loaded (never panics, unlike a call into it).
fn driver_present() -> bool {
    // SAFETY: only tries to load the library.
    unsafe { cudarc::driver::sys::is_culib_present() }
}

/// Where a reduction's per-block partials go: host memory the kernel writes directly when the
/// host folds them, device memory when a fold entry point reads them on the device.
enum Partials {
    Host(Pinned),
    Device(CudaSlice<u8>),
}

/// The variants of one kernel loaded on the device, and what the bounds proof found for its
/// last launch's arguments.
struct Family {
    /// The IR the variants were lowered from (the map is keyed by its address; this confirms
    /// it, once per launch).
    kernel: Kernel,
    /// The last launch's argument signature (array lengths, scalar values) and its proof: a
    /// region launched again with the same sizes (a time step) is not proven again.
    proof: Option<(Vec<u64>, acc_core::ir::bounds::Proof)>,
    variants: Vec<Arc<Mutex<Loaded>>>,
}

/// What the bounds proof of a launch depends on: each array argument's length in bytes and
/// each scalar's value.
fn proof_signature(args: &[Arg<'_>]) -> Vec<u64> {
    args.iter()
        .map(|a| match a {
            Arg::Read(d) => d.len() as u64,
            Arg::Write(d) => d.len() as u64,
            Arg::Scalar(v) => match *v {
                ScalarValue::Bool(b) => b as u64,
                ScalarValue::I32(x) => x as u32 as u64,
                ScalarValue::U32(x) => x as u64,
                ScalarValue::I64(x) | ScalarValue::ISize(x) => x as u64,
                ScalarValue::U64(x) | ScalarValue::USize(x) => x,
                ScalarValue::F32(x) => x.to_bits() as u64,
                ScalarValue::F64(x) => x.to_bits(),
            },
        })
        .collect()
}

/// A kernel loaded on the device, with the scratch memory its launches reuse.
struct Loaded {
    /// Lowered without bounds checks, for launches whose accesses are proven in bounds on the
    /// host (`acc_core::ir::bounds`): each kernel has a checked and a proven variant.
    proven: bool,
    /// Proven, and its `usize` arithmetic in 32 bits, for launches whose arguments keep
    /// those values within 32 bits (`acc_core::ir::narrow`): a third variant.
    narrow: bool,
    /// Which parameters the kernel touches (`Kernel::accessed_params`): an array it does not
    /// (a `private` copy's original) is not transferred.
    accessed: Vec<bool>,
    lowered: Lowered,
    functions: Vec<CudaFunction>,
    locals: Option<CudaSlice<u8>>,
    partials: Vec<Partials>,
}

/// One NVIDIA GPU, opened.
pub struct CudaDevice {
    number: usize,
    name: String,
    target: Target,
    /// Most blocks a launch uses: as many as every multiprocessor holds at once; each thread
    /// then strides over several iterations (unrolled by four where the body is straight
    /// code, so that its loads are in flight together), and reductions have few partials.
    reduction_blocks: u32,
    /// Most blocks of a launch without reductions: 32 per multiprocessor (four times what it
    /// holds at once), unless `ACC_CUDA_BLOCKS_PER_SM` (a tuning knob, read when the device
    /// opens) says otherwise.
    grid_blocks: u32,
    stream: Arc<CudaStream>,
    ctx: Arc<CudaContext>,
    present: PresentTable,
    buffers: Mutex<HashMap<BufferId, CudaSlice<u8>>>,
    next_buffer: AtomicU64,
    /// One launch at a time (each is synchronous on the device's stream), with what it uses.
    launching: Mutex<Launching>,
    /// The staging buffers of transfers: a lock of its own, taken last (the present table
    /// transfers while holding its own lock, and a launch looks data up in the table).
    staging: Mutex<Staging>,
    /// Whether the stream may still run a launch that returned without waiting for it (see
    /// `launch`): what reads or writes device memory from the host, or frees it, waits first.
    pending: std::sync::atomic::AtomicBool,
    /// A stream per async queue (3.3 section 2.16), made when a launch first uses the queue.
    queues: Mutex<HashMap<u32, Arc<CudaStream>>>,
    /// For an async queue whose last launch ran deferred on the device's stream (one keeping
    /// region locals): an event after it, which `async_test` asks instead of the whole
    /// stream (other threads' work on it says nothing about the queue).
    queue_marks: Mutex<HashMap<u32, cudarc::driver::CudaEvent>>,
    /// Whether a queue's stream may still run something.
    queues_pending: std::sync::atomic::AtomicBool,
    /// Timing events `ACC_TIME` has read, for reuse (creating events costs microseconds).
    events: Arc<Mutex<Vec<cudarc::driver::CudaEvent>>>,
}

/// What launches share, behind the device's launch lock.
struct Launching {
    /// Kernels loaded, by the address of their IR (each family confirmed by comparing the IR).
    loaded: HashMap<usize, Vec<Family>>,
    /// The bounds-check status words, which kernels write into host memory.
    status: Pinned,
}

/// A kernel argument's value, as the PTX entry points take it.
enum Value {
    U64(u64),
    I64(i64),
    U32(u32),
    I32(i32),
    F32(f32),
    F64(f64),
}

impl CudaDevice {
    /// Opens GPU `num`.
    pub fn open(num: usize) -> Result<CudaDevice> {
        if !driver_present() {
            return Err(no_device("no NVIDIA driver (libcuda) was found"));
        }
        let ctx = CudaContext::new(num)
            .map_err(|e| no_device(format!("GPU {num} could not start: {e:?}")))?;
        // One stream, synchronized by the runtime itself: no per-buffer events needed.
        // SAFETY: every use of a buffer is ordered on the one stream.
        unsafe { ctx.disable_event_tracking() };
        keep_pool_memory(&ctx);
        let (major, minor) = ctx
            .compute_capability()
            .map_err(|e| cuda_error("compute capability", e))?;
        let sms = ctx
            .attribute(
                cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
            )
            .unwrap_or(16)
            .max(1) as u32;
        let name = ctx.name().unwrap_or_else(|_| "NVIDIA GPU".into());
        let stream = ctx.default_stream();
        let status = Pinned::new(&ctx, 16)?;
        Ok(CudaDevice {
            number: num,
            name,
            target: Target {
                sm: (major * 10 + minor) as u32,
            },
            reduction_blocks: sms * (2048 / BLOCK_SIZE),
            grid_blocks: sms
                * std::env::var("ACC_CUDA_BLOCKS_PER_SM")
                    .ok()
                    .and_then(|v| v.parse::<u32>().ok())
                    .filter(|&b| (1..=1024).contains(&b))
                    .unwrap_or(32),
            stream,
            ctx,
            present: PresentTable::new(),
            buffers: Mutex::new(HashMap::new()),
            next_buffer: AtomicU64::new(1),
            launching: Mutex::new(Launching {
                loaded: HashMap::new(),
                status,
            }),
            staging: Mutex::new(Staging::new()),
            pending: std::sync::atomic::AtomicBool::new(false),
            queues: Mutex::new(HashMap::new()),
            queues_pending: std::sync::atomic::AtomicBool::new(false),
            events: Arc::new(Mutex::new(Vec::new())),
            queue_marks: Mutex::new(HashMap::new()),
        })
    }

    /// Waits for launches that returned before the GPU ran them, if any: on the device's
    /// stream and on every queue's.
    fn settle(&self) -> Result<()> {
        self.settle_main()?;
        if self.queues_pending.swap(false, Ordering::AcqRel) {
            for s in self.queue_streams() {
                s.synchronize()
                    .map_err(|e| cuda_error("waiting for an async queue", e))?;
            }
        }
        Ok(())
    }

    /// Waits for launches on the device's own stream that returned before the GPU ran them.
    fn settle_main(&self) -> Result<()> {
        if self.pending.swap(false, Ordering::AcqRel) {
            self.stream
                .synchronize()
                .map_err(|e| cuda_error("waiting for earlier kernels", e))?;
        }
        Ok(())
    }

    /// The stream of async queue `n`, made the first time.
    fn queue_stream(&self, n: u32) -> Result<Arc<CudaStream>> {
        let mut queues = self.queues.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(s) = queues.get(&n) {
            return Ok(Arc::clone(s));
        }
        let s = self
            .ctx
            .new_stream()
            .map_err(|e| cuda_error("making a stream for an async queue", e))?;
        queues.insert(n, Arc::clone(&s));
        Ok(s)
    }

    /// The streams of the queues used so far.
    fn queue_streams(&self) -> Vec<Arc<CudaStream>> {
        self.queues
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .cloned()
            .collect()
    }

    /// Makes `stream` wait for what the queues in `waits` (every queue for `None`) were given
    /// so far, with events: the host does not wait.
    fn join_queues(&self, stream: &CudaStream, waits: Option<&[Queue]>) -> Result<()> {
        let others: Vec<Arc<CudaStream>> = match waits {
            None => self.queue_streams(),
            Some(w) => {
                let queues = self.queues.lock().unwrap_or_else(|e| e.into_inner());
                w.iter()
                    .filter_map(|q| {
                        if let Queue::Async(n) = q {
                            queues.get(n).cloned()
                        } else {
                            None
                        }
                    })
                    .collect()
            }
        };
        for o in others
            .iter()
            .filter(|o| o.cu_stream() != stream.cu_stream())
        {
            stream
                .join(o)
                .map_err(|e| cuda_error("ordering an async queue after another", e))?;
        }
        Ok(())
    }

    /// The family of `kernel` (created empty on its first launch): its index in the list at
    /// the kernel's address.
    fn family(state: &mut Launching, kernel: &Kernel) -> usize {
        let key = kernel as *const Kernel as usize;
        let families = state.loaded.entry(key).or_default();
        match families.iter().position(|f| f.kernel == *kernel) {
            Some(i) => i,
            None => {
                families.push(Family {
                    kernel: kernel.clone(),
                    proof: None,
                    variants: Vec::new(),
                });
                families.len() - 1
            }
        }
    }

    fn load(
        &self,
        state: &mut Launching,
        (kernel, family): (&Kernel, usize),
        (proven, narrow): (bool, bool),
    ) -> Result<Arc<Mutex<Loaded>>> {
        let key = kernel as *const Kernel as usize;
        let found = state.loaded.get(&key).and_then(|v| {
            v[family].variants.iter().find(|l| {
                let l = l.lock().unwrap_or_else(|e| e.into_inner());
                l.proven == proven && l.narrow == narrow
            })
        });
        if let Some(found) = found {
            return Ok(Arc::clone(found));
        }
        let lowered = if proven {
            lower_with(
                &Kernel {
                    unchecked: true,
                    ..kernel.clone()
                },
                self.target,
                narrow,
            )?
        } else {
            lower_with(kernel, self.target, false)?
        };
        acc_core::observe::dump("ptx", &kernel.name, || lowered.ptx.clone());
        let (module, cached) = module_cache::load(&self.ctx, &lowered.ptx, self.target.sm)
            .map_err(|e| match e {
                Error::Unsupported { what } => Error::Unsupported {
                    what: format!("{what} (kernel `{}`)", kernel.name),
                },
                other => other,
            })?;
        acc_core::observe::notify(acc_core::observe::Notify::Launch, || {
            format!(
                "cuda module `{}`: {}",
                kernel.name,
                if cached {
                    "loaded from the disk cache"
                } else {
                    "compiled"
                }
            )
        });
        let functions = lowered
            .entry_points
            .iter()
            .map(|e| {
                module
                    .load_function(e)
                    .map_err(|err| cuda_error("finding an entry point", err))
            })
            .collect::<Result<Vec<_>>>()?;
        let locals = if lowered.locals_size > 0 {
            Some(self.zeros(lowered.locals_size as usize)?)
        } else {
            None
        };
        let mut partials = Vec::new();
        for r in lowered.reductions.iter().filter(|r| r.entry.is_some()) {
            let bytes =
                self.reduction_blocks as usize * r.len as usize * partial_size(r.ty) as usize;
            partials.push(if r.into.is_some() {
                Partials::Host(Pinned::new(&self.ctx, bytes)?)
            } else {
                Partials::Device(self.zeros(bytes)?)
            });
        }
        let l = Arc::new(Mutex::new(Loaded {
            proven,
            narrow,
            accessed: kernel.accessed_params(),
            lowered,
            functions,
            locals,
            partials,
        }));
        if let Some(f) = state.loaded.get_mut(&key).and_then(|v| v.get_mut(family)) {
            f.variants.push(Arc::clone(&l));
        }
        Ok(l)
    }

    fn address(&self, slice: &CudaSlice<u8>) -> u64 {
        let (ptr, _sync) = slice.device_ptr(&self.stream);
        ptr
    }

    fn zeros(&self, bytes: usize) -> Result<CudaSlice<u8>> {
        self.stream
            .alloc_zeros::<u8>(bytes.max(16))
            .map_err(|_| Error::OutOfMemory { bytes })
    }

    /// The device address `offset` bytes into present buffer `buf`, checked to have `len` bytes.
    fn buffer_address(&self, buf: BufferId, offset: usize, len: usize) -> Result<u64> {
        let buffers = self.buffers.lock().unwrap_or_else(|e| e.into_inner());
        let b = buffers.get(&buf).ok_or_else(|| Error::Unsupported {
            what: "internal error: no such buffer".into(),
        })?;
        if offset + len > b.len() {
            return Err(Error::Unsupported {
                what: "internal error: a transfer past the end of its buffer".into(),
            });
        }
        Ok(self.address(b) + offset as u64)
    }

    /// Copies `host` into device memory at `dst` (timed for `ACC_TIME`).
    fn copy_in(&self, dst: u64, host: &[u8]) -> Result<()> {
        let start = acc_core::observe::timing().then(std::time::Instant::now);
        let r = self.copy_in_untimed(dst, host);
        if let Some(t) = start {
            acc_core::observe::time::transfer(true, host.len(), t.elapsed());
        }
        r
    }

    fn copy_in_untimed(&self, dst: u64, host: &[u8]) -> Result<()> {
        self.settle()?;
        if host.len() >= Staging::THRESHOLD {
            return self
                .staging
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .copy_in(&self.stream, dst, host);
        }
        // SAFETY: `dst` has room for `host` (the caller's allocation); the copy of pageable
        // memory is finished when the call returns.
        let r =
            unsafe { cudarc::driver::sys::cuMemcpyHtoD_v2(dst, host.as_ptr().cast(), host.len()) };
        if r == cudarc::driver::sys::CUresult::CUDA_SUCCESS {
            Ok(())
        } else {
            Err(cuda_error("copying in", r))
        }
    }

    /// Copies device memory at `src` into `host` (timed for `ACC_TIME`).
    fn copy_out(&self, src: u64, host: &mut [u8]) -> Result<()> {
        let start = acc_core::observe::timing().then(std::time::Instant::now);
        let r = self.copy_out_untimed(src, host);
        if let Some(t) = start {
            acc_core::observe::time::transfer(false, host.len(), t.elapsed());
        }
        r
    }

    fn copy_out_untimed(&self, src: u64, host: &mut [u8]) -> Result<()> {
        self.settle()?;
        if host.len() >= Staging::THRESHOLD {
            return self
                .staging
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .copy_out(&self.stream, src, host);
        }
        // SAFETY: `src` holds `host.len()` bytes; the stream's work was synchronized before.
        let r = unsafe {
            cudarc::driver::sys::cuMemcpyDtoH_v2(host.as_mut_ptr().cast(), src, host.len())
        };
        if r == cudarc::driver::sys::CUresult::CUDA_SUCCESS {
            Ok(())
        } else {
            Err(cuda_error("copying out", r))
        }
    }

    /// A timing event recorded on `stream` (from the pool of read ones where it has one).
    fn timing_event(&self, stream: &CudaStream) -> Option<cudarc::driver::CudaEvent> {
        let reused = self.events.lock().unwrap_or_else(|e| e.into_inner()).pop();
        let event = match reused {
            Some(e) => e,
            None => self
                .ctx
                .new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
                .ok()?,
        };
        event.record(stream).ok()?;
        Some(event)
    }

    /// Runs `kernel` with `args` (one per parameter, in order).
    pub fn launch(&self, kernel: &Kernel, args: &mut [Arg<'_>]) -> Result<Launched> {
        self.launch_on(kernel, args, Queue::Sync, Some(&[]))
    }

    /// Runs `kernel` on `queue` after the queues in `waits` (every queue for `None`). A launch
    /// on an async queue that brings nothing back (see the end of this function) runs on the
    /// queue's stream, after what the device's stream was given before it and after `waits`,
    /// ordered by events; the host goes on. Other launches run on the device's stream, after
    /// their queue and `waits`, and the host waits for them.
    pub fn launch_on(
        &self,
        kernel: &Kernel,
        args: &mut [Arg<'_>],
        queue: Queue,
        waits: Option<&[Queue]>,
    ) -> Result<Launched> {
        let mut state = self.launching.lock().unwrap_or_else(|e| e.into_inner());
        let state = &mut *state;
        if args.len() != kernel.params.len() {
            return Err(Error::Unsupported {
                what: format!(
                    "internal error: {} arguments for {} parameters",
                    args.len(),
                    kernel.params.len()
                ),
            });
        }
        self.ctx
            .bind_to_thread()
            .map_err(|e| cuda_error("binding the context", e))?;
        // Accesses proven in bounds for these arguments need no checks in the kernel, and
        // nothing to read back for them (see below).
        // Proven launches whose index values fit 32 bits run them in 32-bit arithmetic
        // (ACC_NARROW=0 keeps 64 bits, to compare).
        let family = Self::family(state, kernel);
        let signature = proof_signature(args);
        let memo = state
            .loaded
            .get(&(kernel as *const Kernel as usize))
            .and_then(|v| v[family].proof.as_ref())
            .filter(|(s, _)| *s == signature)
            .map(|(_, p)| *p);
        let proof = match memo {
            Some(p) => p,
            None => {
                let p = acc_core::ir::narrow::prove_launch(kernel, args, true);
                if let Some(f) = state
                    .loaded
                    .get_mut(&(kernel as *const Kernel as usize))
                    .and_then(|v| v.get_mut(family))
                {
                    f.proof = Some((signature, p));
                }
                p
            }
        };
        let in_bounds = proof.in_bounds;
        let proven = in_bounds && !kernel.unchecked;
        let narrow = proven && proof.fits_32;
        let loaded = self.load(state, (kernel, family), (proven, narrow))?;
        let mut loaded = loaded.lock().unwrap_or_else(|e| e.into_inner());
        let loaded = &mut *loaded;
        let l = &loaded.lowered;
        let sync = |e| cuda_error("running a kernel", e);
        let mut values = Vec::with_capacity(2 * kernel.params.len() + 4);
        let mut temporaries: Vec<(usize, CudaSlice<u8>)> = Vec::new();
        let mut largest = 1usize;
        for (p, param) in kernel.params.iter().enumerate() {
            match (&args[p], &param.kind) {
                (Arg::Read(_) | Arg::Write(_), ParamKind::Array { elem, .. }) => {
                    let d: &[u8] = match &args[p] {
                        Arg::Read(d) => d,
                        Arg::Write(d) => d,
                        Arg::Scalar(_) => &[],
                    };
                    let size = elem.size() as usize;
                    let len = d.len() / size;
                    if !loaded.accessed.get(p).copied().unwrap_or(true) {
                        // Nothing of it is read or written there: it stays on the host.
                        values.push(Value::U64(0));
                        values.push(Value::U64(len as u64));
                        continue;
                    }
                    largest = largest.max(len);
                    let layout = ElemLayout::from(*elem);
                    let var = Named::unlocated(&param.name);
                    let ptr =
                        match self
                            .present
                            .lookup(d.as_ptr() as usize, d.len(), layout, var)?
                        {
                            Some(at) => {
                                let buffers =
                                    self.buffers.lock().unwrap_or_else(|e| e.into_inner());
                                let b = buffers.get(&at.buf).ok_or_else(|| Error::Unsupported {
                                    what: "internal error: a present buffer is gone".into(),
                                })?;
                                self.address(b) + (at.first * size) as u64
                            }
                            None => {
                                // SAFETY: filled by the copy below (or unused when empty).
                                let t = unsafe { self.stream.alloc::<u8>(d.len().max(16)) }
                                    .map_err(|_| Error::OutOfMemory { bytes: d.len() })?;
                                let ptr = self.address(&t);
                                if !d.is_empty() {
                                    self.copy_in(ptr, d)?;
                                }
                                acc_core::observe::notify(
                                    acc_core::observe::Notify::Transfer,
                                    || {
                                        format!(
                                            "transfer `{}`: {} bytes to the device{}",
                                            param.name,
                                            d.len(),
                                            if matches!(args[p], Arg::Write(_)) {
                                                " and back"
                                            } else {
                                                ""
                                            }
                                        )
                                    },
                                );
                                temporaries.push((p, t));
                                ptr
                            }
                        };
                    values.push(Value::U64(ptr));
                    values.push(Value::U64(len as u64));
                }
                (Arg::Scalar(v), ParamKind::Scalar(_)) => values.push(match v {
                    ScalarValue::Bool(b) => Value::U32(*b as u32),
                    ScalarValue::I32(x) => Value::I32(*x),
                    ScalarValue::U32(x) => Value::U32(*x),
                    ScalarValue::I64(x) | ScalarValue::ISize(x) => Value::I64(*x),
                    ScalarValue::U64(x) | ScalarValue::USize(x) => Value::U64(*x),
                    ScalarValue::F32(x) => Value::F32(*x),
                    ScalarValue::F64(x) => Value::F64(*x),
                }),
                _ => {
                    return Err(Error::Unsupported {
                        what: format!("internal error: argument {p} does not match its parameter"),
                    })
                }
            }
        }
        // Each grid entry point's blocks: one thread per iteration of its loop where the
        // iteration count is known before the launch (else per element of the largest array),
        // or one block per iteration where the loop's body is a vector loop, up to as many
        // blocks as fill the GPU, each thread then striding over more iterations (and
        // reductions have few partials to combine). An entry point of one thread
        // gets the block count of the grid before it (a fold of its partials reads it).
        // Reductions keep to the blocks their partial buffers hold; other grids to
        // `grid_blocks`. Measured on the H200 (STREAM copy / triad against CUDA): a thread per
        // iteration 0.85x / 0.83x; blocks per SM 4: 1.04x / 0.96x, 8 (one wave): 1.00x /
        // 0.93x, 16: 1.03x / 0.95x, 32: 1.03x / 0.96x (and the best Jacobi copy).
        let cap = if l.reductions.is_empty() {
            self.grid_blocks as u64
        } else {
            self.reduction_blocks as u64
        };
        // What each entry point got at its last launch (a fold of partials reads the count of
        // the grid before it; the host reads a reduction's partials by it).
        let mut blocks = vec![1u32; l.single.len()];
        let blocks_for = |e: usize, iterations: Option<u64>| -> u32 {
            let iterations = iterations.unwrap_or(largest as u64).max(1);
            let wanted = if l.block_per_iteration[e] {
                iterations.div_ceil(l.gangs_per_block[e].max(1) as u64)
            } else {
                iterations.div_ceil(BLOCK_SIZE as u64)
            };
            wanted.clamp(1, cap) as u32
        };
        values.push(Value::U64(state.status.device_address()));
        values.push(Value::U64(
            loaded.locals.as_ref().map_or(0, |b| self.address(b)),
        ));
        let blocks_arg = values.len();
        values.push(Value::U32(1));
        for p in &loaded.partials {
            values.push(Value::U64(match p {
                Partials::Host(h) => h.device_address(),
                Partials::Device(d) => self.address(d),
            }));
        }
        // The host loops' variables, set at each launch.
        let host_values_arg = values.len();
        values.extend((0..l.program.host_vars()).map(|_| Value::U64(0)));
        if let Some(b) = &mut loaded.locals {
            self.stream
                .memset_zeros(b)
                .map_err(|e| cuda_error("clearing the locals", e))?;
        }
        // A launch that brings nothing back to the host (no reduction, no value, every array
        // present) and whose every access is proven in bounds for these arguments (so its
        // status stays clear) returns without waiting for the GPU: the stream runs it before
        // anything later on it, and every transfer, free and wait of this device settles the
        // streams first, so no host code can observe the difference (it still completes
        // "before" whatever reads its results, as 3.3 section 2.16 asks of a synchronous
        // construct). On an async queue it runs on the queue's stream (unless it keeps region
        // locals in the kernel's one buffer, which launches on two streams would share).
        let deferred =
            temporaries.is_empty() && l.reductions.is_empty() && l.result.is_none() && in_bounds;
        let queue_stream = match queue {
            Queue::Async(n) if deferred && loaded.locals.is_none() => Some(self.queue_stream(n)?),
            _ => None,
        };
        let stream: &Arc<CudaStream> = match &queue_stream {
            Some(q) => {
                q.join(&self.stream).map_err(|e| {
                    cuda_error("ordering an async queue after the device's stream", e)
                })?;
                self.join_queues(q, waits)?;
                q
            }
            None => {
                if let Queue::Async(n) = queue {
                    let own = [Queue::Async(n)];
                    self.join_queues(&self.stream, Some(&own))?;
                    self.join_queues(&self.stream, waits)?;
                }
                &self.stream
            }
        };
        let one = LaunchConfig {
            grid_dim: (1, 1, 1),
            block_dim: (1, 1, 1),
            shared_mem_bytes: 0,
        };
        // `ACC_TIME`: events around the kernels on their stream, read when the table is made.
        let timed = acc_core::observe::timing()
            .then(|| self.timing_event(stream))
            .flatten();
        // The entry points in the order the kernel's program gives (host loops repeat some),
        // each grid sized for its loop's iterations at that launch.
        let mut last = 1u32;
        l.program.run(args, &mut |e, iterations, host| {
            for (n, &v) in host.iter().enumerate() {
                values[host_values_arg + n] = Value::U64(v as u64);
            }
            let (Some(f), Some(&single)) = (loaded.functions.get(e), l.single.get(e)) else {
                return Err(Error::Unsupported {
                    what: format!("internal error: `{}` has no entry point {e}", kernel.name),
                });
            };
            if !single {
                last = blocks_for(e, iterations);
            }
            blocks[e] = last;
            values[blocks_arg] = Value::U32(last);
            let grid = LaunchConfig {
                grid_dim: (last, 1, 1),
                block_dim: (BLOCK_SIZE, 1, 1),
                shared_mem_bytes: 0,
            };
            let mut b = stream.launch_builder(f);
            for v in &values {
                match v {
                    Value::U64(x) => b.arg(x),
                    Value::I64(x) => b.arg(x),
                    Value::U32(x) => b.arg(x),
                    Value::I32(x) => b.arg(x),
                    Value::F32(x) => b.arg(x),
                    Value::F64(x) => b.arg(x),
                };
            }
            // SAFETY: the arguments are the entry point's parameters, in order and of their
            // types (`ptx::Lowered` documents the list); the memory they point to lives until
            // the stream is synchronized below.
            unsafe { b.launch(if single { one } else { grid }) }
                .map(|_| ())
                .map_err(|e| cuda_error(&format!("launching `{}`", kernel.name), e))
        })?;
        acc_core::observe::notify(acc_core::observe::Notify::Launch, || {
            format!(
                "cuda kernel `{}`: {} entry point(s), blocks of {BLOCK_SIZE}: {blocks:?}",
                kernel.name,
                loaded.functions.len()
            )
        });
        if let Some(start) = timed {
            if let Some(end) = self.timing_event(stream) {
                acc_core::observe::time::launch(
                    || launch_shape(&blocks, &l.single),
                    acc_core::observe::time::DeviceTime::Pending(
                        Box::new(EventPair {
                            start: Some(start),
                            end: Some(end),
                            pool: Arc::clone(&self.events),
                        }),
                        acc_core::observe::time::Clock::CudaEvents,
                    ),
                );
            }
        }
        if queue_stream.is_some() {
            self.queues_pending.store(true, Ordering::Release);
            return Ok(Launched::default());
        }
        if deferred {
            self.pending.store(true, Ordering::Release);
            if let Queue::Async(n) = queue {
                if let Ok(mark) = self.stream.record_event(None) {
                    self.queue_marks
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .insert(n, mark);
                }
            }
            return Ok(Launched::default());
        }
        self.stream.synchronize().map_err(sync)?;
        self.pending.store(false, Ordering::Release);

        for (p, t) in &temporaries {
            if let Arg::Write(d) = &mut args[*p] {
                if !d.is_empty() {
                    self.copy_out(self.address(t), d)?;
                }
            }
        }
        let mut launched = Launched::default();
        let mut hosted = loaded.partials.iter();
        for r in l.reductions.iter().filter(|r| r.entry.is_some()) {
            let Some(Partials::Host(p)) = hosted.next() else {
                continue;
            };
            let Some(into) = r.into else { continue };
            let groups = r.entry.map_or(1, |e| blocks[e]) as usize;
            launched.push_partials(
                kernel,
                into,
                r.op,
                r.ty,
                r.len as usize,
                groups,
                p.bytes(),
                partial_size(r.ty) as usize,
                8,
            );
        }
        if l.result.is_some() || l.reductions.iter().any(|r| r.entry.is_none()) {
            let mut data = vec![0u8; l.locals_size as usize];
            if let Some(b) = &loaded.locals {
                self.copy_out(self.address(b), &mut data)?;
            }
            launched.read_locals(&l.reductions, l.result, &data, 8);
        }
        let words = state.status.bytes();
        let w = |k: usize| u32::from_le_bytes(words[4 * k..4 * k + 4].try_into().expect("4 bytes"));
        if w(0) != 0 {
            let (what, index, len) = (w(1), w(2), w(3));
            state.status.clear(16);
            let name = if what & PRIVATE_ARRAY_BIT != 0 {
                kernel
                    .function
                    .locals
                    .get((what & !PRIVATE_ARRAY_BIT) as usize)
                    .map_or("?", |l| l.name.as_str())
            } else {
                kernel
                    .params
                    .get(what as usize)
                    .map_or("?", |p| p.name.as_str())
            };
            return Err(Error::IndexOutOfBounds {
                array: name.to_string(),
                index: index as u64,
                len: len as u64,
            });
        }
        Ok(launched)
    }
}

impl DeviceMemory for CudaDevice {
    fn alloc(&self, elem: ElemLayout, len: usize) -> Result<BufferId> {
        let bytes = len
            .checked_mul(elem.size)
            .ok_or(Error::OutOfMemory { bytes: usize::MAX })?;
        let b = self.zeros(bytes)?;
        let id = self.next_buffer.fetch_add(1, Ordering::Relaxed);
        self.buffers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id, b);
        Ok(id)
    }

    fn upload(&self, buf: BufferId, elem: ElemLayout, first: usize, host: &[u8]) -> Result<()> {
        let at = self.buffer_address(buf, first * elem.size, host.len())?;
        self.ctx
            .bind_to_thread()
            .map_err(|e| cuda_error("binding the context", e))?;
        self.copy_in(at, host)
    }

    fn download(
        &self,
        buf: BufferId,
        elem: ElemLayout,
        first: usize,
        host: &mut [u8],
    ) -> Result<()> {
        let at = self.buffer_address(buf, first * elem.size, host.len())?;
        self.ctx
            .bind_to_thread()
            .map_err(|e| cuda_error("binding the context", e))?;
        self.copy_out(at, host)
    }

    fn free(&self, buf: BufferId) {
        // A kernel still running may use the buffer (frees are stream-ordered too; waiting
        // keeps that from depending on how the driver frees).
        if let Err(e) = self.settle() {
            acc_core::observe::notify(acc_core::observe::Notify::Alloc, || format!("cuda: {e}"));
        }
        self.buffers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&buf);
    }
}

mod device;
mod timing;

pub use device::CudaBackend;
use timing::{launch_shape, EventPair};

#[cfg(all(test, feature = "gpu-tests"))]
mod tests;
