//! The run's verdict: the trials per status, why the run is no pass beyond its failed trials,
//! and its exit code, decided once ([`RunSummary::summarize_final`]) for a run
//! ([`crate::run::harness`]), the in-process API ([`crate::run::in_process`]) and a merge of a
//! run's parts ([`crate::reports::merge`]); the reports only write what it decided.
//!
//! A run whose trials all pass one by one can still be no pass: when nothing passed, or when
//! the backend answered `unsupported` to more than [`MAX_UNSUPPORTED_SHARE`] of the trials it
//! was sent, a user who did not ask for those skips would be misled by a green run. Skips the
//! user asked for (the hello's ops, dtypes and targets; the expectations file) do not count.
//! `--allow-skips` / `OPSPEC_ALLOW_SKIPS=1` accepts such a run (docs/protocol.md, "What the
//! runner does with skips").

use std::collections::BTreeSet;
use std::process::ExitCode;

use crate::judge::record::Record;
use crate::judge::status::{Counts, Status};

/// The share of the trials sent to a backend that it may answer `unsupported` without being
/// asked (by its hello or the expectations file) before the run fails.
pub(crate) const MAX_UNSUPPORTED_SHARE: f64 = 0.10;

/// How a run is judged as a whole, as its configuration says (and a merge reads back from its
/// parts' run info).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct RunRules {
    /// The run is judged as a whole: not one exact trial (as cargo nextest runs each), not
    /// `--allow-skips`.
    pub(crate) judged: bool,
    /// `--require-error-kinds`: a rejection without a kind is a problem.
    pub(crate) require_error_kinds: bool,
}

/// What a run found: the trials per status, the reasons the run is no pass (beyond failed
/// trials: nothing passed, too many unasked skips; docs/protocol.md, "Reports"), and the
/// verdict.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RunSummary {
    /// The trials per status (`summary.counts[Status::Passed]`).
    pub counts: Counts,
    pub problems: Vec<String>,
    /// A trial failed as libtest counts them (a failed or not-run trial, a stale known
    /// failure, a problem of the goldens).
    pub trial_failed: bool,
    /// The run passes: no trial failed and no problem ([`RunSummary::exit_code`] 0).
    pub success: bool,
}

impl RunSummary {
    /// The run's verdict, the one place that decides it: the counts of `records` per status,
    /// the problems that make the run no pass although no trial failed (nothing passed, too
    /// many unasked skips, untriaged known failures, under `rules`; rejections without a kind
    /// under `--require-error-kinds`; an `interrupted` run, by the signal named), and whether
    /// it passes. `trial_failed`: a trial failed as libtest counts them, which a record alone
    /// does not tell (a stale known failure, a problem of the goldens, a fault after the
    /// verdict).
    pub(crate) fn summarize_final(
        records: &[Record],
        rules: RunRules,
        trial_failed: bool,
        interrupted: Option<&str>,
    ) -> RunSummary {
        let mut problems = match rules.judged {
            true => run_problems(records),
            false => Vec::new(),
        };
        if rules.require_error_kinds {
            problems.extend(unclassified_problem(records));
        }
        if let Some(signal) = interrupted {
            problems.push(format!(
                "the run was interrupted by {signal}: the trials it had not finished are not run"
            ));
        }
        RunSummary::new(records, problems, trial_failed)
    }

    /// A run that judged nothing (a `--list`): no counts, no problems.
    pub(crate) fn listed(trial_failed: bool) -> RunSummary {
        RunSummary::new(&[], Vec::new(), trial_failed)
    }

    fn new(records: &[Record], problems: Vec<String>, trial_failed: bool) -> RunSummary {
        RunSummary {
            success: !trial_failed && problems.is_empty(),
            trial_failed,
            counts: counts(records),
            problems,
        }
    }

    /// The exit code `runner` gives the run: 101 (libtest's) when a trial failed, 1 when only
    /// a problem makes it no pass, 0 when it passes.
    pub fn exit_code(&self) -> ExitCode {
        match (self.trial_failed, self.problems.is_empty()) {
            (true, _) => ExitCode::from(101),
            (false, false) => ExitCode::FAILURE,
            (false, true) => ExitCode::SUCCESS,
        }
    }
}

/// How many of `records` have each status.
fn counts(records: &[Record]) -> Counts {
    Counts::of(records.iter().map(|r| r.status()))
}

/// One line per trial status with its count: `12 passed, 0 failed, ...`; the rare statuses
/// ([`crate::judge::status::Row::rare`]) only when a trial has them.
pub(crate) fn summary(records: &[Record]) -> String {
    (counts(records).iter())
        .filter(|(status, n)| !status.row().rare || *n > 0)
        .map(|(status, n)| format!("{n} {}", status.row().tally))
        .collect::<Vec<_>>()
        .join(", ")
}

/// With `--require-error-kinds`: why the run is no pass because cases that expect an error
/// were rejected without an error kind (none when there are none).
fn unclassified_problem(records: &[Record]) -> Option<String> {
    let unclassified = counts(records)[Status::RejectedUnclassified];
    (unclassified > 0).then(|| {
        format!(
            "{unclassified} trial(s) that expect an error were rejected without an error kind, so maybe for another rule, and --require-error-kinds (OPSPEC_REQUIRE_ERROR_KINDS=1) is set; have the backend give the kind of each rejection"
        )
    })
}

