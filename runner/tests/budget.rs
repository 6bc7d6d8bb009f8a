//! The element budget bounds what a case costs, whatever its dims (docs/protocol.md,
//! "Memory"): the runner, run as a user runs it, on hostile cases, with its peak resident
//! memory read by `wait4`.
//!
//! - A tensor with no elements but huge dims (`[0, 2^32]`) costs nothing: every op on it, and
//!   `runner coverage`, end normally with a report.
//! - A mistyped slice size (`size: [268435456]` for `[3]`) gives an output within the budget,
//!   which the run holds once plus a bounded amount, and reports as a failure. Debug builds
//!   are slow on 2^28 elements, so the test shrinks the budget (`OPSPEC_MAX_ELEMENTS`) and
//!   checks that the cost follows the output, at two sizes.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// What a measured run gave.
struct Measured {
    /// The exit code, `None` when a signal ended it.
    code: Option<i32>,
    out: String,
    /// Peak resident memory, KiB.
    peak_kib: u64,
}

/// Runs `command` to its end and reads its peak resident memory (`ru_maxrss` of `wait4`, so
/// only this child counts, whatever else the test binary runs at the same time).
#[allow(clippy::zombie_processes)] // reaped by `wait4`, which std's `Child::wait` cannot replace
fn measured(mut command: Command, scratch: &Path) -> Measured {
    let (stdout, stderr) = (scratch.join("stdout"), scratch.join("stderr"));
    let child = command
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&stdout).unwrap())
        .stderr(std::fs::File::create(&stderr).unwrap())
        .spawn()
        .unwrap();
    let mut status = 0;
    // SAFETY: a zeroed rusage is a valid out-parameter; the child is ours and not yet waited
    // for (std's `Child` is dropped without waiting).
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = unsafe { libc::wait4(child.id() as libc::pid_t, &mut status, 0, &mut usage) };
    assert_eq!(pid, child.id() as libc::pid_t, "wait4 failed");
    let code = libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
    let out =
        std::fs::read_to_string(&stdout).unwrap() + &std::fs::read_to_string(&stderr).unwrap();
    Measured {
        code,
        out,
        peak_kib: usage.ru_maxrss as u64,
    }
}

/// The runner with none of the configuration of the calling environment.
fn runner() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_runner"));
    for (var, _) in std::env::vars_os() {
        if var.to_string_lossy().starts_with("OPSPEC_") || var == "CI" {
            command.env_remove(var);
        }
    }
    command
}

