//! Struct members in data clauses (OpenACC 2.6+): `#[acc::data(copyin(g.a), copy(g.b))]`,
//! `present(self.h.b)`. A construct naming members binds each to an alias, a reference to the
//! member (`let acc_member_g_a = &mut g.a;`), and its body, nested directives and macros
//! included, uses the alias wherever it writes the member's path. Everything after that sees
//! an ordinary variable: data clauses, the present table, regions capturing it. Other fields
//! of the struct stay usable (Rust borrows fields apart); using the struct as a whole while a
//! member is aliased is a borrow error rustc reports.

use proc_macro2::{Ident, TokenStream, TokenTree};
use quote::{quote, ToTokens};
use syn::visit_mut::VisitMut;
use syn::{Expr, Stmt};

use crate::analysis::bindings::{Binding, Env};
use crate::directive::Directive;

/// A member a construct names: its alias, the variable and the fields.
#[derive(Clone)]
pub struct Member {
    pub alias: Ident,
    pub base: Ident,
    pub fields: Vec<Ident>,
    /// How the alias holds it: a reference (a listed member, or another field the body
    /// indexes or calls a method on), or a copy of its value (another field the body only
    /// reads as a value, a scalar such as `g.n`).
    pub by_value: bool,
}

impl Member {
    /// The variable and the fields, as names (`["g", "h", "b"]`).
    pub fn path(&self) -> Vec<String> {
        std::iter::once(self.base.to_string())
            .chain(self.fields.iter().map(|f| f.to_string()))
            .collect()
    }

