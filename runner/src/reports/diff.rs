//! `runner diff OLD.json NEW.json`: how two runs differ, trial by trial, read from their JSON
//! reports (`--report-json`).
//!
//! Trials are matched by name. Each one whose status changed, or that is in only one report,
//! falls in exactly one list:
//!
//! - newly failing: in both reports, failing in NEW (failed or not run), not failing in OLD;
//! - newly passing: in both, passed in NEW, not passed in OLD;
//! - no longer passing: in both, passed in OLD, neither passed nor failing in NEW (a known
//!   failure, unsupported, ...);
//! - other changes: in both, any other change of status (failed → known failure, ...);
//! - appeared: only in NEW; disappeared: only in OLD.
//!
//! A regression is what a user gating on the diff would not want to let through: a trial that
//! passed in OLD and does not pass in NEW (whatever it became, or because it is gone), or a
//! trial that fails in NEW and did not fail in OLD (whether it existed or not). Declaring a new
//! failure known, or a trial dropping out of the run, is a change a person must accept by
//! taking NEW as the new baseline. When the trials the hellos excluded differ, under each
//! report's line the trials its hello excluded, per declaration (`slice mode=reflect`,
//! `target dla`, ...), and after the lists the declarations whose counts differ, old → new;
//! nothing about exclusions when they are the same. Then the changes by clause
//! (`Diff::by_clause`): each trial of the lists once, under the clause of its case that the
//! most of the listed trials cite (ties by name; `(no clause)` for a trial whose case names
//! none), counted per change of status, as in `slice.size.negative: 4 passed → failed`. Exit
//! code: 1 on a regression, 0 otherwise, 2 when a report cannot be read.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;
use std::process::ExitCode;

use crate::judge::record::{Record, Report};
use crate::judge::status::Status;
use crate::reports::report::{exclusions, read};

/// One trial in either report.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Change<'a> {
    pub(crate) name: &'a str,
    pub(crate) old: Option<&'a Record>,
    pub(crate) new: Option<&'a Record>,
}

impl Change<'_> {
    fn old_status(&self) -> Option<Status> {
        self.old.map(|r| r.status())
    }

    fn new_status(&self) -> Option<Status> {
        self.new.map(|r| r.status())
    }

    /// A trial that passed and no longer does, or that fails and did not.
    pub(crate) fn is_regression(&self) -> bool {
        let lost_pass =
            self.old_status() == Some(Status::Passed) && self.new_status() != Some(Status::Passed);
        let new_failure = self.new_status().is_some_and(Status::fails)
            && !self.old_status().is_some_and(Status::fails);
        lost_pass || new_failure
    }
}

/// The trials of one clause whose status changed the same way ([`Diff::by_clause`]).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ClauseChange<'a> {
    /// The clause; empty for trials whose case names none.
    pub(crate) clause: &'a str,
    /// The status in the old report; `None` when the trial is only in the new one.
    pub(crate) old: Option<Status>,
    /// The status in the new report; `None` when the trial is only in the old one.
    pub(crate) new: Option<Status>,
    /// The trials, by name.
    pub(crate) trials: Vec<&'a str>,
}

impl ClauseChange<'_> {
    /// `passed → failed`, `absent → passed`.
    pub(crate) fn change(&self) -> String {
        let label = |s: Option<Status>| s.map_or("absent", Status::label);
        format!("{} → {}", label(self.old), label(self.new))
    }

    /// The clause, or `(no clause)`.
    pub(crate) fn clause_label(&self) -> &str {
        if self.clause.is_empty() {
            "(no clause)"
        } else {
            self.clause
        }
    }
}

/// The trials of two reports that differ, in the lists of the module documentation, each
/// sorted by name.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Diff<'a> {
    /// How many trials the two reports hold together.
    pub(crate) trials: usize,
    pub(crate) newly_failing: Vec<Change<'a>>,
    pub(crate) newly_passing: Vec<Change<'a>>,
    pub(crate) no_longer_passing: Vec<Change<'a>>,
    pub(crate) other_changes: Vec<Change<'a>>,
    pub(crate) appeared: Vec<Change<'a>>,
    pub(crate) disappeared: Vec<Change<'a>>,
}

