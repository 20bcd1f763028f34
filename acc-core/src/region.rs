//! Launching a compute construct (OpenACC 3.3 section 2.5): deciding where it runs from its `if`
//! and `self` clauses and the current device, and honouring `async` and `wait`.

use std::sync::Arc;

use crate::device::{Device, HostThreads};
use crate::device_type::DeviceType;
use crate::error::{Location, Result};
use crate::icv::Inherited;
use crate::queue::Queue;
use crate::runtime::Runtime;

/// The compute constructs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ComputeKind {
    /// `parallel` (3.3 section 2.5.1).
    Parallel,
    /// `kernels` (3.3 section 2.5.3).
    Kernels,
    /// `serial` (3.3 section 2.5.2): one gang, one worker, vector length 1.
    Serial,
}

/// A compute construct in the user's source: what it is and where.
#[derive(Clone, Copy, Debug)]
pub struct RegionSite {
    /// Which construct.
    pub kind: ComputeKind,
    /// The enclosing function's name.
    pub function: &'static str,
    /// Where the directive is written.
    pub location: Location,
    /// Each variable the region uses and its data attribute as the macro sees it (explicit
    /// clause, or implicit and why), for `ACC_INFO`.
    pub vars: &'static [(&'static str, &'static str)],
    /// The region's loop constructs and how the multicore device runs them, for `ACC_INFO`.
    pub loops: &'static [LoopSite],
}

/// A loop construct of a region as the macro saw it (`ACC_INFO`).
#[derive(Clone, Copy, Debug)]
pub struct LoopSite {
    /// Its line in the user's source.
    pub line: u32,
    /// Its loop variables.
    pub vars: &'static str,
    /// Its directive's clauses as written (`gang vector reduction`).
    pub directive: &'static str,
    /// How the multicore device runs it.
    pub on_threads: LoopOnThreads,
}

/// How the multicore device runs a loop construct.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoopOnThreads {
    /// Its iterations are split into chunks over the threads.
    Split,
    /// Inside a split loop: each chunk runs it.
    InsideSplit,
    /// `seq`, or a `serial` region: in order on one thread.
    Seq,
    /// Not a parallel loop here (no level clause or `independent` in `kernels`, where the
    /// dependence test could not show its iterations independent).
    NotParallel,
}

/// The run-time values of a compute construct's launch clauses.
#[derive(Clone, Debug, Default)]
pub struct LaunchClauses {
    /// `if(cond)`: `Some(false)` runs the region on the local thread (3.3 L1155-1156).
    pub if_cond: Option<bool>,
    /// `self(cond)`: `Some(true)` runs the region on the host (3.3 L1159-1163).
    pub self_cond: Option<bool>,
    /// `async(n)` (`Some(ASYNC_NOVAL)` for a bare `async`).
    pub async_arg: Option<i64>,
    /// `wait(q, ..)`: `Some(vec![])` for a bare `wait`.
    pub wait: Option<Vec<i64>>,
    /// A `default(present)` clause is visible at the construct: arrays no clause names must
    /// be present on the device (3.3 section 2.6.2).
    pub default_present: bool,
}

/// How a launched region's host twin runs.
pub enum Exec<'a> {
    /// Sequentially on the calling thread.
    Sequential,
    /// With its outermost parallel loops split across these threads.
    Threads(&'a dyn HostThreads, Inherited),
    /// As a kernel on this device.
    Kernel(&'a dyn Device),
}

/// A compute region that has been launched: the device it runs on and how.
pub struct Launch {
    device: Option<Arc<dyn Device>>,
    kind: ComputeKind,
    queue: Queue,
    /// The queues the `wait` clause names (every queue the device has for a bare `wait`:
    /// `None`).
    waits: Option<Vec<Queue>>,
    default_present: bool,
    site: RegionSite,
    /// `ACC_TIME`'s timer of this entry.
    _timer: Option<crate::observe::time::RegionTimer>,
}

impl ComputeKind {
    /// The directive's name.
    pub fn name(self) -> &'static str {
        match self {
            ComputeKind::Parallel => "parallel",
            ComputeKind::Kernels => "kernels",
            ComputeKind::Serial => "serial",
        }
    }
}

