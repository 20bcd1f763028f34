//! The behaviour suite: OpenACC semantics, one file per spec area, each test run on every
//! device type (see `devices`). Written once; a new backend joins by configuration.
//!
//! `ACC_TEST_DEVICES=host,multicore` picks the device types (default: every type this build
//! has a device for). `ACC_REQUIRE_DEVICES=..` turns a missing device into a failure (CI sets
//! it); without it a missing device is skipped with the reason printed.

// Index loops are the OpenACC idiom these tests exercise.
#![allow(clippy::needless_range_loop, clippy::assign_op_pattern)]

mod devices;

mod async_queues;
mod atomics;
mod compute;
mod data;
mod data_environment;
mod loops;
mod math;
mod reductions;
mod routine;
mod routine_methods;
mod runtime;
mod structs;
