//! Rodinia's bfs (OpenACC version, `bfs.cpp`): breadth-first search from node 0 of an
//! undirected graph in compressed rows (each node's first edge and edge count, one edge list),
//! level by level: one parallel loop expands the frontier (`h_graph_mask`) into the next one
//! (`h_updating_graph_mask`), writing each newly reached node's cost; a second one makes the
//! next frontier current, marks it visited and tells the host, through an `||` reduction of
//! `stop`, whether there is another level.
//!
//! The original's directives, kept: `data create(h_updating_graph_mask, h_graph_mask,
//! h_graph_visited, h_graph_nodes, h_graph_edges) copyout(h_cost)` around the whole search;
//! `update device(h_graph_nodes) async(TRANSFER_GRAPH_NODE)` at its start, `update
//! device(h_graph_edges)` and `wait(TRANSFER_GRAPH_NODE)` before the search; `parallel loop`
//! on the loop that clears the three masks and on the one that sets the costs to -1 (0 at the
//! source); `kernels present(h_graph_mask, h_graph_visited)` around the two stores that mark the
//! source; `parallel loop` on the frontier loop `tid` (its inner loop over the edges without a
//! directive, as written); `parallel loop vector reduction(||: stop)` on the loop that makes
//! the next frontier. Rodinia's `Node` struct is a `#[derive(acc::DeviceCopy)]` struct of the
//! same two `int` fields.
//!
//! Changed: the original allocates `h_cost` inside the data region, after `copyout(h_cost)` has
//! been entered with the pointer still unset (so its copy-out writes through a stale pointer);
//! the port allocates it before the region, which is what the clause means. Rodinia reads
//! the graph from a file made by its `graphgen` (`graph1MW_6.txt`: 1M nodes); the port makes
//! the same kind of graph in memory from `unit()`: each node starts 2 to 4 undirected edges to
//! random nodes (so about 6 edges a node, both directions stored), weights dropped (bfs reads
//! only the edge targets). Timed as the search's data region, transfers included.

use std::time::Instant;

use crate::{unit, Outcome};

/// Where the port comes from.
pub const ORIGIN: &str = "Rodinia 3.1 bfs, OpenACC version (openacc/bfs/bfs.cpp; qbunia/rodinia)";

/// The queue the node list travels on while the masks are cleared.
const TRANSFER_GRAPH_NODE: i32 = 1;

/// A node: where its edges start in the edge list, and how many there are.
#[derive(Clone, Copy, Debug, Default, PartialEq, acc::DeviceCopy)]
#[repr(C)]
pub struct Node {
    pub starting: i32,
    pub no_of_edges: i32,
}

/// The search of the original's `BFSGraph`, from its data region on: the cost (level) of every
/// node from `source` (-1 for a node it cannot reach), and the number of levels run.
#[acc::offload]
pub fn bfs_graph(
    h_graph_nodes: &[Node],
    h_graph_edges: &[i32],
    source: usize,
    h_cost: &mut [i32],
) -> usize {
    let no_of_nodes = h_graph_nodes.len();
    let edge_list_size = h_graph_edges.len();
    let mut h_graph_mask = vec![false; no_of_nodes];
    let mut h_updating_graph_mask = vec![false; no_of_nodes];
    let mut h_graph_visited = vec![false; no_of_nodes];
    let mut k = 0;
    #[acc::data(
        create(h_updating_graph_mask[0..no_of_nodes]),
        create(h_graph_mask[0..no_of_nodes], h_graph_visited[0..no_of_nodes]),
        create(h_graph_nodes[0..no_of_nodes], h_graph_edges[0..edge_list_size]),
        copyout(h_cost[0..no_of_nodes])
    )]
    {
        acc::update!(device(h_graph_nodes[0..no_of_nodes]), async(TRANSFER_GRAPH_NODE));

        #[acc::parallel_loop]
        for i in 0..no_of_nodes {
            h_updating_graph_mask[i] = false;
            h_graph_mask[i] = false;
            h_graph_visited[i] = false;
        }

        #[acc::kernels(present(h_graph_mask[0..no_of_nodes], h_graph_visited[0..no_of_nodes]))]
        {
            // Set the source node as true in the mask.
            h_graph_mask[source] = true;
            h_graph_visited[source] = true;
        }

        #[acc::parallel_loop]
        for i in 0..no_of_nodes {
            h_cost[i] = -1;
            if i == source {
                h_cost[source] = 0;
            }
        }

        // Finish the transfer of the nodes and the edges.
        acc::update!(device(h_graph_edges[0..edge_list_size]));
        acc::wait!(TRANSFER_GRAPH_NODE);

        // The original's `do { stop = false; ... } while (stop);`.
        let mut stop = true;
        while stop {
            // If no thread changes this value, the loop stops.
            stop = false;

            #[acc::parallel_loop]
            for tid in 0..no_of_nodes {
                if h_graph_mask[tid] {
                    h_graph_mask[tid] = false;
                    for i in h_graph_nodes[tid].starting
                        ..(h_graph_nodes[tid].no_of_edges + h_graph_nodes[tid].starting)
                    {
                        let id = h_graph_edges[i as usize] as usize;
                        if !h_graph_visited[id] {
                            h_cost[id] = h_cost[tid] + 1;
                            h_updating_graph_mask[id] = true;
                        }
                    }
                }
            }

            #[acc::parallel_loop(vector, reduction(||: stop))]
            for tid in 0..no_of_nodes {
                if h_updating_graph_mask[tid] {
                    h_graph_mask[tid] = true;
                    h_graph_visited[tid] = true;
                    stop = true;
                    h_updating_graph_mask[tid] = false;
                }
            }
            k += 1;
        }
    }
    k
}

