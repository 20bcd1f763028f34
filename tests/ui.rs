//! Compile-fail cases: malformed directives are errors at their span, naming the directive and
//! the rule (`tests/ui/*.rs`, each with its expected `.stderr`).

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
