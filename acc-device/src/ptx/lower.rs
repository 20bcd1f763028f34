// Fields named after what they hold carry no doc of their own.
#![allow(missing_docs)]

use std::fmt::Write;

use acc_core::gpu::LaunchLayout;
pub use acc_core::ir::plan::ReductionSlot;
use acc_core::ir::plan::Spilled;
use acc_core::ir::plan::{self, Entry, EntryPlan, Plan};
use acc_core::ir::*;
use acc_core::{Error, Result};

/// Threads per block (along x).
pub const BLOCK_SIZE: u32 = 256;

/// What the kernel is generated for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Target {
    /// Compute capability as `major * 10 + minor` (70 and newer).
    pub sm: u32,
    /// `ACC_FAST_FLOAT=1`: `f32` arithmetic as CUDA's `-use_fast_math` gives it: multiplies
    /// and adds that ptxas may fuse, division and square root to within 2 ulp, and `exp`,
    /// `exp2`, `ln`, `log2`, `log10`, `sin`, `cos`, `recip` and `1 / sqrt` by the GPU's
    /// approximate instructions, where the exact forms compute through `f64`. `f64` stays
    /// exact.
    pub fast_float: bool,
}

impl Target {
    /// Compute capability `sm` with IEEE arithmetic, rounded as the host rounds.
    pub const fn exact(sm: u32) -> Target {
        Target {
            sm,
            fast_float: false,
        }
    }
}

/// A kernel lowered to PTX.
#[derive(Clone, Debug)]
pub struct Lowered {
    /// The module's text (`ACC_DUMP=ptx`).
    pub ptx: String,
    /// Entry points, launched in this order. Every entry point takes the same parameters: for
    /// each parameter of the kernel, in order, an array is two `.u64` parameters (the address
    /// of its first element and its length) and a scalar one parameter of its type (`bool` and
    /// 8/16-bit integers as 32-bit words); then the status words' address (16 bytes, zeroed),
    /// the locals buffer's address (`layout.locals_size` bytes, zeroed), the grid's block
    /// count (`.u32`), one address of per-block partials for each of `reductions` that has
    /// an entry point, in order, and one `.u64` per host loop variable the device reads (its
    /// value at the launch, `Program::run`'s host values).
    pub entry_points: Vec<String>,
    /// What a launch needs to know of it: each entry point's shape, the locals buffer, the
    /// reductions' slots, the region's value, the program launching the entry points.
    pub layout: LaunchLayout,
}

fn unsupported(what: impl Into<String>) -> Error {
    Error::Unsupported {
        what: format!("on nvidia: {}", what.into()),
    }
}

/// How a value of an IR type lives in PTX: its register class and its type for instructions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Repr {
    /// Register prefix (one pool per class).
    class: &'static str,
    /// Instruction type (`.u32`, `.f64`, ...).
    ty: &'static str,
    /// The same width, untyped (`.b32`), for moves and bit operations.
    bits: &'static str,
}

fn repr(t: Scalar) -> Repr {
    let r = |class, ty, bits| Repr { class, ty, bits };
    match t {
        Scalar::Bool => r("%p", ".pred", ".pred"),
        // Narrow integers are held in 32-bit registers and wrapped at their width.
        Scalar::I8 | Scalar::I16 | Scalar::I32 => r("%r", ".s32", ".b32"),
        // The 16-bit floats reach a backend only as their bits (the builder converts).
        Scalar::U8 | Scalar::U16 | Scalar::U32 | Scalar::F16 | Scalar::BF16 => {
            r("%r", ".u32", ".b32")
        }
        Scalar::I64 | Scalar::ISize => r("%rd", ".s64", ".b64"),
        Scalar::U64 | Scalar::USize => r("%rd", ".u64", ".b64"),
        Scalar::F32 => r("%f", ".f32", ".b32"),
        Scalar::F64 => r("%fd", ".f64", ".b64"),
    }
}

/// The type of an element in memory (host layout).
fn mem_type(t: Scalar) -> &'static str {
    match t {
        Scalar::Bool | Scalar::U8 => ".u8",
        Scalar::I8 => ".s8",
        Scalar::U16 | Scalar::F16 | Scalar::BF16 => ".u16",
        Scalar::I16 => ".s16",
        other => repr(other).ty,
    }
}

/// The type a store of an element uses (narrow integers store their low bits).
fn store_type(t: Scalar) -> &'static str {
    match t {
        Scalar::Bool | Scalar::U8 | Scalar::I8 => ".u8",
        Scalar::U16 | Scalar::I16 => ".u16",
        other => repr(other).ty,
    }
}

/// Bytes of an element in memory (host layout).
fn elem_size(t: Scalar) -> u32 {
    t.size()
}

/// The type of a kernel parameter holding a scalar (`bool` as a 32-bit 0 or 1).
fn param_type(t: Scalar) -> &'static str {
    match t {
        Scalar::Bool | Scalar::U8 | Scalar::U16 => ".u32",
        Scalar::I8 | Scalar::I16 => ".s32",
        other => repr(other).ty,
    }
}

