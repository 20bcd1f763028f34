//! The transcendental functions of std, written once for every GPU backend (docs/guide/regions.md).
//!
//! GPUs have no instructions for `exp`, `ln`, `sin`, `atan2`, ... in `f64` (and only
//! approximate ones in `f32`), so a kernel computes them from fdlibm's range reductions and
//! polynomials (the library Rust's `libm` and musl derive from), in `f64`: an `f32` argument is
//! widened and the result rounded once, which gives std's `f32` result for all but the rarest
//! arguments. Each function is a [`MathProgram`]: straight-line code over `f64`, `i64` and
//! `bool` values in a small set of operations ([`MathOp`]) that every target has. A backend
//! writes each operation in its words (PTX inline at the call, WGSL as a helper function), and
//! [`MathProgram::eval`] runs it on the host, so the algorithms are tested here against std
//! without a GPU (`tests` below).
//!
//! Accuracy: within a few units in the last place of std for arguments of ordinary size; `sin`,
//! `cos` and `tan` reduce by pi/2 with a three-part constant, so they lose accuracy for |x|
//! beyond about 1e9 (std reduces exactly).

mod fdlibm;

pub use fdlibm::program;

/// A value of a [`MathProgram`]: the index of the operation that computes it.
pub type Value = u32;

/// The type of a [`MathProgram`] value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MathTy {
    F64,
    I64,
    Bool,
}

/// `f64` operations of one operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FUnary {
    Neg,
    Abs,
    /// Correctly rounded.
    Sqrt,
    /// To the nearest integer, ties to even.
    RoundEven,
    Floor,
    Trunc,
}

/// `f64` operations of two operands (`Div` correctly rounded; `Min`/`Max` of a NaN and a
/// number give the number; `CopySign(magnitude, sign)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FBinary {
    Add,
    Sub,
    Mul,
    Div,
    Min,
    Max,
    CopySign,
}

/// Comparisons. On `f64` they are ordered (false when either operand is NaN) except
/// [`Compare::LtOrNan`]; on `i64` they are signed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Compare {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    /// `a < b`, or either is NaN (`!(a >= b)`).
    LtOrNan,
}

/// `i64` operations of two operands; shifts take a constant count.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IBinary {
    Add,
    And,
    Or,
}

/// One operation of a [`MathProgram`]; its operands are earlier values.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum MathOp {
    /// The program's argument `n` (`f64`).
    Arg(u32),
    /// An `f64` constant.
    F(f64),
    /// An `i64` constant.
    I(i64),
    FUnary(FUnary, Value),
    FBinary(FBinary, Value, Value),
    /// `a * b + c`, rounded once.
    Fma(Value, Value, Value),
    /// A comparison of two `f64` or two `i64` values.
    Compare(Compare, Value, Value),
    /// Whether an `f64` is NaN.
    IsNan(Value),
    IBinary(IBinary, Value, Value),
    /// `a << n` on `i64`.
    Shl(Value, u32),
    /// `a >> n` on `i64`, shifting in zeros.
    ShrLogical(Value, u32),
    /// `a && b` on `bool`.
    And(Value, Value),
    /// `a || b` on `bool`.
    Or(Value, Value),
    /// `if c { a } else { b }`, of `a`'s type.
    Select(Value, Value, Value),
    /// The bits of an `f64` as an `i64`.
    ToBits(Value),
    /// The `f64` of an `i64`'s bits.
    FromBits(Value),
    /// An integral `f64` (in `i64`'s range) as `i64`, truncating.
    ToInt(Value),
    /// An `i64` as the nearest `f64`.
    ToFloat(Value),
}

/// A function as straight-line code (see the module's documentation).
#[derive(Clone, Debug, PartialEq)]
pub struct MathProgram {
    /// Each operation and its result's type, in order.
    pub ops: Vec<(MathOp, MathTy)>,
    /// How many `f64` arguments it takes.
    pub args: u32,
    /// The value it returns (`f64`).
    pub result: Value,
}

/// Builds a [`MathProgram`] one operation at a time.
#[derive(Default)]
pub(crate) struct Builder {
    ops: Vec<(MathOp, MathTy)>,
    args: u32,
}

