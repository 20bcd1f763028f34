//! The launch routine of every GPU backend ([`launch`]), over the little a backend implements
//! with its API ([`GpuDriver`], [`GpuLaunch`]): compile a variant, take an argument, dispatch an
//! entry point, finish.
//!
//! A launch: the kernel's variant for these arguments ([`KernelCache`]); each array argument
//! placed (present data in place, 3.3 section 2.6.2; an array the kernel never touches only
//! by its length; the rest copied in for the launch, and out when written), each scalar
//! passed; the grid sized ([`Grid`]); the entry points dispatched in the order the kernel's
//! program gives (host loops repeat some); then, unless nothing comes back, the status words,
//! reduction partials and locals read and turned into the launch's output or its error.

use std::sync::Arc;

use super::grid::{Grid, GridLimits};
use super::kernel_cache::{KernelCache, Variant};
use super::layout::LaunchLayout;
use super::memo::{Dispatches, Kept, Places, Replay};
use super::status;
use crate::ir::args::{KernelArg, KernelOutput, ScalarValue};
use crate::ir::{Kernel, ParamId, ParamKind};
use crate::observe::{notify, Notify};
use crate::present::{ElemLayout, Named, Placement, PresentTable};
use crate::queue::Queue;
use crate::{Error, Result};

/// Where a launch runs among the device's activity queues (3.3 section 2.16).
#[derive(Clone, Copy, Debug)]
pub struct Order<'a> {
    /// The queue it runs on.
    pub queue: Queue,
    /// The queues it runs after (every queue for `None`).
    pub waits: Option<&'a [Queue]>,
}

/// How an array argument reaches the kernel.
pub enum ArrayPlace<'d> {
    /// The kernel never touches it: only its length is passed.
    Unused {
        /// Its length in elements.
        len: usize,
    },
    /// Present on the device: used where it is.
    Present(Placement),
    /// Not present: copied in for this launch (and out after it when `back`).
    Copied {
        /// The host data.
        data: &'d [u8],
        /// Whether the kernel writes it, so that it comes back.
        back: bool,
    },
}

/// What a launch that waited for its kernel brings back besides arrays.
#[derive(Default)]
pub struct Readback {
    /// The status words ([`status`]), when the kernel can set them.
    pub status: Vec<u8>,
    /// The per-block partials of each reduction the host folds, by index in
    /// [`LaunchLayout::reductions`].
    pub partials: Vec<(usize, Vec<u8>)>,
    /// The locals buffer, when [`LaunchLayout::reads_locals`].
    pub locals: Vec<u8>,
}

/// A GPU device, as the launch routine uses it.
pub trait GpuDriver {
    /// One variant of a kernel, compiled and loaded, with what its launches reuse.
    type Compiled;
    /// A launch being assembled.
    type Launch<'a>: GpuLaunch
    where
        Self: 'a;

    /// The backend's name in messages (`cuda`, `wgpu`).
    fn name(&self) -> &'static str;
    /// The device's name in messages.
    fn device_name(&self) -> String;
    /// The kernels this device has loaded.
    fn kernels(&self) -> &KernelCache<Self::Compiled>;
    /// What is present on the device.
    fn present(&self) -> &PresentTable;
    /// Whether the target holds `usize` in 64 bits (so a narrowed variant can pay).
    fn wide_usize(&self) -> bool;
    /// The device's grid limits.
    fn grid_limits(&self) -> GridLimits;
    /// Whether a launch whose only readback would be its status words (its accesses not
    /// proven in bounds) may return before the device ran it: the driver then checks them at
    /// its next synchronization and reports what stopped the launch as
    /// [`crate::Error::EarlierLaunch`]. Otherwise such a launch waits.
    fn checks_status_later(&self) -> bool {
        false
    }
    /// Lowers and loads `variant` of `kernel`.
    fn compile(&self, kernel: &Kernel, variant: Variant) -> Result<Self::Compiled>;
    /// The layout of a compiled kernel.
    fn layout(compiled: &Self::Compiled) -> &LaunchLayout;
    /// Starts a launch of `compiled` (`kernel`'s variant) in `order`: the arguments follow, in
    /// parameter order.
    fn begin<'a>(
        &'a self,
        kernel: &'a Kernel,
        compiled: Arc<Self::Compiled>,
        order: Order<'a>,
    ) -> Result<Self::Launch<'a>>;
    /// Makes again, in `order`, the launch of `kernel` that [`GpuLaunch::replay`] kept as
    /// `kept` (the same variant and arguments, the present table unchanged); `false` when it
    /// cannot here (the launch is then assembled as usual). A backend that keeps none never
    /// gets here.
    fn replay(
        &self,
        _kernel: &Kernel,
        _kept: &(dyn std::any::Any + Send),
        _order: Order<'_>,
    ) -> Result<bool> {
        Ok(false)
    }
}

