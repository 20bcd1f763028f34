//! The decomposition the multi-device examples share (`mpi_heat`, `multi_device`): Jacobi
//! sweeps of the Laplace equation on an `n` x `n` plate with fixed edges, its interior rows
//! split into row blocks, one per rank or thread. A block holds its rows and one halo row
//! above and below (the neighbour's edge row, or the plate's fixed edge), and runs the same
//! sweep as the whole plate does: every point gets the same four f64 values added in the same
//! order, so any decomposition gives the one-block result bit for bit.

/// One block: interior rows `first..first + rows` of an `n`-wide plate.
#[derive(Clone, Copy, Debug)]
pub struct Block {
    /// Its first row (of the plate; row 0 is the fixed top edge).
    pub first: usize,
    /// Its number of rows.
    pub rows: usize,
    /// Points per row.
    pub n: usize,
}

/// The plate's interior rows (1..n - 1) in `parts` blocks as even as can be.
pub fn blocks(n: usize, parts: usize) -> Vec<Block> {
    let inner = n - 2;
    assert!(
        parts >= 1 && parts <= inner,
        "{parts} blocks of {inner} rows"
    );
    let mut first = 1;
    (0..parts)
        .map(|p| {
            let rows = inner / parts + usize::from(p < inner % parts);
            let b = Block { first, rows, n };
            first += rows;
            b
        })
        .collect()
}

/// The plate at the start: hot top edge, warm left and right edges, cold bottom and inside.
pub fn start_value(n: usize, row: usize, col: usize) -> f64 {
    if row == 0 {
        100.0
    } else if row == n - 1 {
        0.0
    } else if col == 0 {
        50.0
    } else if col == n - 1 {
        25.0
    } else {
        0.0
    }
}

impl Block {
    /// Its rows with their halo rows (plate rows `first - 1 ..= first + rows`), at the start.
    pub fn start(&self) -> Vec<f64> {
        let n = self.n;
        (self.first - 1..self.first + self.rows + 1)
            .flat_map(|r| (0..n).map(move |c| start_value(n, r, c)))
            .collect()
    }
    /// Its own rows of a grid of its shape (no halos).
    pub fn interior<'a>(&self, grid: &'a [f64]) -> &'a [f64] {
        &grid[self.n..(self.rows + 1) * self.n]
    }
    /// Where its own first and last rows are in a grid of its shape (halo rows are 0 and
    /// `rows + 1`).
    pub fn edge_rows(&self) -> (std::ops::Range<usize>, std::ops::Range<usize>) {
        let n = self.n;
        (n..2 * n, self.rows * n..(self.rows + 1) * n)
    }
    /// Where its halo rows are.
    pub fn halo_rows(&self) -> (std::ops::Range<usize>, std::ops::Range<usize>) {
        let n = self.n;
        (0..n, (self.rows + 1) * n..(self.rows + 2) * n)
    }
}

/// One Jacobi sweep over rows `1..=rows` of a block (its halo rows are read, not written;
/// the first and last columns are fixed): `unew` from `u`, returning the largest change.
#[acc::offload]
pub fn sweep(u: &[f64], unew: &mut [f64], rows: usize, n: usize) -> f64 {
    let mut change = 0.0;
    #[acc::parallel_loop(present(u, unew), reduction(max: change))]
    for i in 1..rows + 1 {
        #[acc::r#loop(vector)]
        for j in 1..n - 1 {
            let k = i * n + j;
            unew[k] = 0.25 * (u[k - 1] + u[k + 1] + u[k - n] + u[k + n]);
            change = f64::max(change, (unew[k] - u[k]).abs());
        }
    }
    change
}

/// What a block's time loop asks of its neighbours.
pub trait Neighbours {
    /// Fills the halo rows of `grid` (the grid the last sweep wrote; present on the current
    /// device, and its device copy is what counts) from the neighbours' edge rows, and gives
    /// them this block's edge rows.
    fn exchange(&mut self, grid: &mut [f64], block: &Block);
    /// The largest of every block's `change` (an all-reduce).
    fn largest(&mut self, change: f64) -> f64;
}

/// No neighbours: the whole plate as one block.
pub struct Alone;

impl Neighbours for Alone {
    fn exchange(&mut self, _: &mut [f64], _: &Block) {}
    fn largest(&mut self, change: f64) -> f64 {
        change
    }
}

/// `steps` sweeps (an even number: the result is back in `u`) of `block`, whose grid `u` (and
/// its partner `v`, a copy of it) stay on the current device for the whole loop; after each
/// sweep the neighbours exchange halos, and every `check` sweeps (and after the last) the
/// blocks agree on the largest change, which this returns.
#[acc::offload]
pub fn solve(
    u: &mut Vec<f64>,
    v: &mut Vec<f64>,
    block: &Block,
    steps: usize,
    check: usize,
    neighbours: &mut impl Neighbours,
) -> f64 {
    assert!(steps % 2 == 0, "an even number of steps");
    let (rows, n) = (block.rows, block.n);
    let mut residual = f64::INFINITY;
    #[acc::data(copy(u), copyin(v))]
    {
        for step in 0..steps {
            let change = if step % 2 == 0 {
                let c = sweep(u, v, rows, n);
                neighbours.exchange(v, block);
                c
            } else {
                let c = sweep(v, u, rows, n);
                neighbours.exchange(u, block);
                c
            };
            if (step + 1) % check == 0 || step + 1 == steps {
                residual = neighbours.largest(change);
            }
        }
    }
    residual
}

/// Runs two sweeps of a small plate on the current device, so that its start-up and the first
/// compilation of the kernels are not timed.
pub fn warm_up() {
    let b = blocks(8, 1)[0];
    let (mut u, mut v) = (b.start(), b.start());
    solve(&mut u, &mut v, &b, 2, 2, &mut Alone);
}

/// The bits of two grids differ somewhere: where first, and how many points.
pub fn compare_bits(got: &[f64], want: &[f64]) -> Result<(), String> {
    let differ: Vec<usize> = (0..want.len())
        .filter(|&k| got[k].to_bits() != want[k].to_bits())
        .collect();
    match differ.first() {
        None => Ok(()),
        Some(&k) => Err(format!(
            "{} points differ from the one-block run, the first at {k}: {} against {}",
            differ.len(),
            got[k],
            want[k]
        )),
    }
}
