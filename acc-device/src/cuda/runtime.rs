use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use cudarc::driver::{CudaContext, CudaFunction, CudaSlice, CudaStream, DevicePtr, LaunchConfig, PushKernelArg};
use cudarc::nvrtc::Ptx;

use acc_core::ir::launch::{KernelArg as Arg, KernelOutput as Launched, ScalarValue};
use acc_core::ir::{Kernel, ParamKind};
use acc_core::present::{BufferId, DeviceMemory, ElemLayout, Named, PresentTable};
use acc_core::{DeviceType, Error, Result};

use crate::ptx::{lower, Lowered, Target, BLOCK_SIZE};

fn cuda_error(what: &str, e: impl std::fmt::Debug) -> Error {
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

/// A kernel loaded on the device.
struct Loaded {
    lowered: Lowered,
    functions: Vec<CudaFunction>,
}

/// One NVIDIA GPU, opened.
pub struct CudaDevice {
    number: usize,
    name: String,
    target: Target,
    stream: Arc<CudaStream>,
    _ctx: Arc<CudaContext>,
    loaded: Mutex<HashMap<String, Arc<Loaded>>>,
    present: PresentTable,
    buffers: Mutex<HashMap<BufferId, CudaSlice<u8>>>,
    next_buffer: AtomicU64,
    /// One launch at a time: each is synchronous on the device's stream.
    launching: Mutex<()>,
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
        let (major, minor) = ctx.compute_capability().map_err(|e| cuda_error("compute capability", e))?;
        let name = ctx.name().unwrap_or_else(|_| "NVIDIA GPU".into());
        let stream = ctx.default_stream();
        Ok(CudaDevice {
            number: num,
            name,
            target: Target { sm: (major * 10 + minor) as u32 },
            stream,
            _ctx: ctx,
            loaded: Mutex::new(HashMap::new()),
            present: PresentTable::new(),
            buffers: Mutex::new(HashMap::new()),
            next_buffer: AtomicU64::new(1),
            launching: Mutex::new(()),
        })
    }

    fn load(&self, kernel: &Kernel) -> Result<Arc<Loaded>> {
        let key = acc_core::ir::print::print(kernel);
        let mut loaded = self.loaded.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(l) = loaded.get(&key) {
            return Ok(Arc::clone(l));
        }
        let lowered = lower(kernel, self.target)?;
        acc_core::observe::dump("ptx", &kernel.name, || lowered.ptx.clone());
        let module = self
            .stream
            .context()
            .load_module(Ptx::from_src(lowered.ptx.clone()))
            .map_err(|e| cuda_error(&format!("loading the PTX of `{}`", kernel.name), e))?;
        let functions = lowered
            .entry_points
            .iter()
            .map(|e| module.load_function(e).map_err(|err| cuda_error("finding an entry point", err)))
            .collect::<Result<Vec<_>>>()?;
        let l = Arc::new(Loaded { lowered, functions });
        loaded.insert(key, Arc::clone(&l));
        Ok(l)
    }

    fn address(&self, slice: &CudaSlice<u8>) -> u64 {
        let (ptr, _sync) = slice.device_ptr(&self.stream);
        ptr
    }

    fn zeros(&self, bytes: usize) -> Result<CudaSlice<u8>> {
        self.stream.alloc_zeros::<u8>(bytes.max(16)).map_err(|_| Error::OutOfMemory { bytes })
    }

    /// Runs `kernel` with `args` (one per parameter, in order).
    pub fn launch(&self, kernel: &Kernel, args: &mut [Arg<'_>]) -> Result<Launched> {
        let _one_at_a_time = self.launching.lock().unwrap_or_else(|e| e.into_inner());
        if args.len() != kernel.params.len() {
            return Err(Error::Unsupported { what: format!("internal error: {} arguments for {} parameters", args.len(), kernel.params.len()) });
        }
        let loaded = self.load(kernel)?;
        let sync = |e| cuda_error("running a kernel", e);
        let mut values = Vec::new();
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
                    let layout = ElemLayout { scalar: Some(*elem), size };
                    let var = Named::unlocated(&param.name);
                    let ptr = match self.present.lookup(d.as_ptr() as usize, d.len(), layout, var)? {
                        Some(at) => {
                            let buffers = self.buffers.lock().unwrap_or_else(|e| e.into_inner());
                            let b = buffers.get(&at.buf).ok_or_else(|| Error::Unsupported { what: "internal error: a present buffer is gone".into() })?;
                            self.address(b) + (at.first * size) as u64
                        }
                        None => {
                            let mut t = self.zeros(d.len())?;
                            if !d.is_empty() {
                                self.stream.memcpy_htod(d, &mut t.slice_mut(..d.len())).map_err(|e| cuda_error("copying in", e))?;
                            }
                            let ptr = self.address(&t);
                            acc_core::observe::notify(|| format!("transfer `{}`: {} bytes to the device{}", param.name, d.len(), if matches!(args[p], Arg::Write(_)) { " and back" } else { "" }));
                            temporaries.push((p, t));
                            ptr
                        }
                    };
                    values.push(Value::U64(ptr));
                    values.push(Value::U64(len as u64));
                }
                (Arg::Scalar(v), ParamKind::Scalar(t)) => values.push(match (v, t) {
                    (ScalarValue::Bool(b), _) => Value::U32(*b as u32),
                    (ScalarValue::I32(x), _) => Value::I32(*x),
                    (ScalarValue::U32(x), _) => Value::U32(*x),
                    (ScalarValue::I64(x) | ScalarValue::ISize(x), _) => Value::I64(*x),
                    (ScalarValue::U64(x) | ScalarValue::USize(x), _) => Value::U64(*x),
                    (ScalarValue::F32(x), _) => Value::F32(*x),
                    (ScalarValue::F64(x), _) => Value::F64(*x),
                }),
                _ => return Err(Error::Unsupported { what: format!("internal error: argument {p} does not match its parameter") }),
            }
        }
        let status = self.zeros(16)?;
        values.push(Value::U64(self.address(&status)));
        let groups = largest.div_ceil(BLOCK_SIZE as usize).clamp(1, 65_535) as u32;
        let mut partials = Vec::new();
        for r in &loaded.lowered.reductions {
            let p = self.zeros(groups as usize * crate::ptx::partial_size(r.ty) as usize)?;
            values.push(Value::U64(self.address(&p)));
            partials.push(p);
        }
        acc_core::observe::notify(|| format!("cuda kernel `{}`: {} entry point(s), {groups} blocks of {BLOCK_SIZE}", kernel.name, loaded.functions.len()));
        let cfg = LaunchConfig { grid_dim: (groups, 1, 1), block_dim: (BLOCK_SIZE, 1, 1), shared_mem_bytes: 0 };
        for f in &loaded.functions {
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
            // types (`ptx::Lowered` documents the list); the buffers they point to live until
            // the stream is synchronized below.
            unsafe { b.launch(cfg) }.map_err(|e| cuda_error(&format!("launching `{}`", kernel.name), e))?;
        }
        self.stream.synchronize().map_err(sync)?;

        let mut words = [0u8; 16];
        self.stream.memcpy_dtoh(&status.slice(..16), &mut words[..]).map_err(|e| cuda_error("reading the status", e))?;
        let w = |k: usize| u32::from_le_bytes(words[4 * k..4 * k + 4].try_into().expect("4 bytes"));
        for (p, t) in &temporaries {
            if let Arg::Write(d) = &mut args[*p] {
                if !d.is_empty() {
                    let n = d.len();
                    self.stream.memcpy_dtoh(&t.slice(..n), &mut d[..]).map_err(|e| cuda_error("copying out", e))?;
                }
            }
        }
        let mut launched = Launched::default();
        for (r, p) in loaded.lowered.reductions.iter().zip(&partials) {
            let size = crate::ptx::partial_size(r.ty) as usize;
            let mut data = vec![0u8; groups as usize * size];
            self.stream.memcpy_dtoh(&p.slice(..data.len()), &mut data[..]).map_err(|e| cuda_error("reading partials", e))?;
            let partials = data.chunks_exact(size).filter_map(|w| ScalarValue::from_device_bytes(r.ty, w, 8));
            if let Some(v) = ScalarValue::fold(r.op, partials) {
                launched.reductions.push((r.into, v));
            }
        }
        self.stream.synchronize().map_err(sync)?;
        if w(0) != 0 {
            let name = kernel.params.get(w(1) as usize).map_or("?", |p| p.name.as_str());
            return Err(Error::Unsupported { what: format!("index out of bounds: the len is {} but the index is {} (array `{name}`)", w(3), w(2)) });
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
        let mut buffers = self.buffers.lock().unwrap_or_else(|e| e.into_inner());
        let b = buffers.get_mut(&buf).ok_or_else(|| Error::Unsupported { what: "internal error: no such buffer".into() })?;
        let off = first * elem.size;
        self.stream.memcpy_htod(host, &mut b.slice_mut(off..off + host.len())).map_err(|e| cuda_error("copying in", e))?;
        self.stream.synchronize().map_err(|e| cuda_error("copying in", e))
    }

    fn download(&self, buf: BufferId, elem: ElemLayout, first: usize, host: &mut [u8]) -> Result<()> {
        let buffers = self.buffers.lock().unwrap_or_else(|e| e.into_inner());
        let b = buffers.get(&buf).ok_or_else(|| Error::Unsupported { what: "internal error: no such buffer".into() })?;
        let off = first * elem.size;
        let n = host.len();
        self.stream.memcpy_dtoh(&b.slice(off..off + n), host).map_err(|e| cuda_error("copying out", e))?;
        self.stream.synchronize().map_err(|e| cuda_error("copying out", e))
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
