//! The conformance harness: every spec case becomes one libtest-mimic trial, run against the
//! built-in reference or an external backend process.
//!
//! Configuration comes from flags and `OPSPEC_*` variables of one meaning ([`config`]): the
//! variables reach `cargo test` and cargo nextest alike, which forward no custom flags.

pub mod attributes;
pub mod backend;
pub mod config;
pub mod coverage;
pub mod diff;
pub mod expectations;
pub mod fuzz;
pub mod generated;
pub mod html;
pub mod in_process;
pub mod process;
pub mod protocol;
pub mod replay;
pub mod report;
pub mod serve;
pub mod verdict;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use libtest_mimic::{Arguments, Completion, Failed, Trial};
use opspec::spec::{load_dirs, Case, Loaded};

use backend::{primary_dtype, trial_dtypes, Backend, BackendError, Reference};
pub use config::Config;
use expectations::{Expectations, TrialClauses};
pub use in_process::{run_in_process, InProcessBackend, Refusal, RunError, RunSummary};
use process::ProcessBackend;
use report::Record;
use verdict::{decide, describe_case, judge_excluding, Status, Verdict};

/// Loads the cases the arguments can select. A run of one exact trial name (as cargo nextest
/// does for every test) reads only the file that name points at.
pub fn load(args: &Arguments, dirs: &[PathBuf]) -> Loaded {
    load_dirs(dirs, single_file(args))
}

fn single_file(args: &Arguments) -> Option<(&str, &str)> {
    match (&args.filter, args.exact) {
        (Some(name), true) => {
            let mut parts = name.split("::");
            parts.next().zip(parts.next())
        }
        _ => None,
    }
}

/// Shared state of a run: the backend, its known failures, and the records of every trial.
struct Run {
    backend: Arc<dyn Backend>,
    expectations: Expectations,
    records: Mutex<Vec<Record>>,
    /// The flags that `runner replay TRIAL` needs to replay a trial of this run.
    replay: String,
    /// The reference's engine, for goldens as for the built-in backend.
    engine: opspec_kernels::EngineChoice,
    /// `--fail-fast`: after the first failure, no trial is sent.
    fail_fast: bool,
    /// The name of the first trial that failed, once one has.
    first_failure: OnceLock<String>,
}

impl Run {
    fn new(backend: Arc<dyn Backend>, expectations: Expectations, config: &Config) -> Run {
        Run {
            backend,
            expectations,
            records: Mutex::default(),
            replay: config.replay_flags(),
            engine: config.engine,
            fail_fast: config.fail_fast,
            first_failure: OnceLock::new(),
        }
    }

    /// With `--fail-fast`, once a trial has failed: a trial that starts now is not sent. It is
    /// recorded as not run and shown by libtest as ignored, not as one more failure (the first
    /// failure already fails the run).
    fn stopped(&self, case: &Case, started: Instant) -> Option<Result<Completion, Failed>> {
        let first = self.first_failure.get().filter(|_| self.fail_fast)?;
        let message = format!("not run: --fail-fast stopped the run at the failure of {first}");
        let name = case.trial_name();
        self.record(self.case_record(name, case, Status::NotRun, message.clone(), started));
        Some(Ok(Completion::ignored_with(message)))
    }

    fn trial(self: &Arc<Self>, case: Case) -> Trial {
        let run = Arc::clone(self);
        Trial::ignorable_test(case.trial_name(), move || run.execute(&case))
    }

    fn execute(&self, case: &Case) -> Result<Completion, Failed> {
        let name = case.trial_name();
        let started = Instant::now();
        if let Some(result) = self.stopped(case, started) {
            return result;
        }
        let verdict = match self.backend.supports(case) {
            Err(reason) => Verdict::excluded(reason),
            Ok(()) => self.send(case),
        };
        self.conclude(name, case, verdict, started)
    }

    /// Runs a case the backend accepts and judges what it did.
    fn send(&self, case: &Case) -> Verdict {
        match self.backend.run(case) {
            Ok(outcome) => judge_excluding(
                case,
                outcome,
                self.backend.is_reference(),
                &self.backend.excluded_dtypes(case),
            ),
            Err(BackendError::NotRun(reason)) => Verdict::not_run(reason),
            Err(broken) => Verdict::fail(format!("{}\n{broken}", describe_case(case))),
        }
    }

    /// Applies the known failures to a verdict ([`verdict::decide`]), records it, and gives
    /// the trial's result: a pass, a failure, or ignored with the first line of its reason.
    fn conclude(
        &self,
        name: String,
        case: &Case,
        verdict: Verdict,
        started: Instant,
    ) -> Result<Completion, Failed> {
        let known = (self.expectations).lookup(&name, &self.expectations.cited(case));
        let verdict = decide(verdict, known, &replay::command(&name, &self.replay));
        let result = match verdict.status {
            Status::Passed => Ok(Completion::Completed),
            Status::Failed | Status::NotRun => Err(Failed::from(verdict.message.clone())),
            _ => Ok(Completion::ignored_with(
                verdict.message.lines().next().unwrap_or_default(),
            )),
        };
        self.record(Record {
            excluded_by: verdict.excluded_by,
            known: verdict.known,
            ..self.case_record(name, case, verdict.status, verdict.message, started)
        });
        result
    }

