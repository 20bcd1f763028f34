//! Launches recorded to run later (issue 16): a launch that need not wait (nothing comes back,
//! arrays present, proven in bounds) is recorded instead of launched when its module is still
//! compiling ([`super::compile`]), or when the GPU is still busy with earlier launches, and
//! returns at once. Recorded launches are submitted in order, as chains of a CUDA graph
//! ([`super::graph`]) where there are several: by a thread of the device's own (the
//! flusher) once [`BATCH`] are recorded or [`LINGER`] after the first, and by every other use
//! of the device (a launch that waits, a copy, a wait, a free) before it goes on.
//!
//! So a program launching many short regions pays the driver's launch once per batch and the
//! submission happens beside the program's thread; a launch made while the GPU is idle is
//! launched at once (the GPU would otherwise wait for the batch), and a recorded launch whose
//! kernel is compiled (and which is not behind one still compiling) waits about [`LINGER`]
//! at most for the GPU, whatever the program does next. Order is kept on the host: while
//! launches are recorded or being submitted, later launches are recorded behind them; once
//! the device's stream was handed to another library, nothing is recorded. The GPU never
//! waits for the host (see `compile`'s notes on module loading).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

use cudarc::driver::{sys, CudaContext, CudaStream};

use acc_core::{Error, Result};

use super::compile::{Code, Job};
pub use super::dispatch::{slot_addresses, Dispatch};
use super::graph::{Chain, CHAIN};
use super::result::cuda_error;

/// Recorded launches at which the flusher submits them without waiting for [`LINGER`].
pub const BATCH: usize = CHAIN;

/// How long the flusher lets a batch grow after its first launch is recorded: long enough
/// for a time loop of short regions (2 to 5 us each) to record a chain's worth, short beside
/// any host work a program overlaps with its kernels.
pub const LINGER: Duration = Duration::from_micros(60);

/// `ACC_NOTIFY`: launch `name` recorded, and why.
pub fn notify_recorded(name: &str, why: &str) {
    acc_core::observe::notify(acc_core::observe::Notify::Launch, || {
        format!("cuda: `{name}` recorded ({why}), to be submitted with the launches after it")
    });
}

/// A recorded launch: its variant's module (maybe still compiling) and its dispatches.
pub struct Queued {
    pub job: Arc<Job>,
    pub dispatches: Vec<Dispatch>,
}

/// What submits: the graph chain, reused (held while submitting, so a use of the device that
/// flushes waits for a submission under way before it goes on).
struct Submitter {
    chain: Option<Chain>,
    /// Whether graphs are used: off after one failed (the launches then go one by one).
    graphs: bool,
}

/// What wakes the flusher.
#[derive(Default)]
struct Signals {
    /// A launch was recorded into an empty queue.
    work: bool,
    /// The device is being shut down.
    shutdown: bool,
    /// Whether the thread was started.
    started: bool,
}

