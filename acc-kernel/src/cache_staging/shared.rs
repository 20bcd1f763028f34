//! The rewrite of a loop whose [`Cache`] directives [`Cx::plan`] stages: runs of its iterations,
//! each copying its windows into shared memory and then reading the copies (see the module's
//! documentation).

use super::*;

/// A loop [`Cx::shared`] rewrites, and what the steps of the rewrite share: the loop's parts,
/// and the locals and expressions of its runs.
struct Run<'s> {
    lv: &'s LoopLevel,
    schedule: &'s Option<Schedule>,
    reductions: &'s Vec<Reduction>,
    private: &'s Vec<LocalId>,
    body: &'s Block,
    /// A flat parallel loop, which becomes a gang loop over its runs.
    flat: bool,
    /// The loop variable's type and name.
    ty: Scalar,
    name: String,
    /// Iterations per run.
    round: u32,
    /// The run, and the iteration's place in it.
    r: LocalId,
    q: LocalId,
    /// `run * R`, and the run's first iteration `s + run * R`.
    offset: Handle<Expr>,
    first: Handle<Expr>,
}

impl Cx<'_> {
    /// Loop `s` rewritten to stage its directives' windows (see the module's documentation):
    /// a sequential loop over runs (`flat`: a gang loop over them), with the new shared arrays.
    pub(super) fn shared(
        &mut self,
        f: &mut Function,
        s: &Stmt,
        flat: bool,
    ) -> Option<(Stmt, Vec<LocalId>)> {
        let plan = self.plan(f, s)?;
        let Stmt::For {
            levels,
            schedule,
            reductions,
            private,
            body,
            ..
        } = s
        else {
            return None;
        };
        let lv = &levels[0];
        let var = lv.var;
        let ty = f.locals[var as usize].ty;
        let name = f.locals[var as usize].name.clone();
        let mut b = Build { f };
        let round = plan.round;
        let r = b.local(format!("{name}_run"), Scalar::USize, None);
        let q = b.local(format!("{name}_cached"), Scalar::USize, None);
        let arrays: Vec<LocalId> = plan
            .staged
            .iter()
            .map(|&(n, t)| {
                let array = &self.params[self.caches[n].array as usize].name;
                b.local(
                    format!("{array}_cache"),
                    t,
                    Some(round + self.caches[n].len - 1),
                )
            })
            .collect();
        // The run's first iteration, `s + run * R`.
        let offset = {
            let (rv, rl) = (b.e(Expr::Local(r)), b.lit(round));
            b.bin(BinaryOp::Mul, rv, rl)
        };
        let offset_ty = b.cast(offset, ty);
        let first = b.bin(BinaryOp::Add, lv.start, offset_ty);
        let run = Run {
            lv,
            schedule,
            reductions,
            private,
            body,
            flat,
            ty,
            name,
            round,
            r,
            q,
            offset,
            first,
        };
        let (mut statements, starts) = self.window_starts(&mut b, &run, &plan);
        let (fast, mut copies) = self.copy_windows(&mut b, &run, &plan, &arrays, &starts);
        let with = copy_reads(&mut b, &run, &plan, &arrays);
        let compute = self.staged_run(&mut b, &run, &with);
        let plain = plain_run(&mut b, &run);
        copies.push(compute);
        statements.push(Stmt::If {
            cond: fast,
            accept: copies,
            reject: vec![plain],
        });
        let outer = runs_loop(&mut b, &run, &arrays, statements);
        self.record_staged(&plan);
        Some((outer, arrays))
    }

    /// The locals that hold each window's start for the run, and the statements that set them.
    fn window_starts(&self, b: &mut Build, run: &Run, plan: &Plan) -> (Vec<Stmt>, Vec<LocalId>) {
        // Each window's start for the run, in a local every thread computes alike.
        let mut starts = Vec::new();
        let mut statements = Vec::new();
        for &(n, _) in &plan.staged {
            let w0 = b.local(format!("{}_window", run.name), Scalar::USize, None);
            let value = replace_local(b.f, self.caches[n].start, run.lv.var, run.first);
            statements.push(Stmt::Assign { local: w0, value });
            starts.push(w0);
        }
        (statements, starts)
    }

    /// Whether the run reads the copies, and the loops that copy its windows (their starts in
    /// `starts`) into `arrays`.
    fn copy_windows(
        &self,
        b: &mut Build,
        run: &Run,
        plan: &Plan,
        arrays: &[LocalId],
        starts: &[LocalId],
    ) -> (Handle<Expr>, Vec<Stmt>) {
        let (lv, round, r) = (run.lv, run.round, run.r);
        // A run whose iterations are all there and whose windows lie inside their arrays
        // reads the copies; another (the last, a window past an array's end) runs as written,
        // its loads reading memory and checked as without `cache`. The test is the same on
        // every thread, and its terms bound what the bounds proof needs: `run < trips / R`
        // and `window + elements <= a.len()`.
        let runs_full = {
            let rl = b.lit(round);
            b.bin(BinaryOp::Div, lv.trips, rl)
        };
        let rv = b.e(Expr::Local(r));
        let mut fast = b.bin(BinaryOp::Lt, rv, runs_full);
        let mut copies = Vec::new();
        for ((&(n, _), &arr), &w0) in plan.staged.iter().zip(arrays).zip(starts) {
            let (len, array) = (self.caches[n].len, self.caches[n].array);
            let elements = round + len - 1;
            let wv = b.e(Expr::Local(w0));
            let el = b.lit(elements);
            let end = b.bin(BinaryOp::Add, wv, el);
            let n_a = b.e(Expr::Len(array));
            let inside = b.bin(BinaryOp::Le, end, n_a);
            // (A window starting below 0 wraps: its start is then past the end.)
            let (wv, n_a) = (b.e(Expr::Local(w0)), b.e(Expr::Len(array)));
            let starts_inside = b.bin(BinaryOp::Lt, wv, n_a);
            let inside = b.bin(BinaryOp::And, starts_inside, inside);
            fast = b.bin(BinaryOp::And, fast, inside);
            // The copy, adjacent threads on adjacent elements, without a branch.
            let c = b.local(format!("{}_copy", run.name), Scalar::USize, None);
            let (wv, cv) = (b.e(Expr::Local(w0)), b.e(Expr::Local(c)));
            let g = b.bin(BinaryOp::Add, wv, cv);
            let value = b.e(Expr::Load {
                array,
                field: None,
                index: g,
            });
            let cv = b.e(Expr::Local(c));
            copies.push(b.vector_loop(
                c,
                elements,
                lv.line,
                vec![Stmt::AssignElem {
                    local: arr,
                    index: cv,
                    value,
                }],
            ));
        }
        (fast, copies)
    }

    /// The run reading the copies (`with`: the reads of them that replace the loads): the loop
    /// over its iterations.
    fn staged_run(
        &self,
        b: &mut Build,
        run: &Run,
        with: &HashMap<Handle<Expr>, Handle<Expr>>,
    ) -> Stmt {
        let (lv, var, ty, round, q, first) =
            (run.lv, run.lv.var, run.ty, run.round, run.q, run.first);
        let (schedule, reductions, private, flat) =
            (run.schedule, run.reductions, run.private, run.flat);
        // The staged run's locals are its own (the run as written assigns the originals): the
        // bounds proof follows only locals assigned once.
        let mut staged_body = run.body.clone();
        walk::substitute(b.f, &mut staged_body, with);
        let map = self.own_locals(b, run);
        let mut staged_body = walk::renamed(b.f, &staged_body, &map);
        let staged_var = map[&var];
        let staged_private: Vec<LocalId> =
            private.iter().map(|p| *map.get(p).unwrap_or(p)).collect();
        let staged_reductions: Vec<Reduction> = reductions
            .iter()
            .map(|r| Reduction {
                local: *map.get(&r.local).unwrap_or(&r.local),
                op: r.op,
            })
            .collect();
        let qv = b.e(Expr::Local(q));
        let qv = b.cast(qv, ty);
        let value = b.bin(BinaryOp::Add, first, qv);
        staged_body.insert(
            0,
            Stmt::Assign {
                local: staged_var,
                value,
            },
        );
        Stmt::For {
            levels: vec![b.level(q, round, lv.line)],
            schedule: if flat { Some(VECTOR) } else { schedule.clone() },
            reductions: if flat { Vec::new() } else { staged_reductions },
            private: staged_private,
            tile: Vec::new(),
            body: staged_body,
        }
    }

    /// The fresh locals the staged run has for the loop's own (its variable, what its body
    /// assigns and its private locals, but those used outside it).
    fn own_locals(&self, b: &mut Build, run: &Run) -> HashMap<LocalId, LocalId> {
        let mut map = HashMap::new();
        let outside = self
            .used_outside
            .get(&run.lv.var)
            .cloned()
            .unwrap_or_default();
        let own = walk::locals_assigned(run.body)
            .into_iter()
            .chain(run.private.iter().copied())
            .filter(|l| !outside.contains(l))
            .chain([run.lv.var]);
        for l in own {
            let local = b.f.locals[l as usize].clone();
            let fresh = b.local(local.name, local.ty, local.len);
            map.insert(l, fresh);
        }
        // A complex product's parts stay adjacent locals (`ReduceOp::ComplexMul`): renamed
        // together into a fresh pair, or both kept.
        for r in run
            .reductions
            .iter()
            .filter(|r| r.op == ReduceOp::ComplexMul)
        {
            let (re, im) = (r.local, r.local + 1);
            match (map.get(&re).copied(), map.get(&im).copied()) {
                (Some(a), Some(c)) if c == a + 1 => {}
                (Some(_), Some(_)) => {
                    let (lr, li) = (
                        b.f.locals[re as usize].clone(),
                        b.f.locals[im as usize].clone(),
                    );
                    let fr = b.local(lr.name, lr.ty, lr.len);
                    let fi = b.local(li.name, li.ty, li.len);
                    map.insert(re, fr);
                    map.insert(im, fi);
                }
                _ => {
                    map.remove(&re);
                    map.remove(&im);
                }
            }
        }
        map
    }

    /// Records the outcome of each staged directive.
    fn record_staged(&mut self, plan: &Plan) {
        let round = plan.round;
        for (at, &(n, _)) in plan.staged.iter().enumerate() {
            let reads = plan.reads.values().filter(|(a, _)| *a == at).count();
            self.caches[n].outcome = CacheOutcome::Staged {
                round,
                elements: round + self.caches[n].len - 1,
                reads,
            };
        }
    }
}

