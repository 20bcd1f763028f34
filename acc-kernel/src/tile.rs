//! `tile` (3.3 section 2.9.8): a tiled nest of n loops runs as n tile loops around n element
//! loops. [`expand`] rewrites the IR so; backends lower what it gives. The tile loops take the
//! nest's gang level (and worker, when vector is present), the element loops its vector (or
//! worker) level, so that on a GPU a gang runs the elements of its tile on its threads.
//!
//! ```text
//! for i, j tile[8, 32] { body }
//! ```
//! becomes
//! ```text
//! for ti in 0..ceil(ni / 8), tj in 0..ceil(nj / 32) gang {
//!     for ei in 0..8, ej in 0..32 vector {
//!         if ti * 8 + ei < ni && tj * 32 + ej < nj {
//!             i = start_i + (ti * 8 + ei) * step_i;  j = ...;  body
//!         }
//!     }
//! }
//! ```
//! The levels' start, step and trip count are evaluated where they are used; a nest whose body
//! assigns a local they read runs untiled instead (as a collapsed nest: the same iterations).

use std::borrow::Cow;
use std::collections::HashSet;

use super::*;

mod chunks;
mod merge;

/// The sizes `tile(*, ..)` stands for, in `tile(..)`'s order (innermost loop first): tiles of
/// 256 elements, as wide as possible along the innermost loop (32 x 8 for two loops, the rest
/// 1), one element per thread of a 256-thread block or workgroup.
pub fn default_sizes(n: usize) -> Vec<u32> {
    match n {
        0 => vec![],
        1 => vec![256],
        _ => {
            let mut v = vec![32, 8];
            v.resize(n, 1);
            v
        }
    }
}

/// How many tiles of `size` cover `trips` iterations.
pub fn tiles(trips: u64, size: u32) -> u64 {
    trips.div_ceil(u64::from(size.max(1)))
}

/// `k` with every tiled nest rewritten as tile loops around element loops; `k` itself when it
/// has none. What the tiles stage through shared memory fits `shared_bytes`
/// ([`crate::plan::Caps::shared_array_bytes`]).
pub fn expand(k: &Kernel, shared_bytes: u32) -> Cow<'_, Kernel> {
    if !has_tile(&k.function.body) {
        return Cow::Borrowed(k);
    }
    let mut out = k.clone();
    let body = std::mem::take(&mut out.function.body);
    out.function.body = block(k, shared_bytes, &mut out.function, body);
    Cow::Owned(out)
}

/// The tile [`auto_tile`] gives a flat parallel loop: a block's worth of iterations.
pub const AUTO_TILE: u32 = 256;

/// The tile [`auto_tile`] gives each level of a collapsed pair of parallel loops: 16 x 16, a
/// block's worth (the `tile(16, 16)` of a matrix product: 0.33x -> 0.87x of a tiled CUDA
/// kernel on an H100, where the collapsed nest ran untiled).
pub const AUTO_TILE_2D: u32 = 16;

/// The shortest inner loop of constant length [`auto_tile`] stages.
const AUTO_TILE_MIN_TRIPS: u32 = 64;

