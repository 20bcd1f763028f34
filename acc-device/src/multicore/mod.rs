//! The multicore device: regions run as their host twin, with the outermost gang or independent
//! loop (or `collapse`d nest) of each loop nest split into chunks across a rayon thread pool.
//!
//! The pool has `ACC_NUM_CORES` threads when that is set (as in other OpenACC implementations),
//! else one per available core.

mod runtime;

pub use runtime::{MulticoreBackend, MulticoreDevice};
