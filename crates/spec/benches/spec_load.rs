//! Loading speed of spec data: inline YAML and `.npy` files, on generated specs of 4 MB and
//! 64 MB, and the peak memory of `target/release/runner` running them.
//!
//! ```sh
//! cargo build --release -p opspec-runner --bin runner   # for the peak memory
//! cargo bench -p opspec-spec --bench spec_load
//! ```
//!
//! Each spec is one shuffle case whose input and expected output are the same float32 values
//! (an identity transpose), written inline as their shortest decimals, or as two `.npy` files.
//! The load time is `opspec_spec::load_dirs` over the spec's folder, in this process, median
//! of 5 after one warm-up, as wall time and as the loading thread's CPU time (the machine is
//! shared, so wall time moves with its load). MB/s counts the spec's bytes, the `.npy` files'
//! included. The peak is the maximum resident set of `runner -q` over the folder (`/usr/bin/time
//! -f %M`), over those bytes. It prints the section *Loading spec data* of BENCHMARKS.md, which
//! `scripts/benchmarks/bench.sh` merges into the file (`scripts/benchmarks/benchmarks_md.py`); a bench only prints.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use opspec::{DType, Tensor};
use opspec_spec::npy::to_npy;

const MB: usize = 1_000_000;
const REPS: usize = 5;
const SECTION: &str = "## Loading spec data";

/// The values: float32 in [-2, 2) from a fixed linear congruential sequence.
fn values(n: usize) -> Vec<f32> {
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    (0..n)
        .map(|_| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            ((state >> 40) as f32 / (1u64 << 24) as f32) * 4.0 - 2.0
        })
        .collect()
}

fn spec(n: usize, data: (&str, &str)) -> String {
    format!(
        "cases:\n  - name: identity\n    source: bench\n    clauses: [shuffle.transpose.numpy-semantics]\n    attrs: {{first_transpose: [0]}}\n    inputs:\n      input: {{dtype: float32, shape: [{n}], data: {}}}\n    expected:\n      output: {{dtype: float32, shape: [{n}], data: {}}}\n",
        data.0, data.1
    )
}

/// Writes `<dir>/shuffle/load.yaml` (and its `.npy` files) of about `bytes` bytes in all;
/// returns the bytes written and the element count of each tensor.
fn generate(dir: &Path, bytes: usize, npy: bool) -> (usize, usize) {
    let folder = dir.join("shuffle");
    std::fs::create_dir_all(&folder).unwrap();
    if npy {
        let n = bytes / 8;
        let tensor = Tensor::from_bits(
            DType::Float32,
            vec![n],
            values(n).iter().map(|v| v.to_bits() as u64).collect(),
        );
        let file = to_npy(&tensor);
        std::fs::create_dir_all(folder.join("load")).unwrap();
        std::fs::write(folder.join("load/input.npy"), &file).unwrap();
        std::fs::write(folder.join("load/output.npy"), &file).unwrap();
        let text = spec(n, ("load/input.npy", "load/output.npy"));
        std::fs::write(folder.join("load.yaml"), &text).unwrap();
        return (text.len() + 2 * file.len(), n);
    }
    let sample: String = values(1000).iter().map(|v| format!("{v:?}, ")).collect();
    let n = (bytes as f64 / 2.0 / (sample.len() as f64 / 1000.0)) as usize;
    let mut list = String::with_capacity(bytes / 2 + 16);
    list.push('[');
    for (i, v) in values(n).iter().enumerate() {
        if i > 0 {
            list.push_str(", ");
        }
        let _ = write!(list, "{v:?}");
    }
    list.push(']');
    let text = spec(n, (&list, &list));
    std::fs::write(folder.join("load.yaml"), &text).unwrap();
    (text.len(), n)
}

/// Nanoseconds this thread has run on a CPU (Linux; 0 elsewhere).
fn thread_cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

/// Peak RSS in bytes of `runner -q` over `dir`, and whether the run passed.
fn runner_peak(dir: &Path) -> Option<(usize, bool)> {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let runner = format!("{root}/target/release/runner");
    if !Path::new(&runner).exists() {
        return None;
    }
    let output = Command::new("/usr/bin/time")
        .args(["-f", "%M", &runner, "-q"])
        .env("OPSPEC_SPECS", dir)
        .output()
        .ok()?;
    let kib: usize = String::from_utf8_lossy(&output.stderr)
        .lines()
        .last()?
        .trim()
        .parse()
        .ok()?;
    Some((kib * 1024, output.status.success()))
}

struct Line {
    form: &'static str,
    bytes: usize,
    n: usize,
    wall: f64,
    cpu: f64,
    peak: Option<(usize, bool)>,
}

