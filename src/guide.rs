//! The user guide (`docs/guide/` in the repository), one module per page, so that it is read
//! beside the API and its examples run as doc tests.
//!
//! Start with [`getting_started`]; [`directives`] is the reference of every directive and
//! clause, with its C counterpart, and [`porting_from_c`] the table for a port.

#[doc = include_str!("../docs/guide/README.md")]
pub mod getting_started {}

#[doc = include_str!("../docs/guide/directives.md")]
pub mod directives {}

#[doc = include_str!("../docs/guide/regions.md")]
pub mod regions {}

#[doc = include_str!("../docs/guide/data.md")]
pub mod data {}

#[doc = include_str!("../docs/guide/types.md")]
pub mod types {}

#[doc = include_str!("../docs/guide/devices.md")]
pub mod devices {}

#[doc = include_str!("../docs/guide/tools.md")]
pub mod tools {}

#[doc = include_str!("../docs/guide/performance.md")]
pub mod performance {}

#[doc = include_str!("../docs/guide/troubleshooting.md")]
pub mod troubleshooting {}

#[doc = include_str!("../docs/guide/porting-from-c.md")]
pub mod porting_from_c {}

#[doc = include_str!("../docs/guide/multi-device.md")]
pub mod multi_device {}
