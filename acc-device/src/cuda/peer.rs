//! Copies between two NVIDIA GPUs of one process (`acc_memcpy_d2d`, OpenACC 3.3 section
//! 3.2.30). Where the driver allows it, each GPU is given access to the other's memory once
//! (`cuCtxEnablePeerAccess`), so the copy goes over NVLink or PCIe directly; otherwise
//! `cuMemcpyPeer` stages it through host memory itself.

use std::collections::HashMap;
use std::sync::Mutex;

use acc_core::Result;
use cudarc::driver::CudaContext;

use super::result::{self, cuda_error};

/// For each ordered pair of GPU ordinals tried: whether the first now reaches the second's
/// memory directly.
static PEER_ACCESS: Mutex<Option<HashMap<(usize, usize), bool>>> = Mutex::new(None);

/// Whether `to` reaches `from`'s memory directly, turning peer access on (both ways) the
/// first time the pair is asked about, where the driver allows it.
pub fn enable(to: &CudaContext, from: &CudaContext) -> bool {
    let key = (to.ordinal(), from.ordinal());
    if key.0 == key.1 {
        return true;
    }
    let mut table = PEER_ACCESS.lock().unwrap_or_else(|e| e.into_inner());
    let table = table.get_or_insert_with(HashMap::new);
    if let Some(&on) = table.get(&key) {
        return on;
    }
    let on = one_way(to, from) && one_way(from, to);
    table.insert(key, on);
    table.insert((key.1, key.0), on);
    on
}

/// Lets `ctx`'s kernels and copies reach `peer`'s memory, where the driver allows it.
fn one_way(ctx: &CudaContext, peer: &CudaContext) -> bool {
    if !result::device_can_access_peer(ctx.cu_device(), peer.cu_device()).unwrap_or(false)
        || ctx.bind_to_thread().is_err()
    {
        return false;
    }
    // SAFETY: `peer` is a live context; `ctx` was bound to this thread above.
    unsafe { result::ctx_enable_peer_access(peer.cu_ctx()) }.is_ok()
}

/// Copies `bytes` bytes from device address `src` of `from` to device address `dst` of `to`
/// and waits for the copy.
///
/// # Safety
/// Both ranges lie inside live allocations of their contexts, and no kernel or copy still
/// running uses them.
pub unsafe fn copy(
    to: &CudaContext,
    dst: u64,
    from: &CudaContext,
    src: u64,
    bytes: usize,
) -> Result<()> {
    enable(to, from);
    to.bind_to_thread()
        .map_err(|e| cuda_error("binding the context", e))?;
    // SAFETY: the caller's contract.
    unsafe { result::memcpy_peer((to.cu_ctx(), dst), (from.cu_ctx(), src), bytes) }
        .map_err(|e| cuda_error("copying between two GPUs", e))?;
    // cuMemcpyPeer may return before a device-to-device copy is done.
    to.synchronize()
        .map_err(|e| cuda_error("copying between two GPUs", e))?;
    from.synchronize()
        .map_err(|e| cuda_error("copying between two GPUs", e))
}
