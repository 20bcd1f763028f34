//! Several devices from one process: the 2-D heat (Laplace, Jacobi) solver of `mpi_heat`, its
//! plate's rows in one block per thread, each thread on a device of its own (device numbers
//! are per thread, OpenACC 3.3 section 2.3: `acc::set_device_num(t % devices)`), with a data
//! region around its time loop. After every sweep the threads exchange halo rows, one of two
//! ways (`--halo`):
//! - `update`: each thread copies its edge rows to the host (`acc::update_self`) into a
//!   mailbox, and after a barrier takes its neighbours' rows into its halo rows
//!   (`acc::update_device`). Any device.
//! - `peer`: each thread copies its neighbours' edge rows from their devices' memory into its
//!   halo rows with `acc::memcpy_peer` (device addresses from `acc::deviceptr`, which threads
//!   can share): GPU to GPU over NVLink or PCIe where the driver grants peer access, staged
//!   through the host where not. Devices with addresses (nvidia); the default there.
//!
//! The result is checked bit for bit against the plate solved as one block on device 0.
//! `cargo run --release --example multi_device [n] [steps] [threads] [--halo update|peer]`
//! (default 1024 x 1024, 200 sweeps, one thread per device and at least two).

#[path = "support/heat_block.rs"]
mod heat_block;

use std::sync::{Barrier, Mutex};
use std::time::Instant;

use heat_block::{Alone, Block, Neighbours};

#[derive(Clone, Copy, PartialEq, Debug)]
enum Halo {
    Update,
    Peer,
}

/// A thread's edge rows (first, last).
type EdgeRows = Mutex<(Vec<f64>, Vec<f64>)>;
/// A thread's device number and the device addresses of its two grids.
type Grids = Mutex<Option<(usize, [acc::DevicePtr; 2])>>;

/// What the threads share.
struct Shared {
    barrier: Barrier,
    /// `update`: each thread's edge rows (first, last), for each parity of the step, so that a
    /// thread writing the next step's rows never meets a neighbour still reading these.
    mailboxes: Vec<[EdgeRows; 2]>,
    /// `peer`: each thread's device number and the device addresses of its two grids.
    grids: Vec<Grids>,
    /// Each thread's largest change of its last sweep.
    changes: Vec<Mutex<f64>>,
    /// When the time loops started, and how long they took.
    started: Mutex<Option<Instant>>,
    elapsed: Mutex<f64>,
}

/// One thread's view of the others.
struct Threads<'s> {
    shared: &'s Shared,
    me: usize,
    halo: Halo,
    step: usize,
    /// Seconds spent exchanging halos.
    exchanging: f64,
}

impl Neighbours for Threads<'_> {
    fn exchange(&mut self, grid: &mut [f64], block: &Block) {
        let t = Instant::now();
        let (first, last) = block.edge_rows();
        let (top, bottom) = block.halo_rows();
        let (me, parity) = (self.me, self.step % 2);
        let count = self.shared.grids.len();
        let neighbours = [me.checked_sub(1), (me + 1 < count).then_some(me + 1)];
        match self.halo {
            Halo::Update => {
                if neighbours[0].is_some() {
                    acc::update_self(&mut grid[first.clone()]).expect("update self");
                }
                if neighbours[1].is_some() {
                    acc::update_self(&mut grid[last.clone()]).expect("update self");
                }
                {
                    let mut mine = self.shared.mailboxes[me][parity].lock().unwrap();
                    mine.0.clear();
                    mine.0.extend_from_slice(&grid[first]);
                    mine.1.clear();
                    mine.1.extend_from_slice(&grid[last]);
                }
                self.shared.barrier.wait();
                if let Some(up) = neighbours[0] {
                    grid[top.clone()]
                        .copy_from_slice(&self.shared.mailboxes[up][parity].lock().unwrap().1);
                    acc::update_device(&grid[top]).expect("update device");
                }
                if let Some(down) = neighbours[1] {
                    grid[bottom.clone()]
                        .copy_from_slice(&self.shared.mailboxes[down][parity].lock().unwrap().0);
                    acc::update_device(&grid[bottom]).expect("update device");
                }
            }
            Halo::Peer => {
                // Every neighbour's sweep is done before its rows are read.
                self.shared.barrier.wait();
                let (my_dev, my_grids) = self.shared.grids[me].lock().unwrap().expect("published");
                // Even steps wrote `v` (grid 1), odd ones `u` (grid 0).
                let which = usize::from(self.step % 2 == 0);
                let bytes = block.n * 8;
                if let Some(up) = neighbours[0] {
                    let (dev, grids) = self.shared.grids[up].lock().unwrap().expect("published");
                    // The row above is the upper block's last row.
                    let up_rows = block_of(self.shared, up, block.n).rows;
                    acc::memcpy_peer(
                        my_grids[which].offset(top.start * 8),
                        my_dev,
                        grids[which].offset(up_rows * bytes),
                        dev,
                        bytes,
                    )
                    .expect("peer copy");
                }
                if let Some(down) = neighbours[1] {
                    let (dev, grids) = self.shared.grids[down].lock().unwrap().expect("published");
                    acc::memcpy_peer(
                        my_grids[which].offset(bottom.start * 8),
                        my_dev,
                        grids[which].offset(bytes),
                        dev,
                        bytes,
                    )
                    .expect("peer copy");
                }
            }
        }
        self.step += 1;
        self.exchanging += t.elapsed().as_secs_f64();
    }

    fn largest(&mut self, change: f64) -> f64 {
        // Only the final value is used: the main thread takes the largest of all threads'.
        *self.shared.changes[self.me].lock().unwrap() = change;
        change
    }
}

