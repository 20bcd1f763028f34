//! The kernel IR: what a compute region becomes before a GPU backend lowers it
//! (docs/design-notes/ir-and-backends.md).
//!
//! Modelled on naga's IR: each function owns an arena of expressions referenced by [`Handle`]s;
//! statements form structured control flow (`if`, loops, `break`, `continue`); parallel loops
//! carry their OpenACC annotations (levels, collapse, reductions, private variables). Values are
//! typed by [`Scalar`]; arrays are kernel parameters (device buffers) or private locals.
//! Expressions are pure trees evaluated where a statement uses them; loads read memory at that
//! point. The [`builder`] constructs it (the macros emit calls to it), [`validate`] checks it
//! and [`print`](mod@print) writes it for `ACC_DUMP=ir`.

// Variants and fields named after the Rust construct they stand for (`Scalar::F32`,
// `BinaryOp::Add`, `MathFn::Sqrt`, `LoopLevel::start`) carry no doc of their own.
#![allow(missing_docs)]

pub mod affine;
pub mod args;
pub mod bounds;
pub mod builder;
pub mod cache_staging;
pub mod eval;
pub mod gang_phases;
pub mod mapping;
pub mod math;
pub mod narrow;
pub mod plan;
pub mod print;
pub mod privatize;
pub mod promote;
#[cfg(any(test, feature = "samples"))]
pub mod samples;
mod scalar;
pub mod segments;
pub mod spill;
mod structs;
pub mod tile;
mod unroll;
pub mod validate;
pub mod walk;

use std::fmt;
use std::marker::PhantomData;

pub use gang_phases::GangPhases;

pub use scalar::Scalar;
pub use structs::{nested_field, split_field, FieldArray, FieldId, StructField, StructLayout};

/// A handle into an [`Arena`].
pub struct Handle<T> {
    index: u32,
    _marker: PhantomData<fn() -> T>,
}

impl<T> Handle<T> {
    fn new(index: usize) -> Self {
        Handle {
            index: index as u32,
            _marker: PhantomData,
        }
    }
    /// The position in its arena.
    pub fn index(self) -> usize {
        self.index as usize
    }
}
impl<T> Clone for Handle<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Handle<T> {}
impl<T> PartialEq for Handle<T> {
    fn eq(&self, o: &Self) -> bool {
        self.index == o.index
    }
}
impl<T> Eq for Handle<T> {}
impl<T> std::hash::Hash for Handle<T> {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.index.hash(h)
    }
}
impl<T> fmt::Debug for Handle<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "%{}", self.index)
    }
}

/// A growable store of `T`s addressed by [`Handle`]s.
#[derive(Clone, Debug, PartialEq)]
pub struct Arena<T> {
    items: Vec<T>,
}

impl<T> Default for Arena<T> {
    fn default() -> Self {
        Arena { items: Vec::new() }
    }
}

impl<T> Arena<T> {
    /// Adds `item`; returns its handle.
    pub fn append(&mut self, item: T) -> Handle<T> {
        self.items.push(item);
        Handle::new(self.items.len() - 1)
    }
    /// The item at `h`.
    pub fn get(&self, h: Handle<T>) -> Option<&T> {
        self.items.get(h.index())
    }
    /// Every handle and item, in order.
    pub fn iter(&self) -> impl Iterator<Item = (Handle<T>, &T)> {
        self.items
            .iter()
            .enumerate()
            .map(|(i, t)| (Handle::new(i), t))
    }
    /// Number of items.
    pub fn len(&self) -> usize {
        self.items.len()
    }
    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}

impl<T> std::ops::Index<Handle<T>> for Arena<T> {
    type Output = T;
    fn index(&self, h: Handle<T>) -> &T {
        &self.items[h.index()]
    }
}

/// A kernel parameter: what the region captures.
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    /// The variable's name in the source.
    pub name: String,
    /// What it is.
    pub kind: ParamKind,
}

/// How a parameter reaches the kernel.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ParamKind {
    /// A scalar passed by value (firstprivate, 3.3 section 2.6.2).
    Scalar(Scalar),
    /// An array in device memory; `writable` when the region writes it.
    Array { elem: Elem, writable: bool },
}

/// The element type of an array parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Elem {
    Scalar(Scalar),
    /// A `#[derive(DeviceCopy)]` struct: elements are read and written field by field.
    Struct(&'static StructLayout),
}

