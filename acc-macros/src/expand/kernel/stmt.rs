//! Statements in the kernel translation: `let`, assignments, loops (and which run in
//! parallel), the statement forms of a region's body.

use super::schedule::inner_schedule;
use super::*;

impl Tr {
    pub(super) fn stmts(&mut self, stmts: &[Stmt], in_parallel: bool) -> R<TokenStream> {
        self.scopes.push(HashMap::new());
        let out = self.stmts_in_scope(stmts, in_parallel);
        self.scopes.pop();
        out
    }

    /// Statements whose bindings stay in the current scope (a routine's body, whose result
    /// expression follows it).
    pub(super) fn stmts_in_scope(&mut self, stmts: &[Stmt], in_parallel: bool) -> R<TokenStream> {
        let mut out = TokenStream::new();
        for (k, st) in stmts.iter().enumerate() {
            // `let p = ps[i];` whose fields the rest uses (`p.x`): a struct value.
            if let Some(ts) = self.struct_let(st, &stmts[k + 1..])? {
                out.extend(ts);
                continue;
            }
            out.extend(self.stmt(st, in_parallel)?);
        }
        Ok(out)
    }

    pub(super) fn stmt(&mut self, st: &Stmt, in_parallel: bool) -> R<TokenStream> {
        let dirs: Vec<_> = attrs::stmt_attrs(st)
            .iter()
            .filter_map(|a| attrs::directive_of(a).map(|k| (k, a)))
            .collect();
        let loop_dir = match dirs.first() {
            Some((DirectiveKind::Loop, a)) => {
                let d = crate::directive::parsed::of_attr(DirectiveKind::Loop, a)
                    .map_err(|e| e.to_string())?;
                Some(self.on_device(&d))
            }
            Some((DirectiveKind::Atomic, a)) => {
                let d = crate::directive::parsed::of_attr(DirectiveKind::Atomic, a)
                    .map_err(|e| e.to_string())?;
                return self.atomic(&d, st);
            }
            Some((k, _)) => return no(format!("`{}` inside a region", k.spelling())),
            None => None,
        };
        Ok(match st {
            // `let _ = e;` evaluates nothing a kernel must keep (expressions are pure).
            Stmt::Local(l) if matches!(strip_type(&l.pat), Pat::Wild(_)) => quote!(),
            Stmt::Local(l) if matches!(strip_type(&l.pat), Pat::Tuple(_)) => self.let_tuple(l)?,
            Stmt::Local(l) => {
                let Pat::Ident(pi) = strip_type(&l.pat) else {
                    return no("a `let` pattern");
                };
                let name = pi.ident.to_string();
                let ty = match &l.pat {
                    Pat::Type(pt) => Some(&*pt.ty),
                    _ => None,
                };
                let array_init = l
                    .init
                    .as_ref()
                    .map(|i| strip(&i.expr))
                    .filter(|e| matches!(e, Expr::Repeat(_) | Expr::Array(_)));
                if matches!(ty, Some(syn::Type::Array(_))) || array_init.is_some() {
                    return self.local_array(&name, ty, array_init);
                }
                // `let row = &a[s..e];` (or `&mut`): a view of the array, not a value; and
                // `let y = &mut a[k];`, a view of one element.
                if let Some(i) = l.init.as_ref().filter(|i| i.diverge.is_none()) {
                    if let Some(view) = self.elem_ref(&i.expr)? {
                        let v = self.fresh(&name);
                        self.bind(name, Local::Elem(v.clone()));
                        return Ok(quote!(let #v = #view;));
                    }
                    if let Some(view) = self.subslice_arg(&i.expr)? {
                        let v = self.fresh(&name);
                        self.bind(name, Local::View(v.clone()));
                        return Ok(quote!(let #v = #view;));
                    }
                }
                let ty_tokens = let_type(&name, ty)?;
                let init = match &l.init {
                    Some(i) if i.diverge.is_some() => return no("`let .. else`"),
                    Some(i) => {
                        let v = match strip(&i.expr) {
                            Expr::If(e) => self.if_value(e, true)?,
                            other => self.expr(other)?,
                        };
                        quote!(::core::option::Option::Some(#v))
                    }
                    None => quote!(::core::option::Option::None),
                };
                let v = self.fresh(&name);
                let name_lit = name.clone();
                self.bind(name, Local::Scalar(v.clone()));
                quote!(let #v = { let __init = #init; __acc_b.local(#name_lit, #ty_tokens, __init) };)
            }
            Stmt::Expr(e, _) => self.expr_stmt(e, loop_dir, in_parallel)?,
            Stmt::Macro(m)
                if m.mac
                    .path
                    .segments
                    .last()
                    .is_some_and(|s| s.ident == "cache") =>
            {
                self.cache(&m.mac)
            }
            Stmt::Macro(_) => return no("a macro"),
            Stmt::Item(_) => return no("an item"),
        })
    }

    /// `let (a, mut b, _) = (x, y, z);` (a type on the tuple, `(f64, u32)`, types the names):
    /// every value is computed before any name is bound, as in Rust.
    pub(super) fn let_tuple(&mut self, l: &syn::Local) -> R<TokenStream> {
        let Pat::Tuple(pt) = strip_type(&l.pat) else {
            return no("a `let` pattern");
        };
        let types: Vec<Option<&syn::Type>> = match &l.pat {
            Pat::Type(t) => match &*t.ty {
                syn::Type::Tuple(tt) if tt.elems.len() == pt.elems.len() => {
                    tt.elems.iter().map(Some).collect()
                }
                other => {
                    return no(format!(
                        "a `let` tuple of type `{}`",
                        other.to_token_stream()
                    ))
                }
            },
            _ => vec![None; pt.elems.len()],
        };
        let mut prelude = TokenStream::new();
        let values = match l.init.as_ref().map(|i| strip(&i.expr)) {
            Some(Expr::Tuple(t))
                if t.elems.len() == pt.elems.len()
                    && l.init.as_ref().is_some_and(|i| i.diverge.is_none()) =>
            {
                t.elems
                    .iter()
                    .map(|e| self.expr(e))
                    .collect::<R<Vec<_>>>()?
            }
            // A routine returning a tuple: its builder leaves the elements' values.
            Some(call @ Expr::Call(c))
                if matches!(&*c.func, Expr::Path(_))
                    && l.init.as_ref().is_some_and(|i| i.diverge.is_none()) =>
            {
                let n = pt.elems.len();
                let v = self.expr(call)?;
                let what = short(call);
                let vals = self.fresh("tuple");
                prelude.extend(
                    quote!(let #vals = { let _ = #v; __acc_b.take_tuple_result(#n, #what) };),
                );
                (0..n).map(|i| quote!(#vals[#i])).collect()
            }
            _ => {
                return no(
                    "a `let` tuple pattern whose value is not a tuple expression of its length",
                )
            }
        };
        let mut out = prelude;
        for ((p, value), ty) in pt.elems.iter().zip(values).zip(types) {
            let name = match p {
                Pat::Wild(_) => continue,
                Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => {
                    pi.ident.to_string()
                }
                other => {
                    return no(format!(
                        "the pattern `{}` in a `let` tuple",
                        other.to_token_stream()
                    ))
                }
            };
            let ty_tokens = let_type(&name, ty)?;
            let v = self.fresh(&name);
            out.extend(quote!(let #v = { let __init = #value; __acc_b.local(#name, #ty_tokens, ::core::option::Option::Some(__init)) };));
            self.bind(name, Local::Scalar(v));
        }
        Ok(out)
    }

    /// `let t = [v; N];` or `let t: [T; N] = [a, b, ..];`: a private array of the region
    /// (docs/guide/regions.md), each element set from its initializer.
    pub(super) fn local_array(
        &mut self,
        name: &str,
        ty: Option<&syn::Type>,
        init: Option<&Expr>,
    ) -> R<TokenStream> {
        let annotated = match ty {
            Some(syn::Type::Array(a)) => Some(a),
            Some(other) => return no(format!("`let {name}: {}`", other.to_token_stream())),
            None => None,
        };
        let elem = match annotated {
            Some(a) => {
                let s = scalar_of(&a.elem)
                    .ok_or_else(|| format!("a private array of `{}`", a.elem.to_token_stream()))?;
                quote!(::core::option::Option::Some(#s))
            }
            None => quote!(::core::option::Option::None),
        };
        if let Some(t) = self.struct_array_let(name, init)? {
            return Ok(t);
        }
        let v = self.fresh(name);
        let (len, sets) = match init {
            Some(Expr::Repeat(r)) => {
                let value = self.expr(&r.expr)?;
                let len = &r.len;
                (
                    quote!(#len),
                    quote! {
                        let __e = #value;
                        __acc_b.fill(#v, __e);
                    },
                )
            }
            Some(Expr::Array(a)) => {
                let n = a.elems.len();
                let mut sets = TokenStream::new();
                for (k, e) in a.elems.iter().enumerate() {
                    let value = self.expr(e)?;
                    let k = k as i128;
                    sets.extend(quote! {{
                        let __x = #value;
                        let __i = __acc_b.lit_int(#k, ::core::option::Option::Some(::acc::__rt::kernel::Scalar::USize));
                        __acc_b.set_elem(#v, __i, __x);
                    }});
                }
                (quote!(#n), sets)
            }
            _ => match annotated {
                Some(a) => {
                    let len = &a.len;
                    (quote!(#len), quote!())
                }
                None => return no(format!("the private array `{name}` without a length")),
            },
        };
        let name_lit = name.to_string();
        self.bind(name.to_string(), Local::Array(v.clone()));
        // Each thread has its own copy (in device memory past 32 KiB, `acc_core::ir::spill`).
        let checked = private_len(&len, &name_lit);
        Ok(quote! {
            let #v = {
                let __len: u32 = #checked;
                __acc_b.local_array_of(#name_lit, #elem, __len)
            };
            {
                #[allow(unused_variables)]
                let __len: u32 = { let __n: usize = #len; __n.min(u32::MAX as usize) as u32 };
                #sets
            }
        })
    }

    pub(super) fn expr_stmt(
        &mut self,
        e: &Expr,
        loop_dir: Option<Directive>,
        in_parallel: bool,
    ) -> R<TokenStream> {
        Ok(match e {
            // Statements from `macro_rules!` arrive in invisible groups.
            Expr::Group(g) => self.expr_stmt(&g.expr, loop_dir, in_parallel)?,
            Expr::Assign(a) => self.assign(&a.left, None, &a.right)?,
            Expr::Binary(b) => match bin_op(&b.op) {
                Some((op, true)) => self.assign(&b.left, Some(op), &b.right)?,
                _ => return no("an expression statement"),
            },
            Expr::If(i) => {
                let c = self.expr(&i.cond)?;
                let a = self.stmts(&i.then_branch.stmts, in_parallel)?;
                let r = match &i.else_branch {
                    None => quote!(),
                    Some((_, els)) => match &**els {
                        Expr::Block(b) => self.stmts(&b.block.stmts, in_parallel)?,
                        other => self.expr_stmt(other, None, in_parallel)?,
                    },
                };
                quote!({ let __c = #c; __acc_b.if_(__c, |__acc_b| { #a }, |__acc_b| { #r }); })
            }
            Expr::Block(b) if b.label.is_none() => {
                let s = self.stmts(&b.block.stmts, in_parallel)?;
                quote!({ #s })
            }
            Expr::While(w) if w.label.is_none() => {
                let c = self.expr(&w.cond)?;
                let body = self.stmts(&w.body.stmts, in_parallel)?;
                let pass = self.pass_return();
                quote!(__acc_b.loop_(|__acc_b| {
                    let __c = #c;
                    let __stop = __acc_b.unary(::acc::__rt::kernel::UnaryOp::Not, __c);
                    __acc_b.if_(__stop, |__acc_b| __acc_b.break_(), |_| {});
                    #body
                }); #pass)
            }
            Expr::Loop(l) if l.label.is_none() => {
                let body = self.stmts(&l.body.stmts, in_parallel)?;
                let pass = self.pass_return();
                quote!(__acc_b.loop_(|__acc_b| { #body }); #pass)
            }
            Expr::Break(b) if b.label.is_none() && b.expr.is_none() => quote!(__acc_b.break_();),
            Expr::Continue(c) if c.label.is_none() => quote!(__acc_b.continue_();),
            Expr::ForLoop(f) if f.label.is_none() => {
                if loop_dir.is_some() && self.ret.is_some() && has_return(&f.body.stmts) {
                    return no("`return` inside a loop with a `loop` directive");
                }
                let l = self.for_loop(f, loop_dir, in_parallel)?;
                let pass = self.pass_return();
                quote!(#l #pass)
            }
            // `return` in a routine (`routine_body` set up `ret`): the result, the flag, and a
            // break towards the loop around the body.
            Expr::Return(r) if self.ret.is_some() => {
                let (result, flag) = self.ret.clone().expect("checked");
                let set = match &r.expr {
                    Some(e) => {
                        let v = self.expr(e)?;
                        quote!({ let __v = #v; __acc_b.set(#result, __v); })
                    }
                    None => quote!(),
                };
                quote!({
                    #set
                    let __t = __acc_b.lit_bool(true);
                    __acc_b.set(#flag, __t);
                    __acc_b.break_();
                })
            }
            Expr::Call(_) => {
                let call = self.expr(e)?;
                quote!({ let _ = #call; })
            }
            // `self.r(..);`: a method routine called for its effect.
            Expr::MethodCall(m) if path_ident(strip(&m.receiver)).is_some_and(|r| r == "self") => {
                let call = self.expr(e)?;
                quote!({ let _ = #call; })
            }
            other => return no(format!("the statement `{}`", short(other))),
        })
    }

    /// After a loop in a routine with an early `return`: break on out of the enclosing loop
    /// once the body has returned.
    pub(super) fn pass_return(&self) -> TokenStream {
        match &self.ret {
            Some((_, flag)) => quote!({
                let __r = __acc_b.get(#flag);
                __acc_b.if_(__r, |__acc_b| __acc_b.break_(), |_| {});
            }),
            None => quote!(),
        }
    }

    pub(super) fn assign(
        &mut self,
        target: &Expr,
        op: Option<&str>,
        value: &Expr,
    ) -> R<TokenStream> {
        // `ps[i].f = ..` and `ps[i] = p` of a private array of structs.
        if let Some(t) = self.struct_array_assign(target, op, value)? {
            return Ok(t);
        }
        // `a[j] = p` of a struct value: every field stored.
        if let (None, Expr::Index(ix)) = (op, strip(target)) {
            if let Some(Local::Struct(sv)) =
                path_ident(strip(value)).and_then(|id| self.lookup(&id.to_string()))
            {
                let a = self.array(&ix.expr)?;
                let i = self.expr(&ix.index)?;
                return Ok(quote!({ let __a = #a; let __i = #i; #sv.store(__acc_b, __a, __i); }));
            }
        }
        // `b[j] = a[i]` of struct elements: field by field.
        if let Some(t) = self.whole_element_copy(target, op, value)? {
            return Ok(t);
        }
        self.assign_value(target, op, value)
    }

    /// `target op= value` (or `target = value`) of a scalar value.
    pub(super) fn assign_value(
        &mut self,
        target: &Expr,
        op: Option<&str>,
        value: &Expr,
    ) -> R<TokenStream> {
        // Rust evaluates the value before the place it is assigned to.
        let v = match strip(value) {
            Expr::If(e) => self.if_value(e, true)?,
            other => self.expr(other)?,
        };
        let combine = |cur: TokenStream| -> TokenStream {
            match op {
                None => quote!(#v),
                Some(op) => {
                    let op = Ident::new(op, Span::call_site());
                    quote!({ let __cur = #cur; let __v = #v; __acc_b.binary(::acc::__rt::kernel::BinaryOp::#op, __cur, __v) })
                }
            }
        };
        if let Some(id) = path_ident(target) {
            return match self.lookup(&id.to_string()) {
                Some(Local::Scalar(var)) => {
                    let value = combine(quote!(__acc_b.get(#var)));
                    Ok(quote!({ let __v = #value; __acc_b.set(#var, __v); }))
                }
                // A complex number loaded whole (`let z = a[i]; z = z * w;`).
                Some(Local::Struct(sv)) => {
                    let value = combine(quote!(#sv.value(__acc_b)));
                    Ok(quote!({ let __v = #value; #sv.assign(__acc_b, __v); }))
                }
                _ if matches!(
                    self.captured.get(&id.to_string()),
                    Some((Cap::WriteScalar, _))
                ) =>
                {
                    let (a, i) = self.place(target)?;
                    let value = combine(quote!(__acc_b.load(__a, __i)));
                    Ok(
                        quote!({ let __a = #a; let __i = #i; let __v = #value; __acc_b.store(__a, __i, __v); }),
                    )
                }
                _ => no(format!("assigning the captured variable `{id}`")),
            };
        }
        if let Expr::Index(ix) = target {
            let i = self.expr(&ix.index)?;
            if let Some(id) = path_ident(&ix.expr) {
                if let Some(Local::Array(var)) = self.lookup(&id.to_string()) {
                    let value = combine(quote!(__acc_b.get_elem(#var, __i)));
                    return Ok(
                        quote!({ let __i = #i; let __v = #value; __acc_b.set_elem(#var, __i, __v); }),
                    );
                }
            }
            let a = self.array(&ix.expr)?;
            let value = combine(quote!(__acc_b.load(__a, __i)));
            return Ok(
                quote!({ let __a = #a; let __i = #i; let __v = #value; __acc_b.store(__a, __i, __v); }),
            );
        }
        if let Expr::Field(f) = target {
            // `p.x = ..` of a struct value.
            if let Some((sv, field)) = self.struct_value_field(f) {
                let value = combine(quote!(#sv.field(__acc_b, #field)));
                return Ok(quote!({ let __v = #value; #sv.set_field(__acc_b, #field, __v); }));
            }
            // `z.re = ..` of a complex local.
            if let (Some(Local::Scalar(var)), syn::Member::Named(m)) = (
                path_ident(strip(&f.base)).and_then(|id| self.lookup(&id.to_string())),
                &f.member,
            ) {
                let name = m.to_string();
                let value =
                    combine(quote!({ let __z = __acc_b.get(#var); __acc_b.component(__z, #name) }));
                return Ok(quote!({ let __v = #value; __acc_b.set_component(#var, #name, __v); }));
            }
            let (a, i) = self.struct_field(f)?;
            let value = combine(quote!(__acc_b.load(__a, __i)));
            return Ok(
                quote!({ let __a = #a; let __i = #i; let __v = #value; __acc_b.store(__a, __i, __v); }),
            );
        }
        if let Expr::Unary(u) = strip(target) {
            // `*x = ..` of a scalar a routine takes by reference: the caller's local.
            if let (UnOp::Deref(_), Some(Local::Scalar(var))) = (u.op, self.lookup_path(&u.expr)) {
                let value = combine(quote!(__acc_b.get(#var)));
                return Ok(quote!({ let __v = #value; __acc_b.set(#var, __v); }));
            }
            // `*y = ..` through an element reference.
            if matches!(u.op, UnOp::Deref(_)) {
                let (a, i) = self.elem_place(&u.expr)?;
                let value = combine(quote!(__acc_b.load(__a, __i)));
                return Ok(
                    quote!({ let __a = #a; let __i = #i; let __v = #value; __acc_b.store(__a, __i, __v); }),
                );
            }
        }
        no(format!("assigning `{}`", target.to_token_stream()))
    }

    pub(super) fn for_loop(
        &mut self,
        f: &syn::ExprForLoop,
        dir: Option<Directive>,
        in_parallel: bool,
    ) -> R<TokenStream> {
        let depth = collapse_depth(dir.as_ref());
        let (levels, lines, cur) = loop_levels(f, depth)?;
        let body_stmts = &cur.body.stmts;

        // Parallel only at the outermost parallelizable loop, as on multicore.
        let parallel = !in_parallel && self.parallel(dir.as_ref(), &levels, body_stmts);
        // The inner loop a `kernels` gang loop left to be its vector loop (this very loop of
        // the syntax tree, not another of the same name).
        let vector_here = in_parallel
            && levels.len() == 1
            && self
                .vector_next
                .contains(&(f as *const syn::ExprForLoop as usize));
        let schedule = if parallel {
            self.parallel_schedule(dir.as_ref(), &levels, body_stmts)
        } else {
            let shared = in_parallel && self.may_share(dir.as_ref(), &levels, body_stmts);
            inner_schedule(dir.as_ref(), shared, vector_here)
        };
        let reductions = self.loop_reductions(dir.as_ref(), parallel, body_stmts);
        let privates = self.loop_privates(dir.as_ref(), body_stmts)?;
        let mut red_tokens = Vec::new();
        for (op, v) in &reductions {
            match self.lookup(&v.to_string()) {
                Some(Local::Scalar(var) | Local::Array(var)) => {
                    let o = red_op(*op);
                    red_tokens.push(quote!((#var, #o)));
                }
                _ => return no(format!("a reduction of `{v}`")),
            }
        }
        self.scopes.push(HashMap::new());
        let (level_tokens, binds) = self.level_spaces(&levels)?;
        let vars: Vec<Ident> = levels
            .iter()
            .map(|(n, ..)| match self.lookup(&n.to_string()) {
                Some(Local::Scalar(v)) => v,
                _ => n.clone(),
            })
            .collect();
        let idx: Vec<usize> = (0..vars.len()).collect();
        let LoopPrivates {
            tokens: private_tokens,
            binds: private_binds,
            fresh: private_fresh,
        } = privates;
        for (name, local) in private_binds {
            self.bind(name, local);
        }
        let body = self.stmts(body_stmts, in_parallel || parallel)?;
        if parallel {
            self.vector_next.clear();
        }
        self.scopes.pop();
        let tile = tile_sizes(dir.as_ref());
        Ok(quote!({
            #(#level_tokens)*
            __acc_b.at_lines(&[#(#lines),*]);
            // The loop's private copies (3.3 section 2.9.10), fresh locals the IR's loop names.
            #(#private_tokens)*
            __acc_b.for_tiled(&[#(#binds),*], &[#(#tile),*], #schedule, &[#(#red_tokens),*], &[#(#private_fresh),*], |__acc_b, __lv| {
                #(let #vars = __lv[#idx];)*
                #body
            });
        }))
    }

    /// Reductions: the loop's own, and the region's it updates (on a parallel loop).
    fn loop_reductions(
        &self,
        dir: Option<&Directive>,
        parallel: bool,
        body_stmts: &[Stmt],
    ) -> Vec<(RedOp, Ident)> {
        let mut reductions: Vec<(RedOp, Ident)> = dir
            .iter()
            .flat_map(|d| d.general(C::Reduction))
            .flat_map(|c| match &c.args {
                ClauseArgs::Reduction { op, vars, .. } => vars
                    .iter()
                    .map(|v| (*op, v.name.clone()))
                    .collect::<Vec<_>>(),
                _ => vec![],
            })
            .collect();
        if parallel {
            let used = scan_stmts(body_stmts, &[]);
            for (op, v) in &self.region_reductions {
                if used.vars.contains_key(&v.to_string()) && !reductions.iter().any(|(_, r)| r == v)
                {
                    reductions.push((*op, v.clone()));
                }
            }
        }
        reductions
    }

    /// Loop-level private copies (3.3 section 2.9.10), one per iteration: each a fresh local
    /// like the variable it copies (a local of the kernel or a captured variable).
    fn loop_privates(&mut self, dir: Option<&Directive>, body_stmts: &[Stmt]) -> R<LoopPrivates> {
        let private_vars: Vec<Ident> = dir
            .iter()
            .flat_map(|d| d.general(C::Private))
            .flat_map(|c| c.vars().iter().map(|v| v.name.clone()))
            .collect();
        let private_uses = scan_stmts(body_stmts, &[]);
        let mut out = LoopPrivates::default();
        for pv in &private_vars {
            let name = pv.to_string();
            let fresh = self.fresh(&name);
            let indexed = private_uses
                .vars
                .get(&name)
                .is_some_and(|u| !u.indexes.is_empty());
            let (tokens, local) = match self.lookup(&name) {
                Some(Local::Scalar(o)) => (
                    quote!(let #fresh = __acc_b.local_like(#name, #o);),
                    Local::Scalar(fresh.clone()),
                ),
                Some(Local::Array(o)) => (
                    quote!(let #fresh = __acc_b.local_like(#name, #o);),
                    Local::Array(fresh.clone()),
                ),
                Some(Local::View(_) | Local::Elem(_) | Local::Struct(_)) => {
                    return no(format!("a private copy of the reference `{name}`"));
                }
                Some(Local::StructArray(_)) => {
                    return no(format!("a loop's private copy of the private array of structs `{name}` (declare it inside the loop)"));
                }
                None => match self.captured.get(&name) {
                    Some((_, p)) => (
                        quote!(let #fresh = __acc_h.private(__acc_b, #p, #name, false, #indexed);),
                        if indexed {
                            Local::Array(fresh.clone())
                        } else {
                            Local::Scalar(fresh.clone())
                        },
                    ),
                    // Not used in the region: nothing to privatize.
                    None => continue,
                },
            };
            out.tokens.push(tokens);
            out.fresh.push(fresh.clone());
            out.binds.push((name, local));
        }
        Ok(out)
    }

    /// The iteration space of each level of the nest, `.rev()` and `.step_by(s)` applied, and
    /// its binding for the builder's loop; binds each loop variable to a fresh local in the
    /// current scope.
    fn level_spaces(&mut self, levels: &[Level]) -> R<(Vec<TokenStream>, Vec<TokenStream>)> {
        let mut level_tokens = Vec::new();
        let mut binds = Vec::new();
        for (k, (name, start, end, incl, ops)) in levels.iter().enumerate() {
            let (s, e) = (self.expr(start)?, self.expr(end)?);
            let (sv, stv, tv) = (
                format_ident!("__s{}", k),
                format_ident!("__st{}", k),
                format_ident!("__t{}", k),
            );
            let name_lit = name.to_string();
            level_tokens.push(quote!(let (#sv, #stv, #tv) = { let __a = #s; let __b = #e; __acc_b.range_space(__a, __b, #incl, ::core::option::Option::None) };));
            for op in ops {
                level_tokens.push(match op {
                    None => quote!(let (#sv, #stv, #tv) = __acc_b.space_rev(#sv, #stv, #tv);),
                    Some(by) => {
                        let by = self.expr(by)?;
                        quote!(let (#sv, #stv, #tv) = { let __by = #by; __acc_b.space_step_by(#sv, #stv, #tv, __by) };)
                    }
                });
            }
            binds.push(quote!((#name_lit, ::core::option::Option::None, #sv, #stv, #tv)));
            let var = self.fresh(&name_lit);
            self.scopes
                .last_mut()
                .expect("a scope")
                .insert(name_lit, Local::Scalar(var.clone()));
        }
        Ok((level_tokens, binds))
    }
}

/// The length `len` of private array `name` as the builder takes it, a `u32` (a longer one is
/// the kernel's error, naming it).
pub(super) fn private_len(len: &TokenStream, name: &str) -> TokenStream {
    quote!({
        let __n: usize = #len;
        if __n > u32::MAX as usize {
            __acc_b.fail(::std::format!("the private array `{}` has {} elements; kernels hold at most {} per thread", #name, __n, u32::MAX));
        }
        __n.min(u32::MAX as usize) as u32
    })
}

/// A loop's private copies: the statements making them, each variable's binding to its copy,
/// and the copies the builder's loop names.
#[derive(Default)]
struct LoopPrivates {
    tokens: Vec<TokenStream>,
    binds: Vec<(String, Local)>,
    fresh: Vec<Ident>,
}

/// The `depth` levels of the loop nest `f`, each level's line, and the innermost loop of them,
/// whose body is the nest's body.
fn loop_levels(
    f: &syn::ExprForLoop,
    depth: usize,
) -> R<(Vec<Level>, Vec<TokenStream>, &syn::ExprForLoop)> {
    let mut levels = Vec::new();
    // Each level's line, which rustc gives (`line!()` at the `for` keyword's span).
    let mut lines = Vec::new();
    let mut cur = f;
    loop {
        let span = cur.for_token.span;
        lines.push(quote::quote_spanned!(span=> ::core::line!()));
        let name = match &*cur.pat {
            Pat::Ident(pi) => pi.ident.clone(),
            Pat::Wild(w) => Ident::new("_unused", w.underscore_token.span),
            _ => return no("a loop pattern other than a name"),
        };
        let (start, end, incl, ops) = loop_range(cur)?;
        levels.push((name, start, end, incl, ops));
        if levels.len() == depth {
            break;
        }
        match cur.body.stmts.as_slice() {
            [Stmt::Expr(Expr::ForLoop(inner), _)] => cur = inner,
            _ => return no("collapsed loops with code between them"),
        }
    }
    Ok((levels, lines, cur))
}

/// The range loop `cur` runs over: start, end, whether inclusive, and the `.rev()` and
/// `.step_by(s)` applied to it.
#[allow(clippy::type_complexity)]
fn loop_range(cur: &syn::ExprForLoop) -> R<(Box<Expr>, Box<Expr>, bool, Vec<Option<Expr>>)> {
    // `(a..b)`, with `.rev()` / `.step_by(s)` applied in order.
    let mut ops: Vec<Option<Expr>> = Vec::new();
    let mut it = strip(&cur.expr);
    loop {
        match it {
            Expr::MethodCall(m) if m.method == "rev" && m.args.is_empty() => ops.push(None),
            Expr::MethodCall(m) if m.method == "step_by" && m.args.len() == 1 => {
                ops.push(Some(m.args[0].clone()))
            }
            _ => break,
        }
        let Expr::MethodCall(m) = it else { break };
        it = strip(&m.receiver);
    }
    ops.reverse();
    let (start, end, incl) = match it {
        Expr::Range(r) => match (&r.start, &r.end) {
            (Some(s), Some(e)) => (
                s.clone(),
                e.clone(),
                matches!(r.limits, syn::RangeLimits::Closed(_)),
            ),
            _ => return no("an open range"),
        },
        _ => return no("a loop over something other than a range"),
    };
    Ok((start, end, incl, ops))
}

/// `tile(..)` sizes as written (innermost loop first; `*` is the backend's choice).
fn tile_sizes(dir: Option<&Directive>) -> Vec<TokenStream> {
    dir.iter()
        .flat_map(|d| d.general(C::Tile))
        .flat_map(|c| match &c.args {
            ClauseArgs::Tile(sizes) => sizes.clone(),
            _ => vec![],
        })
        .map(|s| match s {
            SizeExpr::Expr(e) => match crate::check::int_literal(&e) {
                Some(n) => {
                    let n = u32::try_from(n).unwrap_or(u32::MAX);
                    quote!(::core::option::Option::Some(#n))
                }
                None => quote!(::core::option::Option::None),
            },
            SizeExpr::Star(_) => quote!(::core::option::Option::None),
        })
        .collect()
}
