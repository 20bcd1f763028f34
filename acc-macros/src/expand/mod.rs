//! Expansion: directives on functions and statements become Rust code that calls the runtime
//! (`::acc::__rt`) and runs the region's host twin (docs/design-notes/ir-and-backends.md).

pub mod atomic;
pub use crate::directive::attrs;
pub mod collapse_force;
pub mod compute;
pub mod data_construct;
pub mod executable;
pub mod gang_redundant;
pub mod iterators;
pub mod kernel;
pub mod leave;
pub mod members;
pub mod recognized_reductions;
pub mod region;
pub mod subarray_reductions;

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned, ToTokens};
use syn::visit_mut::{self, VisitMut};
use syn::{Block, Expr, ItemFn, Stmt};

use crate::analysis::bindings::Env;
use crate::check::check_directive;
use crate::directive::{Directive, DirectiveKind};

/// Errors collected while expanding one item, and what the expansion knows of the item.
pub struct Ctx {
    errors: Vec<syn::Error>,
    /// The enclosing function's name, for region sites.
    pub fn_name: String,
    /// Variables named by the data clauses of lexically enclosing `data` constructs.
    pub enclosing_data: Vec<Vec<String>>,
    /// Variables enclosing `data` constructs name in `copyin(readonly: ..)`: no region inside
    /// may write them (3.3 section 2.7.7).
    pub enclosing_readonly: Vec<Vec<String>>,
    /// The `default` clause (`none` or `present`) of each enclosing data construct, which
    /// compute constructs inside see (3.3 section 2.6.2: "visible at the compute construct").
    pub enclosing_default: Vec<Option<(String, Span)>>,
    /// The enclosing function has type or const parameters.
    pub generic_fn: bool,
    /// Numbers the guards of nested data regions.
    next_id: usize,
    /// Statics defined in the function's body without a `declare`, which its regions may not
    /// use (3.3 section 2.13; R29, R123).
    pub undeclared_statics: Vec<String>,
    /// `::acc::__rt::LoopSite`s of the loop constructs the multicore rewrite of the region
    /// being expanded met (`ACC_INFO`).
    pub loop_notes: Vec<proc_macro2::TokenStream>,
    /// The reductions `kernels` recognized in the construct being expanded (names), which
    /// `ACC_INFO` says were found, not written.
    pub recognized: Vec<String>,
}

impl Ctx {
    /// Enters the scope of the data construct `dir` (its variables, `readonly` ones and
    /// `default`), for the constructs inside it.
    pub fn enter_data(&mut self, dir: &Directive) {
        self.enclosing_data.push(data_construct::named_vars(dir));
        self.enclosing_readonly
            .push(data_construct::readonly_vars(dir));
        self.enclosing_default
            .push(data_construct::default_clause(dir));
    }

    /// Leaves the innermost data construct's scope ([`Ctx::enter_data`]).
    pub fn leave_data(&mut self) {
        self.enclosing_data.pop();
        self.enclosing_readonly.pop();
        self.enclosing_default.pop();
    }

    pub fn new(fn_name: String) -> Ctx {
        Ctx {
            errors: Vec::new(),
            fn_name,
            enclosing_data: Vec::new(),
            enclosing_readonly: Vec::new(),
            enclosing_default: Vec::new(),
            generic_fn: false,
            next_id: 0,
            undeclared_statics: Vec::new(),
            loop_notes: Vec::new(),
            recognized: Vec::new(),
        }
    }
    /// A number not given out before in this item.
    pub fn next_id(&mut self) -> usize {
        self.next_id += 1;
        self.next_id
    }
    pub fn error(&mut self, span: Span, msg: impl std::fmt::Display) {
        self.errors.push(syn::Error::new(span, msg.to_string()));
    }
    pub fn push(&mut self, e: syn::Error) {
        self.errors.push(e);
    }
    /// An error spanning all of `tokens` (a whole expression, not just its first token).
    pub fn error_spanned(&mut self, tokens: impl ToTokens, msg: impl std::fmt::Display) {
        self.errors
            .push(syn::Error::new_spanned(tokens, msg.to_string()));
    }
    /// How many errors have been recorded so far.
    pub fn error_count(&self) -> usize {
        self.errors.len()
    }
    pub fn into_compile_errors(self) -> TokenStream {
        // The region body is rewritten once per way of running it; report each problem once.
        let mut seen = std::collections::HashSet::new();
        self.errors
            .into_iter()
            .filter(|e| seen.insert(format!("{:?} {}", e.span(), e)))
            .map(|e| e.to_compile_error())
            .collect()
    }