/// Tiles ([`AUTO_TILE`]; [`AUTO_TILE_2D`] each level of a collapsed pair) each `vector`
/// parallel loop of one or two levels that is a grid entry point (at
/// the region's top level or in a host-driven loop's body) without `tile`,
/// `reduction` or `private` clauses whose iterations each run a sequential loop over data they
/// all read (an n-body interaction loop, a filter's weights, see `chunks::plan`; not a loop
/// known to be shorter than `AUTO_TILE_MIN_TRIPS`): its block
/// then stages those reads through shared memory a chunk at a time rather than every thread
/// fetching each value. Tiling a parallel loop leaves its iterations as they are (3.3 section
/// 2.9.8), so every device gives the same results. Returns the outermost variables of the
/// loops it tiled (ACC_INFO says so).
pub fn auto_tile(k: &mut Kernel, shared_bytes: u32) -> Vec<LocalId> {
    // The loops that become grid entry points: at the top of the region, or in the body of a
    // loop the host drives (`segments::host_loops`).
    let hosted = super::segments::host_loops::HostLoops::new(k);
    let mut tiled = Vec::new();
    let mut candidates = Vec::new();
    fn grid_loops<'s>(
        b: &'s [Stmt],
        hosted: &super::segments::host_loops::HostLoops,
        out: &mut Vec<&'s Stmt>,
    ) {
        for s in b {
            match s {
                Stmt::For {
                    schedule: Some(_), ..
                } => out.push(s),
                Stmt::For { body, .. } if hosted.driven(s) => grid_loops(body, hosted, out),
                Stmt::If { accept, reject, .. } if hosted.decided(s) => {
                    grid_loops(accept, hosted, out);
                    grid_loops(reject, hosted, out);
                }
                _ => {}
            }
        }
    }
    grid_loops(&k.function.body, &hosted, &mut candidates);
    // Each tiled loop's outermost variable and its tile.
    let mut tiles: Vec<(LocalId, Vec<u32>)> = Vec::new();
    // Gang loops over one vector loop tiled as the collapsed pair they are: the outer
    // variable, the assignments of the vector loop's bounds, the pair.
    let mut merged: Vec<(LocalId, Vec<Stmt>, Stmt)> = Vec::new();
    for s in candidates {
        if k.vector_length.is_none() {
            if let Some((before, mut pair)) = merge::as_collapsed(&k.function, s) {
                if let Stmt::For {
                    levels, body, tile, ..
                } = &mut pair
                {
                    if let Some(sizes) = auto_sizes(k, levels, body, shared_bytes) {
                        *tile = sizes;
                        tiled.push(levels[0].var);
                        merged.push((levels[0].var, before, pair));
                        continue;
                    }
                }
            }
        }
        if let Stmt::For {
            levels,
            schedule: Some(sched),
            reductions,
            private,
            tile,
            body,
        } = s
        {
            if sched.vector && tile.is_empty() && reductions.is_empty() && private.is_empty() {
                if let Some(sizes) = auto_sizes(k, levels, body, shared_bytes) {
                    tiled.push(levels[0].var);
                    tiles.push((levels[0].var, sizes));
                }
            }
        }
    }
    fn set(
        b: &mut Vec<Stmt>,
        tiles: &[(LocalId, Vec<u32>)],
        merged: &mut Vec<(LocalId, Vec<Stmt>, Stmt)>,
    ) {
        let mut at = 0;
        while at < b.len() {
            let first = match &b[at] {
                Stmt::For { levels, .. } => levels.first().map(|l| l.var),
                _ => None,
            };
            if let Some(m) = merged.iter().position(|(v, _, _)| Some(*v) == first) {
                let (_, before, pair) = merged.remove(m);
                let n = before.len();
                b.splice(at..=at, before.into_iter().chain(std::iter::once(pair)));
                at += n + 1;
                continue;
            }
            let s = &mut b[at];
            at += 1;
            match s {
                Stmt::For {
                    levels, tile, body, ..
                } => {
                    let first = levels.first().map(|l| l.var);
                    match tiles.iter().find(|(v, _)| Some(*v) == first) {
                        Some((_, sizes)) => *tile = sizes.clone(),
                        None => set(body, tiles, merged),
                    }
                }
                Stmt::If { accept, reject, .. } => {
                    set(accept, tiles, merged);
                    set(reject, tiles, merged);
                }
                _ => {}
            }
        }
    }
    set(&mut k.function.body, &tiles, &mut merged);
    tiled
}

/// [`tile_hint`] for a gang loop `s` whose body is one vector loop (seen as the pair it is):
/// what tiling the pair would give (the gang and vector loops of a transpose store far apart
/// as its `collapse(2)` form does; a matrix product's pair acc tiles itself).
pub fn gang_pair_hint(k: &Kernel, s: &Stmt, shared_bytes: u32) -> Option<&'static str> {
    let (_, pair) = merge::as_collapsed(&k.function, s)?;
    let Stmt::For { levels, body, .. } = &pair else {
        return None;
    };
    tile_hint(k, levels, body, shared_bytes)
}

/// The tile [`auto_tile`] gives the untiled nest over `levels` with `body`, where tiling is a
/// known gain: a flat loop whose iterations each run a sequential loop over data all of them
/// read ([`AUTO_TILE`]); a pair whose elements each run a sequential loop over data the others
/// read too (a matrix product: 16 x 16, its loop in chunks through shared memory); a pair whose
/// stores run along the outer loop (a transpose: 32 x 32, adjacent threads storing adjacent
/// elements, the reads staged through shared memory). Not a loop known to be shorter than
/// [`AUTO_TILE_MIN_TRIPS`] (a stencil's taps are not worth the copies and barriers).
fn auto_sizes(
    k: &Kernel,
    levels: &[LoopLevel],
    body: &Block,
    shared_bytes: u32,
) -> Option<Vec<u32>> {
    if bounds_assigned(&k.function, levels, body) {
        return None;
    }
    let sizes = match levels.len() {
        1 => vec![AUTO_TILE],
        2 => vec![AUTO_TILE_2D, AUTO_TILE_2D],
        _ => return None,
    };
    let chunked =
        chunks::plan(k, &k.function, levels, &sizes, shared_bytes, body).is_some_and(|p| {
            // (A tile of two levels shares the reads along each level: `chunks::chunked` asks the
            // one-level tile only.)
            (levels.len() > 1 || p.shares_reads())
                && p.constant_trips(&k.function)
                    .is_none_or(|n| n >= i128::from(AUTO_TILE_MIN_TRIPS))
        });
    if chunked {
        return Some(sizes);
    }
    match store_contiguous_level(&k.function, levels, body) {
        Some(at) if levels.len() == 2 && at + 1 != levels.len() => {
            Some(vec![AUTO_TILE_TRANSPOSE, AUTO_TILE_TRANSPOSE])
        }
        _ => None,
    }
}