    /// The record of a trial of `case` that started at `started`.
    fn case_record(
        &self,
        name: String,
        case: &Case,
        status: Status,
        message: String,
        started: Instant,
    ) -> Record {
        Record {
            replay: Some(replay::command(&name, &self.replay)),
            name,
            op: case.op.name().to_owned(),
            dtype: primary_dtype(case).map(|d| d.name().to_owned()),
            dtypes: trial_dtypes(case)
                .iter()
                .map(|d| d.name().to_owned())
                .collect(),
            status,
            excluded_by: None,
            message,
            seconds: started.elapsed().as_secs_f64(),
            clauses: case.clauses.clone(),
            known: None,
        }
    }

    /// A trial that reports a problem found before running anything (a spec error, a stale
    /// expectation), recorded like any other failure.
    fn failing_trial(self: &Arc<Self>, name: String, op: String, message: String) -> Trial {
        let run = Arc::clone(self);
        Trial::test(name.clone(), move || {
            run.record(Record {
                name,
                op,
                dtype: None,
                dtypes: Vec::new(),
                status: Status::Failed,
                excluded_by: None,
                message: message.clone(),
                seconds: 0.0,
                clauses: Vec::new(),
                known: None,
                replay: None,
            });
            Err(Failed::from(message))
        })
    }

    fn record(&self, record: Record) {
        if matches!(record.status, Status::Failed | Status::NotRun) {
            let _ = self.first_failure.set(record.name.clone());
        }
        self.records
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(record);
    }
}

/// Every trial's name with the clauses its case cites ([`Expectations::cited`]); a generated
/// case cites those of the error the reference gives it
/// ([`generated::with_expected_error`]). Empty when there are no known failures.
fn trial_clauses(
    expectations: &Expectations,
    engine: opspec_kernels::EngineChoice,
    loaded: &Loaded,
    generated: Option<&generated::GeneratedTrials>,
) -> Vec<TrialClauses> {
    if expectations.entries.is_empty() {
        return Vec::new();
    }
    let cited = |case: &Case| TrialClauses {
        name: case.trial_name(),
        clauses: expectations.cited(case),
    };
    let generated = generated.map(|g| g.trial_cases()).unwrap_or_default();
    (loaded.cases.iter().map(cited))
        .chain(
            (generated.into_iter())
                .map(|case| cited(&generated::with_expected_error(engine, case))),
        )
        .collect()
}

/// Builds the trials: one per case, one failing trial per spec problem, and one per
/// expectations entry that matches no case; sorted by name.
fn trials(
    run: &Arc<Run>,
    loaded: Loaded,
    check_unmatched: bool,
    generated: Option<&generated::GeneratedTrials>,
) -> Vec<Trial> {
    let mut trials: Vec<Trial> = (loaded.errors.iter())
        .map(|error| run.failing_trial(error.trial_name(), error.op.clone(), error.to_string()))
        .collect();
    let generated_trials = generated.map(|g| g.trials(run)).unwrap_or_default();
    if check_unmatched {
        let cited = trial_clauses(&run.expectations, run.engine, &loaded, generated);
        for entry in run.expectations.unmatched(&cited) {
            let message = format!(
                "stale expectation: line {} (`{}`) matches no case; remove it",
                entry.line,
                entry.selector()
            );
            let name = format!("expectations::line_{}", entry.line);
            trials.push(run.failing_trial(name, "expectations".into(), message));
        }
    }
    trials.extend(loaded.cases.into_iter().map(|case| run.trial(case)));
    trials.extend(generated_trials);
    trials.sort_by(|a, b| a.name().cmp(b.name()));
    trials
}

fn backend(config: &Config) -> Result<Arc<dyn Backend>, String> {
    let backend: Arc<dyn Backend> = match &config.backend {
        None => Arc::new(Reference {
            engine: config.engine,
        }),
        Some(command) => {
            if let Some(parent) = config.backend_log.parent() {
                let _ = std::fs::create_dir_all(parent);
            }
            Arc::new(
                ProcessBackend::start(command, config.timeout, config.backend_log.clone())
                    .map_err(|e| e.to_string())?,
            )
        }
    };
    Ok(match &config.dump_requests {
        Some(path) => Arc::new(replay::Dumping::create(backend, path).map_err(|e| e.to_string())?),
        None => backend,
    })
}

