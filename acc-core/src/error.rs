//! The error type of every fallible `acc` operation (OpenACC 3.3 section 5.2.2 error codes).

use std::fmt;

use crate::device_type::DeviceType;

/// Where in the user's source an operation was written: a directive, a clause, a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Location {
    /// Source file, as `file!()` gives it.
    pub file: &'static str,
    /// Line, 1-based.
    pub line: u32,
    /// Column, 1-based.
    pub column: u32,
}

impl Location {
    /// The location of the caller of a `#[track_caller]` function.
    #[track_caller]
    pub fn caller() -> Location {
        let l = std::panic::Location::caller();
        Location {
            file: l.file(),
            line: l.line(),
            column: l.column(),
        }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.file.is_empty() {
            return f.write_str("an unknown place");
        }
        write!(f, "{}:{}:{}", self.file, self.line, self.column)
    }
}

/// Result of an `acc` operation.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What went wrong in an `acc` operation. Every variant says what, and where the user's code
/// asked for it when that is known.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// `ACC_DEVICE_TYPE` (or a parsed device name) names no device type.
    UnknownDeviceType {
        /// The value as given.
        value: String,
        /// The accepted names, comma separated.
        valid: String,
    },
    /// `ACC_DEVICE_NUM` is not a non-negative integer.
    InvalidDeviceNum {
        /// The value as given.
        value: String,
    },
    /// No device of the requested type is available in this build or on this machine.
    NoDevice {
        /// The type asked for.
        device_type: DeviceType,
        /// Why none is available.
        reason: String,
    },
    /// The device number is out of range for the type.
    DeviceNumOutOfRange {
        /// The type asked for.
        device_type: DeviceType,
        /// The number asked for.
        num: usize,
        /// How many devices of that type there are.
        count: usize,
    },
    /// A device type that names no single device (`None`, `NotHost`) where one is needed.
    NotConcrete {
        /// The type given.
        device_type: DeviceType,
        /// What needed a concrete device type.
        what: &'static str,
    },
    /// An async argument that is neither a queue number (>= 0) nor `acc::ASYNC_NOVAL` /
    /// `acc::ASYNC_SYNC`.
    InvalidAsync {
        /// The value given.
        value: i64,
    },
    /// Data required to be present is not (`acc_error_not_present`, spec 2.7.5).
    NotPresent {
        /// The variable's name as written in the clause.
        var: String,
        /// Where the clause was written.
        location: Location,
    },
    /// Part of the data is present and part is not (`acc_error_partly_present`, spec 2.7.3).
    PartlyPresent {
        /// The variable's name as written in the clause.
        var: String,
        /// The present variable it overlaps.
        present: String,
        /// Where the clause was written.
        location: Location,
    },
    /// A subarray lies outside the array it is taken from.
    SubarrayOutOfBounds {
        /// The variable's name as written in the clause.
        var: String,
        /// Start of the subarray, in elements.
        start: usize,
        /// End (exclusive) of the subarray, in elements.
        end: usize,
        /// Length of the whole array, in elements.
        len: usize,
        /// Where the clause was written.
        location: Location,
    },
    /// A device pointer that `acc::malloc` did not return, or that was already freed.
    InvalidDevicePtr {
        /// The address given.
        addr: usize,
        /// What was attempted.
        what: &'static str,
    },
    /// A copy would reach past the end of a device allocation.
    DeviceCopyOutOfBounds {
        /// The routine and which side of the copy (`acc::memcpy_device (source)`).
        what: &'static str,
        /// Bytes the allocation has.
        allocation: usize,
        /// Offset of the copy, in bytes.
        offset: usize,
        /// Bytes copied.
        bytes: usize,
    },
    /// The device could not allocate the memory asked for (`acc_error_out_of_memory`).
    OutOfMemory {
        /// Bytes requested.
        bytes: usize,
    },
    /// A kernel indexed an array out of its range (bounds checks are on unless the region
    /// says `unchecked`); the first such access.
    IndexOutOfBounds {
        /// The array's name in the region.
        array: String,
        /// The index used.
        index: u64,
        /// The array's length.
        len: u64,
    },
    /// Something this build of `acc` does not do yet; the message says what.
    Unsupported {
        /// What is not supported, and where.
        what: String,
    },
    /// A launch that returned before the device ran it (its accesses not proven in bounds,
    /// its status words checked at the device's next synchronization) stopped with `error`.
    EarlierLaunch {
        /// The region, as its kernel names it (`needle at src/nw.rs:78:12`).
        kernel: String,
        /// What stopped it.
        error: Box<Error>,
    },
    /// `ACC_AUTOCOMPARE=abort`: a region's result on its device differs from its host twin's.
    AutocompareMismatch {
        /// The region, the variable, the first differing element and how many differ.
        what: String,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::UnknownDeviceType { value, valid } => write!(
                f,
                "unknown device type {value:?} (from ACC_DEVICE_TYPE or a device_type name); \
                 valid names are: {valid}"
            ),
            Error::InvalidDeviceNum { value } => {
                write!(f, "ACC_DEVICE_NUM={value:?} is not a non-negative integer")
            }
            Error::NoDevice { device_type, reason } => {
                write!(f, "no {device_type} device is available: {reason}")
            }
            Error::DeviceNumOutOfRange { device_type, num, count } => write!(
                f,
                "device number {num} of type {device_type} does not exist ({count} device{} of \
                 that type)",
                if *count == 1 { "" } else { "s" }
            ),
            Error::NotConcrete { device_type, what } => {
                write!(f, "{what} needs a concrete device type, not `{device_type}`")
            }
            Error::InvalidAsync { value } => write!(
                f,
                "invalid async argument {value}: a queue is a non-negative integer, or \
                 acc::ASYNC_NOVAL / acc::ASYNC_SYNC"
            ),
            Error::NotPresent { var, location } => {
                write!(f, "`{var}` is not present on the device (at {location})")
            }
            // A kernel's argument has no location of its own: the region's is in the message
            // around it; say how to name the part instead.
            Error::PartlyPresent { var, present, location } if location.file.is_empty() => write!(
                f,
                "`{var}` is partly present on the device: it overlaps `{present}` without lying inside it, and the region's clauses do not name the part it uses; name it, as in `present({var}[lo..hi])` (3.3 sections 2.7.1, 2.7.3)"
            ),
            Error::PartlyPresent { var, present, location } => write!(
                f,
                "`{var}` is partly present on the device: it overlaps `{present}` without lying inside it (at {location}; 3.3 section 2.7.3)"
            ),
            Error::SubarrayOutOfBounds { var, start, end, len, location } => write!(
                f,
                "subarray `{var}[{start}..{end}]` is out of bounds for length {len} (at \
                 {location})"
            ),
            Error::InvalidDevicePtr { addr, what } => write!(
                f,
                "{what}: {addr:#x} is not a live allocation returned by acc::malloc (on a device that shares host memory, an address from acc::deviceptr is the variable's own memory, which acc cannot keep alive, so the safe memory routines do not copy through it: copy from or to the variable itself, or call `unsafe` acc::memcpy_from_device_raw / acc::memcpy_to_device_raw, which take the caller's promise that the variable is alive)"
            ),
            Error::DeviceCopyOutOfBounds { what, allocation, offset, bytes } => write!(
                f,
                "{what}: a copy of {bytes} bytes at offset {offset} reaches past the end of a device \
                 allocation of {allocation} bytes"
            ),
            Error::OutOfMemory { bytes } => {
                write!(f, "the device is out of memory (asked for {bytes} bytes)")
            }
            Error::IndexOutOfBounds { array, index, len } => write!(
                f,
                "index out of bounds: the len is {len} but the index is {index} (array `{array}`)"
            ),
            Error::Unsupported { what } => write!(f, "not supported: {what}"),
            Error::EarlierLaunch { kernel, error } => {
                // Kernels are named `function at file:line:column`.
                let region = match kernel.split_once(" at ") {
                    Some((function, at)) => format!("the region in `{function}` at {at}"),
                    None => format!("the region of kernel `{kernel}`"),
                };
                write!(
                    f,
                    "{error} in {region}, found when the device next synchronized (a region whose accesses are not proven in bounds returns before the device runs it, and reports what stopped it at the next transfer, wait or waiting launch)"
                )
            }
            Error::AutocompareMismatch { what } => f.write_str(what),
        }
    }
}

impl std::error::Error for Error {}

impl From<crate::ir::segments::HostValueError> for Error {
    fn from(e: crate::ir::segments::HostValueError) -> Error {
        Error::Unsupported { what: e.0 }
    }
}