/// The tile [`auto_tile`] gives each level of a pair whose stores run along the outer loop (a
/// transpose: 0.04x -> 0.88x of a CUDA transpose with `tile(32, 32)` on an H100).
pub const AUTO_TILE_TRANSPOSE: u32 = 32;

/// What a tiled nest stages through shared memory, for ACC_INFO.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TileStaging {
    /// The arrays whose reads go through a copy of the tile in shared memory.
    pub reads: Vec<String>,
    /// Where the elements' inner sequential loop runs in chunks staged through shared memory
    /// (`chunks`): its variable and the chunk's length.
    pub chunked: Option<(String, u32)>,
}

/// What `tile(16, 16)` would give the untiled two-level nest over `levels` with `body`, which
/// each thread runs an element of, where that is a known gain (ACC_INFO says so, issue 42):
/// each element's inner sequential loop over data the others read too (a matrix product's `k`
/// loop, staged in chunks through shared memory: 0.33x -> 0.87x of a tiled CUDA kernel on an
/// H100), or stores that run along the outer loop (a transpose, whose tile gives adjacent
/// threads adjacent stores: 0.04x -> 0.88x).
pub fn tile_hint(
    k: &Kernel,
    levels: &[LoopLevel],
    body: &Block,
    shared_bytes: u32,
) -> Option<&'static str> {
    if levels.len() != 2 || bounds_assigned(&k.function, levels, body) {
        return None;
    }
    if chunks::plan(k, &k.function, levels, &[16, 16], shared_bytes, body).is_some() {
        return Some("each element's inner loop reads data the other elements read too: `tile(16, 16)` would stage those reads through shared memory a chunk at a time (a matrix product: 0.33x -> 0.87x of a tiled CUDA kernel)");
    }
    match store_contiguous_level(&k.function, levels, body) {
        Some(at) if at + 1 != levels.len() => Some("its stores run along the outer loop, so adjacent threads store far apart: `tile(32, 32)` would give adjacent threads adjacent stores and stage the reads through shared memory (a transpose: 0.04x -> 0.88x)"),
        _ => None,
    }
}

/// What the tiled nest `s` of `k` stages through shared memory (see `stage_loads` and
/// `chunks`) within `shared_bytes`, for ACC_INFO.
pub fn staging(k: &Kernel, shared_bytes: u32, s: &Stmt) -> TileStaging {
    let mut f = k.function.clone();
    match s {
        Stmt::For {
            levels,
            schedule,
            reductions,
            private,
            tile,
            body,
        } if !tile.is_empty() && !bounds_assigned(&f, levels, body) => {
            let body = block(k, shared_bytes, &mut f, body.clone());
            tiled(
                (k, shared_bytes),
                &mut f,
                levels.clone(),
                schedule.clone(),
                reductions.clone(),
                private.clone(),
                tile,
                body,
            )
            .1
        }
        _ => TileStaging::default(),
    }
}

fn has_tile(b: &Block) -> bool {
    let mut found = false;
    walk::for_each_stmt(b, &mut |s| {
        found |= matches!(s, Stmt::For { tile, .. } if !tile.is_empty());
    });
    found
}

fn block(k: &Kernel, shared_bytes: u32, f: &mut Function, b: Block) -> Block {
    b.into_iter().map(|s| stmt(k, shared_bytes, f, s)).collect()
}

