//! The harness: one type, [`Harness`], opens a run (the configuration, the spec cases, the
//! sweeps and their goldens, the known failures, within the run's limits) and starts its backend,
//! for every way a run is made: `runner` and `cargo test` (`run`), `runner replay`
//! (`Harness::replay`), an in-process backend (`crate::run::in_process`) and `opspec-fuzz`
//! ([`start_backend`]). Each trial's verdict gets its status from
//! `crate::judge::verdict::decide` and is recorded here; the reports only read the records.
//!
//! Data flows one way: the loaded cases (`opspec_spec`, `opspec_generate`) go to the backend
//! ([`crate::backend::interface`]), its outcome to the verdict ([`crate::judge::verdict`]), the verdict to a
//! record (`crate::reports::report`).

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use libtest_mimic::{Arguments, Trial};
use opspec_spec::clauses::{Catalogue, ClauseIdError};
use opspec_spec::{load_dirs, Case, Loaded};

use crate::backend::dump::RequestDump;
use crate::backend::interface::{Backend, LateFault, Reference};
use crate::backend::interrupt;
use crate::backend::observed::Observed;
use crate::backend::offline::OfflineBackend;
use crate::backend::process::{PoolOptions, ProcessBackend, Timeouts};
use crate::judge::expectations::{Expectations, TrialClauses};
use crate::judge::record::{self, Given, Record, Report, RunInfo};
use crate::judge::run_verdict::{RunRules, RunSummary};
use crate::reports::report;
use crate::reports::{merge, output};
use crate::run::config::{self, Config};
use crate::run::generated::{self, GeneratedTrials};
use crate::run::trial_kind::SpecProblem;
use crate::run::trials::{lock, Trials};

/// `(op, file)` when the arguments run one exact trial (as cargo nextest runs each test): only
/// that file is read.
fn single_file(args: &Arguments) -> Option<(&str, &str)> {
    let mut parts = config::exact_trial(args)?.split("::");
    parts.next().zip(parts.next())
}

/// Starts the backend `config` names (the reference when it names none): its processes
/// (`--jobs`, at most one per case of the `cases` to send), its log, its timeouts, the limits
/// it is given, and the request dump (`--dump-requests`).
pub fn start_backend(config: &Config, cases: usize) -> Result<Arc<dyn Backend>, RunError> {
    let dump = match &config.dump_requests {
        Some(path) => Some(Arc::new(
            RequestDump::create(path).map_err(|e| RunError::Backend(e.to_string()))?,
        )),
        None => None,
    };
    if let Some(dir) = &config.answers {
        // An offline harness's answers, read from its folder; nothing is sent.
        let backend = OfflineBackend::open(dir, config.limits()).map_err(RunError::Backend)?;
        return Ok(Arc::new(backend));
    }
    Ok(match &config.backend {
        // The reference's requests are dumped as they would be sent to a backend.
        None => match dump {
            Some(dump) => Arc::new(Observed::new(Arc::new(config.reference()), dump)),
            None => Arc::new(config.reference()),
        },
        Some(command) => {
            if let Some(parent) = config.backend_log.parent() {
                let _ = std::fs::create_dir_all(parent);
            }
            // A process backend writes its requests to the dump itself, batches as batches.
            let options = PoolOptions {
                jobs: config.jobs.min(cases.max(1)),
                limits: config.limits(),
                dir: config.checkout.backend_dir(),
                batch_cap: config.batch,
                dump,
            };
            Arc::new(
                ProcessBackend::start_pool(
                    command,
                    Timeouts {
                        case: config.timeout,
                        hello: config.hello_timeout,
                    },
                    config.backend_log.clone(),
                    options,
                )
                .map_err(|e| RunError::Backend(e.to_string()))?,
            )
        }
    })
}

/// The name selection of `args` (`FILTER`, `--skip`, `--exact`) as the report records it, or
/// none when every trial is selected.
fn name_selection(args: &Arguments) -> Option<String> {
    let mut parts: Vec<String> = args.filter.iter().cloned().collect();
    parts.extend(args.skip.iter().map(|s| format!("--skip {s}")));
    if args.exact && !parts.is_empty() {
        parts.push("--exact".into());
    }
    (!parts.is_empty()).then(|| parts.join(" "))
}

