//! `runner export --wpt`: the suite's revision it records is the checkout's commit, marked
//! `-dirty` when a file git tracks is modified there (README.md, "Results others can read").

use std::path::Path;
use std::process::Command;

fn git(dir: &Path, args: &[&str]) {
    let output = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args([
            "-c",
            "user.name=opspec",
            "-c",
            "user.email=opspec@example.invalid",
        ])
        .args(["-c", "commit.gpgsign=false"])
        .args(args)
        .output()
        .unwrap();
    assert!(output.status.success(), "git {args:?}: {output:?}");
}

/// The `revision` of the wptreport `runner export --wpt` writes in `dir`.
fn revision(dir: &Path, report: &Path) -> String {
    let out = dir.join("../wpt.json");
    let output = Command::new(env!("CARGO_BIN_EXE_runner"))
        .current_dir(dir)
        .args(["export", "--wpt"])
        .arg(report)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let wpt: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    wpt["run_info"]["revision"].as_str().unwrap().to_owned()
}

#[test]
fn the_revision_of_a_modified_checkout_is_marked_dirty() {
    let scratch = tempfile::Builder::new()
        .prefix("opspec-wpt-")
        .tempdir()
        .unwrap();
    let report = scratch.path().join("report.json");
    let run = Command::new(env!("CARGO_BIN_EXE_runner"))
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join(".."))
        .args(["--exact", "slice::wrap::wrap_inside::int8", "--report-json"])
        .arg(&report)
        .output()
        .unwrap();
    assert!(run.status.success(), "{run:?}");
    let checkout = scratch.path().join("checkout");
    std::fs::create_dir(&checkout).unwrap();
    git(&checkout, &["init", "-q"]);
    std::fs::write(checkout.join("tracked.txt"), "1\n").unwrap();
    git(&checkout, &["add", "tracked.txt"]);
    git(&checkout, &["commit", "-q", "-m", "one"]);
    let clean = revision(&checkout, &report);
    assert_eq!(clean.len(), 40, "{clean}");
    assert!(clean.bytes().all(|b| b.is_ascii_hexdigit()), "{clean}");
    // A file git does not track changes nothing.
    std::fs::write(checkout.join("untracked.txt"), "x\n").unwrap();
    assert_eq!(revision(&checkout, &report), clean);
    std::fs::write(checkout.join("tracked.txt"), "2\n").unwrap();
    assert_eq!(revision(&checkout, &report), format!("{clean}-dirty"));
}