fn stmt(k: &Kernel, shared_bytes: u32, f: &mut Function, s: Stmt) -> Stmt {
    match s {
        Stmt::If {
            cond,
            accept,
            reject,
        } => Stmt::If {
            cond,
            accept: block(k, shared_bytes, f, accept),
            reject: block(k, shared_bytes, f, reject),
        },
        Stmt::Loop { body } => Stmt::Loop {
            body: block(k, shared_bytes, f, body),
        },
        Stmt::For {
            levels,
            schedule,
            reductions,
            private,
            tile,
            body,
        } => {
            let body = block(k, shared_bytes, f, body);
            if tile.is_empty() || bounds_assigned(f, &levels, &body) {
                return Stmt::For {
                    levels,
                    schedule,
                    reductions,
                    private,
                    tile: Vec::new(),
                    body,
                };
            }
            tiled(
                (k, shared_bytes),
                f,
                levels,
                schedule,
                reductions,
                private,
                &tile,
                body,
            )
            .0
        }
        other => other,
    }
}

/// The nest's tile loops around its element loops (see the module's documentation).
#[allow(clippy::too_many_arguments)]
fn tiled(
    (k, shared_bytes): (&Kernel, u32),
    f: &mut Function,
    levels: Vec<LoopLevel>,
    schedule: Option<Schedule>,
    reductions: Vec<Reduction>,
    private: Vec<LocalId>,
    sizes: &[u32],
    body: Block,
) -> (Stmt, TileStaging) {
    let (tile_levels, mut element_levels) = tile_and_element_levels(f, &levels, sizes);
    let tile_vars: Vec<LocalId> = tile_levels.iter().map(|l| l.var).collect();
    let element_vars: Vec<LocalId> = element_levels.iter().map(|l| l.var).collect();
    let (inside, set_vars) = element_guard(f, &levels, sizes, &tile_vars, &element_vars);
    // Adjacent threads take adjacent elements of the innermost element loop. Where every
    // store of the body is contiguous along another loop of the nest (a transpose,
    // `b[j * n + i] = a[i * n + j]`), that loop goes innermost instead: the stores are then
    // coalesced, and the strided loads of a tile share the cache lines the tile's other
    // threads bring in.
    if let Some(at) = store_contiguous_level(f, &levels, &body) {
        let last = element_levels.len() - 1;
        if at != last {
            let lv = element_levels.remove(at);
            element_levels.push(lv);
        }
    }
    // Loads that run along another loop than the threads' fastest go through shared memory.
    let fastest = match store_contiguous_level(f, &levels, &body) {
        Some(at) => at,
        None => levels.len() - 1,
    };
    let (outer, inner) = split_schedule(&schedule);
    // An inner sequential loop over data the tile's elements share runs in chunks staged
    // through shared memory.
    if inner.is_some() && reductions.is_empty() && private.is_empty() {
        if let Some(c) = chunks::chunked(
            (k, shared_bytes),
            f,
            &levels,
            sizes,
            &tile_vars,
            &element_vars,
            fastest,
            &inner,
            &body,
        ) {
            let report = TileStaging::of_chunks(k, f, &c);
            let tile_loop = Stmt::For {
                levels: tile_levels,
                schedule: outer,
                reductions,
                private: c.arrays,
                tile: Vec::new(),
                body: c.body,
            };
            return (tile_loop, report);
        }
    }
    let mut body = body;
    let staging = match &schedule {
        Some(s) if s.vector || s.worker => stage_loads(
            (k, shared_bytes),
            f,
            &levels,
            sizes,
            &tile_vars,
            &element_vars,
            fastest,
            &mut body,
        ),
        _ => None,
    };
    let mut guarded = set_vars;
    guarded.extend(body);
    let element_body = vec![Stmt::If {
        cond: inside,
        accept: guarded,
        reject: Vec::new(),
    }];
    let elements = Stmt::For {
        levels: element_levels,
        schedule: inner.clone(),
        reductions: reductions.clone(),
        private,
        tile: Vec::new(),
        body: element_body,
    };
    let (tile_body, stages) = match staging {
        Some(Staging { stages, load }) => {
            let mut load = load;
            if let Stmt::For { schedule, .. } = &mut load {
                *schedule = inner.clone();
            }
            (vec![load, elements], stages)
        }
        None => (vec![elements], Vec::new()),
    };
    let report = TileStaging::of_copies(f, &stages);
    let tile_loop = Stmt::For {
        levels: tile_levels,
        schedule: outer,
        reductions,
        private: stages,
        tile: Vec::new(),
        body: tile_body,
    };
    (tile_loop, report)
}

