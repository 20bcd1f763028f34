//! Checks of a compute region's or routine's body: what cannot run on a device (3.3 sections
//! 2.5 and 2.15; checklist R12, R110, R116, R124 and docs/guide/regions.md). Each construct is reported
//! at its span with its own message.

use proc_macro2::Span;
use std::collections::HashSet;
use syn::spanned::Spanned;
use syn::visit::{self, Visit};
use syn::{Expr, Item, Stmt};

/// What the body belongs to, for messages.
#[derive(Clone, Copy)]
pub enum Body {
    Region(&'static str),
    Routine,
}

impl Body {
    fn what(self) -> String {
        match self {
            Body::Region(k) => format!("a `{k}` region"),
            Body::Routine => String::from("an `#[acc::routine]`"),
        }
    }
}

/// Runtime routines that only the host may call (OpenACC chapter 3 preamble; R124). Only
/// `acc::on_device` is callable on a device.
const HOST_ONLY_ROUTINES: &[&str] = &[
    "get_num_devices",
    "set_device_type",
    "get_device_type",
    "try_get_device_type",
    "set_device_num",
    "get_device_num",
    "init",
    "shutdown",
    "get_property",
    "copyin",
    "create",
    "copyout",
    "copyout_finalize",
    "delete",
    "delete_finalize",
    "update_device",
    "update_self",
    "is_present",
    "wait",
    "wait_all",
    "wait_any",
    "wait_async",
    "async_test",
    "async_test_all",
    "get_default_async",
    "set_default_async",
    "malloc",
    "free",
    "deviceptr",
    "hostptr",
    "map_data",
    "unmap_data",
    "memcpy_to_device",
    "memcpy_from_device",
    "memcpy_device",
    "attach",
    "detach",
];

/// Executable directives, which the host runs (R110).
const HOST_DIRECTIVES: &[&str] = &[
    "update",
    "enter_data",
    "exit_data",
    "wait",
    "init",
    "shutdown",
    "set",
];

/// Functions and methods that allocate on the heap.
const ALLOCATING_PATHS: &[&str] = &[
    "Vec", "Box", "String", "Rc", "Arc", "HashMap", "BTreeMap", "HashSet", "VecDeque",
];
const ALLOCATING_METHODS: &[&str] = &[
    "to_vec",
    "to_string",
    "to_owned",
    "collect",
    "push",
    "push_str",
    "extend",
    "insert",
    "resize",
    "into_boxed_slice",
];

/// Primitive types whose associated functions (`f64::max`, `i32::pow`) run on a device.
const PRIMITIVES: &[&str] = &[
    "f32", "f64", "i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16", "u32", "u64", "u128",
    "usize", "bool", "f16", "bf16",
];

/// What checking a body found: errors, and the routine markers its calls refer to (each a
/// statement `let _: RoutineMarker = path_must_be_an_acc_routine;` that fails to compile when the callee is not an
/// `#[acc::routine]`, 3.3 section 2.15; R120).
pub struct BodyCheck {
    pub errors: Vec<syn::Error>,
    pub routine_checks: Vec<proc_macro2::TokenStream>,
}

/// The marker path of a call to `p` when `p` is a function of the user's (not `acc`'s, std's
/// numeric functions, a constructor or a heap allocation), which must be an `#[acc::routine]`.
fn user_routine_marker(p: &syn::ExprPath) -> Option<syn::Path> {
    let segs: Vec<String> = p
        .path
        .segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect();
    let last = segs.last().cloned().unwrap_or_default();
    let parent = segs.len().checked_sub(2).map(|i| segs[i].as_str());
    let std_numeric = parent.is_some_and(|s| PRIMITIVES.contains(&s));
    let std_cmp = matches!(segs.first().map(String::as_str), Some("std" | "core"))
        && matches!(parent, Some("cmp" | "mem"))
        && matches!(last.as_str(), "min" | "max" | "swap");
    let constructor = last.chars().next().is_some_and(char::is_uppercase)
        || crate::analysis::methods::is_complex_new(&segs);
    let allocating = parent.is_some_and(|s| ALLOCATING_PATHS.contains(&s));
    if acc_path_last(&p.path).is_some()
        || allocating
        || std_numeric
        || std_cmp
        || constructor
        || p.qself.is_some()
    {
        return None;
    }
    let mut marker = p.path.clone();
    let seg = marker.segments.last_mut()?;
    seg.ident = routine_marker(&seg.ident);
    seg.arguments = syn::PathArguments::None;
    Some(marker)
}

/// The name of the marker `#[acc::routine]` puts next to function `name`.
pub fn routine_marker(name: &syn::Ident) -> syn::Ident {
    syn::Ident::new(&format!("{name}_must_be_an_acc_routine"), name.span())
}

/// Every construct in `stmts` that cannot run on a device. `combined` when `stmts` is the loop
/// of a combined construct (whose iterator the loop construct's own rules check).
/// `undeclared_statics`: statics of the enclosing function that no `declare` names.
pub fn check_body(
    stmts: &[Stmt],
    body: Body,
    combined: bool,
    undeclared_statics: &[String],
) -> BodyCheck {
    // A static defined inside the body is refused where it is defined; its uses need no
    // second error.
    struct Inner(Vec<String>);
    impl<'a> Visit<'a> for Inner {
        fn visit_item_static(&mut self, s: &'a syn::ItemStatic) {
            self.0.push(s.ident.to_string());
        }
    }
    let mut inner = Inner(Vec::new());
    for st in stmts {
        inner.visit_stmt(st);
    }
    let outer: Vec<String> = undeclared_statics
        .iter()
        .filter(|s| !inner.0.contains(s))
        .cloned()
        .collect();
    let mut c = Checker {
        body,
        undeclared_statics: &outer,
        errors: Vec::new(),
        routine_checks: Vec::new(),
        loop_construct: combined,
        loop_depth: 0,
    };
    for st in stmts {
        c.visit_stmt(st);
    }
    BodyCheck {
        errors: c.errors,
        routine_checks: c.routine_checks,
    }
}

struct Checker<'s> {
    body: Body,
    undeclared_statics: &'s [String],
    errors: Vec<syn::Error>,
    routine_checks: Vec<proc_macro2::TokenStream>,
    /// The next `for` is associated with a loop construct: an iterator that is not a range is
    /// reported by the loop construct's rules (3.3 section 2.9), not as a method call here.
    loop_construct: bool,
    /// How many `for` loops enclose the code being checked.
    loop_depth: usize,
}

