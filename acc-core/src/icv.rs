//! Internal control variables (OpenACC 3.3 section 2.3).
//!
//! The spec keeps one copy of the ICVs per host thread; a thread created by a compute construct
//! inherits the copy of the thread that launched it, and modifying an ICV changes only the
//! calling thread's copy (3.3 L932-936). Here each thread holds its ICVs in a `thread_local!`,
//! seeded from the environment, which is read once per process (3.3 L930-932).

use std::cell::Cell;
use std::sync::OnceLock;

use crate::device_type::DeviceType;
use crate::error::Error;
use crate::queue::{Queue, ASYNC_NOVAL, ASYNC_SYNC};

/// What `ACC_DEVICE_TYPE` and `ACC_DEVICE_NUM` said when the process first asked.
#[derive(Clone, Debug)]
pub struct EnvSettings {
    /// `ACC_DEVICE_TYPE`: `Ok(None)` when unset or empty.
    pub device_type: Result<Option<DeviceType>, Error>,
    /// `ACC_DEVICE_NUM`: `Ok(None)` when unset or empty.
    pub device_num: Result<Option<usize>, Error>,
}

impl EnvSettings {
    fn read() -> EnvSettings {
        let device_type = crate::config::device_type()
            .map(|v| DeviceType::parse_env(&v))
            .transpose();
        let device_num = crate::config::device_num()
            .map(|v| {
                v.trim()
                    .parse::<usize>()
                    .map_err(|_| Error::InvalidDeviceNum { value: v })
            })
            .transpose();
        EnvSettings {
            device_type,
            device_num,
        }
    }
}

/// The environment, read once per process.
pub fn env() -> &'static EnvSettings {
    static ENV: OnceLock<EnvSettings> = OnceLock::new();
    ENV.get_or_init(EnvSettings::read)
}

/// One thread's copy of the ICVs. `None` means "not set on this thread": the environment, then
/// the implementation's default, applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Icvs {
    /// `acc-current-device-type-var`, when set by `acc::set_device_type` or a directive.
    pub device_type: Option<DeviceType>,
    /// `acc-current-device-num-var`, when set by `acc::set_device_num` or a directive.
    pub device_num: Option<usize>,
    /// `acc-default-async-var`.
    pub default_async: i32,
}

impl Icvs {
    /// Nothing set on the thread.
    const UNSET: Icvs = Icvs {
        device_type: None,
        device_num: None,
        default_async: ASYNC_NOVAL,
    };
}

impl Default for Icvs {
    fn default() -> Self {
        Icvs::UNSET
    }
}

thread_local! {
    static ICVS: Cell<Icvs> = const { Cell::new(Icvs::UNSET) };
    static EXECUTING_ON: Cell<Option<DeviceType>> = const { Cell::new(None) };
    static GANG: Cell<usize> = const { Cell::new(0) };
}

/// The index of the gang running the calling code (0 outside split loops).
pub fn gang_index() -> usize {
    GANG.with(|g| g.get())
}

/// Runs `f` as gang `gang` (the thread of a device's pool that runs a chunk), restoring the
/// previous index afterwards.
pub fn as_gang<R>(gang: usize, f: impl FnOnce() -> R) -> R {
    struct Restore(usize);
    impl Drop for Restore {
        fn drop(&mut self) {
            GANG.with(|g| g.set(self.0));
        }
    }
    let _restore = Restore(gang_index());
    GANG.with(|g| g.set(gang));
    f()
}

/// The calling thread's ICVs.
pub fn current() -> Icvs {
    ICVS.with(|c| c.get())
}

/// Changes the calling thread's ICVs.
pub fn update(f: impl FnOnce(&mut Icvs)) {
    ICVS.with(|c| {
        let mut v = c.get();
        f(&mut v);
        c.set(v);
    })
}

/// The device type the calling thread is executing a compute region on, if it is inside one
/// (read by `acc::on_device`).
pub fn executing_on() -> Option<DeviceType> {
    EXECUTING_ON.with(|c| c.get())
}

/// What a thread that runs part of a compute region inherits from the thread that launched it.
#[derive(Clone, Copy, Debug)]
pub struct Inherited {
    icvs: Icvs,
    device_type: DeviceType,
}

impl Inherited {
    /// Captures the calling thread's ICVs for a region that runs on `device_type`.
    pub fn capture(device_type: DeviceType) -> Inherited {
        Inherited {
            icvs: current(),
            device_type,
        }
    }

    /// Runs `f` on this thread with the inherited ICVs and "executing on" state, restoring the
    /// thread's own afterwards (also when `f` panics).
    pub fn run<R>(&self, f: impl FnOnce() -> R) -> R {
        struct Restore(Icvs, Option<DeviceType>);
        impl Drop for Restore {
            fn drop(&mut self) {
                ICVS.with(|c| c.set(self.0));
                EXECUTING_ON.with(|c| c.set(self.1));
            }
        }
        let _restore = Restore(current(), executing_on());
        ICVS.with(|c| c.set(self.icvs));
        EXECUTING_ON.with(|c| c.set(Some(self.device_type)));
        f()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn icvs_are_per_thread() {
        update(|i| i.device_type = Some(DeviceType::Host));
        let other = std::thread::spawn(|| current().device_type).join().unwrap();
        assert_eq!(other, None);
        assert_eq!(current().device_type, Some(DeviceType::Host));
    }

    #[test]
    fn inherited_state_is_restored() {
        let inh = Inherited::capture(DeviceType::Multicore);
        assert_eq!(executing_on(), None);
        inh.run(|| assert_eq!(executing_on(), Some(DeviceType::Multicore)));
        assert_eq!(executing_on(), None);
    }
}

// Resolving an async argument reads the default async ICV, so it lives with the ICVs.
impl Queue {
    /// Resolves an async argument (`None` for "no async clause") against the calling thread's
    /// default async ICV.
    pub fn resolve(arg: Option<i64>) -> crate::Result<Queue> {
        let Some(v) = arg else {
            return Ok(Queue::Sync);
        };
        let v = if v == ASYNC_NOVAL as i64 {
            current().default_async as i64
        } else {
            v
        };
        match v {
            v if v == ASYNC_SYNC as i64 => Ok(Queue::Sync),
            // The default async ICV may itself be acc_async_noval: an implementation-chosen queue.
            v if v == ASYNC_NOVAL as i64 => Ok(Queue::Async(0)),
            v if (0..=u32::MAX as i64).contains(&v) => Ok(Queue::Async(v as u32)),
            v => Err(Error::InvalidAsync { value: v }),
        }
    }

    /// Checks a queue number given to `wait`: a queue id or `ASYNC_NOVAL`.
    pub fn for_wait(arg: i64) -> crate::Result<Queue> {
        match Queue::resolve(Some(arg))? {
            Queue::Sync => Err(Error::InvalidAsync { value: arg }),
            q => Ok(q),
        }
    }
}
