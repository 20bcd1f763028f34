//! The wgpu driver of the shared launch routine ([`acc_core::gpu::launch`]): scalars in one
//! parameter buffer, each array a binding (present buffers in place, the rest pooled
//! temporaries), dispatches recorded in compute passes, the results copied to mappable
//! buffers and read once the queue ran them.

use acc_core::gpu::{
    status, ArrayPlace, GpuDriver, GpuLaunch, Grid, GridLimits, KernelCache, LaunchLayout, Order,
    Readback, Variant,
};

use super::compile::slot_size;
use super::*;

impl GpuDriver for WgpuDevice {
    type Compiled = Compiled;
    type Launch<'a> = WgpuLaunch<'a>;

    fn name(&self) -> &'static str {
        "wgpu"
    }
    fn device_name(&self) -> String {
        self.info.name.clone()
    }
    fn kernels(&self) -> &KernelCache<Compiled> {
        &self.kernels
    }
    fn present(&self) -> &PresentTable {
        &self.present
    }
    fn wide_usize(&self) -> bool {
        self.target.wide_usize()
    }
    fn grid_limits(&self) -> GridLimits {
        // One count for every dispatch: a fold of partials reads it from the parameters.
        let most = self.max_workgroups.min(65_535);
        GridLimits {
            threads: WORKGROUP_SIZE,
            max_blocks: most,
            max_reduction_blocks: most.min(REDUCTION_WORKGROUPS),
            uniform: true,
            words: ("workgroup", "invocation"),
            spill_bytes: self.spill_bytes(),
        }
    }
    fn layout(compiled: &Compiled) -> &LaunchLayout {
        &compiled.lowered.layout
    }
    fn compile(&self, kernel: &Kernel, variant: Variant) -> Result<Compiled> {
        self.compile_variant(kernel, variant)
    }

    fn begin<'a>(
        &'a self,
        kernel: &'a Kernel,
        compiled: Arc<Compiled>,
        order: Order<'a>,
    ) -> Result<WgpuLaunch<'a>> {
        let n = compiled.lowered.bindings.len();
        let params = vec![0u8; compiled.lowered.params_size as usize];
        Ok(WgpuLaunch {
            dev: self,
            kernel,
            params,
            target: compiled.target,
            compiled,
            queue: order.queue,
            buffers: vec![None; n],
            parts: vec![None; n],
            temporaries: Vec::new(),
            readback: Vec::new(),
            group: None,
            batch: None,
            params_at: None,
            workgroups: 0,
        })
    }
}

/// Most workgroups of a launch with reductions (each leaves a partial to combine) or whose
/// workgroups each merge a privatized copy of an array: wgpu does not say how many the
/// adapter holds at once; 2048 workgroups of 256 fill the largest GPUs (an H100 holds 1056)
/// and each invocation then strides over more iterations. With every workgroup the grid
/// allowed (65,535), a 256-bin histogram of 2^24 keys merged as many times as it counted.
const REDUCTION_WORKGROUPS: u32 = 2048;

/// One launch on a wgpu device (the device's launch lock is held around it, for its error
/// scopes), recorded into the device's batch of launches ([`super::batch`]).
pub struct WgpuLaunch<'a> {
    dev: &'a WgpuDevice,
    kernel: &'a Kernel,
    compiled: Arc<Compiled>,
    target: Target,
    queue: Queue,
    /// The parameters' bytes.
    params: Vec<u8>,
    /// Each binding's buffer, once known.
    buffers: Vec<Option<wgpu::Buffer>>,
    /// For each array binding of present data: its parameter, first element, length and
    /// element size on the device (to read a part through a copy, [`WgpuLaunch::unalias`]).
    parts: Vec<Option<(ParamId, usize, usize, usize)>>,
    /// Buffers from the pool for this launch, given back after it.
    temporaries: Vec<wgpu::Buffer>,
    /// (binding, bytes) copied back after the launch.
    readback: Vec<(usize, usize)>,
    /// The bind group and its buffers, once the launch is ready.
    group: Option<(wgpu::BindGroup, Vec<wgpu::Buffer>)>,
    /// The device's batch, held from `ready` to `finish`.
    batch: Option<std::sync::MutexGuard<'a, super::batch::Batch>>,
    /// The batch generation the parameters were staged in, and their offset.
    params_at: Option<(u64, u32)>,
    /// Workgroups dispatched so far.
    workgroups: u64,
}

