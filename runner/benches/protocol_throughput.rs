//! Cases per second through the backend protocol: one backend process, every case of
//! `specs/` streamed through it, several passes.
//!
//! `cargo bench -p opspec-runner --bench protocol_throughput` measures the numpy backend;
//! `OPSPEC_BACKEND="<command>"` measures another. Cases are sent one at a time and each reply
//! is decoded and judged, as in a real run.

use std::time::{Duration, Instant};

use opspec_runner::backend::process::ProcessBackend;
use opspec_runner::judge::verdict::judge;
use opspec_runner::Backend;
use opspec_runner::Config;
use opspec_runner::Status;
use opspec_spec::load_dirs;

const DEFAULT_BACKEND: &str = "python3 runner/backends/numpy/backend.py";
const MIN_SECONDS: f64 = 3.0;

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return; // nothing for `cargo test --benches` to list
    }
    let config = Config::from_env().expect("configuration");
    let command = config
        .backend
        .clone()
        .unwrap_or_else(|| DEFAULT_BACKEND.into());
    let loaded = load_dirs(&config.specs, None, opspec::tensor::Limits::DEFAULT);
    assert!(!loaded.cases.is_empty(), "no cases in {:?}", config.specs);
    let backend = ProcessBackend::start(
        &command,
        Duration::from_secs(30),
        config.backend_log.clone(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let cases: Vec<_> = loaded
        .cases
        .iter()
        .filter(|c| backend.supports(c).is_ok())
        .collect();
    let started = Instant::now();
    let (mut sent, mut passes, mut failed) = (0usize, 0usize, 0usize);
    while passes == 0 || started.elapsed().as_secs_f64() < MIN_SECONDS {
        for case in &cases {
            let outcome = backend.run(case).unwrap_or_else(|e| panic!("{e}"));
            if judge(case, outcome, false).status == Status::Failed {
                failed += 1;
            }
            sent += 1;
        }
        passes += 1;
    }
    let seconds = started.elapsed().as_secs_f64();
    println!("backend:    {} ({command})", backend.name());
    println!(
        "cases:      {} per pass, {passes} passes, {sent} sent, {failed} failed",
        cases.len()
    );
    println!("time:       {seconds:.3} s");
    println!("throughput: {:.0} cases/s", sent as f64 / seconds);
}
