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
use std::time::Duration;

use clap::Parser;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};
use opspec::Op;
use opspec_runner::run::config::{
    parse_count, parse_engine, parse_timeout, repository_root, Options,
};
use opspec_runner::run::harness;
use opspec_runner::tools::fuzz::{fuzz, Budget, FuzzOptions, DEFAULT_CASES};

/// Differential fuzzing of a backend against the reference: random cases, each disagreement
/// shrunk and written as a spec case. Exit code: 0 no disagreement, 1 disagreements found,
/// 2 usage or backend error.
#[derive(Parser, Debug)]
#[command(name = "opspec-fuzz", disable_version_flag = true)]
struct Cli {
    /// Command line of the backend, run by `sh -c` from the repository root (default: the
    /// reference against itself, a measure of the generator's speed)
    #[arg(long, value_name = "CMD")]
    backend: Option<String>,
    /// Seed of the case generator (default 1)
    #[arg(long, value_name = "N")]
    seed: Option<u64>,
    /// Number of cases to try (default 20000)
    #[arg(long, value_name = "N", value_parser = parse_count, conflicts_with = "seconds")]
    cases: Option<u64>,
    /// Seconds to fuzz for, instead of a number of cases
    #[arg(long, value_name = "S", value_parser = parse_seconds)]
    seconds: Option<f64>,
    /// Ops to fuzz, comma-separated (default: all)
    #[arg(long, value_name = "OPS", value_delimiter = ',', value_parser = parse_op)]
    ops: Vec<Op>,
    /// Folder the shrunk cases are written to, as `<out>/<op>/<name>.yaml` (default
    /// target/opspec-fuzz)
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Stop after this many disagreements (default 1)
    #[arg(long, value_name = "N", value_parser = parse_count)]
    max_failures: Option<u64>,
    /// Tries the shrinker may spend on one disagreement; 0 writes it unshrunk (default 2000)
    #[arg(long, value_name = "N", value_parser = parse_usize)]
    shrink_budget: Option<usize>,
    /// Seconds the backend may take for one case, from 0.001 to 86400 (default 10)
    #[arg(long, value_name = "SECS", value_parser = parse_timeout, allow_hyphen_values = true)]
    timeout: Option<Duration>,
    /// Count both rejecting a case with different error kinds as a disagreement
    #[arg(long)]
    strict_kinds: bool,
    /// No progress bar
    #[arg(long)]
    quiet: bool,
    /// The reference's engine, `fast` (default) or `plain`: the expected results, and the
    /// backend when none is given
    #[arg(long, value_name = "ENGINE", value_parser = parse_engine)]
    engine: Option<opspec_runner::Engine>,
}

/// The longest campaign accepted, in seconds (a week): a deadline past it is a typo, and one
/// past `Instant`'s range would not be a deadline at all.
const MAX_SECONDS: f64 = 7.0 * 86_400.0;

fn parse_seconds(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(seconds) if seconds > 0.0 && seconds <= MAX_SECONDS => Ok(seconds),
        _ => Err(format!(
            "not a number of seconds from more than 0 to {MAX_SECONDS} (a week)"
        )),
    }
}

/// A whole number, 0 included.
fn parse_usize(text: &str) -> Result<usize, String> {
    match text.trim() {
        "0" => Ok(0),
        other => parse_count(other)
            .map_err(|e| e.to_string())
            .and_then(|n| usize::try_from(n).map_err(|e| e.to_string())),
    }
}

fn parse_op(name: &str) -> Result<Op, String> {
    Op::from_name(name.trim()).ok_or_else(|| {
        format!(
            "unknown op {name:?} (ops: {})",
            Op::ALL.map(Op::name).join(", ")
        )
    })
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(code) => code,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::from(2)
        }
    }
}

fn run(cli: Cli) -> Result<ExitCode, String> {
    let defaults = FuzzOptions::default();
    let options = FuzzOptions {
        seed: cli.seed.unwrap_or(defaults.seed),
        budget: match cli.seconds {
            Some(seconds) => Budget::Seconds(seconds),
            None => Budget::Cases(cli.cases.unwrap_or(DEFAULT_CASES)),
        },
        ops: if cli.ops.is_empty() {
            defaults.ops
        } else {
            cli.ops
        },
        // Absolute, so that the `OPSPEC_SPECS=<out> cargo test` it prints works from anywhere.
        out: std::path::absolute(cli.out.unwrap_or(defaults.out))
            .map_err(|e| format!("cannot resolve --out: {e}"))?,
        max_failures: cli.max_failures.map_or(defaults.max_failures, |n| {
            usize::try_from(n).unwrap_or(usize::MAX)
        }),
        shrink_budget: cli.shrink_budget.unwrap_or(defaults.shrink_budget),
        strict_kinds: cli.strict_kinds,
        engine: cli.engine.unwrap_or_default(),
    };
    let quiet = cli.quiet;
    // The backend is started as a run starts it (its log, timeout and limits), from these
    // flags alone: no OPSPEC_* variable applies to the fuzzer.
    let root = repository_root();
    let config = Options {
        backend: cli.backend,
        timeout: cli.timeout,
        engine: Some(options.engine),
        backend_log: Some(root.join("target").join("opspec-fuzz-backend.log")),
        ..Options::default()
    }
    .resolve_with(&root, |_| None)
    .map_err(|e| e.to_string())?;
    let backend = harness::start_backend(&config, usize::MAX).map_err(|e| e.to_string())?;
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
