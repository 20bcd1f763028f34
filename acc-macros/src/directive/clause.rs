//! Clauses: their names (with the spec's aliases), arguments and spans.

use proc_macro2::Span;
use syn::{Expr, Ident};

macro_rules! clause_names {
    ($($variant:ident => $spelling:literal $(| $alias:literal)*),* $(,)?) => {
        /// Every clause name of OpenACC 3.3 (aliases resolved to their canonical clause).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum ClauseName { $($variant),* }

        impl ClauseName {
            /// The canonical spelling.
            pub fn spelling(self) -> &'static str {
                match self { $(ClauseName::$variant => $spelling),* }
            }
            /// The clause a spelling names, aliases (`pcopy`, `present_or_copy`, `dtype`)
            /// included.
            pub fn from_spelling(s: &str) -> Option<ClauseName> {
                match s {
                    $($spelling $(| $alias)* => Some(ClauseName::$variant),)*
                    _ => None,
                }
            }
            /// Every canonical spelling, for "did you mean" messages.
            pub const ALL: &'static [&'static str] = &[$($spelling),*];
        }
    };
}

clause_names! {
    Async => "async",
    Wait => "wait",
    NumGangs => "num_gangs",
    NumWorkers => "num_workers",
    VectorLength => "vector_length",
    DeviceType => "device_type" | "dtype",
    If => "if",
    SelfClause => "self",
    Reduction => "reduction",
    Copy => "copy" | "pcopy" | "present_or_copy",
    Copyin => "copyin" | "pcopyin" | "present_or_copyin",
    Copyout => "copyout" | "pcopyout" | "present_or_copyout",
    Create => "create" | "pcreate" | "present_or_create",
    NoCreate => "no_create",
    Present => "present",
    Deviceptr => "deviceptr",
    Attach => "attach",
    Detach => "detach",
    Delete => "delete",
    Private => "private",
    Firstprivate => "firstprivate",
    Default => "default",
    Collapse => "collapse",
    Gang => "gang",
    Worker => "worker",
    Vector => "vector",
    Seq => "seq",
    Independent => "independent",
    Auto => "auto",
    Tile => "tile",
    Finalize => "finalize",
    IfPresent => "if_present",
    UseDevice => "use_device",
    DeviceResident => "device_resident",
    Link => "link",
    Bind => "bind",
    Nohost => "nohost",
    DeviceNum => "device_num",
    DefaultAsync => "default_async",
    Host => "host",
    Device => "device",
    Read => "read",
    Write => "write",
    Update => "update",
    Capture => "capture",
    Unchecked => "unchecked",
}

/// A device type named in a `device_type(..)` clause.
#[allow(dead_code)]
#[derive(Clone, Debug)]
pub enum DeviceTypeSel {
    /// `*`: every device type not named in another `device_type` clause.
    Star(Span),
    /// A device type name.
    Named(Ident),
}

/// A reduction operator (3.3 section 2.5.15).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RedOp {
    Add,
    Mul,
    Max,
    Min,
    BitAnd,
    BitOr,
    BitXor,
    And,
    Or,
}

impl RedOp {
    /// The operator as written.
    pub fn spelling(self) -> &'static str {
        match self {
            RedOp::Add => "+",
            RedOp::Mul => "*",
            RedOp::Max => "max",
            RedOp::Min => "min",
            RedOp::BitAnd => "&",
            RedOp::BitOr => "|",
            RedOp::BitXor => "^",
            RedOp::And => "&&",
            RedOp::Or => "||",
        }
    }

    /// The marker type in `acc::__rt::reduce`.
    pub fn marker(self) -> &'static str {
        match self {
            RedOp::Add => "Add",
            RedOp::Mul => "Mul",
            RedOp::Max => "Max",
            RedOp::Min => "Min",
            RedOp::BitAnd => "BitAnd",
            RedOp::BitOr => "BitOr",
            RedOp::BitXor => "BitXor",
            RedOp::And => "And",
            RedOp::Or => "Or",
        }
    }
}

