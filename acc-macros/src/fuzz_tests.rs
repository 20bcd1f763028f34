//! Property test: every token stream given as a directive's arguments, random or a truncated
//! real one, gives a parse or errors, and expanding it never panics (issue 5; "never panic in a
//! macro"). Deterministic: a fixed-seed generator, so a failure reproduces.

use std::panic::{catch_unwind, AssertUnwindSafe};

use proc_macro2::{TokenStream, TokenTree};

use crate::directive::{ClauseName, DirectiveKind};

const KINDS: [DirectiveKind; 21] = [
    DirectiveKind::Parallel,
    DirectiveKind::Kernels,
    DirectiveKind::Serial,
    DirectiveKind::ParallelLoop,
    DirectiveKind::KernelsLoop,
    DirectiveKind::SerialLoop,
    DirectiveKind::Loop,
    DirectiveKind::Data,
    DirectiveKind::HostData,
    DirectiveKind::Atomic,
    DirectiveKind::Routine,
    DirectiveKind::Declare,
    DirectiveKind::Offload,
    DirectiveKind::Update,
    DirectiveKind::EnterData,
    DirectiveKind::ExitData,
    DirectiveKind::Wait,
    DirectiveKind::Init,
    DirectiveKind::Shutdown,
    DirectiveKind::Set,
    DirectiveKind::Cache,
];

/// Well-formed argument lists, the seeds of truncation.
const CORPUS: &[&str] = &[
    "copyin(x), copy(y), reduction(+: s), async(1), wait(1, 2)",
    "num_gangs(4, 2), num_workers = 4, vector_length(128), if(n > 10), self(c)",
    "copyin(readonly: a[0..n]), copyout(zero: b[lo..]), create(zero: c[..m]), present(d)",
    "collapse(force: 2), gang(num: 4, dim: 1, static: *), worker(num: 2), vector(length: 64)",
    "tile(*, 4), private(t), reduction(max: m), reduction(&&: ok), reduction(||: any)",
    "device_type(nvidia) num_gangs(80), device_type(*) async, default(none)",
    "wait(devnum: 0: queues: 1, 2), if_present, finalize, use_device(a)",
    "seq, bind(\"name\"), nohost, device_type(nvidia) vector",
    "self(a), host(b[0..4]), device(c), default_async(2), device_num(1)",
    "read",
    "capture",
    "readonly: a[i..i + 8], b",
];

/// xorshift64*: small, deterministic, good enough to shuffle tokens.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a>(&mut self, v: &'a [&'a str]) -> &'a str {
        v[self.below(v.len())]
    }
}

const ATOMS: &[&str] = &[
    ",",
    ":",
    "=",
    "+",
    "*",
    "&",
    "|",
    "^",
    "&&",
    "||",
    "..",
    "..=",
    "-",
    "!",
    "<",
    ">",
    ".",
    "::",
    "0",
    "1",
    "4",
    "-3",
    "2.5",
    "\"s\"",
    "a",
    "b",
    "x",
    "n",
    "self",
    "if",
    "async",
    "loop",
    "num",
    "dim",
    "static",
    "length",
    "force",
    "readonly",
    "zero",
    "devnum",
    "queues",
    "max",
    "min",
    "*",
    "pcopy",
    "present_or_copyin",
    "dtype",
    "bogus",
    "r#loop",
];

/// A random token string: clause names, atoms and groups, nested up to `depth`.
fn random_tokens(rng: &mut Rng, depth: u32) -> String {
    let mut out = String::new();
    for _ in 0..rng.below(8) {
        match rng.below(10) {
            0..=2 => out.push_str(rng.pick(ClauseName::ALL)),
            3..=6 => out.push_str(rng.pick(ATOMS)),
            7 if depth > 0 => {
                out.push('(');
                out.push_str(&random_tokens(rng, depth - 1));
                out.push(')');
            }
            8 if depth > 0 => {
                out.push('[');
                out.push_str(&random_tokens(rng, depth - 1));
                out.push(']');
            }
            _ => out.push(','),
        }
        out.push(' ');
    }
    out
}

/// Every prefix of `ts`, at every depth: the truncations of a token stream.
fn truncations(ts: &TokenStream) -> Vec<TokenStream> {
    let trees: Vec<TokenTree> = ts.clone().into_iter().collect();
    let mut out = Vec::new();
    for cut in 0..=trees.len() {
        out.push(trees[..cut].iter().cloned().collect());
        if let Some(TokenTree::Group(g)) = trees.get(cut) {
            for inner in truncations(&g.stream()) {
                let mut group = proc_macro2::Group::new(g.delimiter(), inner);
                group.set_span(g.span());
                let mut v: Vec<TokenTree> = trees[..cut].to_vec();
                v.push(TokenTree::Group(group));
                out.push(v.into_iter().collect());
            }
        }
    }
    out
}

const ITEM: &str = "fn f(x: &[f32], y: &mut [f32], s: f32) -> f32 { let mut t = s; for i in 0..y.len() { y[i] = x[i] + t; t += 1.0; } t }";

/// Parses, checks and expands `args` as every directive; panics (failing the test) when any of
/// them panics.
fn must_not_panic(args: &TokenStream) {
    for kind in KINDS {
        let r = catch_unwind(AssertUnwindSafe(|| {
            if let Ok(d) = crate::directive::parsed::of_tokens(
                kind,
                proc_macro2::Span::call_site(),
                args.clone(),
            ) {
                let _ = crate::check::check_directive(&d);
            }
            match kind {
                DirectiveKind::Update
                | DirectiveKind::EnterData
                | DirectiveKind::ExitData
                | DirectiveKind::Wait
                | DirectiveKind::Init
                | DirectiveKind::Shutdown
                | DirectiveKind::Set
                | DirectiveKind::Cache => {
                    let _ = crate::expand::executable::expand(kind, args.clone());
                }
                _ => {
                    let item: TokenStream = ITEM.parse().expect("a function");
                    let _ = crate::expand::expand_fn(kind, args.clone(), item);
                }
            }
        }));
        assert!(
            r.is_ok(),
            "`{}` panicked on arguments `{args}`",
            kind.spelling()
        );
    }
}

#[test]
fn random_clause_streams_never_panic() {
    let mut rng = Rng(0x0005_EED0_FACC);
    let mut tried = 0;
    for _ in 0..3000 {
        let src = random_tokens(&mut rng, 2);
        // Only what lexes is a token stream a macro can receive.
        if let Ok(ts) = src.parse::<TokenStream>() {
            must_not_panic(&ts);
            tried += 1;
        }
    }
    assert!(
        tried > 1000,
        "the generator produced too few token streams ({tried})"
    );
}

#[test]
fn truncated_directives_never_panic() {
    let mut n = 0;
    for src in CORPUS {
        let ts: TokenStream = src.parse().expect("corpus lexes");
        for t in truncations(&ts) {
            must_not_panic(&t);
            n += 1;
        }
    }
    assert!(n > 200, "{n} truncations");
}
