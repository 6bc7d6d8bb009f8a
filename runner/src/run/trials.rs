//! The trials of a run: each planned trial ([`crate::run::trial_kind::plan`]) made a libtest
//! trial that sends its case, judges the outcome, applies the known failures
//! ([`crate::judge::verdict::decide`]) and records what became of it; and the trials the
//! hello excludes, recorded without being libtest trials.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use libtest_mimic::{Arguments, Completion, Failed, Trial};
use opspec_generate::golden::{GoldenStore, Unused};
use opspec_generate::values::Provenance;
use opspec_generate::GeneratedCase;
use opspec_spec::Case;

use crate::backend::interface::{primary_dtype, trial_dtypes, Backend, LateFault, Reference};
use crate::backend::interrupt;
use crate::judge::expectations::{Expectations, TrialClauses};
use crate::judge::partition::Partition;
use crate::judge::record::{EntryState, Record};
use crate::judge::status::Status;
use crate::judge::verdict::{decide, Decision, Verdict};
use crate::reports::replay_command;
use crate::run::config::Config;
use crate::run::generated::{self, GeneratedTrial, GeneratedTrials};
use crate::run::send::send_and_judge;
use crate::run::trial_kind::{plan, PlannedTrial, SpecProblem, TrialKind};

pub(crate) fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

/// The trials of a run in progress: the backend they go to, and what became of each.
pub(crate) struct Trials {
    pub(crate) backend: Arc<dyn Backend>,
    pub(crate) expectations: Expectations,
    pub(crate) records: Mutex<Vec<Record>>,
    /// The flags that `runner replay TRIAL` needs to replay a trial of this run.
    pub(crate) replay: String,
    /// How the runner was started ([`Config::program`]), after the environment variables the
    /// hello names ([`replay_command::env_prefix`]).
    pub(crate) program: String,
    /// The reference (its engine and the run's limits), for goldens and round trips.
    pub(crate) reference: Reference,
    /// `--fail-fast`: after the first failure, no trial is sent.
    pub(crate) fail_fast: bool,
    /// The part of the trials this run makes ([`Config::partition`]).
    pub(crate) partition: Option<Partition>,
    /// The names of the selected trials excluded quietly, in every part.
    pub(crate) quietly_excluded: Mutex<Vec<String>>,
    /// Trials the hello excludes are recorded and counted, not made libtest trials
    /// (`--list-excluded` makes them trials, each printed as ignored).
    pub(crate) quiet_exclusions: bool,
    /// The name of the first trial that failed, once one has.
    pub(crate) first_failure: OnceLock<String>,
    /// The cases the run sends alone in one request each, by trial name, for a backend that
    /// takes batches ([`Backend::plan`]).
    pub(crate) sendable: Mutex<Vec<(String, Case)>>,
}

impl Trials {
    /// The trials of a run of `config` on `backend`, under `expectations`.
    pub(crate) fn new(
        backend: Arc<dyn Backend>,
        config: &Config,
        expectations: &Expectations,
    ) -> Trials {
        // The entries whose conditions do not hold on this engine and machine cover no trial.
        let facts = backend.facts();
        let mut expectations = expectations.clone();
        expectations.resolve(&facts);
        Trials {
            backend,
            expectations,
            records: Mutex::default(),
            replay: config.replay_flags(),
            // A replay sets the environment the hello says changes the backend.
            program: replay_command::env_prefix(&facts.env) + &config.program,
            quiet_exclusions: !config.list_excluded,
            partition: config.partition,
            quietly_excluded: Mutex::default(),
            reference: config.reference(),
            fail_fast: config.fail_fast,
            first_failure: OnceLock::new(),
            sendable: Mutex::default(),
        }
    }