/// Passes the element budget to the reference, and to backends through their environment.
fn set_budget(config: &Config) {
    opspec::tensor::set_max_elements(config.max_elements);
    if config.max_elements != opspec::tensor::DEFAULT_MAX_ELEMENTS {
        // Called before any thread starts.
        std::env::set_var("OPSPEC_MAX_ELEMENTS", config.max_elements.to_string());
    }
}

/// Runs the suite: loads the specs, runs every selected case against the configured backend,
/// prints libtest's report and the op × dtype table, and writes the requested report files.
pub fn main_with(args: Arguments, config: Config) -> ExitCode {
    match run(args, config, None) {
        Ok(summary) => summary.exit_code(),
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::from(2)
        }
    }
}

/// Runs the suite against `backend`, or the backend `config` names (the reference by default).
fn run(
    args: Arguments,
    config: Config,
    backend: Option<Arc<dyn Backend>>,
) -> Result<RunSummary, RunError> {
    let expectations = match &config.expectations {
        Some(path) => {
            Expectations::load(path).map_err(|e| RunError::Expectations(e.to_string()))?
        }
        None => Expectations::default(),
    };
    set_budget(&config);
    let loaded = load(&args, &config.specs);
    let generated =
        generated::GeneratedTrials::load(&args, &config).map_err(RunError::Generated)?;
    if args.list {
        // Listing starts no backend.
        let run = Arc::new(Run::new(
            Arc::new(Reference::default()),
            expectations,
            &config,
        ));
        let trials = trials(&run, loaded, false, generated.as_ref());
        let listed = libtest_mimic::run(&args, trials);
        return Ok(RunSummary::new(&[], Vec::new(), listed.has_failed()));
    }
    expectations
        .check(&trial_clauses(
            &expectations,
            config.engine,
            &loaded,
            generated.as_ref(),
        ))
        .map_err(|errors| {
            let path = config.expectations.as_deref().unwrap_or(Path::new(""));
            let lines: Vec<String> = (errors.iter())
                .map(|e| format!("{}: {e}", path.display()))
                .collect();
            RunError::Expectations(lines.join("\n"))
        })?;
    let backend = match backend {
        Some(backend) => backend,
        None => self::backend(&config).map_err(RunError::Backend)?,
    };
    let supported = loaded
        .cases
        .iter()
        .filter(|c| backend.supports(c).is_ok())
        .count();
    let check_unmatched = single_file(&args).is_none();
    let run = Arc::new(Run::new(Arc::clone(&backend), expectations, &config));
    let case_count = loaded.cases.len();
    let trials = trials(&run, loaded, check_unmatched, generated.as_ref());
    let selected = trials.iter().filter(|t| !args.is_filtered_out(t)).count();
    if selected == 0 {
        return Err(RunError::NothingToRun(match &args.filter {
            Some(filter) => format!("the filter {filter:?} selects no case"),
            None => "no case to run (are the spec folders empty?)".into(),
        }));
    }
    if case_count > 0 && supported == 0 {
        return Err(RunError::NothingToRun(format!(
            "backend {} supports none of the {case_count} cases (check the ops and dtypes in its hello)",
            backend.name()
        )));
    }
    let conclusion = libtest_mimic::run(&args, trials);
    if let Some(generated) = &generated {
        generated
            .finish()
            .map_err(|e| RunError::Generated(e.to_string()))?;
    }
    let mut records = std::mem::take(&mut *run.records.lock().unwrap_or_else(|p| p.into_inner()));
    records.sort_by(|a, b| a.name.cmp(&b.name));
    if records.len() > 1 {
        println!(
            "backend: {}\n{}{}",
            backend.name(),
            report::table(&records),
            report::summary(&records)
        );
        if let Some(line) = report::exclusion_line(&records) {
            println!("{line}");
        }
    }
    println!("{}", config.folders());
    // One exact trial (as cargo nextest runs each) is judged by that trial alone.
    let mut problems = if config.allow_skips || single_file(&args).is_some() {
        Vec::new()
    } else {
        report::run_problems(&records)
    };
    if config.require_error_kinds {
        problems.extend(report::unclassified_problem(&records));
    }
    let cannot_write = |path: &PathBuf, e: std::io::Error| {
        RunError::Report(format!("cannot write {}: {e}", path.display()))
    };
    if let Some(path) = &config.report_json {
        std::fs::write(path, report::json(&backend.name(), &records, &problems))
            .map_err(|e| cannot_write(path, e))?;
    }
    if let Some(path) = &config.junit {
        std::fs::write(path, report::junit(&backend.name(), &records, &problems))
            .map_err(|e| cannot_write(path, e))?;
    }
    for problem in &problems {
        eprintln!("error: the run is no pass: {problem}");
    }
    Ok(RunSummary::new(&records, problems, conclusion.has_failed()))
}