/// The costs by a plain queue-driven breadth-first search (the shortest hop counts the
/// level-synchronous loops compute).
fn plain(nodes: &[Node], edges: &[i32], source: usize) -> Vec<i32> {
    let mut cost = vec![-1i32; nodes.len()];
    let mut queue = std::collections::VecDeque::new();
    cost[source] = 0;
    queue.push_back(source);
    while let Some(u) = queue.pop_front() {
        let n = nodes[u];
        for &v in &edges[n.starting as usize..(n.starting + n.no_of_edges) as usize] {
            let v = v as usize;
            if cost[v] < 0 {
                cost[v] = cost[u] + 1;
                queue.push_back(v);
            }
        }
    }
    cost
}

/// The least and most edges a node starts (Rodinia's `graphgen`: `MIN_EDGES` 2,
/// `MAX_INIT_EDGES` 4).
const MIN_EDGES: u64 = 2;
const MAX_INIT_EDGES: u64 = 4;

/// A graph as Rodinia's `graphgen` makes one: node `i` starts `2 + ⌊3 unit(1, i)⌋` edges, the
/// `j`-th to node `⌊n unit(2, 4 i + j)⌋`, each stored in both directions (in the order made).
fn input(no_of_nodes: usize) -> (Vec<Node>, Vec<i32>) {
    let n = no_of_nodes as u64;
    let mut adjacency: Vec<Vec<i32>> = vec![Vec::new(); no_of_nodes];
    for i in 0..n {
        let spread = (MAX_INIT_EDGES - MIN_EDGES + 1) as f64;
        let num_edges = MIN_EDGES + (spread * unit(1, i)) as u64;
        for j in 0..num_edges {
            let id = ((n as f64 * unit(2, MAX_INIT_EDGES * i + j)) as u64).min(n - 1);
            adjacency[i as usize].push(id as i32);
            adjacency[id as usize].push(i as i32);
        }
    }
    let mut nodes = Vec::with_capacity(no_of_nodes);
    let mut edges = Vec::new();
    for list in &adjacency {
        nodes.push(Node {
            starting: edges.len() as i32,
            no_of_edges: list.len() as i32,
        });
        edges.extend_from_slice(list);
    }
    (nodes, edges)
}

/// The nodes of each size: 4,096 (CI) and 1M (Rodinia's `graph1MW_6.txt`).
fn size(large: bool) -> usize {
    if large {
        1 << 20
    } else {
        4096
    }
}

/// Runs the search on the current device at the small or large size, timed and verified.
pub fn run_size(large: bool) -> Result<Outcome, String> {
    run(size(large))
}

/// The CUDA reference's arguments for the same size.
pub fn cuda_args(large: bool) -> Vec<String> {
    vec![size(large).to_string()]
}

/// Searches a graph of `no_of_nodes` nodes from node 0 on the current device, timed and
/// verified.
pub fn run(no_of_nodes: usize) -> Result<Outcome, String> {
    if no_of_nodes == 0 || no_of_nodes > i32::MAX as usize / 8 {
        return Err(format!(
            "bfs needs 1 to {} nodes (its edge offsets are `int`s), got {no_of_nodes}",
            i32::MAX as usize / 8
        ));
    }
    let (nodes, edges) = input(no_of_nodes);
    let source = 0;
    let mut h_cost = vec![0i32; no_of_nodes];
    let t = Instant::now();
    let levels = bfs_graph(&nodes, &edges, source, &mut h_cost);
    let time = t.elapsed();
    let want = crate::plain_result("bfs", no_of_nodes, || plain(&nodes, &edges, source));
    // Integer costs: the same on every device, node for node.
    if let Some(i) = (0..want.len()).find(|&i| h_cost[i] != want[i]) {
        return Err(format!(
            "bfs h_cost[{i}] = {}, the plain search gives {}",
            h_cost[i], want[i]
        ));
    }
    let reached = want.iter().filter(|&&c| c >= 0).count();
    Ok(Outcome {
        time,
        checksum: h_cost.iter().map(|&c| c as i64).sum::<i64>() as f64,
        verified: format!(
            "against a plain queue search, all {no_of_nodes} costs identical ({reached} reached, {levels} levels)"
        ),
    })
}
