use std::sync::{Arc, Mutex};

use acc_core::device::{Backend, Device, HostThreads, Property};
use acc_core::{DeviceType, Error, Result};

use crate::host::runtime_property;

/// The multicore device: a thread pool.
pub struct MulticoreDevice {
    pool: Pool,
}

/// The threads chunks run on.
enum Pool {
    /// rayon's global pool, which the program's own rayon code also uses (when `ACC_NUM_CORES`
    /// is not set): one set of threads, so that acc's and the program's parallel loops neither
    /// oversubscribe the cores nor find the other's idle threads still spinning. A region
    /// launched from inside another rayon pool runs its chunks on that pool, as nested rayon
    /// code does.
    Global,
    /// A pool of `ACC_NUM_CORES` threads.
    Own(rayon::ThreadPool),
}

impl Pool {
    fn threads(&self) -> usize {
        match self {
            Pool::Global => rayon::current_num_threads(),
            Pool::Own(p) => p.current_num_threads(),
        }
    }
}

impl MulticoreDevice {
    fn new() -> Result<MulticoreDevice> {
        let threads = match acc_core::config::num_cores() {
            Some(v) => match v.trim().parse::<usize>() {
                Ok(n) if n > 0 => n,
                _ => {
                    return Err(Error::NoDevice {
                        device_type: DeviceType::Multicore,
                        reason: format!("ACC_NUM_CORES={v:?} is not a positive integer"),
                    })
                }
            },
            // rayon's global pool: one thread per core unless RAYON_NUM_THREADS (or the
            // program, through `build_global` before its first region) sized it otherwise.
            // Asking its size would start it, so `ACC_NUM_CORES` always gets a pool of its own.
            _ => return Ok(MulticoreDevice { pool: Pool::Global }),
        };
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("acc-multicore-{i}"))
            .build()
            .map_err(|e| Error::NoDevice {
                device_type: DeviceType::Multicore,
                reason: format!("could not start its threads: {e}"),
            })?;
        Ok(MulticoreDevice {
            pool: Pool::Own(pool),
        })
    }
}

impl Device for MulticoreDevice {
    fn device_type(&self) -> DeviceType {
        DeviceType::Multicore
    }
    fn number(&self) -> usize {
        0
    }
    fn property(&self, p: Property) -> String {
        runtime_property(p, &format!("multicore ({} threads)", self.pool.threads()))
    }
    fn shares_host_memory(&self) -> bool {
        true
    }
    fn details(&self) -> Vec<(&'static str, String)> {
        vec![(
            "threads",
            match self.pool {
                Pool::Global => format!(
                    "{} (rayon's global pool; ACC_NUM_CORES gives acc a pool of its own)",
                    self.pool.threads()
                ),
                Pool::Own(_) => format!("{} (ACC_NUM_CORES)", self.pool.threads()),
            },
        )]
    }
    fn host_threads(&self) -> Option<&dyn HostThreads> {
        Some(self)
    }
}

impl HostThreads for MulticoreDevice {
    fn parallelism(&self) -> usize {
        self.pool.threads()
    }
    fn run(&self, tasks: usize, task: &(dyn Fn(usize) + Sync)) {
        use rayon::prelude::*;
        let chunks = || {
            (0..tasks).into_par_iter().with_max_len(1).for_each(|t| {
                // Each pool thread is a gang (acc::gang_idx).
                let gang = rayon::current_thread_index().unwrap_or(0);
                acc_core::icv::as_gang(gang, || task(t))
            })
        };
        match &self.pool {
            Pool::Global => chunks(),
            Pool::Own(p) => p.install(chunks),
        }
    }
}

/// Provides the multicore device. An `ACC_NUM_CORES` pool starts on first use and stops at
/// `acc::shutdown`; rayon's global pool lives as long as the program.
#[derive(Default)]
pub struct MulticoreBackend {
    device: Mutex<Option<Arc<MulticoreDevice>>>,
}

impl Backend for MulticoreBackend {
    fn device_type(&self) -> DeviceType {
        DeviceType::Multicore
    }
    fn count(&self) -> usize {
        1
    }
    fn open(&self, _num: usize) -> Result<Arc<dyn Device>> {
        let mut d = self.device.lock().unwrap_or_else(|e| e.into_inner());
        if d.is_none() {
            *d = Some(Arc::new(MulticoreDevice::new()?));
        }
        let dev: Arc<MulticoreDevice> = d.as_ref().map(Arc::clone).expect("set above");
        Ok(dev)
    }
    fn shutdown(&self) -> Result<()> {
        // Regions still running hold their own Arc; the pool stops when the last one ends.
        self.device.lock().unwrap_or_else(|e| e.into_inner()).take();
        Ok(())
    }
}
