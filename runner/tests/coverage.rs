//! `runner coverage`: the repository's specs are fully covered and lint-clean, and a clause no
//! case names, or a lint finding, fails the command (so CI fails).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repo_specs() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("specs")
}

fn coverage(specs: Option<&Path>) -> (Output, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_runner"));
    command.arg("coverage");
    match specs {
        Some(dir) => command.env("OPSPEC_SPECS", dir),
        None => command.env_remove("OPSPEC_SPECS"),
    };
    let output = command.output().unwrap();
    let text = String::from_utf8_lossy(&output.stdout).into_owned()
        + &String::from_utf8_lossy(&output.stderr);
    (output, text)
}

/// A scratch copy of `specs/` (catalogues and cases), removed when dropped.
fn scratch_specs(name: &str) -> tempfile::TempDir {
    fn copy(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).unwrap();
        for entry in std::fs::read_dir(from).unwrap() {
            let path = entry.unwrap().path();
            let target = to.join(path.file_name().unwrap());
            if path.is_dir() {
                copy(&path, &target);
            } else {
                std::fs::copy(&path, &target).unwrap();
            }
        }
    }
    let dir = tempfile::Builder::new()
        .prefix(&format!("opspec-coverage-{name}-"))
        .tempdir()
        .unwrap();
    copy(&repo_specs(), dir.path());
    dir
}

fn append(path: &Path, text: &str) {
    let mut content = std::fs::read_to_string(path).unwrap();
    content.push_str(text);
    std::fs::write(path, content).unwrap();
}

#[test]
fn the_repository_specs_are_fully_covered() {
    let (output, text) = coverage(None);
    assert!(output.status.success(), "{text}");
    for op in ["shuffle", "slice", "as_strided", "scale", "reformat"] {
        assert!(
            text.contains(&format!("\n{op}: ")),
            "no section for {op}:\n{text}"
        );
    }
    assert_eq!(
        text.matches("clauses with no case: none").count(),
        6,
        "{text}"
    );
    assert!(text.contains("lint: no findings"), "{text}");
    assert!(text.contains("coverage: ok"), "{text}");
}

#[test]
fn a_clause_no_case_names_fails_the_command() {
    let scratch = scratch_specs("clause");
    let dir = scratch.path();
    append(
        &dir.join("slice.clauses.yaml"),
        r#"
  - id: slice.wrap.new-rule
    rule: "a rule someone catalogued before writing its case"
    source: "test"
    status: doc
"#,
    );
    let (output, text) = coverage(Some(dir));
    assert!(!output.status.success(), "{text}");
    let slice_line = text.lines().find(|l| l.starts_with("slice: ")).unwrap();
    let numbers: Vec<usize> = slice_line
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|n| n.parse().ok())
        .collect();
    assert_eq!(
        numbers[1] + 1,
        numbers[0],
        "one clause has no case: {slice_line}"
    );
    assert!(
        text.contains(
            "  clauses with no case (1):\n    slice.wrap.new-rule [doc]: a rule someone catalogued"
        ),
        "{text}"
    );
    assert!(
        text.contains("coverage: FAILED (1 clause(s) without a case"),
        "{text}"
    );
    // An error clause counts only when a case gets that error under it from the reference.
    append(
        &dir.join("slice.clauses.yaml"),
        r#"
  - id: slice.wrap.new-error
    rule: "an error rule"
    source: "test"
    status: doc
    error: out_of_bounds
"#,
    );
    let (_, text) = coverage(Some(dir));
    assert!(
        text.contains(
            "slice.wrap.new-error [doc]: an error rule (needs a case expecting out_of_bounds)"
        ),
        "{text}"
    );
}

const LINT_CASES: &str = r#"
cases:
  - name: names_nothing
    source: "test"
    attrs: {start: [0], size: [1]}
    inputs:
      input: {dtype: int32, shape: [2], data: [7, 8]}
    expected:
      output: {dtype: int32, shape: [1], data: [7]}

  - name: names_unknown_and_foreign_clauses
    source: "test"
    clauses: [slice.reflect.mirrored, shuffle.reshape.volume, slice.wrap.modulo, slice.wrap.modulo]
    attrs: {start: [0], size: [3], mode: wrap}
    inputs:
      input: {dtype: int32, shape: [2], data: [7, 8]}
    expected:
      output: {dtype: int32, shape: [3], data: [7, 8, 7]}

  - name: seed_slice_again
    source: "a copy of seed_examples.yaml seed_slice under another name"
    clauses: [slice.coordinates.formula]
    attrs: {start: [0, 0], size: [2, 2], stride: [1, 1]}
    inputs:
      input: {dtype: int8, shape: [3, 3], data: [[0, 1, 2], [3, 4, 5], [6, 7, 8]]}
    expected:
      output: {dtype: int8, shape: [2, 2], data: [[0, 1], [3, 4]]}

  - name: error_under_another_clause
    source: "test"
    clauses: [slice.strict.in-bounds]
    attrs: {start: [2], size: [1]}
    inputs:
      input: {dtype: int32, shape: [2], data: [7, 8]}
    error: {kind: out_of_bounds}