/// Block `t` of the plate split among all threads.
fn block_of(shared: &Shared, t: usize, n: usize) -> Block {
    heat_block::blocks(n, shared.grids.len())[t]
}

/// Thread `t`'s part: its device, its block, the time loop; its rows of the plate at the end.
#[acc::offload]
fn run_block(
    shared: &Shared,
    t: usize,
    n: usize,
    steps: usize,
    halo: Halo,
) -> (usize, Vec<f64>, f64) {
    let ty = acc::get_device_type();
    let dev = t % acc::get_num_devices(ty);
    acc::set_device_num(dev, ty);
    let block = block_of(shared, t, n);
    let (mut u, mut v) = (block.start(), block.start());
    let mut threads = Threads {
        shared,
        me: t,
        halo,
        step: 0,
        exchanging: 0.0,
    };
    heat_block::warm_up();
    if halo == Halo::Peer {
        // The grids are present from here on (a dynamic reference, on this thread's device), so
        // their device addresses stay the same through `solve`'s data region.
        acc::copyin(&u).expect("copyin");
        acc::copyin(&v).expect("copyin");
        let at = |g: &Vec<f64>| {
            acc::deviceptr(g)
                .expect("peer copies need device addresses (nvidia, or acc::malloc memory)")
        };
        *shared.grids[t].lock().unwrap() = Some((dev, [at(&u), at(&v)]));
        shared.barrier.wait();
    }
    // Timed from when every thread is ready until the last is done.
    shared.barrier.wait();
    if t == 0 {
        *shared.started.lock().unwrap() = Some(Instant::now());
    }
    heat_block::solve(&mut u, &mut v, &block, steps, steps, &mut threads);
    shared.barrier.wait();
    if t == 0 {
        let started = shared.started.lock().unwrap().expect("started");
        *shared.elapsed.lock().unwrap() = started.elapsed().as_secs_f64();
    }
    if halo == Halo::Peer {
        acc::copyout(&mut u).expect("copyout");
        acc::delete(&v).expect("delete");
    }
    (dev, block.interior(&u).to_vec(), threads.exchanging)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut numbers = args.iter().filter_map(|a| a.parse::<usize>().ok());
    let n = numbers.next().unwrap_or(1024).max(4);
    let steps = numbers.next().unwrap_or(200).next_multiple_of(2);
    let ty = acc::get_device_type();
    let devices = acc::get_num_devices(ty);
    let threads = numbers.next().unwrap_or(devices.max(2)).clamp(1, n - 2);
    let addresses = acc::deviceptr(&[0.0f64; 1][..]).is_some() && ty == acc::DeviceType::Nvidia;
    let halo = match args
        .iter()
        .position(|a| a == "--halo")
        .map(|i| args.get(i + 1))
    {
        Some(Some(h)) if h == "update" => Halo::Update,
        Some(Some(h)) if h == "peer" => Halo::Peer,
        Some(other) => panic!("--halo takes `update` or `peer`, not {other:?}"),
        None if addresses => Halo::Peer,
        None => Halo::Update,
    };
    if halo == Halo::Peer && ty != acc::DeviceType::Nvidia {
        eprintln!("multi_device: --halo peer needs device addresses (nvidia); this is {ty}");
        std::process::exit(2);
    }

    let shared = Shared {
        barrier: Barrier::new(threads),
        mailboxes: (0..threads).map(|_| Default::default()).collect(),
        grids: (0..threads).map(|_| Mutex::new(None)).collect(),
        changes: (0..threads).map(|_| Mutex::new(0.0)).collect(),
        started: Mutex::new(None),
        elapsed: Mutex::new(0.0),
    };
    let parts: Vec<(usize, Vec<f64>, f64)> = std::thread::scope(|s| {
        let shared = &shared;
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                s.spawn(move || {
                    acc::set_device_type(ty);
                    run_block(shared, t, n, steps, halo)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a block's thread failed"))
            .collect()
    });
    let elapsed = *shared.elapsed.lock().unwrap();
    let residual = shared
        .changes
        .iter()
        .map(|c| *c.lock().unwrap())
        .fold(0.0, f64::max);

    // The plate from every block, then the same plate as one block on device 0.
    let whole = heat_block::blocks(n, 1)[0];
    let mut plate = whole.start();
    for (t, (_, rows, _)) in parts.iter().enumerate() {
        let b = block_of(&shared, t, n);
        plate[b.first * n..(b.first + b.rows) * n].copy_from_slice(rows);
    }
    acc::set_device_num(0, ty);
    let (mut a, mut b) = (whole.start(), whole.start());
    let t1 = Instant::now();
    let alone = heat_block::solve(&mut a, &mut b, &whole, steps, steps, &mut Alone);
    let one_block = t1.elapsed().as_secs_f64();
    if let Err(e) = heat_block::compare_bits(&plate, &a) {
        panic!("multi_device: {threads} threads on {ty}: {e}");
    }
    assert_eq!(residual.to_bits(), alone.to_bits(), "the residuals differ");
    let on: Vec<usize> = parts.iter().map(|p| p.0).collect();
    let exchange = parts.iter().map(|p| p.2).fold(0.0, f64::max);
    println!(
        "multi_device: {n}x{n}, {steps} sweeps, {threads} threads on {ty} devices {on:?} of {devices} ({}), halo = {halo:?}, time = {elapsed:.3} s (halo exchange up to {exchange:.3} s; one block on device 0: {one_block:.3} s), residual = {residual:.6e}, same bits as one block",
        acc::get_property(0, ty, acc::Property::Name),
    );
}
