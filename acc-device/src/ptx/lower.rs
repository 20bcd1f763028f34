// Fields named after what they hold carry no doc of their own.
#![allow(missing_docs)]

use std::fmt::Write;

pub use acc_core::ir::launch::ReductionSlot;
use acc_core::ir::validate::expr_types;
use acc_core::ir::*;
use acc_core::{Error, Result};

/// Threads per block (along x).
pub const BLOCK_SIZE: u32 = 256;

/// What the kernel is generated for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Target {
    /// Compute capability as `major * 10 + minor` (70 and newer).
    pub sm: u32,
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
    /// the locals buffer's address ([`Lowered::locals_size`] bytes, zeroed), the grid's block
    /// count (`.u32`), and one address of per-block partials for each of `reductions` that has
    /// an entry point, in order.
    pub entry_points: Vec<String>,
    /// For each entry point: whether it runs on one thread (code between parallel loops, or a
    /// fold of per-block partials into a region local) rather than over the grid.
    pub single: Vec<bool>,
    /// For each entry point: whether each iteration of its (gang) loop takes a whole block,
    /// whose threads share an inner vector loop (so the grid has one block per iteration),
    /// rather than one thread.
    pub block_per_iteration: Vec<bool>,
    /// For each entry point: how many iterations of its gang loop one block runs at once (1,
    /// or a warp's worth per block where `vector_length` is at most 32).
    pub gangs_per_block: Vec<u32>,
    /// Bytes of the locals buffer, which keeps the region's scalar locals between entry points
    /// when the region has code besides its parallel loops (0 when it has none).
    pub locals_size: u32,
    pub reductions: Vec<ReductionSlot>,
    /// The region's value: its type and offset in the locals buffer (as a reduction word).
    pub result: Option<(Scalar, u32)>,
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
        Scalar::U8 | Scalar::U16 | Scalar::U32 => r("%r", ".u32", ".b32"),
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
        Scalar::U16 => ".u16",
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
/// Lowers `kernel` to PTX for `target`.
pub fn lower(kernel: &Kernel, target: Target) -> Result<Lowered> {
    if target.sm < 70 {
        return Err(unsupported(format!(
            "compute capability {}.{} (7.0 or newer is needed)",
            target.sm / 10,
            target.sm % 10
        )));
    }
    // Tiled nests run as tile loops around element loops.
    let kernel = &*acc_core::ir::tile::expand(kernel);
    let types = expr_types(kernel).map_err(|e| Error::Unsupported {
        what: format!("invalid kernel IR: {e}"),
    })?;
    let mut w = Writer {
        k: kernel,
        types,
        regs: Default::default(),
        labels: 0,
        loops: Vec::new(),
        body: String::new(),
        local_slots: Vec::new(),
        shared: false,
        privatized: None,
        priv_used: false,
        bad: Default::default(),
        fast: None,
    };
    w.module(target)
}

/// The status word of an out-of-range access to a private array (rather than to parameter
/// `n`, which is recorded as `n`): this bit, or'ed with the local's id.
pub const PRIVATE_ARRAY_BIT: u32 = 1 << 31;

struct Writer<'a> {
    k: &'a Kernel,
    types: Vec<Scalar>,
    /// Registers used so far, per class.
    regs: std::collections::BTreeMap<&'static str, u32>,
    labels: u32,
    /// The enclosing loops' continue and break labels.
    loops: Vec<(String, String)>,
    body: String,
    /// Where each region-level scalar local lives in the locals buffer (segmented regions).
    local_slots: Vec<(LocalId, Scalar, u32)>,
    /// Whether the entry point being written uses the shared-memory scratch.
    shared: bool,
    /// The array whose atomic updates go to the block's copy in shared memory (`acc_priv`)
    /// while the predicate register holds (the array fits there), if any.
    privatized: Option<(ParamId, String)>,
    /// Whether the entry declares `acc_priv`.
    priv_used: bool,
    /// The registers of a thread's out-of-range access (what, index, length), reported to the
    /// status words when the thread ends (`what` is `u32::MAX` while there is none).
    bad: (String, String, String),
    /// Accesses known in bounds (the grid loop's fast version): arrays indexed by this loop
    /// variable itself, whose first and last values were checked before the loop.
    fast: Option<(LocalId, Vec<ParamId>)>,
}