    /// The libtest trials, sorted by name: those [`plan`] gives (`cases` move into them;
    /// `cited`, the trials with the clauses they cite, for the stale expectations), but for the
    /// trials the hello excludes, which are recorded quietly.
    pub(crate) fn build(
        self: &Arc<Self>,
        args: &Arguments,
        problems: impl Iterator<Item = SpecProblem>,
        generated: Option<&GeneratedTrials>,
        cases: Vec<Case>,
        cited: Option<&[TrialClauses]>,
    ) -> Vec<Trial> {
        let planned = plan(problems, generated, &self.expectations, cited, cases);
        // A round trip goes with its sweep case when the hello excludes that quietly.
        let mut quiet_sweeps = HashSet::new();
        let mut trials = Vec::new();
        let batching = self.backend.batch() > 1;
        for planned in planned {
            if batching {
                self.note_sendable(args, &planned);
            }
            let quiet = match &planned.kind {
                TrialKind::Case(case) => self.exclude_quietly(args, case, "case", false),
                TrialKind::Generated { case, store } => {
                    let quiet = self.exclude_generated_quietly(args, case, store);
                    if quiet {
                        quiet_sweeps.insert(planned.name.clone());
                    }
                    quiet
                }
                TrialKind::RoundTrip { case, .. } => {
                    let quiet = quiet_sweeps.contains(&case.case.trial_name());
                    match &case.metamorphic {
                        Some(first) if quiet => {
                            self.exclude_quietly(args, first, "round-trip", false);
                            true
                        }
                        // Its first step excluded by the hello (or not among offline cases).
                        Some(first) => self.exclude_quietly(args, first, "round-trip", false),
                        None => quiet,
                    }
                }
                _ => false,
            };
            if !quiet {
                trials.push(self.trial(planned));
            }
        }
        trials.sort_by(|a, b| a.name().cmp(b.name()));
        trials
    }

    /// Keeps the case a planned trial sends first, if the run sends it: a spec case, a sweep
    /// case, or a round trip's first step, that the arguments, the partition and the hello
    /// leave in. A round trip's way back is built from the first step's output, so it goes
    /// alone.
    fn note_sendable(&self, args: &Arguments, planned: &PlannedTrial) {
        let case = match &planned.kind {
            TrialKind::Case(case) => case.as_ref(),
            TrialKind::Generated { case, .. } => &case.case,
            TrialKind::RoundTrip { case, .. } if !self.backend.build_only() => {
                match &case.metamorphic {
                    Some(first) => first,
                    None => return,
                }
            }
            _ => return,
        };
        let selected = !args.is_filtered_out(&Trial::test(planned.name.clone(), || Ok(())))
            && self
                .partition
                .map_or(true, |part| part.contains(&planned.name));
        if selected && self.backend.supports(case).is_ok() {
            lock(&self.sendable).push((planned.name.clone(), case.clone()));
        }
    }

    /// The libtest trial of a planned trial, marked with its kind.
    fn trial(self: &Arc<Self>, planned: PlannedTrial) -> Trial {
        let PlannedTrial { name, kind } = planned;
        let label = kind.label();
        let trials = Arc::clone(self);
        let trial = match kind {
            TrialKind::Case(case) => Trial::ignorable_test(name, move || trials.execute(&case)),
            TrialKind::Generated { case, store } => Trial::ignorable_test(name, move || {
                trials.execute_generated(GeneratedTrial::Sweep(&case), &store)
            }),
            TrialKind::RoundTrip { case, store } => Trial::ignorable_test(name, move || {
                let first = case
                    .metamorphic
                    .as_ref()
                    .expect("a round trip has a first step");
                let round_trip = GeneratedTrial::RoundTrip {
                    first,
                    provenance: case.provenance.as_ref(),
                };
                trials.execute_generated(round_trip, &store)
            }),
            TrialKind::SpecProblem { op, message } => self.failing_trial(name, op, message),
            TrialKind::StaleExpectation { message } => {
                self.failing_trial(name, "expectations".into(), message)
            }
            TrialKind::UnusedGolden { unused, store } => match store.is_blessing() {
                true => self.removal_trial(name, store, unused),
                false => self.failing_trial(name, "golden".into(), unused.message),
            },
        };
        trial.with_kind(label)
    }

    /// When blessing, the trial of an unused golden removes it (or keeps it, when its sweep was
    /// not loaded) and passes.
    fn removal_trial(
        self: &Arc<Self>,
        name: String,
        store: Arc<GoldenStore>,
        unused: Unused,
    ) -> Trial {
        let trials = Arc::clone(self);
        Trial::test(name.clone(), move || {
            store.remove(&unused);
            let done = if unused.removable() {
                "removed"
            } else {
                "kept"
            };
            let verdict = Verdict::pass_with(format!("{done}: {}", unused.message));
            trials.record(Record::of(
                Decision::uncovered(verdict),
                name,
                "golden".into(),
            ));
            Ok(())
        })
    }

