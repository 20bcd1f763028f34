//! A 2-D heat (Laplace, Jacobi) solver under MPI: the plate's rows in one block per rank,
//! each rank on a device of its own (`acc::mpi::select_device`: its rank on the node modulo
//! the node's devices), a data region around the time loop, halo rows exchanged after every
//! sweep, and the largest change all-reduced every 100 sweeps. Rank 0 then gathers the plate,
//! solves it again as one block on its device, and checks the two agree bit for bit.
//!
//! Halos travel one of two ways (`--halo`):
//! - `update`: `acc::update_self` of the block's edge rows, MPI send and receive of host
//!   memory, `acc::update_device` of the halo rows. Any MPI library, any device.
//! - `device`: `host_data use_device` gives the rows' device memory, handed to MPI directly
//!   (`acc::mpi::DeviceBuffer`). Needs a CUDA-aware MPI on the nvidia device; on devices that
//!   share host memory it is host memory. The default where the library is CUDA-aware and the
//!   device is nvidia.
//!
//! `cargo run --release --features mpi --example mpi_heat` under `mpirun -np 4`, with
//! arguments `[n] [steps] [--halo update|device]` (default 1024 x 1024, 200 sweeps).

#[path = "support/heat_block.rs"]
mod heat_block;

use std::time::Instant;

use heat_block::{Alone, Block, Neighbours};
use mpi::collective::SystemOperation;
use mpi::point_to_point::{Destination, Source};
use mpi::topology::{Communicator, Process, SimpleCommunicator};
use mpi::traits::CommunicatorCollectives;

#[derive(Clone, Copy, PartialEq, Debug)]
enum Halo {
    Update,
    Device,
}

/// This rank's neighbours: the ranks of the blocks above and below.
struct Ranks<'w> {
    world: &'w SimpleCommunicator,
    up: Option<Process<'w>>,
    down: Option<Process<'w>>,
    halo: Halo,
    /// Seconds spent exchanging halos.
    exchanging: f64,
}

impl Ranks<'_> {
    /// Sends `first` up and `last` down, receiving `top` from above and `bottom` from below.
    fn swap<S, R>(&self, first: &S, last: &S, top: &mut R, bottom: &mut R)
    where
        S: mpi::datatype::Buffer + ?Sized,
        R: mpi::datatype::BufferMut + ?Sized,
    {
        mpi::request::scope(|scope| {
            let sends = [
                self.up.map(|p| p.immediate_send(scope, first)),
                self.down.map(|p| p.immediate_send(scope, last)),
            ];
            let received = [
                self.up.map(|p| p.immediate_receive_into(scope, top)),
                self.down.map(|p| p.immediate_receive_into(scope, bottom)),
            ];
            for r in received.into_iter().flatten() {
                r.wait();
            }
            for s in sends.into_iter().flatten() {
                s.wait();
            }
        });
    }
}

/// Halos through device memory (`host_data use_device`).
#[acc::offload]
fn exchange_device(ranks: &Ranks, grid: &mut [f64], block: &Block) -> acc::Result<()> {
    let (first, last) = block.edge_rows();
    let (top, bottom) = block.halo_rows();
    let done;
    #[acc::host_data(use_device(grid))]
    {
        let rows = [
            grid.slice(first),
            grid.slice(last),
            grid.slice(top),
            grid.slice(bottom),
        ];
        done = (|| {
            let send_first = acc::mpi::DeviceBuffer::new(&rows[0])?;
            let send_last = acc::mpi::DeviceBuffer::new(&rows[1])?;
            let mut top = acc::mpi::DeviceBuffer::new(&rows[2])?;
            let mut bottom = acc::mpi::DeviceBuffer::new(&rows[3])?;
            ranks.swap(&send_first, &send_last, &mut top, &mut bottom);
            Ok(())
        })();
    }
    done
}

impl Neighbours for Ranks<'_> {
    fn exchange(&mut self, grid: &mut [f64], block: &Block) {
        let t = Instant::now();
        let (first, last) = block.edge_rows();
        let (top, bottom) = block.halo_rows();
        match self.halo {
            Halo::Update => {
                if self.up.is_some() {
                    acc::update_self(&mut grid[first.clone()]).expect("update self");
                }
                if self.down.is_some() {
                    acc::update_self(&mut grid[last.clone()]).expect("update self");
                }
                let (halo_top, rest) = grid.split_at_mut(first.start);
                let (own, halo_bottom) = rest.split_at_mut(bottom.start - first.start);
                let n = block.n;
                let (send_first, send_last) = (&own[..n], &own[own.len() - n..]);
                self.swap(send_first, send_last, halo_top, halo_bottom);
                if self.up.is_some() {
                    acc::update_device(&grid[top]).expect("update device");
                }
                if self.down.is_some() {
                    acc::update_device(&grid[bottom]).expect("update device");
                }
            }
            Halo::Device => exchange_device(self, grid, block).expect("halo through device memory"),
        }
        self.exchanging += t.elapsed().as_secs_f64();
    }

    fn largest(&mut self, change: f64) -> f64 {
        let mut all = 0.0;
        self.world
            .all_reduce_into(&change, &mut all, SystemOperation::max());
        all
    }
}