impl<'a> Diff<'a> {
    pub(crate) fn new(old: &'a Report, new: &'a Report) -> Diff<'a> {
        let mut trials: BTreeMap<&str, Change> = BTreeMap::new();
        for record in &old.trials {
            trials.insert(
                &record.name,
                Change {
                    name: &record.name,
                    old: Some(record),
                    new: None,
                },
            );
        }
        for record in &new.trials {
            trials
                .entry(&record.name)
                .or_insert(Change {
                    name: &record.name,
                    old: None,
                    new: None,
                })
                .new = Some(record);
        }
        let mut diff = Diff {
            trials: trials.len(),
            ..Diff::default()
        };
        for change in trials.into_values() {
            let list = match (change.old_status(), change.new_status()) {
                (Some(_), None) => &mut diff.disappeared,
                (None, Some(_)) => &mut diff.appeared,
                (Some(old), Some(new)) if old == new => continue,
                (Some(old), Some(new)) if new.fails() && !old.fails() => &mut diff.newly_failing,
                (Some(_), Some(Status::Passed)) => &mut diff.newly_passing,
                (Some(Status::Passed), Some(new)) if !new.fails() => &mut diff.no_longer_passing,
                (Some(_), Some(_)) => &mut diff.other_changes,
                (None, None) => unreachable!("every entry comes from a report"),
            };
            list.push(change);
        }
        diff
    }

    fn lists(&self) -> [(&'static str, &[Change<'a>]); 6] {
        [
            ("newly failing", &self.newly_failing),
            ("newly passing", &self.newly_passing),
            ("no longer passing", &self.no_longer_passing),
            ("other changes", &self.other_changes),
            ("appeared", &self.appeared),
            ("disappeared", &self.disappeared),
        ]
    }

    /// The changes that are regressions, by name.
    pub(crate) fn regressions(&self) -> Vec<&Change<'a>> {
        let mut all: Vec<&Change> = self
            .lists()
            .into_iter()
            .flat_map(|(_, list)| list)
            .filter(|c| c.is_regression())
            .collect();
        all.sort_by_key(|c| c.name);
        all
    }

    /// The changed trials by clause: each trial once, under the clause of its case (the new
    /// report's record, or the old one's when it is gone) that the most changed trials cite,
    /// ties going to the first by name; grouped by that clause and the change of status, sorted
    /// by clause, then by the number of trials (most first), then by change.
    pub(crate) fn by_clause(&self) -> Vec<ClauseChange<'a>> {
        let changes: Vec<&Change<'a>> = self.lists().into_iter().flat_map(|(_, l)| l).collect();
        let clauses_of = |change: &Change<'a>| -> &'a [String] {
            match change.new.or(change.old) {
                Some(record) => &record.clauses,
                None => &[],
            }
        };
        let mut citing: BTreeMap<&str, usize> = BTreeMap::new();
        for change in &changes {
            for clause in clauses_of(change) {
                *citing.entry(clause).or_default() += 1;
            }
        }
        type Key<'k> = (&'k str, Option<Status>, Option<Status>);
        let mut groups: BTreeMap<Key<'a>, Vec<&'a str>> = BTreeMap::new();
        for change in changes {
            let clause = clauses_of(change)
                .iter()
                .map(String::as_str)
                .max_by(|a, b| citing[a].cmp(&citing[b]).then(b.cmp(a)))
                .unwrap_or("");
            groups
                .entry((clause, change.old_status(), change.new_status()))
                .or_default()
                .push(change.name);
        }
        let mut found: Vec<ClauseChange<'a>> = groups
            .into_iter()
            .map(|((clause, old, new), mut trials)| {
                trials.sort_unstable();
                ClauseChange {
                    clause,
                    old,
                    new,
                    trials,
                }
            })
            .collect();
        found.sort_by(|a, b| {
            (
                a.clause.is_empty(),
                a.clause,
                std::cmp::Reverse(a.trials.len()),
                a.change(),
            )
                .cmp(&(
                    b.clause.is_empty(),
                    b.clause,
                    std::cmp::Reverse(b.trials.len()),
                    b.change(),
                ))
        });
        found
    }

    /// The lists, then a last line: `regression: ...` or `no regression: ...`.
    pub(crate) fn text(&self, old: &Report, new: &Report) -> String {
        let mut text = String::new();
        // The exclusions are news only when they changed.
        let exclusions_changed = exclusions(&old.trials) != exclusions(&new.trials);
        for (which, report) in [("old", old), ("new", new)] {
            let _ = writeln!(
                text,
                "{which}: {} (backend {}, {} trials)",
                report.path.display(),
                report.backend,
                report.trials.len()
            );
            let counts = exclusions(&report.trials);
            if exclusions_changed && !counts.is_empty() {
                let parts: Vec<String> = counts
                    .iter()
                    .map(|(by, n)| format!("{n} by {by}"))
                    .collect();
                let _ = writeln!(text, "  excluded by the hello: {}", parts.join(", "));
            }
        }
        if old.backend != new.backend {
            let _ = writeln!(
                text,
                "note: the reports are of different backends ({} and {})",
                old.backend, new.backend
            );
        }
        for (title, list) in self.lists() {
            if list.is_empty() {
                continue;
            }
            let _ = writeln!(text, "\n{title} ({}):", list.len());
            for change in list {
                text.push_str(&describe(change));
            }
        }
        exclusion_changes(&mut text, old, new);
        let by_clause = self.by_clause();
        if !by_clause.is_empty() {
            text.push_str("\nby clause:\n");
            for group in &by_clause {
                let _ = writeln!(
                    text,
                    "  {}: {} {}",
                    group.clause_label(),
                    group.trials.len(),
                    group.change()
                );
            }
        }
        let counts: Vec<String> = self
            .lists()
            .iter()
            .map(|(title, list)| format!("{} {title}", list.len()))
            .collect();
        let regressions = self.regressions();
        let _ = writeln!(
            text,
            "\n{}: {} of {} trials differ ({})",
            if regressions.is_empty() {
                "no regression".to_owned()
            } else {
                format!("regression ({} trials)", regressions.len())
            },
            self.lists().iter().map(|(_, l)| l.len()).sum::<usize>(),
            self.trials,
            counts.join(", ")
        );
        text
    }
}