    /// With `--fail-fast`, once a trial has failed: a trial that starts now is not sent. It is
    /// recorded as not run and shown by libtest as ignored, not as one more failure (the first
    /// failure already fails the run).
    fn stopped(&self, case: &Case, started: Instant) -> Option<Result<Completion, Failed>> {
        let verdict = match interrupt::signal() {
            Some(signal) => Verdict::not_run(format!(
                "the run was interrupted by {}",
                interrupt::name(signal)
            )),
            None => Verdict::stopped(self.first_failure.get().filter(|_| self.fail_fast)?),
        };
        let message = verdict.message.clone();
        let name = case.trial_name();
        let decision = Decision::uncovered(verdict);
        self.record(self.case_record(name, case, decision, started));
        Some(Ok(Completion::ignored_with(message)))
    }

    /// Records a trial that the hello excludes (with `ops_only`, only one whose op it leaves
    /// out) without making it a libtest trial, so that the console counts exclusions per
    /// declaration instead of printing each; `true` when the trial is thus done with. A trial
    /// the arguments filter out is not recorded.
    fn exclude_quietly(&self, args: &Arguments, case: &Case, kind: &str, ops_only: bool) -> bool {
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
        if args.is_filtered_out(&Trial::test(name.clone(), || Ok(())).with_kind(kind)) {
            return true;
        }
        lock(&self.quietly_excluded).push(name.clone());
        if self.partition.map_or(true, |part| part.contains(&name)) {
            let decision = Decision::uncovered(Verdict::excluded(exclusion));
            self.record(self.case_record(name, case, decision, Instant::now()));
        }
        true
    }

    /// [`Trials::exclude_quietly`] for a generated case: whether it expects an error decides a
    /// dtype or attribute exclusion, so beyond an op the hello leaves out the case is judged
    /// with its golden (read and checked once, as its trial would). A golden with a problem
    /// leaves the case to its trial, which reports the problem.
    fn exclude_generated_quietly(
        &self,
        args: &Arguments,
        generated: &GeneratedCase,
        store: &GoldenStore,
    ) -> bool {
        if !self.quiet_exclusions {
            return false;
        }
        match self.backend.supports(&generated.case) {
            // Its expectation is a placeholder until the golden is read: only a dtype the
            // hello leaves out for the op can still exclude it, by the golden's outputs.
            Ok(()) if !self.dtypes_declared(&generated.case) => return false,
            Ok(()) => {}
            Err(exclusion) if exclusion.by.starts_with("op ") => {
                return self.exclude_quietly(args, &generated.case, "generated", true)
            }
            Err(_) => {}
        }
        let reference = self.reference.evaluate(&generated.case.invocation);
        let Ok(golden) = store.check(
            &generated.golden,
            generated.seed,
            &generated.hash,
            &reference,
        ) else {
            return false;
        };
        let mut case = generated.case.clone();
        case.expect = golden.expect;
        self.exclude_quietly(args, &case, "generated", false)
    }

    /// Whether the hello leaves out some dtype of `case`'s op: a case that outputs it
    /// (Scale's `output_dtype`) is excluded.
    fn dtypes_declared(&self, case: &Case) -> bool {
        let mut probe = case.clone();
        probe.expect = opspec_spec::Expectation::Outputs(
            (opspec::DType::ALL.into_iter())
                .map(|dtype| opspec::Tensor::from_bits(dtype, vec![0], Vec::new()))
                .collect(),
        );
        !self.backend.excluded_dtypes(&probe).is_empty()
    }

    pub(crate) fn execute(&self, case: &Case) -> Result<Completion, Failed> {
        let started = Instant::now();
        if let Some(result) = self.stopped(case, started) {
            return result;
        }
        let sent = send_and_judge(self.backend.as_ref(), case);
        self.conclude(case, sent.verdict, sent.composed, started)
    }

    pub(crate) fn execute_generated(
        &self,
        trial: GeneratedTrial<'_>,
        store: &GoldenStore,
    ) -> Result<Completion, Failed> {
        match trial {
            GeneratedTrial::Sweep(generated) => self.execute_sweep_case(generated, store),
            GeneratedTrial::RoundTrip { first, provenance } => {
                self.execute_round_trip(first, provenance)
            }
        }
    }

    fn execute_sweep_case(
        &self,
        generated: &GeneratedCase,
        store: &GoldenStore,
    ) -> Result<Completion, Failed> {
        let started = Instant::now();
        if let Some(result) = self.stopped(&generated.case, started) {
            return result;
        }
        let judged = generated::judge(self.backend.as_ref(), self.reference, generated, store);
        // Known failures match a generated case by the error the reference gives it, which
        // judging it has just found.
        let case = match self.expectations.entries.is_empty() {
            true => generated.case.clone(),
            false => generated::with_expected_error(&generated.case, judged.reference_error),
        };
        self.conclude(&case, judged.verdict, judged.composed, started)
    }

