//! `runner expectations FILE [--facts REPORT] [--json]`: the one reader of known-failures files
//! that scripts use. It lists every entry as a run reads it (selector, clause, class, reason,
//! line, condition), gives the fingerprint a run's report records for the file, evaluates each
//! condition on a report's facts, and refuses a malformed file as a run does (exit 2).

use std::path::PathBuf;
use std::process::{Command, Output};

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn runner() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_runner"));
    command.current_dir(workspace()).env_remove("OPSPEC_SPECS");
    command
}

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

const FILE: &str = "\
# a comment
slice::recorded::in_bounds | slice.strict.in-bounds | semantics | plain | with a bar
clause in slice::recorded::* | slice.wrap.modulo | defect | on AMD only | if cpu_vendor == AuthenticAMD
slice::recorded::wrap_in_bounds | slice.wrap.modulo | adapter | new enough | if version >= 1.2 and engine_flags has FP16
";

#[test]
fn every_entry_is_listed_as_the_runner_reads_it_and_conditions_hold_on_a_reports_facts() {
    let scratch = tempfile::tempdir().unwrap();
    let file = scratch.path().join("known-failures.txt");
    std::fs::write(&file, FILE).unwrap();

    let listed = runner()
        .args(["expectations", "--json"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(listed.status.success(), "{}", text(&listed));
    let listing: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap();
    let entries = listing["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 3);
    assert_eq!(entries[0]["line"], 2);
    assert_eq!(entries[0]["selector"], "slice::recorded::in_bounds");
    assert_eq!(entries[0]["clause"], "slice.strict.in-bounds");
    assert_eq!(entries[0]["class"], "semantics");
    assert_eq!(entries[0]["reason"], "plain | with a bar");
    assert_eq!(
        entries[0]["held"], true,
        "an entry without a condition holds"
    );
    assert_eq!(entries[1]["selector"], "clause in slice::recorded::*");
    assert_eq!(
        entries[1]["reason"], "on AMD only",
        "the condition is no part of the reason"
    );
    assert_eq!(entries[1]["condition"], "cpu_vendor == AuthenticAMD");
    assert!(
        entries[1].get("held").is_none(),
        "without facts a condition is not evaluated: {listing}"
    );

    // The fingerprint is the one a run made with the file records.
    let report = scratch.path().join("run.json");
    let run = runner()
        .arg("--expectations")
        .arg(&file)
        .arg("--report-json")
        .arg(&report)
        .args(["-q", "--exact", "slice::recorded::in_bounds"])
        .output()
        .unwrap();
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap_or_else(|_| text(&run)))
            .unwrap();
    assert_eq!(listing["fingerprint"], written["run"]["expectations"]);

    // On facts of an Intel CPU and an engine of version 1.3 reporting FP16.
    let facts = scratch.path().join("facts.json");
    std::fs::write(
        &facts,
        r#"{"backend": "b", "facts": {"engine": "e", "version": "1.3", "cpu_vendor": "GenuineIntel",
            "engine_flags": ["FP16"]}, "trials": []}"#,
    )
    .unwrap();
    let listed = runner()
        .args(["expectations", "--json", "--facts"])
        .arg(&facts)
        .arg(&file)
        .output()
        .unwrap();
    assert!(listed.status.success(), "{}", text(&listed));
    let listing: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(listing["facts"]["cpu_vendor"], "GenuineIntel");
    let held: Vec<&serde_json::Value> = (listing["entries"].as_array().unwrap().iter())
        .map(|e| &e["held"])
        .collect();
    assert_eq!(held, [true, false, true]);

    // The text listing: a line per entry, the condition and whether it held.
    let shown = runner()
        .args(["expectations", "--facts"])
        .arg(&facts)
        .arg(&file)
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&shown.stdout).into_owned();
    assert!(
        shown.contains("3: clause in slice::recorded::* | slice.wrap.modulo | defect | on AMD only | if cpu_vendor == AuthenticAMD  [does not hold]"),
        "{shown}"
    );
}

#[test]
fn a_malformed_file_or_an_unreadable_report_is_refused_with_exit_2() {
    let scratch = tempfile::tempdir().unwrap();
    let file = scratch.path().join("known-failures.txt");
    std::fs::write(&file, "slice::a | slice.no-such.rule | defect | why\n").unwrap();
    let refused = runner()
        .args(["expectations", "--json"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused));
    assert!(
        text(&refused).contains("line 1: unknown clause `slice.no-such.rule`"),
        "{}",
        text(&refused)
    );
    assert!(refused.stdout.is_empty());

    std::fs::write(&file, FILE).unwrap();
    let refused = runner()
        .args(["expectations", "--facts"])
        .arg(scratch.path().join("absent.json"))
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused));
    assert!(
        text(&refused).contains("cannot read the report"),
        "{}",
        text(&refused)
    );
}