impl Builder {
    fn push(&mut self, op: MathOp, ty: MathTy) -> Value {
        self.ops.push((op, ty));
        (self.ops.len() - 1) as Value
    }
    fn ty(&self, v: Value) -> MathTy {
        self.ops[v as usize].1
    }
    pub fn arg(&mut self) -> Value {
        self.args += 1;
        self.push(MathOp::Arg(self.args - 1), MathTy::F64)
    }
    pub fn f(&mut self, v: f64) -> Value {
        self.push(MathOp::F(v), MathTy::F64)
    }
    pub fn i(&mut self, v: i64) -> Value {
        self.push(MathOp::I(v), MathTy::I64)
    }
    pub fn un(&mut self, op: FUnary, a: Value) -> Value {
        self.push(MathOp::FUnary(op, a), MathTy::F64)
    }
    pub fn bin(&mut self, op: FBinary, a: Value, b: Value) -> Value {
        self.push(MathOp::FBinary(op, a, b), MathTy::F64)
    }
    pub fn add(&mut self, a: Value, b: Value) -> Value {
        self.bin(FBinary::Add, a, b)
    }
    pub fn sub(&mut self, a: Value, b: Value) -> Value {
        self.bin(FBinary::Sub, a, b)
    }
    pub fn mul(&mut self, a: Value, b: Value) -> Value {
        self.bin(FBinary::Mul, a, b)
    }
    pub fn div(&mut self, a: Value, b: Value) -> Value {
        self.bin(FBinary::Div, a, b)
    }
    pub fn mulk(&mut self, a: Value, k: f64) -> Value {
        let k = self.f(k);
        self.mul(a, k)
    }
    pub fn fma(&mut self, a: Value, b: Value, c: Value) -> Value {
        self.push(MathOp::Fma(a, b, c), MathTy::F64)
    }
    pub fn neg(&mut self, a: Value) -> Value {
        self.un(FUnary::Neg, a)
    }
    pub fn abs(&mut self, a: Value) -> Value {
        self.un(FUnary::Abs, a)
    }
    /// `magnitude` with the sign of `sign`.
    pub fn copysign(&mut self, magnitude: Value, sign: Value) -> Value {
        self.bin(FBinary::CopySign, magnitude, sign)
    }
    pub fn cmp(&mut self, op: Compare, a: Value, b: Value) -> Value {
        self.push(MathOp::Compare(op, a, b), MathTy::Bool)
    }
    /// `a op k` for an `f64` constant `k`.
    pub fn cmpk(&mut self, op: Compare, a: Value, k: f64) -> Value {
        let k = self.f(k);
        self.cmp(op, a, k)
    }
    /// `a op k` for an `i64` constant `k`.
    pub fn icmpk(&mut self, op: Compare, a: Value, k: i64) -> Value {
        let k = self.i(k);
        self.cmp(op, a, k)
    }
    pub fn is_nan(&mut self, a: Value) -> Value {
        self.push(MathOp::IsNan(a), MathTy::Bool)
    }
    pub fn ibin(&mut self, op: IBinary, a: Value, b: Value) -> Value {
        self.push(MathOp::IBinary(op, a, b), MathTy::I64)
    }
    /// `a op k` for an `i64` constant `k`.
    pub fn ibink(&mut self, op: IBinary, a: Value, k: i64) -> Value {
        let k = self.i(k);
        self.ibin(op, a, k)
    }
    pub fn shl(&mut self, a: Value, n: u32) -> Value {
        self.push(MathOp::Shl(a, n), MathTy::I64)
    }
    pub fn shr(&mut self, a: Value, n: u32) -> Value {
        self.push(MathOp::ShrLogical(a, n), MathTy::I64)
    }
    pub fn and(&mut self, a: Value, b: Value) -> Value {
        self.push(MathOp::And(a, b), MathTy::Bool)
    }
    pub fn or(&mut self, a: Value, b: Value) -> Value {
        self.push(MathOp::Or(a, b), MathTy::Bool)
    }
    /// `if c { a } else { b }`.
    pub fn select(&mut self, c: Value, a: Value, b: Value) -> Value {
        let ty = self.ty(a);
        self.push(MathOp::Select(c, a, b), ty)
    }
    /// `if c { k } else { b }` for an `f64` constant `k`.
    pub fn selectk(&mut self, c: Value, k: f64, b: Value) -> Value {
        let k = self.f(k);
        self.select(c, k, b)
    }
    pub fn bits_of(&mut self, a: Value) -> Value {
        self.push(MathOp::ToBits(a), MathTy::I64)
    }
    pub fn float_of_bits(&mut self, a: Value) -> Value {
        self.push(MathOp::FromBits(a), MathTy::F64)
    }
    pub fn int_of(&mut self, a: Value) -> Value {
        self.push(MathOp::ToInt(a), MathTy::I64)
    }
    pub fn float_of(&mut self, a: Value) -> Value {
        self.push(MathOp::ToFloat(a), MathTy::F64)
    }
    /// `c[0] + x * (c[1] + x * (...))`, with fused multiply-adds.
    pub fn poly(&mut self, x: Value, c: &[f64]) -> Value {
        let mut acc = self.f(c[c.len() - 1]);
        for &ci in c[..c.len() - 1].iter().rev() {
            let k = self.f(ci);
            acc = self.fma(x, acc, k);
        }
        acc
    }
    pub fn finish(self, result: Value) -> MathProgram {
        MathProgram {
            ops: self.ops,
            args: self.args,
            result,
        }
    }
}

