//! The memory a comparison holds (docs/protocol.md, "Memory"): comparing two outputs as large
//! as the element budget allows, which differ in every element, holds at most the bound of the
//! repository's `tests/memory.rs` (a report keeps a few differences, not a figure per element).
//! Each comparison runs in a child process, as the ops' cases do there.

use std::process::ExitCode;

use opspec::dtype::DType;
use opspec::tensor::{Buffer, Tensor};
use opspec_spec::compare::{compare, Comparison, Tolerance};

#[path = "../../../tests/memory.rs"]
#[allow(dead_code)]
mod cases;

/// Comparisons of two budget-sized float32 outputs that differ in every element.
const COMPARISONS: &[(&str, Comparison)] = &[
    ("compare exact, every element differs", Comparison::Exact),
    (
        "compare within 1 ULP, every element differs",
        Comparison::Within(Tolerance::Ulp(1)),
    ),
];

fn main() -> ExitCode {
    let names: Vec<&str> = COMPARISONS.iter().map(|c| c.0).collect();
    cases::check_children(&names, child)
}

/// Runs one comparison and prints `memory: <peak bytes over the resident memory before> 0`.
fn child(name: &str) {
    let &(_, comparison) = COMPARISONS
        .iter()
        .find(|c| c.0 == name)
        .expect("a known comparison");
    let n = cases::elements();
    let floats = |offset: u32| Tensor {
        dtype: DType::Float32,
        shape: vec![n],
        buffer: Buffer::W32((0..n as u32).map(|i| (i & 0xffff) + offset).collect()),
    };
    let (expected, actual) = (floats(0x3f80_0000), floats(0x3f80_1000));
    std::fs::write("/proc/self/clear_refs", "5").expect("reset the peak (Linux)");
    let before = cases::status_kib("VmRSS");
    let mismatch = compare(&expected, &actual, comparison).expect_err("every element differs");
    let peak = cases::status_kib("VmHWM");
    let report = mismatch.to_string();
    assert!(report.contains(&format!("{n} of {n} elements")), "{report}");
    println!("memory: {} 0", (peak.saturating_sub(before)) << 10);
}
