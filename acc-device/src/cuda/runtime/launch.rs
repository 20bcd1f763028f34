//! The CUDA driver of the shared launch routine ([`acc_core::gpu::launch`]): a kernel's
//! variant lowered to PTX and loaded as a module, each argument a kernel parameter (an array
//! its address and length), entry points launched on the device's stream or an async queue's.

use std::any::Any;
use std::sync::MutexGuard;

use acc_core::gpu::{
    status, ArrayPlace, GpuDriver, GpuLaunch, Grid, GridLimits, KernelCache, LaunchLayout, Order,
    Readback, Variant,
};
use acc_core::ir::ParamId;

use super::*;

/// Most launches recorded: a time loop launching during a compilation, or faster than the
/// GPU runs its launches, waits past this many.
const MOST_RECORDED: usize = 256;

impl GpuDriver for CudaDevice {
    type Compiled = Loaded;
    type Launch<'a> = CudaLaunch<'a>;

    fn name(&self) -> &'static str {
        "cuda"
    }
    fn device_name(&self) -> String {
        self.name.clone()
    }
    fn kernels(&self) -> &KernelCache<Loaded> {
        &self.kernels
    }
    fn present(&self) -> &PresentTable {
        &self.present
    }
    fn wide_usize(&self) -> bool {
        true
    }
    fn checks_status_later(&self) -> bool {
        true
    }
    fn grid_limits(&self) -> GridLimits {
        GridLimits {
            threads: BLOCK_SIZE,
            max_blocks: self.grid_blocks,
            max_reduction_blocks: self.reduction_blocks,
            uniform: false,
            words: ("block", "thread"),
            spill_bytes: self.spill_bytes,
        }
    }
    fn layout(compiled: &Loaded) -> &LaunchLayout {
        &compiled.lowered.layout
    }

    fn compile(&self, kernel: &Kernel, variant: Variant) -> Result<Loaded> {
        self.ctx
            .bind_to_thread()
            .map_err(|e| cuda_error("binding the context", e))?;
        let lowered = lower_with(kernel, self.target, variant)?;
        acc_core::observe::dump("ptx", &kernel.name, || lowered.ptx.clone());
        let names = lowered.entry_points.clone();
        let sm = self.target.sm;
        let job = match module_cache::cached(&self.ctx, &lowered.ptx, sm) {
            Some(module) => {
                acc_core::observe::notify(acc_core::observe::Notify::Launch, || {
                    format!("cuda module `{}`: loaded from the disk cache", kernel.name)
                });
                compile::Job::ready(&kernel.name, compile::Code::new(module, &names)?)
            }
            // Compiled on a thread of its own: a launch that need not wait returns before it
            // is done (`ready`), so the kernels of a first time step compile at once.
            None => {
                let (ctx, ptx, name) = (
                    Arc::clone(&self.ctx),
                    lowered.ptx.clone(),
                    kernel.name.clone(),
                );
                let row = acc_core::observe::time::compile_row();
                compile::Job::spawn(&kernel.name, move || {
                    let start = std::time::Instant::now();
                    let (module, by) = module_cache::compile(&ctx, &ptx, sm)?;
                    if let Some(row) = row {
                        acc_core::observe::time::compile_at(row, start.elapsed());
                    }
                    acc_core::observe::notify(acc_core::observe::Notify::Launch, || {
                        format!(
                            "cuda module `{name}`: compiled by {} in {:.1} ms",
                            match by {
                                module_cache::Compiler::Driver => "the driver",
                                module_cache::Compiler::Ptxas => "ptxas",
                            },
                            start.elapsed().as_secs_f64() * 1e3
                        )
                    });
                    compile::Code::new(module, &names)
                })
            }
        };
        let layout = &lowered.layout;
        let locals = if layout.locals_size > 0 {
            Some(self.zeros(layout.locals_size as usize)?)
        } else {
            None
        };
        // Every launch's copies fit: the grid keeps to them (`LaunchLayout::max_blocks`).
        let spill = match layout.spill_buffer_bytes(&self.grid_limits())? {
            0 => None,
            bytes => Some(self.zeros(bytes as usize)?),
        };
        let mut partials = Vec::new();
        for (r, size) in layout.reductions.iter().zip(&layout.partial_sizes) {
            if r.entry.is_none() {
                continue;
            }
            let bytes = self.reduction_blocks as usize * r.len as usize * *size as usize;
            partials.push(if r.into.is_some() {
                Partials::Host(Pinned::new(&self.ctx, bytes)?)
            } else {
                Partials::Device(self.zeros(bytes)?)
            });
        }
        Ok(Loaded {
            kernel: Arc::new(kernel.clone()),
            lowered,
            job,
            scratch: Mutex::new(Scratch {
                locals,
                spill,
                partials,
            }),
        })
    }

    fn begin<'a>(
        &'a self,
        kernel: &'a Kernel,
        loaded: Arc<Loaded>,
        order: Order<'a>,
    ) -> Result<CudaLaunch<'a>> {
        let mut state = self.launching.lock().unwrap_or_else(|e| e.into_inner());
        self.ctx
            .bind_to_thread()
            .map_err(|e| cuda_error("binding the context", e))?;
        state.values.clear();
        state.params.clear();
        Ok(CudaLaunch {
            dev: self,
            kernel,
            loaded,
            state,
            order,
            copies: Vec::new(),
            blocks_arg: 0,
            host_values_arg: 0,
            queue_stream: None,
            deferred: false,
            recording: None,
            kept: None,
            plain: false,
            later: None,
            timed: None,
        })
    }

    fn replay(&self, kernel: &Kernel, kept: &(dyn Any + Send), order: Order<'_>) -> Result<bool> {
        let Some(kept) = kept.downcast_ref::<Kept>() else {
            return Ok(false);
        };
        if !matches!(order.queue, Queue::Sync) || acc_core::observe::timing() {
            return Ok(false);
        }
        let mut state = self.launching.lock().unwrap_or_else(|e| e.into_inner());
        self.ctx
            .bind_to_thread()
            .map_err(|e| cuda_error("binding the context", e))?;
        // As `CudaLaunch::ready` decides, for a launch that need not wait whose module is
        // there; any other case goes the whole way.
        let rec = &self.recorder;
        rec.check()?;
        let code = match kept.loaded.job.get() {
            Some(code) if !rec.behind() => code?,
            _ => return Ok(false),
        };
        if rec.may_record() && rec.gpu_busy() {
            recorded::notify_recorded(&kernel.name, "the GPU is busy");
            rec.record(recorded::Queued {
                job: Arc::clone(&kept.loaded.job),
                dispatches: kept.dispatches.clone(),
            });
        } else {
            let state = &mut *state;
            for d in &kept.dispatches {
                let f = recorded::function(code, d)?;
                // As `CudaLaunch::dispatch`'s launch made it: the same arrays, present where
                // they were (the table is unchanged).
                recorded::launch(
                    f,
                    d,
                    self.stream.cu_stream(),
                    (&mut state.values, &mut state.params),
                )
                .map_err(|e| cuda_error(&format!("launching `{}`", kernel.name), e.0))?;
            }
        }
        rec.pending.store(true, Ordering::Release);
        Ok(true)
    }
}

