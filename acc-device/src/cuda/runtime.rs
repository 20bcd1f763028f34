use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};


use cudarc::driver::{CudaContext, CudaFunction, CudaSlice, CudaStream, DevicePtr, LaunchConfig, PushKernelArg};

use acc_core::ir::launch::{KernelArg as Arg, KernelOutput as Launched, ScalarValue};
use acc_core::ir::{Kernel, ParamKind};
use acc_core::present::{BufferId, DeviceMemory, ElemLayout, Named, PresentTable};
use acc_core::{DeviceType, Error, Result};

use super::memory::{keep_pool_memory, Pinned, Staging};
use super::module_cache;
use crate::ptx::{lower, partial_size, Lowered, Target, BLOCK_SIZE, PRIVATE_ARRAY_BIT};

pub(crate) fn cuda_error(what: &str, e: impl std::fmt::Debug) -> Error {
    Error::Unsupported { what: format!("CUDA: {what}: {e:?}") }
}

fn no_device(reason: impl Into<String>) -> Error {
    Error::NoDevice { device_type: DeviceType::Nvidia, reason: reason.into() }
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

/// A kernel loaded on the device, with the scratch memory its launches reuse.
struct Loaded {
    /// The kernel it was lowered from (the cache is keyed by its address, this confirms it).
    kernel: Kernel,
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
}

/// What launches share, behind the device's launch lock.
struct Launching {
    /// Kernels loaded, by the address of their IR (each entry confirmed by comparing the IR).
    loaded: HashMap<usize, Vec<Arc<Mutex<Loaded>>>>,
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
        let ctx = CudaContext::new(num).map_err(|e| no_device(format!("GPU {num} could not start: {e:?}")))?;
        // One stream, synchronized by the runtime itself: no per-buffer events needed.
        // SAFETY: every use of a buffer is ordered on the one stream.
        unsafe { ctx.disable_event_tracking() };
        keep_pool_memory(&ctx);
        let (major, minor) = ctx.compute_capability().map_err(|e| cuda_error("compute capability", e))?;
        let sms = ctx.attribute(cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT).unwrap_or(16).max(1) as u32;
        let name = ctx.name().unwrap_or_else(|_| "NVIDIA GPU".into());
        let stream = ctx.default_stream();
        let status = Pinned::new(&ctx, 16)?;
        Ok(CudaDevice {
            number: num,
            name,
            target: Target { sm: (major * 10 + minor) as u32 },
            reduction_blocks: sms * (2048 / BLOCK_SIZE),
            stream,
            ctx,
            present: PresentTable::new(),
            buffers: Mutex::new(HashMap::new()),
            next_buffer: AtomicU64::new(1),
            launching: Mutex::new(Launching { loaded: HashMap::new(), status }),
            staging: Mutex::new(Staging::new()),
        })
    }

    fn load(&self, state: &mut Launching, kernel: &Kernel) -> Result<Arc<Mutex<Loaded>>> {
        let key = kernel as *const Kernel as usize;
        if let Some(found) = state.loaded.get(&key).and_then(|v| v.iter().find(|l| l.lock().unwrap_or_else(|e| e.into_inner()).kernel == *kernel)) {
            return Ok(Arc::clone(found));
        }
        let lowered = lower(kernel, self.target)?;
        acc_core::observe::dump("ptx", &kernel.name, || lowered.ptx.clone());
        let (module, cached) = module_cache::load(&self.ctx, &lowered.ptx, self.target.sm).map_err(|e| match e {
            Error::Unsupported { what } => Error::Unsupported { what: format!("{what} (kernel `{}`)", kernel.name) },
            other => other,
        })?;
        acc_core::observe::notify(|| format!("cuda module `{}`: {}", kernel.name, if cached { "loaded from the disk cache" } else { "compiled" }));
        let functions = lowered
            .entry_points
            .iter()
            .map(|e| module.load_function(e).map_err(|err| cuda_error("finding an entry point", err)))
            .collect::<Result<Vec<_>>>()?;
        let locals = if lowered.locals_size > 0 { Some(self.zeros(lowered.locals_size as usize)?) } else { None };
        let mut partials = Vec::new();
        for r in lowered.reductions.iter().filter(|r| r.entry.is_some()) {
            let bytes = self.reduction_blocks as usize * r.len as usize * partial_size(r.ty) as usize;
            partials.push(if r.into.is_some() { Partials::Host(Pinned::new(&self.ctx, bytes)?) } else { Partials::Device(self.zeros(bytes)?) });
        }
        let l = Arc::new(Mutex::new(Loaded { kernel: kernel.clone(), lowered, functions, locals, partials }));
        state.loaded.entry(key).or_default().push(Arc::clone(&l));
        Ok(l)
    }

    fn address(&self, slice: &CudaSlice<u8>) -> u64 {
        let (ptr, _sync) = slice.device_ptr(&self.stream);
        ptr
    }

    fn zeros(&self, bytes: usize) -> Result<CudaSlice<u8>> {
        self.stream.alloc_zeros::<u8>(bytes.max(16)).map_err(|_| Error::OutOfMemory { bytes })
    }

    /// The device address `offset` bytes into present buffer `buf`, checked to have `len` bytes.
    fn buffer_address(&self, buf: BufferId, offset: usize, len: usize) -> Result<u64> {
        let buffers = self.buffers.lock().unwrap_or_else(|e| e.into_inner());
        let b = buffers.get(&buf).ok_or_else(|| Error::Unsupported { what: "internal error: no such buffer".into() })?;
        if offset + len > b.len() {
            return Err(Error::Unsupported { what: "internal error: a transfer past the end of its buffer".into() });
        }
        Ok(self.address(b) + offset as u64)
    }

    /// Copies `host` into device memory at `dst`.
    fn copy_in(&self, dst: u64, host: &[u8]) -> Result<()> {
        if host.len() >= Staging::THRESHOLD {
            return self.staging.lock().unwrap_or_else(|e| e.into_inner()).copy_in(&self.stream, dst, host);
        }
        // SAFETY: `dst` has room for `host` (the caller's allocation); the copy of pageable
        // memory is finished when the call returns.
        let r = unsafe { cudarc::driver::sys::cuMemcpyHtoD_v2(dst, host.as_ptr().cast(), host.len()) };
        if r == cudarc::driver::sys::CUresult::CUDA_SUCCESS {
            Ok(())
        } else {
            Err(cuda_error("copying in", r))
        }
    }

    /// Copies device memory at `src` into `host`.
    fn copy_out(&self, src: u64, host: &mut [u8]) -> Result<()> {
        if host.len() >= Staging::THRESHOLD {
            return self.staging.lock().unwrap_or_else(|e| e.into_inner()).copy_out(&self.stream, src, host);
        }
        // SAFETY: `src` holds `host.len()` bytes; the stream's work was synchronized before.
        let r = unsafe { cudarc::driver::sys::cuMemcpyDtoH_v2(host.as_mut_ptr().cast(), src, host.len()) };
        if r == cudarc::driver::sys::CUresult::CUDA_SUCCESS {
            Ok(())
        } else {
            Err(cuda_error("copying out", r))
        }
    }

    /// Runs `kernel` with `args` (one per parameter, in order).
    pub fn launch(&self, kernel: &Kernel, args: &mut [Arg<'_>]) -> Result<Launched> {
        let mut state = self.launching.lock().unwrap_or_else(|e| e.into_inner());
        let state = &mut *state;
        if args.len() != kernel.params.len() {
            return Err(Error::Unsupported { what: format!("internal error: {} arguments for {} parameters", args.len(), kernel.params.len()) });
        }
        self.ctx.bind_to_thread().map_err(|e| cuda_error("binding the context", e))?;
        let loaded = self.load(state, kernel)?;
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
                    largest = largest.max(len);
                    let layout = ElemLayout::from(*elem);
                    let var = Named::unlocated(&param.name);
                    let ptr = match self.present.lookup(d.as_ptr() as usize, d.len(), layout, var)? {
                        Some(at) => {
                            let buffers = self.buffers.lock().unwrap_or_else(|e| e.into_inner());
                            let b = buffers.get(&at.buf).ok_or_else(|| Error::Unsupported { what: "internal error: a present buffer is gone".into() })?;
                            self.address(b) + (at.first * size) as u64
                        }
                        None => {
                            // SAFETY: filled by the copy below (or unused when empty).
                            let t = unsafe { self.stream.alloc::<u8>(d.len().max(16)) }.map_err(|_| Error::OutOfMemory { bytes: d.len() })?;
                            let ptr = self.address(&t);
                            if !d.is_empty() {
                                self.copy_in(ptr, d)?;
                            }
                            acc_core::observe::notify(|| format!("transfer `{}`: {} bytes to the device{}", param.name, d.len(), if matches!(args[p], Arg::Write(_)) { " and back" } else { "" }));
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
                _ => return Err(Error::Unsupported { what: format!("internal error: argument {p} does not match its parameter") }),
            }
        }
        // Each grid entry point's blocks: one thread per iteration of its loop where the
        // iteration count is known before the launch (else per element of the largest array),
        // or one block per iteration where the loop's body is a vector loop, up to as many
        // blocks as fill the GPU, each thread then striding over more iterations (and
        // reductions have few partials to combine). An entry point of one thread
        // gets the block count of the grid before it (a fold of its partials reads it).
        let cap = self.reduction_blocks as u64;
        let mut blocks = Vec::with_capacity(l.single.len());
        let (mut grid_loop, mut last) = (0, 1u32);
        for (e, &single) in l.single.iter().enumerate() {
            if !single {
                let iterations = acc_core::ir::eval::parallel_loop_iterations(kernel, grid_loop, args).unwrap_or(largest as u64).max(1);
                let wanted = if l.block_per_iteration[e] { iterations } else { iterations.div_ceil(BLOCK_SIZE as u64) };
                last = wanted.clamp(1, cap) as u32;
                grid_loop += 1;
            }
            blocks.push(last);
        }
        values.push(Value::U64(state.status.device_address()));
        values.push(Value::U64(loaded.locals.as_ref().map_or(0, |b| self.address(b))));
        let blocks_arg = values.len();
        values.push(Value::U32(1));
        for p in &loaded.partials {
            values.push(Value::U64(match p {
                Partials::Host(h) => h.device_address(),
                Partials::Device(d) => self.address(d),
            }));
        }
        if let Some(b) = &mut loaded.locals {
            self.stream.memset_zeros(b).map_err(|e| cuda_error("clearing the locals", e))?;
        }
        acc_core::observe::notify(|| format!("cuda kernel `{}`: {} entry point(s), blocks of {BLOCK_SIZE}: {blocks:?}", kernel.name, loaded.functions.len()));
        let one = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (1, 1, 1), shared_mem_bytes: 0 };
        for (e, (f, &single)) in loaded.functions.iter().zip(&l.single).enumerate() {
            values[blocks_arg] = Value::U32(blocks[e]);
            let grid = LaunchConfig { grid_dim: (blocks[e], 1, 1), block_dim: (BLOCK_SIZE, 1, 1), shared_mem_bytes: 0 };
            let mut b = self.stream.launch_builder(f);
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
            unsafe { b.launch(if single { one } else { grid }) }.map_err(|e| cuda_error(&format!("launching `{}`", kernel.name), e))?;
        }
        self.stream.synchronize().map_err(sync)?;

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
            let Some(Partials::Host(p)) = hosted.next() else { continue };
            let Some(into) = r.into else { continue };
            let groups = r.entry.map_or(1, |e| blocks[e]) as usize;
            launched.push_partials(kernel, into, r.op, r.ty, r.len as usize, groups, p.bytes(), partial_size(r.ty) as usize, 8);
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
                kernel.function.locals.get((what & !PRIVATE_ARRAY_BIT) as usize).map_or("?", |l| l.name.as_str())
            } else {
                kernel.params.get(what as usize).map_or("?", |p| p.name.as_str())
            };
            return Err(Error::Unsupported { what: format!("index out of bounds: the len is {len} but the index is {index} (array `{name}`)") });
        }
        Ok(launched)
    }
}

