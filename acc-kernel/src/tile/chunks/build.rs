//! Putting a chunked tile together: [`build`] rewrites the tile's body as [`plan`](super::plan)
//! found it, in the shape the module's documentation shows: the statements before the inner
//! loop per element, the loop over chunks (each copied into shared memory, then run by every
//! element), the rest per element.

use super::*;

/// The pieces of the tile [`build`] puts together.
pub(super) struct Parts<'b> {
    pub(super) levels: &'b [LoopLevel],
    pub(super) sizes: &'b [u32],
    pub(super) tiles: &'b [LocalId],
    pub(super) elements: &'b [LocalId],
    pub(super) fastest: usize,
    pub(super) inner: &'b Option<Schedule>,
    /// The statements before the loop that compute the same for every element.
    pub(super) hoisted: &'b [Stmt],
    pub(super) before: &'b [Stmt],
    pub(super) inner_level: &'b LoopLevel,
    pub(super) inner_body: &'b [Stmt],
    pub(super) after: &'b [Stmt],
}

fn binary(f: &mut Function, op: BinaryOp, a: Handle<Expr>, b: Handle<Expr>) -> Handle<Expr> {
    f.exprs.append(Expr::Binary(op, a, b))
}

fn local(f: &mut Function, l: LocalId) -> Handle<Expr> {
    f.exprs.append(Expr::Local(l))
}

/// A new array local of the tile.
fn new_array(f: &mut Function, name: String, ty: Scalar, len: u32) -> LocalId {
    f.locals.push(Local {
        name,
        ty,
        len: Some(len),
    });
    (f.locals.len() - 1) as LocalId
}

/// A loop over `trips` iterations scheduled `sched`: the element loops' schedule for one the
/// block's threads share, `None` for one each thread runs alone.
fn shared_loop(
    var: LocalId,
    trips: Handle<Expr>,
    line: u32,
    f: &mut Function,
    sched: &Option<Schedule>,
    body: Block,
) -> Stmt {
    let (zero, one) = (lit(f, 0), lit(f, 1));
    Stmt::For {
        levels: vec![LoopLevel {
            var,
            start: zero,
            step: one,
            trips,
            line,
        }],
        schedule: sched.clone(),
        reductions: Vec::new(),
        private: Vec::new(),
        tile: Vec::new(),
        body,
    }
}

/// Puts the chunked tile together (see the module's documentation).
pub(super) fn build(
    f: &mut Function,
    p: Parts,
    staged: Vec<Staged>,
    carried: Vec<LocalId>,
    chunk: u32,
) -> Chunked {
    let kl = p.inner_level;
    let line = kl.line;
    let t = Tile::new(f, &p, &carried);
    let mut out = p.hoisted.to_vec();
    // The statements before the loop, per element.
    let mut first = t.set_vars.clone();
    first.extend(p.before.iter().cloned());
    first.extend(t.save(f));
    out.push(t.element_loop(f, first));
    // The chunks: every thread counts them alike.
    let (cl, chunks, mut chunk_body) = count_chunks(f, kl, chunk);
    // The copies: one loop per number of elements to copy, each thread copying some.
    let copy_var = new_index(f, &format!("{}_staged", local_name(f, kl.var)));
    let kk = new_index(f, &format!("{}_in_chunk", local_name(f, kl.var)));
    let Copies {
        loops,
        arrays: stages,
        reads,
    } = stage_copies(f, &t, &staged, chunk, &cl, (copy_var, kk));
    for (count, body) in loops {
        let count = lit(f, count);
        chunk_body.push(shared_loop(copy_var, count, t.nest_line, f, p.inner, body));
    }
    // The chunk's iterations, per element, reading the copies.
    chunk_body.push(chunk_iterations(f, &t, &cl, kk, chunk, &reads));
    let chunks_local = new_index(f, &format!("{}_chunks", local_name(f, kl.var)));
    out.push(Stmt::Assign {
        local: chunks_local,
        value: chunks,
    });
    let (zero, one, cl_trips) = (lit(f, 0), lit(f, 1), local(f, chunks_local));
    out.push(Stmt::For {
        levels: vec![LoopLevel {
            var: cl.var,
            start: zero,
            step: one,
            trips: cl_trips,
            line,
        }],
        schedule: None,
        reductions: Vec::new(),
        private: Vec::new(),
        tile: Vec::new(),
        body: chunk_body,
    });
    // The rest, per element.
    if !p.after.is_empty() {
        let mut last = t.set_vars.clone();
        last.extend(t.restore(f));
        last.extend(p.after.iter().cloned());
        out.push(t.element_loop(f, last));
    }
    let staged_arrays = staged.iter().map(|s| s.array).collect();
    Chunked {
        var: kl.var,
        body: out,
        arrays: stages.into_iter().chain(t.carries).collect(),
        staged: staged_arrays,
        chunk,
    }
}

