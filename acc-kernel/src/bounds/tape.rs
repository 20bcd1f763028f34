//! A kernel's bounds proof as a flat program ([`Tape`]): the walk over statements and
//! expressions that [`super::Prepared::prove`] makes at a launch, laid out once per kernel in
//! the order it visits them (operands before the expression using them), so that a launch
//! runs down a list instead of recursing through the IR. A wavefront's launches, whose
//! integer scalars all change, prove at every launch: the walk is what they pay for.

use super::super::{Block, Expr, Handle, Kernel, LocalId, LoopLevel, ParamId, Scalar, Stmt};

/// One step of a proof.
#[derive(Clone, Debug)]
pub(super) enum Step {
    /// Expression `h`: its range (its operands' are known), whether it fits 32 bits, and,
    /// for an array or private-array read, whether its index is in bounds.
    Expr(Handle<Expr>),
    /// `local = value`: the local's range from here on.
    Assign { local: LocalId, value: Handle<Expr> },
    /// A store or atomic update of `array[index]`: the index in bounds.
    Store { array: ParamId, index: Handle<Expr> },
    /// A store into a private array: the index within its length.
    StorePrivate { local: LocalId, index: Handle<Expr> },
    /// An `if` starts: the environment saved.
    Save,
    /// A branch of an `if` starts: the environment narrowed to what `cond` being `holds`
    /// implies; where no value meets that, the walk goes on at `skip` (the branch never runs).
    Refine {
        cond: Handle<Expr>,
        holds: bool,
        skip: usize,
    },
    /// The accepting branch ends: the saved environment back.
    Restore,
    /// The `if` ends: the saved environment back, and dropped.
    Drop,
    /// A loop level: its variable's range from its start, step and trip count (already
    /// visited); a loop that never runs goes on at `skip`, after its body.
    Level { level: LoopLevel, skip: usize },
}

/// The steps of a kernel's proof, in order.
#[derive(Debug, Default)]
pub(super) struct Tape {
    pub(super) steps: Vec<Step>,
    /// While building: the expressions to write steps for (`None`: all).
    keep: Option<Vec<bool>>,
}

impl Tape {
    /// The proof of `kernel` as steps.
    /// `types`: each expression's type.
    pub(super) fn new(kernel: &Kernel, types: &[Scalar]) -> Tape {
        let mut every = Tape::default();
        every.block(kernel, &kernel.function.body);
        let mut t = Tape {
            steps: Vec::new(),
            keep: Some(every.needed(kernel, types)),
        };
        t.block(kernel, &kernel.function.body);
        t.keep = None;
        t
    }

    /// Which expressions' steps a proof needs: reads (their indices checked), and those whose
    /// range something reads: indices, conditions, loop bounds, `usize` widths, and what
    /// those are computed from. The rest (a value computed in `i32` or `f64`, a comparison
    /// of two loaded values) is left out of the tape.
    fn needed(&self, k: &Kernel, types: &[Scalar]) -> Vec<bool> {
        let pointer_sized =
            |h: Handle<Expr>| matches!(types.get(h.index()), Some(Scalar::USize | Scalar::ISize));
        let exprs = &k.function.exprs;
        let mut needed = vec![false; exprs.len()];
        let mut assigned: Vec<Vec<Handle<Expr>>> = vec![Vec::new(); k.function.locals.len()];
        let mut work = Vec::new();
        for step in &self.steps {
            match step {
                Step::Expr(h) => match &exprs[*h] {
                    Expr::Load { index, .. } | Expr::LocalElem { index, .. } => work.push(*index),
                    _ if pointer_sized(*h) => work.push(*h),
                    _ => {}
                },
                Step::Assign { local, value } => {
                    if let Some(v) = assigned.get_mut(*local as usize) {
                        v.push(*value);
                    }
                }
                Step::Store { index, .. } | Step::StorePrivate { index, .. } => work.push(*index),
                Step::Refine { cond, .. } => work.push(*cond),
                Step::Level { level, .. } => {
                    work.extend([level.start, level.step, level.trips]);
                }
                Step::Save | Step::Restore | Step::Drop => {}
            }
        }
        // What a needed range is computed from: operands, and the values a local read was
        // given.
        while let Some(h) = work.pop() {
            if std::mem::replace(&mut needed[h.index()], true) {
                continue;
            }
            match &exprs[h] {
                Expr::Unary(_, a) | Expr::Cast(a, _) | Expr::Bitcast(a, _) => work.push(*a),
                Expr::Binary(_, a, b) | Expr::NestedIndex { element: a, sub: b } => {
                    work.extend([*a, *b])
                }
                Expr::Select {
                    cond,
                    accept,
                    reject,
                } => work.extend([*cond, *accept, *reject]),
                Expr::Math(_, args) => work.extend(args.iter().copied()),
                Expr::Local(l) => {
                    if let Some(v) = assigned.get(*l as usize) {
                        work.extend(v.iter().copied());
                    }
                }
                Expr::Load { .. }
                | Expr::LocalElem { .. }
                | Expr::Literal(_)
                | Expr::Param(_)
                | Expr::Len(_)
                | Expr::GangIndex => {}
            }
        }
        for (h, e) in exprs.iter() {
            if matches!(e, Expr::Load { .. } | Expr::LocalElem { .. }) {
                needed[h.index()] = true;
            }
        }
        needed
    }

