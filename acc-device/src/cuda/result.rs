//! The CUDA driver below cudarc's safe types, in one place. acc calls the driver through
//! cudarc's `result` layer where it has the call, and through the wrappers here where it does
//! not: each raw call is made once, here, its `unsafe` contract stated and its status turned
//! into a `Result` (cudarc's model: raw bindings, then results, then safe types). Every
//! failure becomes an `acc::Error` through [`cuda_error`]. The rest of `cuda/` never calls
//! `sys::cu*` itself.

use std::ffi::c_void;

use acc_core::Error;
use cudarc::driver::{sys, DriverError};

/// A driver call's outcome.
pub type DriverResult<T> = std::result::Result<T, DriverError>;

/// A failed driver call as acc reports it: what acc was doing, then the driver's error.
pub(crate) fn cuda_error(what: &str, e: impl std::fmt::Debug) -> Error {
    Error::Unsupported {
        what: format!("CUDA: {what}: {e:?}"),
    }
}

/// `r` as a result.
fn status(r: sys::CUresult) -> DriverResult<()> {
    if r == sys::CUresult::CUDA_SUCCESS {
        Ok(())
    } else {
        Err(DriverError(r))
    }
}

/// The CUDA driver's version (12080 for 12.8; 0 where the driver cannot say).
pub fn driver_version() -> i32 {
    let mut v = 0;
    // SAFETY: out-pointer to a local.
    let _ = unsafe { sys::cuDriverGetVersion(&mut v) };
    v
}

/// The device address of page-locked host memory mapped into the device's address space.
///
/// # Safety
/// `host` was allocated by `cuMemHostAlloc` with `CU_MEMHOSTALLOC_DEVICEMAP` and not freed.
pub unsafe fn mem_host_device_pointer(host: *mut c_void) -> DriverResult<u64> {
    let mut device = 0;
    // SAFETY: the caller's contract; out-pointer to a local.
    status(unsafe { sys::cuMemHostGetDevicePointer_v2(&mut device, host, 0) })?;
    Ok(device)
}

/// Whether `stream` has finished all its work (`Ok(false)`: it is still running).
///
/// # Safety
/// `stream` is a live stream of the context bound to this thread.
pub unsafe fn stream_idle(stream: sys::CUstream) -> DriverResult<bool> {
    // SAFETY: the caller's contract.
    match unsafe { sys::cuStreamQuery(stream) } {
        sys::CUresult::CUDA_SUCCESS => Ok(true),
        sys::CUresult::CUDA_ERROR_NOT_READY => Ok(false),
        r => Err(DriverError(r)),
    }
}

/// Copies `bytes` bytes from `src` in context `from` to `dst` in context `to` (the driver
/// goes through host memory where the GPUs do not reach each other).
///
/// # Safety
/// Both ranges lie inside live allocations of their contexts.
pub unsafe fn memcpy_peer(
    (to, dst): (sys::CUcontext, u64),
    (from, src): (sys::CUcontext, u64),
    bytes: usize,
) -> DriverResult<()> {
    // SAFETY: the caller's contract.
    status(unsafe { sys::cuMemcpyPeer(dst, to, src, from, bytes) })
}

/// Whether device `dev`'s kernels and copies can reach `peer`'s memory directly.
pub fn device_can_access_peer(dev: sys::CUdevice, peer: sys::CUdevice) -> DriverResult<bool> {
    let mut can = 0;
    // SAFETY: a query of two device ordinals; out-pointer to a local.
    status(unsafe { sys::cuDeviceCanAccessPeer(&mut can, dev, peer) })?;
    Ok(can != 0)
}

/// Lets the current context reach `peer`'s memory (already allowed is success).
///
/// # Safety
/// `peer` is a live context; a context is bound to this thread.
pub unsafe fn ctx_enable_peer_access(peer: sys::CUcontext) -> DriverResult<()> {
    // SAFETY: the caller's contract; flags must be 0.
    match unsafe { sys::cuCtxEnablePeerAccess(peer, 0) } {
        sys::CUresult::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED => Ok(()),
        r => status(r),
    }
}

/// One attribute of pointer `addr`.
///
/// # Safety
/// `T` has the size the attribute writes (an int, an unsigned int, a device pointer or a
/// `size_t`); `addr` is only looked up, so any value is allowed.
pub unsafe fn pointer_attribute<T: Default>(
    addr: u64,
    a: sys::CUpointer_attribute,
) -> DriverResult<T> {
    let mut v = T::default();
    // SAFETY: the caller's contract on `T`.
    status(unsafe { sys::cuPointerGetAttribute((&mut v as *mut T).cast(), a, addr) })?;
    Ok(v)
}

