//! The compile-time policy rules (the README's "Compile-time rules"): one failing case per rule
//! variant with its reviewed `.stderr`, and a passing twin for each. Regenerate the snapshots
//! with `TRYBUILD=overwrite cargo test -p tool-contract-tests --test ui` and review the diff.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/fail/*.rs");
    t.pass("tests/ui/pass/*.rs");
}
