//! One kernel launch as the CUDA device makes it, recorded or not: entry point, grid, block
//! and parameter slots, and the slots' addresses as the driver takes them.

/// One dispatch of a recorded launch: entry point, grid and block, parameters (64-bit slots).
#[derive(Clone)]
pub struct Dispatch {
    pub entry: usize,
    pub grid: u32,
    pub block: u32,
    pub params: Vec<u64>,
}

/// The addresses of parameter slots, as `cuLaunchKernel` and kernel nodes take them (as
/// integers, so that a buffer of them can be kept between launches), into `into`, emptied
/// first; valid while `slots` is neither moved nor grown.
pub fn slot_addresses(slots: &mut [u64], into: &mut Vec<usize>) {
    into.clear();
    into.extend(
        slots
            .iter_mut()
            .map(|v| (v as *mut u64).cast::<std::ffi::c_void>() as usize),
    );
}
