//! The multicore device: regions run as their host twin, with the outermost gang or independent
//! loop (or `collapse`d nest) of each loop nest split into chunks across a rayon thread pool.
//!
//! The pool is rayon's global pool, shared with the program's own rayon code, unless
//! `ACC_NUM_CORES` (as in other OpenACC implementations) is set; then it is a pool of its own of
//! that size.

mod runtime;

pub use runtime::{MulticoreBackend, MulticoreDevice};