/// Lowers `kernel` to PTX for `target`.
pub fn lower(kernel: &Kernel, target: Target) -> Result<Lowered> {
    lower_with(kernel, target, plan::Variant::default())
}

/// Lowers variant `variant` of `kernel` to PTX for `target`: without bounds checks where
/// proven, its `usize` arithmetic in 32 bits where narrowed ([`acc_core::ir::narrow`]: for a
/// launch whose arguments keep those values within 32 bits).
pub fn lower_with(kernel: &Kernel, target: Target, variant: plan::Variant) -> Result<Lowered> {
    if target.sm < 70 {
        return Err(unsupported(format!(
            "compute capability {}.{} (7.0 or newer is needed)",
            target.sm / 10,
            target.sm % 10
        )));
    }
    // The passes and every schedule decision, made once (`acc_core::ir::plan`).
    let caps = caps();
    let prepared = plan::prepare(kernel, &caps, variant).map_err(unsupported)?;
    let plan = prepared.plan(&caps);
    let kernel = plan.kernel;
    let mut w = Writer {
        spilled: plan.spilled.clone(),
        spill_regs: Default::default(),
        k: kernel,
        types: plan.types,
        regs: Default::default(),
        labels: 0,
        loops: Vec::new(),
        body: String::new(),
        local_slots: Vec::new(),
        array_slots: Vec::new(),
        shared: false,
        shared_pairs: false,
        privatized: None,
        priv_used: false,
        gang_arrays: Vec::new(),
        wide_vars: Default::default(),
        const_vars: Default::default(),
        bad: Default::default(),
        fast: None,
        versioned: Vec::new(),
        written_out: Vec::new(),
        host_vars: plan.segments.host_vars.clone(),
        fast_float: target.fast_float,
    };
    w.module(target, &plan)
}

/// What PTX on a CUDA GPU offers the plan.
pub fn caps() -> plan::Caps {
    plan::Caps {
        block: "block",
        thread: "thread",
        threads: BLOCK_SIZE,
        shared_array_bytes: plan::SHARED_ARRAY_BYTES,
        warp_lanes: Some(32),
        privatized_types: PRIVATIZED_TYPES,
        update_by_cas,
        partial_bytes: plan::ScalarBytes::from_fn(partial_size),
        elem_bytes: plan::ScalarBytes::from_fn(elem_size),
        index_bytes: 8,
        versions_atomic_arrays: true,
        versions_shared_loops: true,
        writes_out_short_loops: true,
    }
}

use acc_core::gpu::status;
pub use acc_core::gpu::status::PRIVATE_ARRAY_BIT;

struct Writer<'a> {
    k: &'a Kernel,
    /// The private arrays in device memory, one copy per thread (`acc_spill`).
    spilled: Spilled,
    /// For each spilled array, the registers of the entry point holding its element 0 in the
    /// thread's copy and the bytes between its elements.
    spill_regs: std::collections::HashMap<LocalId, (String, String)>,
    /// The type of each expression (the plan's).
    types: &'a [Scalar],
    /// Registers used so far, per class.
    regs: std::collections::BTreeMap<&'static str, u32>,
    labels: u32,
    /// The enclosing loops' continue and break labels.
    loops: Vec<(String, String)>,
    body: String,
    /// Where each region-level scalar local lives in the locals buffer (segmented regions).
    local_slots: Vec<(LocalId, Scalar, u32)>,
    /// The region-level private arrays in the locals buffer: local, type, offset, length
    /// ([`Kernel::array_locals_layout`]).
    array_slots: Vec<(LocalId, Scalar, u32, u32)>,
    /// Whether the entry point being written uses the shared-memory scratch.
    shared: bool,
    /// Whether that scratch holds pairs (a complex product's parts): twice the words.
    shared_pairs: bool,
    /// The array whose atomic updates go to the block's copy in shared memory (`acc_priv`)
    /// while the predicate register holds (the array fits there), if any.
    privatized: Option<(ParamId, String)>,
    /// Whether the entry declares `acc_priv`.
    priv_used: bool,
    /// The gang's arrays the entry keeps in shared memory (`acc_sa<local>`, one copy per
    /// block), from [`GangPhases::shared_arrays`].
    gang_arrays: Vec<LocalId>,
    /// The 64-bit values of the `u32` loop variables of a narrowed kernel, for indices that
    /// are the variable itself (see [`Writer::set_loop_var`]).
    wide_vars: std::collections::HashMap<LocalId, String>,
    /// The loop variables of a loop written out whole, each with its value in the copy being
    /// written: a shared array's index of the form `x + c` then folds `c` into the access.
    const_vars: std::collections::HashMap<LocalId, i128>,
    /// The registers of a thread's out-of-range access (what, index, length), reported to the
    /// status words when the thread ends (`what` is `u32::MAX` while there is none).
    bad: (String, String, String),
    /// Accesses known in bounds (the grid loop's fast version): arrays indexed by this loop
    /// variable itself, whose first and last values were checked before the loop.
    fast: Option<(LocalId, Vec<ParamId>)>,
    /// The entry's loops with a fast version and the arrays it covers, as planned
    /// ([`EntryPlan::versioned`]).
    versioned: Vec<(LocalId, Vec<ParamId>)>,
    /// The entry's shared loops written out per thread ([`EntryPlan::written_out`]).
    written_out: Vec<LocalId>,
    /// The host loops' variables each launch passes (`acc_hv<n>`, [`Segments::host_vars`]).
    host_vars: Vec<LocalId>,
    /// `f32` arithmetic by fast instructions ([`Target::fast_float`]).
    fast_float: bool,
}

