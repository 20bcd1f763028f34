// Fields named after what they hold (offsets, entry points) carry no doc of their own.
#![allow(missing_docs)]

use std::fmt::Write;

pub use acc_core::ir::launch::ReductionSlot;
use acc_core::ir::validate::expr_types;
use acc_core::ir::*;
use acc_core::{Error, Result};

/// Invocations per workgroup (along x).
pub const WORKGROUP_SIZE: u32 = 256;

/// What the adapter can do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Target {
    /// `f64` in shaders (naga `FLOAT64`).
    pub f64: bool,
    /// `i64`/`u64` in shaders (naga `SHADER_INT64`).
    pub int64: bool,
    /// Atomics on 64-bit integers (wgpu `SHADER_INT64_ATOMIC_ALL_OPS`); `f64` atomics are
    /// compare-exchange loops on their bits.
    pub int64_atomics: bool,
    /// Where the driver ends loops early: Mesa's llvmpipe (under lavapipe) stops the loops of
    /// an invocation after 65,535 iterations in all. Sequential loops then check that they ran
    /// to their end, and a loop cut short fails the launch with an error saying so.
    pub loop_limit: Option<u32>,
    /// Order 64-bit integers (`<`, `<=`, `>`, `>=`, `min`, `max`, `clamp`) on their 32-bit
    /// halves rather than with the driver's 64-bit comparison: NVIDIA's Vulkan driver
    /// (580.159 on the H200, 2026) miscompiled `u64` comparisons in some kernels, most often
    /// one of a sum or difference with its operand (`a + b < a`), and the values selected by
    /// them came out with a wrong high word.
    pub int64_compare_by_halves: bool,
}

impl Target {
    /// Whether `usize`/`isize` are held at the host's 64 bits (`u64`/`i64`, where shaders have
    /// 64-bit integers). Otherwise they are 32-bit words there, and values beyond 32 bits are
    /// refused with an error naming them.
    pub fn wide_usize(self) -> bool {
        self.int64 && usize::BITS == 64
    }

    /// Bytes a `usize` takes in the device's buffers.
    pub fn index_bytes(self) -> usize {
        if self.wide_usize() {
            8
        } else {
            4
        }
    }
}

/// The scalar type a value of type `t` has on the device: `usize`/`isize` become the 64- or
/// 32-bit integers of [`Target::wide_usize`], the others stay.
/// The WGSL name of a 64-bit integer type, as the compare helpers' names end.
fn int64_name(t: Scalar) -> &'static str {
    if t.is_signed() {
        "i64"
    } else {
        "u64"
    }
}

fn device_scalar(t: Scalar, target: Target) -> Scalar {
    match t {
        Scalar::USize if target.wide_usize() => Scalar::U64,
        Scalar::ISize if target.wide_usize() => Scalar::I64,
        Scalar::USize => Scalar::U32,
        Scalar::ISize => Scalar::I32,
        other => other,
    }
}

/// What a binding of the lowered module holds (all in bind group 0, binding = index).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Binding {
    /// An array parameter.
    Array(ParamId),
    /// The scalar parameters, laid out as [`Lowered::params`] says.
    Params,
    /// Five `u32`: a flag (1 an index out of bounds, 2 a loop the driver cut short, 3 a loop
    /// longer than its u32 counter), then
    /// parameter, index (low word), length and index (high word) of the first out-of-bounds
    /// access.
    Status,
    /// Per-workgroup partial results of reduction `n` of [`Lowered::reductions`].
    Partials(usize),
    /// The region-level locals, kept between entry points when the region has code between
    /// its parallel loops ([`Lowered::locals_size`] bytes).
    Locals,
}

/// Where a scalar parameter sits in the parameter buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParamSlot {
    pub param: ParamId,
    pub ty: Scalar,
    /// Byte offset (WGSL storage layout: each scalar aligned to its size).
    pub offset: u32,
}

/// Where an array parameter's first element (`u32`, in elements of its buffer) and length
/// (`u32`, the next word) sit in the parameter buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArraySlot {
    pub param: ParamId,
    pub offset: u32,
}

/// A kernel lowered to a validated module.
pub struct Lowered {
    /// The WGSL source (`ACC_DUMP=wgsl`).
    pub wgsl: String,
    pub module: naga::Module,
    pub info: naga::valid::ModuleInfo,
    /// Entry points, dispatched in this order.
    pub entry_points: Vec<String>,
    /// For each entry point: whether it runs on one invocation (code between parallel loops)
    /// rather than over the grid.
    pub single: Vec<bool>,
    /// For each entry point: whether each iteration of its loop takes a whole workgroup, whose
    /// invocations share an inner loop ([`Stmt::gang_phases`]), so that the grid
    /// wants a workgroup per iteration rather than per 256.
    pub workgroup_per_iteration: Vec<bool>,
    /// Size in bytes of the locals buffer (0 when there is none).
    pub locals_size: u32,
    pub bindings: Vec<Binding>,
    pub params: Vec<ParamSlot>,
    pub arrays: Vec<ArraySlot>,
    /// Size of the parameter buffer in bytes (at least 4).
    pub params_size: u32,
    pub reductions: Vec<ReductionSlot>,
    /// The region's value: its type and offset in the locals buffer.
    pub result: Option<(Scalar, u32)>,
    /// Where the grid's workgroup count goes in the parameter buffer (`u32`), when an entry
    /// point combines per-workgroup partials on the device.
    pub groups_offset: Option<u32>,
    /// Whether the kernel can report anything in its status buffer (an out-of-range access, a
    /// loop llvmpipe cut, a trip count too large): when not, nothing needs reading back after
    /// a launch that brings no data back.
    pub status_used: bool,
}

fn unsupported(what: impl Into<String>) -> Error {
    Error::Unsupported {
        what: format!("on wgpu: {}", what.into()),
    }
}

/// The WGSL type of an IR scalar on `target` (`usize`/`isize` as [`device_scalar`] says).
fn wgsl_type(t: Scalar, target: Target) -> Result<&'static str> {
    Ok(match t {
        Scalar::USize | Scalar::ISize => wgsl_type(device_scalar(t, target), target)?,
        Scalar::Bool => "bool",
        Scalar::I32 => "i32",
        Scalar::U32 => "u32",
        Scalar::F32 => "f32",
        Scalar::F64 if target.f64 => "f64",
        Scalar::I64 if target.int64 => "i64",
        Scalar::U64 if target.int64 => "u64",
        Scalar::F64 => return Err(unsupported("this adapter has no f64 in shaders")),
        Scalar::I64 | Scalar::U64 => {
            return Err(unsupported(
                "this adapter has no 64-bit integers in shaders",
            ))
        }
        // Held in 32-bit words; arithmetic results are wrapped back to the type's width.
        Scalar::I8 | Scalar::I16 => "i32",
        Scalar::U8 | Scalar::U16 => "u32",
    })
}

/// How a value of a narrow type is wrapped to its width after arithmetic (None for types held
/// at their own width).
fn wrap(t: Scalar, x: &str) -> Option<String> {
    Some(match t {
        Scalar::U8 => format!("({x} & 0xffu)"),
        Scalar::U16 => format!("({x} & 0xffffu)"),
        Scalar::I8 => format!("(({x} << 24u) >> 24u)"),
        Scalar::I16 => format!("(({x} << 16u) >> 16u)"),
        _ => return None,
    })
}

/// Whether arrays of `t` travel as 32-bit words on `target` (the runtime widens them on the
/// way in and narrows them on the way out): `bool`, the 8- and 16-bit integers, and
/// `usize`/`isize` where they are 32-bit there.
pub fn widened_in_buffers(t: Scalar, target: Target) -> bool {
    match t {
        Scalar::Bool | Scalar::I8 | Scalar::I16 | Scalar::U8 | Scalar::U16 => true,
        Scalar::USize | Scalar::ISize => !target.wide_usize(),
        _ => false,
    }
}

/// Whether a struct field of type `t` is a member of the struct as WGSL declares it: types
/// WGSL holds at their host width (the narrow ones, and `usize`/`isize` where they are 32-bit,
/// are not, as structs travel bit for bit).
fn struct_member_type(t: Scalar, target: Target) -> Option<&'static str> {
    match t {
        Scalar::F32 | Scalar::I32 | Scalar::U32 | Scalar::F64 | Scalar::I64 | Scalar::U64 => {
            wgsl_type(t, target).ok()
        }
        Scalar::USize | Scalar::ISize if target.wide_usize() => wgsl_type(t, target).ok(),
        _ => None,
    }
}

/// The WGSL struct `name` with the layout of a `#[repr(C)]` struct: a member `fK` at the
/// offset of each field WGSL can hold (field K), the other bytes padding (`@size`), and the
/// same size, so that an `array<name>` has the host's element stride.
fn struct_decl(
    name: &str,
    layout: &StructLayout,
    atomic_fields: &[FieldId],
    packed_atomic: bool,
    target: Target,
) -> Result<String> {
    if layout.size % 4 != 0 || layout.size == 0 {
        return Err(unsupported(format!(
            "`{}` structs of {} bytes (wgpu moves whole 4-byte words)",
            layout.name, layout.size
        )));
    }
    let mut members: Vec<(u32, String, String)> = Vec::new();
    for (k, f) in layout.fields.iter().enumerate() {
        let Some(t) = f.ty.and_then(|t| struct_member_type(t, target)) else {
            continue;
        };
        // A field an `atomic` statement updates is an atomic word (f32 and f64 as their bits).
        let t = if atomic_fields.contains(&(k as FieldId)) {
            format!(
                "atomic<{}>",
                atomic_word(f.ty.unwrap_or(Scalar::U32), target)?
            )
        } else {
            t.to_string()
        };
        members.push((f.offset, format!("f{k}"), t));
    }
    // Fields of the narrow types share 4-byte words `wN` (N: the word's index), which no
    // member of 4 or 8 bytes overlaps (those are aligned to their size); atomic words where
    // the kernel writes a narrow field of the struct (see [`Packed`]).
    let word = if packed_atomic { "atomic<u32>" } else { "u32" };
    for f in layout.fields.iter() {
        if f.ty.is_some_and(is_packed) {
            let w = f.offset / 4;
            if !members.iter().any(|m| m.1 == format!("w{w}")) {
                members.push((w * 4, format!("w{w}"), word.to_string()));
            }
        }
    }
    members.sort_by_key(|m| m.0);
    if members.first().is_none_or(|m| m.0 != 0) {
        members.insert(0, (0, "acc_pad".to_string(), "u32".to_string()));
    }
    let mut out = format!("struct {name} {{ // {}\n", layout.name);
    for (i, (offset, member, ty)) in members.iter().enumerate() {
        let end = members.get(i + 1).map_or(layout.size, |m| m.0);
        let _ = writeln!(out, "    @size({}) {member}: {ty},", end - offset);
    }
    out.push('}');
    Ok(out)
}

/// Whether struct fields of type `t` are packed in 4-byte words in WGSL (held at their host
/// width in the host's bytes, read and written as bits of their word).
fn is_packed(t: Scalar) -> bool {
    matches!(
        t,
        Scalar::Bool | Scalar::I8 | Scalar::U8 | Scalar::I16 | Scalar::U16
    )
}

/// A struct field of a narrow type: `bits` bits at bit `shift` of the struct's word `word`.
/// Writes replace those bits with a compare-exchange on the word, so that invocations writing
/// other fields of the same word do not undo each other.
struct Packed {
    word: u32,
    shift: u32,
    bits: u32,
    ty: Scalar,
    /// Whether the words are `atomic<u32>` (some statement of the kernel writes such a field).
    atomic: bool,
}

impl Packed {
    /// The field's value (as the 32-bit word WGSL holds narrow values in) from its word `w`.
    fn extract(&self, w: &str) -> String {
        let (s, b) = (self.shift, self.bits);
        match self.ty {
            Scalar::Bool => format!("(extractBits({w}, {s}u, {b}u) != 0u)"),
            Scalar::I8 | Scalar::I16 => format!("extractBits(bitcast<i32>({w}), {s}u, {b}u)"),
            _ => format!("extractBits({w}, {s}u, {b}u)"),
        }
    }

