//! The nvidia device's buffers: acc's own allocations, and memory another library allocated
//! on the device (a cudarc `CudaSlice`, a pointer from a CUDA library) that acc was given
//! ([`acc_core::present::DeviceMemory::adopt`]).

use std::any::Any;

use cudarc::driver::sys::{self, CUpointer_attribute};
use cudarc::driver::{CudaContext, CudaSlice, CudaStream, DevicePtr};

use acc_core::{Error, Result};

/// A buffer of the nvidia device.
pub(super) enum Buffer {
    /// acc's own allocation of the given size in bytes: the slice may be larger (no
    /// allocation is under 16 bytes), but copies are checked against the size asked for.
    Own(CudaSlice<u8>, usize),
    /// Another library's memory: `bytes` bytes at `addr`; `_keep` owns it where acc was given
    /// ownership (dropping it frees the memory), and is `None` where acc borrows it.
    Foreign {
        addr: u64,
        bytes: usize,
        _keep: Option<Box<dyn Any + Send + Sync>>,
    },
}

impl Buffer {
    /// Its size in bytes.
    pub(super) fn len(&self) -> usize {
        match self {
            Buffer::Own(_, bytes) => *bytes,
            Buffer::Foreign { bytes, .. } => *bytes,
        }
    }

    /// The device address of its first byte.
    pub(super) fn address(&self, stream: &CudaStream) -> u64 {
        match self {
            Buffer::Own(s, _) => s.device_ptr(stream).0,
            Buffer::Foreign { addr, .. } => *addr,
        }
    }
}

/// Checks that `bytes` bytes at device address `addr` are one allocation of `ctx`'s device,
/// as the driver reports it (`cuPointerGetAttribute`): memory of another device, host memory
/// or a range past its allocation's end is an error naming what was found.
pub(super) fn check_foreign(ctx: &CudaContext, addr: u64, bytes: usize) -> Result<()> {
    let refuse = |what: String| Error::Unsupported {
        what: format!("device memory of another library at {addr:#x}: {what}"),
    };
    ctx.bind_to_thread()
        .map_err(|e| refuse(format!("binding the context ({e:?})")))?;
    let ordinal = attribute::<i32>(
        addr,
        CUpointer_attribute::CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
    )
    .map_err(|r| refuse(format!("not CUDA device memory ({r:?})")))?;
    if ordinal < 0 || ordinal as usize != ctx.ordinal() {
        return Err(refuse(format!(
            "it belongs to CUDA device {ordinal}, not the current nvidia device ({})",
            ctx.ordinal()
        )));
    }
    // Memory of another context of the same GPU is another address space: only acc's (the
    // primary context) or none (memory pools, which belong to the device).
    let context = attribute::<usize>(addr, CUpointer_attribute::CU_POINTER_ATTRIBUTE_CONTEXT)
        .map_err(|r| refuse(format!("its context is unknown ({r:?})")))?;
    if context != 0 && context != ctx.cu_ctx() as usize {
        return Err(refuse(
            "it belongs to another CUDA context than the device's primary context, which acc uses (allocate it through `CudaContext::new(n)` or on the primary context)".into(),
        ));
    }
    let memory_type = attribute::<u32>(addr, CUpointer_attribute::CU_POINTER_ATTRIBUTE_MEMORY_TYPE)
        .map_err(|r| refuse(format!("its memory type is unknown ({r:?})")))?;
    if memory_type != sys::CUmemorytype::CU_MEMORYTYPE_DEVICE as u32 {
        return Err(refuse(
            "it is not device memory (host or page-locked memory is not device data)".into(),
        ));
    }
    let start = attribute::<u64>(
        addr,
        CUpointer_attribute::CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
    )
    .map_err(|r| refuse(format!("its allocation is unknown ({r:?})")))?;
    let size = attribute::<usize>(addr, CUpointer_attribute::CU_POINTER_ATTRIBUTE_RANGE_SIZE)
        .map_err(|r| refuse(format!("its allocation is unknown ({r:?})")))?;
    if addr + bytes as u64 > start + size as u64 {
        return Err(refuse(format!(
            "{bytes} bytes from it reach past the end of its allocation ({size} bytes from {start:#x})"
        )));
    }
    Ok(())
}

/// One pointer attribute of `addr`.
fn attribute<T: Default>(
    addr: u64,
    a: CUpointer_attribute,
) -> std::result::Result<T, sys::CUresult> {
    // SAFETY: each caller asks for an attribute of `T`'s size (an int, an unsigned int, a
    // device pointer or a size_t); `addr` is only looked up.
    unsafe { super::result::pointer_attribute(addr, a) }.map_err(|e| e.0)
}