/// The most test threads a run raises libtest's to, for many copies with large batches.
const MAX_TEST_THREADS: usize = 1024;

/// The runner's subcommands: given after an option, each is read as a name filter.
const SUBCOMMANDS: [&str; 8] = [
    "coverage",
    "replay",
    "report",
    "merge",
    "diff",
    "update-expectations",
    "export",
    "judge",
];

/// Why a run could not be made (not a failed trial: those are in the [`RunSummary`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RunError {
    /// The known-failures file (`--expectations`) cannot be read or is malformed.
    #[error("{0}")]
    Expectations(String),
    /// The sweeps or their goldens cannot be loaded or written.
    #[error("{0}")]
    Generated(String),
    /// The backend process cannot be started.
    #[error("{0}")]
    Backend(String),
    /// The filter selects no trial, or the backend supports none.
    #[error("{0}")]
    NothingToRun(String),
    /// A report file (`--report-json`, `--junit`) cannot be written.
    #[error("{0}")]
    Report(String),
    /// Options that cannot be honoured (`--test-threads 0`, an output naming an input),
    /// refused before anything runs.
    #[error("{0}")]
    Usage(String),
    /// A signal (named) stopped the run before its backend was started.
    #[error("the run was interrupted by {0} before it started")]
    Interrupted(String),
}

/// An opened run: its configuration, the cases the arguments can select (those citing an
/// unknown clause id set apart), the generated trials, and the known failures.
pub struct Harness {
    config: Config,
    expectations: Expectations,
    /// The spec cases, and the spec files' problems.
    loaded: Loaded,
    /// Cases taken out for the clause ids they cite.
    clause_id_errors: Vec<ClauseIdError>,
    generated: Option<GeneratedTrials>,
    /// One exact trial is run (as cargo nextest runs each): only its file was read.
    single_file: bool,
}

/// What a trial replayed alone found ([`Harness::replay`]).
pub(crate) enum Replayed {
    /// The trial is a problem of its spec file, found before anything runs.
    SpecProblem(String),
    /// The trial's record.
    Record(Box<Record>),
}

/// Why `runner replay` gives no verdict.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ReplayError {
    #[error("no trial named `{trial}` in {folders} (`runner --list` lists them)")]
    NoSuchTrial { trial: String, folders: String },
    #[error("trial `{0}` gave no verdict")]
    NoVerdict(String),
    #[error("{0}")]
    Run(#[from] RunError),
}

impl Harness {
    /// Opens a run of the trials `args` can select: reads the known failures, loads the spec
    /// cases (checking the clause ids they cite) and the sweeps, within the run's limits.
    pub(crate) fn open(args: &Arguments, config: Config) -> Result<Harness, RunError> {
        let expectations = match &config.expectations {
            Some(path) => Expectations::load(path, &config.checkout.specs())
                .map_err(|e| RunError::Expectations(e.to_string()))?,
            None => Expectations::default(),
        };
        let mut loaded = load_dirs(&config.specs, single_file(args), config.limits());
        let (catalogue, _) = Catalogue::load_over(&config.checkout.specs(), &config.specs);
        let clause_id_errors = catalogue.take_miscited(&mut loaded.cases);
        let generated = GeneratedTrials::load(args, &config).map_err(RunError::Generated)?;
        Ok(Harness {
            config,
            expectations,
            loaded,
            clause_id_errors,
            generated,
            single_file: single_file(args).is_some(),
        })
    }

