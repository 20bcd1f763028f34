//! acc under MPI (feature `mpi`, on the `mpi` crate 0.8): one device per rank, and device
//! data handed to a CUDA-aware MPI library.
//!
//! An OpenACC program that outgrows one GPU runs one MPI rank per GPU: [`select_device`] gives
//! each rank of a node its own device number (the rank among the ranks sharing the node,
//! modulo the devices the node has). Halos then travel either through the host, `update
//! self` before a send and `update device` after a receive, which works with any MPI library
//! and any device, or, with an MPI library built with CUDA support ([`cuda_aware`]), straight
//! from device memory: inside `#[acc::host_data(use_device(u))]`, [`DeviceBuffer::new`] makes
//! an MPI buffer of `u` or a [`DeviceSlice::slice`] of it. `examples/mpi_heat.rs` does both.
//!
//! ```
//! use mpi::traits::*;
//!
//! /// The largest element over every rank: an acc reduction, then an MPI all-reduce.
//! #[acc::offload]
//! fn largest(a: &[f64], world: &impl Communicator) -> f64 {
//!     let mut m = f64::MIN;
//!     #[acc::parallel_loop(copyin(a), reduction(max: m))]
//!     for i in 0..a.len() {
//!         m = m.max(a[i]);
//!     }
//!     let mut all = 0.0;
//!     world.all_reduce_into(&m, &mut all, mpi::collective::SystemOperation::max());
//!     all
//! }
//!
//! let universe = mpi::initialize().unwrap();
//! let world = universe.world();
//! acc::set_device_type(acc::DeviceType::Multicore);
//! let device = acc::mpi::select_device(&world).unwrap();
//! let a: Vec<f64> = (0..1000).map(|i| (i * (world.rank() as usize + 1)) as f64).collect();
//! assert_eq!(largest(&a, &world), 999.0 * world.size() as f64);
//! assert_eq!(device, 0);
//! ```

use std::marker::PhantomData;

use mpi::datatype::{AsDatatype, Buffer, BufferMut, Collection, Equivalence, Pointer, PointerMut};
use mpi::topology::Communicator;
use mpi::Count;

use acc_core::{Error, Result};

use crate::DeviceSlice;

/// This process's rank among the ranks of `comm` that share its node (its memory): the
/// number that picks its device.
pub fn local_rank<C: Communicator>(comm: &C) -> usize {
    comm.split_shared(comm.rank()).rank() as usize
}

/// Makes device `local_rank(comm) % n` of the current device type the calling thread's device
/// (`acc_set_device_num`), where the node has `n` of them, and returns its number. Every
/// rank of a node with as many devices as ranks gets a device of its own; with fewer, ranks
/// share devices round-robin. (Under Slurm with `--gpus-per-task=1`, or with
/// `CUDA_VISIBLE_DEVICES` set per rank, each rank sees one GPU and gets device 0.)
///
/// Errors: the current device type has no device here.
pub fn select_device<C: Communicator>(comm: &C) -> Result<usize> {
    let ty = crate::try_get_device_type()?;
    let n = crate::get_num_devices(ty);
    if n == 0 {
        return Err(Error::Unsupported {
            what: format!("acc::mpi::select_device: no {ty} device on this node"),
        });
    }
    let num = local_rank(comm) % n;
    crate::set_device_num(num, ty);
    Ok(num)
}

/// Whether the MPI library can read and write CUDA device memory (Open MPI's
/// `MPIX_Query_cuda_support`, looked up at run time; `false` where the library has no such
/// query, as MPICH and most distribution builds). `ACC_MPI_CUDA_AWARE=0` or `=1` overrides
/// the answer, for libraries that are CUDA-aware without saying so.
pub fn cuda_aware() -> bool {
    acc_core::config::mpi_cuda_aware().unwrap_or_else(query_cuda_support)
}

