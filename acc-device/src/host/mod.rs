//! The host device: regions run as their host twin, sequentially, on the calling thread.

mod runtime;

pub(crate) use runtime::host_property as runtime_property;
pub use runtime::{HostBackend, HostDevice};