/// A `size-expr` of `tile(..)` and `gang(static: ..)`: `*` or an integer expression.
// Scheduling arguments are parsed and checked here; the GPU lowering reads them.
#[allow(dead_code)]
#[derive(Clone)]
pub enum SizeExpr {
    Star(Span),
    Expr(Box<Expr>),
}

/// A variable in a clause's list: a name, optionally a subarray of it (`a[lo..hi]`).
#[derive(Clone)]
pub struct VarRef {
    /// The variable; for a member (`g.a`, `self.h.b`), the alias the construct binds to it.
    pub name: Ident,
    /// A member of a struct (OpenACC 2.6+): the variable and the fields, as written. The
    /// construct binds [`VarRef::name`] to a reference to it and its body uses that alias.
    pub member: Option<(Ident, Vec<Ident>)>,
    /// The range of a subarray, as written.
    pub subarray: Option<Box<Expr>>,
    /// The variable as written, for messages (`a[0..n]`).
    pub text: String,
    pub span: Span,
}

/// A clause's arguments, by shape.
// Scheduling arguments (gang/worker/vector sizes, bind names) only matter to GPU lowering.
#[allow(dead_code)]
#[derive(Clone)]
pub enum ClauseArgs {
    /// No argument (`seq`, `finalize`, a bare `async` or `self`).
    None,
    /// One expression (`if(c)`, `num_workers = 4`, `async(1)`, `self(c)` on compute).
    Expr(Box<Expr>),
    /// A list of expressions (`num_gangs(a, b)`, `wait(1, 2)`).
    Exprs(Vec<Expr>),
    /// A variable list with an optional modifier (`copyin(readonly: a)`, `copyout(zero: b)`).
    Vars {
        modifier: Option<Ident>,
        vars: Vec<VarRef>,
    },
    /// `reduction(op: vars)`.
    Reduction {
        op: RedOp,
        op_span: Span,
        vars: Vec<VarRef>,
    },
    /// `default(none)` / `default(present)`.
    Default(Ident),
    /// `device_type(..)`.
    DeviceTypes(Vec<DeviceTypeSel>),
    /// `gang(num: e, dim: e, static: s)`.
    Gang {
        num: Option<Box<Expr>>,
        dim: Option<Box<Expr>>,
        static_: Option<SizeExpr>,
    },
    /// `worker(num: e)` / `vector(length: e)`.
    Level { arg: Option<Box<Expr>> },
    /// `collapse(n)` / `collapse(force: n)`.
    Collapse { force: bool, n: usize, n_span: Span },
    /// `tile(s, s, ..)`.
    Tile(Vec<SizeExpr>),
    /// `bind(name)` / `bind("name")`.
    Bind(String),
}

/// One clause as written.
#[derive(Clone)]
pub struct Clause {
    pub name: ClauseName,
    /// The span of the clause's name.
    pub span: Span,
    pub args: ClauseArgs,
    /// The `device_type` section the clause is in (`None`: applies to every device type).
    pub device_types: Option<Vec<DeviceTypeSel>>,
    /// `wait(devnum: e: ..)`: the device whose queues are waited for (3.3 section 2.16.3).
    pub devnum: Option<Box<Expr>>,
}

impl Clause {
    /// The clause's variables, for clauses that take a variable list.
    pub fn vars(&self) -> &[VarRef] {
        match &self.args {
            ClauseArgs::Vars { vars, .. } | ClauseArgs::Reduction { vars, .. } => vars,
            _ => &[],
        }
    }

    /// The single expression argument, if the clause has one.
    pub fn expr(&self) -> Option<&Expr> {
        match &self.args {
            ClauseArgs::Expr(e) => Some(e),
            _ => None,
        }
    }

    /// The modifier (`readonly`, `zero`) of a variable-list clause.
    pub fn modifier(&self) -> Option<&Ident> {
        match &self.args {
            ClauseArgs::Vars { modifier, .. } => modifier.as_ref(),
            _ => None,
        }
    }
}
