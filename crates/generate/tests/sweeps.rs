//! The repository's sweep folder loads without a problem.

use std::path::Path;

#[test]
fn the_repository_sweeps_have_no_problem() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let sweeps = opspec_generate::sweep::load_dirs(
        &[root.join("sweeps")],
        None,
        opspec::tensor::Limits::DEFAULT,
    );
    assert!(sweeps.errors.is_empty(), "{:?}", sweeps.errors);
    assert!(!sweeps.cases.is_empty(), "no sweep case was loaded");
}
