//! The runtime: which devices exist, which one the calling thread uses, and the semantics of the
//! device-management routines of OpenACC chapter 3 (`acc_get_num_devices`, `acc_set_device_type`,
//! `acc_init`, `acc_on_device`, ...). The facade crate `acc` builds one [`Runtime`] with the
//! backends of its build and exposes these as the public `acc::*` functions.

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};

use crate::device::{Backend, Device, Property};
use crate::device_type::DeviceType;
use crate::error::{Error, Result};
use crate::icv;

/// The backends of this build, and the routines that choose among their devices.
pub struct Runtime {
    backends: Vec<Box<dyn Backend>>,
    /// Bumped when devices are shut down: a thread's remembered current device
    /// ([`Runtime::current_device`]) from before is not used again.
    epoch: AtomicU64,
}

/// A thread's last current device: its runtime (by address), the runtime's epoch then, its
/// type and number, and the device (weakly: a shut-down device is not kept alive by it).
type LastDevice = (usize, u64, DeviceType, usize, Weak<dyn Device>);

thread_local! {
    static LAST_DEVICE: RefCell<Option<LastDevice>> = const { RefCell::new(None) };
}

impl Runtime {
    /// A runtime over `backends` (at most one per device type).
    pub fn new(backends: Vec<Box<dyn Backend>>) -> Runtime {
        Runtime {
            backends,
            epoch: AtomicU64::new(0),
        }
    }

    fn backend(&self, ty: DeviceType) -> Option<&dyn Backend> {
        self.backends
            .iter()
            .find(|b| b.device_type() == ty)
            .map(|b| b.as_ref())
    }

    fn count(&self, ty: DeviceType) -> usize {
        self.backend(ty).map_or(0, |b| b.count())
    }

    /// The best device type present: nvidia, then wgpu, then multicore, then host (docs/guide/devices.md).
    pub fn default_device_type(&self) -> DeviceType {
        DeviceType::CONCRETE
            .into_iter()
            .find(|&t| self.backend(t).is_some_and(|b| b.is_default_candidate()))
            .unwrap_or(DeviceType::Host)
    }

    /// `acc_get_num_devices`: devices of a type (`Default`: of the default type; `NotHost`: of
    /// every type but the host).
    pub fn num_devices(&self, ty: DeviceType) -> usize {
        match ty {
            DeviceType::None => 0,
            DeviceType::Default => self.count(self.default_device_type()),
            DeviceType::NotHost => DeviceType::CONCRETE
                .into_iter()
                .filter(|&t| t != DeviceType::Host)
                .map(|t| self.count(t))
                .sum(),
            t => self.count(t),
        }
    }

    /// Resolves `Default` to the concrete default type; other types are returned as they are.
    pub fn resolve_type(&self, ty: DeviceType) -> DeviceType {
        if ty == DeviceType::Default {
            self.default_device_type()
        } else {
            ty
        }
    }

    /// `acc-current-device-type-var` of the calling thread: what it set, else `ACC_DEVICE_TYPE`,
    /// else the default type. Fails when `ACC_DEVICE_TYPE` names no type.
    pub fn current_device_type(&self) -> Result<DeviceType> {
        self.device_type_of(&icv::current())
    }

    fn device_type_of(&self, icvs: &icv::Icvs) -> Result<DeviceType> {
        let ty = match icvs.device_type {
            Some(t) => t,
            None => icv::env()
                .device_type
                .clone()?
                .unwrap_or(DeviceType::Default),
        };
        Ok(self.resolve_type(ty))
    }

    /// `acc-current-device-num-var` of the calling thread for the current device type.
    pub fn current_device_num(&self) -> Result<usize> {
        Self::device_num_of(&icv::current())
    }

    fn device_num_of(icvs: &icv::Icvs) -> Result<usize> {
        match icvs.device_num {
            Some(n) => Ok(n),
            None => Ok(icv::env().device_num.clone()?.unwrap_or(0)),
        }
    }

    /// `acc_get_device_num(ty)`: the current device number if `ty` is the current type, else 0.
    pub fn device_num(&self, ty: DeviceType) -> Result<usize> {
        if self.resolve_type(ty) == self.current_device_type()? {
            self.current_device_num()
        } else {
            Ok(0)
        }
    }