impl Elem {
    /// Bytes per element (in host memory; devices keep structs bit for bit).
    pub fn size(self) -> u32 {
        match self {
            Elem::Scalar(s) => s.size(),
            Elem::Struct(l) => l.size,
        }
    }
    /// The scalar type, for an array of scalars.
    pub fn scalar(self) -> Option<Scalar> {
        match self {
            Elem::Scalar(s) => Some(s),
            Elem::Struct(_) => None,
        }
    }
}

impl From<Scalar> for Elem {
    fn from(s: Scalar) -> Elem {
        Elem::Scalar(s)
    }
}

impl fmt::Display for Elem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Elem::Scalar(s) => s.fmt(f),
            Elem::Struct(l) => f.write_str(l.name),
        }
    }
}

/// A local variable of a function: a scalar or a private fixed-size array.
#[derive(Clone, Debug, PartialEq)]
pub struct Local {
    /// Its name in the source (or a generated one).
    pub name: String,
    /// Element type.
    pub ty: Scalar,
    /// `Some(n)` for a private array of `n` elements.
    pub len: Option<u32>,
}

/// Index of a parameter of the kernel.
pub type ParamId = u32;
/// Index of a local of the function.
pub type LocalId = u32;

/// A literal value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Literal {
    Bool(bool),
    /// An integer of the given type (two's complement bits, sign-extended).
    Int(Scalar, i128),
    /// A float of the given type.
    Float(Scalar, f64),
}

impl Literal {
    /// Its type.
    pub fn ty(&self) -> Scalar {
        match *self {
            Literal::Bool(_) => Scalar::Bool,
            Literal::Int(t, _) | Literal::Float(t, _) => t,
        }
    }
}

/// Unary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnaryOp {
    /// `-x`
    Neg,
    /// `!x` (logical for bool, bitwise for integers)
    Not,
}

/// Binary operators. Integer arithmetic wraps (docs/guide/regions.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinaryOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    BitAnd,
    BitOr,
    BitXor,
    Shl,
    Shr,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    /// `&&` (both operands are evaluated; the front end keeps short-circuit code as `if`s).
    And,
    /// `||`
    Or,
}

impl BinaryOp {
    /// Whether the result is `bool` whatever the operands.
    pub fn is_comparison(self) -> bool {
        matches!(
            self,
            BinaryOp::Eq | BinaryOp::Ne | BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge
        )
    }
    /// The Rust spelling.
    pub fn symbol(self) -> &'static str {
        use BinaryOp::*;
        match self {
            Add => "+",
            Sub => "-",
            Mul => "*",
            Div => "/",
            Rem => "%",
            BitAnd => "&",
            BitOr => "|",
            BitXor => "^",
            Shl => "<<",
            Shr => ">>",
            Eq => "==",
            Ne => "!=",
            Lt => "<",
            Le => "<=",
            Gt => ">",
            Ge => ">=",
            And => "&&",
            Or => "||",
        }
    }
}

/// Math functions: the float methods of std, integer `min max abs pow`, and the bit counts
/// devices have instructions for. The other std methods are built from these
/// (`builder::methods`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MathFn {
    Abs,
    Min,
    Max,
    Clamp,
    Sqrt,
    Cbrt,
    Exp,
    Exp2,
    Ln,
    Log2,
    Log10,
    Sin,
    Cos,
    Tan,
    Asin,
    Acos,
    Atan,
    Atan2,
    Sinh,
    Cosh,
    Tanh,
    Floor,
    Ceil,
    Round,
    Trunc,
    Fract,
    Powi,
    Powf,
    Pow,
    MulAdd,
    Hypot,
    Signum,
    Recip,
    /// The number of ones in a `u32` (as a `u32`).
    CountOnes32,
    /// The number of leading zeros of a `u32` (32 for 0).
    LeadingZeros32,
    /// The number of trailing zeros of a `u32` (32 for 0).
    TrailingZeros32,
    /// The bits of a `u32` in reverse order.
    ReverseBits32,
}

