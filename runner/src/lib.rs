//! The conformance harness: every spec case becomes one libtest-mimic trial, run against the
//! built-in reference or an external backend process.
//!
//! Configuration comes from flags and `OPSPEC_*` variables of one meaning ([`config`]): the
//! variables reach `cargo test` and cargo nextest alike, which forward no custom flags.

pub mod attributes;
pub mod backend;
pub mod checkout;
pub mod child;
pub mod config;
pub mod coverage;
pub mod diff;
pub mod expectations;
pub mod fuzz;
pub mod generated;
pub mod html;
pub mod in_process;
pub mod merge;
pub mod output;
pub mod partition;
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
use opspec::tensor::Limits;
use opspec_spec::clauses::Catalogue;
use opspec_spec::{load_dirs, Case, Loaded};

use backend::{primary_dtype, trial_dtypes, Backend, BackendError, Reference};
pub use config::Config;
use expectations::{Expectations, TrialClauses};
pub use in_process::{
    run_in_process, Declaration, InProcessBackend, Refusal, RunError, RunSummary,
};
use process::ProcessBackend;
use report::Record;
use verdict::{decide, describe_case, judge_excluding, Status, Verdict};

/// Loads the cases the arguments can select. A run of one exact trial name (as cargo nextest
/// does for every test) reads only the file that name points at.
pub fn load(args: &Arguments, dirs: &[PathBuf], limits: Limits) -> Loaded {
    load_dirs(dirs, single_file(args), limits)
}