/// For each load of `plan.reads`, the run's read of the copy in `arrays` that replaces it: at
/// the iteration's place in the run plus the load's in the window.
fn copy_reads(
    b: &mut Build,
    run: &Run,
    plan: &Plan,
    arrays: &[LocalId],
) -> HashMap<Handle<Expr>, Handle<Expr>> {
    let q = run.q;
    // The run's iterations reading the copies.
    let mut with = HashMap::new();
    for (&h, (at, offset)) in &plan.reads {
        let mut index = b.e(Expr::Local(q));
        for &(v, coefficient) in &offset.terms {
            let mut x = b.e(Expr::Local(v));
            x = b.cast(x, Scalar::USize);
            if coefficient != 1 {
                let k = b.lit(coefficient);
                x = b.bin(BinaryOp::Mul, x, k);
            }
            index = b.bin(BinaryOp::Add, index, x);
        }
        if offset.constant != 0 {
            let d = b.lit(offset.constant);
            index = b.bin(BinaryOp::Add, index, d);
        }
        let read = b.e(Expr::LocalElem {
            local: arrays[*at],
            index,
        });
        with.insert(h, read);
    }
    with
}

/// The run as written, for a run that does not read the copies.
fn plain_run(b: &mut Build, run: &Run) -> Stmt {
    let (lv, var, ty, name, body) = (run.lv, run.lv.var, run.ty, &run.name, run.body);
    let (round, q, offset) = (run.round, run.q, run.offset);
    let (schedule, reductions, private, flat) =
        (run.schedule, run.reductions, run.private, run.flat);
    // The run as written: `run * R + q`, below the trip count.
    let idx = b.local(format!("{name}_iteration"), Scalar::USize, None);
    let sum = {
        let qv = b.e(Expr::Local(q));
        b.bin(BinaryOp::Add, offset, qv)
    };
    let iv = b.e(Expr::Local(idx));
    let iv_ty = b.cast(iv, ty);
    let value = b.bin(BinaryOp::Add, lv.start, iv_ty);
    let mut plain_body = body.clone();
    plain_body.insert(0, Stmt::Assign { local: var, value });
    let iv = b.e(Expr::Local(idx));
    let below = b.bin(BinaryOp::Lt, iv, lv.trips);
    Stmt::For {
        levels: vec![b.level(q, round, lv.line)],
        schedule: if flat { Some(VECTOR) } else { schedule.clone() },
        reductions: if flat { Vec::new() } else { reductions.clone() },
        private: private.clone(),
        tile: Vec::new(),
        body: vec![
            Stmt::Assign {
                local: idx,
                value: sum,
            },
            Stmt::If {
                cond: below,
                accept: plain_body,
                reject: Vec::new(),
            },
        ],
    }
}

