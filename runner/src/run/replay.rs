//! `runner replay TRIAL`: one trial run alone, as a run with the same configuration would run
//! it (`crate::run::harness::Harness::replay`), with every request and reply printed.
//!
//! Every failure report ends with the command that replays the trial
//! (`cargo run -q -p opspec-runner --bin runner -- replay TRIAL --backend CMD ...`, with the
//! run's folders and settings that differ from the defaults, [`crate::reports::replay_command`]), to be
//! run in the repository. The request dump (`--dump-requests`) is `crate::backend::dump`.

use std::process::ExitCode;
use std::sync::Arc;

use libtest_mimic::Arguments;
use opspec_spec::Case;
use serde_json::json;

use crate::backend::interface::{Backend, BackendError, Exclusion, Outcome};
use crate::backend::observed::{Observed, Observer};
use crate::backend::protocol::{run_request, WireTensor};
use crate::run::config::Config;
use crate::run::harness::{Harness, ReplayError, Replayed};

/// Prints every request and reply of a backend it observes, for `runner replay`.
struct Transcript;

impl Observer for Transcript {
    fn declined(&self, _case: &Case, exclusion: &Exclusion) {
        println!("not sent: {exclusion}");
    }

    fn request(&self, case: &Case) -> Result<(), BackendError> {
        println!(
            "request: {}",
            run_request(&case.trial_name(), &case.invocation)
        );
        Ok(())
    }

    fn reply(&self, case: &Case, reply: &Result<Outcome, BackendError>) {
        match reply {
            Ok(outcome) => println!("reply: {}", reply_json(&case.trial_name(), outcome)),
            Err(broken) => println!("reply: none usable: {broken}"),
        }
    }
}

/// The protocol reply that carries `outcome` (docs/protocol.md).
pub(crate) fn reply_json(id: &str, outcome: &Outcome) -> String {
    let value = match outcome {
        Outcome::Outputs(outputs) => json!({
            "type": "ok",
            "id": id,
            "outputs": outputs.iter().map(WireTensor::encode).collect::<Vec<_>>(),
        }),
        Outcome::Rejected { kind, message } => json!({
            "type": "error",
            "id": id,
            "kind": kind.map(|k| k.name()),
            "message": message,
        }),
        Outcome::Unsupported(reason) => json!({"type": "unsupported", "id": id, "reason": reason}),
        Outcome::Built(outputs) => json!({
            "type": "built",
            "id": id,
            "outputs": outputs
                .iter()
                .map(|o| json!({"dtype": o.dtype.name(), "shape": o.shape, "format": o.format}))
                .collect::<Vec<_>>(),
        }),
    };
    value.to_string()
}

/// `runner replay TRIAL`: runs that one trial as a run with this configuration would
/// (`Harness::replay`), printing the request, the reply (as the runner decoded it) and the
/// verdict. Exit code: 0 passed or skipped, 1 failed, 2 no such trial or a configuration error.
pub fn main(trial: &str, config: Config) -> ExitCode {
    match replay(trial, config) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::from(2)
        }
    }
}

fn replay(trial: &str, config: Config) -> Result<ExitCode, ReplayError> {
    // One trial needs one process, whatever OPSPEC_JOBS says; a partition does not apply.
    let config = Config {
        jobs: 1,
        partition: None,
        ..config
    };
    let args = Arguments {
        filter: Some(trial.to_owned()),
        exact: true,
        ..Arguments::default()
    };
    let harness = Harness::open(&args, config)?;
    let record = match harness.replay(trial, |inner| -> Arc<dyn Backend> {
        Arc::new(Observed::new(inner, Transcript))
    })? {
        Replayed::SpecProblem(message) => {
            println!("verdict: failed (spec error)\n{message}");
            return Ok(ExitCode::FAILURE);
        }
        Replayed::Record(record) => record,
    };
    let verdict = record.status().row().verdict;
    println!("verdict: {verdict}");
    if !record.message.is_empty() {
        println!("{}", record.message);
    }
    Ok(match record.status().fails() {
        true => ExitCode::FAILURE,
        false => ExitCode::SUCCESS,
    })
}