/// Launches `f` over `grid` blocks of `block` threads on `stream`, its parameters at the
/// addresses in `params` (one per parameter, in order).
///
/// # Safety
/// `f` is a function of a loaded module of the bound context; `params` holds the address of a
/// value of each of its parameters' types, in order; what those values point to lives until
/// the launch finishes.
pub unsafe fn launch_kernel(
    f: sys::CUfunction,
    (grid, block): (u32, u32),
    stream: sys::CUstream,
    params: &mut [usize],
) -> DriverResult<()> {
    // SAFETY: the caller's contract; no extra options.
    status(unsafe {
        sys::cuLaunchKernel(
            f,
            grid,
            1,
            1,
            block,
            1,
            1,
            0,
            stream,
            params.as_mut_ptr().cast(),
            std::ptr::null_mut(),
        )
    })
}

/// The cubin the driver's JIT makes of `ptx` (`None` when it fails: loading the PTX directly
/// then reports why). The context to compile for is bound to this thread.
pub fn link_ptx(ptx: &str) -> Option<Vec<u8>> {
    let mut src = ptx.as_bytes().to_vec();
    src.push(0);
    let mut state = std::ptr::null_mut();
    // SAFETY: no options; out-pointer to a local.
    let created =
        unsafe { sys::cuLinkCreate_v2(0, std::ptr::null_mut(), std::ptr::null_mut(), &mut state) };
    status(created).ok()?;
    let name = c"acc.ptx";
    let mut out = None;
    // SAFETY: `src` is NUL-terminated PTX of the given size; the linker copies what it needs.
    let added = unsafe {
        sys::cuLinkAddData_v2(
            state,
            sys::CUjitInputType::CU_JIT_INPUT_PTX,
            src.as_mut_ptr().cast(),
            src.len(),
            name.as_ptr(),
            0,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        )
    };
    if status(added).is_ok() {
        let (mut cubin, mut size) = (std::ptr::null_mut(), 0usize);
        // SAFETY: out-pointers to locals; the cubin lives until the state is destroyed.
        let completed = unsafe { sys::cuLinkComplete(state, &mut cubin, &mut size) };
        if status(completed).is_ok() && !cubin.is_null() {
            // SAFETY: the driver returned `size` bytes at `cubin`.
            out = Some(unsafe { std::slice::from_raw_parts(cubin.cast::<u8>(), size) }.to_vec());
        }
    }
    // SAFETY: created above; the cubin was copied out.
    let _ = unsafe { sys::cuLinkDestroy(state) };
    out
}

/// An empty graph.
pub fn graph_create() -> DriverResult<sys::CUgraph> {
    let mut graph = std::ptr::null_mut();
    // SAFETY: out-pointer to a local; flags must be 0.
    status(unsafe { sys::cuGraphCreate(&mut graph, 0) })?;
    Ok(graph)
}

/// Adds a kernel node to `graph` after the nodes `deps`.
///
/// # Safety
/// `graph` is a live graph and `deps` its nodes; `p` names a loaded function, and its
/// parameter addresses are readable during the call (which copies the values).
pub unsafe fn graph_add_kernel_node(
    graph: sys::CUgraph,
    deps: &[sys::CUgraphNode],
    p: &sys::CUDA_KERNEL_NODE_PARAMS_v2,
) -> DriverResult<sys::CUgraphNode> {
    let mut node = std::ptr::null_mut();
    // SAFETY: the caller's contract; out-pointer to a local.
    status(unsafe {
        sys::cuGraphAddKernelNode_v2(&mut node, graph, deps.as_ptr(), deps.len(), p)
    })?;
    Ok(node)
}

/// The executable graph of `graph`.
///
/// # Safety
/// `graph` is a live, complete graph.
pub unsafe fn graph_instantiate(graph: sys::CUgraph) -> DriverResult<sys::CUgraphExec> {
    let mut exec = std::ptr::null_mut();
    // SAFETY: the caller's contract; out-pointer to a local; no flags.
    status(unsafe { sys::cuGraphInstantiateWithFlags(&mut exec, graph, 0) })?;
    Ok(exec)
}

/// Sets what kernel node `node` of executable graph `exec` launches.
///
/// # Safety
/// As [`graph_add_kernel_node`], `node` being a kernel node of the graph `exec` was made of.
pub unsafe fn graph_exec_set_kernel_node(
    exec: sys::CUgraphExec,
    node: sys::CUgraphNode,
    p: &sys::CUDA_KERNEL_NODE_PARAMS_v2,
) -> DriverResult<()> {
    // SAFETY: the caller's contract.
    status(unsafe { sys::cuGraphExecKernelNodeSetParams_v2(exec, node, p) })
}

/// Enables or disables node `node` of executable graph `exec` (a disabled node passes its
/// dependency on as an empty node would).
///
/// # Safety
/// `node` is a kernel node of the graph `exec` was made of.
pub unsafe fn graph_node_set_enabled(
    exec: sys::CUgraphExec,
    node: sys::CUgraphNode,
    on: bool,
) -> DriverResult<()> {
    // SAFETY: the caller's contract.
    status(unsafe { sys::cuGraphNodeSetEnabled(exec, node, u32::from(on)) })
}
