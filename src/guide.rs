//! The user guide (`docs/guide/` in the repository), one module per page, so that it is read
//! beside the API and its examples run as doc tests (`build.rs` turns the links between pages
//! into links between these modules).
//!
//! Start with [`getting_started`]; [`directives`] is the reference of every directive and
//! clause, with its C counterpart, and [`porting_from_c`] the table for a port.

#[doc = include_str!(concat!(env!("OUT_DIR"), "/README.md"))]
pub mod getting_started {}

#[doc = include_str!(concat!(env!("OUT_DIR"), "/directives.md"))]
pub mod directives {}

#[doc = include_str!(concat!(env!("OUT_DIR"), "/regions.md"))]
pub mod regions {}

#[doc = include_str!(concat!(env!("OUT_DIR"), "/data.md"))]
pub mod data {}

#[doc = include_str!(concat!(env!("OUT_DIR"), "/types.md"))]
pub mod types {}

#[doc = include_str!(concat!(env!("OUT_DIR"), "/devices.md"))]
pub mod devices {}

#[doc = include_str!(concat!(env!("OUT_DIR"), "/tools.md"))]
pub mod tools {}

#[doc = include_str!(concat!(env!("OUT_DIR"), "/performance.md"))]
pub mod performance {}

#[doc = include_str!(concat!(env!("OUT_DIR"), "/troubleshooting.md"))]
pub mod troubleshooting {}

#[doc = include_str!(concat!(env!("OUT_DIR"), "/porting-from-c.md"))]
pub mod porting_from_c {}

#[doc = include_str!(concat!(env!("OUT_DIR"), "/multi-device.md"))]
pub mod multi_device {}
