// Fields named after what they hold (offsets, entry points) carry no doc of their own.
#![allow(missing_docs)]

use std::fmt::Write;

use acc_core::gpu::LaunchLayout;
pub use acc_core::ir::plan::ReductionSlot;
use acc_core::ir::plan::Spilled;
use acc_core::ir::plan::{self, Entry, EntryPlan, Plan};
use acc_core::ir::*;
use acc_core::{Error, Result};

/// Invocations per workgroup (along x).
pub const WORKGROUP_SIZE: u32 = 256;

/// The element types whose atomic updates a workgroup combines in its workgroup memory first
/// (32-bit integers, `acc_core::ir::privatize::privatized`).
pub const PRIVATIZED_TYPES: &[Scalar] = &[Scalar::I32, Scalar::U32];

/// The WGSL function updating an element of type `t` with `op` in one step, where WGSL has one
/// for the element's word (integers whose word is exactly theirs: narrow types are widened,
/// floats have no atomic arithmetic); `None`: a compare-exchange loop.
fn native_update(op: BinaryOp, t: Scalar) -> Option<&'static str> {
    let exact_word = matches!(
        t,
        Scalar::I32 | Scalar::U32 | Scalar::ISize | Scalar::USize | Scalar::I64 | Scalar::U64
    );
    let f = match op {
        BinaryOp::Add => "atomicAdd",
        BinaryOp::Sub => "atomicSub",
        BinaryOp::BitAnd => "atomicAnd",
        BinaryOp::BitOr => "atomicOr",
        BinaryOp::BitXor => "atomicXor",
        _ => return None,
    };
    exact_word.then_some(f)
}

/// Whether WGSL updates an element of type `t` with `op` by a compare-exchange loop.
pub fn update_by_cas(op: BinaryOp, t: Scalar) -> bool {
    native_update(op, t).is_none()
}

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
    /// `usize`/`isize` in 32-bit words although shaders have 64-bit integers: the variant of a
    /// kernel for a launch whose arguments keep every such value within 32 bits
    /// (`acc_core::ir::bounds::Proof::fits_32`), where 64-bit index arithmetic would cost two
    /// to four instructions an operation.
    pub narrow_usize: bool,
    /// Float arithmetic as the driver does it (`ACC_FAST_FLOAT=1`): its own f32 `/` (WGSL
    /// allows 2.5 ULP). Otherwise f32 `/` is computed in f64 and rounded once where the
    /// adapter has f64 (correctly rounded, as Rust's); the device then also keeps the driver
    /// from fusing or reassociating `+ - *` where it can (`wgpu::runtime::spirv`).
    pub fast_float: bool,
}

impl Target {
    /// An adapter with every feature and no driver quirk (the golden files and unit tests
    /// lower for it).
    pub const ALL_FEATURES: Target = Target {
        f64: true,
        int64: true,
        int64_atomics: true,
        loop_limit: None,
        int64_compare_by_halves: false,
        narrow_usize: false,
        fast_float: false,
    };