fn main() {
    let universe = mpi::initialize().expect("MPI could not start");
    let world = universe.world();
    let (rank, size) = (world.rank() as usize, world.size() as usize);

    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut numbers = args.iter().filter_map(|a| a.parse::<usize>().ok());
    let n = numbers.next().unwrap_or(1024).max(size + 2);
    let steps = numbers.next().unwrap_or(200).next_multiple_of(2);
    let device_num = acc::mpi::select_device(&world).expect("no device for this rank");
    let ty = acc::get_device_type();
    let halo = match args
        .iter()
        .position(|a| a == "--halo")
        .map(|i| args.get(i + 1))
    {
        Some(Some(h)) if h == "update" => Halo::Update,
        Some(Some(h)) if h == "device" => Halo::Device,
        Some(other) => panic!("--halo takes `update` or `device`, not {other:?}"),
        None if ty == acc::DeviceType::Nvidia && acc::mpi::cuda_aware() => Halo::Device,
        None => Halo::Update,
    };
    if halo == Halo::Device
        && (ty == acc::DeviceType::Wgpu
            || (ty == acc::DeviceType::Nvidia && !acc::mpi::cuda_aware()))
    {
        if rank == 0 {
            eprintln!("mpi_heat: --halo device needs device addresses MPI can use: host memory, or nvidia with a CUDA-aware MPI (this is {ty}, CUDA-aware: {})", acc::mpi::cuda_aware());
        }
        std::process::exit(2);
    }

    let block = heat_block::blocks(n, size)[rank];
    let (mut u, mut v) = (block.start(), block.start());
    let mut ranks = Ranks {
        world: &world,
        up: (rank > 0).then(|| world.process_at_rank(rank as i32 - 1)),
        down: (rank + 1 < size).then(|| world.process_at_rank(rank as i32 + 1)),
        halo,
        exchanging: 0.0,
    };
    heat_block::warm_up();
    world.barrier();
    let t = Instant::now();
    let residual = heat_block::solve(&mut u, &mut v, &block, steps, 100, &mut ranks);
    world.barrier();
    let elapsed = t.elapsed().as_secs_f64();
    let mut slowest_exchange = 0.0;
    world.all_reduce_into(
        &ranks.exchanging,
        &mut slowest_exchange,
        SystemOperation::max(),
    );

    if rank != 0 {
        world.process_at_rank(0).send(block.interior(&u));
        return;
    }
    // The plate from every block, then the same plate solved as one block on this device.
    let whole = heat_block::blocks(n, 1)[0];
    let mut plate = whole.start();
    for (r, b) in heat_block::blocks(n, size).iter().enumerate() {
        let rows = &mut plate[b.first * n..(b.first + b.rows) * n];
        if r == 0 {
            rows.copy_from_slice(block.interior(&u));
        } else {
            world.process_at_rank(r as i32).receive_into(rows);
        }
    }
    let (mut a, mut b) = (whole.start(), whole.start());
    let t = Instant::now();
    let alone = heat_block::solve(&mut a, &mut b, &whole, steps, 100, &mut Alone);
    let one_block = t.elapsed().as_secs_f64();
    if let Err(e) = heat_block::compare_bits(&plate, &a) {
        panic!("mpi_heat: {size} ranks on {ty}: {e}");
    }
    assert_eq!(residual.to_bits(), alone.to_bits(), "the residuals differ");
    println!(
        "mpi_heat: {n}x{n}, {steps} sweeps, {size} ranks, device = {ty} ({}; rank 0 on device {device_num}), halo = {halo:?}{}, time = {elapsed:.3} s (halo exchange up to {slowest_exchange:.3} s; one block on rank 0's device: {one_block:.3} s), residual = {residual:.6e}, same bits as one block",
        acc::get_property(device_num, ty, acc::Property::Name),
        if acc::mpi::cuda_aware() { ", CUDA-aware MPI" } else { "" },
    );
}