/// Why a run is no pass although its trials may all be: nothing passed, or the backend
/// answered `unsupported` to more than [`MAX_UNSUPPORTED_SHARE`] of the trials sent to it.
pub(crate) fn run_problems(records: &[Record]) -> Vec<String> {
    let mut problems = Vec::new();
    if records.is_empty() {
        return problems;
    }
    let advice = "pass --allow-skips (OPSPEC_ALLOW_SKIPS=1) to accept such a run";
    // A run where a trial failed fails for that: "nothing passed", and its advice to allow
    // skips, would be the wrong lead.
    let failed = records.iter().any(|r| r.status().fails());
    if counts(records)[Status::Passed] == 0 && !failed {
        problems.push(format!(
            "nothing passed: {} of {} trials; {advice}",
            summary(records),
            records.len()
        ));
    }
    let untriaged: BTreeSet<usize> = (records.iter())
        .filter_map(|r| r.known.as_ref())
        .filter(|k| k.class == "untriaged")
        .map(|k| k.line)
        .collect();
    if !untriaged.is_empty() {
        let lines: Vec<String> = untriaged.iter().map(|l| l.to_string()).collect();
        problems.push(format!(
            "{} known failures are of untriaged entries (lines {} of the expectations file): give each its class (semantics, defect, adapter) and reason",
            (records.iter())
                .filter(|r| r.known.as_ref().is_some_and(|k| k.class == "untriaged"))
                .count(),
            lines.join(", ")
        ));
    }
    let sent = records
        .iter()
        .filter(|r| !matches!(r.status(), Status::Excluded | Status::NotRun))
        .count();
    let unsupported = counts(records)[Status::Unsupported];
    if sent > 0 && unsupported as f64 > MAX_UNSUPPORTED_SHARE * sent as f64 {
        problems.push(format!(
            "{unsupported} of {sent} trials sent to the backend ({:.1} %) were answered `unsupported`, more than the {} % a run may skip unasked; declare what the backend lacks in its hello (ops, dtypes, targets), list those cases in the expectations file, or {advice}",
            100.0 * unsupported as f64 / sent as f64,
            MAX_UNSUPPORTED_SHARE * 100.0
        ));
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    fn judged() -> RunRules {
        RunRules {
            judged: true,
            require_error_kinds: true,
        }
    }

    /// The summary counts every status a record can have, as the JSON report does: a trial of
    /// each status is counted once.
    #[test]
    fn the_summary_counts_all_nine_statuses() {
        let records: Vec<Record> = (Status::ALL.iter())
            .map(|&status| Record::bare(&format!("slice::x::{}", status.name()), status))
            .collect();
        let s = RunSummary::summarize_final(&records, RunRules::default(), false, None);
        let counted: Vec<usize> = Status::ALL.iter().map(|&st| s.counts[st]).collect();
        assert_eq!(counted, [1; 9]);
        assert!(s.success);
    }

    /// A run of one trial of each status alone, judged as a whole and requiring error kinds:
    /// its problems and its exit code. libtest counts a failed or not-run trial as a failed
    /// trial, which is what `trial_failed` says.
    #[test]
    fn each_status_alone_gives_its_verdict() {
        for status in Status::ALL {
            let records = [Record::bare("slice::x::a", status)];
            let s = RunSummary::summarize_final(&records, judged(), status.fails(), None);
            let firsts: Vec<&str> = (s.problems.iter())
                .map(|p| p.split(':').next().unwrap_or(""))
                .collect();
            let (problems, code, success): (&[&str], ExitCode, bool) = match status {
                Status::Passed => (&[], ExitCode::SUCCESS, true),
                Status::Failed | Status::NotRun => (&[], ExitCode::from(101), false),
                // All sent trials answered `unsupported`: nothing passed, and too many skips.
                Status::Unsupported => (
                    &["nothing passed", "1 of 1 trials sent to the backend (100.0 %) were answered `unsupported`, more than the 10 % a run may skip unasked; declare what the backend lacks in its hello (ops, dtypes, targets), list those cases in the expectations file, or pass --allow-skips (OPSPEC_ALLOW_SKIPS=1) to accept such a run"],
                    ExitCode::FAILURE,
                    false,
                ),
                Status::KnownFailure
                | Status::Excluded
                | Status::ImplementationDefined
                | Status::ShapeChecked => (&["nothing passed"], ExitCode::FAILURE, false),
                Status::RejectedUnclassified => (
                    &["nothing passed", "1 trial(s) that expect an error were rejected without an error kind, so maybe for another rule, and --require-error-kinds (OPSPEC_REQUIRE_ERROR_KINDS=1) is set; have the backend give the kind of each rejection"],
                    ExitCode::FAILURE,
                    false,
                ),
            };
            assert_eq!(firsts, problems, "{status:?}: {:?}", s.problems);
            assert_eq!(s.exit_code(), code, "{status:?}");
            assert_eq!(s.success, success, "{status:?}");
        }
    }

    /// Not judged as a whole (one exact trial, `--allow-skips`), only a failed trial or an
    /// interruption makes the run no pass.
    #[test]
    fn an_unjudged_run_fails_only_for_a_failed_trial_or_an_interruption() {
        for status in Status::ALL {
            let records = [Record::bare("slice::x::a", status)];
            let s = RunSummary::summarize_final(&records, RunRules::default(), false, None);
            assert_eq!(s.problems, Vec::<String>::new(), "{status:?}");
            assert_eq!(s.exit_code(), ExitCode::SUCCESS, "{status:?}");
        }
        let records = [Record::bare("slice::x::a", Status::Passed)];
        let s = RunSummary::summarize_final(&records, RunRules::default(), false, Some("SIGINT"));
        assert_eq!(
            s.problems,
            ["the run was interrupted by SIGINT: the trials it had not finished are not run"]
        );
        assert_eq!(s.exit_code(), ExitCode::FAILURE);
    }
}