fn local_name(f: &Function, l: LocalId) -> String {
    f.locals[l as usize].name.clone()
}

/// What the steps of [`build`] share: the tile's parts, the flat loop over its elements and
/// the arrays that keep the running values from chunk to chunk.
struct Tile<'p, 'b> {
    p: &'p Parts<'b>,
    /// The flat loop's variable: the element's index into the accumulators.
    flat: LocalId,
    /// Whether the element is inside the nest.
    inside: Handle<Expr>,
    /// The nest's variables from the tile and element.
    set_vars: Vec<Stmt>,
    /// The running values, and an array of the tile for each (an element per element).
    carried: &'p [LocalId],
    carries: Vec<LocalId>,
    tile_elements: u32,
    /// The nest's line, for its element loops.
    nest_line: u32,
}

impl<'p, 'b> Tile<'p, 'b> {
    /// The flat loop's variable, the element's guard and the running values' arrays, new in `f`.
    fn new(f: &mut Function, p: &'p Parts<'b>, carried: &'p [LocalId]) -> Self {
        let tile_elements: u32 = p.sizes.iter().product();
        // One flat loop over the tile's elements, the fastest level's element varying fastest,
        // so the element's index into the accumulators grows with the loop's variable.
        let nest: Vec<String> = p.levels.iter().map(|l| local_name(f, l.var)).collect();
        let flat = new_index(f, &format!("{}_element", nest.join("_")));
        let (inside, set_vars) = element_guard(f, p.levels, p.sizes, p.tiles, p.elements);
        let carries: Vec<LocalId> = carried
            .iter()
            .map(|&l| {
                let n = format!("{}_carry", local_name(f, l));
                let ty = f.locals[l as usize].ty;
                new_array(f, n, ty, tile_elements)
            })
            .collect();
        Tile {
            p,
            flat,
            inside,
            set_vars,
            carried,
            carries,
            tile_elements,
            nest_line: p.levels[0].line,
        }
    }

    /// The nest's element variables from the flat loop's.
    fn element_vars(&self, f: &mut Function) -> Vec<Stmt> {
        let p = self.p;
        let e = local(f, self.flat);
        if p.levels.len() == 1 {
            return vec![Stmt::Assign {
                local: p.elements[0],
                value: e,
            }];
        }
        let (fast, slow) = (p.fastest, 1 - p.fastest);
        let width = lit(f, p.sizes[fast]);
        let minor = binary(f, BinaryOp::Rem, e, width);
        let major = binary(f, BinaryOp::Div, e, width);
        vec![
            Stmt::Assign {
                local: p.elements[fast],
                value: minor,
            },
            Stmt::Assign {
                local: p.elements[slow],
                value: major,
            },
        ]
    }

    /// Keeps the element's running values in its elements of their arrays.
    fn save(&self, f: &mut Function) -> Vec<Stmt> {
        self.carried
            .iter()
            .zip(&self.carries)
            .map(|(&l, &c)| {
                let (index, value) = (local(f, self.flat), local(f, l));
                Stmt::AssignElem {
                    local: c,
                    index,
                    value,
                }
            })
            .collect()
    }

    /// The element's running values back from their arrays.
    fn restore(&self, f: &mut Function) -> Vec<Stmt> {
        self.carried
            .iter()
            .zip(&self.carries)
            .map(|(&l, &c)| {
                let index = local(f, self.flat);
                let value = f.exprs.append(Expr::LocalElem { local: c, index });
                Stmt::Assign { local: l, value }
            })
            .collect()
    }

    /// The loop over the tile's elements the block's threads share, running `guarded` for
    /// those inside the nest.
    fn element_loop(&self, f: &mut Function, guarded: Block) -> Stmt {
        let mut body = self.element_vars(f);
        body.push(Stmt::If {
            cond: self.inside,
            accept: guarded,
            reject: Vec::new(),
        });
        let elements = lit(f, self.tile_elements);
        shared_loop(self.flat, elements, self.nest_line, f, self.p.inner, body)
    }
}

/// The loop over the chunks: its variable, and the locals that hold the chunk's first
/// iteration and its length.
struct ChunkLoop {
    var: LocalId,
    base: LocalId,
    len: LocalId,
}