"#;

#[test]
fn lint_findings_fail_the_command() {
    let scratch = scratch_specs("lint");
    let dir = scratch.path();
    std::fs::write(dir.join("slice").join("lint.yaml"), LINT_CASES).unwrap();
    let (output, text) = coverage(Some(dir));
    assert!(!output.status.success(), "{text}");
    for needle in [
        "slice::lint::names_nothing: names no clause",
        "slice::lint::names_unknown_and_foreign_clauses: unknown clause `slice.reflect.mirrored`",
        "slice::lint::names_unknown_and_foreign_clauses: `shuffle.reshape.volume` is a clause of another op",
        "slice::lint::names_unknown_and_foreign_clauses: names `slice.wrap.modulo` twice",
        "slice::lint::error_under_another_clause: the reference rejects it under `slice.strict.out-of-bounds` (out_of_bounds), which the case does not name",
        "duplicate cases (same attributes and inputs): slice::lint::seed_slice_again, slice::seed_examples::seed_slice::int8",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in:\n{text}");
    }
    // A malformed case is a lint finding too (the loader's message, with file, case and field).
    std::fs::write(
        dir.join("slice").join("lint.yaml"),
        LINT_CASES.replacen("source: \"test\"", "source: \"\"", 1),
    )
    .unwrap();
    let (output, text) = coverage(Some(dir));
    assert!(!output.status.success(), "{text}");
    assert!(
        text.contains("spec error: ") && text.contains("case `names_nothing`: field `source`"),
        "{text}"
    );
}

const MARK_CASES: &str = r#"
cases:
  - name: nan_to_int8_unmarked
    source: "test"
    clauses: [scale.int8.quantize, scale.int8.nan-zero]
    attrs: {mode: uniform, output_dtype: int8}
    inputs:
      input: {dtype: float32, shape: [1, 1, 1, 1], data: [[[[.nan]]]]}
    expected:
      output: {dtype: int8, shape: [1, 1, 1, 1], data: [[[[0]]]]}

  - name: documented_rule_marked_inferred
    source: "test"
    clauses: [scale.formula, scale.mode.uniform]
    inferred: true
    attrs: {mode: uniform, shift: [1]}
    inputs:
      input: {dtype: float32, shape: [1, 1, 1, 1], data: [[[[5]]]]}
    expected:
      output: {dtype: float32, shape: [1, 1, 1, 1], data: [[[[6]]]]}

  - name: square_of_a_negative_base
    source: "test"
    clauses: [scale.formula, scale.mode.uniform]
    attrs: {mode: uniform, power: [2]}
    inputs:
      input: {dtype: float32, shape: [1, 1, 1, 1], data: [[[[-3]]]]}
    expected:
      output: {dtype: float32, shape: [1, 1, 1, 1], data: [[[[9]]]]}

  - name: zero_power_of_nan
    source: "test"
    clauses: [scale.formula, scale.mode.uniform, scale.pow.ieee]
    inferred: true
    attrs: {mode: uniform, power: [0]}
    inputs:
      input: {dtype: float32, shape: [1, 1, 1, 1], data: [[[[.nan]]]]}
    expected:
      output: {dtype: float32, shape: [1, 1, 1, 1], data: [[[[1]]]]}
"#;

const MARK_SWEEP: &str = r#"
seed: 1
sweeps:
  - name: explicit_unit_power
    source: "test"
    clauses: [scale.formula, scale.mode.uniform]
    dtypes: [float32]
    matrix:
      shift: [-1, 1]
    attrs: {mode: uniform, shift: [$shift], power: [1]}
    inputs:
      input: {shape: [1, 1, 1, 2], data: [[[[0, 1]]]]}
"#;