    /// Word `w` with the field replaced by the value `v` (of the field's type as WGSL holds it).
    fn insert(&self, w: &str, v: &str) -> String {
        let bits = match self.ty {
            Scalar::Bool => format!("select(0u, 1u, {v})"),
            Scalar::I8 | Scalar::I16 => format!("bitcast<u32>({v})"),
            _ => v.to_string(),
        };
        format!("insertBits({w}, {bits}, {}u, {}u)", self.shift, self.bits)
    }
}

/// The type an array element has in a storage buffer.
fn storage_type(t: Scalar, target: Target) -> Result<&'static str> {
    match t {
        Scalar::Bool => Ok("u32"),
        other => wgsl_type(other, target),
    }
}

fn literal(l: Literal, target: Target) -> Result<String> {
    Ok(match l {
        Literal::Bool(b) => b.to_string(),
        Literal::Int(t, v) => match t {
            Scalar::ISize | Scalar::USize if target.wide_usize() => {
                literal(Literal::Int(device_scalar(t, target), v), target)?
            }
            // usize/isize are 32-bit here: their 64-bit limits (reduction identities) become
            // the 32-bit limits; other values must fit.
            Scalar::ISize | Scalar::USize => {
                let v = match v {
                    v if v == i64::MIN as i128 => i32::MIN as i128,
                    v if v == i64::MAX as i128 && t == Scalar::ISize => i32::MAX as i128,
                    v if v == u64::MAX as i128 || (v == -1 && t == Scalar::USize) => {
                        u32::MAX as i128
                    }
                    v => v,
                };
                let fits = if t == Scalar::ISize {
                    (i32::MIN as i128..=i32::MAX as i128).contains(&v)
                } else {
                    (0..=u32::MAX as i128).contains(&v)
                };
                if !fits {
                    return Err(unsupported(format!("the {t} literal {v} (32-bit there)")));
                }
                if t == Scalar::ISize {
                    format!("i32({v})")
                } else {
                    format!("{v}u")
                }
            }
            Scalar::I32 | Scalar::I8 | Scalar::I16 => format!("i32({v})"),
            Scalar::U32 | Scalar::U8 | Scalar::U16 => format!("{}u", v as u32),
            Scalar::I64 => {
                wgsl_type(t, target)?;
                if v == i64::MIN as i128 {
                    String::from("(-9223372036854775807li - 1li)")
                } else {
                    format!("{}li", v as i64)
                }
            }
            Scalar::U64 => {
                wgsl_type(t, target)?;
                format!("{}lu", v as u64)
            }
            Scalar::F32 | Scalar::F64 => literal(Literal::Float(t, v as f64), target)?,
            other => return Err(unsupported(format!("an integer literal of type {other}"))),
        },
        Literal::Float(t, v) => {
            let ty = wgsl_type(t, target)?;
            if v.is_finite() {
                let text = if v == v.trunc() && v.abs() < 1e15 {
                    format!("{v:.1}")
                } else {
                    format!("{v:e}")
                };
                format!("{ty}({text})")
            } else if t == Scalar::F32 {
                let bits = (v as f32).to_bits();
                format!("bitcast<f32>({bits}u)")
            } else {
                let bits = v.to_bits();
                format!("bitcast<f64>({bits}lu)")
            }
        }
    })
}

/// Lowers `kernel` for `target`.
pub fn lower(kernel: &Kernel, target: Target) -> Result<Lowered> {
    // Tiled nests run as tile loops around element loops.
    let kernel = &*acc_core::ir::tile::expand(kernel);
    let types = expr_types(kernel).map_err(|e| Error::Unsupported {
        what: format!("invalid kernel IR: {e}"),
    })?;
    // Arrays (and fields) an `atomic` statement updates, and struct arrays a statement writes
    // a narrow field of.
    let (mut atomic, mut packed_atomic) = (
        std::collections::BTreeSet::new(),
        std::collections::BTreeSet::new(),
    );
    let packed = |array: ParamId, field: Option<FieldId>| {
        field.is_some() && kernel.access(array, field).is_some_and(|a| is_packed(a.ty))
    };
    walk::for_each_stmt(&kernel.function.body, &mut |s| match s {
        Stmt::Atomic { array, field, .. } => {
            atomic.insert((*array, *field));
            if packed(*array, *field) {
                packed_atomic.insert(*array);
            }
        }
        Stmt::Store { array, field, .. } if packed(*array, *field) => {
            packed_atomic.insert(*array);
        }
        _ => {}
    });
    let mut w = Writer {
        k: kernel,
        target,
        types,
        helpers: String::new(),
        atomic,
        packed_atomic,
        privatized: None,
        break_flags: Vec::new(),
        fast: None,
    };
    w.module()
}

struct Writer<'a> {
    k: &'a Kernel,
    target: Target,
    types: Vec<Scalar>,
    /// Helper functions the body needs (bounds checks, powi), each once.
    helpers: String,
    /// Arrays (and fields of arrays of structs) some `atomic` statement updates: declared
    /// `atomic<..>`, every access atomic.
    atomic: std::collections::BTreeSet<(ParamId, Option<FieldId>)>,
    /// Struct arrays some statement writes a narrow field of: their packed words are atomic.
    packed_atomic: std::collections::BTreeSet<ParamId>,
    /// The array whose atomic updates go to the workgroup's copy (`acc_priv_<entry>`) while
    /// `acc_fits_<array>` holds, and the entry's number.
    privatized: Option<(ParamId, usize)>,
    /// In the fast version of a parallel loop's body: its loop variable, and the arrays that
    /// every value of it indexes in bounds (checked once per invocation before the loop).
    fast: Option<(LocalId, std::collections::BTreeSet<ParamId>)>,
    /// For each enclosing loop split into chunks (see [`Target::loop_limit`]): the flag a
    /// `break` sets to leave the loop over chunks too.
    break_flags: Vec<Option<String>>,
}

/// The word type of an atomic array of `t` (`f32` travels as its bits).
fn atomic_word(t: Scalar, target: Target) -> Result<&'static str> {
    match t {
        Scalar::USize | Scalar::ISize if target.wide_usize() && !target.int64_atomics => {
            Err(unsupported(format!(
                "atomics on {t} (64-bit there, and this adapter has no 64-bit atomics)"
            )))
        }
        Scalar::USize | Scalar::ISize => atomic_word(device_scalar(t, target), target),
        Scalar::I32 | Scalar::I8 | Scalar::I16 => Ok("i32"),
        Scalar::U32 | Scalar::U8 | Scalar::U16 | Scalar::Bool | Scalar::F32 => Ok("u32"),
        Scalar::I64 if target.int64_atomics => Ok("i64"),
        Scalar::U64 | Scalar::F64 if target.int64_atomics => Ok("u64"),
        _ => Err(unsupported(format!(
            "atomics on {t} (this adapter has no 64-bit atomics)"
        ))),
    }
}

/// Identity of a reduction operator for a type, as WGSL.
fn identity(op: ReduceOp, t: Scalar, target: Target) -> Result<String> {
    // usize/isize take the identities of the integers they are on the device.
    let t = device_scalar(t, target);
    let lit = |l| literal(l, target);
    Ok(match (op, t) {
        (ReduceOp::Add | ReduceOp::BitOr | ReduceOp::BitXor, t) if t.is_float() => {
            lit(Literal::Float(t, 0.0))?
        }
        (ReduceOp::Add | ReduceOp::BitOr | ReduceOp::BitXor, Scalar::Bool) | (ReduceOp::Or, _) => {
            "false".into()
        }
        (ReduceOp::Add | ReduceOp::BitOr | ReduceOp::BitXor, t) => lit(Literal::Int(t, 0))?,
        (ReduceOp::Mul, t) if t.is_float() => lit(Literal::Float(t, 1.0))?,
        (ReduceOp::Mul, t) => lit(Literal::Int(t, 1))?,
        (ReduceOp::And, _) | (ReduceOp::BitAnd, Scalar::Bool) => "true".into(),
        (ReduceOp::BitAnd, t) if t.is_signed() => lit(Literal::Int(t, -1))?,
        (ReduceOp::BitAnd, t) => lit(Literal::Int(
            t,
            if t == Scalar::U64 {
                u64::MAX as i128
            } else {
                u32::MAX as i128
            },
        ))?,
        (ReduceOp::Max, t) if t.is_float() => lit(Literal::Float(t, f64::NEG_INFINITY))?,
        (ReduceOp::Min, t) if t.is_float() => lit(Literal::Float(t, f64::INFINITY))?,
        (ReduceOp::Max, Scalar::I32) => lit(Literal::Int(t, i32::MIN as i128))?,
        (ReduceOp::Min, Scalar::I32) => lit(Literal::Int(t, i32::MAX as i128))?,
        (ReduceOp::Max, Scalar::I8) => lit(Literal::Int(t, i8::MIN as i128))?,
        (ReduceOp::Min, Scalar::I8) => lit(Literal::Int(t, i8::MAX as i128))?,
        (ReduceOp::Max, Scalar::I16) => lit(Literal::Int(t, i16::MIN as i128))?,
        (ReduceOp::Min, Scalar::I16) => lit(Literal::Int(t, i16::MAX as i128))?,
        (ReduceOp::Min, Scalar::U8) => lit(Literal::Int(t, u8::MAX as i128))?,
        (ReduceOp::Min, Scalar::U16) => lit(Literal::Int(t, u16::MAX as i128))?,
        (ReduceOp::Max, Scalar::I64) => lit(Literal::Int(t, i64::MIN as i128))?,
        (ReduceOp::Min, Scalar::I64) => lit(Literal::Int(t, i64::MAX as i128))?,
        (ReduceOp::Max, _) => lit(Literal::Int(t, 0))?,
        (ReduceOp::Min, Scalar::U64) => lit(Literal::Int(t, u64::MAX as i128))?,
        (ReduceOp::Min, _) => lit(Literal::Int(t, u32::MAX as i128))?,
    })
}

/// `a op b` for a reduction, as WGSL.
/// `halves`: 64-bit integers are ordered on their halves ([`Writer::by_halves`]).
fn combine(op: ReduceOp, t: Scalar, a: &str, b: &str, halves: bool) -> String {
    let s = int64_name(t);
    match op {
        ReduceOp::Max if halves => format!("acc_max_{s}({a}, {b})"),
        ReduceOp::Min if halves => format!("acc_min_{s}({a}, {b})"),
        ReduceOp::Add => format!("({a} + {b})"),
        ReduceOp::Mul => format!("({a} * {b})"),
        // NaN is ignored, as by f64::max/min on the host.
        ReduceOp::Max if t.is_float() => format!("select(max({a}, {b}), {a}, {b} != {b})"),
        ReduceOp::Min if t.is_float() => format!("select(min({a}, {b}), {a}, {b} != {b})"),
        ReduceOp::Max => format!("max({a}, {b})"),
        ReduceOp::Min => format!("min({a}, {b})"),
        ReduceOp::BitAnd | ReduceOp::And => format!("({a} & {b})"),
        ReduceOp::BitOr | ReduceOp::Or => format!("({a} | {b})"),
        ReduceOp::BitXor if t == Scalar::Bool => format!("({a} != {b})"),
        ReduceOp::BitXor => format!("({a} ^ {b})"),
    }
}