impl Writer<'_> {
    fn reg(&mut self, class: &'static str) -> String {
        let n = self.regs.entry(class).or_insert(0);
        *n += 1;
        format!("{class}{}", *n - 1)
    }

    fn label(&mut self, what: &str) -> String {
        self.labels += 1;
        format!("$L_{what}_{}", self.labels)
    }

    fn emit(&mut self, line: impl AsRef<str>) {
        self.body.push_str("    ");
        self.body.push_str(line.as_ref());
        self.body.push('\n');
    }

    fn module(&mut self, target: Target, plan: &Plan<'_>) -> Result<Lowered> {
        let k = self.k;
        let version = if target.sm >= 90 {
            "7.8"
        } else if target.sm >= 80 {
            "7.0"
        } else {
            "6.4"
        };
        let mut ptx = format!(
            "// {}\n.version {version}\n.target sm_{}\n.address_size 64\n\n",
            k.name, target.sm
        );
        // Entry points as `acc_core::ir::segments` splits the region: a grid entry per
        // parallel loop, each run of other code on one thread (the region-level locals then
        // live in a buffer between entry points), host loops' bodies launched per iteration.
        let segmented = plan.segments.segmented;
        let mut locals_size = 0;
        if segmented {
            (self.local_slots, locals_size) = k.scalar_locals_layout(partial_size);
            (self.array_slots, locals_size) = k.array_locals_layout(elem_size, locals_size);
        }
        let mut entries: Vec<(String, String)> = Vec::new();
        for (e, planned) in plan.segments.entries.iter().zip(&plan.entries) {
            entries.push(match e {
                Entry::Single(stmts) => {
                    let stmts: Vec<&Stmt> = stmts.iter().collect();
                    self.single_entry(&stmts)?
                }
                Entry::Grid {
                    prelude,
                    looped,
                    slots,
                } => self.grid_entry(
                    &prelude.iter().collect::<Vec<_>>(),
                    (looped, planned),
                    slots,
                )?,
                Entry::Fold(reds) => self.fold_entry(reds)?,
            });
        }
        let layout = LaunchLayout::new(
            plan,
            (&self.local_slots, locals_size),
            // Only bounds checks write the status words (`memory.rs`).
            !k.unchecked,
        )
        .map_err(unsupported)?;
        let params = self.param_list(
            layout
                .reductions
                .iter()
                .filter(|r| r.entry.is_some())
                .count(),
        );
        let mut entry_points = Vec::new();
        for (n, (decls, body)) in entries.iter().enumerate() {
            let name = k.entry_name(n);
            let threads = plan.entries[n].block_threads;
            let _ = write!(ptx, ".visible .entry {name}(\n{params}\n)\n.maxntid {threads}, 1, 1\n{{\n{decls}{body}}}\n\n");
            entry_points.push(name);
        }
        Ok(Lowered {
            ptx,
            entry_points,
            layout,
        })
    }

    /// Local `l`'s register (declared once per entry, as `%l<id>` of its class).
    fn local(&self, l: LocalId) -> Result<String> {
        let local = &self.k.function.locals[l as usize];
        if local.len.is_some() {
            return Err(unsupported(format!(
                "internal error: the private array `{}` used as a scalar",
                local.name
            )));
        }
        Ok(format!("{}_l{l}", repr(local.ty).class))
    }

    fn block(&mut self, b: &[Stmt]) -> Result<()> {
        for s in b {
            self.stmt(s)?;
        }
        Ok(())
    }

    fn stmt(&mut self, s: &Stmt) -> Result<()> {
        match s {
            Stmt::Assign { local, value } => {
                // (A loop variable's 64-bit value no longer holds.)
                self.wide_vars.remove(local);
                let v = self.expr(*value)?;
                let l = self.local(*local)?;
                let ty = self.k.function.locals[*local as usize].ty;
                self.emit(format!(
                    "mov{} {l}, {v};",
                    if ty == Scalar::Bool {
                        ".pred"
                    } else {
                        repr(ty).bits
                    }
                ));
            }
            Stmt::AssignElem {
                local,
                index,
                value,
            } => {
                let v = self.expr(*value)?;
                let (ok, addr) = self.private_access(*local, *index)?;
                self.store_private(*local, &addr, &v, &format!("@{ok} "));
            }
            Stmt::Store {
                array,
                field,
                index,
                value,
            } => {
                let access = self.array(*array, *field)?;
                let elem = access.ty;
                let i = self.index_expr(*index)?;
                let v = self.expr(*value)?;
                let (ok, addr) = self.checked_address(*array, *index, &i, access)?;
                let pad = ok.map(|ok| format!("@{ok} ")).unwrap_or_default();
                self.store_global_if(&addr, elem, &v, &pad)?;
            }
            Stmt::If {
                cond,
                accept,
                reject,
            } => {
                let c = self.expr(*cond)?;
                let (other, end) = (self.label("else"), self.label("endif"));
                self.emit(format!("@!{c} bra {other};"));
                self.block(accept)?;
                self.emit(format!("bra {end};"));
                self.emit(format!("{other}:"));
                self.block(reject)?;
                self.emit(format!("{end}:"));
            }
            Stmt::For { levels, body, .. } => {
                // Inside a parallel loop every loop runs sequentially in its thread; the
                // levels of a collapsed nest as the nested loops they were written as.
                self.sequential_loop(levels, body)?;
            }
            Stmt::Loop { body } => {
                let (top, end) = (self.label("loop"), self.label("loopend"));
                self.emit(format!("{top}:"));
                self.loops.push((top.clone(), end.clone()));
                self.block(body)?;
                self.loops.pop();
                self.emit(format!("bra {top};"));
                self.emit(format!("{end}:"));
            }
            Stmt::Break => {
                let (_, end) = self
                    .loops
                    .last()
                    .cloned()
                    .ok_or_else(|| unsupported("`break` outside a loop"))?;
                self.emit(format!("bra {end};"));
            }
            Stmt::Continue => {
                let (cont, _) = self
                    .loops
                    .last()
                    .cloned()
                    .ok_or_else(|| unsupported("`continue` outside a loop"))?;
                self.emit(format!("bra {cont};"));
            }
            Stmt::Atomic {
                array,
                field,
                index,
                op,
                value,
                old,
                new,
            } => self.atomic((*array, *field), *index, *op, *value, *old, *new)?,
        }
        Ok(())
    }

    fn literal(&mut self, l: Literal) -> Result<String> {
        Ok(match l {
            Literal::Bool(b) => {
                let (w, p) = (self.reg("%r"), self.reg("%p"));
                self.emit(format!("mov.u32 {w}, {};", b as u32));
                self.emit(format!("setp.ne.u32 {p}, {w}, 0;"));
                p
            }
            Literal::Int(t, v) => {
                let r = repr(t);
                let d = self.reg(r.class);
                // Two's complement bits at the register's width.
                let bits = if r.class == "%rd" {
                    (v as u64) as u128
                } else {
                    (v as u32) as u128
                };
                self.emit(format!("mov{} {d}, {bits};", r.bits));
                d
            }
            Literal::Float(Scalar::F32, v) => {
                let d = self.reg("%f");
                self.emit(format!("mov.f32 {d}, 0f{:08X};", (v as f32).to_bits()));
                d
            }
            Literal::Float(_, v) => {
                let d = self.reg("%fd");
                self.emit(format!("mov.f64 {d}, 0d{:016X};", v.to_bits()));
                d
            }
        })
    }

    /// Wraps a narrow integer register to its width after arithmetic.
    fn wrap(&mut self, t: Scalar, r: &str) {
        match t {
            Scalar::U8 => self.emit(format!("and.b32 {r}, {r}, 255;")),
            Scalar::U16 => self.emit(format!("and.b32 {r}, {r}, 65535;")),
            Scalar::I8 => self.emit(format!("cvt.s32.s8 {r}, {r};")),
            Scalar::I16 => self.emit(format!("cvt.s32.s16 {r}, {r};")),
            _ => {}
        }
    }

    fn binary(&mut self, op: BinaryOp, t: Scalar, a: &str, b: &str) -> Result<String> {
        let r = repr(t);
        if op.is_comparison() {
            let cmp = match op {
                BinaryOp::Eq => "eq",
                BinaryOp::Ne => "ne",
                BinaryOp::Lt => "lt",
                BinaryOp::Le => "le",
                BinaryOp::Gt => "gt",
                _ => "ge",
            };
            let p = self.reg("%p");
            if t == Scalar::Bool {
                // Booleans compare as 0/1.
                let (x, y) = (self.reg("%r"), self.reg("%r"));
                self.emit(format!("selp.u32 {x}, 1, 0, {a};"));
                self.emit(format!("selp.u32 {y}, 1, 0, {b};"));
                self.emit(format!("setp.{cmp}.u32 {p}, {x}, {y};"));
            } else {
                // Unordered-false comparisons for floats, as Rust's (NaN compares false but
                // for `!=`).
                let cmp = if t.is_float() && op == BinaryOp::Ne {
                    "neu"
                } else {
                    cmp
                };
                self.emit(format!("setp.{cmp}{} {p}, {a}, {b};", r.ty));
            }
            return Ok(p);
        }
        let d = self.reg(r.class);
        if matches!(op, BinaryOp::Div | BinaryOp::Rem) && matches!(t, Scalar::U64 | Scalar::USize) {
            // 64-bit division is a long software sequence on the GPU: where both operands fit
            // 32 bits (indices, mostly) and the divisor is not zero, divide in 32 bits.
            let name = if op == BinaryOp::Div { "div" } else { "rem" };
            let (hi, small, nonzero) = (self.reg("%rd"), self.reg("%p"), self.reg("%p"));
            self.emit(format!("or.b64 {hi}, {a}, {b};"));
            self.emit(format!("shr.u64 {hi}, {hi}, 32;"));
            self.emit(format!("setp.eq.u64 {small}, {hi}, 0;"));
            self.emit(format!("setp.ne.u64 {nonzero}, {b}, 0;"));
            self.emit(format!("and.pred {small}, {small}, {nonzero};"));
            let (wide, done) = (self.label("wide"), self.label("divided"));
            self.emit(format!("@!{small} bra {wide};"));
            let (a32, b32, r32) = (self.reg("%r"), self.reg("%r"), self.reg("%r"));
            self.emit(format!("cvt.u32.u64 {a32}, {a};"));
            self.emit(format!("cvt.u32.u64 {b32}, {b};"));
            self.emit(format!("{name}.u32 {r32}, {a32}, {b32};"));
            self.emit(format!("cvt.u64.u32 {d}, {r32};"));
            self.emit(format!("bra {done};"));
            self.emit(format!("{wide}:"));
            self.emit(format!("{name}.u64 {d}, {a}, {b};"));
            self.emit(format!("{done}:"));
            return Ok(d);
        }
        let line = match (op, t) {
            (BinaryOp::And | BinaryOp::BitAnd, Scalar::Bool) => format!("and.pred {d}, {a}, {b};"),
            (BinaryOp::Or | BinaryOp::BitOr, Scalar::Bool) => format!("or.pred {d}, {a}, {b};"),
            (BinaryOp::BitXor, Scalar::Bool) => format!("xor.pred {d}, {a}, {b};"),
            (_, Scalar::Bool) => return Err(unsupported(format!("{op:?} on bool"))),
            // With `ACC_FAST_FLOAT=1`, f32 operations without a rounding mode, which ptxas
            // may fuse into an fma, and division to within 2 ulp.
            (BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul, Scalar::F32) if self.fast_float => {
                let name = match op {
                    BinaryOp::Add => "add",
                    BinaryOp::Sub => "sub",
                    _ => "mul",
                };
                format!("{name}.f32 {d}, {a}, {b};")
            }
            (BinaryOp::Div, Scalar::F32) if self.fast_float => {
                format!("div.full.f32 {d}, {a}, {b};")
            }
            // Floats round each operation (`.rn`), so ptxas does not fuse a multiply and an add
            // into an fma: results are the host's, bit for bit.
            (BinaryOp::Add, t) if t.is_float() => format!("add.rn{} {d}, {a}, {b};", r.ty),
            (BinaryOp::Sub, t) if t.is_float() => format!("sub.rn{} {d}, {a}, {b};", r.ty),
            (BinaryOp::Add, _) => format!("add{} {d}, {a}, {b};", r.ty),
            (BinaryOp::Sub, _) => format!("sub{} {d}, {a}, {b};", r.ty),
            (BinaryOp::Mul, t) if t.is_float() => format!("mul.rn{} {d}, {a}, {b};", r.ty),
            (BinaryOp::Mul, _) => format!("mul.lo{} {d}, {a}, {b};", r.ty),
            (BinaryOp::Div, t) if t.is_float() => format!("div.rn{} {d}, {a}, {b};", r.ty),
            (BinaryOp::Div, _) => format!("div{} {d}, {a}, {b};", r.ty),
            (BinaryOp::Rem, t) if t.is_float() => {
                // a - trunc(a / b) * b, as Rust's `%` on floats.
                let q = self.reg(r.class);
                self.emit(format!("div.rn{} {q}, {a}, {b};", r.ty));
                self.emit(format!("cvt.rzi{}{} {q}, {q};", r.ty, r.ty));
                self.emit(format!("mul{} {q}, {q}, {b};", r.ty));
                format!("sub{} {d}, {a}, {q};", r.ty)
            }
            (BinaryOp::Rem, _) => format!("rem{} {d}, {a}, {b};", r.ty),
            (BinaryOp::BitAnd, _) => format!("and{} {d}, {a}, {b};", r.bits),
            (BinaryOp::BitOr, _) => format!("or{} {d}, {a}, {b};", r.bits),
            (BinaryOp::BitXor, _) => format!("xor{} {d}, {a}, {b};", r.bits),
            (BinaryOp::Shl | BinaryOp::Shr, _) => {
                // The shift amount is a u32 in PTX.
                let amount = self.reg("%r");
                if b.starts_with("%rd") {
                    self.emit(format!("cvt.u32.u64 {amount}, {b};"));
                } else {
                    self.emit(format!("mov.b32 {amount}, {b};"));
                }
                if op == BinaryOp::Shl {
                    format!("shl{} {d}, {a}, {amount};", r.bits)
                } else {
                    format!("shr{} {d}, {a}, {amount};", r.ty)
                }
            }
            (BinaryOp::And | BinaryOp::Or, _) => return Err(unsupported(format!("{op:?} on {t}"))),
            _ => return Err(unsupported(format!("{op:?} on {t}"))),
        };
        self.emit(line);
        if matches!(
            op,
            BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Shl | BinaryOp::Div
        ) {
            self.wrap(t, &d);
        }
        Ok(d)
    }

    /// Converts register `x` of type `from` to type `to`, as Rust's `as` does.
    fn convert(&mut self, x: &str, from: Scalar, to: Scalar) -> Result<String> {
        if from == to {
            return Ok(x.to_string());
        }
        let (rf, rt) = (repr(from), repr(to));
        if from == Scalar::Bool {
            let d = self.reg(rt.class);
            let (one, zero) = if to.is_float() {
                (
                    if to == Scalar::F32 {
                        "0f3F800000"
                    } else {
                        "0d3FF0000000000000"
                    },
                    if to == Scalar::F32 {
                        "0f00000000"
                    } else {
                        "0d0000000000000000"
                    },
                )
            } else {
                ("1", "0")
            };
            self.emit(format!("selp{} {d}, {one}, {zero}, {x};", rt.ty));
            return Ok(d);
        }
        if to == Scalar::Bool {
            return Err(unsupported(format!("a cast from {from} to bool")));
        }
        let d = self.reg(rt.class);
        let line = match (from.is_float(), to.is_float()) {
            // Float to integer: toward zero, saturating, NaN to 0, as Rust's `as`.
            (true, false) => format!(
                "cvt.rzi{}{} {d}, {x};",
                if to.size() < 4 { narrow_cvt(to) } else { rt.ty },
                rf.ty
            ),
            (false, true) => format!("cvt.rn{}{} {d}, {x};", rt.ty, rf.ty),
            (true, true) => {
                if to == Scalar::F32 {
                    format!("cvt.rn.f32.f64 {d}, {x};")
                } else {
                    format!("cvt.f64.f32 {d}, {x};")
                }
            }
            (false, false) => {
                if rf.class == rt.class {
                    format!("mov{} {d}, {x};", rt.bits)
                } else {
                    format!("cvt{}{} {d}, {x};", rt.ty, rf.ty)
                }
            }
        };
        self.emit(line);
        if !from.is_float() || to.size() >= 4 {
            self.wrap(to, &d);
        }
        Ok(d)
    }

    /// A load of element `index` (and `field`) of parameter array `array`: through the
    /// read-only data cache where the kernel does not write the array, checked unless proven.
    fn load(
        &mut self,
        array: ParamId,
        field: Option<FieldId>,
        index: Handle<Expr>,
    ) -> Result<String> {
        let access = self.array(array, field)?;
        let (elem, writable) = (access.ty, access.writable);
        // Arrays the kernel does not write go through the read-only data cache: in
        // Rust no other parameter can alias them mutably.
        let space = if writable { ".global" } else { ".global.nc" };
        let i = self.index_expr(index)?;
        let (ok, addr) = self.checked_address(array, index, &i, access)?;
        // Out of range: the access is recorded and reads zero.
        let pad = ok.map(|ok| format!("@{ok} ")).unwrap_or_default();
        Ok(if elem == Scalar::Bool {
            let (w, d) = (self.reg("%r"), self.reg("%p"));
            self.emit(format!("mov.u32 {w}, 0;"));
            self.emit(format!("{pad}ld{space}.u8 {w}, [{addr}];"));
            self.emit(format!("setp.ne.u32 {d}, {w}, 0;"));
            d
        } else {
            let r = repr(elem);
            let d = self.reg(r.class);
            if !pad.is_empty() {
                self.emit(format!("mov{} {d}, 0;", r.bits));
            }
            self.emit(format!("{pad}ld{space}{} {d}, [{addr}];", mem_type(elem)));
            d
        })
    }

    /// `a op b`: constants folded as the device rounds them, unsigned divisions by a
    /// constant as shifts, masks or immediates, the rest by [`Writer::binary`].
    fn binary_expr(&mut self, op: BinaryOp, a: Handle<Expr>, b: Handle<Expr>) -> Result<String> {
        let operand = self.types[a.index()];
        if let (Expr::Literal(Literal::Float(_, x)), Expr::Literal(Literal::Float(_, y))) =
            (&self.k.function.exprs[a], &self.k.function.exprs[b])
        {
            // Constant arithmetic (`1.0 / 3.0` in a stencil's weights) is done here,
            // rounded as the device would: an IEEE division is a long sequence there.
            if let Some(v) = fold_float(op, operand, *x, *y) {
                return self.literal(Literal::Float(operand, v));
            }
        }
        if let Some(r) = self.fast_reciprocal_sqrt(op, operand, a, b)? {
            return Ok(r);
        }
        let x = self.expr(a)?;
        let divisor = match &self.k.function.exprs[b] {
            Expr::Literal(Literal::Int(_, v)) => Some(*v),
            _ => None,
        };
        Ok(match (op, divisor) {
            // An unsigned division by a constant: a shift or mask for a power of two,
            // else the immediate form, which ptxas turns into a multiplication.
            (BinaryOp::Div | BinaryOp::Rem, Some(v))
                if v > 0
                    && operand.is_int()
                    && !operand.is_signed()
                    && v <= i128::from(u32::MAX) =>
            {
                let r = repr(operand);
                let d = self.reg(r.class);
                let v = v as u64;
                self.emit(match (op, v.is_power_of_two()) {
                    (BinaryOp::Div, true) => {
                        format!("shr{} {d}, {x}, {};", r.ty, v.trailing_zeros())
                    }
                    (_, true) => format!("and{} {d}, {x}, {};", r.bits, v - 1),
                    (BinaryOp::Div, false) => format!("div{} {d}, {x}, {v};", r.ty),
                    _ => format!("rem{} {d}, {x}, {v};", r.ty),
                });
                d
            }
            _ => {
                let y = self.expr(b)?;
                self.binary(op, operand, &x, &y)?
            }
        })
    }

    fn expr(&mut self, h: Handle<Expr>) -> Result<String> {
        let ty = self.types[h.index()];
        let e = self.k.function.exprs[h].clone();
        Ok(match e {
            Expr::Literal(l) => self.literal(l)?,
            Expr::Param(p) => {
                let t = match self.k.params.get(p as usize).map(|p| &p.kind) {
                    Some(ParamKind::Scalar(t)) => *t,
                    _ => {
                        return Err(unsupported(format!(
                            "internal error: parameter {p} is not a scalar"
                        )))
                    }
                };
                if t == Scalar::Bool {
                    let (w, d) = (self.reg("%r"), self.reg("%p"));
                    self.emit(format!("ld.param.u32 {w}, [acc_s{p}];"));
                    self.emit(format!("setp.ne.u32 {d}, {w}, 0;"));
                    d
                } else {
                    let d = self.reg(repr(t).class);
                    self.emit(format!("ld.param{} {d}, [acc_s{p}];", param_type(t)));
                    d
                }
            }
            Expr::Local(l) => self.local(l)?,
            Expr::LocalElem { local, index } => {
                let (ok, addr) = self.private_access(local, index)?;
                self.load_private_if(local, &addr, Some(&ok))
            }
            Expr::Load {
                array,
                field,
                index,
            } => self.load(array, field, index)?,
            Expr::Len(a) => {
                let d = self.reg("%rd");
                self.emit(format!("ld.param.u64 {d}, [acc_n{a}];"));
                d
            }
            Expr::Unary(op, a) => {
                let x = self.expr(a)?;
                let r = repr(ty);
                let d = self.reg(r.class);
                match (op, ty) {
                    (UnaryOp::Not, Scalar::Bool) => self.emit(format!("not.pred {d}, {x};")),
                    (UnaryOp::Not, _) => {
                        self.emit(format!("not{} {d}, {x};", r.bits));
                        self.wrap(ty, &d);
                    }
                    (UnaryOp::Neg, _) => {
                        let neg_ty = if ty.is_float() || ty.is_signed() {
                            r.ty.to_string()
                        } else {
                            r.ty.replace('u', "s")
                        };
                        self.emit(format!("neg{neg_ty} {d}, {x};"));
                        self.wrap(ty, &d);
                    }
                }
                d
            }
            Expr::Binary(op, a, b) => self.binary_expr(op, a, b)?,
            Expr::Select {
                cond,
                accept,
                reject,
            } => {
                let (c, a, b) = (self.expr(cond)?, self.expr(accept)?, self.expr(reject)?);
                let r = repr(ty);
                let d = self.reg(r.class);
                if ty == Scalar::Bool {
                    let (t1, t2) = (self.reg("%p"), self.reg("%p"));
                    self.emit(format!("and.pred {t1}, {c}, {a};"));
                    self.emit(format!("not.pred {t2}, {c};"));
                    self.emit(format!("and.pred {t2}, {t2}, {b};"));
                    self.emit(format!("or.pred {d}, {t1}, {t2};"));
                } else {
                    self.emit(format!("selp{} {d}, {a}, {b}, {c};", r.bits));
                }
                d
            }
            Expr::Cast(a, to) => {
                let from = self.types[a.index()];
                let x = self.expr(a)?;
                self.convert(&x, from, to)?
            }
            Expr::Bitcast(a, to) => {
                let x = self.expr(a)?;
                let r = repr(to);
                let d = self.reg(r.class);
                self.emit(format!("mov{} {d}, {x};", r.bits));
                d
            }
            Expr::Math(f, args) => {
                let xs: Vec<String> = args.iter().map(|a| self.expr(*a)).collect::<Result<_>>()?;
                self.math(f, ty, &xs)?
            }
            // The element's index; `checked_address` adds the nested array's.
            Expr::NestedIndex { element, .. } => self.expr(element)?,
            Expr::GangIndex => {
                let (w, d) = (self.reg("%r"), self.reg("%rd"));
                self.emit(format!("mov.u32 {w}, %ctaid.x;"));
                self.emit(format!("cvt.u64.u32 {d}, {w};"));
                d
            }
        })
    }
}