    /// The problems of the spec and sweep files, found before anything runs: each becomes a
    /// failing trial.
    fn spec_problems(&self) -> impl Iterator<Item = SpecProblem> + '_ {
        let errors = (self.loaded.errors.iter())
            .chain(self.generated.iter().flat_map(|g| g.errors()))
            .map(|e| SpecProblem {
                trial: e.trial_name(),
                op: e.op.clone(),
                message: e.to_string(),
            });
        let clause_ids = self.clause_id_errors.iter().map(|e| SpecProblem {
            trial: e.trial.clone(),
            op: e.op.name().to_owned(),
            message: e.to_string(),
        });
        errors.chain(clause_ids)
    }

    /// Every trial's name with the clauses its case cites ([`Expectations::cited`]); a
    /// generated case cites those of the error the reference gives it
    /// ([`generated::with_expected_error`]). Empty when there are no known failures.
    fn trial_clauses(&self) -> Vec<TrialClauses> {
        if self.expectations.entries.is_empty() {
            return Vec::new();
        }
        let cited = |case: &Case| TrialClauses {
            name: case.trial_name(),
            clauses: self.expectations.cited(case),
        };
        let reference = self.config.reference();
        let generated = (self.generated.as_ref())
            .map(|g| g.trial_cases())
            .unwrap_or_default();
        (self.loaded.cases.iter().map(cited))
            .chain(generated.into_iter().map(|case| {
                cited(&generated::with_expected_error(
                    case,
                    generated::reference_error(reference, case),
                ))
            }))
            .collect()
    }

    /// What `runner export --cases` writes: the cases of the trials `args` and the partition
    /// select that send one request (spec and sweep cases), sorted by trial name as a run sends
    /// them; and the names of the selected round trips, which send two.
    pub(crate) fn single_requests(&self, args: &Arguments) -> (Vec<&Case>, Vec<String>) {
        let selected = |name: String, kind: &str| {
            let trial = Trial::test(name.clone(), || Ok(())).with_kind(kind);
            let part = self.config.partition.map_or(true, |p| p.contains(&name));
            part && !args.is_filtered_out(&trial)
        };
        let mut cases: Vec<&Case> = (self.loaded.cases.iter())
            .filter(|case| selected(case.trial_name(), "case"))
            .collect();
        let mut round_trips = Vec::new();
        for generated in self.generated.iter().flat_map(|g| g.cases()) {
            if selected(generated.case.trial_name(), "generated") {
                cases.push(&generated.case);
            }
            if let Some(first) = &generated.metamorphic {
                if selected(first.trial_name(), "round-trip") {
                    round_trips.push(first.trial_name());
                }
            }
        }
        cases.sort_by_cached_key(|case| case.trial_name());
        round_trips.sort();
        (cases, round_trips)
    }

    /// The trials that are problems of the spec and sweep files (no case to send).
    pub(crate) fn problem_trials(&self) -> usize {
        self.spec_problems().count()
    }

    /// The trials with the clauses they cite ([`Harness::trial_clauses`]), once the known
    /// failures are checked against them: an entry that claims what its trials do not test is
    /// an error naming the file and line.
    fn checked_expectations(&self) -> Result<Vec<TrialClauses>, RunError> {
        let cited = self.trial_clauses();
        self.expectations.check(&cited).map_err(|errors| {
            let path = (self.config.expectations.as_deref()).unwrap_or(Path::new(""));
            let lines: Vec<String> = (errors.iter())
                .map(|e| format!("{}: {e}", path.display()))
                .collect();
            RunError::Expectations(lines.join("\n"))
        })?;
        Ok(cited)
    }

    /// How many cases the run may send to a backend at most: the spec and generated cases
    /// whose trials `args` and the partition select.
    fn cases_to_send(&self, args: &Arguments) -> usize {
        let generated = (self.generated.as_ref())
            .map(|g| g.trial_cases())
            .unwrap_or_default();
        (self.loaded.cases.iter().chain(generated))
            .map(Case::trial_name)
            .filter(|name| {
                !self
                    .config
                    .partition
                    .is_some_and(|part| !part.contains(name))
            })
            .filter(|name| !args.is_filtered_out(&Trial::test(name.clone(), || Ok(()))))
            .count()
    }

    /// Runs the trials `args` selects against `backend`, or the backend the configuration
    /// names: libtest's report, the op × dtype table, the report files. In three stages: the
    /// trials are selected ([`Harness::select`]), run ([`Harness::execute`]), and the run is
    /// judged and reported ([`Harness::finish`]).
    pub(crate) fn run(
        mut self,
        mut args: Arguments,
        backend: Option<Arc<dyn Backend>>,
    ) -> Result<RunSummary, RunError> {
        if args.list {
            // The known failures are checked as a run checks them: `--list` is the quick
            // check of a file (`scripts/engines/engines.py check`).
            self.checked_expectations()?;
            return Ok(self.list(&args));
        }
        let selected = self.select(&args, backend)?;
        let executed = self.execute(&mut args, selected)?;
        self.finish(executed)
    }

    /// `--list`: prints the trials a run would make, and starts no backend.
    fn list(&mut self, args: &Arguments) -> RunSummary {
        let trials = Arc::new(Trials::new(
            Arc::new(Reference::default()),
            &self.config,
            &self.expectations,
        ));
        let cases = std::mem::take(&mut self.loaded.cases);
        let mut trials = trials.build(
            args,
            self.spec_problems(),
            self.generated.as_ref(),
            cases,
            None,
        );
        if let Some(part) = self.config.partition {
            trials.retain(|t| part.contains(t.name()));
        }
        let listed = libtest_mimic::run(args, trials);
        RunSummary::listed(listed.has_failed())
    }

    /// The first stage: checks the expectations against the trials, starts the backend, and
    /// makes the libtest trials `args` selects in this run's part, with what the run report
    /// says of the selection.
    fn select(
        &mut self,
        args: &Arguments,
        backend: Option<Arc<dyn Backend>>,
    ) -> Result<Selected, RunError> {
        let config = &self.config;
        // Each generated case's expected error takes a reference evaluation: done once, for the
        // check here and for the entries that match nothing below.
        let cited = self.checked_expectations()?;
        if let Some(signal) = interrupt::signal() {
            return Err(RunError::Interrupted(interrupt::name(signal).to_owned()));
        }
        let backend = match backend {
            Some(backend) => backend,
            None => start_backend(config, self.cases_to_send(args))?,
        };
        let halted = Arc::downgrade(&backend);
        interrupt::on_signal_call(move || {
            if let Some(backend) = halted.upgrade() {
                backend.halt();
            }
        });
        let supported = (self.loaded.cases.iter())
            .filter(|c| backend.supports(c).is_ok())
            .count();
        let check_unmatched = !self.single_file;
        let mut trials = Trials::new(Arc::clone(&backend), &self.config, &self.expectations);
        // One exact trial (as cargo nextest runs each) is always a libtest trial of its own.
        trials.quiet_exclusions &= check_unmatched;
        let trials = Arc::new(trials);
        let case_count = self.loaded.cases.len();
        let unmatched_against = check_unmatched.then_some(cited.as_slice());
        // The cases move into their trials.
        let cases = std::mem::take(&mut self.loaded.cases);
        let built = trials.build(
            args,
            self.spec_problems(),
            self.generated.as_ref(),
            cases,
            unmatched_against,
        );
        // The batches follow the order libtest runs the trials in: by name.
        let mut sendable = std::mem::take(&mut *lock(&trials.sendable));
        sendable.sort_by(|a, b| a.0.cmp(&b.0));
        backend.plan(sendable.into_iter().map(|(_, case)| case).collect());
        let quietly_excluded = std::mem::take(&mut *lock(&trials.quietly_excluded));
        let selected =
            quietly_excluded.len() + built.iter().filter(|t| !args.is_filtered_out(t)).count();
        if selected == 0 {
            return Err(RunError::NothingToRun(match &args.filter {
                Some(filter) if SUBCOMMANDS.contains(&filter.as_str()) => format!(
                    "the filter {filter:?} selects no case: `{filter}` is a subcommand, read as a name filter because an option came before it; give it first (`runner {filter} --specs DIRS`, for instance)"
                ),
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
        let judged = !(config.allow_skips || self.single_file);
        let mut run_info = RunInfo::new(
            (built.iter())
                .filter(|t| !args.is_filtered_out(t))
                .map(Trial::name)
                .chain(quietly_excluded.iter().map(String::as_str)),
            config.partition,
            judged,
        );
        run_info.require_error_kinds = config.require_error_kinds;
        run_info.batch = backend.batch();
        run_info.filter = name_selection(args);
        let folders: Vec<PathBuf> = (config.specs.iter())
            .chain(&config.sweeps)
            .chain(&config.golden)
            .cloned()
            .collect();
        let run_info = run_info.given(Given {
            inputs: merge::content_fingerprint(&folders),
            expectations: merge::file_fingerprint(config.expectations.as_deref()),
            max_elements: config.max_elements,
            engine: config.engine.to_string(),
            backend_command: config.backend_label(),
        });
        let built = match config.partition {
            Some(part) => built
                .into_iter()
                .filter(|t| part.contains(t.name()))
                .collect(),
            None => built,
        };
        Ok(Selected {
            backend,
            trials,
            built,
            run_info,
            judged,
        })
    }

    /// The second stage: runs the selected trials under libtest, then lets the backend and
    /// the goldens finish.
    fn execute(&self, args: &mut Arguments, selected: Selected) -> Result<Executed, RunError> {
        let config = &self.config;
        let Selected {
            backend,
            trials,
            built,
            run_info,
            judged,
        } = selected;
        if let Some(file) = &config.shard_status_file {
            // Bazel's sign that the test shards; without it Bazel takes the run for one that
            // ignores the sharding.
            if let Err(e) = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(file)
            {
                eprintln!(
                    "warning: cannot touch the shard status file {} (TEST_SHARD_STATUS_FILE): {e}",
                    file.display()
                );
            }
        }
        let none_here = built.iter().all(|t| args.is_filtered_out(t));
        if let (Some(part), true) = (config.partition, none_here) {
            println!(
                "part {part} holds none of the {} selected trials: nothing to run in this part",
                run_info.selected
            );
        }
        let batch = backend.batch();
        if (config.jobs > 1 || batch > 1) && args.test_threads.is_none() {
            // Every worker busy at once, and no fewer threads than libtest would take; twice as
            // many cases waiting as workers, so that a freed worker mostly finds a case of a
            // shape it has run before (`process::preferred_worker`). With batches, the trials
            // of a batch wait for it together: twice as many threads as the batches in flight
            // hold cases, so that every worker has a batch.
            let cores = std::thread::available_parallelism().map_or(1, usize::from);
            let waiting = (2 * config.jobs)
                .saturating_mul(batch)
                .min(MAX_TEST_THREADS);
            args.test_threads = Some(waiting.max(cores));
        }
        let conclusion = libtest_mimic::run(args, built);
        let late = backend.finish();
        if let Some(generated) = &self.generated {
            generated
                .finish()
                .map_err(|e| RunError::Generated(e.to_string()))?;
        }
        Ok(Executed {
            backend,
            trials,
            trial_failed: conclusion.has_failed(),
            late,
            run_info,
            judged,
        })
    }

    /// The last stage: the records, with the faults the backend reported after their
    /// verdicts; the run's verdict ([`RunSummary::summarize_final`]); the report, shown on the
    /// console and written to the files asked for.
    fn finish(&self, executed: Executed) -> Result<RunSummary, RunError> {
        let config = &self.config;
        let Executed {
            backend,
            trials,
            trial_failed,
            late,
            run_info,
            judged,
        } = executed;
        let records = trials.records(&late);
        let summary = RunSummary::summarize_final(
            &records,
            RunRules {
                judged,
                require_error_kinds: config.require_error_kinds,
            },
            trial_failed || !late.is_empty(),
            interrupt::signal().map(interrupt::name),
        );
        let report = Report {
            path: PathBuf::new(),
            backend: backend.name(),
            context: record::Context {
                facts: backend.facts(),
                expectation_entries: trials.entry_states(),
                composed: backend.composed(),
            },
            problems: summary.problems.clone(),
            trials: records,
            run: Some(run_info),
        };
        let (catalogue, _) = Catalogue::load_over(&config.checkout.specs(), &config.specs);
        print!("{}", report::console(&report, |id| catalogue.position(id)));
        println!("{}", config.folders());
        for (_, path, write) in config.report_files() {
            output::write_replacing(path, write(&report))
                .map_err(|e| RunError::Report(format!("cannot write {}: {e}", path.display())))?;
        }
        for problem in &summary.problems {
            eprintln!("error: the run is no pass: {problem}");
        }
        Ok(summary)
    }

    /// Runs the one trial named `trial`, as a run of this configuration would, on the backend
    /// the configuration names as `wrap` gives it (`runner replay` prints each request and
    /// reply). No backend is started for a trial the run does not have.
    pub(crate) fn replay(
        self,
        trial: &str,
        wrap: impl FnOnce(Arc<dyn Backend>) -> Arc<dyn Backend>,
    ) -> Result<Replayed, ReplayError> {
        if let Some(problem) = self.spec_problems().find(|p| p.trial == trial) {
            return Ok(Replayed::SpecProblem(problem.message));
        }
        let case = self.loaded.cases.iter().find(|c| c.trial_name() == trial);
        let found = self.generated.as_ref().and_then(|g| g.find(trial));
        if case.is_none() && found.is_none() {
            return Err(ReplayError::NoSuchTrial {
                trial: trial.to_owned(),
                folders: self.config.folders().replace('\n', "; "),
            });
        }
        let backend = wrap(start_backend(&self.config, 1)?);
        println!(
            "backend: {}",
            crate::backend::facts::printable(&backend.name())
        );
        let trials = Trials::new(backend, &self.config, &self.expectations);
        match (case, found) {
            (Some(case), _) => {
                let _ = trials.execute(case);
            }
            (None, Some(found)) => {
                let store = self.generated.as_ref().expect("found in it").store();
                let _ = trials.execute_generated(found, store);
            }
            (None, None) => unreachable!("checked above"),
        }
        let mut records = std::mem::take(&mut *lock(&trials.records));
        match records.is_empty() {
            true => Err(ReplayError::NoVerdict(trial.to_owned())),
            false => Ok(Replayed::Record(Box::new(records.swap_remove(0)))),
        }
    }
}

/// Runs the suite: loads the specs, runs every selected case against the configured backend,
/// prints libtest's report and the op × dtype table, and writes the requested report files.
///
/// SIGINT, SIGTERM and SIGHUP stop the run (`interrupt`): the backends are stopped, the
/// reports written with what the run has, and the exit code is 128 + the signal's number.
pub fn main_with(args: Arguments, config: Config) -> ExitCode {
    if let Err(e) = interrupt::install() {
        eprintln!("warning: {e}");
    }
    let result = run(args, config, None);
    if let Some(signal) = interrupt::signal() {
        if let Err(error) = result {
            eprintln!("error: {error}");
        }
        return ExitCode::from(interrupt::exit_code(signal));
    }
    match result {
        Ok(summary) => summary.exit_code(),
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::from(2)
        }
    }
}

/// Runs the suite as `runner` and `cargo test` do: checks the arguments, opens the run
/// ([`Harness::open`]) and runs it against `backend`, or the backend `config` names.
pub(crate) fn run(
    args: Arguments,
    config: Config,
    backend: Option<Arc<dyn Backend>>,
) -> Result<RunSummary, RunError> {
    config::check_arguments(args.test_threads, args.logfile.as_deref()).map_err(RunError::Usage)?;
    config
        .check_outputs(args.logfile.as_deref().map(Path::new))
        .map_err(RunError::Usage)?;
    Harness::open(&args, config)?.run(args, backend)
}

/// The trials a run selected ([`Harness::select`]), ready to run.
struct Selected {
    backend: Arc<dyn Backend>,
    trials: Arc<Trials>,
    /// The libtest trials of this run's part.
    built: Vec<Trial>,
    run_info: RunInfo,
    /// The run is judged as a whole ([`RunRules::judged`]).
    judged: bool,
}

/// A run whose trials have run ([`Harness::execute`]), to be judged and reported.
struct Executed {
    backend: Arc<dyn Backend>,
    trials: Arc<Trials>,
    /// A trial failed as libtest counts them.
    trial_failed: bool,
    /// Faults the backend reported after a trial's verdict.
    late: Vec<LateFault>,
    run_info: RunInfo,
    judged: bool,
}
