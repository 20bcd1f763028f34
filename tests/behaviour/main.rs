//! The behaviour suite: OpenACC semantics, one file per spec area, each test run on every
//! device type (see `devices`). Written once; a new backend joins by configuration.
//!
//! `ACC_TEST_DEVICES=host,multicore` picks the device types. With `ACC_REQUIRE_DEVICES=..` set
//! (CI sets it) nothing is skipped: the suite runs on the types `ACC_TEST_DEVICES` names, else
//! the required ones, and a missing device fails. Without it (a developer's machine) every type
//! this build has is tried and a missing device is skipped with the reason printed.

// Index loops are the OpenACC idiom these tests exercise.
#![allow(clippy::needless_range_loop, clippy::assign_op_pattern)]

mod devices;

mod async_queues;
mod atomic_forms;
mod atomics;
mod cache;
mod complex_numbers;
mod compute;
mod data;
mod data_environment;
mod deviceptr;
mod gang_phases;
mod half_types;
mod host_loops;
mod int_methods;
mod interop;
mod large_private_arrays;
mod loops;
mod math;
mod ndarray_arrays;
mod nested_arrays;
mod reductions;
mod routine;
mod routine_methods;
mod runtime;
mod rust_forms;
mod short_launches;
mod statement_forms;
mod structs;