/// The chunk loop's locals, the number of chunks (`ceil(trips / chunk)`) and the statements
/// that set a chunk's first iteration and its length (the last may be shorter).
fn count_chunks(
    f: &mut Function,
    kl: &LoopLevel,
    chunk: u32,
) -> (ChunkLoop, Handle<Expr>, Vec<Stmt>) {
    let (c, base, len) = (
        new_index(f, &format!("{}_chunk", local_name(f, kl.var))),
        new_index(f, &format!("{}_chunk_start", local_name(f, kl.var))),
        new_index(f, &format!("{}_chunk_len", local_name(f, kl.var))),
    );
    let size = lit(f, chunk);
    let whole = binary(f, BinaryOp::Div, kl.trips, size);
    let rest = binary(f, BinaryOp::Rem, kl.trips, size);
    let zero = lit(f, 0);
    let partial = binary(f, BinaryOp::Ne, rest, zero);
    let one = lit(f, 1);
    let extra = f.exprs.append(Expr::Select {
        cond: partial,
        accept: one,
        reject: zero,
    });
    let chunks = binary(f, BinaryOp::Add, whole, extra);
    let cv = local(f, c);
    let start_value = binary(f, BinaryOp::Mul, cv, size);
    let bv = local(f, base);
    let left = binary(f, BinaryOp::Sub, kl.trips, bv);
    let len_value = f.exprs.append(Expr::Math(MathFn::Min, vec![size, left]));
    let set = vec![
        Stmt::Assign {
            local: base,
            value: start_value,
        },
        Stmt::Assign {
            local: len,
            value: len_value,
        },
    ];
    (ChunkLoop { var: c, base, len }, chunks, set)
}

/// The inner loop's variable for chunk position `ek`: start + (base + ek) * step.
fn inner_var(f: &mut Function, kl: &LoopLevel, base: LocalId, ek: Handle<Expr>) -> Stmt {
    let kty = f.locals[kl.var as usize].ty;
    let bv = local(f, base);
    let kk = binary(f, BinaryOp::Add, bv, ek);
    let kk = f.exprs.append(Expr::Cast(kk, kty));
    let off = binary(f, BinaryOp::Mul, kk, kl.step);
    let value = binary(f, BinaryOp::Add, kl.start, off);
    Stmt::Assign {
        local: kl.var,
        value,
    }
}

/// What [`stage_copies`] made of the staged loads.
struct Copies {
    /// For each number of elements to copy, the statements that copy one.
    loops: Vec<(u32, Block)>,
    /// The copies' arrays.
    arrays: Vec<LocalId>,
    /// For each staged load, its read of the copy, which replaces it.
    reads: HashMap<Handle<Expr>, Handle<Expr>>,
}

/// The copies of a chunk (`copy_var` the copy loops' variable) and the reads of them (`kk` the
/// position in the chunk).
fn stage_copies(
    f: &mut Function,
    t: &Tile,
    staged: &[Staged],
    chunk: u32,
    cl: &ChunkLoop,
    (copy_var, kk): (LocalId, LocalId),
) -> Copies {
    let mut copies: Vec<(u32, Block)> = Vec::new();
    let mut stages = Vec::new();
    let mut reads: HashMap<Handle<Expr>, Handle<Expr>> = HashMap::new();
    for s in staged {
        let (stage, count, body) = copy_of_chunk(f, t, s, chunk, cl, copy_var);
        stages.push(stage);
        match copies.iter_mut().find(|(c, _)| *c == count) {
            Some((_, b)) => b.extend(body),
            None => copies.push((count, body)),
        }
        let copy = read_of_copy(f, t, s, stage, chunk, kk);
        reads.insert(s.load, copy);
    }
    Copies {
        loops: copies,
        arrays: stages,
        reads,
    }
}