impl MathFn {
    /// Number of arguments, the receiver included.
    pub fn arity(self) -> usize {
        use MathFn::*;
        match self {
            Min | Max | Atan2 | Powi | Powf | Pow | Hypot => 2,
            Clamp | MulAdd => 3,
            _ => 1,
        }
    }
    /// The method name in std.
    pub fn name(self) -> &'static str {
        use MathFn::*;
        match self {
            Abs => "abs",
            Min => "min",
            Max => "max",
            Clamp => "clamp",
            Sqrt => "sqrt",
            Cbrt => "cbrt",
            Exp => "exp",
            Exp2 => "exp2",
            Ln => "ln",
            Log2 => "log2",
            Log10 => "log10",
            Sin => "sin",
            Cos => "cos",
            Tan => "tan",
            Asin => "asin",
            Acos => "acos",
            Atan => "atan",
            Atan2 => "atan2",
            Sinh => "sinh",
            Cosh => "cosh",
            Tanh => "tanh",
            Floor => "floor",
            Ceil => "ceil",
            Round => "round",
            Trunc => "trunc",
            Fract => "fract",
            Powi => "powi",
            Powf => "powf",
            Pow => "pow",
            MulAdd => "mul_add",
            Hypot => "hypot",
            Signum => "signum",
            Recip => "recip",
            CountOnes32 => "count_ones_u32",
            LeadingZeros32 => "leading_zeros_u32",
            TrailingZeros32 => "trailing_zeros_u32",
            ReverseBits32 => "reverse_bits_u32",
        }
    }
    /// The function a std method name is (not the `u32` bit counts, whose std methods
    /// return `u32` for every integer type).
    pub fn from_name(name: &str) -> Option<MathFn> {
        use MathFn::*;
        const ALL: [MathFn; 33] = [
            Abs, Min, Max, Clamp, Sqrt, Cbrt, Exp, Exp2, Ln, Log2, Log10, Sin, Cos, Tan, Asin,
            Acos, Atan, Atan2, Sinh, Cosh, Tanh, Floor, Ceil, Round, Trunc, Fract, Powi, Powf, Pow,
            MulAdd, Hypot, Signum, Recip,
        ];
        ALL.into_iter().find(|m| m.name() == name)
    }
    /// Whether it applies only to floats.
    pub fn float_only(self) -> bool {
        !matches!(
            self,
            MathFn::Abs | MathFn::Min | MathFn::Max | MathFn::Clamp | MathFn::Pow | MathFn::Signum
        ) && !self.u32_only()
    }
    /// Whether it applies only to `u32`.
    pub fn u32_only(self) -> bool {
        matches!(
            self,
            MathFn::CountOnes32
                | MathFn::LeadingZeros32
                | MathFn::TrailingZeros32
                | MathFn::ReverseBits32
        )
    }
}

/// An expression: a pure tree over values, evaluated where a statement uses it.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    Literal(Literal),
    /// The value of a scalar parameter.
    Param(ParamId),
    /// The value of a scalar local.
    Local(LocalId),
    /// Element `index` of a private array local.
    LocalElem {
        local: LocalId,
        index: Handle<Expr>,
    },
    /// Element `index` of an array parameter (bounds-checked unless the kernel is `unchecked`);
    /// of an array of structs, `field` of that element.
    Load {
        array: ParamId,
        field: Option<FieldId>,
        index: Handle<Expr>,
    },
    /// The length of an array parameter, in elements, as `usize`.
    Len(ParamId),
    Unary(UnaryOp, Handle<Expr>),
    Binary(BinaryOp, Handle<Expr>, Handle<Expr>),
    /// `if cond { a } else { b }` on values.
    Select {
        cond: Handle<Expr>,
        accept: Handle<Expr>,
        reject: Handle<Expr>,
    },
    /// `e as T`.
    Cast(Handle<Expr>, Scalar),
    /// The same bits as another type of the same size (`f64::to_bits`, `f64::from_bits`):
    /// between `f32` and `u32`, or `f64` and `u64`.
    Bitcast(Handle<Expr>, Scalar),
    Math(MathFn, Vec<Handle<Expr>>),
    /// The index of the gang running the code (`acc::gang_idx()`), as `usize`: the
    /// workgroup or block; 0 in sequential code.
    GangIndex,
    /// The index of an access of a nested array's element (`boxes[l].nei[k]`): `element` of
    /// the array parameter, `sub` of its array field. Only the index of a [`Expr::Load`],
    /// [`Stmt::Store`] or [`Stmt::Atomic`] whose field is a [`nested_field`]; both are
    /// bounds-checked. Its value as a number is `element`'s.
    NestedIndex {
        element: Handle<Expr>,
        sub: Handle<Expr>,
    },
}