/// Whether `st` is `acc::cache!(..)`.
fn is_cache(st: &Stmt) -> bool {
    let m = match st {
        Stmt::Macro(m) => &m.mac,
        Stmt::Expr(Expr::Macro(m), _) => &m.mac,
        _ => return false,
    };
    acc_path_last(&m.path).is_some_and(|n| n == "cache")
}

impl Checker<'_> {
    fn err(&mut self, span: Span, msg: String) {
        self.errors.push(syn::Error::new(span, msg));
    }
}

pub(crate) fn acc_path_last(path: &syn::Path) -> Option<String> {
    let segs: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
    (segs.len() == 2 && segs[0] == "acc").then(|| segs[1].clone())
}

impl<'ast> Visit<'ast> for Checker<'_> {
    fn visit_expr(&mut self, e: &'ast Expr) {
        let what = self.body.what();
        match e {
            // `for i in (a..b).rev().step_by(s)`: the range methods are loop-header grammar.
            Expr::ForLoop(f) => {
                let mut it = &*f.expr;
                loop {
                    match it {
                        Expr::Paren(p) => it = &p.expr,
                        Expr::MethodCall(m) if m.method == "rev" || m.method == "step_by" => {
                            m.args.iter().for_each(|a| self.visit_expr(a));
                            it = &m.receiver;
                        }
                        _ => break,
                    }
                }
                let construct = std::mem::take(&mut self.loop_construct);
                if !construct || matches!(it, Expr::Range(_)) {
                    self.visit_expr(it);
                }
                // `cache!` goes at the top of a loop body (R84).
                let mut top = true;
                for st in &f.body.stmts {
                    let cache = is_cache(st);
                    if cache && !top {
                        self.err(st.span(), "`acc::cache!` goes at the top of a loop body, before its other statements (OpenACC 2.0 section 2.8)".into());
                    }
                    top &= cache;
                }
                self.loop_depth += 1;
                self.visit_block(&f.body);
                self.loop_depth -= 1;
                return;
            }
            Expr::Closure(c) => {
                self.err(c.or1_token.span, format!(
                    "closures cannot run on a device: inside {what}, write the code inline or call an `#[acc::routine]` (docs/guide/regions.md)"
                ));
                return;
            }
            Expr::Unsafe(u) => {
                self.err(u.unsafe_token.span, format!(
                    "`unsafe` code cannot be checked for a device: not allowed inside {what} (a `static mut` shared with a region needs `declare`, 3.3 section 2.13)"
                ));
                return;
            }
            Expr::Await(a) => {
                self.err(a.await_token.span, format!("`.await` cannot run inside {what} (3.3 section 2.5: no branching out of a region)"));
            }
            Expr::Call(call) => match &*call.func {
                Expr::Path(p) => self.call(p, &what),
                other => self.err(other.span(), format!(
                    "inside {what} only named functions can be called (an `#[acc::routine]`, or a function of std's numeric types)"
                )),
            },
            Expr::MethodCall(m) => {
                let method = m.method.to_string();
                if ALLOCATING_METHODS.contains(&method.as_str()) {
                    self.err(m.method.span(), format!(
                        "`.{method}()` allocates or grows a collection on the heap, which cannot happen inside {what} (docs/guide/regions.md)"
                    ));
                } else if crate::analysis::uses::path_ident(&m.receiver).is_some_and(|r| r == "self") && !crate::analysis::methods::DEVICE_METHODS.contains(&method.as_str()) {
                    // `self.f(..)` inside an impl: `f` must be an `#[acc::routine]` method.
                    let marker = routine_marker(&m.method);
                    self.routine_checks.push(quote::quote_spanned!(m.method.span()=> let _: ::acc::__rt::RoutineMarker<_, _> = Self::#marker;));
                } else if crate::analysis::methods::NDARRAY_METHODS.contains(&method.as_str())
                    && crate::analysis::uses::path_ident(&m.receiver).is_some()
                {
                    // `a.nrows()` of an `ndarray` array: its axes' lengths travel with the launch.
                } else if !crate::analysis::methods::DEVICE_METHODS.contains(&method.as_str()) {
                    self.err(m.method.span(), format!(
                        "`.{method}()` cannot run on a device: inside {what}, methods are limited to the float and integer methods of std, `len`, and `ndarray`'s `nrows`, `ncols`, `dim`, `shape` and `len_of`; call your own code as an `#[acc::routine]` function (3.3 section 2.15; docs/guide/regions.md)"
                    ));
                }
            }
            Expr::Macro(m) => self.mac(&m.mac),
            // R29/R123: a global a region or routine uses must be in a `declare` directive.
            Expr::Path(p) if p.qself.is_none() && p.path.get_ident().is_some_and(|i| self.undeclared_statics.iter().any(|s| i == s)) => {
                let name = &p.path.segments[0].ident;
                self.err(name.span(), format!(
                    "the static `{name}` is used inside {what} without a `declare`: a global a device uses must be declared (3.3 sections 2.6.2 and 2.13); add `#[acc::declare(copyin({name}))]` to the static"
                ));
            }
            _ => {}
        }
        visit::visit_expr(self, e);
    }

    fn visit_stmt(&mut self, st: &'ast Stmt) {
        use crate::directive::attrs;
        if attrs::stmt_attrs(st)
            .iter()
            .any(|a| attrs::directive_of(a) == Some(crate::directive::DirectiveKind::Loop))
        {
            self.loop_construct = true;
        }
        match st {
            Stmt::Macro(m) => self.mac(&m.mac),
            Stmt::Item(Item::Static(s)) => {
                let what = self.body.what();
                self.err(s.static_token.span, format!(
                    "a `static` inside {what} is not supported on devices (3.3 section 2.15.1); use a local variable or a `declare`d global"
                ));
            }
            Stmt::Item(Item::Fn(f)) => {
                let what = self.body.what();
                self.err(f.sig.ident.span(), format!("functions cannot be defined inside {what}; define an `#[acc::routine]` outside it (3.3 section 2.15.1)"));
            }
            other => visit::visit_stmt(self, other),
        }
    }

    fn visit_item(&mut self, _: &'ast Item) {}
}

impl Checker<'_> {
    /// A call of the function at path `p`.
    fn call(&mut self, p: &syn::ExprPath, what: &str) {
        let segs: Vec<String> = p
            .path
            .segments
            .iter()
            .map(|s| s.ident.to_string())
            .collect();
        if let Some(name) = acc_path_last(&p.path) {
            if HOST_ONLY_ROUTINES.contains(&name.as_str()) {
                self.err(p.span(), format!(
                    "`acc::{name}` is a host routine and cannot be called inside {what}; only `acc::on_device` and `acc::gang_idx` run on a device (OpenACC chapter 3)"
                ));
            }
            return;
        }
        if segs.len() >= 2 && ALLOCATING_PATHS.contains(&segs[segs.len() - 2].as_str()) {
            self.err(p.span(), format!(
                "`{}` allocates on the heap, which cannot happen inside {what}; allocate before the region and pass the data in a data clause (docs/guide/regions.md)",
                segs.join("::")
            ));
            return;
        }
        // A function of the user's: it must be an `#[acc::routine]`, whose marker sits next to it.
        if let Some(marker) = user_routine_marker(p) {
            self.routine_checks.push(
                quote::quote_spanned!(p.span()=> let _: ::acc::__rt::RoutineMarker = #marker;),
            );
        }
    }

    fn mac(&mut self, m: &syn::Macro) {
        let what = self.body.what();
        match acc_path_last(&m.path) {
            Some(n) if n == "cache" => {
                if self.loop_depth == 0 {
                    self.err(m.path.span(), format!("`acc::cache!` goes at the top of a `for` loop's body inside {what}, not outside any loop (OpenACC 2.0 section 2.8)"));
                }
            }
            Some(n) if HOST_DIRECTIVES.contains(&n.as_str()) => self.err(m.path.span(), format!(
                "`acc::{n}!` is an executable directive for the host; it cannot appear inside {what} (3.3 section 2.14)"
            )),
            _ => {
                let name = m.path.segments.last().map(|s| s.ident.to_string()).unwrap_or_default();
                self.err(m.path.span(), format!(
                    "macros cannot run on a device: `{name}!` is not allowed inside {what} (only `acc::cache!` is; docs/guide/regions.md)"
                ));
            }
        }
    }
}

/// The parallelism levels of loops, outermost first (3.3 section 2.9).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub enum Level {
    Gang,
    Worker,
    Vector,
}

impl Level {
    /// The level as `RoutineMarker::level` holds it: seq 0, vector 1, worker 2, gang 3.
    pub fn rank(self) -> u8 {
        match self {
            Level::Gang => 3,
            Level::Worker => 2,
            Level::Vector => 1,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Level::Gang => "gang",
            Level::Worker => "worker",
            Level::Vector => "vector",
        }
    }
}

/// Where loops may start inside a routine of `dir`'s level: `None` for `seq` (no loops with a
/// level at all), else the routine's own level (3.3 section 2.15.1; R122). With levels per
/// device type, the lowest of them, since the body must conform on every device type (2.4).
pub fn routine_level(dir: &crate::directive::Directive) -> Option<Level> {
    use crate::directive::ClauseName as C;
    dir.projections()
        .iter()
        .map(|(_, p)| {
            if p.has(C::Seq) {
                None
            } else if p.has(C::Vector) {
                Some(Level::Vector)
            } else if p.has(C::Worker) {
                Some(Level::Worker)
            } else if p.has(C::Gang) {
                Some(Level::Gang)
            } else {
                None
            }
        })
        .min_by_key(|l| l.map_or(0, |l| 3 - l as u8))
        .flatten()
}

/// The level a call site must leave free for a routine of `dir` (R121), as
/// `RoutineMarker::level`: with levels per device type, the highest of them, since every
/// device type's call must conform (3.3 section 2.4).
pub fn routine_call_rank(dir: &crate::directive::Directive) -> u8 {
    use crate::directive::ClauseName as C;
    dir.projections()
        .iter()
        .map(|(_, p)| {
            [(C::Gang, 3), (C::Worker, 2), (C::Vector, 1)]
                .into_iter()
                .find(|(c, _)| p.has(*c))
                .map_or(0, |(_, r)| r)
        })
        .max()
        .unwrap_or(0)
}

/// Checks that loops with explicit levels nest gang ⊃ worker ⊃ vector (R69-R71) and, inside a
/// routine (`routine = Some(level)`, `Some(None)` for `seq`), stay at or below its level (R122).
/// `outer` is the directive of the loop the statements are the body of (a combined construct).
///
/// Calls of routines are checked against the same nest (R121): a call inside a loop of level
/// L may call only routines below L, and a routine only routines at or below its own level.
/// The callee's level is its marker's, known to rustc, so each check is returned as a
/// statement that fails to compile (a constant that panics with the message) where the rule
/// is broken.
pub fn check_loop_nesting(
    stmts: &[Stmt],
    routine: Option<Option<Level>>,
    outer: Option<&crate::directive::Directive>,
) -> BodyCheck {
    // Levels in `device_type` sections apply on their devices only (3.3 section 2.4), so the
    // nest is checked as each device type sees it: as the device types no section names see
    // it (`""`), then as each named one does. An error only a named device's view has says so.
    let mut out = BodyCheck {
        errors: Vec::new(),
        routine_checks: Vec::new(),
    };
    let mut seen = HashSet::new();
    let mut seen_checks = HashSet::new();
    for device in device_types_named(stmts, outer) {
        let view = |d: &crate::directive::Directive| d.for_device(&device);
        let outer = outer.map(view);
        let mut n = Nesting {
            enclosing: outer.iter().filter_map(levels_of).collect(),
            enclosing_dims: outer.iter().map(gang_dim).collect(),
            routine,
            device: device.clone(),
            errors: Vec::new(),
            call_checks: Vec::new(),
        };
        for st in stmts {
            n.visit_stmt(st);
        }
        for e in n.errors {
            if seen.insert(format!("{:?} {e}", e.span())) {
                out.errors.push(if device.is_empty() {
                    e
                } else {
                    syn::Error::new(
                        e.span(),
                        format!("{e} (with the clauses of `device_type({device})`)"),
                    )
                });
            }
        }
        for c in n.call_checks {
            if seen_checks.insert(c.to_string()) {
                out.routine_checks.push(c);
            }
        }
    }
    out
}

/// `""` (the device types no `device_type` clause names), then each device type named by a
/// `device_type` clause of `outer` or of a loop directive in `stmts`.
fn device_types_named(stmts: &[Stmt], outer: Option<&crate::directive::Directive>) -> Vec<String> {
    struct Names(Vec<String>);
    impl<'ast> Visit<'ast> for Names {
        fn visit_stmt(&mut self, st: &'ast Stmt) {
            for a in crate::directive::attrs::stmt_attrs(st) {
                if let Some(d) = crate::directive::parsed::loop_of(a) {
                    d.add_named_device_types(&mut self.0);
                }
            }
            visit::visit_stmt(self, st);
        }
        fn visit_item(&mut self, _: &'ast Item) {}
    }
    let mut names = Names(vec![String::new()]);
    if let Some(d) = outer {
        d.add_named_device_types(&mut names.0);
    }
    for st in stmts {
        names.visit_stmt(st);
    }
    names.0
}

/// The levels a loop directive names explicitly, with their spans.
fn explicit_levels(d: &crate::directive::Directive) -> Vec<(Level, Span)> {
    use crate::directive::ClauseName as C;
    [
        (C::Gang, Level::Gang),
        (C::Worker, Level::Worker),
        (C::Vector, Level::Vector),
    ]
    .into_iter()
    .filter_map(|(name, level)| d.general(name).next().map(|c| (level, c.span)))
    .collect()
}

/// The `dim` of a loop directive's `gang` clause (1 when it has none; 0 without `gang`).
fn gang_dim(d: &crate::directive::Directive) -> u64 {
    use crate::directive::{ClauseArgs, ClauseName as C};
    match d.general(C::Gang).next() {
        None => 0,
        Some(c) => match &c.args {
            ClauseArgs::Gang { dim: Some(e), .. } => crate::check::int_literal(e).unwrap_or(1),
            _ => 1,
        },
    }
}

/// The deepest level a loop directive names, which loops inside it must go below.
fn levels_of(d: &crate::directive::Directive) -> Option<(Level, Span)> {
    explicit_levels(d).into_iter().max_by_key(|l| l.0)
}

struct Nesting {
    /// Explicit levels of the enclosing loop directives, with the span of each.
    enclosing: Vec<(Level, Span)>,
    /// The `gang(dim: n)` of each enclosing loop directive (0 for those without `gang`).
    enclosing_dims: Vec<u64>,
    routine: Option<Option<Level>>,
    /// The device type whose view of the directives is checked (`""`: those no
    /// `device_type` clause names).
    device: String,
    errors: Vec<syn::Error>,
    call_checks: Vec<proc_macro2::TokenStream>,
}

impl Nesting {
    /// The check that the routine whose marker is `marker`, called as `callee` at `span`, fits
    /// where it is called (R121).
    fn call(&mut self, marker: proc_macro2::TokenStream, callee: String, span: Span, method: bool) {
        let in_loop = self
            .enclosing
            .iter()
            .max_by_key(|l| l.0)
            .map(|&(l, _)| (l.rank() - 1, format!("inside a `{}` loop", l.name())));
        let in_routine = self.routine.map(|r| match r {
            None => (0, "inside a `routine(seq)`".to_string()),
            Some(r) => (r.rank(), format!("inside a `routine({})`", r.name())),
        });
        let Some((allowed, why)) = in_loop.into_iter().chain(in_routine).min_by_key(|a| a.0) else {
            return;
        };
        let may = match allowed {
            0 => "only `routine(seq)` functions".to_string(),
            1 => "only `routine(vector)` or `routine(seq)` functions".to_string(),
            2 => {
                "only `routine(worker)`, `routine(vector)` or `routine(seq)` functions".to_string()
            }
            _ => return,
        };
        let msg = format!(
            "`{callee}` is called {why}, where {may} may be called: a routine's own level of parallelism must still be free where it is called (3.3 section 2.15.1)"
        );
        // A constant item is evaluated by `cargo check` too; one inside a function cannot name
        // `Self`, so a method's check is an inline constant (evaluated when the code is built).
        self.call_checks.push(if method {
            quote::quote_spanned!(span=>
                const { if #marker.level > #allowed { ::core::panic!(#msg) } };
            )
        } else {
            quote::quote_spanned!(span=>
                const _: () = if #marker.level > #allowed { ::core::panic!(#msg) };
            )
        });
    }
}

impl<'ast> Visit<'ast> for Nesting {
    fn visit_stmt(&mut self, st: &'ast Stmt) {
        use crate::directive::attrs;
        use crate::directive::DirectiveKind;
        let mut pushed = 0;
        for a in attrs::stmt_attrs(st) {
            if attrs::directive_of(a) != Some(DirectiveKind::Loop) {
                continue;
            }
            let Ok(d) = crate::directive::parsed::of_attr(DirectiveKind::Loop, a) else {
                continue;
            };
            let d = d.for_device(&self.device);
            let levels = explicit_levels(&d);
            let Some(&(innermost_new, span)) = levels.iter().min_by_key(|l| l.0) else {
                continue;
            };
            // 3.3 section 2.9.2: a gang loop may be inside another when its `dim` is lower.
            let new_dim = gang_dim(&d);
            let outer_dim = self.enclosing_dims.iter().copied().filter(|&g| g > 0).min();
            let lower_gang = innermost_new == Level::Gang
                && outer_dim.is_some_and(|o| new_dim < o)
                && !self.enclosing.iter().any(|l| l.0 > Level::Gang);
            if let Some(&(outer, _)) = self.enclosing.iter().max_by_key(|l| l.0) {
                if innermost_new == Level::Gang && outer == Level::Gang && !lower_gang {
                    self.errors.push(syn::Error::new(span, format!(
                        "a `gang(dim: {new_dim})` loop cannot be inside a `gang(dim: {})` loop: a gang loop inside another needs a lower `dim` (3.3 section 2.9.2)",
                        outer_dim.unwrap_or(1)
                    )));
                } else if innermost_new <= outer && !lower_gang {
                    self.errors.push(syn::Error::new(span, format!(
                        "a `{}` loop cannot be inside a `{}` loop: levels nest gang, then worker, then vector (3.3 section 2.9.{})",
                        innermost_new.name(), outer.name(), match outer { Level::Gang => 2, Level::Worker => 3, Level::Vector => 4 }
                    )));
                }
            }
            match self.routine {
                Some(None) => self.errors.push(syn::Error::new(span, format!(
                    "a `routine(seq)` contains no `{}` loops: make it `routine({})` or the loop `seq` (3.3 section 2.15.1)",
                    innermost_new.name(), innermost_new.name()
                ))),
                Some(Some(r)) if innermost_new < r => self.errors.push(syn::Error::new(span, format!(
                    "a `routine({})` can contain only loops at its level or below, not `{}` (3.3 section 2.15.1)",
                    r.name(), innermost_new.name()
                ))),
                _ => {}
            }
            self.enclosing.extend(levels_of(&d));
            self.enclosing_dims.push(new_dim);
            pushed += 1;
        }
        visit::visit_stmt(self, st);
        for _ in 0..pushed {
            self.enclosing.pop();
            self.enclosing_dims.pop();
        }
    }
    fn visit_expr(&mut self, e: &'ast Expr) {
        match e {
            Expr::Call(call) => {
                if let Expr::Path(p) = &*call.func {
                    if let Some(marker) = user_routine_marker(p) {
                        let callee = quote::ToTokens::to_token_stream(&p.path)
                            .to_string()
                            .replace(' ', "");
                        self.call(quote::quote!(#marker), callee, p.span(), false);
                    }
                }
            }
            Expr::MethodCall(m)
                if crate::analysis::uses::path_ident(&m.receiver).is_some_and(|r| r == "self")
                    && !crate::analysis::methods::DEVICE_METHODS
                        .contains(&m.method.to_string().as_str()) =>
            {
                let marker = routine_marker(&m.method);
                self.call(
                    quote::quote!(Self::#marker),
                    format!("self.{}", m.method),
                    m.method.span(),
                    true,
                );
            }
            _ => {}
        }
        visit::visit_expr(self, e);
    }
    fn visit_item(&mut self, _: &'ast Item) {}
}