/// The PTX type a float-to-narrow-integer conversion saturates to.
fn narrow_cvt(t: Scalar) -> &'static str {
    match t {
        Scalar::I8 => ".s8",
        Scalar::U8 => ".u8",
        Scalar::I16 => ".s16",
        _ => ".u16",
    }
}

/// Bytes of one per-block partial, and of a scalar local in the locals buffer (`bool` and
/// narrow integers as 32-bit words).
pub fn partial_size(t: Scalar) -> u32 {
    match t {
        Scalar::Bool => 4,
        t => t.size().max(4),
    }
}

mod atomic;
mod entry;
mod gang;
mod math;
mod memory;
mod reduce;

#[cfg(test)]
mod tests;

/// `x op y` for float constants of type `t`, rounded as `t`'s arithmetic rounds (Rust's
/// operators are IEEE 754's, as PTX's `.rn` instructions are).
fn fold_float(op: BinaryOp, t: Scalar, x: f64, y: f64) -> Option<f64> {
    let f32_op = |f: fn(f32, f32) -> f32| f64::from(f(x as f32, y as f32));
    let f64_op = |f: fn(f64, f64) -> f64| f(x, y);
    match (t, op) {
        (Scalar::F32, BinaryOp::Add) => Some(f32_op(|a, b| a + b)),
        (Scalar::F32, BinaryOp::Sub) => Some(f32_op(|a, b| a - b)),
        (Scalar::F32, BinaryOp::Mul) => Some(f32_op(|a, b| a * b)),
        (Scalar::F32, BinaryOp::Div) => Some(f32_op(|a, b| a / b)),
        (Scalar::F64, BinaryOp::Add) => Some(f64_op(|a, b| a + b)),
        (Scalar::F64, BinaryOp::Sub) => Some(f64_op(|a, b| a - b)),
        (Scalar::F64, BinaryOp::Mul) => Some(f64_op(|a, b| a * b)),
        (Scalar::F64, BinaryOp::Div) => Some(f64_op(|a, b| a / b)),
        _ => None,
    }
}

