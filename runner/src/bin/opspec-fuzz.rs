//! `opspec-fuzz`: differential fuzzing of a backend against the reference.
//!
//! ```text
//! opspec-fuzz [--backend CMD] [--seed N] [--cases N | --seconds S] [--ops shuffle,slice,...]
//!             [--out DIR] [--max-failures N] [--shrink-budget N] [--timeout SECS]
//!             [--strict-kinds] [--quiet]
//! ```
//! Without `--backend` the reference is fuzzed against itself (a measure of the generator's
//! speed). The default budget is 20,000 cases; the run stops at the first disagreement
//! (`--max-failures` for more), which is shrunk and written as `<out>/<op>/<name>.yaml`
//! (default `target/opspec-fuzz`), runnable with `OPSPEC_SPECS=<out> cargo test`.
//! Both rejecting a case with different error kinds is counted, not failed, unless
//! `--strict-kinds`: a random invalid case may break two rules, and which one an implementation
//! reports first is not specified.
//! Exit code: 0 no disagreement, 1 disagreements found, 2 usage or backend error.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};
use opspec::Op;
use opspec_runner::backend::{Backend, Reference};
use opspec_runner::fuzz::{fuzz, Budget, FuzzOptions};
use opspec_runner::process::ProcessBackend;

const USAGE: &str = "usage: opspec-fuzz [--backend CMD] [--seed N] [--cases N | --seconds S] [--ops a,b] [--out DIR] [--max-failures N] [--shrink-budget N] [--timeout SECS] [--strict-kinds] [--quiet]";

fn main() -> ExitCode {
    match run() {
        Ok(code) => code,
        Err(message) => {
            eprintln!("error: {message}\n{USAGE}");
            ExitCode::from(2)
        }
    }
}

fn run() -> Result<ExitCode, String> {
    let mut options = FuzzOptions::default();
    let mut backend_command: Option<String> = None;
    let mut timeout = Duration::from_secs(10);
    let mut quiet = false;
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        if flag == "--quiet" {
            quiet = true;
            continue;
        }
        if flag == "--strict-kinds" {
            options.strict_kinds = true;
            continue;
        }
        if flag == "--help" || flag == "-h" {
            println!("{USAGE}");
            return Ok(ExitCode::SUCCESS);
        }
        let value = args.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let number = |what: &str| -> Result<f64, String> {
            value
                .parse::<f64>()
                .ok()
                .filter(|v| *v >= 0.0)
                .ok_or_else(|| format!("{flag} {value:?} is not {what}"))
        };
        match flag.as_str() {
            "--backend" => backend_command = Some(value.clone()),
            "--seed" => {
                options.seed = value
                    .parse()
                    .map_err(|_| format!("--seed {value:?} is not a whole number"))?
            }
            "--cases" => options.budget = Budget::Cases(number("a number of cases")? as u64),
            "--seconds" => options.budget = Budget::Seconds(number("a number of seconds")?),
            "--ops" => {
                options.ops = value
                    .split(',')
                    .map(|name| {
                        Op::from_name(name.trim()).ok_or_else(|| {
                            format!(
                                "unknown op {name:?} (ops: {})",
                                Op::ALL.map(Op::name).join(", ")
                            )
                        })
                    })
                    .collect::<Result<_, _>>()?
            }
            "--out" => options.out = PathBuf::from(&value),
            "--max-failures" => options.max_failures = number("a count")?.max(1.0) as usize,
            "--shrink-budget" => options.shrink_budget = number("a count")? as usize,
            "--timeout" => timeout = Duration::from_secs_f64(number("a number of seconds")?),
            other => return Err(format!("unknown flag {other}")),
        }
    }
    let backend: Arc<dyn Backend> = match &backend_command {
        None => Arc::new(Reference),
        Some(command) => {
            let log = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("..")
                .join("target")
                .join("opspec-fuzz-backend.log");
            if let Some(parent) = log.parent() {
                let _ = std::fs::create_dir_all(parent);
            }
            Arc::new(ProcessBackend::start(command, timeout, log)?)
        }
    };
    let (bar, total) = match options.budget {
        Budget::Cases(n) => (ProgressBar::new(n), format!("{n} cases")),
        Budget::Seconds(s) => (ProgressBar::new_spinner(), format!("{s} s")),
    };
    if quiet {
        bar.set_draw_target(ProgressDrawTarget::hidden());
    }
    bar.set_style(
        ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {bar:40} {human_pos}/{human_len} cases, {rate}",
        )
        .expect("template")
        .with_key(
            "rate",
            |state: &ProgressState, w: &mut dyn std::fmt::Write| {
                let _ = write!(w, "{:.0} cases/s", state.per_sec());
            },
        ),
    );
    eprintln!(
        "opspec-fuzz: backend {}, seed {}, budget {total}, ops {}",
        backend.name(),
        options.seed,
        options
            .ops
            .iter()
            .map(|o| o.name())
            .collect::<Vec<_>>()
            .join(",")
    );
    let report = fuzz(backend.as_ref(), &options, |done| bar.set_position(done))?;
    bar.finish_and_clear();
    println!(
        "{} cases in {:.2} s: {:.0} cases/s ({} computed and {} rejected by the reference, {} unsupported by the backend, {} rejected by both with another error kind)",
        report.cases,
        report.seconds,
        report.per_second(),
        report.computed,
        report.rejected,
        report.unsupported,
        report.kind_differences
    );
    if report.findings.is_empty() {
        println!("no disagreement with the reference");
        return Ok(ExitCode::SUCCESS);
    }
    for finding in &report.findings {
        println!(
            "\ndisagreement at case {} ({}: {}), shrunk in {} tries; written to {}\n{}",
            finding.index,
            finding.op,
            finding.disagreement.describe(),
            finding.shrink_tries,
            finding.path.display(),
            finding.report
        );
    }
    println!(
        "\n{} disagreement(s); run the written case(s) with OPSPEC_SPECS={} cargo test",
        report.findings.len(),
        options.out.display()
    );
    Ok(ExitCode::from(1))
}