/// A launch kept to be made again ([`GpuDriver::replay`]): its variant (the module, and the
/// scratch buffers its parameters may point to) and its dispatches, each with its parameters
/// as made.
struct Kept {
    loaded: Arc<Loaded>,
    dispatches: Vec<recorded::Dispatch>,
}

/// A kernel argument's value, as the PTX entry points take it, in the low bytes of a 64-bit
/// slot (`cuLaunchKernel` reads each parameter's size from the address given for it; the
/// host is little-endian, so a 32-bit value is the slot's first four bytes).
fn slot(v: ScalarValue) -> u64 {
    match v {
        ScalarValue::Bool(b) => b as u64,
        ScalarValue::I32(x) => x as u32 as u64,
        ScalarValue::U32(x) => x as u64,
        ScalarValue::I64(x) | ScalarValue::ISize(x) => x as u64,
        ScalarValue::U64(x) | ScalarValue::USize(x) => x,
        ScalarValue::F32(x) => x.to_bits() as u64,
        ScalarValue::F64(x) => x.to_bits(),
    }
}

/// One launch on a CUDA device, holding its launch lock (one launch at a time: the status
/// words and each kernel's scratch buffers are shared).
pub struct CudaLaunch<'a> {
    dev: &'a CudaDevice,
    kernel: &'a Kernel,
    loaded: Arc<Loaded>,
    /// The launch lock's state: the status words; the entry points' parameters
    /// (`ptx::Lowered::entry_points` lists them), each in a 64-bit slot ([`slot`]), and the
    /// address of each slot (made once the slots are all there, in `ready`).
    state: MutexGuard<'a, LaunchState>,
    order: Order<'a>,
    /// Arrays copied in for the launch: parameter, device copy, whether it comes back.
    copies: Vec<(ParamId, CudaSlice<u8>, bool)>,
    blocks_arg: usize,
    host_values_arg: usize,
    /// The async queue's stream the launch runs on, if not the device's.
    queue_stream: Option<Arc<CudaStream>>,
    deferred: bool,
    /// The dispatches of a launch recorded to run later ([`recorded`]).
    recording: Option<Vec<recorded::Dispatch>>,
    /// The dispatches, kept to be made again ([`GpuLaunch::keep`]).
    kept: Option<Vec<recorded::Dispatch>>,
    /// A launch that need not wait, on the device's stream, untimed, without region locals:
    /// one the recorder may take, and one that can be made again (set in `ready`).
    plain: bool,
    /// The slot of status words checked at the device's next synchronization
    /// ([`DeferredChecks`](crate::cuda::deferred_checks::DeferredChecks)), until the launch is
    /// listed there (in `finish`, after `replay` is asked): such a launch is not made again.
    later: Option<usize>,
    /// `ACC_TIME`: an event before the kernels.
    timed: Option<cudarc::driver::CudaEvent>,
}