    /// Whether `usize`/`isize` are held at the host's 64 bits (`u64`/`i64`, where shaders have
    /// 64-bit integers and the launch is not [`Target::narrow_usize`]). Otherwise they are
    /// 32-bit words there, and values beyond 32 bits are refused with an error naming them.
    pub fn wide_usize(self) -> bool {
        self.int64 && !self.narrow_usize && usize::BITS == 64
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
    /// Per-workgroup partial results of reduction `n` of `layout.reductions`.
    Partials(usize),
    /// The region-level locals, kept between entry points when the region has code between
    /// its parallel loops (`layout.locals_size` bytes).
    Locals,
    /// The host loops' variables at a dispatch ([`acc_core::ir::segments::Segments::host_vars`]), each as two `u32`
    /// words (low, high), bound with a dynamic offset that picks the dispatch's values.
    HostValues,
    /// Private array `n` of [`Lowered::spilled`], a copy per invocation of the largest grid.
    Spilled(usize),
}

/// Bytes of one reduction partial in a buffer (`bool` and narrow integers travel as `u32`).
pub fn partial_size(t: Scalar, target: Target) -> u32 {
    if widened_in_buffers(t, target) {
        4
    } else {
        t.size()
    }
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
    pub bindings: Vec<Binding>,
    pub params: Vec<ParamSlot>,
    pub arrays: Vec<ArraySlot>,
    /// Size of the parameter buffer in bytes (at least 4).
    pub params_size: u32,
    /// Where the grid's workgroup count goes in the parameter buffer (`u32`), when an entry
    /// point combines per-workgroup partials on the device.
    pub groups_offset: Option<u32>,
    /// What a launch needs to know of it: each entry point's shape, the locals buffer, the
    /// reductions' slots, the region's value, the program dispatching the entry points.
    pub layout: LaunchLayout,
    /// The private arrays kept in device memory ([`Binding::Spilled`]).
    pub spilled: Spilled,
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
        // The 16-bit floats reach a backend only as their bits (the builder converts).
        Scalar::U8 | Scalar::U16 | Scalar::F16 | Scalar::BF16 => "u32",
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

/// The type an array element has in a storage buffer.
fn storage_type(t: Scalar, target: Target) -> Result<&'static str> {
    match t {
        Scalar::Bool => Ok("u32"),
        other => wgsl_type(other, target),
    }
}
/// Lowers `kernel` for `target`.
pub fn lower(kernel: &Kernel, target: Target) -> Result<Lowered> {
    lower_variant(kernel, target, false)
}

/// Lowers `kernel` for `target`, without bounds checks where `proven` (the launch's accesses
/// are proven in bounds). A narrowed variant is a target whose `usize` is 32 bits
/// ([`Target::narrow_usize`]), not the IR's narrowing pass.
pub fn lower_variant(kernel: &Kernel, target: Target, proven: bool) -> Result<Lowered> {
    // The passes and every schedule decision, made once (`acc_core::ir::plan`).
    let variant = plan::Variant {
        proven,
        narrow: false,
    };
    let caps = caps(target);
    let prepared = plan::prepare(kernel, &caps, variant).map_err(unsupported)?;
    let plan = prepared.plan(&caps);
    let kernel = plan.kernel;
    // The arrays (and fields) an `atomic` statement updates are `atomic<..>` (the plan's
    // `atomic_arrays`); so are the words of struct arrays whose narrow fields such a statement
    // or a store writes, since WGSL writes a narrow field by compare-exchange on its word.
    let atomic = plan.atomic_arrays.clone();
    let packed = |array: ParamId, field: Option<FieldId>| {
        field.is_some() && kernel.access(array, field).is_some_and(|a| is_packed(a.ty))
    };
    let mut packed_atomic: std::collections::BTreeSet<ParamId> = atomic
        .iter()
        .filter(|&&(array, field)| packed(array, field))
        .map(|&(array, _)| array)
        .collect();
    walk::for_each_stmt(&kernel.function.body, &mut |s| {
        if let Stmt::Store { array, field, .. } = s {
            if packed(*array, *field) {
                packed_atomic.insert(*array);
            }
        }
    });
    let mut w = Writer {
        k: kernel,
        target,
        types: plan.types,
        spilled: plan.spilled.clone(),
        helpers: String::new(),
        atomic,
        packed_atomic,
        privatized: None,
        break_flags: Vec::new(),
        fast: None,
        gang_arrays: None,
        storage_barriers: false,
        wg: WORKGROUP_SIZE,
    };
    w.module(&plan)
}

/// What WGSL on an adapter of `target` offers the plan.
pub fn caps(target: Target) -> plan::Caps {
    plan::Caps {
        block: "workgroup",
        thread: "invocation",
        threads: WORKGROUP_SIZE,
        shared_array_bytes: plan::SHARED_ARRAY_BYTES,
        warp_lanes: None,
        privatized_types: PRIVATIZED_TYPES,
        update_by_cas,
        partial_bytes: plan::ScalarBytes::from_fn(|t| partial_size(t, target)),
        // Bytes of an element in a buffer, as the locals buffer lays them out (`param_size`).
        elem_bytes: plan::ScalarBytes::from_fn(|t| match device_scalar(t, target) {
            Scalar::F64 | Scalar::I64 | Scalar::U64 => 8,
            _ => 4,
        }),
        index_bytes: target.index_bytes(),
        versions_atomic_arrays: false,
        versions_shared_loops: false,
        writes_out_short_loops: false,
    }
}

struct Writer<'a> {
    k: &'a Kernel,
    target: Target,
    /// The type of each expression (the plan's).
    types: &'a [Scalar],
    /// The private arrays in device memory: a binding each (`acc_sp<local>`), a copy per
    /// invocation, interleaved (`acc_core::ir::spill`).
    spilled: Spilled,
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
    /// In an entry point whose gang iterations each take a workgroup: the entry's number and
    /// the gang's arrays kept in workgroup memory (`acc_wa_<entry>_<local>`, one copy per
    /// workgroup), from [`GangPhases::shared_arrays`].
    gang_arrays: Option<(usize, Vec<LocalId>)>,
    /// Whether the gang iteration being written passes values between invocations through
    /// storage buffers ([`GangPhases::exchanges_through_arrays`]): its barriers then order
    /// storage too (`workgroupBarrier` orders workgroup memory only).
    storage_barriers: bool,
    /// Invocations per workgroup of the entry point being written: [`WORKGROUP_SIZE`], or 32
    /// where each gang iteration's vector loops are at most 32 long (`vector_length(n)`,
    /// n <= 32, [`warp_per_iteration`](acc_core::ir::plan::warp_per_iteration)): a
    /// workgroup of 32 per gang iteration, as nvidia gives it a warp, rather than 256
    /// invocations of which most would idle.
    wg: u32,
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
        (ReduceOp::ComplexMul, _) => return Err(complex_product_here()),
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
fn combine(op: ReduceOp, t: Scalar, a: &str, b: &str, halves: bool) -> Result<String> {
    let s = int64_name(t);
    Ok(match op {
        ReduceOp::ComplexMul => return Err(complex_product_here()),
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
    })
}

/// A complex product reduction where the WGSL lowering combines single values (a vector
/// loop's inside a gang loop, a fold into a region local): only a parallel loop's reduction
/// into the construct's variable reduces pairs ([`Writer::workgroup_pair_tree`]).
fn complex_product_here() -> Error {
    unsupported(
        "a complex product reduction combined here (kernels combine complex products in the pair reductions of parallel loops, gang iterations and folds only)",
    )
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

    fn module(&mut self, plan: &Plan<'_>) -> Result<Lowered> {
        let k = self.k;
        let mut bindings = Vec::new();
        let mut decls = String::new();
        self.array_bindings(&mut decls, &mut bindings)?;
        let buffer = self.param_buffer()?;
        let _ = writeln!(decls, "struct Params {{\n{}}}", buffer.fields);
        self.fixed_bindings(&mut decls, &mut bindings)?;

        // Entry points: one per top-level parallel loop. When the region has only scalar
        // assignments besides, they are the gang-redundant prelude every invocation runs;
        // otherwise each run of other code is an entry point of one invocation, and the
        // region-level locals live in a buffer between entry points.
        // A region with no parallel loop at all is one segment of sequential code.
        let segmented = plan.segments.segmented;
        let LocalsBuffer {
            slots: local_slots,
            size: locals_size,
            load: mut load_locals,
            store: store_locals,
        } = if segmented {
            self.locals_buffer(&mut decls, &mut bindings)?
        } else {
            LocalsBuffer::default()
        };
        self.host_values(plan, (&mut decls, &mut bindings), &mut load_locals)?;
        self.partial_bindings(plan, &mut decls, &mut bindings)?;
        let mut entry_points = Vec::new();
        let mut bodies = String::new();
        for (n, (entry, planned)) in plan.segments.entries.iter().zip(&plan.entries).enumerate() {
            let body = match entry {
                Entry::Single(stmts) => {
                    let stmts: Vec<&Stmt> = stmts.iter().collect();
                    self.single_entry(n, &stmts, &load_locals, &store_locals)?
                }
                Entry::Grid {
                    prelude,
                    looped,
                    slots,
                } => {
                    let prelude: Vec<&Stmt> = prelude.iter().collect();
                    let load = if segmented { load_locals.as_str() } else { "" };
                    self.entry(n, &prelude, (looped, planned), slots, load)?
                }
                Entry::Fold(on_device) => {
                    self.fold_entry(n, on_device, &load_locals, &store_locals)?
                }
            };
            bodies.push_str(&body);
            entry_points.push(self.k.entry_name(n));
        }
        let mut wgsl = String::new();
        let _ = writeln!(wgsl, "// {}", k.name);
        wgsl.push_str(&decls);
        wgsl.push_str(&self.helpers);
        wgsl.push_str(&bodies);
        let (module, info) = self.validated(&wgsl)?;
        let slots: Vec<(LocalId, Scalar, u32)> = local_slots
            .iter()
            .map(|&(l, t, off)| (l as LocalId, t, off))
            .collect();
        let layout = LaunchLayout::new(
            plan,
            (&slots, locals_size),
            self.helpers.contains("acc_status"),
        )
        .map_err(unsupported)?;
        Ok(Lowered {
            wgsl,
            module,
            info,
            entry_points,
            bindings,
            params: buffer.params,
            arrays: buffer.arrays,
            params_size: buffer.size,
            groups_offset: Some(buffer.groups_offset),
            layout,
            spilled: self.spilled.clone(),
        })
    }

    fn param_size(&self, s: Scalar) -> u32 {
        match device_scalar(s, self.target) {
            Scalar::F64 | Scalar::I64 | Scalar::U64 => 8,
            _ => 4,
        }
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

mod access;
mod bindings;
mod structs;
use expr::literal;
use locals::LocalsBuffer;
use structs::{is_packed, struct_decl, struct_member_type, Packed};
mod atomic;
mod entry;
mod expr;
mod gang;
mod locals;
mod math64;
mod reduce;
mod stmt;

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
