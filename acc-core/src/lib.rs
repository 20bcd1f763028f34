//! Device-independent core of `acc`, OpenACC for Rust.
//!
//! This crate holds everything that does not depend on a particular device: the device types and
//! the internal control variables (ICVs) of OpenACC 3.3 section 2.3, the [`Device`] trait the
//! backends in `acc-device` implement, the runtime-routine semantics of chapter 3, the reduction
//! operators of section 2.5.15, atomics (section 2.12), iteration spaces for loops (section 2.9),
//! asynchronous queues (section 2.16) and the error type.
//!
//! Users depend on the `acc` facade crate, which re-exports what they need from here.

#![warn(missing_docs)]

pub mod atomic;
pub mod config;
pub mod data;
pub mod device;
pub mod device_type;
pub mod error;
pub mod gpu;
pub mod host_alloc;
pub mod icv;
pub mod int_hash;
/// The kernel compiler (the `acc-kernel` crate): the IR, its builder, analyses, transforms and
/// the plan every GPU backend lowers.
pub use acc_kernel as ir;
pub mod observe;
pub mod parallel;
pub mod present;
pub mod queue;
pub mod reduce;
pub mod region;
pub mod runtime;
pub mod space;

pub use device::{Device, HostThreads, OwnMemory, Property};
pub use device_type::DeviceType;
pub use error::{Error, Location, Result};