impl WgpuLaunch<'_> {
    /// Binds a copy of each part of present data the kernel only reads that lies in a buffer
    /// another of its arrays writes: wgpu refuses a buffer bound both read-only and writable
    /// in one dispatch, and Rust's two parts of one array (`split_at_mut`, C's two pointers
    /// into one array: NPB MG's levels) are exactly that. The parts are disjoint (one is
    /// borrowed mutably), so the copy holds what the kernel would read. The copy is recorded
    /// in the batch, after the launches before this one.
    fn unalias(&mut self) -> Result<()> {
        let l = &self.compiled.lowered;
        let writable = |p: ParamId| {
            matches!(
                self.kernel.params[p as usize].kind,
                ParamKind::Array { writable: true, .. }
            )
        };
        let mut copies = Vec::new();
        for (i, b) in l.bindings.iter().enumerate() {
            let (Binding::Array(p), Some((_, first, len, elem)), Some(buf)) =
                (b, self.parts[i], &self.buffers[i])
            else {
                continue;
            };
            if writable(*p) {
                continue;
            }
            let shared = l.bindings.iter().enumerate().any(|(j, other)| {
                matches!(other, Binding::Array(q) if writable(*q))
                    && self.buffers[j].as_ref() == Some(buf)
            });
            if shared {
                copies.push((i, *p, first, len, elem));
            }
        }
        if copies.is_empty() {
            return Ok(());
        }
        let dev = self.dev;
        let mut batch = dev.batch.lock().unwrap_or_else(|e| e.into_inner());
        batch.take_failure()?;
        for (i, p, first, len, elem) in copies {
            let bytes = (len * elem) as u64;
            let t = dev.pool.take(
                &dev.device,
                bytes.next_multiple_of(4).max(4),
                STORAGE,
                "acc read-only part",
            );
            let src = self.buffers[i]
                .clone()
                .ok_or_else(|| internal("an unbound array"))?;
            if (first * elem) % 4 != 0 {
                return Err(Error::Unsupported {
                    what: format!(
                        "on wgpu: `{}` is read from a buffer the kernel also writes, starting at byte {} (not a multiple of 4)",
                        self.kernel.params[p as usize].name,
                        first * elem
                    ),
                });
            }
            if bytes > 0 {
                batch.encoder(&dev.device).copy_buffer_to_buffer(
                    &src,
                    (first * elem) as u64,
                    &t,
                    0,
                    bytes.next_multiple_of(4),
                );
            }
            if let Some(slot) = l.arrays.iter().find(|s| s.param == p) {
                let o = slot.offset as usize;
                self.params[o..o + 4].copy_from_slice(&0u32.to_le_bytes());
            }
            self.temporaries.push(t.clone());
            self.buffers[i] = Some(t);
        }
        Ok(())
    }

    fn binding_of(&self, b: Binding) -> Option<usize> {
        self.compiled.lowered.bindings.iter().position(|x| *x == b)
    }

    fn param_error(&self, e: Error, p: ParamId) -> Error {
        annotate_param(e, &self.kernel.params[p as usize].name)
    }
}

fn internal(what: &str) -> Error {
    Error::Unsupported {
        what: format!("internal error: {what}"),
    }
}