/// The loop over the runs, `ceil(trips / R)` of them, each running `statements`: sequential
/// (every thread in step), or the gang loop where the loop was a flat parallel loop.
fn runs_loop(b: &mut Build, run: &Run, arrays: &[LocalId], statements: Vec<Stmt>) -> Stmt {
    let (lv, round, r, flat, reductions) = (run.lv, run.round, run.r, run.flat, run.reductions);
    let runs = {
        let extra = b.lit(round - 1);
        let padded = b.bin(BinaryOp::Add, lv.trips, extra);
        let rl = b.lit(round);
        b.bin(BinaryOp::Div, padded, rl)
    };
    let (zero, one) = (b.lit(0), b.lit(1));
    Stmt::For {
        levels: vec![LoopLevel {
            var: r,
            start: zero,
            step: one,
            trips: runs,
            line: lv.line,
        }],
        schedule: flat.then_some(Schedule {
            gang: true,
            worker: false,
            vector: false,
        }),
        reductions: if flat { reductions.clone() } else { Vec::new() },
        private: if flat { arrays.to_vec() } else { Vec::new() },
        tile: Vec::new(),
        body: statements,
    }
}

/// A vector loop's schedule.
const VECTOR: Schedule = Schedule {
    gang: false,
    worker: false,
    vector: true,
};