impl Drop for Launch {
    fn drop(&mut self) {
        crate::observe::notify(crate::observe::Notify::Region, || {
            format!(
                "leave `{}` region in `{}` at {}",
                self.site.kind.name(),
                self.site.function,
                self.site.location
            )
        });
    }
}

impl Launch {
    /// Decides where the region runs and waits for the queues its `wait` clause names.
    pub fn begin(rt: &Runtime, site: &RegionSite, clauses: &LaunchClauses) -> Result<Launch> {
        crate::observe::notify(crate::observe::Notify::Region, || {
            format!(
                "enter `{}` region in `{}` at {}",
                site.kind.name(),
                site.function,
                site.location
            )
        });
        let mut timer = crate::observe::time::enter(site.kind.name(), site.function, site.location);
        let queue = Queue::resolve(clauses.async_arg)?;
        let mut waits = Some(Vec::new());
        if let Some(w) = &clauses.wait {
            let named = w
                .iter()
                .map(|&q| Queue::for_wait(q))
                .collect::<Result<Vec<_>>>()?;
            waits = if w.is_empty() { None } else { Some(named) };
        }
        let local = clauses.if_cond == Some(false)
            || (clauses.if_cond != Some(false) && clauses.self_cond == Some(true));
        let device = if local {
            None
        } else {
            Some(rt.current_device()?)
        };
        // Shared-memory devices complete every operation before the launching call returns, so
        // the queues named by `wait` are already drained and queue order holds trivially; a
        // kernel device orders the launch after them (`Launch::waits`), or, where the region
        // does not run as a kernel there, the host waits for them here.
        if let Some(d) = &device {
            if !d.runs_kernels() || queue == Queue::Sync {
                match &waits {
                    Some(w) => w.iter().try_for_each(|&q| d.synchronize_queue(q))?,
                    None => d.synchronize()?,
                }
            }
        }
        if let Some(t) = &mut timer {
            match &device {
                Some(d) if d.runs_kernels() => {}
                Some(d) if site.kind != ComputeKind::Serial => {
                    let n = d.host_threads().map_or(1, |h| h.parallelism());
                    t.runs_on_host(if n == 1 {
                        "1 thread".into()
                    } else {
                        format!("{n} threads")
                    })
                }
                _ => t.runs_on_host("1 thread".into()),
            }
        }
        Ok(Launch {
            device,
            kind: site.kind,
            queue,
            waits,
            default_present: clauses.default_present,
            site: *site,
            _timer: timer,
        })
    }

    /// The queues the launch waits for first; `None`: every queue (a bare `wait` clause).
    pub fn waits(&self) -> Option<&[Queue]> {
        self.waits.as_deref()
    }

    /// The device the region runs on: `Host` when it runs on the local thread.
    pub fn device_type(&self) -> DeviceType {
        self.device
            .as_ref()
            .map_or(DeviceType::Host, |d| d.device_type())
    }

    /// The device the region runs on; `None` when it runs on the local thread (`if(false)`,
    /// `self`).
    pub fn device(&self) -> Option<&Arc<dyn Device>> {
        self.device.as_ref()
    }

    /// Whether arrays that no clause names must already be present (`default(present)`).
    pub fn default_present(&self) -> bool {
        self.default_present
    }

    /// The queue the region was launched on.
    pub fn queue(&self) -> Queue {
        self.queue
    }

    /// How the host twin runs. A `serial` region runs on the calling thread even on multicore.
    pub fn exec(&self) -> Exec<'_> {
        match (&self.device, self.kind) {
            (Some(d), _) if d.runs_kernels() => Exec::Kernel(d.as_ref()),
            (Some(d), kind) if kind != ComputeKind::Serial => match d.host_threads() {
                Some(t) => Exec::Threads(t, Inherited::capture(d.device_type())),
                None => Exec::Sequential,
            },
            _ => Exec::Sequential,
        }
    }

    /// Runs `body` as the sequential host twin, with the "executing on" state of the device.
    pub fn run_sequential<R>(&self, body: impl FnOnce() -> R) -> R {
        Inherited::capture(self.device_type()).run(body)
    }
}