/// A case that names a clause id no catalogue has (a typo such as `slice.wrap.modulus`), or
/// one of another op, would pass unnoticed: its trials become failing trials that name the
/// file, the case and the id (`runner coverage` lints the same, and more).
fn check_clause_ids(loaded: &mut Loaded, dirs: &[PathBuf]) -> Vec<(String, String, String)> {
    let (catalogue, _) = Catalogue::load_over(&coverage::builtin_specs(), dirs);
    let mut failing = Vec::new();
    loaded.cases.retain(|case| {
        let wrong: Vec<String> = (case.clauses.iter())
            .filter_map(|id| match catalogue.get(id) {
                None => Some(format!(
                    "unknown clause id `{id}` (no clause catalogue has it)"
                )),
                Some(_) if !catalogue.applies_to(id, case.op) => Some(format!(
                    "clause id `{id}` is a clause of another op, not of {}",
                    case.op
                )),
                Some(_) => None,
            })
            .collect();
        if wrong.is_empty() {
            return true;
        }
        let message = format!(
            "{}: case `{}`: {} (specs/<op>.clauses.yaml lists the ids)",
            case.path.display(),
            case.name,
            wrong.join("; ")
        );
        failing.push((case.trial_name(), case.op.name().to_owned(), message));
        false
    });
    failing
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
    /// How the runner was started ([`Config::program`]).
    program: String,
    /// The reference (its engine and the run's limits), for goldens as for the built-in
    /// backend.
    reference: Reference,
    /// `--fail-fast`: after the first failure, no trial is sent.
    fail_fast: bool,
    /// The part of the trials this run makes ([`Config::partition`]).
    partition: Option<partition::Partition>,
    /// The names of the selected trials excluded quietly, in every part.
    quietly_excluded: Mutex<Vec<String>>,
    /// The spec folders, whose catalogues the cases' clause ids are checked against.
    specs: Vec<PathBuf>,
    /// Trials the hello excludes are recorded and counted, not made libtest trials
    /// (`--list-excluded` makes them trials, each printed as ignored).
    quiet_exclusions: bool,
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
            program: config.program.clone(),
            quiet_exclusions: !config.list_excluded,
            specs: config.specs.clone(),
            partition: config.partition,
            quietly_excluded: Mutex::default(),
            reference: Reference {
                engine: config.engine,
                limits: config.limits(),
            },
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

    /// Records a trial that the hello excludes (with `ops_only`, only one whose op it leaves
    /// out) without making it a libtest trial, so that the console counts exclusions per
    /// declaration instead of printing each; `true` when the trial is thus done with. A trial
    /// the arguments filter out is not recorded.
    fn exclude_quietly(&self, args: &Arguments, case: &Case, ops_only: bool) -> bool {
        if !self.quiet_exclusions {
            return false;
        }
        let Err(exclusion) = self.backend.supports(case) else {
            return false;
        };
        if ops_only && !exclusion.by.starts_with("op ") {
            return false;
        }
        let name = case.trial_name();
        if args.is_filtered_out(&Trial::test(name.clone(), || Ok(()))) {
            return true;
        }
        (self.quietly_excluded.lock())
            .unwrap_or_else(|p| p.into_inner())
            .push(name.clone());
        if self.partition.map_or(true, |part| part.contains(&name)) {
            let verdict = Verdict::excluded(exclusion);
            self.record(Record {
                excluded_by: verdict.excluded_by,
                ..self.case_record(
                    name,
                    case,
                    Status::Excluded,
                    verdict.message,
                    Instant::now(),
                )
            });
        }
        true
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
        // A case in flight when --fail-fast stopped the run is reported as one not sent.
        if verdict.status == Status::NotRun {
            if let Some(result) = self.stopped(case, started) {
                return result;
            }
        }
        let known = (self.expectations).lookup(&name, &self.expectations.cited(case));
        let verdict = decide(
            verdict,
            known,
            &replay::command(&self.program, &name, &self.replay),
        );
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
            replay: Some(replay::command(&self.program, &name, &self.replay)),
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
        if matches!(record.status, Status::Failed | Status::NotRun)
            && self.first_failure.set(record.name.clone()).is_ok()
            && self.fail_fast
        {
            self.backend.halt();
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
    reference: Reference,
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
                .map(|case| cited(&generated::with_expected_error(reference, case))),
        )
        .collect()
}

/// Builds the trials: one per case, one failing trial per spec problem, and, given the
/// trials with the clauses they cite ([`trial_clauses`]), one per expectations entry that
/// matches none of them; sorted by name.
fn trials(
    run: &Arc<Run>,
    args: &Arguments,
    loaded: Loaded,
    cited: Option<&[TrialClauses]>,
    generated: Option<&generated::GeneratedTrials>,
) -> Vec<Trial> {
    let mut loaded = loaded;
    let mut trials: Vec<Trial> = (loaded.errors.iter())
        .map(|error| run.failing_trial(error.trial_name(), error.op.clone(), error.to_string()))
        .collect();
    trials.extend(
        (check_clause_ids(&mut loaded, &run.specs).into_iter())
            .map(|(name, op, message)| run.failing_trial(name, op, message)),
    );
    let generated_trials = generated.map(|g| g.trials(run, args)).unwrap_or_default();
    if let Some(cited) = cited {
        for entry in run.expectations.unmatched(cited) {
            let message = format!(
                "stale expectation: line {} (`{}`) matches no case; remove it",
                entry.line,
                entry.selector()
            );
            let name = format!("expectations::line_{}", entry.line);
            trials.push(run.failing_trial(name, "expectations".into(), message));
        }
    }
    trials.extend(
        (loaded.cases.into_iter())
            .filter(|case| !run.exclude_quietly(args, case, false))
            .map(|case| run.trial(case)),
    );
    trials.extend(generated_trials);
    trials.sort_by(|a, b| a.name().cmp(b.name()));
    trials
}

fn backend(config: &Config) -> Result<Arc<dyn Backend>, String> {
    let backend: Arc<dyn Backend> = match &config.backend {
        None => Arc::new(Reference {
            engine: config.engine,
            limits: config.limits(),
        }),
        Some(command) => {
            if let Some(parent) = config.backend_log.parent() {
                let _ = std::fs::create_dir_all(parent);
            }
            Arc::new(
                ProcessBackend::start_pool(
                    command,
                    config.timeout,
                    config.backend_log.clone(),
                    config.jobs,
                    config.limits(),
                )
                .map_err(|e| e.to_string())?,
            )
        }
    };
    Ok(match &config.dump_requests {
        Some(path) => Arc::new(replay::Dumping::create(backend, path).map_err(|e| e.to_string())?),
        None => backend,
    })
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
    mut args: Arguments,
    config: Config,
    backend: Option<Arc<dyn Backend>>,
) -> Result<RunSummary, RunError> {
    config::check_arguments(args.test_threads, args.logfile.as_deref()).map_err(RunError::Usage)?;
    config
        .check_outputs(args.logfile.as_deref().map(Path::new))
        .map_err(RunError::Usage)?;
    let expectations = match &config.expectations {
        Some(path) => {
            Expectations::load(path).map_err(|e| RunError::Expectations(e.to_string()))?
        }
        None => Expectations::default(),
    };
    let loaded = load(&args, &config.specs, config.limits());
    let generated =
        generated::GeneratedTrials::load(&args, &config).map_err(RunError::Generated)?;
    if args.list {
        // Listing starts no backend.
        let run = Arc::new(Run::new(
            Arc::new(Reference::default()),
            expectations,
            &config,
        ));
        let mut trials = trials(&run, &args, loaded, None, generated.as_ref());
        if let Some(part) = config.partition {
            trials.retain(|t| part.contains(t.name()));
        }
        let listed = libtest_mimic::run(&args, trials);
        return Ok(RunSummary::new(&[], Vec::new(), listed.has_failed()));
    }
    // Each generated case's expected error takes a reference evaluation: done once, for the
    // check here and for the entries that match nothing below.
    let reference = Reference {
        engine: config.engine,
        limits: config.limits(),
    };
    let cited = trial_clauses(&expectations, reference, &loaded, generated.as_ref());
    expectations.check(&cited).map_err(|errors| {
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
    let mut run = Run::new(Arc::clone(&backend), expectations, &config);
    // One exact trial (as cargo nextest runs each) is always a libtest trial of its own.
    run.quiet_exclusions &= check_unmatched;
    let run = Arc::new(run);
    let case_count = loaded.cases.len();
    let unmatched_against = check_unmatched.then_some(cited.as_slice());
    let trials = trials(&run, &args, loaded, unmatched_against, generated.as_ref());
    let quietly_excluded = std::mem::take(
        &mut *run
            .quietly_excluded
            .lock()
            .unwrap_or_else(|p| p.into_inner()),
    );
    let selected =
        quietly_excluded.len() + trials.iter().filter(|t| !args.is_filtered_out(t)).count();
    if selected == 0 {
        return Err(RunError::NothingToRun(match &args.filter {
            Some(filter) => format!("the filter {filter:?} selects no case"),
            None if !args.skip.is_empty() => {
                format!("the --skip filters {:?} leave no trial to run", args.skip)
            }
            None => "no case to run (are the spec folders empty?)".into(),
        }));
    }
    if case_count > 0 && supported == 0 {
        return Err(RunError::NothingToRun(format!(
            "backend {} supports none of the {case_count} cases (check the ops and dtypes in its hello)",
            backend.name()
        )));
    }
    let judged = !(config.allow_skips || single_file(&args).is_some());
    let mut run_info = merge::RunInfo::new(
        (trials.iter())
            .filter(|t| !args.is_filtered_out(t))
            .map(Trial::name)
            .chain(quietly_excluded.iter().map(String::as_str)),
        config.partition,
        judged,
    );
    run_info.require_error_kinds = config.require_error_kinds;
    let trials = match config.partition {
        Some(part) => trials
            .into_iter()
            .filter(|t| part.contains(t.name()))
            .collect(),
        None => trials,
    };
    if let Some(file) = &config.shard_status_file {
        // Bazel's sign that the test shards.
        let _ = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(file);
    }
    if config.jobs > 1 && args.test_threads.is_none() {
        // Every worker busy at once, and no fewer threads than libtest would take; twice as
        // many cases waiting as workers, so that a freed worker mostly finds a case of a shape
        // it has run before (`process::preferred_worker`).
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        args.test_threads = Some((2 * config.jobs).max(cores));
    }
    let conclusion = libtest_mimic::run(&args, trials);
    let late = backend.finish();
    if let Some(generated) = &generated {
        generated
            .finish()
            .map_err(|e| RunError::Generated(e.to_string()))?;
    }
    let mut records = std::mem::take(&mut *run.records.lock().unwrap_or_else(|p| p.into_inner()));
    records.sort_by(|a, b| a.name.cmp(&b.name));
    for fault in &late {
        eprintln!(
            "error: {} failed after its verdict: {}",
            fault.trial, fault.message
        );
        if let Some(record) = records.iter_mut().find(|r| r.name == fault.trial) {
            record.status = Status::Failed;
            record.message = format!("{}\n{}", fault.message, record.message)
                .trim_end()
                .to_owned();
        }
    }
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
        if let Some(line) = report::failures_by_clause(&records) {
            println!("{line}");
        }
    }
    println!("{}", config.folders());
    // One exact trial (as cargo nextest runs each) is judged by that trial alone.
    let mut problems = if judged {
        report::run_problems(&records)
    } else {
        Vec::new()
    };
    if config.require_error_kinds {
        problems.extend(report::unclassified_problem(&records));
    }
    let cannot_write = |path: &PathBuf, e: std::io::Error| {
        RunError::Report(format!("cannot write {}: {e}", path.display()))
    };
    if let Some(path) = &config.report_json {
        let json = report::json(&backend.name(), &records, &problems);
        output::write_replacing(path, merge::with_run_info(json, &run_info))
            .map_err(|e| cannot_write(path, e))?;
    }
    if let Some(path) = &config.junit {
        output::write_replacing(path, report::junit(&backend.name(), &records, &problems))
            .map_err(|e| cannot_write(path, e))?;
    }
    for problem in &problems {
        eprintln!("error: the run is no pass: {problem}");
    }
    Ok(RunSummary::new(
        &records,
        problems,
        conclusion.has_failed() || !late.is_empty(),
    ))
}
