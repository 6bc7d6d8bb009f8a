//! The reference interpreter stays small enough to read: `scripts/reference_lines.py` counts
//! its non-blank lines outside tests (comments included) and fails above 3,000.

use std::process::Command;

#[test]
fn the_reference_has_at_most_3000_lines() {
    let root = env!("CARGO_MANIFEST_DIR");
    let output = Command::new("python3")
        .arg(format!("{root}/scripts/reference_lines.py"))
        .output()
        .expect("python3 runs scripts/reference_lines.py");
    let report = String::from_utf8_lossy(&output.stdout);
    let errors = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{report}{errors}");
    // The script read the files it names (a total of 0 would mean it found none).
    let total = report.lines().last().unwrap_or_default();
    let count: usize = (total.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    assert!(count > 1000, "{report}");
}