impl DeviceMemory for CudaDevice {
    fn alloc(&self, elem: ElemLayout, len: usize) -> Result<BufferId> {
        let bytes = len.checked_mul(elem.size).ok_or(Error::OutOfMemory { bytes: usize::MAX })?;
        let b = self.zeros(bytes)?;
        let id = self.next_buffer.fetch_add(1, Ordering::Relaxed);
        self.buffers.lock().unwrap_or_else(|e| e.into_inner()).insert(id, b);
        Ok(id)
    }

    fn upload(&self, buf: BufferId, elem: ElemLayout, first: usize, host: &[u8]) -> Result<()> {
        let at = self.buffer_address(buf, first * elem.size, host.len())?;
        self.ctx.bind_to_thread().map_err(|e| cuda_error("binding the context", e))?;
        self.copy_in(at, host)
    }

    fn download(&self, buf: BufferId, elem: ElemLayout, first: usize, host: &mut [u8]) -> Result<()> {
        let at = self.buffer_address(buf, first * elem.size, host.len())?;
        self.ctx.bind_to_thread().map_err(|e| cuda_error("binding the context", e))?;
        self.copy_out(at, host)
    }

    fn free(&self, buf: BufferId) {
        self.buffers.lock().unwrap_or_else(|e| e.into_inner()).remove(&buf);
    }
}