/// The declarations whose count of excluded trials differs between the reports, by name.
fn exclusion_changes(text: &mut String, old: &Report, new: &Report) {
    let old: BTreeMap<&str, usize> = exclusions(&old.trials).into_iter().collect();
    let new: BTreeMap<&str, usize> = exclusions(&new.trials).into_iter().collect();
    let mut declarations: Vec<&str> = old.keys().chain(new.keys()).copied().collect();
    declarations.sort_unstable();
    declarations.dedup();
    let changed: Vec<String> = declarations
        .into_iter()
        .filter_map(|by| {
            let (a, b) = (
                old.get(by).copied().unwrap_or(0),
                new.get(by).copied().unwrap_or(0),
            );
            (a != b).then(|| format!("  {by}: {a} → {b}\n"))
        })
        .collect();
    if !changed.is_empty() {
        text.push_str("\nexcluded by the hello, per declaration (old → new):\n");
        text.push_str(&changed.concat());
    }
}

/// One trial of a list: its name, its statuses, why it does not pass now, and how to replay it.
fn describe(change: &Change) -> String {
    let status = |record: Option<&Record>| record.map_or("absent", |r| r.status().label());
    let mut line = format!(
        "  {}{}: {} → {}",
        change.name,
        if change.is_regression() {
            " [regression]"
        } else {
            ""
        },
        status(change.old),
        status(change.new)
    );
    // Why it does not pass now, or why it did not before.
    let reason = match (change.old, change.new) {
        (_, Some(new)) if new.status() != Status::Passed => new.reason(),
        (Some(old), _) if old.status() != Status::Passed => format!("was: {}", old.reason()),
        _ => String::new(),
    };
    if !reason.is_empty() {
        let _ = write!(line, " ({reason})");
    }
    line.push('\n');
    if let Some(replay) = change
        .new
        .filter(|r| r.status() != Status::Passed)
        .and_then(|r| r.replay.as_deref())
    {
        let _ = writeln!(line, "      replay: {replay}");
    }
    line
}

