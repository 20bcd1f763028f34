use std::sync::Arc;

use acc_core::device::{Backend, Device, Property};
use acc_core::{DeviceType, Result};

/// The one host device.
#[derive(Debug, Default)]
pub struct HostDevice;

impl Device for HostDevice {
    fn device_type(&self) -> DeviceType {
        DeviceType::Host
    }
    fn number(&self) -> usize {
        0
    }
    fn property(&self, p: Property) -> String {
        host_property(p, "host (sequential)")
    }
    fn shares_host_memory(&self) -> bool {
        true
    }
}

/// Properties common to devices that are the host's own processor.
pub(crate) fn host_property(p: Property, name: &str) -> String {
    match p {
        Property::Memory => host_memory("MemTotal:").to_string(),
        Property::FreeMemory => host_memory("MemAvailable:").to_string(),
        Property::SharedMemorySupport => "1".into(),
        Property::Name => name.into(),
        Property::Vendor => "acc".into(),
        Property::Driver => concat!("acc ", env!("CARGO_PKG_VERSION")).into(),
    }
}

/// A line of `/proc/meminfo` in bytes (0 where there is none: not Linux).
fn host_memory(key: &str) -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            m.lines()
                .find_map(|l| l.strip_prefix(key))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        })
        .map_or(0, |kib| kib * 1024)
}

/// Provides the host device.
#[derive(Debug, Default)]
pub struct HostBackend;

impl Backend for HostBackend {
    fn device_type(&self) -> DeviceType {
        DeviceType::Host
    }
    fn count(&self) -> usize {
        1
    }
    fn open(&self, _num: usize) -> Result<Arc<dyn Device>> {
        Ok(Arc::new(HostDevice))
    }
}