/// The nest's tile loops and element loops, a level of each per level of the nest: tile loop
/// `t` counts the tiles that cover the level's trips, element loop `e` a tile's elements.
fn tile_and_element_levels(
    f: &mut Function,
    levels: &[LoopLevel],
    sizes: &[u32],
) -> (Vec<LoopLevel>, Vec<LoopLevel>) {
    let (mut tile_levels, mut element_levels) = (Vec::new(), Vec::new());
    for (lv, &size) in levels.iter().zip(sizes) {
        let name = f.locals[lv.var as usize].name.clone();
        let (t, e) = (
            new_index(f, &format!("{name}_tile")),
            new_index(f, &format!("{name}_element")),
        );
        let (zero, one, s) = (lit(f, 0), lit(f, 1), lit(f, size));
        // ceil(trips / size), without the overflow of (trips + size - 1) / size.
        let whole = f.exprs.append(Expr::Binary(BinaryOp::Div, lv.trips, s));
        let rest = f.exprs.append(Expr::Binary(BinaryOp::Rem, lv.trips, s));
        let partial = f.exprs.append(Expr::Binary(BinaryOp::Ne, rest, zero));
        let extra = f.exprs.append(Expr::Select {
            cond: partial,
            accept: one,
            reject: zero,
        });
        let count = f.exprs.append(Expr::Binary(BinaryOp::Add, whole, extra));
        tile_levels.push(LoopLevel {
            var: t,
            start: zero,
            step: one,
            trips: count,
            line: lv.line,
        });
        element_levels.push(LoopLevel {
            var: e,
            start: zero,
            step: one,
            trips: s,
            line: lv.line,
        });
    }
    (tile_levels, element_levels)
}

/// The schedules of the tile loops and of the element loops, from the nest's.
fn split_schedule(schedule: &Option<Schedule>) -> (Option<Schedule>, Option<Schedule>) {
    // 3.3 section 2.9.8: gang goes to the tile loops; vector to the element loops; worker to
    // the element loops, or to the tile loops when vector is there too.
    match schedule {
        None => (None, None),
        Some(s) => (
            Some(Schedule {
                gang: s.gang,
                worker: s.worker && s.vector,
                vector: false,
            }),
            (s.vector || s.worker).then_some(Schedule {
                gang: false,
                worker: s.worker && !s.vector,
                vector: s.vector,
            }),
        ),
    }
}

impl TileStaging {
    /// What a tile run in chunks stages: the arrays its copies read (each once), and the inner
    /// loop's variable and chunk.
    fn of_chunks(k: &Kernel, f: &Function, c: &chunks::Chunked) -> Self {
        let var = f.locals[c.var as usize].name.clone();
        TileStaging {
            reads: c
                .staged
                .iter()
                .map(|&a| k.params[a as usize].name.clone())
                .fold(Vec::new(), |mut v, n| {
                    if !v.contains(&n) {
                        v.push(n);
                    }
                    v
                }),
            chunked: Some((var, c.chunk)),
        }
    }

    /// What [`stage_loads`] stages: the arrays of its copies (`a_tile` copies `a`).
    fn of_copies(f: &Function, stages: &[LocalId]) -> Self {
        TileStaging {
            reads: stages
                .iter()
                .map(|&l| {
                    let name = &f.locals[l as usize].name;
                    name.strip_suffix("_tile").unwrap_or(name).to_string()
                })
                .collect(),
            chunked: None,
        }
    }
}

fn lit(f: &mut Function, v: u32) -> Handle<Expr> {
    f.exprs
        .append(Expr::Literal(Literal::Int(Scalar::USize, i128::from(v))))
}

/// A new `usize` local.
fn new_index(f: &mut Function, name: &str) -> LocalId {
    f.locals.push(Local {
        name: name.to_string(),
        ty: Scalar::USize,
        len: None,
    });
    (f.locals.len() - 1) as LocalId
}

/// For element variables `elements` of tiles `tiles`: the condition "the element is inside
/// the nest" and the assignments of the nest's variables from the tile and element.
fn element_guard(
    f: &mut Function,
    levels: &[LoopLevel],
    sizes: &[u32],
    tiles: &[LocalId],
    elements: &[LocalId],
) -> (Handle<Expr>, Vec<Stmt>) {
    let (mut inside, mut set_vars) = (None, Vec::new());
    for (((lv, &size), &t), &e) in levels.iter().zip(sizes).zip(tiles).zip(elements) {
        let ev = f.exprs.append(Expr::Local(e));
        let (value, within) = level_value(f, lv, size, t, ev);
        inside = Some(match inside {
            None => within,
            Some(c) => f.exprs.append(Expr::Binary(BinaryOp::And, c, within)),
        });
        set_vars.push(Stmt::Assign {
            local: lv.var,
            value,
        });
    }
    (inside.expect("a nest has a level"), set_vars)
}

