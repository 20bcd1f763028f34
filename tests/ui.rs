//! Compile-fail cases: malformed directives are errors at their span, naming the directive and
//! the rule (`tests/ui/*.rs`, each with its expected `.stderr`); and programs that must compile
//! without a warning (`tests/ui-pass/*.rs`, which deny warnings).

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
    t.pass("tests/ui-pass/*.rs");
}