#[cfg(unix)]
fn query_cuda_support() -> bool {
    use std::ffi::{c_char, c_int, c_void};
    extern "C" {
        fn dlsym(handle: *mut c_void, symbol: *const c_char) -> *mut c_void;
    }
    // RTLD_DEFAULT: every library loaded, libmpi among them.
    #[cfg(any(target_os = "macos", target_os = "ios"))]
    let everywhere = -2isize as *mut c_void;
    #[cfg(not(any(target_os = "macos", target_os = "ios")))]
    let everywhere = std::ptr::null_mut();
    // SAFETY: dlsym with a NUL-terminated name; the symbol, when there, is Open MPI's
    // `int MPIX_Query_cuda_support(void)`, which may be called once MPI is initialized.
    unsafe {
        let f = dlsym(everywhere, c"MPIX_Query_cuda_support".as_ptr());
        if f.is_null() {
            return false;
        }
        let query: extern "C" fn() -> c_int = std::mem::transmute(f);
        query() == 1
    }
}

#[cfg(not(unix))]
fn query_cuda_support() -> bool {
    false
}

/// A [`DeviceSlice`] as an MPI buffer, for sends and receives straight from device memory.
/// On devices that share host memory it is the host's data, which every MPI library reads;
/// on the nvidia device it is CUDA device memory, which only a CUDA-aware MPI library reads.
pub struct DeviceBuffer<'a, T> {
    ptr: *mut T,
    len: usize,
    _data: PhantomData<&'a T>,
}

impl<'a, T: Equivalence> DeviceBuffer<'a, T> {
    /// `data` as an MPI buffer (a receive writes it).
    ///
    /// Errors: `data` is in device memory and the MPI library is not CUDA-aware
    /// ([`cuda_aware`]; send through the host with `update` instead), or it is a wgpu buffer,
    /// which has no address MPI could use.
    pub fn new(data: &'a DeviceSlice<'_, T>) -> Result<DeviceBuffer<'a, T>> {
        if !data.on_host() {
            let ty = crate::try_get_device_type()?;
            if data.cu_deviceptr().is_none() {
                return Err(Error::Unsupported {
                    what: format!("acc::mpi::DeviceBuffer on the {ty} device: its buffers have no address MPI could use; exchange through the host with `update`"),
                });
            }
            if !cuda_aware() {
                return Err(Error::Unsupported {
                    what: format!("acc::mpi::DeviceBuffer on the {ty} device: this MPI library is not CUDA-aware (MPIX_Query_cuda_support); exchange through the host with `update`"),
                });
            }
        }
        Ok(DeviceBuffer {
            ptr: data.as_mut_ptr(),
            len: data.len(),
            _data: PhantomData,
        })
    }
}

// SAFETY: the pointer and count describe `len` elements of `T`, in host memory or in device
// memory that the (CUDA-aware) library reads, alive for 'a.
unsafe impl<T> Pointer for DeviceBuffer<'_, T> {
    fn pointer(&self) -> *const std::ffi::c_void {
        self.ptr.cast()
    }
}
// SAFETY: as above; the data may be written (device memory, or host memory that no Rust
// reference reads while the buffer lives: `use_device` holds the variable).
unsafe impl<T> PointerMut for DeviceBuffer<'_, T> {
    fn pointer_mut(&mut self) -> *mut std::ffi::c_void {
        self.ptr.cast()
    }
}
// SAFETY: `len` elements.
unsafe impl<T> Collection for DeviceBuffer<'_, T> {
    fn count(&self) -> Count {
        self.len as Count
    }
}
// SAFETY: elements of `T`, which `Equivalence` describes to MPI.
unsafe impl<T: Equivalence> AsDatatype for DeviceBuffer<'_, T> {
    type Out = <T as Equivalence>::Out;
    fn as_datatype(&self) -> Self::Out {
        T::equivalent_datatype()
    }
}
// SAFETY: the three traits above.
unsafe impl<T: Equivalence> Buffer for DeviceBuffer<'_, T> {}
// SAFETY: the three traits above.
unsafe impl<T: Equivalence> BufferMut for DeviceBuffer<'_, T> {}