impl acc_core::Device for CudaDevice {
    fn device_type(&self) -> DeviceType {
        DeviceType::Nvidia
    }
    fn number(&self) -> usize {
        self.number
    }
    fn property(&self, p: acc_core::Property) -> String {
        use acc_core::Property;
        match p {
            Property::Name => self.name.clone(),
            Property::Vendor => "NVIDIA".into(),
            Property::Driver => format!("CUDA driver, sm_{}", self.target.sm),
            Property::SharedMemorySupport => "0".into(),
            Property::Memory | Property::FreeMemory => "0".into(),
        }
    }
    fn shares_host_memory(&self) -> bool {
        false
    }
    fn runs_kernels(&self) -> bool {
        true
    }
    fn launch_kernel(&self, kernel: &Kernel, args: &mut [Arg<'_>]) -> Result<Launched> {
        self.launch(kernel, args)
    }
    fn own_memory(&self) -> Option<acc_core::OwnMemory<'_>> {
        Some(acc_core::OwnMemory { table: &self.present, memory: self })
    }
    fn shutdown(&self) -> Result<()> {
        self.present.clear(self);
        Ok(())
    }
}

/// Provides the NVIDIA GPUs the CUDA driver sees.
#[derive(Default)]
pub struct CudaBackend {
    count: OnceLock<usize>,
    devices: acc_core::device::Opened<CudaDevice>,
}

impl acc_core::device::Backend for CudaBackend {
    fn device_type(&self) -> DeviceType {
        DeviceType::Nvidia
    }
    fn count(&self) -> usize {
        *self.count.get_or_init(|| if driver_present() { CudaContext::device_count().map_or(0, |n| n.max(0) as usize) } else { 0 })
    }
    fn open(&self, num: usize) -> Result<Arc<dyn acc_core::Device>> {
        self.devices.get_or_open(num, CudaDevice::open)
    }
    // Regions run on nvidia when asked for (`ACC_DEVICE_TYPE=nvidia`) until it runs every
    // region the other devices run.
    fn is_default_candidate(&self) -> bool {
        false
    }
    fn absent_reason(&self) -> String {
        if driver_present() {
            "the CUDA driver found no GPU".into()
        } else {
            "no NVIDIA driver (libcuda) was found".into()
        }
    }
    fn shutdown(&self) -> Result<()> {
        self.devices.clear();
        Ok(())
    }
}

#[cfg(test)]
mod tests;
