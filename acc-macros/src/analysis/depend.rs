//! The dependence test for `auto` loops (loops in `kernels` without `independent`, 3.3 section
//! 2.9.7): a loop may run its iterations in parallel only when this test proves, from the syntax
//! alone, that no iteration reads or writes what another writes. It is deliberately
//! conservative: a loop it cannot prove independent runs sequentially, which is always correct.

use std::collections::{HashMap, HashSet};

use syn::{BinOp, Expr, Stmt};

use super::uses::{path_ident, scan_stmts, Uses};

/// Whether iterations of `for var in .. { body }` are provably independent, with `reductions`
/// combined separately.
///
/// Proved when the body writes no outside scalar (other than reductions), and every outside
/// array it writes is only ever accessed as `a[e]` with one and the same index `e`, which is
/// `var`, `var + c`, `c + var` or `var - c` for a `c` the loop does not change, or a row of a
/// flattened 2-D array, `var * c + j` (either way round) where `j` is the variable of a loop in
/// the body over `lo..c` or `lo..c - d` (so each `var` has its own `c` elements); a name
/// bound once in the body by `let` stands for its value (`let k = i * n + j; v[k] = ..`).
pub fn provably_independent(var: &str, body: &[Stmt], reductions: &HashSet<String>) -> bool {
    let uses = scan_stmts(body, &[var.to_string()]);
    let names = Names::of(body);
    if !uses.escapes.is_empty() || !uses.returns.is_empty() {
        return false;
    }
    for (name, u) in &uses.vars {
        if reductions.contains(name) || !u.is_written() {
            continue;
        }
        if u.assigned || u.mut_borrowed || u.maybe_mut || u.unindexed {
            return false;
        }
        let Some(first) = u.indexes.first() else {
            return false;
        };
        if u.indexes.iter().any(|i| i != first) {
            return false;
        }
        let Ok(e) = syn::parse_str::<Expr>(first) else {
            return false;
        };
        if !injective(&e, var, &uses, &names, 0, true) {
            return false;
        }
    }
    true
}

/// The names a loop body binds exactly once: by `let name = value;` (not `mut`) and as the
/// variable of a `for` over a range.
#[derive(Default)]
struct Names {
    lets: HashMap<String, Expr>,
    /// A loop variable's range: its end, and whether the range includes it.
    loops: HashMap<String, (Expr, bool)>,
    /// Every name the body binds (a row's length or a loop's end naming one of them may mean
    /// something else where it is used).
    bound: HashSet<String>,
}

impl Names {
    fn of(body: &[Stmt]) -> Names {
        struct Collect {
            names: Names,
            seen: HashMap<String, usize>,
        }
        impl<'a> syn::visit::Visit<'a> for Collect {
            fn visit_local(&mut self, l: &'a syn::Local) {
                if let syn::Pat::Ident(p) = &l.pat {
                    let name = p.ident.to_string();
                    *self.seen.entry(name.clone()).or_default() += 1;
                    if let (None, None, Some(init)) = (&p.mutability, &p.by_ref, &l.init) {
                        self.names.lets.insert(name, (*init.expr).clone());
                    }
                } else {
                    for (n, _) in super::bindings::pat_bindings(&l.pat, false) {
                        *self.seen.entry(n).or_default() += 2;
                    }
                }
                syn::visit::visit_local(self, l);
            }
            fn visit_expr_for_loop(&mut self, f: &'a syn::ExprForLoop) {
                if let syn::Pat::Ident(p) = &*f.pat {
                    let name = p.ident.to_string();
                    *self.seen.entry(name.clone()).or_default() += 1;
                    if let (None, None, Expr::Range(r)) = (&p.mutability, &p.by_ref, &*f.expr) {
                        if let Some(end) = &r.end {
                            let inclusive = matches!(r.limits, syn::RangeLimits::Closed(_));
                            self.names.loops.insert(name, ((**end).clone(), inclusive));
                        }
                    }
                } else {
                    for (n, _) in super::bindings::pat_bindings(&f.pat, false) {
                        *self.seen.entry(n).or_default() += 2;
                    }
                }
                syn::visit::visit_expr_for_loop(self, f);
            }
        }
        let mut c = Collect {
            names: Names::default(),
            seen: HashMap::new(),
        };
        for st in body {
            syn::visit::Visit::visit_stmt(&mut c, st);
        }
        let once = |n: &String| c.seen.get(n) == Some(&1);
        c.names.lets.retain(|n, _| once(n));
        c.names.loops.retain(|n, _| once(n));
        c.names.bound = c.seen.into_keys().collect();
        c.names
    }
}