/// A sequence of statements.
pub type Block = Vec<Stmt>;

/// How a loop is scheduled (3.3 section 2.9).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Schedule {
    pub gang: bool,
    pub worker: bool,
    pub vector: bool,
}

impl Schedule {
    /// The levels it names, outermost first (`["gang", "vector"]`).
    pub fn levels(&self) -> Vec<&'static str> {
        [
            (self.gang, "gang"),
            (self.worker, "worker"),
            (self.vector, "vector"),
        ]
        .into_iter()
        .filter_map(|(on, name)| on.then_some(name))
        .collect()
    }
}

/// A reduction of a loop or a kernel (3.3 section 2.5.15).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reduction {
    /// The local that holds the running value.
    pub local: LocalId,
    /// The operator.
    pub op: ReduceOp,
}

impl Reduction {
    /// The locals the reduction holds its value in: its local, and for a complex product
    /// ([`ReduceOp::ComplexMul`]) the next one, the imaginary part.
    pub fn locals(&self) -> impl Iterator<Item = LocalId> {
        let pair = self.op == ReduceOp::ComplexMul;
        std::iter::once(self.local).chain(pair.then_some(self.local + 1))
    }
}

/// The reduction operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    Add,
    Mul,
    Max,
    Min,
    BitAnd,
    BitOr,
    BitXor,
    And,
    Or,
    /// The product of complex numbers (`reduction(*: z)` of a `num_complex::Complex`): the
    /// reduction's local holds the real part and the next local (`local + 1`) the imaginary
    /// part, of the same float type, and the two are combined together,
    /// `(a + bi)(c + di) = (ac - bd) + (ad + bc)i` as num_complex computes it. Its results are
    /// pairs: partials hold two words per block, and [`args::KernelOutput::push_partials`]
    /// gives the real part to the reduction's parameter and the imaginary part to the next.
    ComplexMul,
}

impl ReduceOp {
    /// The operator as a `reduction` clause writes it.
    pub fn symbol(self) -> &'static str {
        match self {
            ReduceOp::Add => "+",
            ReduceOp::Mul | ReduceOp::ComplexMul => "*",
            ReduceOp::Max => "max",
            ReduceOp::Min => "min",
            ReduceOp::BitAnd => "&",
            ReduceOp::BitOr => "|",
            ReduceOp::BitXor => "^",
            ReduceOp::And => "&&",
            ReduceOp::Or => "||",
        }
    }
}

/// One loop of a nest: `for var in start + k * step, k in 0..trips`.
#[derive(Clone, Debug, PartialEq)]
pub struct LoopLevel {
    pub var: LocalId,
    pub start: Handle<Expr>,
    /// Step (signed, of the loop variable's type).
    pub step: Handle<Expr>,
    /// Number of iterations, `usize` (index-like: 32 bits on wgpu, which checks it fits).
    pub trips: Handle<Expr>,
    /// The loop's line in the user's source (0 where unknown), for `ACC_INFO`.
    pub line: u32,
}

/// Atomic operations (3.3 section 2.12) on an array element or a scalar parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtomicOp {
    /// Read-modify-write with a binary operator.
    Update(BinaryOp),
    /// Replace the value.
    Exchange,
    /// Read the value (into `old`); the operand is not used.
    Read,
    /// Replace the value by the operand, an expression of the old value, which the backend
    /// puts in this local before evaluating it, on each try of a compare-and-swap loop (the
    /// forms `x = e - x`, `x = x.max(e)`, shifts: 3.3 section 2.12).
    Combine(LocalId),
}

impl AtomicOp {
    /// The local a [`AtomicOp::Combine`] sets to the old value.
    pub fn combine_local(self) -> Option<LocalId> {
        match self {
            AtomicOp::Combine(l) => Some(l),
            _ => None,
        }
    }
}