/// A temporary folder, removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("opspec-budget-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    /// Writes `specs/<op>/<file>.yaml` files and returns the spec folder.
    fn specs(&self, files: &[(&str, String)]) -> PathBuf {
        let specs = self.0.join("specs");
        for (path, text) in files {
            let path = specs.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        specs
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

const MIB: u64 = 1024;
const GIB: u64 = 1024 * MIB;

/// Zero elements, dims far past the budget: every expected value follows from the shapes alone.
const ZERO_ELEMENTS: [(&str, &str); 5] = [
    (
        "shuffle/zero.yaml",
        r#"cases:
  - name: identity_of_zero_by_2_pow_32
    source: "shuffle with no attributes is the identity; an empty tensor stays empty"
    clauses: [shuffle.transpose.numpy-semantics]
    attrs: {}
    inputs:
      input: {dtype: int8, shape: [0, 4294967296], data: []}
    expected:
      output: {dtype: int8, shape: [0, 4294967296], data: []}
  - name: transpose_reshape_transpose_of_zero_by_2_pow_32
    source: "transpose to [2^32, 0], reshape (0 a zero-length dim) to [2^32, 1, 0], transpose to [0, 2^32, 1]"
    clauses: [shuffle.transpose.numpy-semantics]
    attrs: {first_transpose: [1, 0], reshape_dims: [4294967296, 1, 0], zero_is_placeholder: false, second_transpose: [2, 0, 1]}
    inputs:
      input: {dtype: int8, shape: [0, 4294967296], data: []}
    expected:
      output: {dtype: int8, shape: [0, 4294967296, 1], data: []}
"#,
    ),
    (
        "slice/zero.yaml",
        r#"cases:
  - name: strict_slice_of_zero_by_2_pow_32
    source: "every coordinate is inside; axis 0 has output size 0"
    clauses: [slice.coordinates.formula]
    attrs: {start: [0, 0], size: [0, 4294967296]}
    inputs:
      input: {dtype: int8, shape: [0, 4294967296], data: []}
    expected:
      output: {dtype: int8, shape: [0, 4294967296], data: []}
  - name: fill_slice_to_zero_by_2_pow_32
    source: "fill mode, an output of size 0 on axis 0"
    clauses: [slice.coordinates.formula]
    attrs: {start: [0, 0], size: [0, 4294967296], mode: fill}
    inputs:
      input: {dtype: float32, shape: [1, 2], data: [[1, 2]]}
    expected:
      output: {dtype: float32, shape: [0, 4294967296], data: []}
  - name: reflect_slice_to_zero_by_2_pow_32
    source: "reflect mode, an output of size 0 on axis 0"
    clauses: [slice.coordinates.formula]
    attrs: {start: [0, -5], size: [0, 4294967296], stride: [1, 3], mode: reflect}
    inputs:
      input: {dtype: float32, shape: [1, 2], data: [[1, 2]]}
    expected:
      output: {dtype: float32, shape: [0, 4294967296], data: []}
"#,
    ),
    (
        "reformat/zero.yaml",
        r#"cases:
  - name: pack_chw4_of_zero_elements
    source: "CHW4 of [0, C, 1]: [0][C/4][1][4], no element"
    clauses: [reformat.layout.vector-major]
    attrs: {from: LINEAR, to: CHW4}
    inputs:
      input: {dtype: int8, shape: [0, 4294967296, 1], data: []}
    expected:
      output: {dtype: int8, shape: [0], data: []}
  - name: unpack_chw4_of_zero_elements
    source: "CHW4 of [0, C, 1] back to LINEAR"
    clauses: [reformat.layout.vector-major]
    attrs: {from: CHW4, to: LINEAR, shape: [0, 4294967296, 1]}
    inputs:
      input: {dtype: int8, shape: [0], data: []}
    expected:
      output: {dtype: int8, shape: [0, 4294967296, 1], data: []}
"#,
    ),
    (
        "scale/zero.yaml",
        r#"cases:
  - name: uniform_scale_of_zero_elements
    source: "no element to scale"
    clauses: [scale.formula]
    attrs: {mode: uniform, scale: [2]}
    inputs:
      input: {dtype: float32, shape: [0, 4294967296, 1, 1], data: []}
    expected:
      output: {dtype: float32, shape: [0, 4294967296, 1, 1], data: []}
"#,
    ),
    (
        "as_strided/zero.yaml",
        r#"cases:
  - name: view_of_2_pow_32_elements
    source: "2^32 elements is past the element budget"
    clauses: [common.budget.too-large]
    attrs: {size: [4294967296], stride: [0], offset: [0]}
    inputs:
      input: {dtype: float16, shape: [1], data: [1]}
    error: {kind: too_large}
"#,
    ),
];

#[test]
fn zero_element_tensors_with_huge_dims_end_in_a_report() {
    let scratch = Scratch::new("zero");
    let files: Vec<(&str, String)> = ZERO_ELEMENTS
        .iter()
        .map(|&(p, t)| (p, t.to_owned()))
        .collect();
    let specs = scratch.specs(&files);
    let mut command = runner();
    command.env("OPSPEC_SPECS", &specs);
    let run = measured(command, &scratch.0);
    assert_eq!(run.code, Some(0), "{}", run.out);
    assert!(
        run.out.contains("test result: ok. 9 passed; 0 failed"),
        "{}",
        run.out
    );
    assert!(run.out.contains("backend: reference"), "{}", run.out);
    assert!(
        run.peak_kib < GIB,
        "peak {} KiB:\n{}",
        run.peak_kib,
        run.out
    );
    eprintln!("zero-element cases: runner peak {} MiB", run.peak_kib / MIB);
    // `runner coverage` evaluates the error cases: it reports, whatever it finds.
    let mut command = runner();
    command.args(["coverage", "--specs"]).arg(&specs);
    let run = measured(command, &scratch.0);
    assert!(
        run.code.is_some(),
        "coverage ended by a signal:\n{}",
        run.out
    );
    assert!(run.out.contains("coverage: "), "{}", run.out);
    assert!(
        run.peak_kib < GIB,
        "peak {} KiB:\n{}",
        run.peak_kib,
        run.out
    );
}

/// The slice typo cases: `size: [n]` for an int8 input of 3 elements, in each mode that
/// accepts it (strict_bounds rejects it), expecting what `[3]` gives.
fn typo_specs(n: u64) -> Vec<(&'static str, String)> {
    ["fill", "wrap", "clamp", "reflect", "strict_bounds"]
        .iter()
        .map(|mode| {
            (
                match *mode {
                    "fill" => "slice/typo_fill.yaml",
                    "wrap" => "slice/typo_wrap.yaml",
                    "clamp" => "slice/typo_clamp.yaml",
                    "reflect" => "slice/typo_reflect.yaml",
                    _ => "slice/typo_strict.yaml",
                },
                format!(
                    r#"cases:
  - name: {mode}_size_typo
    source: "size [3] mistyped as [{n}]"
    clauses: [slice.coordinates.formula]
    attrs: {{start: [0], size: [{n}], mode: {mode}}}
    inputs:
      input: {{dtype: int8, shape: [3], data: [1, 2, 3]}}
    expected:
      output: {{dtype: int8, shape: [3], data: [1, 2, 3]}}
"#
                ),
            )
        })
        .collect()
}

/// The typo cases with `size: [n]` and an element budget of `n`, one trial at a time.
fn typo_run(n: u64) -> Measured {
    let scratch = Scratch::new(&format!("typo-{n}"));
    let specs = scratch.specs(&typo_specs(n));
    let mut command = runner();
    command
        .env("OPSPEC_SPECS", &specs)
        .env("OPSPEC_MAX_ELEMENTS", n.to_string())
        .args(["--test-threads", "1"]);
    measured(command, &scratch.0)
}

/// The runner's peak on the typo cases with `n` > 3, checking that it reports each.
fn typo_peak_kib(n: u64) -> u64 {
    let run = typo_run(n);
    // Every case fails, each with a message, and the run ends with its report.
    assert_eq!(run.code, Some(101), "{}", run.out);
    assert!(
        run.out.contains("test result: FAILED. 0 passed; 5 failed"),
        "{}",
        run.out
    );
    for mode in ["fill", "wrap", "clamp", "reflect"] {
        assert!(
            run.out
                .contains(&format!("slice::typo_{mode}::{mode}_size_typo")),
            "{}",
            run.out
        );
    }
    assert!(
        run.out
            .contains(&format!("expected int8 [3], got int8 [{n}]")),
        "{}",
        run.out
    );
    assert!(run.out.contains("out_of_bounds"), "{}", run.out);
    assert!(run.out.contains("backend: reference"), "{}", run.out);
    run.peak_kib
}

#[test]
fn a_mistyped_slice_size_costs_its_output_and_ends_in_a_report() {
    // The bound of docs/protocol.md ("Memory"): the output, once, plus at most 64 MiB of
    // tables and blocks, over the run's own footprint (the same run on 3 elements).
    let base = typo_run(3);
    assert_eq!(
        base.code,
        Some(0),
        "size [3] is what the cases expect:\n{}",
        base.out
    );
    let base = base.peak_kib;
    for n in [1u64 << 22, 1 << 23] {
        let peak = typo_peak_kib(n);
        let output_kib = n / 1024;
        eprintln!(
            "slice typo, budget {n}: runner peak {} MiB (footprint {} MiB, output {} MiB)",
            peak / MIB,
            base / MIB,
            output_kib / MIB
        );
        assert!(
            peak <= base + output_kib + 64 * MIB,
            "budget {n}: peak {peak} KiB, footprint {base} KiB, output {output_kib} KiB"
        );
    }
}