/// The array that holds the chunk's part of staged load `s`, its number of elements, and the
/// statements that copy its element `copy_var`.
fn copy_of_chunk(
    f: &mut Function,
    t: &Tile,
    s: &Staged,
    chunk: u32,
    cl: &ChunkLoop,
    copy_var: LocalId,
) -> (LocalId, u32, Block) {
    let p = t.p;
    let (width, count) = match s.level {
        Some(l) if s.along_inner => (chunk, p.sizes[l] * chunk),
        Some(l) => (p.sizes[l], p.sizes[l] * chunk),
        None => (chunk, chunk),
    };
    let stage = new_array(f, format!("{}_tile", s.name), s.ty, count);
    // Copy element `e`: its position along the contiguous direction is `e % width`.
    let (el, ek) = (
        new_index(f, &format!("{}_level_staging", local_name(f, stage))),
        new_index(f, &format!("{}_inner_staging", local_name(f, stage))),
    );
    let e = local(f, copy_var);
    let w = lit(f, width);
    let minor = binary(f, BinaryOp::Rem, e, w);
    let major = binary(f, BinaryOp::Div, e, w);
    let mut body = match s.level {
        Some(_) if s.along_inner => vec![
            Stmt::Assign {
                local: ek,
                value: minor,
            },
            Stmt::Assign {
                local: el,
                value: major,
            },
        ],
        Some(_) => vec![
            Stmt::Assign {
                local: el,
                value: minor,
            },
            Stmt::Assign {
                local: ek,
                value: major,
            },
        ],
        None => vec![Stmt::Assign {
            local: ek,
            value: e,
        }],
    };
    let ekv = local(f, ek);
    body.push(inner_var(f, p.inner_level, cl.base, ekv));
    let lv = local(f, cl.len);
    let mut within = binary(f, BinaryOp::Lt, ekv, lv);
    if let Some(l) = s.level {
        let elv = local(f, el);
        let (value, inside_level) = level_value(f, &p.levels[l], p.sizes[l], p.tiles[l], elv);
        body.push(Stmt::Assign {
            local: p.levels[l].var,
            value,
        });
        within = binary(f, BinaryOp::And, within, inside_level);
    }
    // Branch-free: an element outside the nest reads element 0 into a copy nobody reads.
    let zero = lit(f, 0);
    let index = f.exprs.append(Expr::Select {
        cond: within,
        accept: s.index,
        reject: zero,
    });
    let fresh = f.exprs.append(Expr::Load {
        array: s.array,
        field: s.field,
        index,
    });
    // The copy is laid out as it is copied: adjacent threads write adjacent elements,
    // and the elements read them along rows (one value, or adjacent ones, per warp), so
    // no padding is needed against bank conflicts.
    body.push(Stmt::AssignElem {
        local: stage,
        index: e,
        value: fresh,
    });
    (stage, count, body)
}

/// An element's read of the copy `stage` of staged load `s` at position `kk` of the chunk.
fn read_of_copy(
    f: &mut Function,
    t: &Tile,
    s: &Staged,
    stage: LocalId,
    chunk: u32,
    kk: LocalId,
) -> Handle<Expr> {
    let p = t.p;
    // The loop reads the copy: [level element][inner] or [inner][level element].
    let kv = local(f, kk);
    let read_at = match s.level {
        Some(l) => {
            let ev = local(f, p.elements[l]);
            if s.along_inner {
                let row = lit(f, chunk);
                let r = binary(f, BinaryOp::Mul, ev, row);
                binary(f, BinaryOp::Add, r, kv)
            } else {
                let row = lit(f, p.sizes[l]);
                let r = binary(f, BinaryOp::Mul, kv, row);
                binary(f, BinaryOp::Add, r, ev)
            }
        }
        None => kv,
    };
    f.exprs.append(Expr::LocalElem {
        local: stage,
        index: read_at,
    })
}

/// The loop over the tile's elements that runs a chunk's iterations: each element restores
/// its running values, runs the inner loop's body over the chunk (`kk` its position in it)
/// reading the copies (`reads`), and keeps its running values.
fn chunk_iterations(
    f: &mut Function,
    t: &Tile,
    cl: &ChunkLoop,
    kk: LocalId,
    chunk: u32,
    reads: &HashMap<Handle<Expr>, Handle<Expr>>,
) -> Stmt {
    let kl = t.p.inner_level;
    let mut inner_body = t.p.inner_body.to_vec();
    walk::substitute(f, &mut inner_body, reads);
    let kv = local(f, kk);
    let mut step_body = vec![inner_var(f, kl, cl.base, kv)];
    step_body.extend(inner_body);
    // A whole chunk runs a loop of constant length (which a backend may unroll, its reads of
    // the copies then at constant offsets); the last, shorter one, a loop of its length.
    let (whole_len, lv) = (lit(f, chunk), local(f, cl.len));
    let whole_chunk = binary(f, BinaryOp::Eq, lv, whole_len);
    let (full, last) = (
        shared_loop(kk, whole_len, kl.line, f, &None, step_body.clone()),
        shared_loop(kk, lv, kl.line, f, &None, step_body),
    );
    let mut compute = t.set_vars.clone();
    compute.extend(t.restore(f));
    compute.push(Stmt::If {
        cond: whole_chunk,
        accept: vec![full],
        reject: vec![last],
    });
    compute.extend(t.save(f));
    t.element_loop(f, compute)
}