/// A statement.
#[derive(Clone, Debug, PartialEq)]
pub enum Stmt {
    /// `local = value`.
    Assign {
        local: LocalId,
        value: Handle<Expr>,
    },
    /// `local[index] = value` on a private array.
    AssignElem {
        local: LocalId,
        index: Handle<Expr>,
        value: Handle<Expr>,
    },
    /// `array[index] = value` on an array parameter (`array[index].field = value` on an array
    /// of structs).
    Store {
        array: ParamId,
        field: Option<FieldId>,
        index: Handle<Expr>,
        value: Handle<Expr>,
    },
    If {
        cond: Handle<Expr>,
        accept: Block,
        reject: Block,
    },
    /// A counted loop nest (`collapse` and `tile` give several levels). `schedule: None` runs
    /// it sequentially; `Some` shares its iterations per the OpenACC levels.
    For {
        levels: Vec<LoopLevel>,
        schedule: Option<Schedule>,
        reductions: Vec<Reduction>,
        private: Vec<LocalId>,
        /// `tile(..)` (3.3 section 2.9.8): the tile size of each level, outermost first, or
        /// empty. Backends run the nest as [`tile::expand`] rewrites it: tile loops around
        /// element loops.
        tile: Vec<u32>,
        body: Block,
    },
    /// `loop { body }`; `while c { b }` is `loop { if !c { break } b }`.
    Loop {
        body: Block,
    },
    Break,
    Continue,
    /// `array[index] op= value` atomically (on `field` of the element of an array of
    /// structs); the old value goes to `old`, the new to `new`.
    Atomic {
        array: ParamId,
        field: Option<FieldId>,
        index: Handle<Expr>,
        op: AtomicOp,
        value: Handle<Expr>,
        old: Option<LocalId>,
        new: Option<LocalId>,
    },
}

/// A function body: locals, expressions and statements.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Function {
    pub locals: Vec<Local>,
    pub exprs: Arena<Expr>,
    pub body: Block,
}

/// A compute region as a kernel. Routines it calls are inlined (their bodies are built into
/// the kernel's function), as GPUs need for routines that take arrays.
#[derive(Clone, Debug, PartialEq)]
pub struct Kernel {
    /// The region's name (function and source location), for messages and dumps.
    pub name: String,
    pub params: Vec<Param>,
    pub function: Function,
    /// Compute-level reductions: each names a local and the scalar parameter it is combined
    /// into at the end (3.3 section 2.5.15).
    pub reductions: Vec<(Reduction, ParamId)>,
    /// `unchecked`: no bounds checks (docs/guide/regions.md).
    pub unchecked: bool,
    /// The local holding the region's value (a compute construct on a function that returns
    /// what the region computed), read back after the launch.
    pub result: Option<LocalId>,
    /// `vector_length(n)` of the compute construct, when a constant (3.3 section 2.5.11): a
    /// backend may give each gang iteration a group of that many threads rather than a block.
    pub vector_length: Option<u32>,
    /// The parallel loops (by their outermost variable) that acc tiled itself
    /// ([`tile::auto_tile`]): their `tile` is acc's choice, not a clause.
    pub auto_tiled: Vec<LocalId>,
    /// The array elements sequential loops (by their variable) keep in registers
    /// ([`promote::promote`]): each loop's variable, the array and the field.
    pub kept_in_registers: Vec<(LocalId, ParamId, Option<FieldId>)>,
    /// The region's `cache` directives, with what the GPU backends made of each
    /// ([`cache_staging::stage`]).
    pub caches: Vec<cache_staging::Cache>,
}

/// What an access of an array element (or of a field of a struct element) touches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Access {
    /// The type read or written.
    pub ty: Scalar,
    /// Bytes between consecutive elements of the array.
    pub stride: u32,
    /// Byte offset of what is accessed within its element (a field's offset; 0 for scalars).
    pub offset: u32,
    /// Whether the region writes the array.
    pub writable: bool,
    /// For a field of a nested array's element: that array's length and the bytes between its
    /// elements (the access's index is an [`Expr::NestedIndex`]).
    pub nested: Option<(u32, u32)>,
}