    /// `acc_set_device_type`: the calling thread's device type from now on.
    pub fn set_device_type(&self, ty: DeviceType) {
        icv::update(|i| {
            i.device_type = Some(ty);
            i.device_num = None;
        });
    }

    /// `acc_set_device_num(n, ty)`: device `n` of type `ty` (a concrete type also becomes the
    /// current type; `Default` keeps the current type).
    pub fn set_device_num(&self, num: usize, ty: DeviceType) {
        icv::update(|i| {
            if ty.is_concrete() {
                i.device_type = Some(ty);
            }
            i.device_num = Some(num);
        });
    }

    /// Opens device `num` of type `ty`.
    pub fn device(&self, ty: DeviceType, num: usize) -> Result<Arc<dyn Device>> {
        let ty = self.resolve_type(ty);
        if !ty.is_concrete() {
            return Err(Error::NotConcrete {
                device_type: ty,
                what: "selecting a device",
            });
        }
        let Some(backend) = self.backend(ty) else {
            return Err(Error::NoDevice {
                device_type: ty,
                reason: format!("this build of acc has no {ty} backend"),
            });
        };
        let count = backend.count();
        if count == 0 {
            return Err(Error::NoDevice {
                device_type: ty,
                reason: backend.absent_reason(),
            });
        }
        if num >= count {
            return Err(Error::DeviceNumOutOfRange {
                device_type: ty,
                num,
                count,
            });
        }
        backend.open(num)
    }

    /// The calling thread's current device, opened.
    /// A region's launch asks for it: the thread's last one is found without the backend's
    /// lock and map while its type and number are the same and no device was shut down.
    pub fn current_device(&self) -> Result<Arc<dyn Device>> {
        let icvs = icv::current();
        let (ty, num) = (self.device_type_of(&icvs)?, Self::device_num_of(&icvs)?);
        let me = self as *const Runtime as usize;
        let epoch = self.epoch.load(Ordering::Acquire);
        let last = LAST_DEVICE.with(|l| match &*l.borrow() {
            Some((r, e, t, n, d)) if (*r, *e, *t, *n) == (me, epoch, ty, num) => d.upgrade(),
            _ => None,
        });
        if let Some(d) = last {
            return Ok(d);
        }
        let d = self.device(ty, num)?;
        LAST_DEVICE.with(|l| *l.borrow_mut() = Some((me, epoch, ty, num, Arc::downgrade(&d))));
        Ok(d)
    }

    /// `acc_init(ty)`: opens the current device of type `ty` now (to keep start-up cost out of
    /// timings) and makes `ty` the calling thread's device type.
    pub fn init(&self, ty: DeviceType) -> Result<()> {
        let ty = self.resolve_type(ty);
        let num = if self.current_device_type()? == ty {
            self.current_device_num()?
        } else {
            0
        };
        self.device(ty, num)?;
        icv::update(|i| {
            i.device_type = Some(ty);
            i.device_num = Some(num);
        });
        Ok(())
    }

    /// `acc_shutdown(ty)`: releases the devices of type `ty` (every concrete type for `NotHost`).
    pub fn shutdown(&self, ty: DeviceType) -> Result<()> {
        let ty = self.resolve_type(ty);
        let types: Vec<DeviceType> = match ty {
            DeviceType::None => return Ok(()),
            DeviceType::NotHost => DeviceType::CONCRETE
                .into_iter()
                .filter(|&t| t != DeviceType::Host)
                .collect(),
            t => vec![t],
        };
        self.epoch.fetch_add(1, Ordering::AcqRel);
        for t in types {
            if let Some(b) = self.backend(t) {
                b.shutdown()?;
            }
        }
        // Again: a thread that found a device while it was being shut down keeps none.
        self.epoch.fetch_add(1, Ordering::AcqRel);
        Ok(())
    }

    /// `acc_on_device(ty)`: whether the calling code runs on a device of type `ty`. Outside
    /// compute regions (and in regions run on the local thread) the code runs on the host.
    pub fn on_device(&self, ty: DeviceType) -> bool {
        let here = icv::executing_on().unwrap_or(DeviceType::Host);
        match ty {
            DeviceType::None => false,
            DeviceType::NotHost => here != DeviceType::Host,
            DeviceType::Default => self
                .current_device_type()
                .map(|t| t == here)
                .unwrap_or(false),
            t => t == here,
        }
    }

