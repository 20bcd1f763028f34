//! Device types (OpenACC 3.3 section 2.4 `device_type`, chapter 3 `acc_device_t`).

use std::fmt;

/// A kind of device, as named by `ACC_DEVICE_TYPE`, `device_type(..)` clauses and the runtime
/// routines (`acc_device_t` in the specification).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DeviceType {
    /// No device (`acc_device_none`).
    None,
    /// The implementation's default device type (`acc_device_default`).
    Default,
    /// The host thread itself, running the region sequentially (`acc_device_host`).
    Host,
    /// Any device that is not the host (`acc_device_not_host`).
    NotHost,
    /// All host cores: the outermost parallel loop of a region is split across threads.
    Multicore,
    /// An NVIDIA GPU, through the CUDA driver.
    Nvidia,
    /// Any GPU wgpu reaches (Vulkan, Metal, DX12).
    Wgpu,
}

impl DeviceType {
    /// The device types that name one concrete kind of device, in the order of preference used
    /// to pick the default device (best first).
    pub const CONCRETE: [DeviceType; 4] = [
        DeviceType::Nvidia,
        DeviceType::Wgpu,
        DeviceType::Multicore,
        DeviceType::Host,
    ];

    /// The names `ACC_DEVICE_TYPE` and `device_type(..)` accept, lower case.
    pub const NAMES: [&'static str; 4] = ["host", "multicore", "nvidia", "wgpu"];

    /// The lower-case name of this type, as `ACC_DEVICE_TYPE` spells it.
    pub fn name(self) -> &'static str {
        match self {
            DeviceType::None => "none",
            DeviceType::Default => "default",
            DeviceType::Host => "host",
            DeviceType::NotHost => "not_host",
            DeviceType::Multicore => "multicore",
            DeviceType::Nvidia => "nvidia",
            DeviceType::Wgpu => "wgpu",
        }
    }

    /// Whether this names one concrete kind of device (not `None`, `Default` or `NotHost`).
    pub fn is_concrete(self) -> bool {
        Self::CONCRETE.contains(&self)
    }
}

impl fmt::Display for DeviceType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_any_case_and_whitespace() {
        assert_eq!(
            DeviceType::parse_env(" MultiCore\n").unwrap(),
            DeviceType::Multicore
        );
        assert_eq!(DeviceType::parse_env("NVIDIA").unwrap(), DeviceType::Nvidia);
        assert_eq!(DeviceType::parse_env("host").unwrap(), DeviceType::Host);
    }

    #[test]
    fn unknown_name_lists_valid_ones() {
        let e = DeviceType::parse_env("radeon").unwrap_err().to_string();
        assert!(e.contains("radeon"), "{e}");
        assert!(e.contains("host, multicore, nvidia, wgpu"), "{e}");
    }
}