impl Kernel {
    /// The name of entry point `n` in the target code, after the region's function and line
    /// (`jacobi_27_gpu`, then `jacobi_27_gpu_1`, ...), so that profilers (`nsys`, `ncu`) and
    /// driver messages point at the user's source. An identifier in PTX and WGSL: ASCII
    /// letters, digits and single underscores, starting with a letter.
    pub fn entry_name(&self, n: usize) -> String {
        let (function, at) = self.name.split_once(" at ").unwrap_or((&self.name, ""));
        let line = at.rsplit(':').nth(1).and_then(|l| l.parse::<u32>().ok());
        let mut base = String::new();
        for c in function.chars() {
            let c = if c.is_ascii_alphanumeric() { c } else { '_' };
            if !(c == '_' && (base.is_empty() || base.ends_with('_'))) {
                base.push(c);
            }
        }
        let base = base.trim_end_matches('_');
        let mut name = if base.starts_with(|c: char| c.is_ascii_alphabetic()) {
            base.to_string()
        } else {
            format!("acc_{base}")
        };
        if let Some(l) = line {
            name = format!("{}_{l}", name.trim_end_matches('_'));
        }
        match n {
            0 => format!("{name}_gpu"),
            n => format!("{name}_gpu_{n}"),
        }
    }

    /// What accessing `field` (`None` for an array of scalars) of an element of array
    /// parameter `array` touches; `None` where the parameter is not such an array.
    /// For each parameter, whether the kernel reads or writes its elements or its length: an
    /// array it never touches (the original of a `private` copy, 3.3 section 2.5.13, whose
    /// copies only take its type) need not travel to the device.
    pub fn accessed_params(&self) -> Vec<bool> {
        let mut used = vec![false; self.params.len()];
        let mut mark = |p: ParamId| {
            if let Some(u) = used.get_mut(p as usize) {
                *u = true;
            }
        };
        for (_, e) in self.function.exprs.iter() {
            match e {
                Expr::Load { array, .. } | Expr::Len(array) => mark(*array),
                Expr::Param(p) => mark(*p),
                _ => {}
            }
        }
        walk::for_each_stmt(&self.function.body, &mut |s| match s {
            Stmt::Store { array, .. } | Stmt::Atomic { array, .. } => mark(*array),
            _ => {}
        });
        for (_, into) in &self.reductions {
            mark(*into);
        }
        used
    }

    /// What an access of `array` (or of `field` of its elements) touches; `None` where
    /// `array` is not an array parameter (or has no such field).
    pub fn access(&self, array: ParamId, field: Option<FieldId>) -> Option<Access> {
        let ParamKind::Array { elem, writable } = self.params.get(array as usize)?.kind else {
            return None;
        };
        match (elem, field) {
            (Elem::Scalar(ty), None) => Some(Access {
                ty,
                stride: ty.size(),
                offset: 0,
                writable,
                nested: None,
            }),
            (Elem::Struct(l), Some(f)) => {
                let (outer, inner) = split_field(f);
                let of = l.fields.get(outer as usize)?;
                let (ty, offset, nested) = match inner {
                    None => (of.ty?, of.offset, None),
                    Some(inner) => {
                        let a = of.array?;
                        let (ty, at) = match (inner, a.scalar, a.layout) {
                            (None, Some(t), _) => (t, 0),
                            (Some(g), _, Some(sub)) => {
                                let g = sub.fields.get(g as usize)?;
                                (g.ty?, g.offset)
                            }
                            _ => return None,
                        };
                        (ty, of.offset + at, Some((a.len, a.stride)))
                    }
                };
                Some(Access {
                    // A 16-bit float field is its bits (the builder converts).
                    ty: ty.storage(),
                    stride: l.size,
                    offset,
                    writable,
                    nested,
                })
            }
            _ => None,
        }
    }

    /// Where the region's scalar locals live in a buffer that keeps them between a segmented
    /// region's entry points: largest first, each aligned to its size (`size` gives a type's
    /// bytes on the device). Returns (local, type, byte offset) for each, and the buffer's
    /// size (a multiple of 8, at least 8).
    pub fn scalar_locals_layout(
        &self,
        size: impl Fn(Scalar) -> u32,
    ) -> (Vec<(LocalId, Scalar, u32)>, u32) {
        let mut ls: Vec<(LocalId, Scalar)> = self
            .function
            .locals
            .iter()
            .enumerate()
            .filter(|(_, l)| l.len.is_none())
            .map(|(i, l)| (i as LocalId, l.ty))
            .collect();
        ls.sort_by_key(|&(_, t)| std::cmp::Reverse(size(t)));
        let mut off = 0u32;
        let mut slots = Vec::with_capacity(ls.len());
        for (i, t) in ls {
            off = off.next_multiple_of(size(t));
            slots.push((i, t, off));
            off += size(t);
        }
        (slots, off.next_multiple_of(8).max(8))
    }