/// `runner diff OLD NEW`: prints the lists; exit code 1 on a regression, 2 when a report cannot
/// be read.
pub fn main(old: &Path, new: &Path) -> ExitCode {
    let reports = read(old).and_then(|old| Ok((old, read(new)?)));
    let (old, new) = match reports {
        Ok(reports) => reports,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let diff = Diff::new(&old, &new);
    print!("{}", diff.text(&old, &new));
    if diff.regressions().is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    fn record(name: &str, status: Status) -> Record {
        let mut r = Record::bare(name, status);
        r.message = if status == Status::Passed {
            String::new()
        } else {
            format!("case:   {name}\nwhy {name} is {}", status.label())
        };
        r.replay = Some(format!("runner replay {name}"));
        r
    }

    fn report(trials: &[(&str, Status)]) -> Report {
        Report {
            path: PathBuf::from("r.json"),
            backend: "b".into(),
            problems: Vec::new(),
            context: Default::default(),
            trials: trials.iter().map(|(n, s)| record(n, *s)).collect(),
            run: None,
        }
    }

    fn names(list: &[Change]) -> Vec<String> {
        list.iter().map(|c| c.name.to_owned()).collect()
    }

    #[test]
    fn each_change_falls_in_one_list() {
        use Status::*;
        let old = report(&[
            ("same", Passed),
            ("breaks", Passed),
            ("fixed", Failed),
            ("skipped_now", Passed),
            ("declared", Failed),
            ("gone_pass", Passed),
            ("gone_fail", Failed),
            ("known_to_fail", KnownFailure),
        ]);
        let new = report(&[
            ("same", Passed),
            ("breaks", Failed),
            ("fixed", Passed),
            ("skipped_now", Unsupported),
            ("declared", KnownFailure),
            ("new_pass", Passed),
            ("new_fail", Failed),
            ("known_to_fail", NotRun),
        ]);
        let diff = Diff::new(&old, &new);
        assert_eq!(names(&diff.newly_failing), ["breaks", "known_to_fail"]);
        assert_eq!(names(&diff.newly_passing), ["fixed"]);
        assert_eq!(names(&diff.no_longer_passing), ["skipped_now"]);
        assert_eq!(names(&diff.other_changes), ["declared"]);
        assert_eq!(names(&diff.appeared), ["new_fail", "new_pass"]);
        assert_eq!(names(&diff.disappeared), ["gone_fail", "gone_pass"]);
        let regressions: Vec<&str> = diff.regressions().iter().map(|c| c.name).collect();
        assert_eq!(
            regressions,
            [
                "breaks",
                "gone_pass",
                "known_to_fail",
                "new_fail",
                "skipped_now"
            ]
        );
        let text = diff.text(&old, &new);
        assert!(
            text.contains(
                "  breaks [regression]: passed → failed (why breaks is failed)\n      replay: runner replay breaks\n"
            ),
            "{text}"
        );
        assert!(
            text.contains("  fixed: failed → passed (was: why fixed is failed)\n"),
            "{text}"
        );
        assert!(
            text.contains("  gone_pass [regression]: passed → absent\n"),
            "{text}"
        );
        assert!(
            text.ends_with("\nregression (5 trials): 9 of 10 trials differ (2 newly failing, 1 newly passing, 1 no longer passing, 1 other changes, 2 appeared, 2 disappeared)\n"),
            "{text}"
        );
    }

    #[test]
    fn fixes_and_new_passes_are_no_regression() {
        use Status::*;
        let old = report(&[("a", Failed), ("b", Unsupported), ("c", Passed)]);
        let new = report(&[
            ("a", KnownFailure),
            ("b", Passed),
            ("c", Passed),
            ("d", Passed),
        ]);
        let diff = Diff::new(&old, &new);
        assert!(diff.regressions().is_empty(), "{diff:?}");
        let text = diff.text(&old, &new);
        assert!(text.ends_with("\nno regression: 3 of 4 trials differ (0 newly failing, 1 newly passing, 0 no longer passing, 1 other changes, 1 appeared, 0 disappeared)\n"), "{text}");
        // A trial failing in both is no news.
        let diff = Diff::new(&old, &old);
        assert_eq!(
            diff,
            Diff {
                trials: 3,
                ..Diff::default()
            }
        );
    }

    #[test]
    fn changes_are_counted_by_clause_each_trial_once() {
        use Status::*;
        let with = |mut report: Report, clauses: &[(&str, &[&str])]| {
            for (name, cited) in clauses {
                let record = report.trials.iter_mut().find(|r| r.name == *name).unwrap();
                record.clauses = cited.iter().map(|c| c.to_string()).collect();
            }
            report
        };
        let clauses: &[(&str, &[&str])] = &[
            ("a", &["slice.size.negative", "slice.dtype.all"]),
            ("b", &["slice.size.negative"]),
            ("c", &["slice.dtype.all", "slice.size.negative"]),
            ("d", &["slice.dtype.all"]),
            ("e", &["slice.mode.reflect"]),
            ("same", &["slice.mode.reflect"]),
        ];
        let old = with(
            report(&[
                ("a", Passed),
                ("b", Passed),
                ("c", Passed),
                ("d", Failed),
                ("e", Unsupported),
                ("same", Passed),
                ("gone", Passed),
            ]),
            clauses,
        );
        let new = with(
            report(&[
                ("a", Failed),
                ("b", Failed),
                ("c", Failed),
                ("d", Passed),
                ("e", Passed),
                ("same", Passed),
            ]),
            clauses,
        );
        let diff = Diff::new(&old, &new);
        let found: Vec<(String, usize, String, Vec<&str>)> = diff
            .by_clause()
            .iter()
            .map(|g| {
                (
                    g.clause_label().to_owned(),
                    g.trials.len(),
                    g.change(),
                    g.trials.clone(),
                )
            })
            .collect();
        // slice.size.negative is cited by 3 changed trials, slice.dtype.all by 3 too: the tie
        // goes to the first by name, so a and c fall under slice.dtype.all.
        assert_eq!(
            found,
            [
                (
                    "slice.dtype.all".to_owned(),
                    2,
                    "passed → failed".to_owned(),
                    vec!["a", "c"]
                ),
                (
                    "slice.dtype.all".to_owned(),
                    1,
                    "failed → passed".to_owned(),
                    vec!["d"]
                ),
                (
                    "slice.mode.reflect".to_owned(),
                    1,
                    "unsupported → passed".to_owned(),
                    vec!["e"]
                ),
                (
                    "slice.size.negative".to_owned(),
                    1,
                    "passed → failed".to_owned(),
                    vec!["b"]
                ),
                (
                    "(no clause)".to_owned(),
                    1,
                    "passed → absent".to_owned(),
                    vec!["gone"]
                ),
            ]
        );
        // Each changed trial once.
        let counted: usize = diff.by_clause().iter().map(|g| g.trials.len()).sum();
        assert_eq!(counted, 6);
        let text = diff.text(&old, &new);
        assert!(
            text.contains(
                "\nby clause:\n  slice.dtype.all: 2 passed → failed\n  slice.dtype.all: 1 failed → passed\n  slice.mode.reflect: 1 unsupported → passed\n  slice.size.negative: 1 passed → failed\n  (no clause): 1 passed → absent\n\nregression"
            ),
            "{text}"
        );
        // No change, no section.
        assert!(!Diff::new(&old, &old).text(&old, &old).contains("by clause"));
    }

    #[test]
    fn exclusions_are_counted_per_report_and_compared() {
        use Status::*;
        let mut old = report(&[("a", Excluded), ("b", Excluded), ("c", Passed)]);
        old.trials[0].excluded_by = Some("slice mode=wrap".into());
        old.trials[1].excluded_by = Some("slice dtype fp8".into());
        let mut new = report(&[("a", Excluded), ("b", Passed), ("c", Excluded)]);
        new.trials[0].excluded_by = Some("slice mode=wrap".into());
        new.trials[2].excluded_by = Some("slice mode=wrap".into());
        let text = Diff::new(&old, &new).text(&old, &new);
        for needle in [
            "old: r.json (backend b, 3 trials)\n  excluded by the hello: 1 by slice dtype fp8, 1 by slice mode=wrap\n",
            "new: r.json (backend b, 3 trials)\n  excluded by the hello: 2 by slice mode=wrap\n",
            "\nexcluded by the hello, per declaration (old → new):\n  slice dtype fp8: 1 → 0\n  slice mode=wrap: 1 → 2\n",
        ] {
            assert!(text.contains(needle), "missing {needle:?} in:\n{text}");
        }
        // Equal counts are no change, and the diff says nothing of them.
        let text = Diff::new(&new, &new).text(&new, &new);
        assert!(!text.contains("excluded"), "{text}");
    }
}
