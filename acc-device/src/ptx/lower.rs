// Fields named after what they hold carry no doc of their own.
#![allow(missing_docs)]

use std::fmt::Write;

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
    /// Entry points, launched in this order, each over the grid.
    pub entry_points: Vec<String>,
    /// For each parameter of the kernel, in order: an array is two `.u64` parameters (the
    /// address of its first element and its length), a scalar one parameter of its type
    /// (`bool` as `.u32`). Then the status words' address, then one address of per-block
    /// partials for each of `reductions`, in order.
    pub reductions: Vec<ReductionSlot>,
}

/// A kernel reduction: which entry point writes its per-block partials.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReductionSlot {
    pub op: ReduceOp,
    pub ty: Scalar,
    /// The scalar parameter its result is combined into.
    pub into: ParamId,
    /// The entry point (index into [`Lowered::entry_points`]).
    pub entry: usize,
}

fn unsupported(what: impl Into<String>) -> Error {
    Error::Unsupported { what: format!("on nvidia: {}", what.into()) }
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
    if target.sm < 70 {
        return Err(unsupported(format!("compute capability {}.{} (7.0 or newer is needed)", target.sm / 10, target.sm % 10)));
    }
    let types = expr_types(kernel).map_err(|e| Error::Unsupported { what: format!("invalid kernel IR: {e}") })?;
    let mut w = Writer { k: kernel, types, regs: Default::default(), labels: 0, loops: Vec::new(), body: String::new() };
    w.module(target)
}