impl Writer<'_> {
    fn ty(&self, t: Scalar) -> Result<&'static str> {
        wgsl_type(t, self.target)
    }

    /// The WGSL type of `usize` values (indices, lengths, trip counts).
    fn uty(&self) -> &'static str {
        if self.target.wide_usize() {
            "u64"
        } else {
            "u32"
        }
    }

    /// A `usize` literal.
    fn ulit(&self, v: u32) -> String {
        if self.target.wide_usize() {
            format!("{v}lu")
        } else {
            format!("{v}u")
        }
    }

    /// A `usize` index `i` known to be below a buffer's length, as the `u32` WGSL indexes with.
    /// `constant`: whether `i` is made of literals only, which naga's constant evaluator
    /// cannot narrow from u64 (it goes through a function then).
    fn index32(&mut self, i: &str, constant: bool) -> String {
        if !self.target.wide_usize() {
            i.to_string()
        } else if constant {
            self.u32_helper();
            format!("acc_u32({i})")
        } else {
            format!("u32({i})")
        }
    }

    fn u32_helper(&mut self) {
        if !self.helpers.contains("fn acc_u32(") {
            self.helpers
                .push_str("fn acc_u32(i: u64) -> u32 {\n    return u32(i);\n}\n");
        }
    }

    /// Whether expression `h` is made of literals only.
    fn is_constant(&self, h: Handle<Expr>) -> bool {
        match &self.k.function.exprs[h] {
            Expr::Literal(_) => true,
            Expr::Unary(_, a) | Expr::Cast(a, _) | Expr::Bitcast(a, _) => self.is_constant(*a),
            Expr::Binary(_, a, b) => self.is_constant(*a) && self.is_constant(*b),
            Expr::Select {
                cond,
                accept,
                reject,
            } => self.is_constant(*cond) && self.is_constant(*accept) && self.is_constant(*reject),
            Expr::Math(_, args) => args.iter().all(|a| self.is_constant(*a)),
            _ => false,
        }
    }

    /// The length of array `a` as a `usize` value.
    fn len_of(&self, a: ParamId) -> String {
        if self.target.wide_usize() {
            format!("u64(params.n{a})")
        } else {
            format!("params.n{a}")
        }
    }

    fn module(&mut self) -> Result<Lowered> {
        let k = self.k;
        let mut bindings = Vec::new();
        let mut decls = String::new();
        // Arrays.
        for (id, p) in k.params.iter().enumerate() {
            if let ParamKind::Array {
                elem: Elem::Struct(layout),
                writable,
            } = &p.kind
            {
                let atomic_fields: Vec<FieldId> = self
                    .atomic
                    .iter()
                    .filter(|(a, _)| *a == id as ParamId)
                    .filter_map(|(_, f)| *f)
                    .collect();
                let _ = writeln!(
                    decls,
                    "{}",
                    struct_decl(
                        &format!("S{id}"),
                        layout,
                        &atomic_fields,
                        self.packed_atomic.contains(&(id as ParamId)),
                        self.target
                    )
                    .map_err(|e| annotate(e, &p.name))?
                );
                let access = if *writable { "read_write" } else { "read" };
                let _ = writeln!(
                    decls,
                    "@group(0) @binding({}) var<storage, {access}> p{id}: array<S{id}>; // {}",
                    bindings.len(),
                    p.name
                );
                bindings.push(Binding::Array(id as ParamId));
                continue;
            }
            if let ParamKind::Array {
                elem: Elem::Scalar(elem),
                writable,
            } = &p.kind
            {
                let ty = if self.atomic.contains(&(id as ParamId, None)) {
                    let w = atomic_word(*elem, self.target).map_err(|e| annotate(e, &p.name))?;
                    match w {
                        "i32" => "atomic<i32>",
                        "i64" => "atomic<i64>",
                        "u64" => "atomic<u64>",
                        _ => "atomic<u32>",
                    }
                } else {
                    storage_type(*elem, self.target).map_err(|e| annotate(e, &p.name))?
                };
                let access = if *writable { "read_write" } else { "read" };
                let _ = writeln!(
                    decls,
                    "@group(0) @binding({}) var<storage, {access}> p{id}: array<{ty}>; // {}",
                    bindings.len(),
                    p.name
                );
                bindings.push(Binding::Array(id as ParamId));
            }
        }
        // Scalars, in one buffer laid out by size.
        let mut params = Vec::new();
        let mut offset = 0u32;
        let mut fields = String::new();
        let mut scalars: Vec<(usize, Scalar)> = k
            .params
            .iter()
            .enumerate()
            .filter_map(|(i, p)| match p.kind {
                ParamKind::Scalar(s) => Some((i, s)),
                _ => None,
            })
            .collect();
        scalars.sort_by_key(|&(_, s)| std::cmp::Reverse(self.param_size(s)));
        for (id, s) in scalars {
            let size = self.param_size(s);
            offset = offset.next_multiple_of(size);
            let ty = if s == Scalar::Bool {
                "u32"
            } else {
                self.ty(s).map_err(|e| annotate(e, &k.params[id].name))?
            };
            let _ = writeln!(fields, "    p{id}: {ty},");
            params.push(ParamSlot {
                param: id as ParamId,
                ty: s,
                offset,
            });
            offset += size;
        }
        // Each array's first element in its buffer and its length: an array may be a part of a
        // present buffer (a subarray, 3.3 section 2.7.1), and an empty one is bound to a
        // placeholder buffer.
        let mut arrays = Vec::new();
        for (id, p) in k.params.iter().enumerate() {
            if matches!(p.kind, ParamKind::Array { .. }) {
                offset = offset.next_multiple_of(4);
                let _ = writeln!(fields, "    b{id}: u32,\n    n{id}: u32,");
                arrays.push(ArraySlot {
                    param: id as ParamId,
                    offset,
                });
                offset += 8;
            }
        }
        // The grid's workgroup count, for entry points that fold per-workgroup partials.
        offset = offset.next_multiple_of(4);
        let _ = writeln!(fields, "    acc_groups: u32,");
        let groups_offset = Some(offset);
        offset += 4;
        let params_size = offset.next_multiple_of(8).max(4);
        let _ = writeln!(decls, "struct Params {{\n{fields}}}");
        let _ = writeln!(
            decls,
            "@group(0) @binding({}) var<storage, read> params: Params;",
            bindings.len()
        );
        bindings.push(Binding::Params);
        let _ = writeln!(
            decls,
            "@group(0) @binding({}) var<storage, read_write> acc_status: array<atomic<u32>, 5>;",
            bindings.len()
        );
        bindings.push(Binding::Status);

        // Entry points: one per top-level parallel loop. When the region has only scalar
        // assignments besides, they are the gang-redundant prelude every invocation runs;
        // otherwise each run of other code is an entry point of one invocation, and the
        // region-level locals live in a buffer between entry points.
        // A region with no parallel loop at all is one segment of sequential code.
        let segmented = k.needs_segments();
        let mut local_slots: Vec<(usize, Scalar, u32)> = Vec::new();
        let mut locals_size = 0u32;
        if segmented {
            let mut fields = String::new();
            let (slots, size) = k.scalar_locals_layout(|t| self.param_size(t));
            for &(i, t, off) in &slots {
                let ty = if t == Scalar::Bool {
                    "u32"
                } else {
                    self.ty(t)?
                };
                let _ = writeln!(fields, "    l{i}: {ty},");
                local_slots.push((i as usize, t, off));
            }
            if fields.is_empty() {
                fields.push_str("    unused: u32,\n");
            }
            locals_size = size;
            let _ = writeln!(decls, "struct Locals {{\n{fields}}}");
            let _ = writeln!(
                decls,
                "@group(0) @binding({}) var<storage, read_write> acc_locals: Locals;",
                bindings.len()
            );
            bindings.push(Binding::Locals);
        }
        let load_locals: String = local_slots
            .iter()
            .map(|&(i, t, _)| {
                if t == Scalar::Bool {
                    format!("    l{i} = (acc_locals.l{i} != 0u);\n")
                } else {
                    format!("    l{i} = acc_locals.l{i};\n")
                }
            })
            .collect();
        let store_locals: String = local_slots
            .iter()
            .map(|&(i, t, _)| {
                if t == Scalar::Bool {
                    format!("    acc_locals.l{i} = select(0u, 1u, l{i});\n")
                } else {
                    format!("    acc_locals.l{i} = l{i};\n")
                }
            })
            .collect();

        let mut entry_points = Vec::new();
        let mut single = Vec::new();
        let mut reductions = Vec::new();
        let mut prelude: Vec<&Stmt> = Vec::new();
        let mut pending: Vec<&Stmt> = Vec::new();
        let mut bodies = String::new();
        let mut reduced_in_loops = std::collections::BTreeSet::new();
        let flush = |w: &mut Self,
                     pending: &mut Vec<&Stmt>,
                     entry_points: &mut Vec<String>,
                     single: &mut Vec<bool>,
                     bodies: &mut String|
         -> Result<()> {
            if pending.is_empty() {
                return Ok(());
            }
            let n = entry_points.len();
            let body = w.single_entry(n, pending, &load_locals, &store_locals)?;
            bodies.push_str(&body);
            entry_points.push(self.k.entry_name(n));
            single.push(true);
            pending.clear();
            Ok(())
        };
        // Grid entry points that run an iteration of their loop per workgroup.
        let mut per_workgroup = Vec::new();
        for s in &k.function.body {
            match s {
                Stmt::Assign { .. } if !segmented => prelude.push(s),
                Stmt::For {
                    schedule: Some(_), ..
                } => {
                    flush(
                        self,
                        &mut pending,
                        &mut entry_points,
                        &mut single,
                        &mut bodies,
                    )?;
                    let n = entry_points.len();
                    let name = self.k.entry_name(n);
                    let mut slots = Vec::new();
                    let mut on_device = Vec::new();
                    for (r, (red, into)) in self.loop_reductions(s).into_iter().enumerate() {
                        let ty = k.function.locals[red.local as usize].ty;
                        // bool is not host-shareable: its partials are u32 0/1.
                        let wty = if ty == Scalar::Bool {
                            "u32"
                        } else {
                            storage_type(ty, self.target)?
                        };
                        let b = bindings.len();
                        let _ = writeln!(decls, "@group(0) @binding({b}) var<storage, read_write> acc_partials_{}: array<{wty}>;", reductions.len());
                        let _ = writeln!(
                            decls,
                            "var<workgroup> acc_shared_{n}_{r}: array<{wty}, {WORKGROUP_SIZE}>;"
                        );
                        bindings.push(Binding::Partials(reductions.len()));
                        slots.push(reductions.len());
                        let len = k.function.locals[red.local as usize].len.unwrap_or(1);
                        if into.is_none() {
                            if k.function.locals[red.local as usize].len.is_some() {
                                return Err(unsupported(
                                    "an array reduction into an array local to the region",
                                ));
                            }
                            on_device.push((reductions.len(), red));
                        }
                        reductions.push(ReductionSlot {
                            op: red.op,
                            ty,
                            into,
                            entry: Some(n),
                            local_offset: 0,
                            len,
                        });
                        reduced_in_loops.insert(red.local);
                    }
                    let body = if segmented {
                        self.entry(n, &[], s, &slots, &load_locals)?
                    } else {
                        self.entry(n, &prelude, s, &slots, "")?
                    };
                    bodies.push_str(&body);
                    if s.gang_phases(&self.k.function).is_some() {
                        per_workgroup.push(entry_points.len());
                    }
                    entry_points.push(name);
                    single.push(false);
                    // Reductions into region locals: one invocation folds the partials, in
                    // workgroup order, into the local's value (3.3 section 2.9.11).
                    if segmented && !on_device.is_empty() {
                        let m = entry_points.len();
                        let mut out = String::new();
                        let _ = writeln!(out, "@compute @workgroup_size(1)");
                        let _ = writeln!(
                            out,
                            "fn {}(@builtin(global_invocation_id) acc_gid: vec3<u32>) {{", self.k.entry_name(m)
                        );
                        let _ = writeln!(out, "    if (acc_gid.x != 0u) {{ return; }}");
                        self.declare_locals(&mut out)?;
                        out.push_str(&load_locals);
                        let _ = writeln!(out, "    var acc_g: u32 = 0u;");
                        let _ = writeln!(
                            out,
                            "    for (; acc_g < params.acc_groups; acc_g = acc_g + 1u) {{"
                        );
                        for (slot, red) in &on_device {
                            let ty = k.function.locals[red.local as usize].ty;
                            let p = format!("acc_partials_{slot}[acc_g]");
                            let p = if ty == Scalar::Bool {
                                format!("({p} != 0u)")
                            } else {
                                p
                            };
                            let halves = self.by_halves(ty);
                            let _ = writeln!(
                                out,
                                "        l{} = {};",
                                red.local,
                                combine(red.op, ty, &format!("l{}", red.local), &p, halves)
                            );
                        }
                        let _ = writeln!(out, "    }}");
                        if self.target.loop_limit.is_some() {
                            self.loop_cut_helper();
                            let _ = writeln!(
                                out,
                                "    if (acc_g < params.acc_groups) {{ acc_loop_cut(); }}"
                            );
                        }
                        out.push_str(&store_locals);
                        let _ = writeln!(out, "}}");
                        bodies.push_str(&out);
                        entry_points.push(self.k.entry_name(m));
                        single.push(true);
                    }
                }
                other => pending.push(other),
            }
        }
        flush(
            self,
            &mut pending,
            &mut entry_points,
            &mut single,
            &mut bodies,
        )?;
        if !segmented && entry_points.is_empty() {
            return Err(unsupported("a region without code to run"));
        }
        // Kernel reductions computed by sequential code: the local's final value.
        for (red, into) in &k.reductions {
            if !reduced_in_loops.contains(&red.local) {
                let Some(&(_, ty, off)) =
                    local_slots.iter().find(|(i, ..)| *i == red.local as usize)
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
        let mut wgsl = String::new();
        let _ = writeln!(wgsl, "// {}", k.name);
        wgsl.push_str(&decls);
        wgsl.push_str(&self.helpers);
        wgsl.push_str(&bodies);
        let module = naga::front::wgsl::parse_str(&wgsl).map_err(|e| Error::Unsupported {
            what: format!(
                "internal error: generated WGSL does not parse:\n{}\n{wgsl}",
                e.emit_to_string(&wgsl)
            ),
        })?;
        let mut caps = naga::valid::Capabilities::empty();
        if self.target.f64 {
            caps |= naga::valid::Capabilities::FLOAT64;
        }
        if self.target.int64 {
            caps |= naga::valid::Capabilities::SHADER_INT64;
        }
        if self.target.int64_atomics {
            caps |= naga::valid::Capabilities::SHADER_INT64_ATOMIC_ALL_OPS;
        }
        let info = naga::valid::Validator::new(naga::valid::ValidationFlags::all(), caps)
            .validate(&module)
            .map_err(|e| Error::Unsupported {
                what: format!(
                    "internal error: generated WGSL does not validate:\n{}\n{wgsl}",
                    e.emit_to_string(&wgsl)
                ),
            })?;
        let result = k.result.and_then(|r| {
            local_slots
                .iter()
                .find(|(i, ..)| *i == r as usize)
                .map(|&(_, t, off)| (t, off))
        });
        Ok(Lowered {
            wgsl,
            module,
            info,
            workgroup_per_iteration: (0..entry_points.len())
                .map(|e| per_workgroup.contains(&e))
                .collect(),
            entry_points,
            single,
            locals_size,
            bindings,
            params,
            arrays,
            params_size,
            reductions,
            result,
            groups_offset,
            status_used: self.helpers.contains("acc_status"),
        })
    }

    fn param_size(&self, s: Scalar) -> u32 {
        match device_scalar(s, self.target) {
            Scalar::F64 | Scalar::I64 | Scalar::U64 => 8,
            _ => 4,
        }
    }

    /// The reductions of a parallel loop, each with the parameter it goes to: only reductions
    /// the kernel combines into a parameter are supported so far.
    fn loop_reductions(&self, s: &Stmt) -> Vec<(Reduction, Option<ParamId>)> {
        let Stmt::For { reductions, .. } = s else {
            return Vec::new();
        };
        reductions
            .iter()
            .map(|r| {
                (
                    *r,
                    self.k
                        .reductions
                        .iter()
                        .find(|(kr, _)| kr.local == r.local)
                        .map(|(_, p)| *p),
                )
            })
            .collect()
    }

    /// One entry point: the prelude, then the loop's share of iterations, then the
    /// workgroup's reduction partials.
    /// An entry point of one invocation running `stmts` (code between parallel loops), with the
    /// region-level locals loaded first and stored back last.
    fn single_entry(
        &mut self,
        n: usize,
        stmts: &[&Stmt],
        load: &str,
        store: &str,
    ) -> Result<String> {
        let mut out = String::new();
        let _ = writeln!(out, "@compute @workgroup_size(1)");
        let _ = writeln!(out, "fn {}(@builtin(global_invocation_id) acc_gid: vec3<u32>, @builtin(local_invocation_index) acc_lid: u32, @builtin(workgroup_id) acc_wg: vec3<u32>, @builtin(num_workgroups) acc_nwg: vec3<u32>) {{", self.k.entry_name(n));
        let _ = writeln!(out, "    if (acc_gid.x != 0u) {{ return; }}");
        self.declare_locals(&mut out)?;
        out.push_str(load);
        for st in stmts {
            self.stmt(&mut out, st, 1)?;
        }
        out.push_str(store);
        let _ = writeln!(out, "}}");
        Ok(out)
    }

    /// The grid-stride loop of an entry point over a parallel loop: each invocation takes
    /// iterations `acc_gid.x`, `acc_gid.x + stride`, ... of the (collapsed) levels.
    fn flat_grid(&mut self, out: &mut String, levels: &[LoopLevel], body: &Block) -> Result<()> {
        let _ = writeln!(
            out,
            "    let acc_stride: u32 = acc_nwg.x * {WORKGROUP_SIZE}u;"
        );
        // Arrays indexed by the loop variable itself: when its first and last values are in
        // bounds for all of them (checked once here), the body runs without their checks.
        let mut fast_arrays = std::collections::BTreeSet::new();
        if levels.len() == 1 && !self.k.unchecked {
            self.indexed_by(body, levels[0].var, &mut fast_arrays);
            fast_arrays.retain(|a| !self.atomic.iter().any(|(p, _)| p == a));
            // The fast path relies on the loop variable keeping its value.
            if walk::assigns(body, &|l| l == levels[0].var) {
                fast_arrays.clear();
            }
        }
        if !fast_arrays.is_empty() {
            let lv = &levels[0];
            let ty = self.ty(self.k.function.locals[lv.var as usize].ty)?;
            let (start, step) = (self.expr(lv.start)?, self.expr(lv.step)?);
            let (uty, trips) = (self.uty(), self.expr(lv.trips)?);
            let _ = writeln!(out, "    let acc_trips: {uty} = {trips};");
            let (one, zero) = (self.ulit(1), self.ulit(0));
            let last = format!("({start} + {ty}(acc_trips - {one}) * {step})");
            let mut conds = Vec::new();
            for a in &fast_arrays {
                let n = self.len_of(*a);
                let (first, end) = (
                    self.less(Scalar::USize, &start, &n),
                    self.less(Scalar::USize, &last, &n),
                );
                conds.push(format!("({first} && {end})"));
            }
            let _ = writeln!(
                out,
                "    let acc_fast = acc_trips == {zero} || ({});",
                conds.join(" && ")
            );
        }
        self.strided(
            out,
            levels,
            "g",
            "acc_gid.x",
            "acc_stride",
            &mut |w, out| {
                if fast_arrays.is_empty() {
                    return w.block(out, body, 2);
                }
                let _ = writeln!(out, "        if (acc_fast) {{");
                w.fast = Some((levels[0].var, fast_arrays.clone()));
                let r = w.block(out, body, 3);
                w.fast = None;
                r?;
                let _ = writeln!(out, "        }} else {{");
                w.block(out, body, 3)?;
                let _ = writeln!(out, "        }}");
                Ok(())
            },
        )
    }

    /// A loop over the flat space of the (collapsed) `levels`, innermost fastest: iterations
    /// `first`, `first + stride`, ... (both `u32` expressions), each setting the loop variables
    /// and running `body`. `tag` names its variables. As the flat grid loop, it counts in `u32`
    /// over chunks of 2^31 iterations where trip counts are 64-bit, and reports a loop the
    /// driver cut short.
    fn strided(
        &mut self,
        out: &mut String,
        levels: &[LoopLevel],
        tag: &str,
        first: &str,
        stride: &str,
        body: &mut dyn FnMut(&mut Self, &mut String) -> Result<()>,
    ) -> Result<()> {
        let uty = self.uty();
        let trips: Vec<String> = (0..levels.len())
            .map(|i| format!("acc_trips_{tag}{i}"))
            .collect();
        for (lv, t) in levels.iter().zip(&trips) {
            let e = self.expr(lv.trips)?;
            let _ = writeln!(out, "    let {t}: {uty} = {e};");
        }
        let total = format!("acc_trips_{tag}");
        let _ = writeln!(out, "    let {total}: {uty} = {};", trips.join(" * "));
        let (k, end) = (format!("acc_k_{tag}"), format!("acc_end_{tag}"));
        let wide = self.target.wide_usize();
        let flat = if wide {
            self.long_loop_helpers();
            let (c, chunks) = (format!("acc_c_{tag}"), format!("acc_chunks_{tag}"));
            let (base, left) = (format!("acc_base_{tag}"), format!("acc_left_{tag}"));
            let _ = writeln!(out, "    let {chunks}: u32 = acc_chunks_of({total});");
            let _ = writeln!(out, "    var {c}: u32 = 0u;");
            let _ = writeln!(out, "    for (; {c} < {chunks}; {c} = {c} + 1u) {{");
            let _ = writeln!(out, "    let {base}: u64 = u64({c}) << 31u;");
            let _ = writeln!(out, "    let {left}: u64 = {total} - {base};");
            let _ = writeln!(
                out,
                "    let {end}: u32 = select(u32({left}), 2147483648u, ({left} >> 31u) != 0lu);"
            );
            format!("({base} + u64({k}))")
        } else {
            let _ = writeln!(out, "    let {end}: u32 = {total};");
            k.clone()
        };
        let _ = writeln!(out, "    var {k}: u32 = {first};");
        let _ = writeln!(out, "    for (; {k} < {end}; {k} = {k} + {stride}) {{");
        let rest = format!("acc_rest_{tag}");
        // The levels' variables from the flat index: digits by division, innermost first.
        // Where the whole space fits 32 bits, in 32-bit arithmetic: faster, and it keeps 64-bit
        // division out of the shader (NVIDIA's Vulkan driver has miscompiled 64-bit integer
        // code beside it).
        let split = |w: &mut Self, out: &mut String, rest: &str, word: &str, pad: &str| -> Result<()> {
            if levels.len() > 1 {
                let _ = writeln!(out, "{pad}var {rest}: {word} = {word}({flat});");
            }
            for (i, lv) in levels.iter().enumerate().rev() {
                let ty = w.ty(w.k.function.locals[lv.var as usize].ty)?;
                let (start, step) = (w.expr(lv.start)?, w.expr(lv.step)?);
                if i == 0 {
                    // The outermost level takes what is left: no division.
                    let k = if levels.len() > 1 { rest.to_string() } else { flat.clone() };
                    let _ = writeln!(out, "{pad}l{} = {start} + {ty}({k}) * {step};", lv.var);
                } else {
                    let t = format!("{word}({})", trips[i]);
                    let _ = writeln!(
                        out,
                        "{pad}l{} = {start} + {ty}({rest} % {t}) * {step};",
                        lv.var
                    );
                    let _ = writeln!(out, "{pad}{rest} = {rest} / {t};");
                }
            }
            Ok(())
        };
        if wide && levels.len() > 1 {
            let _ = writeln!(out, "        if (({total} >> 32u) == 0lu) {{");
            split(self, out, &format!("{rest}32"), "u32", "            ")?;
            let _ = writeln!(out, "        }} else {{");
            split(self, out, &rest, uty, "            ")?;
            let _ = writeln!(out, "        }}");
        } else {
            split(self, out, &rest, uty, "        ")?;
        }
        body(self, out)?;
        let _ = writeln!(out, "    }}");
        if self.target.loop_limit.is_some() {
            self.loop_cut_helper();
            let _ = writeln!(out, "    if ({k} < {end}) {{ acc_loop_cut(); }}");
        }
        if wide {
            let _ = writeln!(out, "    }}");
            if self.target.loop_limit.is_some() {
                let _ = writeln!(
                    out,
                    "    if (acc_c_{tag} < acc_chunks_{tag}) {{ acc_loop_cut(); }}"
                );
            }
        }
        Ok(())
    }

    fn declare_locals(&mut self, out: &mut String) -> Result<()> {
        for (i, l) in self.k.function.locals.iter().enumerate() {
            let ty = self.ty(l.ty).map_err(|e| annotate(e, &l.name))?;
            match l.len {
                Some(len) => {
                    let _ = writeln!(out, "    var l{i}: array<{ty}, {len}>;");
                }
                None => {
                    let _ = writeln!(out, "    var l{i}: {ty};");
                }
            }
        }
        Ok(())
    }

    fn entry(
        &mut self,
        n: usize,
        prelude: &[&Stmt],
        s: &Stmt,
        slots: &[usize],
        load: &str,
    ) -> Result<String> {
        let Stmt::For {
            levels,
            reductions,
            private: _,
            body,
            ..
        } = s
        else {
            return Err(unsupported(
                "internal error: an entry point without its loop",
            ));
        };
        let mut out = String::new();
        let _ = writeln!(out, "@compute @workgroup_size({WORKGROUP_SIZE})");
        let _ = writeln!(
            out,
            "fn {}(@builtin(global_invocation_id) acc_gid: vec3<u32>, @builtin(local_invocation_index) acc_lid: u32, @builtin(workgroup_id) acc_wg: vec3<u32>, @builtin(num_workgroups) acc_nwg: vec3<u32>) {{",
            self.k.entry_name(n)
        );
        self.declare_locals(&mut out)?;
        out.push_str(load);
        for st in prelude {
            self.stmt(&mut out, st, 1)?;
        }
        for r in reductions {
            let l = &self.k.function.locals[r.local as usize];
            let id = identity(r.op, l.ty, self.target)?;
            match l.len {
                Some(n) => {
                    let _ = writeln!(out, "    for (var acc_e: u32 = 0u; acc_e < {n}u; acc_e = acc_e + 1u) {{ l{}[acc_e] = {id}; }}", r.local);
                }
                None => {
                    let _ = writeln!(out, "    l{} = {id};", r.local);
                }
            }
        }
        match s.gang_phases(&self.k.function) {
            // Each iteration of the outer loop on one workgroup, whose invocations share the
            // inner vector loop's iterations (DESIGN.md 6: gang to workgroup, vector to
            // invocation); the workgroup combines the loop's reductions into locals of the
            // iteration, and its first invocation runs the code after the loop.
            Some(phases) => {
                let Stmt::For {
                    levels: inner_levels,
                    body: inner_body,
                    ..
                } = &*phases.vector
                else {
                    unreachable!("gang_phases gives a loop")
                };
                self.strided(
                    &mut out,
                    levels,
                    "g",
                    "acc_wg.x",
                    "acc_nwg.x",
                    &mut |w, out| {
                        for st in &phases.pre {
                            w.stmt(out, st, 2)?;
                        }
                        // Each invocation's part of a workgroup reduction starts at the
                        // identity; the value before the loop joins the workgroup's result.
                        for (i, r) in phases.block_reductions.iter().enumerate() {
                            let ty = w.k.function.locals[r.local as usize].ty;
                            let id = identity(r.op, ty, w.target)?;
                            let _ = writeln!(out, "        let acc_keep_{i} = l{};", r.local);
                            let _ = writeln!(out, "        l{} = {id};", r.local);
                        }
                        let stride = format!("{WORKGROUP_SIZE}u");
                        w.strided(out, inner_levels, "v", "acc_lid", &stride, &mut |w, out| {
                            w.block(out, inner_body, 3)
                        })?;
                        for (i, r) in phases.block_reductions.iter().enumerate() {
                            w.workgroup_allreduce(out, n, i, *r, &format!("acc_keep_{i}"))?;
                        }
                        if !phases.post.is_empty() {
                            let _ = writeln!(out, "        if (acc_lid == 0u) {{");
                            for st in &phases.post {
                                w.stmt(out, st, 3)?;
                            }
                            let _ = writeln!(out, "        }}");
                        }
                        Ok(())
                    },
                )?;
            }
            None => {
                // A small array of 32-bit integers the loop only adds (ors, xors) into
                // atomically: each workgroup combines its updates in workgroup memory first.
                let private = acc_core::ir::privatize::atomic_targets(self.k, s)
                    .into_iter()
                    .find(|p| {
                        self.packed(p.array, None).is_none()
                            && self.k.access(p.array, None).is_some_and(|a| {
                                matches!(a.ty, Scalar::U32 | Scalar::I32) && a.stride == 4
                            })
                    });
                if let Some(p) = private {
                    self.privatize_begin(&mut out, n, p)?;
                }
                self.flat_grid(&mut out, levels, body)?;
                if let Some(p) = private {
                    self.privatize_end(&mut out, n, p)?;
                }
            }
        }
        for (r, (red, slot)) in reductions.iter().zip(slots).enumerate() {
            let ty = self.k.function.locals[red.local as usize].ty;
            let sh = format!("acc_shared_{n}_{r}");
            // Arrays reduce element by element, each through the same shared memory.
            let (element, partial, pad) = match self.k.function.locals[red.local as usize].len {
                Some(n) => {
                    let _ = writeln!(
                        out,
                        "    for (var acc_e: u32 = 0u; acc_e < {n}u; acc_e = acc_e + 1u) {{"
                    );
                    (
                        format!("l{}[acc_e]", red.local),
                        format!("acc_wg.x * {n}u + acc_e"),
                        "        ",
                    )
                }
                None => (format!("l{}", red.local), "acc_wg.x".to_string(), "    "),
            };
            self.workgroup_tree(&mut out, pad, &sh, red.op, ty, &element);
            let _ = writeln!(
                out,
                "{pad}if (acc_lid == 0u) {{ acc_partials_{slot}[{partial}] = {sh}[0]; }}"
            );
            if pad.len() > 4 {
                // The next element reuses the shared memory once everyone has read it.
                let _ = writeln!(out, "        workgroupBarrier();");
                let _ = writeln!(out, "    }}");
            }
        }
        let _ = writeln!(out, "}}");
        Ok(out)
    }

    /// The workgroup's copy of array `p` in workgroup memory, where it fits: zeroed, then a
    /// barrier; atomic updates of `p` go to it from here on.
    fn privatize_begin(
        &mut self,
        out: &mut String,
        entry: usize,
        p: acc_core::ir::privatize::Privatized,
    ) -> Result<()> {
        let a = p.array;
        let elem = self.k.access(a, None).map_or(Scalar::U32, |x| x.ty);
        let t = if elem == Scalar::I32 { "i32" } else { "u32" };
        let decl = format!(
            "var<workgroup> acc_priv_{entry}: array<atomic<{t}>, {WORKGROUP_PRIVATE}>;\n"
        );
        if !self.helpers.contains(&decl) {
            self.helpers.push_str(&decl);
        }
        // (Array lengths travel as `u32`.)
        let (fits, len) = (
            format!("(params.n{a} <= {WORKGROUP_PRIVATE}u)"),
            format!("params.n{a}"),
        );
        let zero = if t == "i32" { "0i" } else { "0u" };
        let _ = writeln!(out, "    let acc_fits_{a} = {fits};");
        let _ = writeln!(out, "    let acc_plen_{a}: u32 = select(0u, {len}, acc_fits_{a});");
        let _ = writeln!(out, "    for (var acc_j: u32 = acc_lid; acc_j < acc_plen_{a}; acc_j = acc_j + {WORKGROUP_SIZE}u) {{ atomicStore(&acc_priv_{entry}[acc_j], {zero}); }}");
        let _ = writeln!(out, "    workgroupBarrier();");
        self.privatized = Some((a, entry));
        Ok(())
    }

    /// Ends the workgroup's copy of `p`: a barrier, then each changed element is combined
    /// into the array with one atomic.
    fn privatize_end(
        &mut self,
        out: &mut String,
        entry: usize,
        p: acc_core::ir::privatize::Privatized,
    ) -> Result<()> {
        self.privatized = None;
        let a = p.array;
        let elem = self.k.access(a, None).map_or(Scalar::U32, |x| x.ty);
        let zero = if elem == Scalar::I32 { "0i" } else { "0u" };
        let f = private_atomic(p.op);
        let _ = writeln!(out, "    workgroupBarrier();");
        let _ = writeln!(out, "    for (var acc_j: u32 = acc_lid; acc_j < acc_plen_{a}; acc_j = acc_j + {WORKGROUP_SIZE}u) {{");
        let _ = writeln!(out, "        let acc_pv = atomicLoad(&acc_priv_{entry}[acc_j]);");
        let _ = writeln!(out, "        if (acc_pv != {zero}) {{ _ = {f}(&p{a}[params.b{a} + acc_j], acc_pv); }}");
        let _ = writeln!(out, "    }}");
        Ok(())
    }

    /// `element` of every invocation combined by `op` in workgroup array `sh`, a tree in a
    /// fixed order (deterministic): the result is in `sh[0]`, as a word, once it returns.
    fn workgroup_tree(
        &mut self,
        out: &mut String,
        pad: &str,
        sh: &str,
        op: ReduceOp,
        ty: Scalar,
        element: &str,
    ) {
        let _ = writeln!(out, "{pad}{sh}[acc_lid] = {};", as_word(ty, element));
        let _ = writeln!(out, "{pad}workgroupBarrier();");
        let _ = writeln!(
            out,
            "{pad}for (var acc_s: u32 = {}u; acc_s > 0u; acc_s = acc_s >> 1u) {{",
            WORKGROUP_SIZE / 2
        );
        let c = combine(
            op,
            ty,
            &from_word(ty, &format!("{sh}[acc_lid]")),
            &from_word(ty, &format!("{sh}[acc_lid + acc_s]")),
            self.by_halves(ty),
        );
        let _ = writeln!(
            out,
            "{pad}    if (acc_lid < acc_s) {{ {sh}[acc_lid] = {}; }}",
            as_word(ty, &c)
        );
        let _ = writeln!(out, "{pad}    workgroupBarrier();");
        let _ = writeln!(out, "{pad}}}");
    }

    /// Combines local `r.local` over the workgroup's invocations (a tree in workgroup memory,
    /// in a fixed order: deterministic) into `keep op total`, in every invocation. Every
    /// invocation must reach it; it leaves the workgroup memory free for the next use.
    fn workgroup_allreduce(
        &mut self,
        out: &mut String,
        entry: usize,
        i: usize,
        r: Reduction,
        keep: &str,
    ) -> Result<()> {
        let ty = self.k.function.locals[r.local as usize].ty;
        let wty = if ty == Scalar::Bool {
            "u32"
        } else {
            storage_type(ty, self.target)?
        };
        let sh = format!("acc_gang_{entry}_{i}");
        let decl = format!("var<workgroup> {sh}: array<{wty}, {WORKGROUP_SIZE}>;\n");
        if !self.helpers.contains(&decl) {
            self.helpers.push_str(&decl);
        }
        let l = r.local;
        self.workgroup_tree(out, "        ", &sh, r.op, ty, &format!("l{l}"));
        let halves = self.by_halves(ty);
        let total = combine(r.op, ty, keep, &from_word(ty, &format!("{sh}[0]")), halves);
        let _ = writeln!(out, "        l{l} = {total};");
        let _ = writeln!(out, "        workgroupBarrier();");
        Ok(())
    }

    fn block(&mut self, out: &mut String, b: &[Stmt], depth: usize) -> Result<()> {
        for s in b {
            self.stmt(out, s, depth)?;
        }
        Ok(())
    }

    fn stmt(&mut self, out: &mut String, s: &Stmt, depth: usize) -> Result<()> {
        let pad = "    ".repeat(depth);
        match s {
            Stmt::Assign { local, value } => {
                let v = self.expr(*value)?;
                let _ = writeln!(out, "{pad}l{local} = {v};");
            }
            Stmt::AssignElem {
                local,
                index,
                value,
            } => {
                let (i, v) = (self.local_index(*index)?, self.expr(*value)?);
                let _ = writeln!(out, "{pad}l{local}[{i}] = {v};");
            }
            Stmt::Store {
                array,
                field,
                index,
                value,
            } => {
                let member = self.member(*array, *field)?;
                let (i, mut v) = (self.expr(*index)?, self.expr(*value)?);
                if let Some(p) = self.packed(*array, *field) {
                    // A compare-exchange on the field's word (see `Packed`).
                    let place = format!(
                        "p{array}[params.b{array} + {}]{member}",
                        self.index32("acc_i", false)
                    );
                    let check = if self.k.unchecked {
                        "true".to_string()
                    } else {
                        format!("acc_in_bounds({array}u, acc_i, params.n{array})")
                    };
                    self.bounds_helper();
                    let _ = writeln!(
                        out,
                        "{pad}{{ let acc_i = {i}; let acc_v = {v}; if ({check}) {{ loop {{"
                    );
                    let _ = writeln!(out, "{pad}    let acc_old_w = atomicLoad(&{place});");
                    let _ = writeln!(out, "{pad}    if (atomicCompareExchangeWeak(&{place}, acc_old_w, {}).exchanged) {{ break; }}", p.insert("acc_old_w", "acc_v"));
                    let _ = writeln!(out, "{pad}}} }} }}");
                    return Ok(());
                }
                if self.types[value.index()] == Scalar::Bool {
                    v = format!("select(0u, 1u, {v})");
                }
                if self.atomic.contains(&(*array, *field)) {
                    let elem = self.types[value.index()];
                    let w = encode(elem, &v);
                    let ai = self.index32("acc_i", false);
                    let _ = writeln!(out, "{pad}{{ let acc_i = {i}; if (acc_in_bounds({array}u, acc_i, params.n{array})) {{ atomicStore(&p{array}[params.b{array} + {ai}]{member}, {w}); }} }}");
                    self.bounds_helper();
                } else if self.k.unchecked || self.fast_index(*array, *index) {
                    let ai = self.index32(&i, self.is_constant(*index));
                    let _ = writeln!(out, "{pad}p{array}[params.b{array} + {ai}]{member} = {v};");
                } else {
                    let ai = self.index32("acc_i", false);
                    let _ = writeln!(out, "{pad}{{ let acc_i = {i}; if (acc_in_bounds({array}u, acc_i, params.n{array})) {{ p{array}[params.b{array} + {ai}]{member} = {v}; }} }}");
                    self.bounds_helper();
                }
            }
            Stmt::If {
                cond,
                accept,
                reject,
            } => {
                let c = self.expr(*cond)?;
                let _ = writeln!(out, "{pad}if ({c}) {{");
                self.block(out, accept, depth + 1)?;
                if !reject.is_empty() {
                    let _ = writeln!(out, "{pad}}} else {{");
                    self.block(out, reject, depth + 1)?;
                }
                let _ = writeln!(out, "{pad}}}");
            }
            Stmt::For { levels, body, .. } => {
                // Inside a parallel loop every loop runs sequentially in its invocation; the
                // levels of a collapsed nest as the nested loops they were written as.
                self.sequential_loop(out, levels, body, depth)?;
            }
            Stmt::Loop { body } => match self.target.loop_limit {
                None => {
                    let _ = writeln!(out, "{pad}loop {{");
                    self.break_flags.push(None);
                    self.block(out, body, depth + 1)?;
                    self.break_flags.pop();
                    let _ = writeln!(out, "{pad}}}");
                }
                Some(_) => {
                    // Only a `break` leaves this loop: leaving it otherwise is the driver's cut.
                    let broke = format!("acc_broke{depth}");
                    self.loop_cut_helper();
                    let _ = writeln!(out, "{pad}{{ var {broke} = false;");
                    let _ = writeln!(out, "{pad}loop {{");
                    self.break_flags.push(Some(broke.clone()));
                    self.block(out, body, depth + 1)?;
                    self.break_flags.pop();
                    let _ = writeln!(out, "{pad}}}");
                    let _ = writeln!(out, "{pad}if (!{broke}) {{ acc_loop_cut(); }} }}");
                }
            },
            Stmt::Break => match self.break_flags.last() {
                Some(Some(flag)) => {
                    let _ = writeln!(out, "{pad}{flag} = true; break;");
                }
                _ => {
                    let _ = writeln!(out, "{pad}break;");
                }
            },
            Stmt::Continue => {
                let _ = writeln!(out, "{pad}continue;");
            }
            Stmt::Atomic {
                array,
                field,
                index,
                op,
                value,
                old,
                new,
            } => {
                self.atomic_stmt(out, &pad, (*array, *field), *index, *op, *value, *old, *new)?;
            }
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn atomic_stmt(
        &mut self,
        out: &mut String,
        pad: &str,
        (array, field): (ParamId, Option<FieldId>),
        index: Handle<Expr>,
        op: AtomicOp,
        value: Handle<Expr>,
        old: Option<LocalId>,
        new: Option<LocalId>,
    ) -> Result<()> {
        let elem =
            self.k.access(array, field).map(|a| a.ty).ok_or_else(|| {
                unsupported(format!("internal error: atomic on parameter {array}"))
            })?;
        let packed = self.packed(array, field);
        if packed.is_none() {
            atomic_word(elem, self.target)?;
        }
        let member = self.member(array, field)?;
        // How a value is read from its atomic word, and the word that holds a new value.
        let dec = |w: &str| {
            packed
                .as_ref()
                .map_or_else(|| decode(elem, w), |p| p.extract(w))
        };
        let enc = |old_w: &str, v: &str| {
            packed
                .as_ref()
                .map_or_else(|| encode(elem, v), |p| p.insert(old_w, v))
        };
        self.bounds_helper();
        let i = self.expr(index)?;
        let place = format!(
            "p{array}[params.b{array} + {}]{member}",
            self.index32("acc_i", false)
        );
        let _ = writeln!(
            out,
            "{pad}{{ let acc_i = {i}; if (acc_in_bounds({array}u, acc_i, params.n{array})) {{"
        );
        let set = |out: &mut String, local: Option<LocalId>, v: &str| {
            if let Some(l) = local {
                let _ = writeln!(out, "{pad}    l{l} = {v};");
            }
        };
        // The workgroup's copy, where the array fits in it.
        let private = match (self.privatized, op) {
            (Some((a, entry)), AtomicOp::Update(bop))
                if a == array
                    && field.is_none()
                    && matches!(bop, BinaryOp::Add | BinaryOp::BitOr | BinaryOp::BitXor) =>
            {
                let v = self.expr(value)?;
                let idx = self.index32("acc_i", false);
                let _ = writeln!(
                    out,
                    "{pad}    if (acc_fits_{a}) {{ _ = {}(&acc_priv_{entry}[{idx}], {v}); }} else {{",
                    private_atomic(bop)
                );
                true
            }
            _ => false,
        };
        match op {
            AtomicOp::Read => set(out, old, &dec(&format!("atomicLoad(&{place})"))),
            AtomicOp::Exchange if packed.is_some() => {
                let v = self.expr(value)?;
                let _ = writeln!(out, "{pad}    let acc_v = {v};");
                let _ = writeln!(out, "{pad}    loop {{");
                let _ = writeln!(out, "{pad}        let acc_old_w = atomicLoad(&{place});");
                let _ = writeln!(out, "{pad}        if (atomicCompareExchangeWeak(&{place}, acc_old_w, {}).exchanged) {{", enc("acc_old_w", "acc_v"));
                if let Some(l) = old {
                    let _ = writeln!(out, "{pad}            l{l} = {};", dec("acc_old_w"));
                }
                if let Some(l) = new {
                    let _ = writeln!(out, "{pad}            l{l} = acc_v;");
                }
                let _ = writeln!(out, "{pad}            break;");
                let _ = writeln!(out, "{pad}        }}");
                let _ = writeln!(out, "{pad}    }}");
            }
            AtomicOp::Exchange => {
                let v = self.expr(value)?;
                let _ = writeln!(
                    out,
                    "{pad}    let acc_old = atomicExchange(&{place}, {});",
                    encode(elem, &v)
                );
                set(out, old, &decode(elem, "acc_old"));
                set(out, new, &v);
            }
            AtomicOp::Update(bop) => {
                let v = self.expr(value)?;
                let _ = writeln!(out, "{pad}    let acc_v = {v};");
                let native = match bop {
                    BinaryOp::Add => Some("atomicAdd"),
                    BinaryOp::Sub => Some("atomicSub"),
                    BinaryOp::BitAnd => Some("atomicAnd"),
                    BinaryOp::BitOr => Some("atomicOr"),
                    BinaryOp::BitXor => Some("atomicXor"),
                    _ => None,
                };
                // Native read-modify-write where WGSL has it for the word type and the value
                // needs no wrapping; a compare-exchange loop otherwise.
                let exact_word = matches!(
                    elem,
                    Scalar::I32
                        | Scalar::U32
                        | Scalar::ISize
                        | Scalar::USize
                        | Scalar::I64
                        | Scalar::U64
                );
                let combined = |o: &str| {
                    let r = format!("({o} {} acc_v)", bop.symbol());
                    wrap(elem, &r).unwrap_or(r)
                };
                match native {
                    Some(f) if exact_word && packed.is_none() => {
                        let _ = writeln!(out, "{pad}    let acc_old = {f}(&{place}, acc_v);");
                        set(out, old, "acc_old");
                        set(out, new, &combined("acc_old"));
                    }
                    _ => {
                        let _ = writeln!(out, "{pad}    loop {{");
                        let _ = writeln!(out, "{pad}        let acc_old_w = atomicLoad(&{place});");
                        let _ = writeln!(out, "{pad}        let acc_old = {};", dec("acc_old_w"));
                        let _ =
                            writeln!(out, "{pad}        let acc_new = {};", combined("acc_old"));
                        let _ = writeln!(out, "{pad}        if (atomicCompareExchangeWeak(&{place}, acc_old_w, {}).exchanged) {{", enc("acc_old_w", "acc_new"));
                        if let Some(l) = old {
                            let _ = writeln!(out, "{pad}            l{l} = acc_old;");
                        }
                        if let Some(l) = new {
                            let _ = writeln!(out, "{pad}            l{l} = acc_new;");
                        }
                        let _ = writeln!(out, "{pad}            break;");
                        let _ = writeln!(out, "{pad}        }}");
                        let _ = writeln!(out, "{pad}    }}");
                    }
                }
            }
            AtomicOp::Combine(l) => {
                // The operand is an expression of the old value, which it reads from local
                // `l`: set on each try of the compare-exchange loop.
                let _ = writeln!(out, "{pad}    loop {{");
                let _ = writeln!(out, "{pad}        let acc_old_w = atomicLoad(&{place});");
                let _ = writeln!(out, "{pad}        l{l} = {};", dec("acc_old_w"));
                let _ = writeln!(out, "{pad}        let acc_new = {};", self.expr(value)?);
                let _ = writeln!(out, "{pad}        if (atomicCompareExchangeWeak(&{place}, acc_old_w, {}).exchanged) {{", enc("acc_old_w", "acc_new"));
                set(out, old, &format!("l{l}"));
                set(out, new, "acc_new");
                let _ = writeln!(out, "{pad}            break;");
                let _ = writeln!(out, "{pad}        }}");
                let _ = writeln!(out, "{pad}    }}");
            }
        }
        if private {
            let _ = writeln!(out, "{pad}    }}");
        }
        let _ = writeln!(out, "{pad}}} }}");
        Ok(())
    }

    /// An index into a private array as WGSL takes it (`u32`): a 64-bit index saturates, so
    /// that an index beyond 32 bits stays out of range.
    fn local_index(&mut self, index: Handle<Expr>) -> Result<String> {
        let i = self.expr(index)?;
        Ok(if !self.target.wide_usize() {
            i
        } else if self.is_constant(index) {
            self.u32_helper();
            format!("select(acc_u32({i}), 4294967295u, ({i} >> 32u) != 0lu)")
        } else {
            format!("select(u32({i}), 4294967295u, ({i} >> 32u) != 0lu)")
        })
    }

    /// Whether `array[index]` needs no check in the body being written (see `fast`).
    fn fast_index(&self, array: ParamId, index: Handle<Expr>) -> bool {
        match &self.fast {
            Some((var, arrays)) => {
                arrays.contains(&array) && self.k.function.exprs[index] == Expr::Local(*var)
            }
            None => false,
        }
    }

    /// The arrays that `body` indexes with exactly the local `var`.
    fn indexed_by(
        &self,
        body: &[Stmt],
        var: LocalId,
        out: &mut std::collections::BTreeSet<ParamId>,
    ) {
        let is_var = |h: Handle<Expr>| self.k.function.exprs[h] == Expr::Local(var);
        let mut exprs = Vec::new();
        for st in body {
            match st {
                Stmt::Assign { value, .. } => exprs.push(*value),
                Stmt::AssignElem { index, value, .. } => exprs.extend([*index, *value]),
                Stmt::Store {
                    array,
                    index,
                    value,
                    ..
                } => {
                    if is_var(*index) {
                        out.insert(*array);
                    }
                    exprs.extend([*index, *value]);
                }
                Stmt::If {
                    cond,
                    accept,
                    reject,
                } => {
                    exprs.push(*cond);
                    self.indexed_by(accept, var, out);
                    self.indexed_by(reject, var, out);
                }
                Stmt::For { levels, body, .. } => {
                    for lv in levels {
                        exprs.extend([lv.start, lv.step, lv.trips]);
                    }
                    self.indexed_by(body, var, out);
                }
                Stmt::Loop { body } => self.indexed_by(body, var, out),
                Stmt::Atomic { index, value, .. } => exprs.extend([*index, *value]),
                Stmt::Break | Stmt::Continue => {}
            }
        }
        while let Some(h) = exprs.pop() {
            match &self.k.function.exprs[h] {
                Expr::Load { array, index, .. } => {
                    if is_var(*index) {
                        out.insert(*array);
                    }
                    exprs.push(*index);
                }
                Expr::LocalElem { index, .. } => exprs.push(*index),
                Expr::Unary(_, a) | Expr::Cast(a, _) | Expr::Bitcast(a, _) => exprs.push(*a),
                Expr::Binary(_, a, b) => exprs.extend([*a, *b]),
                Expr::Select {
                    cond,
                    accept,
                    reject,
                } => exprs.extend([*cond, *accept, *reject]),
                Expr::Math(_, args) => exprs.extend(args.iter().copied()),
                Expr::Literal(_)
                | Expr::Param(_)
                | Expr::Local(_)
                | Expr::Len(_)
                | Expr::GangIndex => {}
            }
        }
    }

    /// The member access after an element of `array` for `field` (`.fK`; nothing for an
    /// array of scalars), where WGSL can hold the field.
    /// Where a narrow field of an array of structs sits (None for other fields and arrays).
    fn packed(&self, array: ParamId, field: Option<FieldId>) -> Option<Packed> {
        field?;
        let a = self.k.access(array, field)?;
        is_packed(a.ty).then(|| Packed {
            word: a.offset / 4,
            shift: (a.offset % 4) * 8,
            bits: a.ty.size() * 8,
            ty: a.ty,
            atomic: self.packed_atomic.contains(&array),
        })
    }

    fn member(&self, array: ParamId, field: Option<FieldId>) -> Result<String> {
        if let Some(p) = self.packed(array, field) {
            return Ok(format!(".w{}", p.word));
        }
        let Some(f) = field else {
            return Ok(String::new());
        };
        let p = &self.k.params[array as usize];
        let (
            ParamKind::Array {
                elem: Elem::Struct(layout),
                ..
            },
            Some(sf),
        ) = (&p.kind, self.k.access(array, field))
        else {
            return Err(unsupported(format!(
                "internal error: field {f} of parameter {array}"
            )));
        };
        if struct_member_type(sf.ty, self.target).is_none() {
            let name = layout.fields[f as usize].name;
            let types = if self.target.wide_usize() {
                "f32, i32, u32, f64, i64, u64, isize and usize"
            } else {
                "f32, i32, u32, f64, i64 and u64"
            };
            return Err(unsupported(format!("the field `{name}` of `{}` (in `{}`) is {}; kernels there access struct fields of the types {types}", layout.name, p.name, sf.ty)));
        }
        Ok(format!(".f{f}"))
    }

    /// Trip counts of 64-bit loops as u32 loop counters: `acc_trips32` for a loop of one
    /// invocation, `acc_chunks_of` for the grid loop's chunks of 2^31 iterations. A count beyond
    /// them (2^32 iterations in one invocation, 2^63 over the grid) sets status 3 and runs nothing.
    fn long_loop_helpers(&mut self) {
        if self.helpers.contains("fn acc_trips32") {
            return;
        }
        self.helpers.push_str(
            "fn acc_trips32(n: u64) -> u32 {\n\
             \x20   if ((n >> 32u) != 0lu) { atomicCompareExchangeWeak(&acc_status[0], 0u, 3u); return 0u; }\n\
             \x20   return u32(n);\n\
             }\n\
             fn acc_chunks_of(n: u64) -> u32 {\n\
             \x20   let c = (n >> 31u) + select(0lu, 1lu, (n & 2147483647lu) != 0lu);\n\
             \x20   return acc_trips32(c);\n\
             }\n",
        );
    }

    /// Whether values of type `t` are ordered on their 32-bit halves (see
    /// [`Target::int64_compare_by_halves`]); if so, the helpers that do it are written.
    fn by_halves(&mut self, t: Scalar) -> bool {
        let wide = matches!(device_scalar(t, self.target), Scalar::U64 | Scalar::I64);
        if !(wide && self.target.int64_compare_by_halves) {
            return false;
        }
        if !self.helpers.contains("fn acc_lt_u64(") {
            for (s, high) in [("u64", "u32"), ("i64", "i32")] {
                let _ = write!(
                    self.helpers,
                    "fn acc_lt_{s}(a: {s}, b: {s}) -> bool {{\n\
                     \x20   let ah = {high}(a >> 32u);\n\
                     \x20   let bh = {high}(b >> 32u);\n\
                     \x20   return (ah < bh) || ((ah == bh) && (u32(a) < u32(b)));\n\
                     }}\n\
                     fn acc_min_{s}(a: {s}, b: {s}) -> {s} {{\n    return select(a, b, acc_lt_{s}(b, a));\n}}\n\
                     fn acc_max_{s}(a: {s}, b: {s}) -> {s} {{\n    return select(a, b, acc_lt_{s}(a, b));\n}}\n"
                );
            }
        }
        true
    }

    /// `a < b` on values of type `t`, as WGSL (on halves where [`Writer::by_halves`] says).
    fn less(&mut self, t: Scalar, a: &str, b: &str) -> String {
        if self.by_halves(t) {
            format!(
                "acc_lt_{}({a}, {b})",
                int64_name(device_scalar(t, self.target))
            )
        } else {
            format!("({a} < {b})")
        }
    }

    fn loop_cut_helper(&mut self) {
        if self.helpers.contains("fn acc_loop_cut") {
            return;
        }
        self.helpers.push_str(
            "fn acc_loop_cut() {\n    atomicCompareExchangeWeak(&acc_status[0], 0u, 2u);\n}\n",
        );
    }

    fn bounds_helper(&mut self) {
        if self.helpers.contains("fn acc_in_bounds") {
            return;
        }
        // The first out-of-range access of a launch is recorded; the host turns it into the
        // same panic as on the other devices (DESIGN.md 4.2).
        // A 64-bit index is compared on its halves (see `Target::int64_compare_by_halves`).
        let (uty, high, within) = if self.target.wide_usize() {
            ("u64", "u32(i >> 32u)", "(i >> 32u) == 0lu && u32(i) < len")
        } else {
            ("u32", "0u", "i < len")
        };
        let _ = writeln!(
            self.helpers,
            "fn acc_in_bounds(param: u32, i: {uty}, len: u32) -> bool {{\n\
             \x20   if ({within}) {{ return true; }}\n\
             \x20   if (atomicCompareExchangeWeak(&acc_status[0], 0u, 1u).exchanged) {{\n\
             \x20       atomicStore(&acc_status[1], param);\n\
             \x20       atomicStore(&acc_status[2], u32(i));\n\
             \x20       atomicStore(&acc_status[3], len);\n\
             \x20       atomicStore(&acc_status[4], {high});\n\
             \x20   }}\n\
             \x20   return false;\n\
             }}",
        );
    }

    /// A loop nest run in order by one invocation: one WGSL loop per level, outermost first.
    fn sequential_loop(
        &mut self,
        out: &mut String,
        levels: &[LoopLevel],
        body: &Block,
        depth: usize,
    ) -> Result<()> {
        let pad = "    ".repeat(depth);
        let Some((lv, inner)) = levels.split_first() else {
            return self.block(out, body, depth);
        };
        let ty = self.ty(self.k.function.locals[lv.var as usize].ty)?;
        let (start, step, trips) = (
            self.expr(lv.start)?,
            self.expr(lv.step)?,
            self.expr(lv.trips)?,
        );
        let k = format!("acc_k{depth}");
        // The counter is a u32 (NVIDIA's Vulkan driver hung on loops counting in u64):
        // a 64-bit trip count beyond it stops the launch with an error.
        let trips = if self.target.wide_usize() {
            self.long_loop_helpers();
            format!("acc_trips32({trips})")
        } else {
            trips
        };
        let rest = |w: &mut Self, out: &mut String| {
            if inner.is_empty() {
                w.block(out, body, depth + 1)
            } else {
                w.sequential_loop(out, inner, body, depth + 1)
            }
        };
        match self.target.loop_limit {
            None => {
                // The trip count is evaluated once, before the loop, as Rust does.
                let n = format!("acc_n{depth}");
                let _ = writeln!(out, "{pad}{{ let {n}: u32 = {trips};");
                let _ = writeln!(
                    out,
                    "{pad}for (var {k}: u32 = 0u; {k} < {n}; {k} = {k} + 1u) {{"
                );
                let _ = writeln!(out, "{pad}    l{} = {start} + {ty}({k}) * {step};", lv.var);
                self.break_flags.push(None);
                let r = rest(self, out);
                self.break_flags.pop();
                r?;
                let _ = writeln!(out, "{pad}}} }}");
            }
            Some(_) => {
                // The driver may end the loop early: a loop that stopped before its
                // trip count without a `break` is reported, never taken as done.
                let (broke, n) = (format!("acc_broke{depth}"), format!("acc_n{depth}"));
                self.loop_cut_helper();
                let _ = writeln!(
                    out,
                    "{pad}{{ var {broke} = false; let {n}: u32 = {trips}; var {k}: u32 = 0u;"
                );
                let _ = writeln!(out, "{pad}for (; {k} < {n}; {k} = {k} + 1u) {{");
                let _ = writeln!(out, "{pad}    l{} = {start} + {ty}({k}) * {step};", lv.var);
                self.break_flags.push(Some(broke.clone()));
                let r = rest(self, out);
                self.break_flags.pop();
                r?;
                let _ = writeln!(out, "{pad}}}");
                let _ = writeln!(
                    out,
                    "{pad}if (!{broke} && {k} < {n}) {{ acc_loop_cut(); }} }}"
                );
            }
        }
        Ok(())
    }

    fn expr(&mut self, h: Handle<Expr>) -> Result<String> {
        let f = &self.k.function;
        let ty = self.types[h.index()];
        Ok(match &f.exprs[h] {
            Expr::Literal(l) => literal(*l, self.target)?,
            Expr::Param(p) => {
                if ty == Scalar::Bool {
                    format!("(params.p{p} != 0u)")
                } else {
                    format!("params.p{p}")
                }
            }
            Expr::Local(l) => format!("l{l}"),
            Expr::LocalElem { local, index } => format!("l{local}[{}]", self.local_index(*index)?),
            Expr::Load {
                array,
                field,
                index,
            } => {
                let member = self.member(*array, *field)?;
                let i = self.expr(*index)?;
                let i32 = self.index32(&i, self.is_constant(*index));
                let place = if self.k.unchecked || self.fast_index(*array, *index) {
                    format!("p{array}[params.b{array} + {i32}]{member}")
                } else {
                    self.bounds_helper();
                    // Out of range: the access is recorded and reads element 0 (or zero).
                    format!("p{array}[params.b{array} + select(0u, {i32}, acc_in_bounds({array}u, {i}, params.n{array}))]{member}")
                };
                if let Some(p) = self.packed(*array, *field) {
                    p.extract(&if p.atomic {
                        format!("atomicLoad(&{place})")
                    } else {
                        place
                    })
                } else if self.atomic.contains(&(*array, *field)) {
                    decode(ty, &format!("atomicLoad(&{place})"))
                } else if ty == Scalar::Bool {
                    format!("({place} != 0u)")
                } else {
                    place
                }
            }
            Expr::Len(a) => self.len_of(*a),
            Expr::GangIndex => format!("{}(acc_wg.x)", self.uty()),
            Expr::Unary(UnaryOp::Neg, a) => {
                let x = format!("(-{})", self.expr(*a)?);
                wrap(ty, &x).unwrap_or(x)
            }
            Expr::Unary(UnaryOp::Not, a) => {
                let inner = self.expr(*a)?;
                if ty == Scalar::Bool {
                    format!("(!{inner})")
                } else {
                    format!("(~{inner})")
                }
            }
            Expr::Binary(op, a, b) => {
                let (x, y) = (self.expr(*a)?, self.expr(*b)?);
                let operand = self.types[a.index()];
                let r = match op {
                    BinaryOp::And => format!("({x} && {y})"),
                    BinaryOp::Or => format!("({x} || {y})"),
                    // A literal count is written as a `u32` literal: naga does not convert
                    // 64-bit constants.
                    BinaryOp::Shl | BinaryOp::Shr => match &self.k.function.exprs[*b] {
                        Expr::Literal(Literal::Int(_, n)) => {
                            format!("({x} {} {}u)", op.symbol(), *n as u32)
                        }
                        _ => format!("({x} {} u32({y}))", op.symbol()),
                    },
                    BinaryOp::Rem if operand.is_float() => {
                        format!("({x} - trunc({x} / {y}) * {y})")
                    }
                    BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge
                        if self.by_halves(operand) =>
                    {
                        match op {
                            BinaryOp::Lt => self.less(operand, &x, &y),
                            BinaryOp::Gt => self.less(operand, &y, &x),
                            BinaryOp::Le => format!("(!{})", self.less(operand, &y, &x)),
                            _ => format!("(!{})", self.less(operand, &x, &y)),
                        }
                    }
                    // WGSL has no `^` on bool.
                    BinaryOp::BitXor if operand == Scalar::Bool => format!("({x} != {y})"),
                    _ => format!("({x} {} {y})", op.symbol()),
                };
                match op {
                    BinaryOp::Add
                    | BinaryOp::Sub
                    | BinaryOp::Mul
                    | BinaryOp::Shl
                    | BinaryOp::Div => wrap(ty, &r).unwrap_or(r),
                    _ => r,
                }
            }
            Expr::Select {
                cond,
                accept,
                reject,
            } => {
                format!(
                    "select({}, {}, {})",
                    self.expr(*reject)?,
                    self.expr(*accept)?,
                    self.expr(*cond)?
                )
            }
            Expr::Cast(a, t) => {
                let from = self.types[a.index()];
                let inner = self.expr(*a)?;
                let to = self.ty(*t)?;
                let (lo, hi) = match t {
                    Scalar::I8 => (-128.0, 127.0),
                    Scalar::I16 => (-32768.0, 32767.0),
                    Scalar::U8 => (0.0, 255.0),
                    Scalar::U16 => (0.0, 65535.0),
                    _ => (0.0, 0.0),
                };
                let (wide_from, wide_to) = (self.param_size(from) == 8, self.param_size(*t) == 8);
                let same = from != Scalar::Bool && self.ty(from)? == to && wrap(*t, "x").is_none();
                let converted = if same {
                    // A cast between types the device holds alike (`usize` and `u64`) is no
                    // conversion at all (NVIDIA's Vulkan driver misread a u64 converted to u64).
                    inner
                } else if from.is_int()
                    && t.is_int()
                    && !wide_from
                    && wide_to
                    && from.is_signed() != t.is_signed()
                {
                    // Widening extends by the source's signedness (Rust's `as`); naga's
                    // conversion would extend by the target's.
                    let mid = if from.is_signed() { "i64" } else { "u64" };
                    format!("{to}({mid}({inner}))")
                } else if from == Scalar::Bool && *t != Scalar::Bool {
                    format!("select({to}(0), {to}(1), {inner})")
                } else if from.is_float() && hi > 0.0 {
                    // Rust's float-to-int `as` saturates at the type's bounds.
                    let fty = self.ty(from)?;
                    format!("{to}(clamp({inner}, {fty}({lo:.1}), {fty}({hi:.1})))")
                } else {
                    format!("{to}({inner})")
                };
                wrap(*t, &converted).unwrap_or(converted)
            }
            Expr::Bitcast(a, t) => {
                let inner = self.expr(*a)?;
                format!("bitcast<{}>({inner})", self.ty(*t)?)
            }
            Expr::Math(m, args) => {
                let a: Vec<String> = args.iter().map(|x| self.expr(*x)).collect::<Result<_>>()?;
                // WGSL has the transcendental functions for f32 only: f64 calls the fdlibm
                // versions of `math64`.
                if let (Scalar::F64, Some(f)) = (ty, math64::function(*m)) {
                    if !self.helpers.contains("fn acc_exp64(") {
                        self.helpers.push_str(&math64::helpers());
                    }
                    return Ok(format!("{f}({})", a.join(", ")));
                }
                self.math(*m, ty, &a)
            }
        })
    }

    fn math(&mut self, m: MathFn, ty: Scalar, a: &[String]) -> String {
        let x = &a[0];
        let wty = wgsl_type(ty, self.target).unwrap_or("f32");
        match m {
            MathFn::Abs => format!("abs({x})"),
            MathFn::Min | MathFn::Max | MathFn::Clamp if self.by_halves(ty) => {
                let s = int64_name(device_scalar(ty, self.target));
                match m {
                    MathFn::Min => format!("acc_min_{s}({x}, {})", a[1]),
                    MathFn::Max => format!("acc_max_{s}({x}, {})", a[1]),
                    _ => format!("acc_min_{s}(acc_max_{s}({x}, {}), {})", a[1], a[2]),
                }
            }
            MathFn::Min => format!("min({x}, {})", a[1]),
            MathFn::Max => format!("max({x}, {})", a[1]),
            MathFn::Clamp => format!("clamp({x}, {}, {})", a[1], a[2]),
            MathFn::Sqrt => format!("sqrt({x})"),
            MathFn::Cbrt => format!("(sign({x}) * pow(abs({x}), {wty}(1.0) / {wty}(3.0)))"),
            MathFn::Exp => format!("exp({x})"),
            MathFn::Exp2 => format!("exp2({x})"),
            MathFn::Ln => format!("log({x})"),
            MathFn::Log2 => format!("log2({x})"),
            MathFn::Log10 => format!("(log({x}) / log({wty}(10.0)))"),
            MathFn::Sin => format!("sin({x})"),
            MathFn::Cos => format!("cos({x})"),
            MathFn::Tan => format!("tan({x})"),
            MathFn::Asin => format!("asin({x})"),
            MathFn::Acos => format!("acos({x})"),
            MathFn::Atan => format!("atan({x})"),
            MathFn::Atan2 => format!("atan2({x}, {})", a[1]),
            MathFn::Sinh => format!("sinh({x})"),
            MathFn::Cosh => format!("cosh({x})"),
            MathFn::Tanh => format!("tanh({x})"),
            MathFn::Floor => format!("floor({x})"),
            MathFn::Ceil => format!("ceil({x})"),
            // Rust rounds half away from zero; WGSL's round() rounds half to even.
            MathFn::Round => format!("select(ceil({x} - {wty}(0.5)), floor({x} + {wty}(0.5)), {x} >= {wty}(0.0))"),
            MathFn::Trunc => format!("trunc({x})"),
            MathFn::Fract => format!("({x} - trunc({x}))"),
            MathFn::Powf => format!("pow({x}, {})", a[1]),
            MathFn::Powi => {
                self.powi_helper(wty);
                format!("acc_powi_{wty}({x}, {})", a[1])
            }
            MathFn::Pow => {
                self.powi_helper(wty);
                format!("acc_powi_{wty}({x}, i32({}))", a[1])
            }
            MathFn::MulAdd => format!("fma({x}, {}, {})", a[1], a[2]),
            MathFn::Hypot => format!("sqrt({x} * {x} + {} * {})", a[1], a[1]),
            // -0.0 has the sign of its reciprocal; NaN stays NaN (as std).
            MathFn::Signum if ty.is_float() => format!(
                "select(select({wty}(1.0), {wty}(-1.0), {x} < {wty}(0.0) || ({x} == {wty}(0.0) && {wty}(1.0) / {x} < {wty}(0.0))), {x}, {x} != {x})"
            ),
            MathFn::Signum => format!("sign({x})"),
            MathFn::Recip => format!("({wty}(1.0) / {x})"),
            MathFn::CountOnes32 => format!("countOneBits({x})"),
            MathFn::LeadingZeros32 => format!("countLeadingZeros({x})"),
            MathFn::TrailingZeros32 => format!("countTrailingZeros({x})"),
            MathFn::ReverseBits32 => format!("reverseBits({x})"),
        }
    }

    fn powi_helper(&mut self, wty: &str) {
        let name = format!("fn acc_powi_{wty}(");
        if self.helpers.contains(&name) {
            return;
        }
        // Exponentiation by squaring: exact for integers (wrapping), and defined for negative
        // float bases, unlike pow(); a negative exponent (floats only) takes the reciprocal.
        let negative = if wty.starts_with('f') {
            format!("    if (e < 0) {{ return {wty}(1) / r; }}\n")
        } else {
            String::new()
        };
        let _ = writeln!(
            self.helpers,
            "fn acc_powi_{wty}(base: {wty}, e: i32) -> {wty} {{\n    var r: {wty} = {wty}(1);\n    var b: {wty} = base;\n    var n: u32 = u32(abs(e));\n    loop {{\n        if (n == 0u) {{ break; }}\n        if ((n & 1u) == 1u) {{ r = r * b; }}\n        b = b * b;\n        n = n >> 1u;\n    }}\n{negative}    return r;\n}}"
        );
    }
}

/// A value of type `t` from its atomic word.
fn decode(t: Scalar, w: &str) -> String {
    match t {
        Scalar::F32 => format!("bitcast<f32>({w})"),
        Scalar::F64 => format!("bitcast<f64>({w})"),
        Scalar::Bool => format!("({w} != 0u)"),
        _ => w.to_string(),
    }
}

/// The atomic word of a value of type `t`.
fn encode(t: Scalar, v: &str) -> String {
    match t {
        Scalar::F32 => format!("bitcast<u32>({v})"),
        Scalar::F64 => format!("bitcast<u64>({v})"),
        Scalar::Bool => format!("select(0u, 1u, {v})"),
        _ => v.to_string(),
    }
}

fn annotate(e: Error, var: &str) -> Error {
    match e {
        Error::Unsupported { what } => Error::Unsupported {
            what: format!("{what} (variable `{var}`)"),
        },
        other => other,
    }
}

mod math64;

#[cfg(test)]
mod tests;

/// Elements of a workgroup's copy of a privatized array (4 bytes each: 8 KiB, so that the
/// 16 KiB of workgroup memory every adapter has leaves room for reductions).
const WORKGROUP_PRIVATE: u32 = 2048;

/// The WGSL atomic of a privatized update.
fn private_atomic(op: BinaryOp) -> &'static str {
    match op {
        BinaryOp::Add => "atomicAdd",
        BinaryOp::BitOr => "atomicOr",
        _ => "atomicXor",
    }
}

/// A value of type `t` as the word workgroup memory holds (`bool` as `u32`).
fn as_word(t: Scalar, v: &str) -> String {
    if t == Scalar::Bool {
        format!("select(0u, 1u, {v})")
    } else {
        v.to_string()
    }
}

/// A word of workgroup memory as a value of type `t`.
fn from_word(t: Scalar, v: &str) -> String {
    if t == Scalar::Bool {
        format!("({v} != 0u)")
    } else {
        v.to_string()
    }
}