    /// The `let` binding the alias: to a copy of the member (`by_value`), a `&mut` to it
    /// (`mutable`) or a `&`.
    pub fn alias_let(&self, mutable: bool) -> TokenStream {
        let (alias, base, fields) = (&self.alias, &self.base, &self.fields);
        if self.by_value {
            quote!(#[allow(unused_variables)] let #alias = #base #(.#fields)*;)
        } else if mutable {
            quote!(#[allow(unused_variables)] let #alias = &mut #base #(.#fields)*;)
        } else {
            quote!(#[allow(unused_variables)] let #alias = &#base #(.#fields)*;)
        }
    }
}

/// The path of a field expression `g.h.b` as names (`["g", "h", "b"]`; a plain variable is a
/// path of one name).
fn field_path(e: &Expr) -> Option<Vec<String>> {
    match e {
        Expr::Field(f) => {
            let syn::Member::Named(id) = &f.member else {
                return None;
            };
            let mut path = field_path(&f.base)?;
            path.push(id.to_string());
            Some(path)
        }
        Expr::Paren(p) => field_path(&p.expr),
        Expr::Path(p) => Some(vec![p.path.get_ident()?.to_string()]),
        _ => None,
    }
}

/// The members the directive's clauses name, each once.
pub fn of(dir: &Directive) -> Vec<Member> {
    let mut out: Vec<Member> = Vec::new();
    for c in &dir.clauses {
        for v in c.vars() {
            if let Some((base, fields)) = &v.member {
                if !out.iter().any(|m| m.alias == v.name) {
                    out.push(Member {
                        alias: v.name.clone(),
                        base: base.clone(),
                        fields: fields.clone(),
                        by_value: false,
                    });
                }
            }
        }
    }
    out
}

/// The `let`s binding the aliases (a `&mut` where the variable is mutable or a `&mut`
/// reference, else a `&`), with the aliases added to `env`.
pub fn bind(members: &[Member], env: &mut Env) -> Vec<TokenStream> {
    members
        .iter()
        .map(|m| {
            // `self` of a `&self` method is read-only; one the bindings do not know is taken
            // to be `&mut self`.
            let mutable = match env.get(&m.base.to_string()) {
                Some(b) => b.mutable || b.ref_mut,
                None => m.base == "self",
            };
            env.insert(
                m.alias.to_string(),
                Binding {
                    mutable: false,
                    ref_mut: mutable && !m.by_value,
                },
            );
            m.alias_let(mutable)
        })
        .collect()
}

/// `st` with every use of a member's path replaced by its alias: in expressions, and in the
/// tokens of directives and macros inside it.
pub fn rewrite(st: &mut Stmt, members: &[Member]) {
    let mut r = Rewrite(members);
    r.visit_stmt_mut(st);
}

struct Rewrite<'a>(&'a [Member]);

impl Rewrite<'_> {
    /// The member whose path `e` is.
    fn member_of(&self, e: &Expr) -> Option<&Member> {
        let path = field_path(e)?;
        self.0.iter().find(|m| m.path() == path)
    }

    fn tokens(&self, ts: TokenStream) -> TokenStream {
        let trees: Vec<TokenTree> = ts.into_iter().collect();
        let mut out = Vec::new();
        let mut i = 0;
        while i < trees.len() {
            // The longest member path starting here.
            let mut best: Option<(usize, &Member)> = None;
            if let TokenTree::Ident(base) = &trees[i] {
                for m in self.0 {
                    if *base != m.base {
                        continue;
                    }
                    let mut at = i + 1;
                    let mut ok = true;
                    for f in &m.fields {
                        match (trees.get(at), trees.get(at + 1)) {
                            (Some(TokenTree::Punct(p)), Some(TokenTree::Ident(id)))
                                if p.as_char() == '.' && id == f =>
                            {
                                at += 2;
                            }
                            _ => {
                                ok = false;
                                break;
                            }
                        }
                    }
                    // Not the start of a longer path `g.a.b` of a member that is `g.a`'s own
                    // field: that is the member's field, still through the alias.
                    if ok && best.is_none_or(|(n, _)| at > n) {
                        best = Some((at, m));
                    }
                }
            }
            match (best, &trees[i]) {
                (Some((end, m)), _) => {
                    let mut id = m.alias.clone();
                    id.set_span(trees[i].span());
                    out.push(TokenTree::Ident(id));
                    i = end;
                }
                (None, TokenTree::Group(g)) => {
                    let mut ng = proc_macro2::Group::new(g.delimiter(), self.tokens(g.stream()));
                    ng.set_span(g.span());
                    out.push(TokenTree::Group(ng));
                    i += 1;
                }
                (None, t) => {
                    out.push(t.clone());
                    i += 1;
                }
            }
        }
        out.into_iter().collect()
    }
}

impl VisitMut for Rewrite<'_> {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        // `&mut g.a` (a swap of two members, a routine argument): the member itself, through
        // the alias, not a reference to the alias.
        if let Expr::Reference(r) = e {
            if let Some(m) = self.member_of(&r.expr) {
                let alias = &m.alias;
                *e = if r.mutability.is_some() {
                    syn::parse_quote!(&mut *#alias)
                } else {
                    syn::parse_quote!(&*#alias)
                };
                return;
            }
        }
        if let Some(m) = self.member_of(e) {
            let alias = &m.alias;
            *e = syn::parse_quote!(#alias);
            return;
        }
        syn::visit_mut::visit_expr_mut(self, e);
    }

    fn visit_attribute_mut(&mut self, a: &mut syn::Attribute) {
        if let syn::Meta::List(l) = &mut a.meta {
            l.tokens = self.tokens(std::mem::take(&mut l.tokens));
        }
    }

    fn visit_macro_mut(&mut self, m: &mut syn::Macro) {
        m.tokens = self.tokens(std::mem::take(&mut m.tokens));
    }
}

/// The other fields of the listed members' variables that `st` reads (`g.n` beside
/// `copyin(g.a)`): aliased too, so that the body does not use the variable as a whole while
/// its members are borrowed. Fields the body writes are left as written.
pub fn implied(st: &Stmt, listed: &[Member]) -> Vec<Member> {
    use syn::visit::Visit;
    struct Find<'a> {
        listed: &'a [Member],
        found: Vec<(Vec<String>, bool, bool)>,
        place: bool,
    }
    impl Find<'_> {
        /// Records the field path `e` (indexed or not, written or not); whether it was one of
        /// the listed members' variables' fields.
        fn note(&mut self, e: &Expr, indexed: bool, written: bool) -> bool {
            let Some(path) = field_path(e) else {
                return false;
            };
            if path.len() < 2 || !self.listed.iter().any(|m| m.base == path[0]) {
                return false;
            }
            // A listed member, a field of one, or a prefix of one: not another field.
            let overlaps = self
                .listed
                .iter()
                .any(|m| m.path().iter().zip(&path).all(|(a, b)| a == b));
            if overlaps {
                return true;
            }
            match self.found.iter_mut().find(|(p, ..)| *p == path) {
                Some(f) => {
                    f.1 |= indexed;
                    f.2 |= written;
                }
                None => self.found.push((path, indexed, written)),
            }
            true
        }
        fn assigned(&mut self, left: &Expr, right: &Expr) {
            let saved = std::mem::replace(&mut self.place, true);
            self.visit_expr(left);
            self.place = false;
            self.visit_expr(right);
            self.place = saved;
        }
    }
    impl<'ast> Visit<'ast> for Find<'_> {
        fn visit_expr(&mut self, e: &'ast Expr) {
            match e {
                Expr::Index(ix) => {
                    if !self.note(&ix.expr, true, self.place) {
                        self.visit_expr(&ix.expr);
                    }
                    let saved = std::mem::replace(&mut self.place, false);
                    self.visit_expr(&ix.index);
                    self.place = saved;
                }
                Expr::MethodCall(m) => {
                    if !self.note(&m.receiver, true, false) {
                        self.visit_expr(&m.receiver);
                    }
                    for a in &m.args {
                        self.visit_expr(a);
                    }
                }
                Expr::Assign(a) => self.assigned(&a.left, &a.right),
                Expr::Binary(b) if is_assign(&b.op) => self.assigned(&b.left, &b.right),
                Expr::Reference(r) if r.mutability.is_some() => {
                    if !self.note(&r.expr, true, true) {
                        self.visit_expr(&r.expr);
                    }
                }
                Expr::Field(_) => {
                    if !self.note(e, false, self.place) {
                        syn::visit::visit_expr(self, e);
                    }
                }
                _ => syn::visit::visit_expr(self, e),
            }
        }
    }
    fn is_assign(op: &syn::BinOp) -> bool {
        let t = op.to_token_stream().to_string();
        t.ends_with('=') && !matches!(t.as_str(), "==" | "!=" | "<=" | ">=")
    }
    let mut f = Find {
        listed,
        found: Vec::new(),
        place: false,
    };
    f.visit_stmt(st);
    let span = proc_macro2::Span::call_site();
    f.found
        .into_iter()
        .filter(|(_, _, written)| !written)
        .map(|(path, indexed, _)| Member {
            alias: Ident::new(&crate::directive::parse::member_alias(&path), span),
            base: Ident::new(&path[0], span),
            fields: path[1..].iter().map(|f| Ident::new(f, span)).collect(),
            by_value: !indexed,
        })
        .collect()
}