    fn block(&mut self, k: &Kernel, b: &Block) {
        for s in b {
            self.stmt(k, s);
        }
    }

    /// Expression `h` and everything in it, operands first.
    fn expr(&mut self, k: &Kernel, h: Handle<Expr>) {
        match &k.function.exprs[h] {
            Expr::Load { index, .. } | Expr::LocalElem { index, .. } => self.expr(k, *index),
            Expr::Unary(_, a) | Expr::Cast(a, _) | Expr::Bitcast(a, _) => self.expr(k, *a),
            Expr::Binary(_, a, b) | Expr::NestedIndex { element: a, sub: b } => {
                self.expr(k, *a);
                self.expr(k, *b);
            }
            Expr::Select {
                cond,
                accept,
                reject,
            } => {
                self.expr(k, *cond);
                self.expr(k, *accept);
                self.expr(k, *reject);
            }
            Expr::Math(_, args) => {
                for a in args {
                    self.expr(k, *a);
                }
            }
            Expr::Literal(_) | Expr::Param(_) | Expr::Local(_) | Expr::Len(_) | Expr::GangIndex => {
            }
        }
        if self
            .keep
            .as_ref()
            .is_none_or(|k| k.get(h.index()) == Some(&true))
        {
            self.steps.push(Step::Expr(h));
        }
    }

    fn stmt(&mut self, k: &Kernel, s: &Stmt) {
        match s {
            Stmt::Assign { local, value } => {
                self.expr(k, *value);
                self.steps.push(Step::Assign {
                    local: *local,
                    value: *value,
                });
            }
            Stmt::AssignElem {
                local,
                index,
                value,
            } => {
                self.expr(k, *index);
                self.expr(k, *value);
                self.steps.push(Step::StorePrivate {
                    local: *local,
                    index: *index,
                });
            }
            Stmt::Store {
                array,
                index,
                value,
                ..
            }
            | Stmt::Atomic {
                array,
                index,
                value,
                ..
            } => {
                self.expr(k, *index);
                self.expr(k, *value);
                self.steps.push(Step::Store {
                    array: *array,
                    index: *index,
                });
            }
            Stmt::If {
                cond,
                accept,
                reject,
            } => {
                // The condition's ranges are found again for the rejecting branch: the
                // accepting one may have found some of its parts under its own narrowing.
                self.expr(k, *cond);
                self.steps.push(Step::Save);
                let accept_at = self.steps.len();
                self.steps.push(Step::Refine {
                    cond: *cond,
                    holds: true,
                    skip: 0,
                });
                self.block(k, accept);
                let restore_at = self.steps.len();
                self.steps.push(Step::Restore);
                self.expr(k, *cond);
                let reject_at = self.steps.len();
                self.steps.push(Step::Refine {
                    cond: *cond,
                    holds: false,
                    skip: 0,
                });
                self.block(k, reject);
                let end = self.steps.len();
                self.steps.push(Step::Drop);
                for (at, to) in [(accept_at, restore_at), (reject_at, end)] {
                    if let Step::Refine { skip, .. } = &mut self.steps[at] {
                        *skip = to;
                    }
                }
            }
            Stmt::For { levels, body, .. } => {
                let mut at = Vec::new();
                for lv in levels {
                    self.expr(k, lv.start);
                    self.expr(k, lv.step);
                    self.expr(k, lv.trips);
                    at.push(self.steps.len());
                    self.steps.push(Step::Level {
                        level: lv.clone(),
                        skip: 0,
                    });
                }
                self.block(k, body);
                let end = self.steps.len();
                for i in at {
                    if let Step::Level { skip, .. } = &mut self.steps[i] {
                        *skip = end;
                    }
                }
            }
            Stmt::Loop { body } => self.block(k, body),
            Stmt::Break | Stmt::Continue => {}
        }
    }
}
