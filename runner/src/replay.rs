//! Replaying a trial: the request dump (`--dump-requests FILE`), and `runner replay TRIAL`.
//!
//! The dump holds every `run` request of a run, one JSON line each, exactly as the backend
//! gets it (docs/protocol.md), in the order the trials ran; a metamorphic trial sends two,
//! each with its own id.
//! With the built-in reference it holds the requests a backend would get.
//!
//! Every failure report ends with the command that replays the trial
//! (`cargo run -q -p opspec-runner --bin runner -- replay TRIAL --backend CMD ...`, with the
//! run's folders and settings that differ from the defaults), to be run in the repository.

use std::fs::File;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use libtest_mimic::Arguments;
use opspec::DType;
use opspec_spec::Case;
use serde_json::json;

use crate::backend::{Backend, BackendError, Exclusion, LateFault, Outcome};
use crate::expectations::Expectations;
use crate::generated::GeneratedTrials;
use crate::protocol::{run_request, WireTensor};
use crate::report::Status;
use crate::{Config, Run};

/// The request dump file could not be created.
#[derive(Debug, thiserror::Error)]
#[error("cannot write the request dump {}: {source}", path.display())]
pub struct DumpError {
    /// The dump file asked for.
    pub path: std::path::PathBuf,
    /// Why it could not be created.
    pub source: std::io::Error,
}

/// A backend whose requests are also written to a file.
pub struct Dumping {
    inner: Arc<dyn Backend>,
    file: Mutex<File>,
    path: std::path::PathBuf,
}