/// The launches a device recorded, and how they are submitted.
pub struct Recorder {
    ctx: Arc<CudaContext>,
    /// Whether launches made while the GPU is busy are recorded (`ACC_CUDA_GRAPHS=0` says
    /// no; launches behind a compiling module are recorded either way).
    batch: bool,
    stream: Arc<CudaStream>,
    queued: Mutex<Vec<Queued>>,
    /// Whether launches are recorded or being submitted (read by every launch without a lock).
    has_queued: AtomicBool,
    submitting: Mutex<Submitter>,
    /// The failure of a recorded launch, reported by every later use of the device: the
    /// launches behind it were dropped, so no later result is right.
    failure: Mutex<Option<String>>,
    /// Whether `failure` is set (read by every launch without the lock).
    failed: AtomicBool,
    /// Whether the device's stream was handed to another library (`acc_get_cuda_stream`),
    /// which may queue work on it at any time: launches are then made in program order, none
    /// recorded.
    shared: AtomicBool,
    /// Whether the device's stream may still run a launch that returned without waiting for
    /// it: what reads or writes device memory from the host, or frees it, waits first.
    pub pending: AtomicBool,
    signals: Mutex<Signals>,
    wake: Condvar,
    flusher: Mutex<Option<std::thread::JoinHandle<()>>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Recorder {
    /// A recorder submitting on `stream` of `ctx`; `batch` says whether launches made while
    /// the GPU is busy are recorded and batches go as graphs (`ACC_CUDA_GRAPHS=0` says no; a
    /// driver older than CUDA 12, which lacks the calls `graph` makes, gets no graphs).
    pub fn new(ctx: Arc<CudaContext>, stream: Arc<CudaStream>, batch: bool) -> Arc<Recorder> {
        let graphs = batch && super::module_cache::driver_version() >= 12000;
        Arc::new(Recorder {
            ctx,
            batch,
            stream,
            queued: Mutex::new(Vec::new()),
            has_queued: AtomicBool::new(false),
            submitting: Mutex::new(Submitter {
                chain: None,
                graphs,
            }),
            failure: Mutex::new(None),
            failed: AtomicBool::new(false),
            shared: AtomicBool::new(false),
            pending: AtomicBool::new(false),
            signals: Mutex::new(Signals::default()),
            wake: Condvar::new(),
            flusher: Mutex::new(None),
        })
    }

    /// Whether launches are recorded or being submitted: a launch must then be recorded
    /// behind them (or flush them first) to keep its order.
    pub fn behind(&self) -> bool {
        self.has_queued.load(Ordering::Acquire)
    }

    /// Whether launches may be recorded at all: not once the device's stream was handed to
    /// another library ([`Recorder::share_stream`]).
    pub fn may_record(&self) -> bool {
        !self.shared.load(Ordering::Acquire)
    }

    /// Notes that the device's stream was handed to another library: from now on no launch
    /// is recorded, so work that library queues later comes after every launch before it.
    pub fn share_stream(&self) {
        self.shared.store(true, Ordering::Release);
    }

    /// The failure of an earlier recorded launch, if any (checked by every launch, so that a
    /// launch made after the flusher failed does not return results missing its launches).
    pub fn check(&self) -> Result<()> {
        if self.failed.load(Ordering::Acquire) {
            self.sticky_failure()
        } else {
            Ok(())
        }
    }

    /// How many launches are recorded.
    pub fn len(&self) -> usize {
        if self.behind() {
            lock(&self.queued).len()
        } else {
            0
        }
    }

    /// Whether a launch that may be recorded should be, nothing being recorded: batching is
    /// on and the device's stream is still running launches that returned early (asked of the
    /// driver only when there may be some).
    pub fn gpu_busy(&self) -> bool {
        // SAFETY: the device's stream, its context bound by the launch asking.
        self.batch
            && self.pending.load(Ordering::Acquire)
            && unsafe { super::result::stream_idle(self.stream.cu_stream()) } == Ok(false)
    }

    /// Records `q`, to be submitted by the flusher or the device's next other use.
    pub fn record(self: &Arc<Self>, q: Queued) {
        let n = {
            let mut queued = lock(&self.queued);
            queued.push(q);
            self.has_queued.store(true, Ordering::Release);
            queued.len()
        };
        if n == 1 || n == BATCH {
            let mut s = lock(&self.signals);
            s.work |= n == 1;
            if !s.started && !s.shutdown {
                s.started = true;
                let me = Arc::clone(self);
                // Without a flusher (no thread could start), the device's next use submits.
                if let Ok(h) = std::thread::Builder::new()
                    .name("acc-cuda-flush".into())
                    .spawn(move || me.flusher_loop())
                {
                    *lock(&self.flusher) = Some(h);
                }
            }
            drop(s);
            self.wake.notify_one();
        }
    }

    /// The flusher: waits for a first recorded launch, lets the batch grow for [`LINGER`] (or
    /// until it is full), submits it; until the device shuts down.
    fn flusher_loop(&self) {
        let mut s = lock(&self.signals);
        loop {
            while !s.shutdown && !s.work {
                s = self.wake.wait(s).unwrap_or_else(|e| e.into_inner());
            }
            if s.shutdown {
                return;
            }
            s = self
                .wake
                .wait_timeout_while(s, LINGER, |s| !s.shutdown && self.len() < BATCH)
                .unwrap_or_else(|e| e.into_inner())
                .0;
            s.work = false;
            drop(s);
            // A failure is kept as the device's sticky failure (`flush`), reported by its
            // next use.
            let _ = self.flush();
            s = lock(&self.signals);
        }
    }

    /// Stops the flusher (before the device's memory and modules go).
    pub fn shutdown(&self) {
        lock(&self.signals).shutdown = true;
        self.wake.notify_all();
        if let Some(h) = lock(&self.flusher).take() {
            let _ = h.join();
        }
    }

    /// Drops the graph chain (after the stream is waited for, before modules are unloaded).
    pub fn release_graphs(&self) {
        if self.ctx.bind_to_thread().is_ok() {
            lock(&self.submitting).chain = None;
        }
    }

    /// Submits the recorded launches, in order, each once its module is compiled. Every use
    /// of the device but a launch that may be recorded calls this first.
    pub fn flush(&self) -> Result<()> {
        if !self.behind() {
            return self.sticky_failure();
        }
        // Held until they are submitted: another thread's flush meanwhile waits, rather than
        // going on before launches recorded before it.
        let mut sub = lock(&self.submitting);
        loop {
            let batch = {
                let mut queued = lock(&self.queued);
                if queued.is_empty() {
                    self.has_queued.store(false, Ordering::Release);
                    break;
                }
                std::mem::take(&mut *queued)
            };
            // A panic while submitting (an internal error, or a driver call cudarc cannot
            // find) may have launched part of the batch: a failure like any other.
            let submitted = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                self.submit(&mut sub, &batch)
            }))
            .unwrap_or_else(|_| {
                Err(Error::Unsupported {
                    what: "internal error: submitting recorded launches panicked".into(),
                })
            });
            if let Err(e) = submitted {
                *lock(&self.failure) = Some(e.to_string());
                self.failed.store(true, Ordering::Release);
                let mut queued = lock(&self.queued);
                queued.clear();
                self.has_queued.store(false, Ordering::Release);
                return Err(e);
            }
        }
        self.sticky_failure()
    }

    fn sticky_failure(&self) -> Result<()> {
        match &*lock(&self.failure) {
            Some(what) => Err(Error::Unsupported {
                what: format!("{what} (a launch recorded to run later failed; the device's later results would be wrong)"),
            }),
            None => Ok(()),
        }
    }

    /// Launches `batch` in order: as graph chains where it has several dispatches, one by
    /// one otherwise (or where a graph fails). What is ready goes before waiting for a module
    /// still compiling.
    fn submit(&self, sub: &mut Submitter, batch: &[Queued]) -> Result<()> {
        self.ctx
            .bind_to_thread()
            .map_err(|e| cuda_error("binding the context", e))?;
        let mut compiled: Vec<(sys::CUfunction, &Dispatch)> = Vec::new();
        for q in batch {
            if q.job.get().is_none() {
                self.launch_all(sub, &compiled)?;
                compiled.clear();
            }
            let code = q.job.wait()?;
            for d in &q.dispatches {
                compiled.push((function(code, d)?, d));
            }
        }
        self.launch_all(sub, &compiled)
    }

    /// Launches `all` in order, in chains of [`CHAIN`].
    fn launch_all(&self, sub: &mut Submitter, all: &[(sys::CUfunction, &Dispatch)]) -> Result<()> {
        let stream = self.stream.cu_stream();
        for part in all.chunks(CHAIN) {
            // Before and after: a settle on another thread between the two then still finds
            // the launch pending.
            self.pending.store(true, Ordering::Release);
            if sub.graphs && part.len() > 1 {
                let chained = match &mut sub.chain {
                    Some(c) => c.launch(part, stream),
                    None => Chain::new(part[0].0, part[0].1).and_then(|mut c| {
                        let r = c.launch(part, stream);
                        sub.chain = Some(c);
                        r
                    }),
                };
                match chained {
                    Ok(()) => {
                        self.pending.store(true, Ordering::Release);
                        acc_core::observe::notify(acc_core::observe::Notify::Launch, || {
                            format!(
                                "cuda: {} recorded launches submitted as one graph",
                                part.len()
                            )
                        });
                        continue;
                    }
                    // Nothing of `part` was launched: one by one from here on.
                    Err(what) => {
                        acc_core::observe::notify(acc_core::observe::Notify::Launch, || {
                            format!("cuda: recorded launches go one by one from here ({what})")
                        });
                        sub.graphs = false;
                        sub.chain = None;
                    }
                }
            }
            let (mut slots, mut addresses) = (Vec::new(), Vec::new());
            for (f, d) in part {
                launch(*f, d, stream, (&mut slots, &mut addresses))
                    .map_err(|e| cuda_error("launching a recorded launch", e.0))?;
            }
            self.pending.store(true, Ordering::Release);
            acc_core::observe::notify(acc_core::observe::Notify::Launch, || {
                format!(
                    "cuda: {} recorded launch(es) submitted one by one",
                    part.len()
                )
            });
        }
        Ok(())
    }
}

/// Entry point `d.entry` of `code`.
pub fn function(code: &Code, d: &Dispatch) -> Result<sys::CUfunction> {
    code.functions
        .get(d.entry)
        .map(|f| f.raw())
        .ok_or_else(|| Error::Unsupported {
            what: format!("internal error: no entry point {}", d.entry),
        })
}

/// Launches dispatch `d` of `f` on `stream` (the context bound), its parameters copied into
/// `slots` and their addresses into `addresses` (buffers a caller keeps between launches).
pub fn launch(
    f: sys::CUfunction,
    d: &Dispatch,
    stream: sys::CUstream,
    (slots, addresses): (&mut Vec<u64>, &mut Vec<usize>),
) -> super::result::DriverResult<()> {
    slots.clear();
    slots.extend_from_slice(&d.params);
    slot_addresses(slots, addresses);
    // SAFETY: the parameters are the entry point's, in 64-bit slots as `CudaLaunch` made
    // them, each at an address in `addresses`; the memory they point to (present data, the
    // launch's scratch) is freed only after the device submitted its recorded launches and
    // waited for its stream.
    unsafe { super::result::launch_kernel(f, (d.grid, d.block), stream, addresses) }
}

#[cfg(all(test, feature = "gpu-tests"))]
mod tests;