fn measure(dir: &Path, form: &'static str, size: usize) -> Line {
    let _ = std::fs::remove_dir_all(dir);
    let (bytes, n) = generate(dir, size, form == "npy");
    let dirs = [dir.to_path_buf()];
    let (mut walls, mut cpus) = (Vec::new(), Vec::new());
    for rep in 0..=REPS {
        let (started, cpu) = (Instant::now(), thread_cpu_ns());
        let loaded = opspec_spec::load_dirs(&dirs, None, opspec::tensor::Limits::DEFAULT);
        let (wall, cpu) = (
            started.elapsed().as_secs_f64(),
            (thread_cpu_ns() - cpu) as f64 / 1e9,
        );
        assert!(loaded.errors.is_empty(), "{:?}", loaded.errors);
        assert_eq!(loaded.cases.len(), 1);
        drop(loaded);
        if rep > 0 {
            walls.push(wall);
            cpus.push(cpu);
        }
    }
    let peak = runner_peak(dir);
    std::fs::remove_dir_all(dir).unwrap();
    Line {
        form,
        bytes,
        n,
        wall: median(walls),
        cpu: median(cpus),
        peak,
    }
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return; // `cargo test --benches` lists benches; nothing to list here
    }
    let dir: PathBuf =
        std::env::temp_dir().join(format!("opspec-bench-load-{}", std::process::id()));
    let mut lines = Vec::new();
    for form in ["inline YAML", "npy"] {
        for size in [4 * MB, 64 * MB] {
            let line = measure(&dir, form, size);
            eprintln!(
                "{form} {:.1} MB: {:.3} s wall, {:.3} s CPU",
                line.bytes as f64 / MB as f64,
                line.wall,
                line.cpu
            );
            lines.push(line);
        }
    }
    let load = std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().map(str::to_owned))
        .unwrap_or_else(|| "?".into());
    let mut section = format!(
        "{SECTION}\n\n\
         `cargo bench -p opspec-spec --bench spec_load` (`crates/spec/benches/spec_load.rs`; `scripts/benchmarks/bench.sh` runs it after the layout \
         bench and merges this section into BENCHMARKS.md). One shuffle case whose input and expected output hold the same \
         float32 values: inline as shortest decimals (about 11 bytes a value), or as two `.npy` files. \
         *Load* is `opspec_spec::load_dirs` over the spec's folder, median of {REPS}: wall time, and the \
         loading thread's CPU time (this 2-core machine is shared; its load average was {load} when this ran, \
         so wall time is the less steady of the two). MB/s counts every byte of the spec, its `.npy` files \
         included (1 MB = 10^6 bytes). *Peak* is the maximum resident set of `target/release/runner -q` \
         running the folder, over those bytes. Targets: inline YAML at least 40 MB/s with a peak of at most \
         4 × the file; `.npy` at least 500 MB/s.\n\n\
         | data | MB | values per tensor | load ms (wall) | MB/s (wall) | load ms (CPU) | MB/s (CPU) | runner peak MiB | peak / file |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|---:|\n"
    );
    for l in &lines {
        let mb = l.bytes as f64 / MB as f64;
        let (peak, ratio) = match l.peak {
            Some((peak, passed)) => (
                format!(
                    "{:.1}{}",
                    peak as f64 / (1 << 20) as f64,
                    if passed { "" } else { " (failed)" }
                ),
                format!("{:.2}", peak as f64 / l.bytes as f64),
            ),
            None => ("not measured".into(), "-".into()),
        };
        let _ = writeln!(
            section,
            "| {} | {mb:.1} | {} | {:.1} | {:.0} | {:.1} | {} | {peak} | {ratio} |",
            l.form,
            l.n,
            l.wall * 1e3,
            mb / l.wall,
            l.cpu * 1e3,
            if l.cpu > 0.0 {
                format!("{:.0}", mb / l.cpu)
            } else {
                "-".into()
            }
        );
    }
    let verdict = |clock: &str, pick: fn(&Line) -> f64| {
        let misses: Vec<String> = lines
            .iter()
            .filter(|l| {
                let target = if l.form == "npy" { 500.0 } else { 40.0 };
                let seconds = pick(l);
                seconds > 0.0 && l.bytes as f64 / MB as f64 / seconds < target
            })
            .map(|l| format!("{} {:.0} MB", l.form, l.bytes as f64 / MB as f64))
            .collect();
        match misses.is_empty() {
            true => format!("- Load speed by {clock}: met on every line.\n"),
            false => format!(
                "- Load speed by {clock}: missed by {}.\n",
                misses.join(", ")
            ),
        }
    };
    section.push('\n');
    section.push_str(&verdict("CPU time", |l| l.cpu));
    section.push_str(&verdict("wall time", |l| l.wall));
    let over: Vec<String> = lines
        .iter()
        .filter(|l| l.form != "npy")
        .filter(|l| {
            l.peak
                .map_or(true, |(peak, _)| peak as f64 > 4.0 * l.bytes as f64)
        })
        .map(|l| format!("{} MB", l.bytes / MB))
        .collect();
    let _ = writeln!(
        section,
        "- Inline YAML peak ≤ 4 × the file: {}.",
        if over.is_empty() {
            "met on every line".to_owned()
        } else {
            format!("missed (or not measured) at {}", over.join(", "))
        }
    );
    section.push_str(BEFORE);
    println!("{section}");
}

/// What the loader was before, as recorded once (not regenerated).
const BEFORE: &str = "
Before, recorded on 2026-11-25 (not regenerated): serde_yaml_ng read every value, holding the \
document's events all at once. A 47.6 MB spec of 2 × 2 M float32 values took 1.66 s wall (29 \
MB/s) and `runner` peaked at 660 MiB, 14.5 × the file; `perf` put the time in libyaml's scanner \
and the event loader (about 40 %), the allocator and page faults (about 22 %: every scalar an \
event with its text on the heap), `serde` dispatch and `DataNode` building (about 10 %). A \
pre-parser that lifted data lists out of the text then made that 0.47 s of CPU and 1.4 × the \
file, but read some files otherwise than YAML does, and left block-style data (`- [..]` rows) to \
serde_yaml_ng at about 52 × the file (a 66 MB spec peaked at 3.4 GB). Now one reader streams \
libyaml's events (`crates/spec/src/yaml.rs`, through libyaml-safer) into typed buffers: every spec means \
what YAML says, and the peak is what the values take, block style or flow.
";