/// The value of level `lv`'s variable for element `e` of tile `t` of size `size`,
/// `start + (t * size + e) * step`, and whether that iteration is inside the nest.
fn level_value(
    f: &mut Function,
    lv: &LoopLevel,
    size: u32,
    t: LocalId,
    e: Handle<Expr>,
) -> (Handle<Expr>, Handle<Expr>) {
    let (tv, s) = (f.exprs.append(Expr::Local(t)), lit(f, size));
    let base = f.exprs.append(Expr::Binary(BinaryOp::Mul, tv, s));
    let it = f.exprs.append(Expr::Binary(BinaryOp::Add, base, e));
    let within = f.exprs.append(Expr::Binary(BinaryOp::Lt, it, lv.trips));
    let ty = f.locals[lv.var as usize].ty;
    let it = f.exprs.append(Expr::Cast(it, ty));
    let offset = f.exprs.append(Expr::Binary(BinaryOp::Mul, it, lv.step));
    let value = f
        .exprs
        .append(Expr::Binary(BinaryOp::Add, lv.start, offset));
    (value, within)
}

/// What [`stage_loads`] made: the tile's staging arrays (private to the tile's gang iteration,
/// so the block shares them) and the loop that fills them.
struct Staging {
    stages: Vec<LocalId>,
    load: Stmt,
}

/// A load of a tile's body [`stage_loads`] copies: what it reads, and the level of the nest
/// along which it runs contiguously.
struct TileLoad {
    load: Handle<Expr>,
    array: ParamId,
    field: Option<FieldId>,
    index: Handle<Expr>,
    ty: Scalar,
    level: usize,
}

/// Stages the loads of a two-level tile's body that run contiguously along the other level
/// than the threads' fastest (`fastest`), such as a transpose's reads: a first loop over the
/// tile's elements, with adjacent threads along the loads' level, copies each such load's
/// element into a padded array of the tile (`[other][load level + 1]`, so that neither loop's
/// threads meet in a shared-memory bank), and the body reads the copy. Only loads the body
/// makes unconditionally, from arrays the kernel does not write, at an index computed from the
/// nest's variables and values the body does not assign, are staged, within
/// the target's `shared_bytes`.
#[allow(clippy::too_many_arguments)]
fn stage_loads(
    (k, shared_bytes): (&Kernel, u32),
    f: &mut Function,
    levels: &[LoopLevel],
    sizes: &[u32],
    tiles: &[LocalId],
    elements: &[LocalId],
    fastest: usize,
    body: &mut Block,
) -> Option<Staging> {
    if levels.len() != 2 {
        return None;
    }
    let mut staged = loads_to_stage((k, shared_bytes), f, levels, sizes, fastest, body);
    let &TileLoad { level: l, .. } = staged.first()?;
    // Every staged load runs along the same level (`l`), so one loop fills every stage.
    staged.retain(|s| s.level == l);
    let (sl, so) = (sizes[l], sizes[1 - l]);
    let name = f.locals[levels[l].var as usize].name.clone();
    let e = new_index(f, &format!("{name}_staged"));
    let staging_elements: Vec<LocalId> = levels
        .iter()
        .map(|lv| {
            let n = f.locals[lv.var as usize].name.clone();
            new_index(f, &format!("{n}_staging"))
        })
        .collect();
    let (inside, set_vars) = element_guard(f, levels, sizes, tiles, &staging_elements);
    let (ev, sl_lit) = (f.exprs.append(Expr::Local(e)), lit(f, sl));
    let minor = f.exprs.append(Expr::Binary(BinaryOp::Rem, ev, sl_lit));
    let major = f.exprs.append(Expr::Binary(BinaryOp::Div, ev, sl_lit));
    let mut load_body = vec![
        Stmt::Assign {
            local: staging_elements[l],
            value: minor,
        },
        Stmt::Assign {
            local: staging_elements[1 - l],
            value: major,
        },
    ];
    // Element (other, along) at other * (sl + 1) + along: e + e / sl in the staging loop.
    let at_staging = f.exprs.append(Expr::Binary(BinaryOp::Add, ev, major));
    let mut copies = set_vars;
    let mut stages = Vec::new();
    let mut reads = std::collections::HashMap::new();
    for s in staged {
        let (stage, copy, read) = stage_load(k, f, &s, (sl, so), inside, at_staging, elements);
        copies.push(copy);
        reads.insert(s.load, read);
        stages.push(stage);
    }
    walk::substitute(f, body, &reads);
    load_body.extend(copies);
    let (zero, one, count) = (lit(f, 0), lit(f, 1), lit(f, sl * so));
    Some(Staging {
        stages,
        load: Stmt::For {
            levels: vec![LoopLevel {
                var: e,
                start: zero,
                step: one,
                trips: count,
                line: levels[l].line,
            }],
            schedule: None,
            reductions: Vec::new(),
            private: Vec::new(),
            tile: Vec::new(),
            body: load_body,
        },
    })
}

