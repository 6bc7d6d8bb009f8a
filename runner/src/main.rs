//! `runner`: the conformance suite as a command, for people validating an implementation.
//!
//! ```text
//! runner [--backend CMD] [--specs DIRS] [--timeout SECS] [--expectations FILE]
//!        [--report-json FILE] [--junit FILE] [--backend-log FILE] [libtest options]
//! runner --serve [--target dla]
//!                      serve the reference interpreter over the backend protocol
//! runner coverage [--specs DIRS] [--clauses]
//!                      clauses and documented combinations no case reaches, and spec lint
//! ```
//! Flags override the `OPSPEC_*` variables of the same meaning; everything else is libtest's
//! (a name filter, `--exact`, `--list`, `--ignored`, `--test-threads`, ...).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use libtest_mimic::Arguments;
use opspec_runner::serve::serve;
use opspec_runner::{main_with, Config};

fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().collect();
    if args.get(1).is_some_and(|a| a == "coverage") {
        return opspec_runner::coverage::main(&args[2..]);
    }
    if args.iter().any(|a| a == "--serve") {
        let stdin = std::io::stdin().lock();
        let stdout = std::io::stdout().lock();
        // `--serve --target dla` declares a target, so its restricted cases are skipped.
        let targets: Vec<String> = args
            .windows(2)
            .filter(|pair| pair[0] == "--target")
            .map(|pair| pair[1].clone())
            .collect();
        return match serve(
            stdin,
            stdout,
            "opspec-reference",
            &targets,
            |_, invocation| opspec::ops::evaluate(invocation),
        ) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::FAILURE
            }
        };
    }
    let mut config = match Config::from_env() {
        Ok(config) => config,
        Err(message) => return fail(&message),
    };
    let mut index = 1;
    while index < args.len() {
        let flag = args[index].clone();
        let known = [
            "--backend",
            "--specs",
            "--timeout",
            "--expectations",
            "--report-json",
            "--junit",
            "--backend-log",
        ];
        if !known.contains(&flag.as_str()) {
            index += 1;
            continue;
        }
        let Some(value) = args.get(index + 1).cloned() else {
            return fail(&format!("{flag} needs a value"));
        };
        args.drain(index..index + 2);
        match flag.as_str() {
            "--backend" => config.backend = Some(value),
            "--specs" => config.specs = std::env::split_paths(&value).collect(),
            "--timeout" => match value.parse::<f64>() {
                Ok(seconds) if seconds > 0.0 => config.timeout = Duration::from_secs_f64(seconds),
                _ => {
                    return fail(&format!(
                        "--timeout {value:?} is not a positive number of seconds"
                    ))
                }
            },
            "--expectations" => config.expectations = Some(PathBuf::from(value)),
            "--report-json" => config.report_json = Some(PathBuf::from(value)),
            "--junit" => config.junit = Some(PathBuf::from(value)),
            _ => config.backend_log = PathBuf::from(value),
        }
    }
    main_with(Arguments::from_iter(args), config)
}

fn fail(message: &str) -> ExitCode {
    eprintln!("error: {message}");
    ExitCode::from(2)
}
