//! Launches submitted together as one CUDA graph (issue 16, many short launches): a chain of
//! kernel nodes, each depending on the one before, instantiated once and given each batch's
//! launches by setting its nodes' parameters (function, grid, arguments), its unused tail
//! nodes disabled. One `cuGraphLaunch` then submits the batch: on an H100 a chain of 32
//! short kernels ran at 1.45 us a kernel against 3.1 us for a `cuLaunchKernel` each
//! (design notes, launches.md, sixth round). Instantiating is slow (0.2 to 0.4 ms), so the
//! chain is made once per device and reused; updating an instantiated graph's parameters
//! while an earlier launch of it runs is allowed (the change applies to the next launch).

use cudarc::driver::sys;

use super::dispatch::{slot_addresses, Dispatch};
use super::result;

/// Nodes in a chain: the most launches one `cuGraphLaunch` submits.
pub const CHAIN: usize = 32;

/// The parameters of a kernel node launching `d` of `f` (`values`: `d`'s parameter slots'
/// addresses, [`slot_addresses`], read when the parameters are set).
fn node(f: sys::CUfunction, d: &Dispatch, values: &mut [usize]) -> sys::CUDA_KERNEL_NODE_PARAMS_v2 {
    sys::CUDA_KERNEL_NODE_PARAMS_v2 {
        func: f,
        gridDimX: d.grid,
        gridDimY: 1,
        gridDimZ: 1,
        blockDimX: d.block,
        blockDimY: 1,
        blockDimZ: 1,
        sharedMemBytes: 0,
        kernelParams: values.as_mut_ptr().cast(),
        extra: std::ptr::null_mut(),
        kern: std::ptr::null_mut(),
        ctx: std::ptr::null_mut(),
    }
}

/// `r`, its error in words.
fn check<T>(what: &str, r: result::DriverResult<T>) -> Result<T, String> {
    r.map_err(|e| format!("CUDA graph: {what}: {:?}", e.0))
}

/// A chain of [`CHAIN`] kernel nodes, instantiated (destroyed on drop; the caller binds the
/// context for every use, the drop included).
pub struct Chain {
    graph: sys::CUgraph,
    exec: sys::CUgraphExec,
    nodes: Vec<sys::CUgraphNode>,
    /// How many nodes, from the first, are enabled.
    enabled: usize,
}

// SAFETY: the handles are used by one thread at a time (the recorder's submit lock), each
// with the context bound.
unsafe impl Send for Chain {}

impl Chain {
    /// A chain whose every node launches `d` of `f` (a kernel node needs a function and its
    /// arguments when it is made; each launch sets its own).
    pub fn new(f: sys::CUfunction, d: &Dispatch) -> Result<Chain, String> {
        let mut chain = Chain {
            graph: std::ptr::null_mut(),
            exec: std::ptr::null_mut(),
            nodes: Vec::with_capacity(CHAIN),
            enabled: CHAIN,
        };
        chain.graph = check("creating", result::graph_create())?;
        let (mut values, mut params) = (d.params.clone(), Vec::new());
        slot_addresses(&mut values, &mut params);
        let p = node(f, d, &mut params);
        for k in 0..CHAIN {
            let before = &chain.nodes[k.saturating_sub(1)..k];
            // SAFETY: a graph made above; `before` is its previous node (or none); `p` points
            // at `values`' slots, read during the call.
            let n = check("adding a kernel node", unsafe {
                result::graph_add_kernel_node(chain.graph, before, &p)
            })?;
            chain.nodes.push(n);
        }
        // SAFETY: a complete graph.
        chain.exec = check("instantiating", unsafe {
            result::graph_instantiate(chain.graph)
        })?;
        Ok(chain)
    }

    /// Launches `batch` (at most [`CHAIN`] launches, each a function and its dispatch) in
    /// order on `stream`. Nothing is launched when it fails.
    pub fn launch(
        &mut self,
        batch: &[(sys::CUfunction, &Dispatch)],
        stream: sys::CUstream,
    ) -> Result<(), String> {
        if batch.is_empty() || batch.len() > CHAIN {
            return Err(format!("a batch of {} launches", batch.len()));
        }
        let mut params = Vec::new();
        for (k, (f, d)) in batch.iter().enumerate() {
            let mut values = d.params.clone();
            slot_addresses(&mut values, &mut params);
            let p = node(*f, d, &mut params);
            // SAFETY: a node of this chain's graph; `p` points at `values`' slots, whose
            // values the call copies (a launch of the graph already queued keeps its own).
            check("setting a node's launch", unsafe {
                result::graph_exec_set_kernel_node(self.exec, self.nodes[k], &p)
            })?;
        }
        self.enable(batch.len())?;
        // SAFETY: an instantiated graph whose enabled nodes were all set above.
        check("launching", unsafe {
            cudarc::driver::result::graph::launch(self.exec, stream)
        })
    }

    /// Enables the first `n` nodes and disables the rest (a disabled node passes its
    /// dependency on as an empty node would).
    fn enable(&mut self, n: usize) -> Result<(), String> {
        let (lo, hi, on) = if n > self.enabled {
            (self.enabled, n, true)
        } else {
            (n, self.enabled, false)
        };
        for &node in &self.nodes[lo..hi] {
            // SAFETY: a kernel node of this chain's graph.
            check("enabling a node", unsafe {
                result::graph_node_set_enabled(self.exec, node, on)
            })?;
        }
        self.enabled = n;
        Ok(())
    }
}

impl Drop for Chain {
    fn drop(&mut self) {
        // SAFETY: made in `new` (null where that failed first). A launch of the chain may
        // still run (a chain dropped after a failed call): the driver frees an executable
        // graph destroyed while in flight once it completes.
        unsafe {
            if !self.exec.is_null() {
                let _ = cudarc::driver::result::graph::exec_destroy(self.exec);
            }
            if !self.graph.is_null() {
                let _ = cudarc::driver::result::graph::destroy(self.graph);
            }
        }
    }
}