/// The arrays `k` stores to or updates anywhere: a tile copies none of them.
pub(super) fn arrays_written(k: &Kernel) -> HashSet<ParamId> {
    let mut written = HashSet::new();
    walk::arrays_written(&k.function.body, &mut written);
    written
}

/// A load a tile may copy into shared memory: its array, field, index and element type.
pub(super) struct CopyableLoad {
    pub array: ParamId,
    pub field: Option<FieldId>,
    pub index: Handle<Expr>,
    pub ty: Scalar,
}

/// Load `h` of `k` as a tile may copy it: from an array not in `written`, not an element of a
/// nested array (`boxes[l].nei[k]`), not of `bool`s (the tile and chunk staging both ask).
pub(super) fn copyable_load(
    k: &Kernel,
    h: Handle<Expr>,
    written: &HashSet<ParamId>,
) -> Option<CopyableLoad> {
    let Expr::Load {
        array,
        field,
        index,
    } = k.function.exprs[h].clone()
    else {
        return None;
    };
    let access = k.access(array, field).filter(|a| a.nested.is_none())?;
    (!written.contains(&array) && access.ty != Scalar::Bool).then_some(CopyableLoad {
        array,
        field,
        index,
        ty: access.ty,
    })
}

/// The loads of a two-level tile's body [`stage_loads`] may copy, in the body's order: those it
/// makes unconditionally, from arrays the kernel does not write, at an index of the nest's
/// variables and values the body does not assign, running along one level, not the threads'
/// fastest; as many as fit the shared arrays' bytes.
fn loads_to_stage(
    (k, shared_bytes): (&Kernel, u32),
    f: &Function,
    levels: &[LoopLevel],
    sizes: &[u32],
    fastest: usize,
    body: &Block,
) -> Vec<TileLoad> {
    let written = arrays_written(k);
    let vars: Vec<LocalId> = levels.iter().map(|l| l.var).collect();
    let mut loads = Vec::new();
    for s in body.iter() {
        let exprs = match s {
            Stmt::Assign { value, .. } => vec![*value],
            Stmt::Store { index, value, .. } | Stmt::AssignElem { index, value, .. } => {
                vec![*index, *value]
            }
            _ => continue,
        };
        for e in exprs {
            unconditional_loads(f, e, &mut loads);
        }
    }
    let mut budget = shared_bytes;
    let mut staged = Vec::new();
    for h in loads {
        let Some(CopyableLoad {
            array,
            field,
            index,
            ty,
        }) = copyable_load(k, h, &written)
        else {
            continue;
        };
        let mut read = HashSet::new();
        walk::locals_read(f, index, &mut read);
        if read
            .iter()
            .any(|l| !vars.contains(l) && walk::assigns(body, &|x| x == *l))
        {
            continue;
        }
        // The level along which the load runs contiguously: not the threads' fastest.
        let along: Vec<usize> = (0..2)
            .filter(|&l| plain_term(f, index, vars[l]) && !plain_term(f, index, vars[1 - l]))
            .collect();
        let [l] = along.as_slice() else {
            continue;
        };
        if *l == fastest {
            continue;
        }
        let (sl, so) = (sizes[*l], sizes[1 - *l]);
        let bytes = so * (sl + 1) * ty.size().max(4);
        if bytes > budget {
            continue;
        }
        budget -= bytes;
        staged.push(TileLoad {
            load: h,
            array,
            field,
            index,
            ty,
            level: *l,
        });
    }
    staged
}