    fn execute_round_trip(
        &self,
        first: &Case,
        provenance: Option<&Provenance>,
    ) -> Result<Completion, Failed> {
        let started = Instant::now();
        if let Some(result) = self.stopped(first, started) {
            return result;
        }
        let (verdict, composed) = generated::round_trip(
            self.backend.as_ref(),
            first,
            provenance,
            self.reference.limits,
        );
        self.conclude(first, verdict, composed, started)
    }

    /// Applies the known failures to a verdict ([`decide`]), records it, and gives the trial's
    /// result: a pass, a failure, or ignored with the first line of its reason.
    fn conclude(
        &self,
        case: &Case,
        verdict: Verdict,
        composed: Vec<String>,
        started: Instant,
    ) -> Result<Completion, Failed> {
        // A case in flight when --fail-fast stopped the run is reported as one not sent.
        if verdict.status == Status::NotRun {
            if let Some(result) = self.stopped(case, started) {
                return result;
            }
        }
        let name = case.trial_name();
        let known = (self.expectations).lookup(&name, &self.expectations.cited(case));
        let replay = replay_command::command(&self.program, &name, &self.replay);
        let decision = decide(verdict, known, Some(&replay));
        let decided = decision.verdict();
        let result = match decided.status {
            Status::Passed => Ok(Completion::Completed),
            status if status.fails() => Err(Failed::from(decided.message.clone())),
            _ => Ok(Completion::ignored_with(
                decided.message.lines().next().unwrap_or_default(),
            )),
        };
        let mut record = self.case_record(name, case, decision, started);
        record.composed = composed;
        self.record(record);
        result
    }

    /// The record of a trial of `case` that started at `started`, with its decided verdict.
    fn case_record(
        &self,
        name: String,
        case: &Case,
        decision: Decision,
        started: Instant,
    ) -> Record {
        let replay = replay_command::command(&self.program, &name, &self.replay);
        let mut record = Record::of(decision, name, case.op.name().to_owned());
        record.replay = Some(replay);
        record.dtype = primary_dtype(case).map(|d| d.name().to_owned());
        record.dtypes = (trial_dtypes(case).iter())
            .map(|d| d.name().to_owned())
            .collect();
        record.seconds = started.elapsed().as_secs_f64();
        record.clauses = case.clauses.clone();
        record
    }

    /// A trial that reports a problem found before running anything (a spec error, a stale
    /// expectation, an unused golden), recorded like any other failure.
    fn failing_trial(self: &Arc<Self>, name: String, op: String, message: String) -> Trial {
        let trials = Arc::clone(self);
        Trial::test(name.clone(), move || {
            let failure = Failed::from(message.clone());
            let decision = Decision::uncovered(Verdict::fail(message));
            trials.record(Record::of(decision, name, op));
            Err(failure)
        })
    }

    fn record(&self, record: Record) {
        if record.status().fails()
            && self.first_failure.set(record.name.clone()).is_ok()
            && self.fail_fast
        {
            self.backend.halt();
        }
        lock(&self.records).push(record);
    }

    /// The records of the run, by name, each trial that failed after its verdict (`late`)
    /// failed with the fault.
    pub(crate) fn records(&self, late: &[LateFault]) -> Vec<Record> {
        let mut records = std::mem::take(&mut *lock(&self.records));
        records.sort_by(|a, b| a.name.cmp(&b.name));
        for fault in late {
            eprintln!(
                "error: {} failed after its verdict: {}",
                fault.trial, fault.message
            );
            if let Some(record) = records.iter_mut().find(|r| r.name == fault.trial) {
                let message = format!("{}\n{}", fault.message, record.message);
                let verdict = Verdict::fail(message.trim_end().to_owned());
                // The case was judged: the fault fails it, whatever its entry says.
                *record = record.clone().redecided(Decision::uncovered(verdict));
            }
        }
        records
    }

    /// Every expectations entry as the run found it (whether its condition held).
    pub(crate) fn entry_states(&self) -> Vec<EntryState> {
        (self.expectations.entries.iter())
            .map(EntryState::of)
            .collect()
    }
}