/// Whether a loop body is short straight-line code (assignments and stores, no control flow
/// or atomics), which the grid loop unrolls.
fn straight_line(body: &[Stmt]) -> bool {
    body.len() <= 16
        && body.iter().all(|s| {
            matches!(
                s,
                Stmt::Assign { .. } | Stmt::AssignElem { .. } | Stmt::Store { .. }
            )
        })
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

    fn module(&mut self, target: Target) -> Result<Lowered> {
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
        // A region of parallel loops with scalar assignments before them runs as one grid
        // entry point per loop, each thread running the assignments first. Any other region
        // is segmented: each run of other code is an entry point of one thread, and the
        // region-level scalar locals live in a buffer between entry points.
        let segmented = k.needs_segments();
        let mut locals_size = 0;
        if segmented {
            (self.local_slots, locals_size) = k.scalar_locals_layout(partial_size);
        }
        let mut entries: Vec<(String, String)> = Vec::new();
        let mut single = Vec::new();
        let mut reductions: Vec<ReductionSlot> = Vec::new();
        let mut reduced_in_loops = std::collections::BTreeSet::new();
        let mut per_block: Vec<bool> = Vec::new();
        let mut prelude: Vec<&Stmt> = Vec::new();
        let mut pending: Vec<&Stmt> = Vec::new();
        for (at, s) in k.function.body.iter().enumerate() {
            let last = at + 1 == k.function.body.len();
            match s {
                Stmt::Assign { .. } if !segmented => prelude.push(s),
                Stmt::For {
                    schedule: Some(_),
                    reductions: reds,
                    ..
                } => {
                    if !pending.is_empty() {
                        let text = self.single_entry(&pending)?;
                        entries.push(text);
                        single.push(true);
                        pending.clear();
                    }
                    let n = entries.len();
                    let mut slots = Vec::new();
                    let mut on_device = Vec::new();
                    for r in reds {
                        let into = k
                            .reductions
                            .iter()
                            .find(|(kr, _)| kr.local == r.local)
                            .map(|(_, p)| *p);
                        let local = &k.function.locals[r.local as usize];
                        if into.is_none() {
                            if local.len.is_some() {
                                return Err(unsupported(format!("an array reduction into `{}`, an array local to the region (not yet)", local.name)));
                            }
                            on_device.push((reductions.len(), *r));
                        }
                        slots.push(reductions.len());
                        reductions.push(ReductionSlot {
                            op: r.op,
                            ty: local.ty,
                            into,
                            entry: Some(n),
                            local_offset: 0,
                            len: local.len.unwrap_or(1),
                        });
                        reduced_in_loops.insert(r.local);
                    }
                    let text = self.grid_entry(&prelude, s, &slots)?;
                    entries.push(text);
                    single.push(false);
                    while per_block.len() + 1 < entries.len() {
                        per_block.push(false);
                    }
                    per_block.push(s.gang_phases(&self.k.function).is_some());
                    // Reductions into region locals: one thread folds the partials, in block
                    // order, into the local's value (3.3 section 2.9.11).
                    if !on_device.is_empty() {
                        let text = self.fold_entry(&on_device)?;
                        entries.push(text);
                        single.push(true);
                    }
                }
                other => {
                    pending.push(other);
                    if last {
                        let text = self.single_entry(&pending)?;
                        entries.push(text);
                        single.push(true);
                        pending.clear();
                    }
                }
            }
        }
        if !pending.is_empty() || entries.is_empty() {
            let text = self.single_entry(&pending)?;
            entries.push(text);
            single.push(true);
        }
        // Kernel reductions computed by sequential code: the local's final value.
        for (red, into) in &k.reductions {
            if !reduced_in_loops.contains(&red.local) {
                let Some(&(_, ty, off)) = self.local_slots.iter().find(|(i, ..)| *i == red.local)
                else {
                    return Err(unsupported("a reduction outside any loop of the region"));
                };
                reductions.push(ReductionSlot {
                    op: red.op,
                    ty,
                    into: Some(*into),
                    entry: None,
                    local_offset: off,
                    len: 1,
                });
            }
        }
        let params = self.param_list(reductions.iter().filter(|r| r.entry.is_some()).count());
        let mut entry_points = Vec::new();
        for (n, (decls, body)) in entries.iter().enumerate() {
            let name = k.entry_name(n);
            let threads = if single[n] { 1 } else { BLOCK_SIZE };
            let _ = write!(ptx, ".visible .entry {name}(\n{params}\n)\n.maxntid {threads}, 1, 1\n{{\n{decls}{body}}}\n\n");
            entry_points.push(name);
        }
        let result = k.result.and_then(|r| {
            self.local_slots
                .iter()
                .find(|(i, ..)| *i == r)
                .map(|&(_, t, off)| (t, off))
        });
        per_block.resize(entries.len(), false);
        Ok(Lowered {
            ptx,
            entry_points,
            single,
            gangs_per_block: per_block
                .iter()
                .map(|&b| if b && warp_groups(k) { BLOCK_SIZE / 32 } else { 1 })
                .collect(),
            block_per_iteration: per_block,
            locals_size,
            reductions,
            result,
        })
    }

    /// Starts an entry point's body: registers and private arrays per entry point.
    fn begin_entry(&mut self) {
        self.body.clear();
        self.regs.clear();
        self.shared = false;
        self.privatized = None;
        self.priv_used = false;
        self.fast = None;
        self.bad = (self.reg("%r"), self.reg("%rd"), self.reg("%rd"));
        let what = self.bad.0.clone();
        self.emit(format!("mov.u32 {what}, -1;"));
        let locals = self.k.function.locals.clone();
        for (i, l) in locals.iter().enumerate() {
            match l.len {
                None => {
                    let r = repr(l.ty);
                    let decl_ty = if r.class == "%p" { ".pred" } else { r.bits };
                    self.emit(format!(".reg {decl_ty} {}_l{i};", r.class));
                }
                Some(n) => {
                    let size = elem_size(l.ty) as u64 * n as u64;
                    self.emit(format!(".local .align 8 .b8 acc_pa{i}[{}];", size.max(1)));
                }
            }
        }
    }

    /// Ends an entry point: its register declarations, and its body.
    fn end_entry(&mut self) -> (String, String) {
        let mut decls = String::new();
        for (class, count) in &self.regs {
            let ty = match *class {
                "%p" => ".pred",
                "%r" => ".b32",
                "%rd" => ".b64",
                "%f" => ".f32",
                "%fd" => ".f64",
                _ => ".b32",
            };
            let _ = writeln!(decls, "    .reg {ty} {class}<{count}>;");
        }
        if self.shared {
            let _ = writeln!(
                decls,
                "    .shared .align 8 .b8 acc_shared[{}];",
                BLOCK_SIZE * 8
            );
        }
        if self.priv_used {
            let _ = writeln!(
                decls,
                "    .shared .align 4 .b8 acc_priv[{}];",
                PRIVATE_ELEMENTS * 4
            );
        }
        (decls, std::mem::take(&mut self.body))
    }

    /// Loads (or, with `store`, stores) the region-level scalar locals from (to) the locals
    /// buffer.
    fn move_locals(&mut self, store: bool) {
        if self.local_slots.is_empty() {
            return;
        }
        let base = self.reg("%rd");
        self.emit(format!("ld.param.u64 {base}, [acc_locals];"));
        for (l, t, off) in self.local_slots.clone() {
            let r = repr(t);
            let reg = format!("{}_l{l}", r.class);
            match (t, store) {
                (Scalar::Bool, false) => {
                    let w = self.reg("%r");
                    self.emit(format!("ld.global.u32 {w}, [{base}+{off}];"));
                    self.emit(format!("setp.ne.u32 {reg}, {w}, 0;"));
                }
                (Scalar::Bool, true) => {
                    let w = self.reg("%r");
                    self.emit(format!("selp.u32 {w}, 1, 0, {reg};"));
                    self.emit(format!("st.global.u32 [{base}+{off}], {w};"));
                }
                (_, false) => self.emit(format!("ld.global{} {reg}, [{base}+{off}];", r.bits)),
                (_, true) => self.emit(format!("st.global{} [{base}+{off}], {reg};", r.bits)),
            }
        }
    }

    /// Returns from every thread but the grid's first.
    fn first_thread_only(&mut self) {
        let (a, b) = (self.reg("%r"), self.reg("%r"));
        self.emit(format!("mov.u32 {a}, %tid.x;"));
        self.emit(format!("mov.u32 {b}, %ctaid.x;"));
        self.emit(format!("or.b32 {a}, {a}, {b};"));
        let p = self.reg("%p");
        self.emit(format!("setp.ne.u32 {p}, {a}, 0;"));
        self.emit(format!("@{p} ret;"));
    }

    /// An entry point of one thread running `stmts` (code between parallel loops), with the
    /// region-level locals loaded first and stored back last.
    fn single_entry(&mut self, stmts: &[&Stmt]) -> Result<(String, String)> {
        self.begin_entry();
        self.first_thread_only();
        self.move_locals(false);
        for st in stmts {
            self.stmt(st)?;
        }
        self.move_locals(true);
        self.report_bad();
        self.emit("ret;");
        Ok(self.end_entry())
    }

    /// An entry point of one thread folding the per-block partials of reductions into region
    /// locals, in block order, into the locals' values.
    fn fold_entry(&mut self, reds: &[(usize, Reduction)]) -> Result<(String, String)> {
        self.begin_entry();
        self.first_thread_only();
        self.move_locals(false);
        let (g, blocks) = (self.reg("%r"), self.reg("%r"));
        self.emit(format!("ld.param.u32 {blocks}, [acc_blocks];"));
        self.emit(format!("mov.u32 {g}, 0;"));
        let (top, end) = (self.label("fold"), self.label("folded"));
        self.emit(format!("{top}:"));
        let p = self.reg("%p");
        self.emit(format!("setp.ge.u32 {p}, {g}, {blocks};"));
        self.emit(format!("@{p} bra {end};"));
        for &(slot, red) in reds {
            let ty = self.k.function.locals[red.local as usize].ty;
            let l = self.local(red.local)?;
            let (base, at) = (self.reg("%rd"), self.reg("%rd"));
            self.emit(format!("ld.param.u64 {base}, [acc_partials{slot}];"));
            self.emit(format!("mul.wide.u32 {at}, {g}, {};", partial_size(ty)));
            self.emit(format!("add.u64 {at}, {base}, {at};"));
            let v = self.load_word(".global", &at, ty);
            let c = self.combine(red.op, ty, &l, &v)?;
            self.emit(format!("mov{} {l}, {c};", repr(ty).bits));
        }
        self.emit(format!("add.u32 {g}, {g}, 1;"));
        self.emit(format!("bra {top};"));
        self.emit(format!("{end}:"));
        self.move_locals(true);
        self.report_bad();
        self.emit("ret;");
        Ok(self.end_entry())
    }

    fn param_list(&self, partials: usize) -> String {
        let mut ps = Vec::new();
        for (id, p) in self.k.params.iter().enumerate() {
            match p.kind {
                ParamKind::Array { .. } => {
                    ps.push(format!("    .param .u64 acc_a{id}"));
                    ps.push(format!("    .param .u64 acc_n{id}"));
                }
                ParamKind::Scalar(t) => ps.push(format!("    .param {} acc_s{id}", param_type(t))),
            }
        }
        ps.push("    .param .u64 acc_status".into());
        ps.push("    .param .u64 acc_locals".into());
        ps.push("    .param .u32 acc_blocks".into());
        for r in 0..partials {
            ps.push(format!("    .param .u64 acc_partials{r}"));
        }
        ps.join(",\n")
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

    /// A grid entry point: the prelude (or, in a segmented region, the region's locals), then
    /// the loop's share of iterations, then the block's reduction partials.
    fn grid_entry(
        &mut self,
        prelude: &[&Stmt],
        s: &Stmt,
        slots: &[usize],
    ) -> Result<(String, String)> {
        let Stmt::For {
            levels,
            reductions,
            body,
            ..
        } = s
        else {
            return Err(unsupported("internal error: an entry without its loop"));
        };
        self.begin_entry();
        self.move_locals(false);
        for st in prelude {
            self.stmt(st)?;
        }
        // The grid: thread `gid` of `stride` takes iterations gid, gid + stride, ...
        let (tid, ctaid, ntid, nctaid) = (
            self.reg("%r"),
            self.reg("%r"),
            self.reg("%r"),
            self.reg("%r"),
        );
        self.emit(format!("mov.u32 {tid}, %tid.x;"));
        self.emit(format!("mov.u32 {ctaid}, %ctaid.x;"));
        self.emit(format!("mov.u32 {ntid}, %ntid.x;"));
        self.emit(format!("mov.u32 {nctaid}, %nctaid.x;"));
        let (k, stride) = (self.reg("%rd"), self.reg("%rd"));
        self.emit(format!("mul.wide.u32 {k}, {ctaid}, {ntid};"));
        self.emit(format!("cvt.u64.u32 {stride}, {tid};"));
        self.emit(format!("add.u64 {k}, {k}, {stride};"));
        self.emit(format!("mul.wide.u32 {stride}, {nctaid}, {ntid};"));
        for r in reductions {
            let l = &self.k.function.locals[r.local as usize];
            let (ty, len) = (l.ty, l.len);
            let id = self.identity(r.op, ty)?;
            match len {
                None => {
                    let l = self.local(r.local)?;
                    self.emit(format!("mov{} {l}, {id};", repr(ty).bits));
                }
                Some(n) => {
                    for e in 0..n {
                        let addr = self.private_address_const(r.local, e);
                        self.store_private(&addr, ty, &id, "");
                    }
                }
            }
        }
        // A gang loop whose body is a vector loop (after scalar assignments, maybe before more
        // code): each iteration of the gang loop takes a block, whose threads share the vector
        // loop's iterations; the block combines the loop's reductions into locals of the
        // iteration, and its first thread runs the code after the loop (`GangPhases`).
        match s.gang_phases(&self.k.function) {
            Some(phases) => {
                let Stmt::For {
                    levels: inner_levels,
                    body: inner_body,
                    ..
                } = &*phases.vector
                else {
                    unreachable!("gang_phases gives a loop")
                };
                let (kb, sb, kt, st) = (
                    self.reg("%rd"),
                    self.reg("%rd"),
                    self.reg("%rd"),
                    self.reg("%rd"),
                );
                // With `vector_length(n)`, n <= 32: a warp per gang iteration, the block's
                // warps taking consecutive ones; no barriers. Otherwise the whole block.
                let warps = warp_groups(self.k);
                let lane = self.reg("%r");
                if warps {
                    let (warp, groups) = (self.reg("%r"), BLOCK_SIZE / 32);
                    self.emit(format!("and.b32 {lane}, {tid}, 31;"));
                    self.emit(format!("shr.u32 {warp}, {tid}, 5;"));
                    self.emit(format!("mul.wide.u32 {kb}, {ctaid}, {groups};"));
                    let w64 = self.reg("%rd");
                    self.emit(format!("cvt.u64.u32 {w64}, {warp};"));
                    self.emit(format!("add.u64 {kb}, {kb}, {w64};"));
                    self.emit(format!("mul.wide.u32 {sb}, {nctaid}, {groups};"));
                    self.emit(format!("mov.u64 {st}, 32;"));
                } else {
                    self.emit(format!("mov.u32 {lane}, {tid};"));
                    self.emit(format!("cvt.u64.u32 {kb}, {ctaid};"));
                    self.emit(format!("cvt.u64.u32 {sb}, {nctaid};"));
                    self.emit(format!("cvt.u64.u32 {st}, {ntid};"));
                }
                self.strided(levels, &kb, &sb, false, &mut |w: &mut Self| {
                    for a in &phases.pre {
                        w.stmt(a)?;
                    }
                    // Each thread's part of a block reduction starts at the identity; the
                    // value before the loop joins the block's result.
                    let mut kept = Vec::new();
                    for r in &phases.block_reductions {
                        let ty = w.k.function.locals[r.local as usize].ty;
                        let reg = w.local(r.local)?;
                        let keep = w.reg(repr(ty).class);
                        w.emit(format!("mov{} {keep}, {reg};", repr(ty).bits));
                        let id = w.identity(r.op, ty)?;
                        w.emit(format!("mov{} {reg}, {id};", repr(ty).bits));
                        kept.push((*r, ty, keep));
                    }
                    w.emit(format!("cvt.u64.u32 {kt}, {lane};"));
                    w.strided(
                        inner_levels,
                        &kt,
                        &st,
                        straight_line(inner_body),
                        &mut |w: &mut Self| w.block(inner_body),
                    )?;
                    for (r, ty, keep) in kept {
                        let reg = w.local(r.local)?;
                        let total = if warps {
                            w.warp_allreduce(r.op, ty, &reg)?
                        } else {
                            w.block_allreduce(r.op, ty, &reg, &tid)?
                        };
                        let c = w.combine(r.op, ty, &keep, &total)?;
                        w.emit(format!("mov{} {reg}, {c};", repr(ty).bits));
                    }
                    if !phases.post.is_empty() {
                        let (skip, p) = (w.label("single"), w.reg("%p"));
                        w.emit(format!("setp.ne.u32 {p}, {lane}, 0;"));
                        w.emit(format!("@{p} bra {skip};"));
                        for a in &phases.post {
                            w.stmt(a)?;
                        }
                        w.emit(format!("{skip}:"));
                    }
                    Ok(())
                })?;
            }
            None => {
                // A small array the loop only adds (or ors, xors) into atomically: each block
                // combines its updates in its own copy in shared memory first.
                let private = acc_core::ir::privatize::atomic_targets(self.k, s)
                    .into_iter()
                    .find(|p| {
                        self.k
                            .access(p.array, None)
                            .is_some_and(|a| a.ty.size() == 4 && a.stride == 4)
                    });
                if let Some(p) = private {
                    self.privatize_begin(p, &tid, &ntid)?;
                }
                self.strided(
                    levels,
                    &k,
                    &stride,
                    straight_line(body),
                    &mut |w: &mut Self| w.block(body),
                )?;
                if let Some(p) = private {
                    self.privatize_end(p, &tid, &ntid)?;
                }
            }
        }
        for (red, &slot) in reductions.iter().zip(slots) {
            let l = &self.k.function.locals[red.local as usize];
            let (ty, len) = (l.ty, l.len);
            match len {
                None => {
                    let v = self.local(red.local)?;
                    self.block_reduce_shuffle(red.op, ty, &v, &tid, &ctaid, slot)?;
                }
                Some(n) => {
                    for e in 0..n {
                        let addr = self.private_address_const(red.local, e);
                        let v = self.load_private(&addr, ty);
                        self.block_reduce_shared(red.op, ty, &v, &tid, &ctaid, slot, e, n)?;
                    }
                }
            }
        }
        self.report_bad();
        self.emit("ret;");
        Ok(self.end_entry())
    }

    /// A strided loop over the (collapsed) `levels`: iterations `k`, `k + stride`, ... of
    /// their flat space (innermost level fastest), each setting the loop variables and running
    /// `body` (`continue` and `break` in it refer to this loop). `k` is advanced in place.
    fn strided(
        &mut self,
        levels: &[LoopLevel],
        k: &str,
        stride: &str,
        unroll: bool,
        body: &mut dyn FnMut(&mut Self) -> Result<()>,
    ) -> Result<()> {
        let (k, stride) = (k.to_string(), stride.to_string());
        let mut trips = Vec::new();
        for lv in levels {
            trips.push(self.expr(lv.trips)?);
        }
        let total = self.reg("%rd");
        self.emit(format!("mov.u64 {total}, 1;"));
        for t in &trips {
            self.emit(format!("mul.lo.u64 {total}, {total}, {t};"));
        }
        // Fast version: where the arrays indexed by the loop variable itself hold its first and
        // last values (checked once, before the loop), those accesses need no check.
        let arrays = match levels {
            [lv] if self.k.function.locals[lv.var as usize].ty == Scalar::USize => {
                self.indexed_by(lv.var)
            }
            _ => Vec::new(),
        };
        if arrays.is_empty() || self.fast.is_some() || self.k.unchecked {
            return self.strided_loops(levels, &k, &stride, unroll, &trips, &total, body);
        }
        let lv = &levels[0];
        let (start, step) = (self.expr(lv.start)?, self.expr(lv.step)?);
        let (last, fast) = (self.reg("%rd"), self.reg("%p"));
        self.emit(format!("sub.u64 {last}, {total}, 1;"));
        self.emit(format!("mad.lo.u64 {last}, {last}, {step}, {start};"));
        self.emit(format!("setp.eq.u64 {fast}, {total}, 0;"));
        let all = self.reg("%p");
        self.emit(format!("setp.eq.u64 {all}, {total}, {total};"));
        for &a in &arrays {
            let n = self.reg("%rd");
            self.emit(format!("ld.param.u64 {n}, [acc_n{a}];"));
            let (p, q) = (self.reg("%p"), self.reg("%p"));
            self.emit(format!("setp.lt.u64 {p}, {start}, {n};"));
            self.emit(format!("setp.lt.u64 {q}, {last}, {n};"));
            self.emit(format!("and.pred {all}, {all}, {p};"));
            self.emit(format!("and.pred {all}, {all}, {q};"));
        }
        self.emit(format!("or.pred {fast}, {fast}, {all};"));
        let (checked, done) = (self.label("checked"), self.label("versions"));
        self.emit(format!("@!{fast} bra {checked};"));
        self.fast = Some((lv.var, arrays));
        let r = self.strided_loops(levels, &k, &stride, unroll, &trips, &total, body);
        self.fast = None;
        r?;
        self.emit(format!("bra {done};"));
        self.emit(format!("{checked}:"));
        self.strided_loops(levels, &k, &stride, unroll, &trips, &total, body)?;
        self.emit(format!("{done}:"));
        Ok(())
    }

    /// The arrays some access of the kernel indexes with local `var` itself.
    fn indexed_by(&self, var: LocalId) -> Vec<ParamId> {
        let mut out = Vec::new();
        let is_var =
            |h: Handle<Expr>| matches!(self.k.function.exprs[h], Expr::Local(l) if l == var);
        for (_, e) in self.k.function.exprs.iter() {
            if let Expr::Load { array, index, .. } = e {
                if is_var(*index) && !out.contains(array) {
                    out.push(*array);
                }
            }
        }
        fn stmts(b: &[Stmt], is_var: &dyn Fn(Handle<Expr>) -> bool, out: &mut Vec<ParamId>) {
            for s in b {
                match s {
                    Stmt::Store { array, index, .. } | Stmt::Atomic { array, index, .. }
                        if is_var(*index) && !out.contains(array) =>
                    {
                        out.push(*array)
                    }
                    Stmt::If { accept, reject, .. } => {
                        stmts(accept, is_var, out);
                        stmts(reject, is_var, out);
                    }
                    Stmt::For { body, .. } | Stmt::Loop { body } => stmts(body, is_var, out),
                    _ => {}
                }
            }
        }
        stmts(&self.k.function.body, &is_var, &mut out);
        out
    }

    /// The loops of [`Writer::strided`] over `total` iterations.
    #[allow(clippy::too_many_arguments)]
    fn strided_loops(
        &mut self,
        levels: &[LoopLevel],
        k: &str,
        stride: &str,
        unroll: bool,
        trips: &[String],
        total: &str,
        body: &mut dyn FnMut(&mut Self) -> Result<()>,
    ) -> Result<()> {
        let (k, stride, total) = (k.to_string(), stride.to_string(), total.to_string());
        // A straight-line body over one level runs four iterations per trip while four remain
        // (in the same order per thread): one basic block, so their loads are in flight
        // together. The loop below takes the rest.
        if unroll && levels.len() == 1 {
            let (top, rest) = (self.label("unrolled"), self.label("rest"));
            let (last, step4) = (self.reg("%rd"), self.reg("%rd"));
            self.emit(format!("mul.lo.u64 {step4}, {stride}, 4;"));
            self.emit(format!("{top}:"));
            self.emit(format!("mad.lo.u64 {last}, {stride}, 3, {k};"));
            let p = self.reg("%p");
            self.emit(format!("setp.ge.u64 {p}, {last}, {total};"));
            self.emit(format!("@{p} bra {rest};"));
            for j in 0..4u32 {
                let kj = self.reg("%rd");
                self.emit(format!("mad.lo.u64 {kj}, {stride}, {j}, {k};"));
                self.set_loop_var(&levels[0], &kj)?;
                let cont = self.label("unrolledcont");
                self.loops.push((cont.clone(), rest.clone()));
                body(self)?;
                self.loops.pop();
                self.emit(format!("{cont}:"));
            }
            self.emit(format!("add.u64 {k}, {k}, {step4};"));
            self.emit(format!("bra {top};"));
            self.emit(format!("{rest}:"));
        }
        // Collapsed levels: the flat index is split over the levels (innermost fastest) once,
        // and so is the stride; each step then adds the stride's digits with carries, so the
        // loop divides nothing.
        let multi = levels.len() > 1;
        let split = |w: &mut Self, x: &str| -> Vec<String> {
            let rest = w.reg("%rd");
            w.emit(format!("mov.u64 {rest}, {x};"));
            let mut digits = vec![String::new(); levels.len()];
            for i in (0..levels.len()).rev() {
                let d = w.reg("%rd");
                if i == 0 {
                    w.emit(format!("mov.u64 {d}, {rest};"));
                } else {
                    w.emit(format!("rem.u64 {d}, {rest}, {};", trips[i]));
                    w.emit(format!("div.u64 {rest}, {rest}, {};", trips[i]));
                }
                digits[i] = d;
            }
            digits
        };
        let (idx, inc) = if multi {
            (split(self, &k), split(self, &stride))
        } else {
            (Vec::new(), Vec::new())
        };
        let (top, cont, end) = (self.label("grid"), self.label("next"), self.label("done"));
        let p = self.reg("%p");
        self.emit(format!("{top}:"));
        self.emit(format!("setp.ge.u64 {p}, {k}, {total};"));
        self.emit(format!("@{p} bra {end};"));
        if multi {
            for (i, lv) in levels.iter().enumerate() {
                self.set_loop_var(lv, &idx[i])?;
            }
        } else {
            self.set_loop_var(&levels[0], &k)?;
        }
        self.loops.push((cont.clone(), end.clone()));
        body(self)?;
        self.loops.pop();
        self.emit(format!("{cont}:"));
        self.emit(format!("add.u64 {k}, {k}, {stride};"));
        if multi {
            let carry = self.reg("%rd");
            self.emit(format!("mov.u64 {carry}, 0;"));
            for i in (0..levels.len()).rev() {
                self.emit(format!("add.u64 {}, {}, {};", idx[i], idx[i], inc[i]));
                self.emit(format!("add.u64 {}, {}, {carry};", idx[i], idx[i]));
                let over = self.reg("%p");
                self.emit(format!("setp.ge.u64 {over}, {}, {};", idx[i], trips[i]));
                self.emit(format!(
                    "@{over} sub.u64 {}, {}, {};",
                    idx[i], idx[i], trips[i]
                ));
                self.emit(format!("selp.u64 {carry}, 1, 0, {over};"));
            }
        }
        self.emit(format!("bra {top};"));
        self.emit(format!("{end}:"));
        Ok(())
    }

    /// Starts a block's copy of array `p` in shared memory, where it fits: zeroed by the
    /// block's threads, then a barrier; atomic updates of `p` go to it from here on.
    fn privatize_begin(
        &mut self,
        p: acc_core::ir::privatize::Privatized,
        tid: &str,
        ntid: &str,
    ) -> Result<()> {
        self.priv_used = true;
        let len = self.reg("%rd");
        self.emit(format!("ld.param.u64 {len}, [acc_n{}];", p.array));
        let fits = self.reg("%p");
        self.emit(format!("setp.le.u64 {fits}, {len}, {PRIVATE_ELEMENTS};"));
        self.private_pass(&fits, &len, tid, ntid, |w, at| {
            w.emit(format!("st.shared.u32 [{at}], 0;"));
            Ok(())
        })?;
        self.emit("bar.sync 0;");
        self.privatized = Some((p.array, fits));
        Ok(())
    }

    /// Ends the block's copy of `p`: a barrier, then each element the block changed is
    /// combined into the array with one atomic.
    fn privatize_end(
        &mut self,
        p: acc_core::ir::privatize::Privatized,
        tid: &str,
        ntid: &str,
    ) -> Result<()> {
        let Some((_, fits)) = self.privatized.take() else {
            return Ok(());
        };
        self.emit("bar.sync 0;");
        let len = self.reg("%rd");
        self.emit(format!("ld.param.u64 {len}, [acc_n{}];", p.array));
        let elem = self.k.access(p.array, None).map_or(Scalar::U32, |a| a.ty);
        let op = private_atom(p.op, elem);
        let array = p.array;
        self.private_pass(&fits, &len, tid, ntid, |w, at| {
            let (v, zero) = (w.reg("%r"), w.reg("%p"));
            w.emit(format!("ld.shared.b32 {v}, [{at}];"));
            w.emit(format!("setp.eq.b32 {zero}, {v}, 0;"));
            let skip = w.label("unchanged");
            w.emit(format!("@{zero} bra {skip};"));
            let (base, off) = (w.reg("%rd"), w.reg("%rd"));
            w.emit(format!("ld.param.u64 {base}, [acc_a{array}];"));
            let first = w.reg("%rd");
            w.emit(format!("mov.u64 {first}, acc_priv;"));
            w.emit(format!("sub.u64 {off}, {at}, {first};"));
            w.emit(format!("add.u64 {base}, {base}, {off};"));
            let d = w.reg("%r");
            let v = if op.ends_with("f32") {
                let f = w.reg("%f");
                w.emit(format!("mov.b32 {f}, {v};"));
                f
            } else {
                v
            };
            let d = if op.ends_with("f32") { w.reg("%f") } else { d };
            w.emit(format!("atom.global.{op} {d}, [{base}], {v};"));
            w.emit(format!("{skip}:"));
            Ok(())
        })
    }

    /// `body(address)` for each element of the block's copy (`len` of them), the block's
    /// threads taking every `ntid`-th, when `fits` holds.
    fn private_pass(
        &mut self,
        fits: &str,
        len: &str,
        tid: &str,
        ntid: &str,
        mut body: impl FnMut(&mut Self, &str) -> Result<()>,
    ) -> Result<()> {
        let (j, step, at) = (self.reg("%rd"), self.reg("%rd"), self.reg("%rd"));
        let (top, end) = (self.label("priv"), self.label("privdone"));
        self.emit(format!("@!{fits} bra {end};"));
        self.emit(format!("cvt.u64.u32 {j}, {tid};"));
        self.emit(format!("cvt.u64.u32 {step}, {ntid};"));
        self.emit(format!("{top}:"));
        let done = self.reg("%p");
        self.emit(format!("setp.ge.u64 {done}, {j}, {len};"));
        self.emit(format!("@{done} bra {end};"));
        self.emit(format!("mov.u64 {at}, acc_priv;"));
        self.emit(format!("mad.lo.u64 {at}, {j}, 4, {at};"));
        body(self, &at)?;
        self.emit(format!("add.u64 {j}, {j}, {step};"));
        self.emit(format!("bra {top};"));
        self.emit(format!("{end}:"));
        Ok(())
    }

    /// The combination of `v` over the warp's lanes, in every lane: a butterfly of shuffles,
    /// in which each lane combines the same pairs (so every lane holds the same value).
    fn warp_allreduce(&mut self, op: ReduceOp, ty: Scalar, v: &str) -> Result<String> {
        let mut acc = v.to_string();
        for off in [16, 8, 4, 2, 1] {
            let other = self.shuffle(&acc, ty, off, "bfly");
            acc = self.combine(op, ty, &acc, &other)?;
        }
        Ok(acc)
    }

    /// The combination of `v` over the block's threads, in every thread: [`Writer::warps_combine`],
    /// then lane 0 of warp 0 publishes the result in shared memory, which every thread reads
    /// (deterministic for a block size). Every thread of the block must reach it; it leaves
    /// shared memory free for the next use.
    fn block_allreduce(&mut self, op: ReduceOp, ty: Scalar, v: &str, tid: &str) -> Result<String> {
        let c = self.warps_combine(op, ty, v, tid)?;
        // (Warp 0 read the slots before its shuffles, so slot 0 is free.)
        self.store_word(".shared", &c.base, ty, &c.value)?;
        self.emit(format!("{}:", c.after));
        self.emit("bar.sync 0;");
        let r = self.load_word(".shared", &c.base, ty);
        let out = self.reg(repr(ty).class);
        self.emit(format!("mov{} {out}, {r};", repr(ty).bits));
        self.emit("bar.sync 0;");
        Ok(out)
    }

    /// Writes the block's partial of `v` (thread 0 writes it at `partials[block]`) after
    /// [`Writer::warps_combine`].
    #[allow(clippy::too_many_arguments)]
    fn block_reduce_shuffle(
        &mut self,
        op: ReduceOp,
        ty: Scalar,
        v: &str,
        tid: &str,
        ctaid: &str,
        slot: usize,
    ) -> Result<()> {
        let c = self.warps_combine(op, ty, v, tid)?;
        let pb = self.reg("%rd");
        self.emit(format!("ld.param.u64 {pb}, [acc_partials{slot}];"));
        let pa = self.reg("%rd");
        self.emit(format!("mul.wide.u32 {pa}, {ctaid}, {};", partial_size(ty)));
        self.emit(format!("add.u64 {pa}, {pb}, {pa};"));
        self.store_word(".global", &pa, ty, &c.value)?;
        self.emit(format!("{}:", c.after));
        Ok(())
    }

    /// The first half of a block reduction: each warp combines its lanes with shuffles, the
    /// warps' results go through shared memory (a barrier), and the first warp combines them,
    /// so the order is fixed for a block size. The code that follows runs on thread 0 alone,
    /// until the caller emits the returned `after` label.
    fn warps_combine(&mut self, op: ReduceOp, ty: Scalar, v: &str, tid: &str) -> Result<WarpsCombined> {
        self.shared = true;
        let mut acc = v.to_string();
        for off in [16, 8, 4, 2, 1] {
            let other = self.shuffle_down(&acc, ty, off);
            acc = self.combine(op, ty, &acc, &other)?;
        }
        let (lane, warp) = (self.reg("%r"), self.reg("%r"));
        self.emit(format!("and.b32 {lane}, {tid}, 31;"));
        self.emit(format!("shr.u32 {warp}, {tid}, 5;"));
        let (base, at) = (self.reg("%rd"), self.reg("%rd"));
        self.emit(format!("mov.u64 {base}, acc_shared;"));
        self.emit(format!("mul.wide.u32 {at}, {warp}, 8;"));
        self.emit(format!("add.u64 {at}, {base}, {at};"));
        let (skip, after) = (self.label("lane0"), self.label("warp0"));
        let p = self.reg("%p");
        self.emit(format!("setp.ne.u32 {p}, {lane}, 0;"));
        self.emit(format!("@{p} bra {skip};"));
        self.store_word(".shared", &at, ty, &acc)?;
        self.emit(format!("{skip}:"));
        self.emit("bar.sync 0;");
        let q = self.reg("%p");
        self.emit(format!("setp.ne.u32 {q}, {warp}, 0;"));
        self.emit(format!("@{q} bra {after};"));
        // Lanes past the warps' count start from the identity.
        let warps = BLOCK_SIZE / 32;
        let id = self.identity(op, ty)?;
        let la = self.reg("%rd");
        self.emit(format!("mul.wide.u32 {la}, {lane}, 8;"));
        self.emit(format!("add.u64 {la}, {base}, {la};"));
        let inside = self.reg("%p");
        self.emit(format!("setp.lt.u32 {inside}, {lane}, {warps};"));
        let mut w = self.reg(repr(ty).class);
        self.emit(format!("mov{} {w}, {id};", repr(ty).bits));
        let load = self.label("ld");
        self.emit(format!("@!{inside} bra {load};"));
        let x = self.load_word(".shared", &la, ty);
        self.emit(format!("mov{} {w}, {x};", repr(ty).bits));
        self.emit(format!("{load}:"));
        let mut off = warps / 2;
        while off > 0 {
            let other = self.shuffle_down(&w, ty, off);
            w = self.combine(op, ty, &w, &other)?;
            off /= 2;
        }
        let z = self.reg("%p");
        self.emit(format!("setp.ne.u32 {z}, {lane}, 0;"));
        self.emit(format!("@{z} bra {after};"));
        Ok(WarpsCombined {
            value: w,
            base,
            after,
        })
    }

    /// `v` of lane `lane + off` of the warp (every lane takes part).
    fn shuffle_down(&mut self, v: &str, ty: Scalar, off: u32) -> String {
        self.shuffle(v, ty, off, "down")
    }

    /// `v` of another lane of the warp: `lane + off` (`down`) or `lane ^ off` (`bfly`).
    fn shuffle(&mut self, v: &str, ty: Scalar, off: u32, mode: &str) -> String {
        let r = repr(ty);
        match (ty, r.bits) {
            (Scalar::Bool, _) => {
                let (w, o, d) = (self.reg("%r"), self.reg("%r"), self.reg("%p"));
                self.emit(format!("selp.u32 {w}, 1, 0, {v};"));
                self.emit(format!("shfl.sync.{mode}.b32 {o}, {w}, {off}, 31, -1;"));
                self.emit(format!("setp.ne.u32 {d}, {o}, 0;"));
                d
            }
            (_, ".b64") => {
                let (bits, lo, hi) = (self.reg("%rd"), self.reg("%r"), self.reg("%r"));
                self.emit(format!("mov.b64 {bits}, {v};"));
                self.emit(format!("mov.b64 {{{lo}, {hi}}}, {bits};"));
                self.emit(format!("shfl.sync.{mode}.b32 {lo}, {lo}, {off}, 31, -1;"));
                self.emit(format!("shfl.sync.{mode}.b32 {hi}, {hi}, {off}, 31, -1;"));
                let d = self.reg(r.class);
                self.emit(format!("mov.b64 {bits}, {{{lo}, {hi}}};"));
                self.emit(format!("mov.b64 {d}, {bits};"));
                d
            }
            _ => {
                let d = self.reg(r.class);
                self.emit(format!("shfl.sync.{mode}.b32 {d}, {v}, {off}, 31, -1;"));
                d
            }
        }
    }

    /// Writes the block's partial of element `e` of an array reduction (of `len` elements)
    /// through a tree in shared memory.
    #[allow(clippy::too_many_arguments)]
    fn block_reduce_shared(
        &mut self,
        op: ReduceOp,
        ty: Scalar,
        v: &str,
        tid: &str,
        ctaid: &str,
        slot: usize,
        e: u32,
        len: u32,
    ) -> Result<()> {
        self.shared = true;
        let word = self.reg("%rd");
        let off = self.reg("%rd");
        self.emit(format!("mov.u64 {word}, acc_shared;"));
        self.emit(format!("mul.wide.u32 {off}, {tid}, 8;"));
        self.emit(format!("add.u64 {off}, {word}, {off};"));
        self.store_word(".shared", &off, ty, v)?;
        self.emit("bar.sync 0;");
        let mut s = BLOCK_SIZE / 2;
        while s > 0 {
            let skip = self.label("tree");
            let p = self.reg("%p");
            self.emit(format!("setp.ge.u32 {p}, {tid}, {s};"));
            self.emit(format!("@{p} bra {skip};"));
            let other = self.reg("%rd");
            self.emit(format!("add.u64 {other}, {off}, {};", s * 8));
            let (a, b) = (
                self.load_word(".shared", &off, ty),
                self.load_word(".shared", &other, ty),
            );
            let c = self.combine(op, ty, &a, &b)?;
            self.store_word(".shared", &off, ty, &c)?;
            self.emit(format!("{skip}:"));
            self.emit("bar.sync 0;");
            s /= 2;
        }
        let skip = self.label("partial");
        let p = self.reg("%p");
        self.emit(format!("setp.ne.u32 {p}, {tid}, 0;"));
        self.emit(format!("@{p} bra {skip};"));
        let v = self.load_word(".shared", &off, ty);
        let base = self.reg("%rd");
        self.emit(format!("ld.param.u64 {base}, [acc_partials{slot}];"));
        let at = self.reg("%rd");
        self.emit(format!(
            "mul.wide.u32 {at}, {ctaid}, {};",
            partial_size(ty) * len
        ));
        self.emit(format!("add.u64 {at}, {base}, {at};"));
        self.emit(format!("add.u64 {at}, {at}, {};", partial_size(ty) * e));
        self.store_word(".global", &at, ty, &v)?;
        self.emit(format!("{skip}:"));
        self.emit("bar.sync 0;");
        Ok(())
    }

    /// The loop variable of iteration `k` (a `u64` register): `start + k * step`.
    /// A loop nest run in order by one thread: one loop per level, outermost first (the trip
    /// count evaluated once, before its loop, as Rust does).
    fn sequential_loop(&mut self, levels: &[LoopLevel], body: &Block) -> Result<()> {
        let Some((lv, inner)) = levels.split_first() else {
            return self.block(body);
        };
        let trips = self.expr(lv.trips)?;
        let k = self.reg("%rd");
        self.emit(format!("mov.u64 {k}, 0;"));
        let (top, cont, end) = (
            self.label("for"),
            self.label("forcont"),
            self.label("forend"),
        );
        self.emit(format!("{top}:"));
        let p = self.reg("%p");
        self.emit(format!("setp.ge.u64 {p}, {k}, {trips};"));
        self.emit(format!("@{p} bra {end};"));
        self.set_loop_var(lv, &k)?;
        self.loops.push((cont.clone(), end.clone()));
        let r = self.sequential_loop(inner, body);
        self.loops.pop();
        r?;
        self.emit(format!("{cont}:"));
        self.emit(format!("add.u64 {k}, {k}, 1;"));
        self.emit(format!("bra {top};"));
        self.emit(format!("{end}:"));
        Ok(())
    }

    fn set_loop_var(&mut self, lv: &LoopLevel, k: &str) -> Result<()> {
        let ty = self.k.function.locals[lv.var as usize].ty;
        let (start, step) = (self.expr(lv.start)?, self.expr(lv.step)?);
        let k = self.convert(k, Scalar::U64, ty)?;
        let l = self.local(lv.var)?;
        let r = repr(ty);
        self.emit(format!("mul.lo{} {l}, {k}, {step};", r.ty));
        self.emit(format!("add{} {l}, {l}, {start};", r.ty));
        Ok(())
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
                let ty = self.k.function.locals[*local as usize].ty;
                let i = self.expr(*index)?;
                let v = self.expr(*value)?;
                let (ok, addr) = self.private_address(*local, &i);
                self.store_private(&addr, ty, &v, &format!("@{ok} "));
            }
            Stmt::Store {
                array,
                field,
                index,
                value,
            } => {
                let access = self.array(*array, *field)?;
                let elem = access.ty;
                let i = self.expr(*index)?;
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

    /// An atomic access of `array[index]` (3.3 section 2.12): native `atom` instructions where
    /// PTX has the operation for the type, a compare-and-swap loop otherwise.
    #[allow(clippy::too_many_arguments)]
    fn atomic(
        &mut self,
        (array, field): (ParamId, Option<FieldId>),
        index: Handle<Expr>,
        op: AtomicOp,
        value: Handle<Expr>,
        old: Option<LocalId>,
        new: Option<LocalId>,
    ) -> Result<()> {
        let access = self.array(array, field)?;
        let elem = access.ty;
        if elem.size() < 4 {
            return self.atomic_narrow((array, field), index, op, value, old, new);
        }
        let r = repr(elem);
        let i = self.expr(index)?;
        let (ok, addr) = self.checked_address(array, index, &i, access)?;
        let skip = self.label("atomic");
        if let Some(ok) = ok {
            self.emit(format!("@!{ok} bra {skip};"));
        }
        let set = |w: &mut Self, local: Option<LocalId>, v: &str| -> Result<()> {
            if let Some(l) = local {
                let reg = w.local(l)?;
                w.emit(format!("mov{} {reg}, {v};", r.bits));
            }
            Ok(())
        };
        match op {
            AtomicOp::Read => {
                let d = self.reg(r.class);
                self.emit(format!("ld.relaxed.gpu.global{} {d}, [{addr}];", r.ty));
                set(self, old, &d)?;
            }
            AtomicOp::Exchange => {
                let v = self.expr(value)?;
                let d = self.reg(r.class);
                self.emit(format!("atom.global.exch{} {d}, [{addr}], {v};", r.bits));
                set(self, old, &d)?;
                set(self, new, &v)?;
            }
            AtomicOp::Update(bop) => {
                let v = self.expr(value)?;
                // The block's copy in shared memory, where the array fits there.
                if let Some((_, fits)) = self
                    .privatized
                    .clone()
                    .filter(|(a, _)| *a == array && field.is_none())
                {
                    let global = self.label("global");
                    self.emit(format!("@!{fits} bra {global};"));
                    let at = self.reg("%rd");
                    self.emit(format!("mov.u64 {at}, acc_priv;"));
                    self.emit(format!("mad.lo.u64 {at}, {i}, 4, {at};"));
                    let d = self.reg(r.class);
                    self.emit(format!(
                        "atom.shared.{} {d}, [{at}], {v};",
                        private_atom(bop, elem)
                    ));
                    self.emit(format!("bra {skip};"));
                    self.emit(format!("{global}:"));
                }
                let int_ty = if r.bits == ".b64" { ".u64" } else { ".u32" };
                let native = match (bop, elem.is_float()) {
                    (BinaryOp::Add, true) => Some(format!("add{}", r.ty)),
                    (BinaryOp::Add, false) => Some(format!("add{int_ty}")),
                    (BinaryOp::BitAnd, false) => Some(format!("and{}", r.bits)),
                    (BinaryOp::BitOr, false) => Some(format!("or{}", r.bits)),
                    (BinaryOp::BitXor, false) => Some(format!("xor{}", r.bits)),
                    _ => None,
                };
                match native {
                    Some(instr) => {
                        let d = self.reg(r.class);
                        self.emit(format!("atom.global.{instr} {d}, [{addr}], {v};"));
                        set(self, old, &d)?;
                        if new.is_some() {
                            let n = self.binary(bop, elem, &d, &v)?;
                            set(self, new, &n)?;
                        }
                    }
                    None => {
                        self.cas_loop(&addr, elem, old, new, |w, cur| w.binary(bop, elem, cur, &v))?
                    }
                }
            }
            AtomicOp::Combine(l) => {
                self.cas_loop(&addr, elem, old, new, |w, cur| {
                    let reg = w.local(l)?;
                    w.emit(format!("mov{} {reg}, {cur};", r.bits));
                    w.expr(value)
                })?;
            }
        }
        self.emit(format!("{skip}:"));
        Ok(())
    }

    /// A compare-and-swap loop on the 4- or 8-byte element at `addr`: `combine` computes the
    /// new value from the current one, until no other thread came in between; the old and
    /// new values go to the locals given.
    fn cas_loop(
        &mut self,
        addr: &str,
        elem: Scalar,
        old: Option<LocalId>,
        new: Option<LocalId>,
        mut combine: impl FnMut(&mut Self, &str) -> Result<String>,
    ) -> Result<()> {
        let r = repr(elem);
        let int_ty = if r.bits == ".b64" { ".u64" } else { ".u32" };
        let bits_class = if r.class == "%rd" || r.class == "%fd" {
            "%rd"
        } else {
            "%r"
        };
        let top = self.label("cas");
        let cur = self.reg(r.class);
        self.emit(format!("ld.relaxed.gpu.global{} {cur}, [{addr}];", r.ty));
        self.emit(format!("{top}:"));
        let n = combine(self, &cur)?;
        let (expected, desired, seen) = (
            self.reg(bits_class),
            self.reg(bits_class),
            self.reg(bits_class),
        );
        self.emit(format!("mov{} {expected}, {cur};", r.bits));
        self.emit(format!("mov{} {desired}, {n};", r.bits));
        self.emit(format!(
            "atom.global.cas{} {seen}, [{addr}], {expected}, {desired};",
            r.bits
        ));
        let again = self.reg("%p");
        self.emit(format!("setp.ne{int_ty} {again}, {seen}, {expected};"));
        self.emit(format!("mov{} {cur}, {seen};", r.bits));
        self.emit(format!("@{again} bra {top};"));
        // `cur` was reloaded with what was there; on success that is the old value.
        for (local, v) in [(old, &cur), (new, &n)] {
            if let Some(l) = local {
                let reg = self.local(l)?;
                self.emit(format!("mov{} {reg}, {v};", r.bits));
            }
        }
        Ok(())
    }

    /// An atomic access of an 8- or 16-bit element (or a `bool`): a compare-and-swap loop on
    /// the aligned 32-bit word that holds it, changing only its bits.
    #[allow(clippy::too_many_arguments)]
    fn atomic_narrow(
        &mut self,
        (array, field): (ParamId, Option<FieldId>),
        index: Handle<Expr>,
        op: AtomicOp,
        value: Handle<Expr>,
        old: Option<LocalId>,
        new: Option<LocalId>,
    ) -> Result<()> {
        let access = self.array(array, field)?;
        let elem = access.ty;
        let i = self.expr(index)?;
        let (ok, addr) = self.checked_address(array, index, &i, access)?;
        let skip = self.label("atomic");
        if let Some(ok) = ok {
            self.emit(format!("@!{ok} bra {skip};"));
        }
        let bits = elem.size() * 8;
        // The element as a value register of its type, from its bits in a word.
        let unpack = |w: &mut Self, word: &str, shift: &str| -> String {
            let b = w.reg("%r");
            w.emit(format!("shr.b32 {b}, {word}, {shift};"));
            if elem == Scalar::Bool {
                let p = w.reg("%p");
                w.emit(format!("and.b32 {b}, {b}, 255;"));
                w.emit(format!("setp.ne.u32 {p}, {b}, 0;"));
                p
            } else {
                if elem.is_signed() {
                    w.emit(format!("cvt.s32.s{bits} {b}, {b};"));
                } else {
                    w.emit(format!("and.b32 {b}, {b}, {};", (1u64 << bits) - 1));
                }
                b
            }
        };
        if op == AtomicOp::Read {
            let v = self.load_element(&addr, elem, true);
            if let Some(l) = old {
                let reg = self.local(l)?;
                self.emit(format!("mov{} {reg}, {v};", repr(elem).bits));
            }
            self.emit(format!("{skip}:"));
            return Ok(());
        }
        let v = self.expr(value)?;
        let (word, shift, mask) = (self.reg("%rd"), self.reg("%r"), self.reg("%r"));
        self.emit(format!("and.b64 {word}, {addr}, -4;"));
        let low = self.reg("%r");
        self.emit(format!("cvt.u32.u64 {low}, {addr};"));
        self.emit(format!("and.b32 {low}, {low}, 3;"));
        self.emit(format!("shl.b32 {shift}, {low}, 3;"));
        self.emit(format!("mov.b32 {mask}, {};", (1u64 << bits) - 1));
        self.emit(format!("shl.b32 {mask}, {mask}, {shift};"));
        let keep = self.reg("%r");
        self.emit(format!("not.b32 {keep}, {mask};"));
        let cur = self.reg("%r");
        self.emit(format!("ld.relaxed.gpu.global.u32 {cur}, [{word}];"));
        let top = self.label("cas");
        self.emit(format!("{top}:"));
        let before = unpack(self, &cur, &shift);
        let after = match op {
            AtomicOp::Exchange => v.clone(),
            AtomicOp::Update(bop) => self.binary(bop, elem, &before, &v)?,
            AtomicOp::Combine(l) => {
                let reg = self.local(l)?;
                self.emit(format!("mov{} {reg}, {before};", repr(elem).bits));
                self.expr(value)?
            }
            AtomicOp::Read => unreachable!("handled above"),
        };
        let packed = self.reg("%r");
        if elem == Scalar::Bool {
            self.emit(format!("selp.u32 {packed}, 1, 0, {after};"));
        } else {
            self.emit(format!("mov.b32 {packed}, {after};"));
        }
        self.emit(format!("shl.b32 {packed}, {packed}, {shift};"));
        self.emit(format!("and.b32 {packed}, {packed}, {mask};"));
        let desired = self.reg("%r");
        self.emit(format!("and.b32 {desired}, {cur}, {keep};"));
        self.emit(format!("or.b32 {desired}, {desired}, {packed};"));
        let seen = self.reg("%r");
        self.emit(format!(
            "atom.global.cas.b32 {seen}, [{word}], {cur}, {desired};"
        ));
        let again = self.reg("%p");
        self.emit(format!("setp.ne.u32 {again}, {seen}, {cur};"));
        self.emit(format!("mov.b32 {cur}, {seen};"));
        self.emit(format!("@{again} bra {top};"));
        let bits_ty = repr(elem).bits;
        if let Some(l) = old {
            let reg = self.local(l)?;
            self.emit(format!("mov{bits_ty} {reg}, {before};"));
        }
        if let Some(l) = new {
            let reg = self.local(l)?;
            self.emit(format!("mov{bits_ty} {reg}, {after};"));
        }
        self.emit(format!("{skip}:"));
        Ok(())
    }

    /// Loads the element at `addr` (a relaxed atomic load with `atomic`).
    fn load_element(&mut self, addr: &str, elem: Scalar, atomic: bool) -> String {
        let sem = if atomic { ".relaxed.gpu" } else { "" };
        if elem == Scalar::Bool {
            let (w, d) = (self.reg("%r"), self.reg("%p"));
            self.emit(format!("ld{sem}.global.u8 {w}, [{addr}];"));
            self.emit(format!("setp.ne.u32 {d}, {w}, 0;"));
            return d;
        }
        let r = repr(elem);
        let d = self.reg(r.class);
        self.emit(format!("ld{sem}.global{} {d}, [{addr}];", mem_type(elem)));
        d
    }

    /// What an access of array `a` (and `field`) touches.
    fn array(&self, a: ParamId, field: Option<FieldId>) -> Result<Access> {
        self.k.access(a, field).ok_or_else(|| {
            unsupported(format!(
                "internal error: parameter {a} is not an array (of structs with field {field:?})"
            ))
        })
    }

    /// The predicate "index `i` is in bounds of `array`" (recording the first access that is
    /// not, for the host to report) and the element's address.
    fn checked_address(
        &mut self,
        array: ParamId,
        index: Handle<Expr>,
        i: &str,
        access: Access,
    ) -> Result<(Option<String>, String)> {
        // Unchecked kernels (`unchecked`, or launches proven in bounds on the host) access
        // without a predicate at all.
        let fast = self.k.unchecked
            || match (&self.fast, &self.k.function.exprs[index]) {
                (Some((var, arrays)), Expr::Local(l)) => l == var && arrays.contains(&array),
                _ => false,
            };
        let base = self.reg("%rd");
        self.emit(format!("ld.param.u64 {base}, [acc_a{array}];"));
        let ok = if fast {
            None
        } else {
            let n = self.reg("%rd");
            self.emit(format!("ld.param.u64 {n}, [acc_n{array}];"));
            Some(self.bounds_check(array, i, &n))
        };
        let addr = self.reg("%rd");
        self.emit(format!(
            "mad.lo.u64 {addr}, {i}, {}, {base};",
            access.stride
        ));
        if access.offset != 0 {
            self.emit(format!("add.u64 {addr}, {addr}, {};", access.offset));
        }
        Ok((ok, addr))
    }

    /// The predicate `i < n`; where it is false, the first such access of the launch is
    /// recorded in the status words (1, `what`, index, length) for the host to report.
    fn bounds_check(&mut self, what: u32, i: &str, n: &str) -> String {
        let ok = self.reg("%p");
        self.emit(format!("setp.lt.u64 {ok}, {i}, {n};"));
        if self.k.unchecked {
            self.emit(format!("setp.eq.u64 {ok}, {n}, {n};"));
            return ok;
        }
        // Predicated moves into the thread's registers, no branch: the accesses of a loop body
        // stay one basic block ptxas can schedule, and the common case costs three issue slots.
        let (w, x, y) = self.bad.clone();
        self.emit(format!("@!{ok} mov.u32 {w}, {what};"));
        self.emit(format!("@!{ok} mov.u64 {x}, {i};"));
        self.emit(format!("@!{ok} mov.u64 {y}, {n};"));
        ok
    }

    /// Records the thread's out-of-range access, if any, unless another thread recorded one
    /// first: status words 1, what, index, length.
    fn report_bad(&mut self) {
        if self.k.unchecked {
            return;
        }
        let (w, x, y) = self.bad.clone();
        let any = self.reg("%p");
        self.emit(format!("setp.ne.u32 {any}, {w}, -1;"));
        let (status, old) = (self.reg("%rd"), self.reg("%r"));
        self.emit(format!("ld.param.u64 {status}, [acc_status];"));
        self.emit(format!("mov.u32 {old}, 1;"));
        self.emit(format!(
            "@{any} atom.global.cas.b32 {old}, [{status}], 0, 1;"
        ));
        let first = self.reg("%p");
        self.emit(format!("setp.eq.u32 {first}, {old}, 0;"));
        let (a, b) = (self.reg("%r"), self.reg("%r"));
        self.emit(format!("cvt.u32.u64 {a}, {x};"));
        self.emit(format!("cvt.u32.u64 {b}, {y};"));
        self.emit(format!("@{first} st.global.u32 [{status}+4], {w};"));
        self.emit(format!("@{first} st.global.u32 [{status}+8], {a};"));
        self.emit(format!("@{first} st.global.u32 [{status}+12], {b};"));
    }

    fn store_global_if(&mut self, addr: &str, ty: Scalar, v: &str, pred: &str) -> Result<()> {
        if ty == Scalar::Bool {
            let w = self.reg("%r");
            self.emit(format!("selp.u32 {w}, 1, 0, {v};"));
            self.emit(format!("{pred}st.global.u8 [{addr}], {w};"));
        } else {
            self.emit(format!("{pred}st.global{} [{addr}], {v};", store_type(ty)));
        }
        Ok(())
    }

    /// Stores a value as a reduction word (`bool` as a `u32` 0 or 1) in `space` (`.shared` for
    /// the block's tree, `.global` for the block's partial).
    fn store_word(&mut self, space: &str, addr: &str, ty: Scalar, v: &str) -> Result<()> {
        if ty == Scalar::Bool {
            let w = self.reg("%r");
            self.emit(format!("selp.u32 {w}, 1, 0, {v};"));
            self.emit(format!("st{space}.u32 [{addr}], {w};"));
        } else {
            self.emit(format!("st{space}{} [{addr}], {v};", repr(ty).ty));
        }
        Ok(())
    }

    /// Loads a reduction word (`bool` from a `u32` 0 or 1) from `space`.
    fn load_word(&mut self, space: &str, addr: &str, ty: Scalar) -> String {
        if ty == Scalar::Bool {
            let (w, p) = (self.reg("%r"), self.reg("%p"));
            self.emit(format!("ld{space}.u32 {w}, [{addr}];"));
            self.emit(format!("setp.ne.u32 {p}, {w}, 0;"));
            return p;
        }
        let r = repr(ty);
        let d = self.reg(r.class);
        self.emit(format!("ld{space}{} {d}, [{addr}];", r.ty));
        d
    }

    /// The address of element `e` (a constant) of private array `l`.
    fn private_address_const(&mut self, l: LocalId, e: u32) -> String {
        let ty = self.k.function.locals[l as usize].ty;
        let a = self.reg("%rd");
        self.emit(format!("mov.u64 {a}, acc_pa{l};"));
        self.emit(format!("add.u64 {a}, {a}, {};", e * elem_size(ty)));
        a
    }

    /// The predicate "index `i` is in bounds of private array `l`" (recording the first access
    /// that is not) and the element's address.
    fn private_address(&mut self, l: LocalId, i: &str) -> (String, String) {
        let local = &self.k.function.locals[l as usize];
        let (ty, len) = (local.ty, local.len.unwrap_or(0));
        let n = self.reg("%rd");
        self.emit(format!("mov.u64 {n}, {len};"));
        let ok = self.bounds_check(PRIVATE_ARRAY_BIT | l, i, &n);
        let a = self.reg("%rd");
        self.emit(format!("mov.u64 {a}, acc_pa{l};"));
        self.emit(format!("mad.lo.u64 {a}, {i}, {}, {a};", elem_size(ty)));
        (ok, a)
    }

    fn store_private(&mut self, addr: &str, ty: Scalar, v: &str, pred: &str) {
        if ty == Scalar::Bool {
            let w = self.reg("%r");
            self.emit(format!("selp.u32 {w}, 1, 0, {v};"));
            self.emit(format!("{pred}st.local.u8 [{addr}], {w};"));
        } else {
            self.emit(format!("{pred}st.local{} [{addr}], {v};", store_type(ty)));
        }
    }

    fn load_private(&mut self, addr: &str, ty: Scalar) -> String {
        self.load_private_if(addr, ty, None)
    }

    /// Loads an element of a private array (zero where `pred` is false).
    fn load_private_if(&mut self, addr: &str, ty: Scalar, pred: Option<&str>) -> String {
        let pad = pred.map(|p| format!("@{p} ")).unwrap_or_default();
        if ty == Scalar::Bool {
            let (w, d) = (self.reg("%r"), self.reg("%p"));
            self.emit(format!("mov.u32 {w}, 0;"));
            self.emit(format!("{pad}ld.local.u8 {w}, [{addr}];"));
            self.emit(format!("setp.ne.u32 {d}, {w}, 0;"));
            return d;
        }
        let r = repr(ty);
        let d = self.reg(r.class);
        self.emit(format!("mov{} {d}, 0;", r.bits));
        self.emit(format!("{pad}ld.local{} {d}, [{addr}];", mem_type(ty)));
        d
    }

    fn identity(&mut self, op: ReduceOp, t: Scalar) -> Result<String> {
        let lit = match (op, t) {
            (_, Scalar::Bool) => Literal::Bool(matches!(
                op,
                ReduceOp::And | ReduceOp::BitAnd | ReduceOp::Mul | ReduceOp::Min
            )),
            (ReduceOp::Add | ReduceOp::BitOr | ReduceOp::BitXor | ReduceOp::Or, t)
                if t.is_float() =>
            {
                Literal::Float(t, 0.0)
            }
            (ReduceOp::Add | ReduceOp::BitOr | ReduceOp::BitXor | ReduceOp::Or, t) => {
                Literal::Int(t, 0)
            }
            (ReduceOp::Mul, t) if t.is_float() => Literal::Float(t, 1.0),
            (ReduceOp::Mul, t) => Literal::Int(t, 1),
            (ReduceOp::BitAnd | ReduceOp::And, t) => Literal::Int(t, -1),
            (ReduceOp::Max, t) if t.is_float() => Literal::Float(t, f64::NEG_INFINITY),
            (ReduceOp::Min, t) if t.is_float() => Literal::Float(t, f64::INFINITY),
            (ReduceOp::Max, t) => Literal::Int(
                t,
                if t.is_signed() {
                    -(1i128 << (t.size() * 8 - 1))
                } else {
                    0
                },
            ),
            (ReduceOp::Min, t) => Literal::Int(
                t,
                if t.is_signed() {
                    (1i128 << (t.size() * 8 - 1)) - 1
                } else {
                    (1i128 << (t.size() * 8)) - 1
                },
            ),
        };
        self.literal(lit)
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

    fn combine(&mut self, op: ReduceOp, t: Scalar, a: &str, b: &str) -> Result<String> {
        let bop = match op {
            ReduceOp::Add => BinaryOp::Add,
            ReduceOp::Mul => BinaryOp::Mul,
            ReduceOp::BitAnd => BinaryOp::BitAnd,
            ReduceOp::BitOr => BinaryOp::BitOr,
            ReduceOp::BitXor => BinaryOp::BitXor,
            ReduceOp::And => BinaryOp::And,
            ReduceOp::Or => BinaryOp::Or,
            ReduceOp::Max => return self.minmax("max", t, a, b),
            ReduceOp::Min => return self.minmax("min", t, a, b),
        };
        self.binary(bop, t, a, b)
    }

    fn minmax(&mut self, f: &str, t: Scalar, a: &str, b: &str) -> Result<String> {
        let r = repr(t);
        let d = self.reg(r.class);
        if t == Scalar::Bool {
            let op = if f == "max" { "or" } else { "and" };
            self.emit(format!("{op}.pred {d}, {a}, {b};"));
        } else {
            // max/min.f* return the other operand when one is NaN, as f64::max does.
            self.emit(format!("{f}{} {d}, {a}, {b};", r.ty));
        }
        Ok(d)
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
                let ty = self.k.function.locals[local as usize].ty;
                let i = self.expr(index)?;
                let (ok, addr) = self.private_address(local, &i);
                self.load_private_if(&addr, ty, Some(&ok))
            }
            Expr::Load {
                array,
                field,
                index,
            } => {
                let access = self.array(array, field)?;
                let (elem, writable) = (access.ty, access.writable);
                // Arrays the kernel does not write go through the read-only data cache: in
                // Rust no other parameter can alias them mutably.
                let space = if writable { ".global" } else { ".global.nc" };
                let i = self.expr(index)?;
                let (ok, addr) = self.checked_address(array, index, &i, access)?;
                // Out of range: the access is recorded and reads zero.
                let pad = ok.map(|ok| format!("@{ok} ")).unwrap_or_default();
                if elem == Scalar::Bool {
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
                }
            }
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
            Expr::Binary(op, a, b) => {
                let operand = self.types[a.index()];
                let (x, y) = (self.expr(a)?, self.expr(b)?);
                self.binary(op, operand, &x, &y)?
            }
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

mod math;

#[cfg(test)]
mod tests;

/// Whether the kernel's gang iterations take a warp each rather than a block
/// (`vector_length(n)` with n at most 32).
fn warp_groups(k: &Kernel) -> bool {
    k.vector_length.is_some_and(|v| v <= 32)
}

/// Elements of a block's copy of a privatized array (4 bytes each: 16 KiB of shared memory).
const PRIVATE_ELEMENTS: u32 = 4096;

/// The `atom` operation and type of a privatized update.
fn private_atom(op: BinaryOp, elem: Scalar) -> &'static str {
    match (op, elem) {
        (BinaryOp::Add, Scalar::F32) => "add.f32",
        (BinaryOp::Add, _) => "add.u32",
        (BinaryOp::BitOr, _) => "or.b32",
        _ => "xor.b32",
    }
}

/// What [`Writer::warps_combine`] leaves: the block's value (in thread 0), the shared memory
/// it went through, and the label where the other threads rejoin.
struct WarpsCombined {
    value: String,
    base: String,
    after: String,
}