/// A value while [`MathProgram::eval`] runs.
#[derive(Clone, Copy, Debug)]
enum Val {
    F(f64),
    I(i64),
    B(bool),
}

impl Val {
    fn f(self) -> f64 {
        match self {
            Val::F(v) => v,
            _ => f64::NAN,
        }
    }
    fn i(self) -> i64 {
        match self {
            Val::I(v) => v,
            _ => 0,
        }
    }
    fn b(self) -> bool {
        matches!(self, Val::B(true))
    }
}

impl MathProgram {
    /// Runs the program on the host, each operation as a GPU computes it (IEEE `f64`, one
    /// rounding per operation, `Fma` rounded once).
    pub fn eval(&self, args: &[f64]) -> f64 {
        let mut vals: Vec<Val> = Vec::with_capacity(self.ops.len());
        for &(op, _) in &self.ops {
            let g = |v: Value| vals[v as usize];
            let v = match op {
                MathOp::Arg(n) => Val::F(args.get(n as usize).copied().unwrap_or(f64::NAN)),
                MathOp::F(v) => Val::F(v),
                MathOp::I(v) => Val::I(v),
                MathOp::FUnary(op, a) => {
                    let a = g(a).f();
                    Val::F(match op {
                        FUnary::Neg => -a,
                        FUnary::Abs => a.abs(),
                        FUnary::Sqrt => a.sqrt(),
                        FUnary::RoundEven => a.round_ties_even(),
                        FUnary::Floor => a.floor(),
                        FUnary::Trunc => a.trunc(),
                    })
                }
                MathOp::FBinary(op, a, b) => {
                    let (a, b) = (g(a).f(), g(b).f());
                    Val::F(match op {
                        FBinary::Add => a + b,
                        FBinary::Sub => a - b,
                        FBinary::Mul => a * b,
                        FBinary::Div => a / b,
                        FBinary::Min => a.min(b),
                        FBinary::Max => a.max(b),
                        FBinary::CopySign => a.copysign(b),
                    })
                }
                MathOp::Fma(a, b, c) => Val::F(g(a).f().mul_add(g(b).f(), g(c).f())),
                MathOp::Compare(op, a, b) => Val::B(match (g(a), g(b)) {
                    (Val::I(a), Val::I(b)) => compare(op, a, b, false),
                    (a, b) => {
                        let (a, b) = (a.f(), b.f());
                        let nan = a.is_nan() || b.is_nan();
                        match op {
                            Compare::LtOrNan => nan || a < b,
                            Compare::Ne => !nan && a != b,
                            _ => compare(op, a, b, nan),
                        }
                    }
                }),
                MathOp::IsNan(a) => Val::B(g(a).f().is_nan()),
                MathOp::IBinary(op, a, b) => {
                    let (a, b) = (g(a).i(), g(b).i());
                    Val::I(match op {
                        IBinary::Add => a.wrapping_add(b),
                        IBinary::And => a & b,
                        IBinary::Or => a | b,
                    })
                }
                MathOp::Shl(a, n) => Val::I(g(a).i().wrapping_shl(n)),
                MathOp::ShrLogical(a, n) => Val::I(((g(a).i() as u64) >> n) as i64),
                MathOp::And(a, b) => Val::B(g(a).b() && g(b).b()),
                MathOp::Or(a, b) => Val::B(g(a).b() || g(b).b()),
                MathOp::Select(c, a, b) => {
                    if g(c).b() {
                        g(a)
                    } else {
                        g(b)
                    }
                }
                MathOp::ToBits(a) => Val::I(g(a).f().to_bits() as i64),
                MathOp::FromBits(a) => Val::F(f64::from_bits(g(a).i() as u64)),
                MathOp::ToInt(a) => Val::I(g(a).f() as i64),
                MathOp::ToFloat(a) => Val::F(g(a).i() as f64),
            };
            vals.push(v);
        }
        vals[self.result as usize].f()
    }
}

fn compare<T: PartialOrd>(op: Compare, a: T, b: T, nan: bool) -> bool {
    !nan && match op {
        Compare::Eq => a == b,
        Compare::Ne => a != b,
        Compare::Lt | Compare::LtOrNan => a < b,
        Compare::Le => a <= b,
        Compare::Gt => a > b,
        Compare::Ge => a >= b,
    }
}

#[cfg(test)]
mod tests;