    /// The region-level private arrays that code outside the parallel loops writes (a
    /// `firstprivate` copy's initial values, gang-redundant writes, 3.3 sections 2.5.1 and
    /// 2.5.14), laid out in the locals buffer from byte `start` on, after the scalars: local,
    /// element type, offset and length, with the buffer's new size. A segmented kernel's
    /// entry points load them as they load the scalar locals, so each thread of a later parallel
    /// loop starts from the values the gang-redundant code left (every thread has its own
    /// copy, as each gang would). `size` gives an element's bytes in the buffer.
    pub fn array_locals_layout(
        &self,
        size: impl Fn(Scalar) -> u32,
        start: u32,
    ) -> (Vec<(LocalId, Scalar, u32, u32)>, u32) {
        let mut arrays = std::collections::BTreeSet::new();
        outside_parallel_loops(&self.function.body, &mut |s| {
            if let Stmt::AssignElem { local, .. } = s {
                arrays.insert(*local);
            }
        });
        let mut off = start;
        let mut slots = Vec::new();
        for l in arrays {
            let local = &self.function.locals[l as usize];
            let Some(len) = local.len else { continue };
            let elem = size(local.ty);
            // 8-byte aligned, so a backend may copy it in words.
            off = off.next_multiple_of(8);
            slots.push((l, local.ty, off, len));
            off += elem * len;
        }
        (slots, off.next_multiple_of(8).max(start))
    }

    /// Whether the region needs more than one grid entry point per top-level parallel loop
    /// with a prelude of scalar assignments every thread runs: code between or after its
    /// parallel loops, no parallel loop at all, a value, or a loop reduction into a region
    /// local (whose value later code reads). A backend then runs each stretch of other code on
    /// one thread, with the region's scalar locals kept in memory between entry points.
    pub fn needs_segments(&self) -> bool {
        let body = &self.function.body;
        let Some(first_loop) = body.iter().position(|s| {
            matches!(
                s,
                Stmt::For {
                    schedule: Some(_),
                    ..
                }
            )
        }) else {
            return true;
        };
        let local_reduction = body.iter().any(|s| match s {
            Stmt::For {
                schedule: Some(_),
                reductions,
                ..
            } => reductions
                .iter()
                .any(|r| !self.reductions.iter().any(|(kr, _)| kr.local == r.local)),
            _ => false,
        });
        self.result.is_some()
            || local_reduction
            || !self.reductions_updated_outside_loops().is_empty()
            || body.iter().enumerate().any(|(i, s)| match s {
                Stmt::For {
                    schedule: Some(_), ..
                } => false,
                Stmt::Assign { .. } => i > first_loop,
                _ => true,
            })
    }
}

impl Kernel {
    /// The compute-level reductions whose local the code outside the region's parallel loops
    /// assigns besides setting its initial value (its first assignment): gang-redundant
    /// contributions (3.3 section 2.5.15). Their result is the local's value at the end, on
    /// top of any parallel loop's partials, so a backend reads both.
    pub fn reductions_updated_outside_loops(&self) -> std::collections::BTreeSet<LocalId> {
        let mut seen = Vec::new();
        outside_parallel_loops(&self.function.body, &mut |s| {
            if let Stmt::Assign { local, .. } | Stmt::AssignElem { local, .. } = s {
                seen.push(*local);
            }
        });
        self.reductions
            .iter()
            .filter(|(r, _)| {
                r.locals()
                    .any(|l| seen.iter().filter(|s| **s == l).count() > 1)
            })
            .map(|(r, _)| r.local)
            .collect()
    }
}

/// Calls `f` on each statement of `block` that runs outside the parallel loops: the block's,
/// and those of its `if`s and sequential loops (the code a segmented kernel runs on one
/// thread), not the parallel loops themselves nor what is inside them.
fn outside_parallel_loops(block: &[Stmt], f: &mut impl FnMut(&Stmt)) {
    for s in block {
        match s {
            Stmt::If { accept, reject, .. } => {
                outside_parallel_loops(accept, f);
                outside_parallel_loops(reject, f);
            }
            Stmt::For {
                schedule: None,
                body,
                ..
            }
            | Stmt::Loop { body } => outside_parallel_loops(body, f),
            Stmt::For { .. } => {}
            other => f(other),
        }
    }
}

#[cfg(test)]
mod tests;
