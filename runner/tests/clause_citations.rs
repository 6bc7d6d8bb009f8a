//! Each trial cites the clauses it tests: against a backend with exactly one rule broken
//! (`runner/tests/backends/one_broken_rule.py`: one Slice mode, Shuffle's second transpose,
//! CHW4's padding, Scale's CHANNEL axis), every failing trial cites a clause of that rule, and
//! the summary's failures-by-clause line names no clause of another mode or format.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// The whole suite against the backend with `bug`: the exit code, the printed output and the
/// JSON report.
fn run_with(bug: &str) -> (Option<i32>, String, Value) {
    let scratch = tempfile::tempdir().unwrap();
    let report = scratch.path().join("report.json");
    let mut command = Command::new(env!("CARGO_BIN_EXE_runner"));
    for (name, _) in std::env::vars() {
        if name.starts_with("OPSPEC_") {
            command.env_remove(name);
        }
    }
    let output = command
        .current_dir(repository())
        .arg("-q")
        .arg("--backend")
        .arg(format!(
            "python3 runner/tests/backends/one_broken_rule.py {bug}"
        ))
        .arg("--report-json")
        .arg(&report)
        .arg("--backend-log")
        .arg(scratch.path().join("backend.log"))
        .output()
        .expect("the runner starts");
    let text = String::from_utf8_lossy(&output.stdout).into_owned()
        + &String::from_utf8_lossy(&output.stderr);
    let json = std::fs::read_to_string(&report)
        .unwrap_or_else(|e| panic!("no report ({e}); the run printed:\n{text}"));
    (
        output.status.code(),
        text,
        serde_json::from_str(&json).unwrap(),
    )
}

/// The clause ids of the summary's `N failing, by clause: id n, id n, ...` line.
fn by_clause_line(text: &str) -> Vec<String> {
    let line = text
        .lines()
        .find_map(|l| l.split_once("failing, by clause: ").map(|(_, rest)| rest))
        .unwrap_or_else(|| panic!("no failures-by-clause line in:\n{text}"));
    // The clauses named; the rest are only counted.
    let line = line.split_once("; ").map_or(line, |(named, _)| named);
    line.split(", ")
        .map(|entry| entry.rsplit_once(' ').unwrap().0.to_owned())
        .collect()
}

/// Whether a clause id names `word` as one of its words (`slice.empty-dim.clamp-reflect` names
/// clamp and reflect).
fn names(id: &str, word: &str) -> bool {
    id.split(['.', '-']).any(|w| w == word)
}

/// Runs the backend with `bug`: every failing trial is of `op` and cites one of `own`; no
/// clause of the line names a word of `others` (the other modes or formats) unless every
/// failing trial citing it also cites one of `both` (a conversion cites both its formats).
fn check(bug: &str, op: &str, own: &[&str], others: &[&str], both: &[&str]) {
    let (code, text, report) = run_with(bug);
    assert_eq!(code, Some(101), "a failed trial; the run printed:\n{text}");
    let failed: Vec<&Value> = report["trials"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["status"] == "failed")
        .collect();
    assert!(failed.len() >= 10, "{} failed", failed.len());
    let cites = |trial: &Value, ids: &[&str]| {
        trial["clauses"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| ids.contains(&c.as_str().unwrap()))
    };
    for trial in &failed {
        let name = trial["name"].as_str().unwrap();
        assert!(name.starts_with(&format!("{op}::")), "{name} failed");
        assert!(
            cites(trial, own),
            "{name} fails on the {bug} bug but cites none of {own:?}: {}",
            trial["clauses"]
        );
    }
    for id in by_clause_line(&text) {
        let Some(other) = others.iter().find(|w| names(&id, w)) else {
            continue;
        };
        for trial in failed.iter().filter(|t| cites(t, &[id.as_str()])) {
            assert!(
                cites(trial, both),
                "the {bug} bug's failures cite `{id}`, a clause of {other}: {} ({})",
                trial["name"],
                trial["clauses"]
            );
        }
    }
}

const MODES: [&str; 5] = ["strict", "wrap", "clamp", "fill", "reflect"];

/// The Slice modes but `mode`.
fn other_modes(mode: &str) -> Vec<&'static str> {
    MODES.into_iter().filter(|m| *m != mode).collect()
}

#[test]
fn a_broken_reflect_fails_trials_citing_reflect_and_no_other_mode() {
    let own = ["slice.reflect.mirror", "slice.reflect.c-equals-d"];
    check("reflect", "slice", &own, &other_modes("reflect"), &[]);
}

#[test]
fn a_broken_wrap_fails_trials_citing_wrap_and_no_other_mode() {
    let own = ["slice.wrap.modulo", "slice.wrap.negative-modulo"];
    check("wrap", "slice", &own, &other_modes("wrap"), &[]);
}

#[test]
fn a_broken_clamp_fails_trials_citing_clamp_and_no_other_mode() {
    check(
        "clamp",
        "slice",
        &["slice.clamp.clamp"],
        &other_modes("clamp"),
        &[],
    );
}

#[test]
fn a_broken_fill_fails_trials_citing_fill_and_no_other_mode() {
    check(
        "fill",
        "slice",
        &["slice.fill.value"],
        &other_modes("fill"),
        &[],
    );
}

#[test]
fn broken_strict_bounds_fail_trials_citing_the_bounds_and_no_other_mode() {
    check(
        "strict",
        "slice",
        &["slice.strict.out-of-bounds"],
        &other_modes("strict"),
        &[],
    );
}

#[test]
fn a_skipped_second_transpose_fails_trials_citing_it() {
    check(
        "shuffle",
        "shuffle",
        &["shuffle.transpose.second-permutation"],
        &[],
        &[],
    );
}

/// Whether numpy is importable; in CI (`CI` set) it must be (README's install step).
fn has_numpy() -> bool {
    let found = Command::new("python3")
        .args(["-c", "import numpy, ml_dtypes"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        assert!(
            std::env::var_os("CI").is_none(),
            "numpy is not installed, but CI must run the numpy-based backends"
        );
        eprintln!(
            "numpy is not installed: skipping (python3 -m pip install -r runner/backends/numpy/requirements.txt)"
        );
    }
    found
}

#[test]
fn chw4_padding_fails_trials_citing_chw4_and_no_other_format_but_conversions() {
    if !has_numpy() {
        return;
    }
    let others = [
        "chw2", "hwc8", "chw16", "chw32", "dhwc8", "cdhw32", "hwc", "hwc16", "dhwc", "dla",
    ];
    check(
        "chw4",
        "reformat",
        &["reformat.format.chw4"],
        &others,
        &["reformat.convert.via-logical"],
    );
}

#[test]
fn a_broken_channel_axis_fails_trials_citing_it_and_no_other_mode() {
    if !has_numpy() {
        return;
    }
    check(
        "channel",
        "scale",
        &[
            "scale.mode.channel",
            "scale.channel-axis.explicit",
            "scale.channel-axis.range",
            "scale.channel-axis.spatial",
        ],
        &["uniform", "elementwise"],
        &[],
    );
}