struct Writer<'a> {
    k: &'a Kernel,
    types: Vec<Scalar>,
    /// Registers used so far, per class.
    regs: std::collections::BTreeMap<&'static str, u32>,
    labels: u32,
    /// The enclosing loops' continue and break labels.
    loops: Vec<(String, String)>,
    body: String,
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
        let version = if target.sm >= 90 { "7.8" } else if target.sm >= 80 { "7.0" } else { "6.4" };
        let mut ptx = format!("// {}\n.version {version}\n.target sm_{}\n.address_size 64\n\n", k.name, target.sm);
        // Only parallel loops, with scalar assignments before them that every thread runs.
        let mut prelude = Vec::new();
        let mut loops = Vec::new();
        for s in &k.function.body {
            match s {
                Stmt::Assign { .. } if loops.is_empty() => prelude.push(s),
                Stmt::For { schedule: Some(_), .. } => loops.push(s),
                _ => return Err(unsupported("code between or after the parallel loops of a region (not yet)")),
            }
        }
        if loops.is_empty() {
            return Err(unsupported("a region without a parallel loop (not yet)"));
        }
        let mut entry_points = Vec::new();
        let mut reductions = Vec::new();
        let mut slots_per_loop = Vec::new();
        for (n, s) in loops.iter().enumerate() {
            let Stmt::For { reductions: reds, .. } = s else { continue };
            let mut slots = Vec::new();
            for r in reds {
                let into = k
                    .reductions
                    .iter()
                    .find(|(kr, _)| kr.local == r.local)
                    .map(|(_, p)| *p)
                    .ok_or_else(|| unsupported("a loop reduction of a variable local to the region (not yet)"))?;
                let ty = k.function.locals[r.local as usize].ty;
                if k.function.locals[r.local as usize].len.is_some() {
                    return Err(unsupported("an array reduction (not yet)"));
                }
                slots.push(reductions.len());
                reductions.push(ReductionSlot { op: r.op, ty, into, entry: n });
            }
            slots_per_loop.push(slots);
        }
        let params = self.param_list(reductions.len());
        for (n, s) in loops.iter().enumerate() {
            let name = format!("acc_main_{n}");
            self.body.clear();
            self.regs.clear();
            self.entry(&prelude, s, &slots_per_loop[n])?;
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
            let shared = if slots_per_loop[n].is_empty() {
                String::new()
            } else {
                format!("    .shared .align 8 .b8 acc_shared[{}];\n", BLOCK_SIZE * 8)
            };
            let _ = write!(ptx, ".visible .entry {name}(\n{params}\n)\n.maxntid {BLOCK_SIZE}, 1, 1\n{{\n{decls}{shared}{}}}\n\n", self.body);
            entry_points.push(name);
        }
        Ok(Lowered { ptx, entry_points, reductions })
    }

    fn param_list(&self, reductions: usize) -> String {
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
        for r in 0..reductions {
            ps.push(format!("    .param .u64 acc_partials{r}"));
        }
        ps.join(",\n")
    }

    /// Local `l`'s register (declared once per entry, as `%l<id>` of its class).
    fn local(&self, l: LocalId) -> Result<String> {
        let local = &self.k.function.locals[l as usize];
        if local.len.is_some() {
            return Err(unsupported(format!("the private array `{}` (not yet)", local.name)));
        }
        Ok(format!("{}_l{l}", repr(local.ty).class))
    }

    fn entry(&mut self, prelude: &[&Stmt], s: &Stmt, slots: &[usize]) -> Result<()> {
        let Stmt::For { levels, reductions, body, .. } = s else { return Err(unsupported("internal error: an entry without its loop")) };
        // Every scalar local is a register of its own.
        for (i, l) in self.k.function.locals.iter().enumerate() {
            if l.len.is_none() {
                let r = repr(l.ty);
                let decl_ty = if r.class == "%p" { ".pred" } else { r.bits };
                self.emit(format!(".reg {decl_ty} {}_l{i};", r.class));
            }
        }
        for st in prelude {
            self.stmt(st)?;
        }
        // The grid: thread `gid` of `stride` takes iterations gid, gid + stride, ...
        let (tid, ctaid, ntid, nctaid) = (self.reg("%r"), self.reg("%r"), self.reg("%r"), self.reg("%r"));
        self.emit(format!("mov.u32 {tid}, %tid.x;"));
        self.emit(format!("mov.u32 {ctaid}, %ctaid.x;"));
        self.emit(format!("mov.u32 {ntid}, %ntid.x;"));
        self.emit(format!("mov.u32 {nctaid}, %nctaid.x;"));
        let (k, stride) = (self.reg("%rd"), self.reg("%rd"));
        self.emit(format!("mul.wide.u32 {k}, {ctaid}, {ntid};"));
        self.emit(format!("cvt.u64.u32 %rd_tmp, {tid};").replace("%rd_tmp", &stride));
        self.emit(format!("add.u64 {k}, {k}, {stride};"));
        self.emit(format!("mul.wide.u32 {stride}, {nctaid}, {ntid};"));
        let mut trips = Vec::new();
        for lv in levels {
            trips.push(self.expr(lv.trips)?);
        }
        let total = self.reg("%rd");
        self.emit(format!("mov.u64 {total}, 1;"));
        for t in &trips {
            self.emit(format!("mul.lo.u64 {total}, {total}, {t};"));
        }
        for r in reductions {
            let ty = self.k.function.locals[r.local as usize].ty;
            let id = self.identity(r.op, ty)?;
            let l = self.local(r.local)?;
            self.emit(format!("mov{} {l}, {id};", if ty == Scalar::Bool { ".pred" } else { repr(ty).bits }));
        }
        let (top, cont, end) = (self.label("grid"), self.label("next"), self.label("done"));
        let p = self.reg("%p");
        self.emit(format!("{top}:"));
        self.emit(format!("setp.ge.u64 {p}, {k}, {total};"));
        self.emit(format!("@{p} bra {end};"));
        // Split the flat index over the levels, innermost fastest.
        let rest = self.reg("%rd");
        self.emit(format!("mov.u64 {rest}, {k};"));
        for (i, lv) in levels.iter().enumerate().rev() {
            let idx = if i == 0 {
                rest.clone()
            } else {
                let q = self.reg("%rd");
                self.emit(format!("rem.u64 {q}, {rest}, {};", trips[i]));
                self.emit(format!("div.u64 {rest}, {rest}, {};", trips[i]));
                q
            };
            self.set_loop_var(lv, &idx)?;
        }
        self.loops.push((cont.clone(), end.clone()));
        self.block(body)?;
        self.loops.pop();
        self.emit(format!("{cont}:"));
        self.emit(format!("add.u64 {k}, {k}, {stride};"));
        self.emit(format!("bra {top};"));
        self.emit(format!("{end}:"));
        // Each block combines its threads' partial results in shared memory; thread 0
        // writes the block's partial.
        for (red, &slot) in reductions.iter().zip(slots) {
            let ty = self.k.function.locals[red.local as usize].ty;
            let l = self.local(red.local)?;
            let word = self.reg("%rd");
            let off = self.reg("%rd");
            self.emit(format!("mov.u64 {word}, acc_shared;"));
            self.emit(format!("mul.wide.u32 {off}, {tid}, 8;"));
            self.emit(format!("add.u64 {off}, {word}, {off};"));
            self.store_word(".shared", &off, ty, &l)?;
            self.emit("bar.sync 0;");
            let mut s = BLOCK_SIZE / 2;
            while s > 0 {
                let skip = self.label("tree");
                let p = self.reg("%p");
                self.emit(format!("setp.ge.u32 {p}, {tid}, {s};"));
                self.emit(format!("@{p} bra {skip};"));
                let other = self.reg("%rd");
                self.emit(format!("add.u64 {other}, {off}, {};", s * 8));
                let (a, b) = (self.load_shared(&off, ty)?, self.load_shared(&other, ty)?);
                let c = self.combine(red.op, ty, &a, &b)?;
                self.store_word(".shared", &off, ty, &c)?;
                self.emit(format!("{skip}:"));
                self.emit("bar.sync 0;");
                s /= 2;
            }
            let skip = self.label("partial");
            let p = self.reg("%p");
            self.emit(format!("setp.ne.u32 {p}, {tid}, 0;"));
            self.emit(format!("@{p} bra {skip};"));
            let v = self.load_shared(&off, ty)?;
            let base = self.reg("%rd");
            self.emit(format!("ld.param.u64 {base}, [acc_partials{slot}];"));
            let at = self.reg("%rd");
            self.emit(format!("mul.wide.u32 {at}, {ctaid}, {};", partial_size(ty)));
            self.emit(format!("add.u64 {at}, {base}, {at};"));
            self.store_word(".global", &at, ty, &v)?;
            self.emit(format!("{skip}:"));
        }
        self.emit("ret;");
        Ok(())
    }

    /// The loop variable of iteration `k` (a `u64` register): `start + k * step`.
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
                self.emit(format!("mov{} {l}, {v};", if ty == Scalar::Bool { ".pred" } else { repr(ty).bits }));
            }
            Stmt::AssignElem { .. } => return Err(unsupported("private arrays (not yet)")),
            Stmt::Store { array, index, value } => {
                let (elem, _) = self.array(*array)?;
                let i = self.expr(*index)?;
                let v = self.expr(*value)?;
                let (ok, addr) = self.checked_address(*array, &i, elem)?;
                let pad = format!("@{ok} ");
                self.store_global_if(&addr, elem, &v, &pad)?;
            }
            Stmt::If { cond, accept, reject } => {
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
                // Inside a parallel loop every loop runs sequentially in its thread.
                let [lv] = levels.as_slice() else { return Err(unsupported("a collapsed loop nested inside another loop")) };
                let trips = self.expr(lv.trips)?;
                let k = self.reg("%rd");
                self.emit(format!("mov.u64 {k}, 0;"));
                let (top, cont, end) = (self.label("for"), self.label("forcont"), self.label("forend"));
                self.emit(format!("{top}:"));
                let p = self.reg("%p");
                self.emit(format!("setp.ge.u64 {p}, {k}, {trips};"));
                self.emit(format!("@{p} bra {end};"));
                self.set_loop_var(lv, &k)?;
                self.loops.push((cont.clone(), end.clone()));
                self.block(body)?;
                self.loops.pop();
                self.emit(format!("{cont}:"));
                self.emit(format!("add.u64 {k}, {k}, 1;"));
                self.emit(format!("bra {top};"));
                self.emit(format!("{end}:"));
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
                let (_, end) = self.loops.last().cloned().ok_or_else(|| unsupported("`break` outside a loop"))?;
                self.emit(format!("bra {end};"));
            }
            Stmt::Continue => {
                let (cont, _) = self.loops.last().cloned().ok_or_else(|| unsupported("`continue` outside a loop"))?;
                self.emit(format!("bra {cont};"));
            }
            Stmt::Atomic { array, index, op, value, old, new } => self.atomic(*array, *index, *op, *value, *old, *new)?,
        }
        Ok(())
    }

    /// An atomic access of `array[index]` (3.3 section 2.12): native `atom` instructions where
    /// PTX has the operation for the type, a compare-and-swap loop otherwise.
    #[allow(clippy::too_many_arguments)]
    fn atomic(&mut self, array: ParamId, index: Handle<Expr>, op: AtomicOp, value: Handle<Expr>, old: Option<LocalId>, new: Option<LocalId>) -> Result<()> {
        let (elem, _) = self.array(array)?;
        if elem.size() < 4 || elem == Scalar::Bool {
            return Err(unsupported(format!("atomics on {elem} (not yet)")));
        }
        let r = repr(elem);
        let i = self.expr(index)?;
        let (ok, addr) = self.checked_address(array, &i, elem)?;
        let skip = self.label("atomic");
        self.emit(format!("@!{ok} bra {skip};"));
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
                        // Compare-and-swap on the element's bits until no other thread came
                        // in between.
                        let bits_class = if r.class == "%rd" || r.class == "%fd" { "%rd" } else { "%r" };
                        let top = self.label("cas");
                        let cur = self.reg(r.class);
                        self.emit(format!("ld.relaxed.gpu.global{} {cur}, [{addr}];", r.ty));
                        self.emit(format!("{top}:"));
                        let n = self.binary(bop, elem, &cur, &v)?;
                        let (expected, desired, seen) = (self.reg(bits_class), self.reg(bits_class), self.reg(bits_class));
                        self.emit(format!("mov{} {expected}, {cur};", r.bits));
                        self.emit(format!("mov{} {desired}, {n};", r.bits));
                        self.emit(format!("atom.global.cas{} {seen}, [{addr}], {expected}, {desired};", r.bits));
                        let again = self.reg("%p");
                        self.emit(format!("setp.ne{int_ty} {again}, {seen}, {expected};"));
                        self.emit(format!("mov{} {cur}, {seen};", r.bits));
                        self.emit(format!("@{again} bra {top};"));
                        // `cur` was reloaded with what was there; on success that is the old value.
                        set(self, old, &cur)?;
                        set(self, new, &n)?;
                    }
                }
            }
        }
        self.emit(format!("{skip}:"));
        Ok(())
    }

    fn array(&self, a: ParamId) -> Result<(Scalar, bool)> {
        match self.k.params.get(a as usize).map(|p| &p.kind) {
            Some(ParamKind::Array { elem, writable }) => Ok((*elem, *writable)),
            _ => Err(unsupported(format!("internal error: parameter {a} is not an array"))),
        }
    }

    /// The predicate "index `i` is in bounds of `array`" (recording the first access that is
    /// not, for the host to report) and the element's address.
    fn checked_address(&mut self, array: ParamId, i: &str, elem: Scalar) -> Result<(String, String)> {
        let (n, base) = (self.reg("%rd"), self.reg("%rd"));
        self.emit(format!("ld.param.u64 {n}, [acc_n{array}];"));
        self.emit(format!("ld.param.u64 {base}, [acc_a{array}];"));
        let ok = self.reg("%p");
        self.emit(format!("setp.lt.u64 {ok}, {i}, {n};"));
        if !self.k.unchecked {
            let done = self.label("inbounds");
            self.emit(format!("@{ok} bra {done};"));
            let (status, old) = (self.reg("%rd"), self.reg("%r"));
            self.emit(format!("ld.param.u64 {status}, [acc_status];"));
            self.emit(format!("atom.global.cas.b32 {old}, [{status}], 0, 1;"));
            let first = self.reg("%p");
            self.emit(format!("setp.ne.u32 {first}, {old}, 0;"));
            self.emit(format!("@{first} bra {done};"));
            let w = self.reg("%r");
            self.emit(format!("mov.u32 {w}, {array};"));
            self.emit(format!("st.global.u32 [{status}+4], {w};"));
            self.emit(format!("cvt.u32.u64 {w}, {i};"));
            self.emit(format!("st.global.u32 [{status}+8], {w};"));
            self.emit(format!("cvt.u32.u64 {w}, {n};"));
            self.emit(format!("st.global.u32 [{status}+12], {w};"));
            self.emit(format!("{done}:"));
        } else {
            self.emit(format!("setp.eq.u64 {ok}, {n}, {n};"));
        }
        let addr = self.reg("%rd");
        self.emit(format!("mad.lo.u64 {addr}, {i}, {}, {base};", elem.size()));
        Ok((ok, addr))
    }

    fn store_global_if(&mut self, addr: &str, ty: Scalar, v: &str, pred: &str) -> Result<()> {
        if ty == Scalar::Bool {
            let w = self.reg("%r");
            self.emit(format!("selp.u32 {w}, 1, 0, {v};"));
            self.emit(format!("{pred}st.global.u8 [{addr}], {w};"));
        } else {
            let m = mem_type(ty);
            let m = if matches!(m, ".u8" | ".s8" | ".u16" | ".s16") { m.replace('s', "u") } else { m.to_string() };
            self.emit(format!("{pred}st.global{m} [{addr}], {v};"));
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

    fn load_shared(&mut self, addr: &str, ty: Scalar) -> Result<String> {
        if ty == Scalar::Bool {
            let (w, p) = (self.reg("%r"), self.reg("%p"));
            self.emit(format!("ld.shared.u32 {w}, [{addr}];"));
            self.emit(format!("setp.ne.u32 {p}, {w}, 0;"));
            return Ok(p);
        }
        let r = repr(ty);
        let d = self.reg(r.class);
        self.emit(format!("ld.shared{} {d}, [{addr}];", r.ty));
        Ok(d)
    }

    fn identity(&mut self, op: ReduceOp, t: Scalar) -> Result<String> {
        let lit = match (op, t) {
            (_, Scalar::Bool) => Literal::Bool(matches!(op, ReduceOp::And | ReduceOp::BitAnd | ReduceOp::Mul | ReduceOp::Min)),
            (ReduceOp::Add | ReduceOp::BitOr | ReduceOp::BitXor | ReduceOp::Or, t) if t.is_float() => Literal::Float(t, 0.0),
            (ReduceOp::Add | ReduceOp::BitOr | ReduceOp::BitXor | ReduceOp::Or, t) => Literal::Int(t, 0),
            (ReduceOp::Mul, t) if t.is_float() => Literal::Float(t, 1.0),
            (ReduceOp::Mul, t) => Literal::Int(t, 1),
            (ReduceOp::BitAnd | ReduceOp::And, t) => Literal::Int(t, -1),
            (ReduceOp::Max, t) if t.is_float() => Literal::Float(t, f64::NEG_INFINITY),
            (ReduceOp::Min, t) if t.is_float() => Literal::Float(t, f64::INFINITY),
            (ReduceOp::Max, t) => Literal::Int(t, if t.is_signed() { -(1i128 << (t.size() * 8 - 1)) } else { 0 }),
            (ReduceOp::Min, t) => Literal::Int(t, if t.is_signed() { (1i128 << (t.size() * 8 - 1)) - 1 } else { (1i128 << (t.size() * 8)) - 1 }),
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
                let bits = if r.class == "%rd" { (v as u64) as u128 } else { (v as u32) as u128 };
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
                let cmp = if t.is_float() && op == BinaryOp::Ne { "neu" } else { cmp };
                self.emit(format!("setp.{cmp}{} {p}, {a}, {b};", r.ty));
            }
            return Ok(p);
        }
        let d = self.reg(r.class);
        let line = match (op, t) {
            (BinaryOp::And | BinaryOp::BitAnd, Scalar::Bool) => format!("and.pred {d}, {a}, {b};"),
            (BinaryOp::Or | BinaryOp::BitOr, Scalar::Bool) => format!("or.pred {d}, {a}, {b};"),
            (BinaryOp::BitXor, Scalar::Bool) => format!("xor.pred {d}, {a}, {b};"),
            (_, Scalar::Bool) => return Err(unsupported(format!("{op:?} on bool"))),
            (BinaryOp::Add, _) => format!("add{} {d}, {a}, {b};", r.ty),
            (BinaryOp::Sub, _) => format!("sub{} {d}, {a}, {b};", r.ty),
            (BinaryOp::Mul, t) if t.is_float() => format!("mul{} {d}, {a}, {b};", r.ty),
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
        if matches!(op, BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Shl | BinaryOp::Div) {
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
                (if to == Scalar::F32 { "0f3F800000" } else { "0d3FF0000000000000" }, if to == Scalar::F32 { "0f00000000" } else { "0d0000000000000000" })
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
            (true, false) => format!("cvt.rzi{}{} {d}, {x};", if to.size() < 4 { narrow_cvt(to) } else { rt.ty }, rf.ty),
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
                    _ => return Err(unsupported(format!("internal error: parameter {p} is not a scalar"))),
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
            Expr::LocalElem { .. } => return Err(unsupported("private arrays (not yet)")),
            Expr::Load { array, index } => {
                let (elem, _) = self.array(array)?;
                let i = self.expr(index)?;
                let (ok, addr) = self.checked_address(array, &i, elem)?;
                // Out of range: the access is recorded and reads zero.
                if elem == Scalar::Bool {
                    let (w, d) = (self.reg("%r"), self.reg("%p"));
                    self.emit(format!("mov.u32 {w}, 0;"));
                    self.emit(format!("@{ok} ld.global.u8 {w}, [{addr}];"));
                    self.emit(format!("setp.ne.u32 {d}, {w}, 0;"));
                    d
                } else {
                    let r = repr(elem);
                    let d = self.reg(r.class);
                    self.emit(format!("mov{} {d}, 0;", r.bits));
                    self.emit(format!("@{ok} ld.global{} {d}, [{addr}];", mem_type(elem)));
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
                        let neg_ty = if ty.is_float() || ty.is_signed() { r.ty.to_string() } else { r.ty.replace('u', "s") };
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
            Expr::Select { cond, accept, reject } => {
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

    fn math(&mut self, f: MathFn, t: Scalar, x: &[String]) -> Result<String> {
        let r = repr(t);
        let d = self.reg(r.class);
        let line = match (f, x) {
            (MathFn::Abs, [a]) if t.is_float() || t.is_signed() => format!("abs{} {d}, {a};", r.ty),
            (MathFn::Abs, [a]) => format!("mov{} {d}, {a};", r.bits),
            (MathFn::Min, [a, b]) => return self.minmax("min", t, a, b),
            (MathFn::Max, [a, b]) => return self.minmax("max", t, a, b),
            (MathFn::Clamp, [a, lo, hi]) => {
                let m = self.minmax("max", t, a, lo)?;
                return self.minmax("min", t, &m, hi);
            }
            (MathFn::Sqrt, [a]) if t.is_float() => format!("sqrt.rn{} {d}, {a};", r.ty),
            (MathFn::Floor, [a]) if t.is_float() => format!("cvt.rmi{}{} {d}, {a};", r.ty, r.ty),
            (MathFn::Ceil, [a]) if t.is_float() => format!("cvt.rpi{}{} {d}, {a};", r.ty, r.ty),
            (MathFn::Trunc, [a]) if t.is_float() => format!("cvt.rzi{}{} {d}, {a};", r.ty, r.ty),
            (MathFn::MulAdd, [a, b, c]) if t.is_float() => format!("fma.rn{} {d}, {a}, {b}, {c};", r.ty),
            _ => return Err(unsupported(format!("the math function {f:?} on {t} (not yet)"))),
        };
        self.emit(line);
        Ok(d)
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

/// Bytes of one per-block partial (`bool` as a `u32`).
pub fn partial_size(t: Scalar) -> u32 {
    match t {
        Scalar::Bool => 4,
        t => t.size().max(4),
    }
}

#[cfg(test)]
mod tests;