impl Drop for CudaLaunch<'_> {
    fn drop(&mut self) {
        // A launch that failed before it was submitted gives its slot back.
        if let Some(slot) = self.later.take() {
            self.dev.deferred_checks().abandon(slot);
        }
    }
}

impl CudaLaunch<'_> {
    fn stream(&self) -> &Arc<CudaStream> {
        self.queue_stream.as_ref().unwrap_or(&self.dev.stream)
    }
}

impl GpuLaunch for CudaLaunch<'_> {
    fn scalar(&mut self, _: ParamId, v: ScalarValue) -> Result<()> {
        self.state.values.push(slot(v));
        Ok(())
    }

    fn array(&mut self, p: ParamId, place: ArrayPlace<'_>) -> Result<()> {
        let dev = self.dev;
        let (ptr, len) = match place {
            ArrayPlace::Unused { len } => (0, len),
            ArrayPlace::Present(at) => {
                let buffers = dev.buffers.lock().unwrap_or_else(|e| e.into_inner());
                let b = buffers.get(&at.buf).ok_or_else(|| Error::Unsupported {
                    what: "internal error: a present buffer is gone".into(),
                })?;
                (
                    b.address(&dev.stream) + (at.first * at.elem.size) as u64,
                    at.len,
                )
            }
            ArrayPlace::Copied { data, back } => {
                let size = match &self.kernel.params[p as usize].kind {
                    ParamKind::Array { elem, .. } => elem.size() as usize,
                    ParamKind::Scalar(_) => 1,
                };
                // SAFETY: filled by the copy below (or unused when empty).
                let t = unsafe { dev.stream.alloc::<u8>(data.len().max(16)) }
                    .map_err(|_| Error::OutOfMemory { bytes: data.len() })?;
                let ptr = dev.address(&t);
                if !data.is_empty() {
                    dev.copy_in(ptr, data)?;
                }
                self.copies.push((p, t, back));
                (ptr, data.len() / size.max(1))
            }
        };
        self.state.values.push(ptr);
        self.state.values.push(len as u64);
        Ok(())
    }

    fn ready(&mut self, _: &Grid, deferred: bool) -> Result<()> {
        let dev = self.dev;
        let loaded = Arc::clone(&self.loaded);
        // A launch that need not wait (on the device's stream, untimed, without region
        // locals) is recorded ([`recorded`]) rather than launched when its module is still
        // compiling, or when the GPU is still busy with earlier launches; so are such launches
        // behind recorded ones. Any other launch first submits those, in order.
        let rec = &dev.recorder;
        rec.check()?;
        // A deferred launch that may set status words (its accesses not proven in bounds)
        // writes them into a slot of its own, checked at the next synchronization; on an async
        // queue, or with every slot taken, it waits as before.
        let layout = &loaded.lowered.layout;
        let mut later = None;
        if deferred && layout.status_used && matches!(self.order.queue, Queue::Sync) {
            later = dev.deferred_checks().take(&dev.ctx)?;
        }
        let deferred = deferred && (!layout.status_used || later.is_some());
        self.later = later.map(|(slot, _)| slot);
        let later = later.map(|(_, address)| address);
        self.plain = deferred
            && matches!(self.order.queue, Queue::Sync)
            && loaded.lowered.layout.locals_size == 0
            && !acc_core::observe::timing();
        let recordable = self.plain && rec.may_record();
        let room = || rec.len() < MOST_RECORDED;
        let why = match loaded.job.get() {
            Some(code) if !rec.behind() => {
                code?;
                (recordable && rec.gpu_busy()).then_some("the GPU is busy")
            }
            Some(code) if recordable && room() => {
                code?;
                Some("behind recorded launches")
            }
            None if recordable && dev.defer_compile && room() && loaded.job.may_record() => {
                Some("its kernel is compiling")
            }
            _ => {
                dev.flush()?;
                loaded.job.wait()?;
                None
            }
        };
        if let Some(why) = why {
            self.recording = Some(Vec::new());
            recorded::notify_recorded(&self.kernel.name, why);
        }
        let mut scratch = loaded.scratch.lock().unwrap_or_else(|e| e.into_inner());
        let state = &mut *self.state;
        state
            .values
            .push(later.unwrap_or_else(|| state.status.device_address()));
        state
            .values
            .push(scratch.locals.as_ref().map_or(0, |b| dev.address(b)));
        self.blocks_arg = state.values.len();
        state.values.push(1);
        for p in &scratch.partials {
            state.values.push(match p {
                Partials::Host(h) => h.device_address(),
                Partials::Device(d) => dev.address(d),
            });
        }
        // The host loops' variables, set at each launch.
        self.host_values_arg = state.values.len();
        let host_vars = self.loaded.lowered.layout.program.host_vars();
        state.values.extend((0..host_vars).map(|_| 0));
        if let Some(b) = &scratch.spill {
            state.values.push(dev.address(b));
        }
        // No slot is added from here on, so their addresses hold until the launch ends.
        recorded::slot_addresses(&mut state.values, &mut state.params);
        // The spilled private arrays are the kernel's one buffer too.
        let has_locals = scratch.locals.is_some() || scratch.spill.is_some();
        if let Some(b) = &mut scratch.locals {
            // Launches run one at a time (the launch lock); the clear is ordered on the
            // device's stream before this launch's kernels.
            dev.stream
                .memset_zeros(b)
                .map_err(|e| cuda_error("clearing the locals", e))?;
        }
        drop(scratch);
        // A deferred launch on an async queue runs on the queue's stream (unless it keeps
        // region locals in the kernel's one buffer, which launches on two streams would
        // share), after what the device's stream was given before it and after `waits`; other
        // launches run on the device's stream, after their queue and `waits`.
        self.deferred = deferred;
        let Order { queue, waits } = self.order;
        match queue {
            Queue::Async(n) if deferred && !has_locals => {
                let q = dev.queue_stream(n)?;
                q.join(&dev.stream).map_err(|e| {
                    cuda_error("ordering an async queue after the device's stream", e)
                })?;
                dev.join_queues(&q, waits)?;
                // Before the kernels are queued: a free or a wait from another thread then
                // waits for the queue's stream.
                dev.queues_pending.store(true, Ordering::Release);
                self.queue_stream = Some(q);
            }
            Queue::Async(n) => {
                dev.join_queues(&dev.stream, Some(&[Queue::Async(n)]))?;
                dev.join_queues(&dev.stream, waits)?;
            }
            Queue::Sync => {}
        }
        // `ACC_TIME`: events around the kernels on their stream, read when the table is made.
        self.timed = acc_core::observe::timing()
            .then(|| dev.timing_event(self.stream()))
            .flatten();
        Ok(())
    }

    fn dispatch(&mut self, e: usize, blocks: u32, host: &[i128]) -> Result<()> {
        let state = &mut *self.state;
        for (n, &v) in host.iter().enumerate() {
            // SAFETY: `params` holds the addresses of `values`' slots, which stay where they
            // are (none is added after `ready`); writing through them keeps them the only
            // access until the launch.
            unsafe { *(state.params[self.host_values_arg + n] as *mut u64) = v as u64 };
        }
        let Some(shape) = self.loaded.lowered.layout.entries.get(e) else {
            return Err(Error::Unsupported {
                what: format!(
                    "internal error: `{}` has no entry point {e}",
                    self.kernel.name
                ),
            });
        };
        // SAFETY: as above.
        unsafe { *(state.params[self.blocks_arg] as *mut u64) = blocks as u64 };
        let (grid, block) = if shape.single {
            (1, 1)
        } else {
            (blocks, BLOCK_SIZE)
        };
        let this = || recorded::Dispatch {
            entry: e,
            grid,
            block,
            params: state.values.clone(),
        };
        if let Some(kept) = &mut self.kept {
            kept.push(this());
        }
        if let Some(recorded) = &mut self.recording {
            recorded.push(this());
            return Ok(());
        }
        let Some(f) = self
            .loaded
            .job
            .get()
            .and_then(|c| c.ok())
            .and_then(|c| c.functions.get(e))
        else {
            return Err(Error::Unsupported {
                what: format!(
                    "internal error: `{}` has no entry point {e}",
                    self.kernel.name
                ),
            });
        };
        let stream = self
            .queue_stream
            .as_ref()
            .unwrap_or(&self.dev.stream)
            .cu_stream();
        // SAFETY: the parameters are the entry point's, in order and of their types
        // (`ptx::Lowered` documents the list), each in a slot `params` points at; the memory
        // they point to lives until the stream is synchronized (a deferred launch copies
        // nothing in, and present data outlives it); the context was bound in `begin`.
        unsafe {
            crate::cuda::result::launch_kernel(f.raw(), (grid, block), stream, &mut state.params)
        }
        .map_err(|e| cuda_error(&format!("launching `{}`", self.kernel.name), e.0))
    }

    fn keep(&mut self) {
        self.kept = Some(Vec::new());
    }

    fn replay(&mut self) -> Option<Box<dyn Any + Send>> {
        // Only a launch `ready` could record: on the device's stream, untimed, without region
        // locals (their buffer is cleared before each launch).
        let dispatches = self
            .kept
            .take()
            .filter(|_| self.plain && self.later.is_none())?;
        Some(Box::new(Kept {
            loaded: Arc::clone(&self.loaded),
            dispatches,
        }))
    }

    fn finish(mut self, args: &mut [Arg<'_>], grid: &Grid) -> Result<Option<Readback>> {
        let dev = self.dev;
        // Submitted by the flusher or the device's next use that is not a recorded launch.
        if let Some(dispatches) = self.recording.take() {
            dev.recorder.record(recorded::Queued {
                job: Arc::clone(&self.loaded.job),
                dispatches,
            });
        }
        // Submitted or recorded: listed for the next synchronization to check.
        if let Some(slot) = self.later.take() {
            dev.deferred_checks().commit(slot, &self.loaded.kernel);
        }
        if let Some(start) = self.timed.take() {
            if let Some(end) = dev.timing_event(self.stream()) {
                acc_core::observe::time::launch(
                    || grid.shape(),
                    acc_core::observe::time::DeviceTime::Pending(
                        Box::new(EventPair {
                            start: Some(start),
                            end: Some(end),
                            pool: Arc::clone(&dev.events),
                        }),
                        acc_core::observe::time::Clock::CudaEvents,
                    ),
                );
            }
        }
        if self.queue_stream.is_some() {
            dev.queues_pending.store(true, Ordering::Release);
            return Ok(None);
        }
        if self.deferred {
            dev.recorder.pending.store(true, Ordering::Release);
            if let Queue::Async(n) = self.order.queue {
                if let Ok(mark) = dev.stream.record_event(None) {
                    dev.queue_marks
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .insert(n, mark);
                }
            }
            return Ok(None);
        }
        // Every listed launch was submitted before this one (the launch lock orders them, and
        // `ready` submitted the recorded ones): each has run once the stream is synchronized.
        let covered = dev.deferred_checks().listed();
        dev.stream
            .synchronize()
            .map_err(|e| cuda_error("running a kernel", e))?;
        dev.recorder.pending.store(false, Ordering::Release);
        dev.deferred_checks().check(covered, &dev.name)?;
        for (p, t, back) in &self.copies {
            if let (true, Arg::Write(d)) = (*back, &mut args[*p as usize]) {
                if !d.is_empty() {
                    dev.copy_out(dev.address(t), d)?;
                }
            }
        }
        let layout = &self.loaded.lowered.layout;
        let scratch = self
            .loaded
            .scratch
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let mut back = Readback::default();
        let with_entries = layout
            .reductions
            .iter()
            .enumerate()
            .filter(|(_, r)| r.entry.is_some());
        for ((r, slot), partials) in with_entries.zip(&scratch.partials) {
            if let (Partials::Host(h), Some(e)) = (partials, slot.entry) {
                let blocks = grid.blocks.get(e).copied().unwrap_or(1) as usize;
                let bytes = blocks * slot.len as usize * layout.partial_sizes[r] as usize;
                back.partials
                    .push((r, h.bytes()[..bytes.min(h.bytes().len())].to_vec()));
            }
        }
        if layout.reads_locals() {
            back.locals = vec![0u8; layout.locals_size as usize];
            if let Some(b) = &scratch.locals {
                dev.copy_out(dev.address(b), &mut back.locals)?;
            }
        }
        if layout.status_used {
            back.status = self.state.status.bytes()[..status::BYTES].to_vec();
            if back.status.iter().any(|&b| b != 0) {
                self.state.status.clear(status::BYTES);
            }
        }
        Ok(Some(back))
    }
}