/// How deep `let` names are followed into their values.
const NAME_DEPTH: usize = 4;

/// `e` with a name bound once by `let` replaced by its value (one step); not a name the body
/// also uses from outside (where a use may mean the outer variable).
fn resolve<'e>(e: &'e Expr, names: &'e Names, uses: &Uses) -> &'e Expr {
    match e {
        Expr::Paren(p) => resolve(&p.expr, names, uses),
        _ => path_ident(e)
            .map(|id| id.to_string())
            .filter(|id| !uses.vars.contains_key(id))
            .and_then(|id| names.lets.get(&id))
            .unwrap_or(e),
    }
}

/// `rows`: whether the row form may apply (not under a cast, where the column's variable may be
/// of a signed type and below 0).
fn injective(e: &Expr, var: &str, uses: &Uses, names: &Names, depth: usize, rows: bool) -> bool {
    if depth > NAME_DEPTH {
        return false;
    }
    let next = |e: &Expr| injective(e, var, uses, names, depth + 1, rows);
    match e {
        Expr::Paren(p) => next(&p.expr),
        Expr::Cast(c) => injective(&c.expr, var, uses, names, depth + 1, false),
        Expr::Binary(b) => match b.op {
            BinOp::Add(_) => {
                (next(&b.left) && invariant(&b.right, var, uses))
                    || (invariant(&b.left, var, uses) && next(&b.right))
                    || (rows && row_and_column(&b.left, &b.right, var, uses, names))
                    || (rows && row_and_column(&b.right, &b.left, var, uses, names))
            }
            BinOp::Sub(_) => next(&b.left) && invariant(&b.right, var, uses),
            _ => false,
        },
        _ => match path_ident(e) {
            Some(id) if id == var => true,
            Some(_) if !std::ptr::eq(resolve(e, names, uses), e) => next(resolve(e, names, uses)),
            _ => false,
        },
    }
}

/// Whether `row + col` is `var * c + j` (`c * var` too) with `j` a loop variable of the body
/// ranging below `c`: distinct values of `var` then index disjoint rows of `c` elements (`j`
/// indexes an array, so it is a `usize` and not below 0).
fn row_and_column(row: &Expr, col: &Expr, var: &str, uses: &Uses, names: &Names) -> bool {
    let row = resolve(row, names, uses);
    let Expr::Binary(m) = row else {
        return false;
    };
    if !matches!(m.op, BinOp::Mul(_)) {
        return false;
    }
    let is_var = |e: &Expr| path_ident(resolve(e, names, uses)).is_some_and(|id| id == var);
    let c = if is_var(&m.left) {
        &*m.right
    } else if is_var(&m.right) {
        &*m.left
    } else {
        return false;
    };
    if !invariant(c, var, uses) {
        return false;
    }
    let Some(j) = path_ident(resolve(col, names, uses)) else {
        return false;
    };
    // (A `j` the body also uses outside its loop is another variable there.)
    if uses.vars.contains_key(&j.to_string()) {
        return false;
    }
    let Some((end, inclusive)) = names.loops.get(&j.to_string()) else {
        return false;
    };
    let same = |a: &Expr, b: &Expr| {
        use quote::ToTokens;
        a.to_token_stream().to_string() == b.to_token_stream().to_string()
    };
    let end = match end {
        Expr::Paren(p) => &*p.expr,
        e => e,
    };
    let rebound = |e: &Expr| {
        super::uses::scan_expr(e, &[])
            .vars
            .keys()
            .any(|n| names.bound.contains(n))
    };
    if rebound(c) || rebound(end) {
        return false;
    }
    match end {
        // `j < c`.
        e if !inclusive && same(e, c) => true,
        // `j < c - d` or `j <= c - d` for a literal d > 0 (usize: never above c).
        Expr::Binary(b) if matches!(b.op, BinOp::Sub(_)) && same(&b.left, c) => {
            !inclusive
                || matches!(&*b.right, Expr::Lit(syn::ExprLit { lit: syn::Lit::Int(i), .. })
                    if i.base10_parse::<u128>().is_ok_and(|v| v > 0))
        }
        _ => false,
    }
}

