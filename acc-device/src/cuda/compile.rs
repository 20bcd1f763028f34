//! Kernels compiled off the launching thread (issue 16, the first launches): a kernel variant
//! the disk cache does not hold is compiled by a thread of its own ([`Job`]), and the first
//! launch of it that need not wait (nothing comes back) is recorded
//! ([`super::recorded::Queued`]) and returns at once. So the first time step of a program compiles its kernels at once, in `ptxas`
//! processes where a toolkit is installed (the driver's JIT compiles one module at a time per
//! process), while the host goes on.
//!
//! Order is kept on the host: while launches are recorded, later launches are recorded behind
//! them, and anything else that uses the device (a launch that waits, a copy, a wait, a free)
//! first launches the recorded ones, in order, waiting for their modules. The GPU never waits
//! for the host: loading a module may synchronize the context (lazy loading does), so a stream
//! held at a gate until a module is loaded would deadlock.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};

use acc_core::{Error, Result};

use super::module_cache::{Function, Module};

/// A variant's module, loaded, and its entry points in the order of the lowered kernel's.
pub struct Code {
    pub functions: Vec<Function>,
    /// The module the functions belong to (unloaded when this drops).
    _module: Module,
}

impl Code {
    /// `module`'s entry points `names`.
    pub fn new(module: Module, names: &[String]) -> Result<Code> {
        let functions = names
            .iter()
            .map(|e| module.function(e))
            .collect::<Result<Vec<_>>>()?;
        Ok(Code {
            functions,
            _module: module,
        })
    }
}

/// A variant's module: loaded already, or being compiled by a thread.
pub struct Job {
    /// The kernel's name, for errors.
    name: String,
    code: OnceLock<std::result::Result<Code, String>>,
    /// What `done` waits with.
    waiting: Mutex<()>,
    done: Condvar,
    /// Whether a launch was recorded to run once the module is there: one per job (later
    /// launches of the variant wait for it, so that a time loop does not pile up launches).
    recorded: AtomicBool,
}

impl Job {
    /// A job whose module is `code` already.
    pub fn ready(name: &str, code: Code) -> Arc<Job> {
        let job = Job::new(name);
        let _ = job.code.set(Ok(code));
        Arc::new(job)
    }

    fn new(name: &str) -> Job {
        Job {
            name: name.to_string(),
            code: OnceLock::new(),
            waiting: Mutex::new(()),
            done: Condvar::new(),
            recorded: AtomicBool::new(false),
        }
    }

    /// Runs `make` on a thread of its own (on this one when no thread can start).
    pub fn spawn(name: &str, make: impl FnOnce() -> Result<Code> + Send + 'static) -> Arc<Job> {
        let job = Arc::new(Job::new(name));
        let worker = Arc::clone(&job);
        // A panic in `make` (an internal error) still finishes the job, so that no launch
        // waits for it forever.
        let run = move || {
            let _slot = Slots::take();
            let made =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(make)).unwrap_or_else(|_| {
                    Err(Error::Unsupported {
                        what: "internal error: the compiling thread panicked".into(),
                    })
                });
            worker.finish(made.map_err(|e| e.to_string()))
        };
        let run = Arc::new(Mutex::new(Some(run)));
        let on_thread = Arc::clone(&run);
        let started = std::thread::Builder::new()
            .name("acc-compile".into())
            .spawn(move || {
                if let Some(f) = on_thread.lock().ok().and_then(|mut r| r.take()) {
                    f()
                }
            })
            .is_ok();
        if !started {
            if let Some(f) = run.lock().ok().and_then(|mut r| r.take()) {
                f()
            }
        }
        job
    }

    /// The module, or why it could not be made; `None` while it is being compiled.
    pub fn get(&self) -> Option<Result<&Code>> {
        self.code.get().map(|r| self.result(r))
    }

    fn result<'a>(&self, r: &'a std::result::Result<Code, String>) -> Result<&'a Code> {
        r.as_ref().map_err(|e| Error::Unsupported {
            what: format!("compiling kernel `{}`: {e}", self.name),
        })
    }

    /// The module, waiting for its compilation.
    pub fn wait(&self) -> Result<&Code> {
        let mut waiting = self.waiting.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if let Some(r) = self.code.get() {
                return self.result(r);
            }
            waiting = self.done.wait(waiting).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Whether a launch may be recorded to run when the module is there (the first launch
    /// that asks; later ones wait).
    pub fn may_record(&self) -> bool {
        !self.recorded.swap(true, Ordering::AcqRel)
    }

    /// Sets the module (or its error) and wakes who waits for it.
    fn finish(&self, code: std::result::Result<Code, String>) {
        let waiting = self.waiting.lock().unwrap_or_else(|e| e.into_inner());
        let _ = self.code.set(code);
        drop(waiting);
        self.done.notify_all();
    }
}

/// A cap on the compilations running at once: one per core (at least two), so that a program
/// launching many new kernels together does not start a `ptxas` process or a JIT per kernel
/// at the same moment. A compilation past the cap waits for a slot on its own thread.
struct Slots;

static RUNNING: Mutex<usize> = Mutex::new(0);
static FREED: Condvar = Condvar::new();

impl Slots {
    fn most() -> usize {
        std::thread::available_parallelism().map_or(2, |n| n.get().max(2))
    }

    /// Waits for a slot; it is given back when the result drops.
    fn take() -> Slots {
        let mut running = RUNNING.lock().unwrap_or_else(|e| e.into_inner());
        while *running >= Slots::most() {
            running = FREED.wait(running).unwrap_or_else(|e| e.into_inner());
        }
        *running += 1;
        Slots
    }
}

impl Drop for Slots {
    fn drop(&mut self) {
        let mut running = RUNNING.lock().unwrap_or_else(|e| e.into_inner());
        *running = running.saturating_sub(1);
        FREED.notify_one();
    }
}