/// One launch, assembled by [`launch`]: every argument, then [`GpuLaunch::ready`], the
/// dispatches, and [`GpuLaunch::finish`].
pub trait GpuLaunch {
    /// Parameter `p`, a scalar.
    fn scalar(&mut self, p: ParamId, v: ScalarValue) -> Result<()>;
    /// Parameter `p`, an array.
    fn array(&mut self, p: ParamId, place: ArrayPlace<'_>) -> Result<()>;
    /// Every argument is given and `grid` sized; `deferred`: nothing comes back and nothing can
    /// go wrong, so [`GpuLaunch::finish`] may return before the device ran the kernel (the
    /// device runs it before anything later that reads its results, as 3.3 section 2.16 asks
    /// of a synchronous construct).
    fn ready(&mut self, grid: &Grid, deferred: bool) -> Result<()>;
    /// Entry point `e` over `blocks` blocks (one thread where the entry point is single: then
    /// `blocks` is the grid before it, which a fold reads), the host loops' variables at
    /// `host`.
    fn dispatch(&mut self, e: usize, blocks: u32, host: &[i128]) -> Result<()>;
    /// Asked before [`GpuLaunch::ready`] of a launch whose arguments, grid and dispatches are
    /// those of the kernel's launch before: keep what is dispatched, so that
    /// [`GpuLaunch::replay`] can give it.
    fn keep(&mut self) {}
    /// After the dispatches of a launch asked to [`GpuLaunch::keep`]: what
    /// [`GpuDriver::replay`] needs to make it again, where it can (a deferred launch on the
    /// device's own queue, say).
    fn replay(&mut self) -> Option<Box<dyn std::any::Any + Send>> {
        None
    }
    /// Submits what was dispatched. Deferred: returns `None`, maybe before the device ran it.
    /// Otherwise waits, writes the copied arrays the kernel wrote back into `args`, and returns
    /// what else came back.
    fn finish(self, args: &mut [KernelArg<'_>], grid: &Grid) -> Result<Option<Readback>>;
}

/// Runs `kernel` on `driver` with `args` (one per parameter, in order), in `order`; `shared`:
/// the kernel is that `Arc`'s, which the device may keep to know it again by its address
/// ([`KernelCache::find`]).
pub fn launch<D: GpuDriver>(
    driver: &D,
    kernel: &Kernel,
    shared: Option<&Arc<Kernel>>,
    args: &mut [KernelArg<'_>],
    order: Order<'_>,
) -> Result<KernelOutput> {
    if args.len() != kernel.params.len() {
        return Err(internal(format!(
            "{} arguments for {} parameters",
            args.len(),
            kernel.params.len()
        )));
    }
    let found = driver
        .kernels()
        .find(kernel, shared, args, driver.wide_usize(), |v| {
            let start = std::time::Instant::now();
            let compiled = driver.compile(kernel, v);
            crate::observe::time::compile(start.elapsed());
            compiled
        })?;
    let compiled = Arc::clone(&found.compiled);
    let layout = D::layout(&compiled);
    // The kernel's memo: held through the launch (launches of one kernel are one at a time).
    let mut memo = found.memo.lock().unwrap_or_else(|e| e.into_inner());
    let generation = driver.present().generation();
    // The same launch again (a time loop's): made as the backend kept it.
    if let Some(r) = memo
        .replay
        .as_ref()
        .filter(|r| r.fits(found.variant, generation, args))
    {
        if driver.replay(kernel, r.kept.as_ref(), order)? {
            if let Some(d) = &memo.dispatches {
                notify_launch(driver, kernel, layout, &d.done);
            }
            return Ok(KernelOutput::default());
        }
    }
    let mut launch = driver.begin(kernel, Arc::clone(&found.compiled), order)?;
    let (largest, copied) = match memo.places.as_ref().filter(|p| p.fits(args, generation)) {
        // The same arrays, and nothing added to or removed from the table since.
        Some(places) => {
            for (p, arg) in args.iter().enumerate() {
                let id = p as ParamId;
                match (arg, places.at.get(p).copied().flatten()) {
                    (_, Some(Kept::Present(at))) => launch.array(id, ArrayPlace::Present(at))?,
                    (_, Some(Kept::Unused(len))) => launch.array(id, ArrayPlace::Unused { len })?,
                    (KernelArg::Scalar(v), None) => launch.scalar(id, *v)?,
                    (_, None) => {
                        return Err(internal(format!(
                            "argument {p} has no place in the launch memo"
                        )))
                    }
                }
            }
            (places.largest, false)
        }
        None => {
            let (largest, copied, at) = place_arguments(driver, kernel, &found, args, &mut launch)?;
            if !copied {
                memo.places = Some(Places::new(args, generation, at, largest));
            }
            (largest, copied)
        }
    };
    // A launch that copies nothing (every array present) and brings nothing back (no
    // reduction, no value, and no status it could set: its accesses proven in bounds, or
    // checked by the driver later) returns without waiting.
    let deferred = !copied
        && !layout.reads_back_values()
        && if layout.status_used {
            driver.checks_status_later()
        } else {
            found.in_bounds
        };
    let memo = &mut *memo;
    let grid = match memo
        .dispatches
        .as_ref()
        .filter(|d| !copied && d.fits(found.variant, args))
    {
        // The same sizes and integer values: the same grid and dispatches.
        Some(d) => {
            // The same arrays and sizes as the launch before: kept to be made again where
            // every argument is the same next time.
            let again = deferred && memo.places.is_some();
            if again {
                launch.keep();
            }
            launch.ready(&d.ready, deferred)?;
            for (e, blocks, host) in &d.steps {
                launch.dispatch(*e, *blocks, host)?;
            }
            memo.replay = match launch.replay().filter(|_| again) {
                Some(kept) => Some(Replay::new(found.variant, generation, args, kept)),
                None => None,
            };
            &d.done
        }
        None => {
            memo.replay = None;
            let mut grid = Grid::new(layout, driver.grid_limits(), largest as u64, args)?;
            let ready = grid.clone();
            launch.ready(&grid, deferred)?;
            let mut steps = Vec::new();
            layout.program.run(args, &mut |e, iterations, host| {
                if e >= layout.entries.len() {
                    return Err(internal(format!(
                        "`{}` has no entry point {e}",
                        kernel.name
                    )));
                }
                let blocks = grid.blocks_for(e, iterations);
                steps.push((e, blocks, host.to_vec()));
                launch.dispatch(e, blocks, host)
            })?;
            if copied {
                memo.dispatches = None;
                return finish(driver, kernel, layout, launch, args, &grid);
            }
            &memo
                .dispatches
                .insert(Dispatches::new(found.variant, args, ready, grid, steps))
                .done
        }
    };
    finish(driver, kernel, layout, launch, args, grid)
}

/// Places each argument: a scalar passed, an array the kernel never touches by its length,
/// a present one where it is, others copied. Returns the largest array's length, whether
/// anything was copied, and each parameter's place.
fn place_arguments<D: GpuDriver>(
    driver: &D,
    kernel: &Kernel,
    found: &super::kernel_cache::Found<D::Compiled>,
    args: &[KernelArg<'_>],
    launch: &mut D::Launch<'_>,
) -> Result<(usize, bool, Vec<Option<Kept>>)> {
    let (mut largest, mut copied) = (1usize, false);
    let mut places = vec![None; args.len()];
    for (p, param) in kernel.params.iter().enumerate() {
        let id = p as ParamId;
        match (&args[p], &param.kind) {
            (KernelArg::Scalar(v), ParamKind::Scalar(_)) => launch.scalar(id, *v)?,
            (KernelArg::Read(_) | KernelArg::Write(_), ParamKind::Array { elem, .. }) => {
                let (data, back): (&[u8], bool) = match &args[p] {
                    KernelArg::Read(d) => (d, false),
                    KernelArg::Write(d) => (d, true),
                    KernelArg::Scalar(_) => (&[], false),
                };
                let len = data.len() / (elem.size() as usize).max(1);
                if !found.accessed.get(p).copied().unwrap_or(true) {
                    places[p] = Some(Kept::Unused(len));
                    launch.array(id, ArrayPlace::Unused { len })?;
                    continue;
                }
                largest = largest.max(len);
                let var = Named::unlocated(&param.name);
                let at = driver.present().lookup(
                    data.as_ptr() as usize,
                    data.len(),
                    ElemLayout::from(*elem),
                    var,
                )?;
                let place = match at {
                    Some(at) => {
                        places[p] = Some(Kept::Present(at));
                        ArrayPlace::Present(at)
                    }
                    None => {
                        notify(Notify::Transfer, || {
                            format!(
                                "transfer `{}`: {} bytes to the device{}",
                                param.name,
                                data.len(),
                                if back { " and back" } else { "" }
                            )
                        });
                        copied = true;
                        ArrayPlace::Copied { data, back }
                    }
                };
                launch.array(id, place)?;
            }
            _ => {
                return Err(internal(format!(
                    "argument {p} does not match its parameter"
                )))
            }
        }
    }
    Ok((largest, copied, places))
}

/// The end of a launch: `ACC_NOTIFY`, then (unless it returned without waiting) the status,
/// partials and locals turned into its output.
fn finish<D: GpuDriver>(
    driver: &D,
    kernel: &Kernel,
    layout: &LaunchLayout,
    launch: D::Launch<'_>,
    args: &mut [KernelArg<'_>],
    grid: &Grid,
) -> Result<KernelOutput> {
    notify_launch(driver, kernel, layout, grid);
    let Some(back) = launch.finish(args, grid)? else {
        return Ok(KernelOutput::default());
    };
    if layout.status_used {
        status::check(&back.status, kernel, &driver.device_name())?;
    }
    let mut out = KernelOutput::default();
    for (r, data) in &back.partials {
        let (Some(slot), Some(&word)) = (layout.reductions.get(*r), layout.partial_sizes.get(*r))
        else {
            continue;
        };
        let (Some(into), Some(entry)) = (slot.into, slot.entry) else {
            continue;
        };
        out.push_partials(
            kernel,
            into,
            slot.op,
            slot.ty,
            slot.len as usize,
            grid.blocks.get(entry).copied().unwrap_or(1) as usize,
            data,
            word as usize,
            layout.index_bytes,
        );
    }
    if layout.reads_locals() {
        out.read_locals(
            &layout.reductions,
            layout.result,
            &back.locals,
            layout.index_bytes,
        );
    }
    Ok(out)
}

/// `ACC_NOTIFY`: a kernel's launch, its entry points and grid.
fn notify_launch<D: GpuDriver>(driver: &D, kernel: &Kernel, layout: &LaunchLayout, grid: &Grid) {
    let limits = grid.limits();
    notify(Notify::Launch, || {
        format!(
            "{} kernel `{}`: {} entry point(s), {}s of {}: {:?}",
            driver.name(),
            kernel.name,
            layout.entries.len(),
            limits.words.0,
            limits.threads,
            grid.blocks
        )
    });
}

fn internal(what: String) -> Error {
    Error::Unsupported {
        what: format!("internal error: {what}"),
    }
}

#[cfg(test)]
mod tests;