    /// Parses and checks the directive of a statement attribute; returns it with the span of
    /// its name, or `None` (with the errors recorded) when it is malformed.
    pub fn stmt_directive(
        &mut self,
        kind: DirectiveKind,
        attr: &syn::Attribute,
    ) -> Option<(Directive, Span)> {
        let span = attr
            .path()
            .segments
            .last()
            .map_or(Span::call_site(), |s| s.ident.span());
        let args = match attrs::attr_args(attr) {
            Ok(a) => a,
            Err(e) => {
                self.errors.push(e);
                return None;
            }
        };
        self.directive(kind, span, args).map(|d| (d, span))
    }

    /// Parses and checks a directive; `None` (with the errors recorded) when it is malformed.
    pub fn directive(
        &mut self,
        kind: DirectiveKind,
        span: Span,
        args: TokenStream,
    ) -> Option<Directive> {
        match crate::directive::parsed::of_tokens(kind, span, args) {
            Ok(d) => {
                let errs = check_directive(&d);
                let ok = errs.is_empty();
                self.errors.extend(errs);
                ok.then(|| (*d).clone())
            }
            Err(e) => {
                self.errors.push(e);
                None
            }
        }
    }
}

/// `::acc::__rt::Location` of `span`.
pub fn location(span: Span) -> TokenStream {
    quote_spanned!(span=> ::acc::__rt::Location { file: ::core::file!(), line: ::core::line!(), column: ::core::column!() })
}

/// Parses generated tokens back into an expression, so later rewrites can see inside it.
pub fn reparse_expr(ts: TokenStream) -> Expr {
    syn::parse2(ts.clone()).unwrap_or(Expr::Verbatim(ts))
}