/// Appends the expressions and locals of the rewrite to a function.
struct Build<'f> {
    f: &'f mut Function,
}

impl Build<'_> {
    fn e(&mut self, x: Expr) -> Handle<Expr> {
        self.f.exprs.append(x)
    }
    fn lit(&mut self, v: u32) -> Handle<Expr> {
        self.e(Expr::Literal(Literal::Int(Scalar::USize, i128::from(v))))
    }
    fn bin(&mut self, op: BinaryOp, a: Handle<Expr>, b: Handle<Expr>) -> Handle<Expr> {
        self.e(Expr::Binary(op, a, b))
    }
    /// `x` (a `usize`) as `ty`.
    fn cast(&mut self, x: Handle<Expr>, ty: Scalar) -> Handle<Expr> {
        if ty == Scalar::USize {
            x
        } else {
            self.e(Expr::Cast(x, ty))
        }
    }
    fn local(&mut self, name: String, ty: Scalar, len: Option<u32>) -> LocalId {
        self.f.locals.push(Local { name, ty, len });
        (self.f.locals.len() - 1) as LocalId
    }
    /// `var in 0..trips`.
    fn level(&mut self, var: LocalId, trips: u32, line: u32) -> LoopLevel {
        let (start, step, trips) = (self.lit(0), self.lit(1), self.lit(trips));
        LoopLevel {
            var,
            start,
            step,
            trips,
            line,
        }
    }
    fn vector_loop(&mut self, var: LocalId, trips: u32, line: u32, body: Block) -> Stmt {
        Stmt::For {
            levels: vec![self.level(var, trips, line)],
            schedule: Some(VECTOR),
            reductions: Vec::new(),
            private: Vec::new(),
            tile: Vec::new(),
            body,
        }
    }
}

/// The expressions under `h` that read local `var`.
fn local_reads(f: &Function, h: Handle<Expr>, var: LocalId, out: &mut Vec<Handle<Expr>>) {
    if f.exprs[h] == Expr::Local(var) {
        out.push(h);
    }
    for x in walk::operands(&f.exprs[h]) {
        local_reads(f, x, var, out);
    }
}

/// `e` with every read of local `var` replaced by `with`.
fn replace_local(
    f: &mut Function,
    e: Handle<Expr>,
    var: LocalId,
    with: Handle<Expr>,
) -> Handle<Expr> {
    let mut reads = Vec::new();
    local_reads(f, e, var, &mut reads);
    let with: HashMap<Handle<Expr>, Handle<Expr>> = reads.into_iter().map(|h| (h, with)).collect();
    let mut holder = [Stmt::Assign {
        local: var,
        value: e,
    }];
    walk::substitute(f, &mut holder, &with);
    match &holder[0] {
        Stmt::Assign { value, .. } => *value,
        _ => e,
    }
}