impl Dumping {
    /// Creates (or empties) the dump file.
    pub fn create(inner: Arc<dyn Backend>, path: &Path) -> Result<Dumping, DumpError> {
        if let Some(parent) = path.parent() {
            let _ = std::fs::create_dir_all(parent);
        }
        let file = File::create(path).map_err(|source| DumpError {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(Dumping {
            inner,
            file: Mutex::new(file),
            path: path.to_path_buf(),
        })
    }
}

impl Backend for Dumping {
    fn name(&self) -> String {
        self.inner.name()
    }

    fn is_reference(&self) -> bool {
        self.inner.is_reference()
    }

    fn build_only(&self) -> bool {
        self.inner.build_only()
    }

    fn excluded_dtypes(&self, case: &Case) -> Vec<DType> {
        self.inner.excluded_dtypes(case)
    }

    fn supports(&self, case: &Case) -> Result<(), Exclusion> {
        self.inner.supports(case)
    }

    fn run(&self, case: &Case) -> Result<Outcome, BackendError> {
        let mut line = run_request(&case.trial_name(), &case.invocation);
        line.push('\n');
        // One write per line, under the lock, so that parallel trials never interleave.
        self.file
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .write_all(line.as_bytes())
            .map_err(|e| {
                BackendError::Broken(format!(
                    "cannot write the request dump {}: {e}",
                    self.path.display()
                ))
            })?;
        self.inner.run(case)
    }

    fn halt(&self) {
        self.inner.halt();
    }

    fn finish(&self) -> Vec<LateFault> {
        self.inner.finish()
    }
}

/// A backend whose every request and reply is printed, for `runner replay`.
struct Transcript {
    inner: Arc<dyn Backend>,
}

impl Backend for Transcript {
    fn name(&self) -> String {
        self.inner.name()
    }

    fn is_reference(&self) -> bool {
        self.inner.is_reference()
    }

    fn build_only(&self) -> bool {
        self.inner.build_only()
    }

    fn excluded_dtypes(&self, case: &Case) -> Vec<DType> {
        self.inner.excluded_dtypes(case)
    }

    fn supports(&self, case: &Case) -> Result<(), Exclusion> {
        let supported = self.inner.supports(case);
        if let Err(reason) = &supported {
            println!("not sent: {reason}");
        }
        supported
    }

    fn run(&self, case: &Case) -> Result<Outcome, BackendError> {
        let id = case.trial_name();
        println!("request: {}", run_request(&id, &case.invocation));
        let outcome = self.inner.run(case);
        match &outcome {
            Ok(outcome) => println!("reply: {}", reply_json(&id, outcome)),
            Err(broken) => println!("reply: none usable: {broken}"),
        }
        outcome
    }
}

/// The protocol reply that carries `outcome` (docs/protocol.md).
pub fn reply_json(id: &str, outcome: &Outcome) -> String {
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

/// `runner replay TRIAL`: runs that one trial as a run with this configuration would, printing
/// the request, the reply (as the runner decoded it) and the verdict. Exit code: 0 passed or
/// skipped, 1 failed, 2 no such trial or a configuration error.
pub fn main(trial: &str, config: Config) -> ExitCode {
    match replay(trial, config) {
        Ok(code) => code,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::from(2)
        }
    }
}

fn replay(trial: &str, config: Config) -> Result<ExitCode, String> {
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
    let expectations = match &config.expectations {
        Some(path) => Expectations::load(path)?,
        None => Expectations::default(),
    };
    let loaded = crate::load(&args, &config.specs, config.limits());
    let generated = GeneratedTrials::load(&args, &config)?;
    if let Some(error) = loaded.errors.iter().find(|e| e.trial_name() == trial) {
        println!("verdict: failed (spec error)\n{error}");
        return Ok(ExitCode::FAILURE);
    }
    let case = loaded.cases.into_iter().find(|c| c.trial_name() == trial);
    if case.is_none() && !generated.as_ref().is_some_and(|g| g.has_trial(trial)) {
        return Err(format!(
            "no trial named `{trial}` in {} (`runner --list` lists them)",
            config.folders().replace('\n', "; ")
        ));
    }
    let backend: Arc<dyn Backend> = Arc::new(Transcript {
        inner: crate::backend(&config)?,
    });
    println!("backend: {}", backend.name());
    let run = Arc::new(Run::new(backend, expectations, &config));
    match (case, &generated) {
        (Some(case), _) => {
            let _ = run.execute(&case);
        }
        (None, Some(generated)) => generated.run_one(&run, trial),
        (None, None) => unreachable!("checked above"),
    }
    let records = std::mem::take(&mut *run.records.lock().unwrap_or_else(|p| p.into_inner()));
    let Some(record) = records.first() else {
        return Err(format!("trial `{trial}` gave no verdict"));
    };
    let verdict = match record.status {
        Status::Passed => "passed",
        Status::Failed => "failed",
        Status::Unsupported => "skipped (unsupported)",
        Status::Excluded => "skipped (excluded by the hello)",
        Status::KnownFailure => "known failure",
        Status::ImplementationDefined => "implementation-defined divergence",
        Status::NotRun => "not run",
        Status::ShapeChecked => "shape-checked (built, not run)",
        Status::RejectedUnclassified => "rejected without an error kind",
    };
    println!("verdict: {verdict}");
    if !record.message.is_empty() {
        println!("{}", record.message);
    }
    Ok(
        if matches!(record.status, Status::Failed | Status::NotRun) {
            ExitCode::FAILURE
        } else {
            ExitCode::SUCCESS
        },
    )
}

/// How the runner is invoked in replay lines when it is not known how it was started (the
/// `cargo test` harness, a library caller): from the checkout, through cargo.
pub const CARGO_RUNNER: &str = "cargo run -q -p opspec-runner --bin runner --";

/// How the command that replays a trial is spelled in failure reports: `program` (the runner
/// as this run was started, [`crate::Config::program`]), `replay`, the trial and the run's flags.
pub fn command(program: &str, trial: &str, flags: &str) -> String {
    format!("{program} replay {}{flags}", shell_quote(trial))
}

/// `text` as one shell word.
pub fn shell_quote(text: &str) -> String {
    let plain = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-./:=@%+,".contains(c));
    if plain {
        text.to_owned()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::Reference;

    #[test]
    fn an_unwritable_dump_is_a_typed_error_naming_its_file() {
        let dir = tempfile::tempdir().unwrap();
        // A directory cannot be opened as the dump file.
        let err = match Dumping::create(Arc::new(Reference::default()), dir.path()) {
            Err(err) => err,
            Ok(_) => panic!("a directory was accepted as the request dump"),
        };
        assert_eq!(err.path, dir.path());
        assert!(err.to_string().starts_with(&format!(
            "cannot write the request dump {}: ",
            dir.path().display()
        )));
    }
}