/// A statement made of an expression.
pub fn expr_stmt(ts: TokenStream) -> Stmt {
    Stmt::Expr(reparse_expr(quote!({ #ts })), None)
}

/// A function's attributes and signature with a body that never runs, when `item` is a
/// function whose body does not parse.
fn signature_only(item: TokenStream) -> Option<TokenStream> {
    let parser = |input: syn::parse::ParseStream| {
        let attrs = input.call(syn::Attribute::parse_outer)?;
        let vis: syn::Visibility = input.parse()?;
        let sig: syn::Signature = input.parse()?;
        let _body: proc_macro2::Group = input.parse()?;
        Ok(quote!(#(#attrs)* #[allow(unused_variables)] #vis #sig { ::core::unreachable!() }))
    };
    syn::parse::Parser::parse2(parser, item).ok()
}

/// Expands a function attribute (`#[acc::parallel]` .. `#[acc::offload]`).
pub fn expand_fn(kind: DirectiveKind, args: TokenStream, item: TokenStream) -> TokenStream {
    if kind == DirectiveKind::Declare {
        if let Ok(s) = syn::parse2::<syn::ItemStatic>(item.clone()) {
            return declare_static(args, s);
        }
    }
    let mut f: ItemFn = match syn::parse2(item.clone()) {
        Ok(f) => f,
        Err(parse_error) => return not_a_function(kind, item, parse_error),
    };
    // The routine's body as written, for the kernel builder (the host version below is
    // rewritten).
    let original = f.clone();
    let mut ctx = Ctx::new(f.sig.ident.to_string());
    ctx.undeclared_statics = undeclared_statics(&f.block);
    ctx.generic_fn = f
        .sig
        .generics
        .params
        .iter()
        .any(|p| !matches!(p, syn::GenericParam::Lifetime(_)));
    let span = Span::call_site();
    check_one_directive(&mut ctx, kind, &f);
    if ctx.error_count() > 0 {
        f.attrs.retain(|a| attrs::directive_of(a).is_none());
        strip_all(&mut f.block);
        return finish(ctx, f);
    }
    let dir = ctx.directive(kind, span, args);
    let dir_for_marker = dir.clone();
    let mut env = Env::new();
    env.add_fn_inputs(&f.sig.inputs);

    match (kind, dir) {
        (DirectiveKind::Loop | DirectiveKind::Atomic | DirectiveKind::HostData, _) => {
            ctx.error(span, format!(
                "`{}` goes on a statement inside a function that carries an acc attribute (for example `#[acc::offload]`), not on a function",
                kind.spelling()
            ));
            strip_all(&mut f.block);
        }
        (_, None) => strip_all(&mut f.block),
        (DirectiveKind::Offload, Some(_)) => {
            HostWalker { ctx: &mut ctx, env }.visit_block_mut(&mut f.block)
        }
        (DirectiveKind::Routine, Some(dir)) => expand_routine_body(&mut ctx, &dir, env, &mut f),
        (DirectiveKind::Data | DirectiveKind::Declare, Some(dir)) => {
            expand_data_body(&mut ctx, kind, &dir, env, &mut f)
        }
        (k, Some(dir)) if k.compute().is_some() => {
            let body = std::mem::replace(&mut f.block, Box::new(syn::parse_quote!({})));
            let region = if k.is_combined() {
                match single_for(&body) {
                    Some(fl) => compute::RegionBody::Loop(fl),
                    None => {
                        ctx.error(
                            dir.span,
                            format!(
                                "`{}` on a function needs a body that is one `for` loop",
                                k.spelling()
                            ),
                        );
                        f.block = body;
                        strip_all(&mut f.block);
                        return finish(ctx, f);
                    }
                }
            } else {
                compute::RegionBody::Block(*body.clone())
            };
            let expanded = compute::expand_compute(&mut ctx, &dir, region, &env);
            f.block = Box::new(syn::parse2(quote!({ #expanded })).unwrap_or_else(|e| {
                ctx.push(e);
                *body
            }));
        }
        (_, Some(_)) => unreachable!("every function attribute is handled above"),
    }
    let marker = if kind == DirectiveKind::Routine {
        let rank = dir_for_marker
            .as_ref()
            .map_or(0, crate::check_region::routine_call_rank);
        routine_marker_item(&original, rank)
    } else {
        TokenStream::new()
    };
    let out = finish(ctx, f);
    quote!(#out #marker)
}

/// What a function attribute on something that does not parse as a function expands to: an
/// error saying so, and the item as far as it can be kept.
fn not_a_function(kind: DirectiveKind, item: TokenStream, parse_error: syn::Error) -> TokenStream {
    // rustc hands a statement attribute to the macro only where no enclosing item
    // attribute took it: the function lacks one.
    if syn::parse2::<Stmt>(item.clone()).is_ok() {
        let msg = format!(
            "`#[acc::{}]` on a statement takes effect inside a function that carries an acc attribute: add `#[acc::offload]` to the enclosing function (docs/guide/directives.md)",
            kind.spelling()
        );
        // The statement is left out: rustc reports nothing more about it.
        return syn::Error::new(Span::call_site(), msg).to_compile_error();
    }
    // A function with a syntax error inside (such as `#[acc::loop]`, which rustc
    // reports with the fix): one error here, and the signature with a body that never
    // runs, so that neither its directives nor its callers add errors of their own.
    if let Some(signature) = signature_only(item.clone()) {
        let e = syn::Error::new(
            parse_error.span(),
            format!("{parse_error}: acc reads the function as Rust, so the syntax error must be fixed first"),
        )
        .to_compile_error();
        return quote!(#e #signature);
    }
    let msg = format!("`#[acc::{}]` goes on a function", kind.spelling());
    let e = syn::Error::new(Span::call_site(), msg).to_compile_error();
    quote!(#e #item)
}

/// One directive per item (3.3 section 2.1; R1): a second acc attribute would expand over
/// this one's output.
fn check_one_directive(ctx: &mut Ctx, kind: DirectiveKind, f: &ItemFn) {
    let span = Span::call_site();
    for extra in f.attrs.iter().filter(|a| attrs::directive_of(a).is_some()) {
        let other = attrs::directive_of(extra).map_or("", |k| k.spelling());
        ctx.error(
            extra.path().segments.last().map_or(span, |s| s.ident.span()),
            format!("only one acc directive goes on a function; `{}` and `{other}` are both here (combined forms: `parallel_loop`, `kernels_loop`, `serial_loop`) (3.3 section 2.1)", kind.spelling()),
        );
    }
}

/// A routine's body: checked as a routine's (what it calls, its loops' levels against its
/// own), the checks that what it calls are routines put first, its directives expanded.
fn expand_routine_body(ctx: &mut Ctx, dir: &Directive, env: Env, f: &mut ItemFn) {
    let body_check = crate::check_region::check_body(
        &f.block.stmts,
        crate::check_region::Body::Routine,
        false,
        &ctx.undeclared_statics,
    );
    for e in body_check.errors {
        ctx.push(e);
    }
    let mut checks = body_check.routine_checks;
    let nesting = crate::check_region::check_loop_nesting(
        &f.block.stmts,
        Some(crate::check_region::routine_level(dir)),
        None,
    );
    for e in nesting.errors {
        ctx.push(e);
    }
    checks.extend(nesting.routine_checks);
    if !checks.is_empty() {
        let check_stmts: Block = syn::parse2(quote!({ #(#checks)* })).expect("statements");
        f.block.stmts.splice(0..0, check_stmts.stmts);
    }
    let mut cx = region::RegionCx::for_routine(ctx, env);
    cx.transform_block(&mut f.block, true);
}

/// A function's body as a `data` region (or the data of a function's `declare`): its
/// directives expanded inside the data construct's scope, then the data moved around it.
fn expand_data_body(ctx: &mut Ctx, kind: DirectiveKind, dir: &Directive, env: Env, f: &mut ItemFn) {
    if kind == DirectiveKind::Declare {
        // R98: `link` names global data; a function's declare names its parameters.
        for c in dir.all(crate::directive::ClauseName::Link) {
            ctx.error(c.span, "`link` names global data: put `#[acc::declare(link(X))]` on the static `X` itself, not on a function (3.3 section 2.13.3)".to_string());
        }
    }
    ctx.enter_data(dir);
    HostWalker { ctx, env }.visit_block_mut(&mut f.block);
    ctx.leave_data();
    let body = &f.block;
    let expanded = data_construct::expand_data_region(ctx, dir, quote!(#body));
    *f.block = syn::parse2(quote!({ #expanded })).expect("a block");
}

/// The statics defined in `block` (at any depth) that no `#[acc::declare]` names.
fn undeclared_statics(block: &syn::Block) -> Vec<String> {
    struct Find(Vec<String>);
    impl<'ast> syn::visit::Visit<'ast> for Find {
        fn visit_item_static(&mut self, s: &'ast syn::ItemStatic) {
            if !s
                .attrs
                .iter()
                .any(|a| attrs::directive_of(a) == Some(DirectiveKind::Declare))
            {
                self.0.push(s.ident.to_string());
            }
        }
        fn visit_item_fn(&mut self, _: &'ast ItemFn) {}
    }
    let mut find = Find(Vec::new());
    syn::visit::Visit::visit_block(&mut find, block);
    find.0
}

/// `declare` on a static (3.3 section 2.13): the clauses a global takes, naming the static.
/// Regions use a declared static as they use a variable (copied to a device that needs it for
/// each launch; a static is immutable, so every copy holds the same values).
fn declare_static(args: TokenStream, s: syn::ItemStatic) -> TokenStream {
    use crate::directive::clause::ClauseName;
    let mut ctx = Ctx::new(s.ident.to_string());
    let span = Span::call_site();
    if let Some(dir) = ctx.directive(DirectiveKind::Declare, span, args) {
        let mut named = false;
        for c in &dir.clauses {
            // R94: at global scope only create, copyin, deviceptr, device_resident and link;
            // deviceptr needs a pointer, which a Rust static of device data is not.
            if !matches!(
                c.name,
                ClauseName::Create
                    | ClauseName::Copyin
                    | ClauseName::DeviceResident
                    | ClauseName::Link
            ) {
                ctx.error(c.span, format!(
                    "`declare` on a static takes only `create`, `copyin`, `device_resident` and `link`, not `{}` (a global's data lives as long as the program; 3.3 section 2.13)",
                    c.name.spelling()
                ));
            }
            for v in c.vars() {
                if v.name == s.ident && v.subarray.is_none() {
                    named = true;
                } else {
                    ctx.error(v.span, format!(
                        "this `declare` is on the static `{}`, so its clauses name `{}` (whole), not `{}` (3.3 section 2.13: the directive is in the variable's scope)",
                        s.ident, s.ident, v.text
                    ));
                }
            }
        }
        if !named && ctx.error_count() == 0 {
            ctx.error(span, format!("`declare` on the static `{}` names no variable: write `#[acc::declare(copyin({}))]` (3.3 section 2.13)", s.ident, s.ident));
        }
    }
    let errors = ctx.into_compile_errors();
    quote!(#errors #s)
}

fn finish(ctx: Ctx, mut f: ItemFn) -> TokenStream {
    // One error per mistake: where acc reported one, the body as written would only add
    // rustc's errors about the same mistake (an assignment to a reduction variable that is not
    // `mut`, a directive's names), so the function keeps its signature and a body that never
    // runs. The body stays where it must still expand (acc's statement macros, `cache!`,
    // `enter_data!`, check their own clauses and report other mistakes), or where a body must
    // type-check against an `impl Trait` in the result (`-> Option<impl Fn()>` too).
    let impl_result = match &f.sig.output {
        syn::ReturnType::Type(_, t) => names_impl(t),
        syn::ReturnType::Default => false,
    };
    if ctx.error_count() > 0 && !impl_result && !invokes_acc_macros(&f.block) {
        *f.block = syn::parse_quote!({ ::core::unreachable!() });
        f.attrs
            .push(syn::parse_quote!(#[allow(unused_variables, unused_mut, unreachable_code)]));
    }
    let errors = ctx.into_compile_errors();
    quote!(#errors #f)
}

/// Whether `ty` holds an `impl Trait` type, at any depth.
fn names_impl(ty: &syn::Type) -> bool {
    struct Find(bool);
    impl<'ast> syn::visit::Visit<'ast> for Find {
        fn visit_type_impl_trait(&mut self, _: &'ast syn::TypeImplTrait) {
            self.0 = true;
        }
    }
    let mut find = Find(false);
    syn::visit::Visit::visit_type(&mut find, ty);
    find.0
}

/// Whether `block` invokes one of acc's function-like macros (`acc::name!`).
fn invokes_acc_macros(block: &syn::Block) -> bool {
    struct Find(bool);
    impl<'ast> syn::visit::Visit<'ast> for Find {
        fn visit_macro(&mut self, m: &'ast syn::Macro) {
            self.0 |= crate::check_region::acc_path_last(&m.path).is_some();
        }
    }
    let mut find = Find(false);
    syn::visit::Visit::visit_block(&mut find, block);
    find.0
}

/// The marker `#[acc::routine]` leaves next to its function, which calls from regions refer to
/// (see `check_region::routine_marker`). Inside an impl it is an associated constant.
fn routine_marker_item(f: &ItemFn, level: u8) -> TokenStream {
    let vis = &f.vis;
    let marker = crate::check_region::routine_marker(&f.sig.ident);
    let doc = format!(
        "`{}` is an `#[acc::routine]`: regions may call it.",
        f.sig.ident
    );
    let builder = kernel::routine_builder(f);
    // A method taking `&self`: the fields its body reads become parameters of each launch
    // whose region calls it (`self.r(..)`); this adds them.
    let self_fields = kernel::routine_self_fields(f);
    let mutable = f
        .sig
        .receiver()
        .is_some_and(|r| r.reference.is_some() && r.mutability.is_some());
    let written = if mutable {
        kernel::routine_written_fields(f)
    } else {
        Vec::new()
    };
    let (marker_ty, self_args_fn) = match &self_fields {
        Some(_) => {
            let name = format_ident!("{}_acc_self_args", f.sig.ident);
            let ty = if mutable {
                quote!(::acc::__rt::RoutineMarker<Self, ::acc::__rt::SelfArgsMut<Self>>)
            } else {
                quote!(::acc::__rt::RoutineMarker<Self>)
            };
            (ty, quote!(::core::option::Option::Some(Self::#name)))
        }
        None => (
            quote!(::acc::__rt::RoutineMarker),
            quote!(::core::option::Option::None),
        ),
    };
    let self_args = self_fields.map(|fields| {
        let name = format_ident!("{}_acc_self_args", f.sig.ident);
        let reads = fields.iter().map(|field| {
            let member = format_ident!("{}", field);
            let shown = format!("self.{field}");
            if written.contains(field) {
                quote!((&&::acc::__rt::kernel::Probe::of(&self.#member)).acc_kind().write(__acc_args, #shown, &mut self.#member))
            } else {
                quote!((&&::acc::__rt::kernel::Probe::of(&self.#member)).acc_kind().read(__acc_args, #shown, &self.#member))
            }
        });
        let receiver = if mutable {
            quote!(&'__acc mut self)
        } else {
            quote!(&'__acc self)
        };
        quote! {
            #[doc(hidden)]
            #[allow(dead_code)]
            fn #name<'__acc>(#receiver, __acc_args: &mut ::acc::__rt::kernel::Args<'__acc>) -> ::std::vec::Vec<usize> {
                #[allow(unused_imports)]
                use ::acc::__rt::kernel::{KindData as _, KindRefuse as _, KindScalar as _};
                ::std::vec![#(#reads),*]
            }
        }
    });
    quote! {
        #[doc = #doc]
        #[doc(hidden)]
        #[allow(non_upper_case_globals, dead_code)]
        #vis const #marker: #marker_ty = {
            #builder
            ::acc::__rt::RoutineMarker { build, self_args: #self_args_fn, level: #level, receiver: ::core::marker::PhantomData }
        };
        #self_args
    }
}

/// The one `for` loop a block consists of.
fn single_for(b: &Block) -> Option<syn::ExprForLoop> {
    match b.stmts.as_slice() {
        [Stmt::Expr(Expr::ForLoop(f), _)] => Some(f.clone()),
        _ => None,
    }
}

/// Removes every acc attribute in a block (after an error, so rustc reports nothing more about
/// attributes it cannot place on statements).
/// `st` without any acc directive, its nested statements' included.
pub fn strip_stmt(st: &mut Stmt) {
    let mut b = Block {
        brace_token: Default::default(),
        stmts: vec![std::mem::replace(
            st,
            Stmt::Item(syn::Item::Verbatim(TokenStream::new())),
        )],
    };
    strip_all(&mut b);
    if let Some(s) = b.stmts.pop() {
        *st = s;
    }
}

pub fn strip_all(b: &mut Block) {
    struct Strip;
    impl VisitMut for Strip {
        fn visit_stmt_mut(&mut self, st: &mut Stmt) {
            attrs::take_directives(st);
            visit_mut::visit_stmt_mut(self, st);
        }
    }
    Strip.visit_block_mut(b);
}

/// Walks host code, expanding the statement directives it finds (compute constructs, `data`,
/// `host_data`, `atomic`) and keeping track of the bindings in scope.
pub struct HostWalker<'a> {
    pub ctx: &'a mut Ctx,
    pub env: Env,
}

impl HostWalker<'_> {
    fn expand_stmt(&mut self, kind: DirectiveKind, attr: &syn::Attribute, st: Stmt) -> Stmt {
        let Some((dir, span)) = self.ctx.stmt_directive(kind, attr) else {
            // The directive's own error is the one to see: the statement stays as written,
            // without the directives inside it (which would each bring rustc's errors about
            // attributes on expressions).
            let mut st = st;
            strip_stmt(&mut st);
            return st;
        };
        // Struct members in the clauses: aliases bound around the construct, used by its body.
        let mut members = members::of(&dir);
        if !members.is_empty() {
            members.extend(members::implied(&st, &members));
            let mut st = st;
            members::rewrite(&mut st, &members);
            self.env.push();
            let lets = members::bind(&members, &mut self.env);
            let inner = self.expand_parsed(kind, dir, span, st);
            self.env.pop();
            return expr_stmt(quote!({ #(#lets)* #inner }));
        }
        self.expand_parsed(kind, dir, span, st)
    }

    fn expand_parsed(&mut self, kind: DirectiveKind, dir: Directive, span: Span, st: Stmt) -> Stmt {
        match kind {
            k if k.compute().is_some() => {
                let region = match (&st, k.is_combined()) {
                    (Stmt::Expr(Expr::ForLoop(f), _), true) => compute::RegionBody::Loop(f.clone()),
                    (Stmt::Expr(Expr::Block(b), _), false) => {
                        compute::RegionBody::Block(b.block.clone())
                    }
                    // On any other statement (a `for`, `while` or `loop` in particular, as C
                    // writes the construct before a loop): that statement is the region.
                    (Stmt::Expr(_, _), false) => compute::RegionBody::Block(Block {
                        brace_token: Default::default(),
                        stmts: vec![st.clone()],
                    }),
                    _ => {
                        let want = if k.is_combined() {
                            "a `for` loop"
                        } else {
                            "a block `{ .. }`"
                        };
                        self.ctx
                            .error(span, format!("`{}` goes on {want}", k.spelling()));
                        return st;
                    }
                };
                expr_stmt(compute::expand_compute(self.ctx, &dir, region, &self.env))
            }
            DirectiveKind::Data | DirectiveKind::HostData => {
                // On a block, or on any other statement (a loop in particular), which is then
                // the construct's body.
                let mut b = match st {
                    Stmt::Expr(Expr::Block(b), _) => b,
                    Stmt::Expr(..) => syn::ExprBlock {
                        attrs: Vec::new(),
                        label: None,
                        block: Block {
                            brace_token: Default::default(),
                            stmts: vec![st],
                        },
                    },
                    _ => {
                        self.ctx.error(
                            span,
                            format!(
                                "`{}` goes on a block `{{ .. }}` or an expression statement such as a loop",
                                kind.spelling()
                            ),
                        );
                        return st;
                    }
                };
                self.ctx.enter_data(&dir);
                self.visit_block_mut(&mut b.block);
                self.ctx.leave_data();
                let body = &b.block;
                let ts = if kind == DirectiveKind::Data {
                    data_construct::expand_data_region(self.ctx, &dir, quote!(#body))
                } else {
                    data_construct::expand_host_data(self.ctx, &dir, quote!(#body))
                };
                expr_stmt(ts)
            }
            DirectiveKind::Atomic => atomic::expand_atomic(self.ctx, &dir, st),
            DirectiveKind::Loop => {
                self.ctx.error(span, "`loop` must be inside a compute region (`parallel`, `kernels`, `serial`) or an `#[acc::routine]` (3.3 section 2.9)");
                st
            }
            other => {
                self.ctx.error(
                    span,
                    format!(
                        "`{}` goes on a function, not on a statement",
                        other.spelling()
                    ),
                );
                st
            }
        }
    }
}

impl HostWalker<'_> {
    /// `#[acc::declare(..)]` on a `let` (3.3 section 2.13: a declare directive after a
    /// variable's declaration in a function): a data region from the declaration to the end
    /// of the enclosing block, left on every way out of it; the block's value is computed
    /// after it ends, so that a variable it copies out may be the block's value.
    fn declare_local(&mut self, attr: &syn::Attribute, st: Stmt, rest: Vec<Stmt>, b: &mut Block) {
        use crate::directive::ClauseName as C;
        let Some((dir, span)) = self.ctx.stmt_directive(DirectiveKind::Declare, attr) else {
            b.stmts.push(st);
            b.stmts.extend(rest);
            return;
        };
        let Stmt::Local(local) = &st else { return };
        let declared: Vec<String> = crate::analysis::bindings::pat_bindings(&local.pat, false)
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        let mut ok = true;
        for c in &dir.clauses {
            if matches!(c.name, C::Link | C::DeviceResident | C::Deviceptr) {
                self.ctx.error(c.span, format!(
                    "`{}` on a local variable is not supported (3.3 section 2.13: `link` and `device_resident` are for global data; device pointers are not supported yet)",
                    c.name.spelling()
                ));
                ok = false;
            }
            for v in c.vars() {
                if !declared.iter().any(|d| v.name == d.as_str()) {
                    self.ctx.error(v.span, format!(
                        "`declare` on this `let` may name only the variables it declares ({}): `{}` is declared elsewhere (3.3 section 2.13)",
                        declared.join(", "),
                        v.name
                    ));
                    ok = false;
                }
            }
        }
        if let Stmt::Local(l) = &st {
            self.env.add_local(l);
        }
        b.stmts.push(st);
        // The rest of the block, its directives expanded, is the region's body; the region
        // ends before the block's value is taken.
        // The block's value is evaluated after the region ends; with another `declare` further
        // on, that one's region (inside this one) takes it, and this region's value is its.
        let mut rest = rest;
        let inner_declare = rest.iter().any(|s| {
            matches!(s, Stmt::Local(l) if l.attrs.iter().any(|a| attrs::directive_of(a) == Some(DirectiveKind::Declare)))
        });
        let mut tail = match rest.last() {
            Some(Stmt::Expr(_, None)) if !inner_declare => rest.pop(),
            _ => None,
        };
        let mut body = Block {
            brace_token: Default::default(),
            stmts: rest,
        };
        self.ctx.enter_data(&dir);
        self.visit_block_mut(&mut body);
        if let Some(t) = tail.take() {
            // Through a block of its own, so that a directive on it is expanded too.
            let mut tb = Block {
                brace_token: Default::default(),
                stmts: vec![t],
            };
            self.visit_block_mut(&mut tb);
            tail = tb.stmts.pop();
        }
        self.ctx.leave_data();
        if !ok {
            b.stmts.extend(body.stmts);
            b.stmts.extend(tail);
            return;
        }
        let _ = span;
        let region = data_construct::expand_declare_scope(self.ctx, &dir, body.stmts, tail);
        b.stmts.push(Stmt::Expr(reparse_expr(region), None));
    }
}

impl VisitMut for HostWalker<'_> {
    fn visit_block_mut(&mut self, b: &mut Block) {
        self.env.push();
        let stmts = std::mem::take(&mut b.stmts);
        let mut stmts = stmts.into_iter();
        while let Some(mut st) = stmts.next() {
            let dirs = attrs::take_directives(&mut st);
            if let (Some((DirectiveKind::Declare, attr)), Stmt::Local(_)) = (dirs.first(), &st) {
                let rest: Vec<Stmt> = stmts.by_ref().collect();
                self.declare_local(attr, st, rest, b);
                break;
            }
            if let Some((kind, attr)) = dirs.first() {
                for (_, extra) in dirs.iter().skip(1) {
                    self.ctx.error(
                        extra
                            .path()
                            .segments
                            .last()
                            .map_or(Span::call_site(), |s| s.ident.span()),
                        "only one acc directive may be written on a statement",
                    );
                }
                let st = self.expand_stmt(*kind, attr, st);
                b.stmts.push(st);
                continue;
            }
            self.visit_stmt_mut(&mut st);
            if let Stmt::Local(l) = &st {
                self.env.add_local(l);
            }
            b.stmts.push(st);
        }
        self.env.pop();
    }

    fn visit_expr_for_loop_mut(&mut self, f: &mut syn::ExprForLoop) {
        self.visit_expr_mut(&mut f.expr);
        self.env.push();
        self.env.add_pat(&f.pat, false);
        self.visit_block_mut(&mut f.body);
        self.env.pop();
    }

    fn visit_expr_closure_mut(&mut self, c: &mut syn::ExprClosure) {
        self.env.push();
        for p in &c.inputs {
            self.env.add_pat(p, false);
        }
        self.visit_expr_mut(&mut c.body);
        self.env.pop();
    }

    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}

/// The run-time values of a directive's `if`, `async` and `wait` clauses, as
/// `Option<bool>`, `Option<i64>` (a bare `async` is `ASYNC_NOVAL`) and `Option<Vec<i64>>`
/// (a bare `wait` is the empty list) expressions. `async` and `wait` in `device_type`
/// sections (3.3 section 2.4) apply on their device types: the expressions then choose by the
/// current device type, evaluating only that type's arguments.
pub fn if_async_wait(dir: &Directive) -> (TokenStream, TokenStream, TokenStream) {
    use crate::directive::ClauseName as C;
    let sectioned = dir
        .all(C::Async)
        .chain(dir.all(C::Wait))
        .any(|c| c.device_types.is_some());
    if !sectioned {
        return if_async_wait_plain(dir);
    }
    let (if_cond, _, _) = if_async_wait_plain(dir);
    let arms: Vec<(TokenStream, TokenStream, TokenStream)> = [
        ("host", quote!(Host)),
        ("multicore", quote!(Multicore)),
        ("nvidia", quote!(Nvidia)),
        ("wgpu", quote!(Wgpu)),
    ]
    .into_iter()
    .map(|(name, variant)| {
        let (_, a, w) = if_async_wait_plain(&dir.for_device(name));
        (variant, a, w)
    })
    .collect();
    let (variants, asyncs, waits) = (
        arms.iter().map(|a| &a.0).collect::<Vec<_>>(),
        arms.iter().map(|a| &a.1).collect::<Vec<_>>(),
        arms.iter().map(|a| &a.2).collect::<Vec<_>>(),
    );
    let (_, default_async, default_wait) = if_async_wait_plain(&dir.for_device(""));
    let async_arg = quote!(match ::acc::get_device_type() {
        #(::acc::DeviceType::#variants => #asyncs,)*
        _ => #default_async,
    });
    let wait = quote!(match ::acc::get_device_type() {
        #(::acc::DeviceType::#variants => #waits,)*
        _ => #default_wait,
    });
    (if_cond, async_arg, wait)
}

/// [`if_async_wait`] of a directive whose `async` and `wait` are in no `device_type` section.
fn if_async_wait_plain(dir: &Directive) -> (TokenStream, TokenStream, TokenStream) {
    use crate::directive::{ClauseArgs, ClauseName as C};
    let if_cond = opt(dir.general(C::If).next().and_then(|c| c.expr()).map(|e| {
        // A condition of another type reads "expected `bool`" at the condition.
        let b = quote::quote_spanned!(syn::spanned::Spanned::span(&e)=> bool);
        quote!({ let __acc_cond: #b = #e; __acc_cond })
    }));
    let async_arg = opt(dir.all(C::Async).last().map(|c| match c.expr() {
        Some(e) => quote!((#e) as i64),
        None => quote!(::acc::ASYNC_NOVAL as i64),
    }));
    let last_wait = dir.all(C::Wait).last();
    let wait = match last_wait.and_then(|c| c.devnum.as_deref().map(|d| (c, d))) {
        // `wait(devnum: d: ..)`: the host waits for those queues of device `d` (of the current
        // device type) first; the construct then waits for nothing on its own device.
        Some((c, devnum)) => {
            let queues = match &c.args {
                ClauseArgs::Exprs(v) => quote!(&[#((#v) as i64),*]),
                _ => quote!(&[]),
            };
            let if_cond = opt(dir.general(C::If).next().and_then(|c| c.expr()));
            quote!({
                if #if_cond != ::core::option::Option::Some(false) {
                    ::acc::__rt::wait_on_device((#devnum) as i64, #queues);
                }
                ::core::option::Option::None
            })
        }
        None => opt(last_wait.map(|c| match &c.args {
            ClauseArgs::Exprs(v) => quote!(::std::vec![#((#v) as i64),*]),
            _ => quote!(::std::vec::Vec::new()),
        })),
    };
    (if_cond, async_arg, wait)
}

/// Tokens for an optional expression: `Some(expr)` or `None`.
pub fn opt<T: ToTokens>(v: Option<T>) -> TokenStream {
    match v {
        Some(v) => quote!(::core::option::Option::Some(#v)),
        None => quote!(::core::option::Option::None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_erroneous_function_keeps_a_body_only_where_it_must() {
        let ty = |t: TokenStream| names_impl(&syn::parse2(t).unwrap());
        assert!(ty(quote!(impl Iterator<Item = u32>)));
        assert!(ty(quote!(Option<(u8, impl Fn())>)));
        assert!(!ty(quote!(Vec<f32>)));
        let block = |t: TokenStream| syn::parse2::<syn::Block>(t).unwrap();
        assert!(invokes_acc_macros(&block(quote!({
            for i in 0..n {
                acc::cache!(a[i]);
            }
        }))));
        assert!(invokes_acc_macros(&block(quote!({
            ::acc::enter_data!(copyin(a));
        }))));
        assert!(!invokes_acc_macros(&block(quote!({
            acc::wait_all();
            println!("{}", acc::r#loop);
        }))));
    }
}