#[test]
fn marks_that_differ_from_the_clauses_fail_the_command() {
    // A case's `inferred` / `implementation_defined` marks follow the statuses of the clauses it
    // cites, and an explicit power meeting a negative base must cite the clause it depends on;
    // the sweeps are held to the same rules.
    let scratch = scratch_specs("marks");
    let dir = scratch.path();
    std::fs::write(dir.join("scale").join("marks.yaml"), MARK_CASES).unwrap();
    let sweeps_scratch = tempfile::tempdir().unwrap();
    let sweeps = sweeps_scratch.path();
    std::fs::create_dir_all(sweeps.join("scale")).unwrap();
    std::fs::write(sweeps.join("scale").join("marks.yaml"), MARK_SWEEP).unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_runner"))
        .arg("coverage")
        .env("OPSPEC_SPECS", dir)
        .env("OPSPEC_SWEEPS", sweeps)
        .env_remove("OPSPEC_BLESS")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout).into_owned()
        + &String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{text}");
    for needle in [
        "scale::marks::nan_to_int8_unmarked: cites `scale.int8.nan-zero` (implementation_defined) but is not marked `implementation_defined: true`",
        "scale::marks::documented_rule_marked_inferred: is marked `inferred: true` but cites no clause whose status is inferred",
        "scale::marks::square_of_a_negative_base: its explicit power depends on `scale.pow.negative-base`, which it must cite",
        "scale::sweep::marks::explicit_unit_power: its explicit power depends on `scale.pow.explicit-one`, which it must cite",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in:\n{text}");
    }
    assert!(
        text.contains("scale::marks::zero_power_of_nan: its explicit power depends on `scale.pow.zero-exponent`"),
        "{text}"
    );
    assert!(text.contains("5 lint finding(s)"), "{text}");
}

/// `runner coverage --specs DIR`.
fn coverage_of(dir: &Path) -> (Output, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_runner"))
        .args(["coverage", "--specs"])
        .arg(dir)
        .env_remove("OPSPEC_SPECS")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout).into_owned()
        + &String::from_utf8_lossy(&output.stderr);
    (output, text)
}

const PRIVATE_CASE: &str = r#"
cases:
  - name: private_transpose
    source: "NvInfer.h struct Permutation (docs/semantics.md §1.2)"
    clauses: [shuffle.transpose.numpy-semantics]
    attrs: {first_transpose: [1, 0]}
    inputs:
      input: {dtype: int32, shape: [2, 3], data: [[10, 11, 12], [13, 14, 15]]}
    expected:
      output: {dtype: int32, shape: [3, 2], data: [[10, 13], [11, 14], [12, 15]]}
"#;

#[test]
fn a_private_folder_is_linted_against_the_built_in_catalogues() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path();
    std::fs::create_dir_all(dir.join("shuffle")).unwrap();
    std::fs::write(dir.join("shuffle/mine.yaml"), PRIVATE_CASE).unwrap();
    let (output, text) = coverage_of(dir);
    assert!(output.status.success(), "{text}");
    assert!(!text.contains("unknown clause"), "{text}");
    assert!(!text.contains("no clause catalogue"), "{text}");
    assert!(text.contains("lint: no findings"), "{text}");
    assert!(text.contains("coverage: ok"), "{text}");

    // A clause id that no catalogue has is still a finding.
    std::fs::write(
        dir.join("shuffle/mine.yaml"),
        PRIVATE_CASE.replace(
            "numpy-semantics]",
            "numpy-semantics, shuffle.transpose.nope]",
        ),
    )
    .unwrap();
    let (output, text) = coverage_of(dir);
    assert!(!output.status.success(), "{text}");
    assert!(
        text.contains("shuffle::mine::private_transpose: unknown clause `shuffle.transpose.nope`"),
        "{text}"
    );

    // The folder may add clauses of its own; they need a case, the built-in ones do not.
    std::fs::write(
        dir.join("shuffle/mine.yaml"),
        PRIVATE_CASE.replace("numpy-semantics]", "numpy-semantics, shuffle.private.mine]"),
    )
    .unwrap();
    let catalogue = r#"op: shuffle
clauses:
  - id: shuffle.private.mine
    rule: "a rule of our own"
    source: "our design note"
    status: suite
"#;
    std::fs::write(dir.join("shuffle.clauses.yaml"), catalogue).unwrap();
    let (output, text) = coverage_of(dir);
    assert!(output.status.success(), "{text}");
    let unused = "  - id: shuffle.private.unused\n    rule: \"no case yet\"\n    source: \"ours\"\n    status: suite\n";
    std::fs::write(
        dir.join("shuffle.clauses.yaml"),
        format!("{catalogue}{unused}"),
    )
    .unwrap();
    let (output, text) = coverage_of(dir);
    assert!(!output.status.success(), "{text}");
    assert!(
        text.contains("  clauses with no case (1):\n    shuffle.private.unused [suite]"),
        "{text}"
    );
    // Redefining a built-in clause differently is a finding.
    let redefined = "  - id: shuffle.transpose.numpy-semantics\n    rule: \"something else\"\n    source: \"ours\"\n    status: suite\n";
    std::fs::write(
        dir.join("shuffle.clauses.yaml"),
        format!("{catalogue}{redefined}"),
    )
    .unwrap();
    let (output, text) = coverage_of(dir);
    assert!(!output.status.success(), "{text}");
    assert!(
        text.contains(
            "clause `shuffle.transpose.numpy-semantics`: field `id`: redefines the built-in clause"
        ),
        "{text}"
    );
}

