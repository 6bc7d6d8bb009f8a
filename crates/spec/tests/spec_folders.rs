//! Walking spec and sweep folders: every entry that is not a readable spec file where one is
//! expected is a problem naming its path, never skipped in silence.

use std::path::{Path, PathBuf};

use opspec::tensor::Limits;
use opspec_spec::{load_dirs, SpecError, SpecErrorKind};

const CASE: &str = r#"
cases:
  - name: kept
    source: test
    attrs: {first_transpose: [1, 0]}
    inputs:
      input: {dtype: int8, shape: [1, 2], data: [[1, 2]]}
    expected:
      output: {dtype: int8, shape: [2, 1], data: [[1], [2]]}
"#;

/// A spec folder holding `shuffle/good.yaml`, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("opspec-walk-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("shuffle")).unwrap();
        std::fs::write(dir.join("shuffle").join("good.yaml"), CASE).unwrap();
        Scratch(dir)
    }

    fn errors(&self) -> Vec<SpecError> {
        let loaded = load_dirs(std::slice::from_ref(&self.0), None, Limits::DEFAULT);
        // The good file still loads whatever is beside it.
        assert!(
            loaded.cases.iter().any(|c| c.name == "kept"),
            "{:?}",
            loaded.errors
        );
        loaded.errors
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The one problem reported, which must name `path` and say `needle`.
fn assert_one_problem(errors: &[SpecError], path: &Path, kind: SpecErrorKind, needle: &str) {
    assert_eq!(errors.len(), 1, "{errors:?}");
    let error = &errors[0];
    assert_eq!(error.kind, kind, "{error}");
    assert_eq!(error.path, path, "{error}");
    assert!(
        error.to_string().contains(needle),
        "missing {needle:?}: {error}"
    );
}

#[cfg(unix)]
#[test]
fn a_dangling_symlink_is_a_problem() {
    let scratch = Scratch::new("dangling");
    let file = scratch.0.join("shuffle").join("gone.yaml");
    std::os::unix::fs::symlink(scratch.0.join("nowhere.yaml"), &file).unwrap();
    assert_one_problem(
        &scratch.errors(),
        &file,
        SpecErrorKind::Unreadable,
        "does not exist",
    );

    let scratch = Scratch::new("dangling-op");
    let folder = scratch.0.join("slice");
    std::os::unix::fs::symlink(scratch.0.join("nowhere"), &folder).unwrap();
    assert_one_problem(
        &scratch.errors(),
        &folder,
        SpecErrorKind::Unreadable,
        "does not exist",
    );
}

#[cfg(unix)]
#[test]
fn a_symlink_loop_is_a_problem() {
    let scratch = Scratch::new("loop");
    let file = scratch.0.join("shuffle").join("loop.yaml");
    std::os::unix::fs::symlink(&file, &file).unwrap();
    assert_one_problem(
        &scratch.errors(),
        &file,
        SpecErrorKind::Unreadable,
        "symbolic links",
    );
}

#[test]
fn a_folder_named_like_a_spec_file_is_a_problem() {
    let scratch = Scratch::new("folder");
    let folder = scratch.0.join("shuffle").join("x.yaml");
    std::fs::create_dir_all(&folder).unwrap();
    assert_one_problem(
        &scratch.errors(),
        &folder,
        SpecErrorKind::Layout,
        "is a folder",
    );
}

#[test]
fn an_upper_case_extension_is_a_problem() {
    let scratch = Scratch::new("upper");
    let file = scratch.0.join("shuffle").join("loud.YAML");
    std::fs::write(&file, CASE).unwrap();
    assert_one_problem(&scratch.errors(), &file, SpecErrorKind::Layout, ".yaml");
    // Each problem is a trial of its own.
    let other = scratch.0.join("shuffle").join("notes.txt");
    std::fs::write(&other, "not a spec").unwrap();
    let errors = scratch.errors();
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert_ne!(errors[0].trial_name(), errors[1].trial_name());
}

#[test]
fn an_op_folder_given_as_a_spec_folder_is_a_problem() {
    let scratch = Scratch::new("op-as-root");
    let op_folder = scratch.0.join("shuffle");
    let loaded = load_dirs(std::slice::from_ref(&op_folder), None, Limits::DEFAULT);
    assert!(loaded.cases.is_empty());
    assert_eq!(loaded.errors.len(), 1, "{:?}", loaded.errors);
    let message = loaded.errors[0].to_string();
    assert_eq!(loaded.errors[0].kind, SpecErrorKind::Layout);
    assert!(message.contains("op folder"), "{message}");
    assert!(
        message.contains(&scratch.0.display().to_string()),
        "{message}"
    );
}

// An unreadable op folder: runner/tests/cli.rs, which can run the walk as another user when
// the tests run as root (permissions do not stop root).

#[test]
fn the_repository_folders_have_no_problem() {
    let root = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    let loaded = load_dirs(&[root.join("specs")], None, Limits::DEFAULT);
    assert!(loaded.errors.is_empty(), "{:?}", loaded.errors);
    // The sweeps: crates/generate/tests/sweeps.rs.
}