/// The copy of load `s` in the staging loop: its array of the tile (`so` rows of `sl + 1`,
/// `sl` the tile's size along the load's level), the statement that fills element
/// `at_staging` of it where the staging element is `inside` the nest, and the body's read of
/// its element (`elements` the body's element variables).
fn stage_load(
    k: &Kernel,
    f: &mut Function,
    s: &TileLoad,
    (sl, so): (u32, u32),
    inside: Handle<Expr>,
    at_staging: Handle<Expr>,
    elements: &[LocalId],
) -> (LocalId, Stmt, Handle<Expr>) {
    let l = s.level;
    let stage = f.locals.len() as LocalId;
    f.locals.push(Local {
        name: format!("{}_tile", k.params[s.array as usize].name),
        ty: s.ty,
        len: Some(so * (sl + 1)),
    });
    // The copy loop has no branch, so that a thread's loads are in flight together (an
    // `if` per element kept one at a time): an element outside the nest (a partial tile)
    // reads element 0 instead, a copy the body never reads.
    let zero = lit(f, 0);
    let within = f.exprs.append(Expr::Select {
        cond: inside,
        accept: s.index,
        reject: zero,
    });
    let fresh = f.exprs.append(Expr::Load {
        array: s.array,
        field: s.field,
        index: within,
    });
    let copy = Stmt::AssignElem {
        local: stage,
        index: at_staging,
        value: fresh,
    };
    // The body reads the copy of its element.
    let (o, a) = (
        f.exprs.append(Expr::Local(elements[1 - l])),
        f.exprs.append(Expr::Local(elements[l])),
    );
    let width = lit(f, sl + 1);
    let row = f.exprs.append(Expr::Binary(BinaryOp::Mul, o, width));
    let at = f.exprs.append(Expr::Binary(BinaryOp::Add, row, a));
    let read = f.exprs.append(Expr::LocalElem {
        local: stage,
        index: at,
    });
    (stage, copy, read)
}

/// The loads expression `e` makes whenever it is evaluated (not those of a select's arms,
/// which a backend may skip), outermost first.
fn unconditional_loads(f: &Function, e: Handle<Expr>, out: &mut Vec<Handle<Expr>>) {
    match &f.exprs[e] {
        Expr::Load { index, .. } => {
            out.push(e);
            unconditional_loads(f, *index, out);
        }
        Expr::LocalElem { index, .. } => unconditional_loads(f, *index, out),
        Expr::Unary(_, a) | Expr::Cast(a, _) | Expr::Bitcast(a, _) => {
            unconditional_loads(f, *a, out)
        }
        Expr::Binary(op, a, b) => {
            unconditional_loads(f, *a, out);
            // `&&` and `||` may not evaluate their right side.
            if !matches!(op, BinaryOp::And | BinaryOp::Or) {
                unconditional_loads(f, *b, out);
            }
        }
        Expr::Select { cond, .. } => unconditional_loads(f, *cond, out),
        Expr::NestedIndex { element, sub } => {
            unconditional_loads(f, *element, out);
            unconditional_loads(f, *sub, out);
        }
        Expr::Math(_, args) => {
            for a in args {
                unconditional_loads(f, *a, out);
            }
        }
        Expr::Literal(_) | Expr::Param(_) | Expr::Len(_) | Expr::Local(_) | Expr::GangIndex => {}
    }
}

/// Whether `body` assigns a local that the levels' start, step or trip count read.
fn bounds_assigned(f: &Function, levels: &[LoopLevel], body: &Block) -> bool {
    let mut read = HashSet::new();
    for lv in levels {
        for h in [lv.start, lv.step, lv.trips] {
            walk::locals_read(f, h, &mut read);
        }
    }
    !read.is_empty() && walk::assigns(body, &|l| read.contains(&l))
}

/// The level of the nest along which every store of `body` is contiguous (its variable a plain
/// term of each store's index, no other level's is), when there is exactly one such level and
/// the body stores at all.
pub fn store_contiguous_level(f: &Function, levels: &[LoopLevel], body: &Block) -> Option<usize> {
    let mut indices = Vec::new();
    let mut other_writes = false;
    walk::for_each_stmt(body, &mut |s| match s {
        Stmt::Store { index, .. } => indices.push(*index),
        Stmt::Atomic { .. } => other_writes = true,
        _ => {}
    });
    if indices.is_empty() || other_writes {
        return None;
    }
    let unit: Vec<usize> = (0..levels.len())
        .filter(|&l| {
            indices.iter().all(|&i| {
                plain_term(f, i, levels[l].var)
                    && levels
                        .iter()
                        .enumerate()
                        .all(|(m, o)| m == l || !plain_term(f, i, o.var))
            })
        })
        .collect();
    match unit.as_slice() {
        [one] => Some(*one),
        _ => None,
    }
}

/// Whether `var` is a plain term of the sum `e` (`... + var + ...`, through casts), so that
/// consecutive values of `var` give consecutive values of `e`.
pub(super) fn plain_term(f: &Function, e: Handle<Expr>, var: LocalId) -> bool {
    match &f.exprs[e] {
        Expr::Local(l) => *l == var,
        Expr::Cast(x, _) => plain_term(f, *x, var),
        Expr::Binary(BinaryOp::Add, a, b) => plain_term(f, *a, var) != plain_term(f, *b, var),
        Expr::Binary(BinaryOp::Sub, a, _) => plain_term(f, *a, var),
        _ => false,
    }
}