/// Elements of a block's copy of a privatized array (4 bytes each: 16 KiB of shared memory).
const PRIVATE_ELEMENTS: u32 = 4096;

/// The element types whose atomic updates a block combines in its shared memory first (4-byte
/// words, `acc_core::ir::privatize::privatized`).
pub const PRIVATIZED_TYPES: &[Scalar] = &[Scalar::I32, Scalar::U32, Scalar::F32];

/// Whether PTX updates an element of type `t` with `op` by a compare-and-swap loop: `atom` has
/// `add` for every 4- and 8-byte type and the bitwise operators for integers; 8- and 16-bit
/// elements go through their 32-bit word.
pub fn update_by_cas(op: BinaryOp, t: Scalar) -> bool {
    t.size() < 4 || native_update(op, t).is_none()
}

/// The `atom` operation updating a 4- or 8-byte element of type `t` with `op`, where PTX has
/// one (`add.f64`, `or.b32`).
fn native_update(op: BinaryOp, t: Scalar) -> Option<String> {
    let r = repr(t);
    let int_ty = if r.bits == ".b64" { ".u64" } else { ".u32" };
    match (op, t.is_float()) {
        (BinaryOp::Add, true) => Some(format!("add{}", r.ty)),
        (BinaryOp::Add, false) => Some(format!("add{int_ty}")),
        (BinaryOp::BitAnd, false) => Some(format!("and{}", r.bits)),
        (BinaryOp::BitOr, false) => Some(format!("or{}", r.bits)),
        (BinaryOp::BitXor, false) => Some(format!("xor{}", r.bits)),
        _ => None,
    }
}

/// The `atom` operation and type of a privatized update.
fn private_atom(op: BinaryOp, elem: Scalar) -> &'static str {
    match (op, elem) {
        (BinaryOp::Add, Scalar::F32) => "add.f32",
        (BinaryOp::Add, _) => "add.u32",
        (BinaryOp::BitOr, _) => "or.b32",
        _ => "xor.b32",
    }
}