/// Whether `e` has the same value in every iteration: it names only outside variables the loop
/// does not write.
fn invariant(e: &Expr, var: &str, uses: &Uses) -> bool {
    let inner = super::uses::scan_expr(e, &[]);
    if !inner
        .vars
        .keys()
        .all(|n| n != var && uses.vars.get(n).is_some_and(|u| !u.is_written()))
    {
        return false;
    }
    // Anything else (calls, method calls on locals) is not provably invariant.
    struct Simple(bool);
    impl<'a> syn::visit::Visit<'a> for Simple {
        fn visit_expr(&mut self, e: &'a Expr) {
            match e {
                Expr::Call(_) | Expr::Macro(_) | Expr::Block(_) | Expr::Assign(_) => self.0 = false,
                Expr::MethodCall(m) if m.method != "len" => self.0 = false,
                other => syn::visit::visit_expr(self, other),
            }
        }
    }
    let mut s = Simple(true);
    syn::visit::Visit::visit_expr(&mut s, e);
    s.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(src: &str) -> Vec<Stmt> {
        syn::parse_str::<syn::Block>(src).unwrap().stmts
    }

    #[test]
    fn proves_simple_maps() {
        let none = HashSet::new();
        assert!(provably_independent(
            "i",
            &body("{ y[i] = a * x[i] + y[i]; }"),
            &none
        ));
        assert!(provably_independent(
            "i",
            &body("{ b[j * m + i] = 2.0 * a[j * m + i]; }"),
            &none
        ));
        assert!(provably_independent(
            "i",
            &body("{ let t = x[i]; for k in 0..4 { y[i] += t * w[k]; } }"),
            &none
        ));
    }

    #[test]
    fn refuses_what_it_cannot_prove() {
        let none = HashSet::new();
        assert!(!provably_independent(
            "i",
            &body("{ y[i + 1] = y[i]; }"),
            &none
        ));
        assert!(!provably_independent(
            "i",
            &body("{ y[i / 2] = x[i]; }"),
            &none
        ));
        assert!(!provably_independent("i", &body("{ s += x[i]; }"), &none));
        assert!(!provably_independent(
            "i",
            &body("{ for k in 0..4 { y[i + k] = 0.0; } }"),
            &none
        ));
        assert!(!provably_independent(
            "i",
            &body("{ if x[i] < 0.0 { break; } y[i] = 1.0; }"),
            &none
        ));
        let mut s = HashSet::new();
        s.insert("s".to_string());
        assert!(provably_independent("i", &body("{ s += x[i]; }"), &s));
    }

    #[test]
    fn proves_rows_of_flattened_arrays() {
        let none = HashSet::new();
        // Each `i` writes its own row of `n` elements.
        for src in [
            "{ for j in 0..n { v[i * n + j] = 1.0; } }",
            "{ for j in 1..n - 1 { let k = i * n + j; v[k] = u[k - 1] + u[k + n]; } }",
            "{ for j in 0..=n - 1 { v[j + n * i] = 0.0; } }",
            "{ let row = i * n; for j in 0..n { v[row + j] = 0.0; } }",
        ] {
            assert!(provably_independent("i", &body(src), &none), "{src}");
        }
        // Rows that may overlap, or an index that is not a row.
        for src in [
            "{ for j in 0..n + 1 { v[i * n + j] = 1.0; } }",
            "{ for j in 0..m { v[i * n + j] = 1.0; } }",
            "{ for j in 0..=n { v[i * n + j] = 1.0; } }",
            "{ for j in 0..n { v[i * n + j] = 1.0; v[i * n + j + 1] = 0.0; } }",
            "{ for j in 0..n { let k = i * n + j; v[k] = 1.0; } for j in 0..2 * n { w[j] = 0.0; } }",
            "{ let mut k = i * n; for j in 0..n { v[k] = 1.0; k += 1; } }",
            "{ for j in 0..n { v[i * j + n] = 1.0; } }",
            "{ for j in -1..n { v[(i * n + j) as usize] = 1.0; } }",
            // A row's length or a loop's end that the body rebinds.
            "{ let row = i * n; let n = n + 1; for j in 0..n { v[row + j] = 0.0; } }",
            // A loop variable the body changes.
            "{ for mut j in 0..n { j *= 2; v[i * n + j] = 1.0; } }",
            // A name used before the `let` that binds it means the outer variable there.
            "{ v[k] = x[i]; let k = i; w[k] = 0.0; }",
        ] {
            assert!(!provably_independent("i", &body(src), &none), "{src}");
        }
    }
}