    /// `acc_get_property(n, ty, p)`: a property of device `n` of type `ty`, or an error when
    /// there is no such device.
    pub fn property(&self, num: usize, ty: DeviceType, p: Property) -> Result<String> {
        Ok(self.device(ty, num)?.property(p))
    }

    /// What `acc-info` prints: every device type of this build in the order a default is
    /// picked, each device with its OpenACC properties (3.2.6) and what matters to `acc`
    /// ([`Device::details`]), and which device a program would use and why.
    pub fn describe(&self) -> String {
        use std::fmt::Write as _;
        let mut out = String::new();
        let order: Vec<String> = DeviceType::CONCRETE.iter().map(|t| t.to_string()).collect();
        let _ = writeln!(
            out,
            "device types of this build, in the order acc picks a default: {}",
            order.join(", ")
        );
        let default = self.default_device_type();
        let mut passed_over = Vec::new();
        for ty in DeviceType::CONCRETE {
            let Some(b) = self.backend(ty) else {
                let _ = writeln!(out, "\n{ty}: not in this build (its feature is off)");
                passed_over.push(format!("{ty} is not in this build"));
                continue;
            };
            let count = b.count();
            if count == 0 {
                let _ = writeln!(out, "\n{ty}: no device ({})", b.absent_reason());
                passed_over.push(format!("{ty} has no device"));
                continue;
            }
            let candidate = b.is_default_candidate();
            let _ = writeln!(
                out,
                "\n{ty}: {count} device{}{}",
                if count == 1 { "" } else { "s" },
                if ty == default {
                    " (the default device type)"
                } else if !candidate {
                    " (used only on request: software renderers and the like are not a default choice)"
                } else {
                    ""
                }
            );
            if ty.is_concrete() && ty != default && default_rank(ty) < default_rank(default) {
                passed_over.push(format!("{ty} has no hardware device"));
            }
            for n in 0..count {
                match b.open(n) {
                    Err(e) => {
                        let _ = writeln!(out, "  {ty} {n}: cannot be opened: {e}");
                    }
                    Ok(d) => {
                        let _ = writeln!(out, "  {ty} {n}: {}", d.property(Property::Name));
                        let mem = |p| {
                            let v: u64 = d.property(p).parse().unwrap_or(0);
                            if v == 0 {
                                "not reported".to_string()
                            } else {
                                format!("{:.1} GiB", v as f64 / (1u64 << 30) as f64)
                            }
                        };
                        for (what, value) in [
                            ("vendor", d.property(Property::Vendor)),
                            ("driver", d.property(Property::Driver)),
                            ("memory", mem(Property::Memory)),
                            ("free memory", mem(Property::FreeMemory)),
                            (
                                "shares host memory",
                                if d.shares_host_memory() { "yes" } else { "no" }.into(),
                            ),
                        ]
                        .into_iter()
                        .chain(d.details())
                        {
                            let _ = writeln!(out, "    {what}: {value}");
                        }
                    }
                }
            }
        }
        let _ = writeln!(
            out,
            "\ndefault: {default}{}",
            if passed_over.is_empty() {
                String::new()
            } else {
                format!(" ({})", passed_over.join("; "))
            }
        );
        match self.current_device_type() {
            Ok(t) => {
                let set = crate::config::device_type();
                let _ = writeln!(
                    out,
                    "this program uses: {t} {}{}",
                    self.current_device_num().unwrap_or(0),
                    match set {
                        Some(v) => format!(" (ACC_DEVICE_TYPE={v})"),
                        None => " (ACC_DEVICE_TYPE is unset)".into(),
                    }
                );
            }
            Err(e) => {
                let _ = writeln!(out, "this program cannot pick a device: {e}");
            }
        }
        out
    }
}

/// A device type's place in the default order (docs/guide/devices.md).
fn default_rank(ty: DeviceType) -> usize {
    DeviceType::CONCRETE
        .iter()
        .position(|&t| t == ty)
        .unwrap_or(usize::MAX)
}