impl GpuLaunch for WgpuLaunch<'_> {
    fn scalar(&mut self, p: ParamId, v: ScalarValue) -> Result<()> {
        let l = &self.compiled.lowered;
        let Some(slot) = l.params.iter().find(|s| s.param == p) else {
            return Ok(());
        };
        // A scalar the kernel never reads (a reduction's original value, combined on the
        // host) need not fit the device's types.
        let b = match scalar_bytes(v, self.target) {
            Ok(b) => b,
            Err(e) => {
                let read = self
                    .kernel
                    .function
                    .exprs
                    .iter()
                    .any(|(_, e)| *e == acc_core::ir::Expr::Param(p));
                if read {
                    return Err(self.param_error(e, p));
                }
                vec![0; 8]
            }
        };
        let o = slot.offset as usize;
        let b = &b[..b.len().min(self.params.len() - o)];
        self.params[o..o + b.len()].copy_from_slice(b);
        Ok(())
    }

    fn array(&mut self, p: ParamId, place: ArrayPlace<'_>) -> Result<()> {
        let dev = self.dev;
        let ParamKind::Array { elem, .. } = self.kernel.params[p as usize].kind else {
            return Err(Error::Unsupported {
                what: format!("internal error: parameter {p} is an array"),
            });
        };
        let device_elem =
            crate::wgpu::memory::device_elem_size(ElemLayout::from(elem), self.target)
                .map_err(|e| self.param_error(e, p))?;
        let binding = self.binding_of(Binding::Array(p));
        let (buffer, first, len) = match place {
            ArrayPlace::Present(at) => {
                if let Some(b) = binding {
                    self.parts[b] = Some((p, at.first, at.len, device_elem));
                }
                (dev.buffer(at.buf)?, at.first, at.len)
            }
            // wgpu buffers may not be empty; an array the kernel does not touch (or an empty
            // one) is bound to one element it never reads (its length in the shader is `len`).
            ArrayPlace::Unused { len } => {
                let t = dev.pool.take(
                    &dev.device,
                    (device_elem as u64).next_multiple_of(4),
                    STORAGE,
                    "acc unused",
                );
                self.temporaries.push(t.clone());
                (t, 0, len)
            }
            ArrayPlace::Copied { data, back } => {
                let len = data.len() / (elem.size() as usize).max(1);
                // Structs travel bit for bit; narrow scalars widen to the device's words.
                let data: Cow<[u8]> = match elem.scalar() {
                    Some(t) if widened_in_buffers(t, self.target) => {
                        Cow::Owned(widen(t, data, &self.kernel.params[p as usize].name)?)
                    }
                    _ => Cow::Borrowed(data),
                };
                if let (true, Some(b)) = (back, binding) {
                    self.readback.push((b, data.len()));
                }
                let contents: Cow<[u8]> = if data.is_empty() {
                    Cow::Owned(vec![0; device_elem])
                } else {
                    data
                };
                let t = dev.pool.take(
                    &dev.device,
                    (contents.len() as u64).next_multiple_of(4),
                    STORAGE,
                    "acc temporary",
                );
                let start = acc_core::observe::timing().then(std::time::Instant::now);
                dev.queue.write_buffer(&t, 0, &contents);
                if let Some(start) = start {
                    acc_core::observe::time::transfer(true, contents.len(), start.elapsed());
                }
                self.temporaries.push(t.clone());
                (t, 0, len)
            }
        };
        let word = |x: usize| -> Result<[u8; 4]> {
            u32::try_from(x)
                .map(u32::to_le_bytes)
                .map_err(|_| Error::Unsupported {
                    what: format!(
                        "on wgpu: array `{}` has {x} elements, more than 32-bit indices reach",
                        self.kernel.params[p as usize].name
                    ),
                })
        };
        if let Some(slot) = self.compiled.lowered.arrays.iter().find(|s| s.param == p) {
            let o = slot.offset as usize;
            self.params[o..o + 4].copy_from_slice(&word(first)?);
            self.params[o + 4..o + 8].copy_from_slice(&word(len)?);
        }
        if let Some(b) = binding {
            self.buffers[b] = Some(buffer);
        }
        Ok(())
    }

    fn ready(&mut self, grid: &Grid, _deferred: bool) -> Result<()> {
        self.unalias()?;
        let dev = self.dev;
        let compiled = Arc::clone(&self.compiled);
        let l = &compiled.lowered;
        if let Some(o) = l.groups_offset {
            let groups = grid.uniform().unwrap_or(1);
            self.params[o as usize..o as usize + 4].copy_from_slice(&groups.to_le_bytes());
        }
        let mut scratch = compiled.scratch.lock().unwrap_or_else(|e| e.into_inner());
        let groups = grid.uniform().unwrap_or(1) as usize;
        let mut buffers = Vec::with_capacity(l.bindings.len());
        let mut clear = Vec::new();
        for (i, b) in l.bindings.iter().enumerate() {
            let buf = match b {
                Binding::Array(p) => self.buffers[i]
                    .clone()
                    .ok_or_else(|| internal(&format!("array parameter {p} was not bound")))?,
                Binding::Params | Binding::HostValues => dev.uploads.clone(),
                Binding::Status => {
                    // Only a kernel that reports writes its status: zeroed before it runs.
                    if l.layout.status_used {
                        self.readback.push((i, status::BYTES));
                        clear.push(scratch.status.clone());
                    }
                    scratch.status.clone()
                }
                Binding::Locals => {
                    if l.layout.reads_locals() {
                        self.readback.push((i, l.layout.locals_size as usize));
                    }
                    let locals = scratch
                        .locals
                        .clone()
                        .ok_or_else(|| internal("no locals buffer"))?;
                    clear.push(locals.clone());
                    locals
                }
                Binding::Partials(r) => {
                    // Partials of a reduction into a region local stay on the device.
                    let slot = l.layout.reductions[*r];
                    if slot.into.is_some() {
                        let bytes =
                            groups * slot.len as usize * l.layout.partial_sizes[*r] as usize;
                        self.readback.push((i, bytes));
                    }
                    scratch.partials[*r].clone()
                }
                Binding::Spilled(n) => scratch.spilled[*n].clone(),
            };
            buffers.push(buf);
        }
        let host_vars = l.layout.program.host_vars();
        // Temporaries come from the pool, so the same buffers come back launch after launch.
        if scratch.groups.len() >= BIND_GROUPS_KEPT && !scratch.groups.contains_key(&buffers) {
            scratch.groups.clear();
        }
        let group = scratch
            .groups
            .entry(buffers.clone())
            .or_insert_with_key(|buffers| dev.bind_group(&compiled, buffers, host_vars))
            .clone();
        drop(scratch);
        let mut batch = dev.batch.lock().unwrap_or_else(|e| e.into_inner());
        batch.take_failure()?;
        // Cleared in order with the batch's earlier launches of the same kernel.
        for b in clear {
            batch.encoder(&dev.device).clear_buffer(&b, 0, None);
        }
        batch.recorded(&self.kernel.name);
        self.batch = Some(batch);
        self.group = Some((group, buffers));
        Ok(())
    }

    fn dispatch(&mut self, e: usize, blocks: u32, host: &[i128]) -> Result<()> {
        let dev = self.dev;
        let l = &self.compiled.lowered;
        let program = &l.layout.program;
        let single = l.layout.entries[e].single;
        let target = self.target;
        let name = &self.kernel.name;
        // The host loops' values of this dispatch, two 32-bit words each.
        let mut values = Vec::with_capacity(8 * host.len());
        for (n, &v) in host.iter().enumerate() {
            // Indices of 32 bits hold a host loop's `usize`/`isize` only within them.
            let narrow = match program.host_var(n) {
                Some((var, Scalar::USize)) if !target.wide_usize() => {
                    (!(0..=i128::from(u32::MAX)).contains(&v)).then_some(var)
                }
                Some((var, Scalar::ISize)) if !target.wide_usize() => {
                    (!(i128::from(i32::MIN)..=i128::from(i32::MAX)).contains(&v)).then_some(var)
                }
                _ => None,
            };
            if let Some(var) = narrow {
                return Err(Error::Unsupported {
                    what: format!(
                        "on wgpu: the loop variable `{var}` of `{name}` reaches {v}, more than this launch's 32-bit indices hold"
                    ),
                });
            }
            values.extend_from_slice(&(v as u64).to_le_bytes());
        }
        let (Some(batch), Some((group, _))) = (self.batch.as_mut(), &self.group) else {
            return Err(internal("a dispatch before the launch was ready"));
        };
        let align = dev.upload_align();
        let host_vars = program.host_vars();
        // The parameters (once per batch the launch is recorded in) and the values, in the
        // upload buffer; a full one is submitted and the next batch's begins.
        let offsets = loop {
            let generation = batch.generation;
            let params = match self.params_at {
                Some((g, at)) if g == generation => Some(at),
                _ => batch.stage(
                    &self.params,
                    slot_size(l, &Binding::Params, host_vars),
                    align,
                ),
            };
            let values = match (params, host_vars) {
                (None, _) => None,
                (Some(_), 0) => Some(0),
                (Some(_), _) => batch.stage(
                    &values,
                    slot_size(l, &Binding::HostValues, host_vars),
                    align,
                ),
            };
            if let (Some(p), Some(v)) = (params, values) {
                self.params_at = Some((generation, p));
                break l.bindings.iter().filter_map(move |b| match b {
                    Binding::Params => Some(p),
                    Binding::HostValues => Some(v),
                    _ => None,
                });
            }
            if batch.is_empty() {
                return Err(internal("a launch's parameters exceed the upload buffer"));
            }
            dev.submit(batch)?;
        };
        let offsets: Vec<u32> = offsets.collect();
        let groups = if single { 1 } else { blocks };
        let pass = batch.pass(&dev.device);
        pass.set_pipeline(&self.compiled.pipelines[e]);
        pass.set_bind_group(0, group, &offsets);
        pass.dispatch_workgroups(groups, 1, 1);
        self.workgroups += u64::from(groups);
        if batch.dispatched() {
            dev.submit(batch)?;
        }
        Ok(())
    }

    fn finish(mut self, args: &mut [Arg<'_>], grid: &Grid) -> Result<Option<Readback>> {
        let dev = self.dev;
        let mut batch = self
            .batch
            .take()
            .ok_or_else(|| internal("a launch finished before it was ready"))?;
        let timing = acc_core::observe::timing();
        if self.readback.is_empty() {
            // Nothing comes back and nothing can go wrong: the host goes on, and the launch
            // waits in the batch unless it is large.
            let temporaries = std::mem::take(&mut self.temporaries);
            let full = batch.keep(self.queue, temporaries);
            if timing {
                dev.submit(&mut batch)?;
                // `ACC_TIME`: from submission to the queue's report that it ran.
                let pending = QueuedTime {
                    submitted: std::time::Instant::now(),
                    done: Arc::new(Mutex::new(None)),
                    device: dev.device.clone(),
                };
                let done = Arc::clone(&pending.done);
                dev.queue.on_submitted_work_done(move || {
                    *done.lock().unwrap_or_else(|e| e.into_inner()) =
                        Some(std::time::Instant::now());
                });
                acc_core::observe::time::launch(
                    || grid.shape(),
                    acc_core::observe::time::DeviceTime::Pending(
                        Box::new(pending),
                        acc_core::observe::time::Clock::WgpuQueue,
                    ),
                );
            } else if full || self.workgroups >= super::batch::LARGE_LAUNCH_WORKGROUPS {
                dev.submit(&mut batch)?;
            }
            return Ok(None);
        }
        let bound = self
            .group
            .as_ref()
            .map(|(_, b)| b.as_slice())
            .ok_or_else(|| internal("a launch finished before it was ready"))?;
        let encoder = batch.encoder(&dev.device);
        let staging: Vec<(usize, wgpu::Buffer)> = self
            .readback
            .iter()
            .map(|&(i, bytes)| {
                let size = (bytes as u64).next_multiple_of(4).max(4);
                let s = dev.pool.take(&dev.device, size, STAGING, "acc readback");
                encoder.copy_buffer_to_buffer(&bound[i], 0, &s, 0, size);
                (i, s)
            })
            .collect();
        let submitted = timing.then(std::time::Instant::now);
        batch.keep_temporaries(std::mem::take(&mut self.temporaries));
        dev.submit(&mut batch)?;
        drop(batch);
        for (_, s) in &staging {
            s.slice(..).map_async(wgpu::MapMode::Read, |_| {});
        }
        dev.device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| Error::Unsupported {
                what: format!("wgpu device lost while running `{}`: {e}", self.kernel.name),
            })?;
        if let Some(t) = submitted {
            acc_core::observe::time::launch(
                || grid.shape(),
                acc_core::observe::time::DeviceTime::Measured(
                    t.elapsed(),
                    acc_core::observe::time::Clock::WgpuQueue,
                ),
            );
        }
        let l = &self.compiled.lowered;
        let mut back = Readback::default();
        for (i, s) in staging {
            let data = s
                .slice(..)
                .get_mapped_range()
                .map_err(|e| Error::Unsupported {
                    what: format!("reading back the results of `{}`: {e}", self.kernel.name),
                })?
                .to_vec();
            s.unmap();
            dev.pool.give(s);
            match l.bindings[i] {
                Binding::Array(p) => {
                    let elem = match self.kernel.params[p as usize].kind {
                        ParamKind::Array { elem, .. } => elem.scalar(),
                        ParamKind::Scalar(s) => Some(s),
                    };
                    if let Arg::Write(d) = &mut args[p as usize] {
                        acc_core::observe::time::transfer(false, d.len(), Default::default());
                        match elem {
                            Some(t) if widened_in_buffers(t, self.target) => narrow(t, &data, d),
                            _ => d.copy_from_slice(&data[..d.len()]),
                        }
                    }
                }
                Binding::Status => back.status = data,
                Binding::Partials(r) => back.partials.push((r, data)),
                Binding::Locals => back.locals = data,
                Binding::Params | Binding::HostValues | Binding::Spilled(_) => {}
            }
        }
        Ok(Some(back))
    }
}