#[test]
fn the_duplicate_lint_compares_npy_data_with_inline_data() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path();
    std::fs::create_dir_all(dir.join("shuffle/mine")).unwrap();
    let input = opspec::Tensor::from_bits(
        opspec::DType::Int32,
        vec![2, 3],
        vec![10, 11, 12, 13, 14, 15],
    );
    std::fs::write(
        dir.join("shuffle/mine/input.npy"),
        opspec_spec::npy::to_npy(&input),
    )
    .unwrap();
    let by_file = PRIVATE_CASE
        .replace("cases:\n", "")
        .replace("private_transpose", "by_file")
        .replace("[[10, 11, 12], [13, 14, 15]]", "mine/input.npy");
    std::fs::write(
        dir.join("shuffle/mine.yaml"),
        format!("{PRIVATE_CASE}{by_file}"),
    )
    .unwrap();
    let (output, text) = coverage_of(dir);
    assert!(!output.status.success(), "{text}");
    assert!(
        text.contains("duplicate cases (same attributes and inputs): shuffle::mine::by_file, shuffle::mine::private_transpose"),
        "{text}"
    );
}

/// Recorded cases: the seed's offset-0 example again as if a run had printed it (a recorded
/// case may repeat a documented one), twice more under other names (one of them without a
/// commit in its source), and the offset-2 example without `evidence` (documented).
const RECORDED_CASES: &str = r#"
cases:
  - name: run_offset_zero
    source: "example/repo@0123456789abcdef0123456789abcdef01234567 logs/run.log (Vendor 1.0)"
    evidence: recorded
    clauses: [as_strided.view.formula, as_strided.view.flat-input]
    dtypes: [float16]
    attrs: {size: [2, 2], stride: [2, 3], offset: [0]}
    inputs:
      input: {shape: [3, 3], data: [[1, 2, 3], [4, 5, 6], [7, 8, 9]]}
    expected:
      output: {shape: [2, 2], data: [[1, 4], [3, 6]]}

  - name: run_offset_zero_again
    source: "logs/run.log, no commit"
    evidence: recorded
    clauses: [as_strided.view.formula, as_strided.view.flat-input]
    dtypes: [float16]
    attrs: {size: [2, 2], stride: [2, 3], offset: [0]}
    inputs:
      input: {shape: [3, 3], data: [[1, 2, 3], [4, 5, 6], [7, 8, 9]]}
    expected:
      output: {shape: [2, 2], data: [[1, 4], [3, 6]]}

  - name: documented_offset_two
    source: "test"
    evidence: documented
    clauses: [as_strided.view.formula, as_strided.view.flat-input]
    dtypes: [int32]
    attrs: {size: [2, 2], stride: [2, 3], offset: [2]}
    inputs:
      input: {shape: [3, 3], data: [[1, 2, 3], [4, 5, 6], [7, 8, 9]]}
    expected:
      output: {shape: [2, 2], data: [[3, 6], [5, 8]]}
"#;

#[test]
fn recorded_cases_are_counted_per_op_and_linted() {
    // The repository's own count: one line per op.
    let (_, text) = coverage(None);
    assert_eq!(text.matches("\n  recorded cases: ").count(), 5, "{text}");
    assert!(text.contains("\nas_strided: ") && text.contains("recorded cases: 0"));

    let scratch = scratch_specs("recorded");
    let dir = scratch.path();
    std::fs::write(dir.join("as_strided").join("recorded.yaml"), RECORDED_CASES).unwrap();
    let (output, text) = coverage(Some(dir));
    assert!(!output.status.success(), "{text}");
    let section = text.split("\nas_strided: ").nth(1).unwrap();
    assert!(
        section.contains("\n  recorded cases: 2\n"),
        "the two recorded cases count, the documented one does not:\n{text}"
    );
    // A recorded case's source names the commit its log was read at.
    assert!(
        text.contains("as_strided::recorded::run_offset_zero_again: a recorded case's source names the log and the commit"),
        "{text}"
    );
    assert!(
        !text.contains("as_strided::recorded::run_offset_zero: a recorded"),
        "{text}"
    );
    // Two recorded cases of one invocation are duplicates; a recorded case repeating a
    // documented one is not.
    assert!(
        text.contains("duplicate cases (same attributes and inputs): as_strided::recorded::run_offset_zero::float16, as_strided::recorded::run_offset_zero_again::float16\n"),
        "{text}"
    );
    assert!(
        !text.contains("as_strided::seed_examples::seed_offset_zero::float16,"),
        "{text}"
    );
    assert!(!text.contains("documented_offset_two"), "{text}");
}
