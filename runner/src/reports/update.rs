//! `runner update-expectations`: a known-failures file rewritten from a run's JSON report, as
//! tract, deqp-runner and web-platform-tests regenerate their expectation files.
//!
//! - An entry the run used stays as written: its selector, clause, class, reason and condition,
//!   and the comments around it.
//! - An entry that matched no trial goes; so does one whose every trial now passes. One that
//!   covers some trials still failing and some that pass is narrowed to the failing ones, a
//!   line each with the entry's clause, class, reason and condition.
//! - A trial that failed under no entry becomes an entry of class `untriaged`, keyed by its
//!   name and the first clause its case cites, the reason the first line of its failure. A
//!   run in which an untriaged entry covers a trial is no pass
//!   (`crate::reports::report::run_problems`): a person gives it its class and reason.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::ExitCode;

use crate::judge::expectations::Expectations;
use crate::judge::record::{Record, Status};

/// What an update did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Update {
    /// The new text of the file.
    pub(crate) text: String,
    /// Lines removed (1-based, of the old file): matched nothing, or every trial passes.
    pub(crate) removed: Vec<usize>,
    /// Lines narrowed to the trials they still cover, with how many.
    pub(crate) narrowed: Vec<(usize, usize)>,
    /// The trials added as untriaged entries.
    pub(crate) added: Vec<String>,
    /// Failed trials that cannot be an entry (they cite no clause: a spec error, an unused
    /// golden), with why.
    pub(crate) left: Vec<String>,
}

/// The expectations line a failed trial's verdict calls stale, if it does
/// ([`crate::judge::verdict::decide`] and the harness's `expectations::line_N` trials write these).
pub(crate) fn stale_line(record: &Record) -> Option<usize> {
    if record.status != Status::Failed {
        return None;
    }
    if let Some(line) = record.name.strip_prefix("expectations::line_") {
        return line.parse().ok();
    }
    let rest = record.message.strip_prefix("stale expectation: ")?;
    let number = rest
        .strip_prefix("this case now passes; remove line ")
        .or_else(|| rest.strip_prefix("line "))?;
    number.split(' ').next()?.parse().ok()
}

/// The first line of a failure that says what differs: past the case's header lines.
fn failure_line(message: &str) -> String {
    const HEADERS: [&str; 8] = [
        "case:", "source:", "clauses:", "inputs:", "attrs:", "note:", "replay:", "expect:",
    ];
    let line = message
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !HEADERS.iter().any(|h| l.starts_with(h)))
        .unwrap_or("failed");
    // One line, and no ` | ` that the reason field would not need.
    let line: String = line.chars().take(200).collect();
    line.replace('|', "/")
}

/// The fields of an entry line after its selector (` | clause | class | reason[ | if ...]`).
fn after_selector(line: &str) -> Option<&str> {
    let text = line.trim();
    if text.is_empty() || text.starts_with('#') {
        return None;
    }
    text.find('|').map(|at| &text[at..])
}

/// `old` rewritten from the trials of a run that used it.
pub(crate) fn update(old: &str, trials: &[Record]) -> Update {
    let mut stale: BTreeSet<usize> = BTreeSet::new();
    let mut still: BTreeMap<usize, Vec<&str>> = BTreeMap::new();
    let mut update = Update::default();
    let mut new = Vec::new();
    for record in trials {
        if let Some(line) = stale_line(record) {
            stale.insert(line);
        } else if let (Status::KnownFailure, Some(known)) = (record.status, &record.known) {
            still.entry(known.line).or_default().push(&record.name);
        } else if record.status == Status::Failed {
            match record.clauses.first() {
                Some(clause) => new.push((record, clause)),
                None => update.left.push(format!(
                    "{}: cites no clause, so no entry can cover it",
                    record.name
                )),
            }
        }
    }
    let mut lines = Vec::new();
    for (index, line) in old.lines().enumerate() {
        let number = index + 1;
        if !stale.contains(&number) {
            lines.push(line.to_owned());
            continue;
        }
        match (still.get(&number), after_selector(line)) {
            (Some(names), Some(rest)) => {
                update.narrowed.push((number, names.len()));
                lines.extend(names.iter().map(|name| format!("{name} {rest}")));
            }
            _ => update.removed.push(number),
        }
    }
    if !new.is_empty() {
        if lines.last().is_some_and(|l| !l.trim().is_empty()) {
            lines.push(String::new());
        }
        lines.push(
            "# Not yet triaged (runner update-expectations): give each its class and reason."
                .to_owned(),
        );
        for (record, clause) in new {
            lines.push(format!(
                "{} | {clause} | untriaged | {}",
                record.name,
                failure_line(&record.message)
            ));
            update.added.push(record.name.clone());
        }
    }
    update.text = lines.join("\n") + "\n";
    update
}

/// `runner update-expectations REPORT FILE [--out OUT]`: rewrites FILE (or writes OUT) from
/// the run REPORT made with it; the new text must load as an expectations file before it is
/// written, checked against the catalogues of `builtin_specs` (the checkout's `specs/`). Exit 2
/// when a file cannot be read or written.
pub fn main(report: &Path, file: &Path, out: Option<&Path>, builtin_specs: &Path) -> ExitCode {
    let fail = |message: String| {
        eprintln!("error: {message}");
        ExitCode::from(2)
    };
    let report = match crate::reports::report::read(report) {
        Ok(report) => report,
        Err(e) => return fail(e.to_string()),
    };
    let old = match std::fs::read_to_string(file) {
        Ok(text) => text,
        Err(e) => return fail(format!("cannot read {}: {e}", file.display())),
    };
    let update = update(&old, &report.trials);
    let out = out.unwrap_or(file);
    if let Err(e) = Expectations::parse(&update.text, &Expectations::catalogue(builtin_specs)) {
        return fail(format!(
            "the updated file would not load, so nothing was written: {e}"
        ));
    }
    if let Err(e) = crate::reports::output::write_replacing(out, &update.text) {
        return fail(format!("cannot write {}: {e}", out.display()));
    }
    let lines = |numbers: &[usize]| -> String {
        numbers
            .iter()
            .map(|n| n.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    println!(
        "{}: {} entries removed (lines {}), {} narrowed, {} untriaged added",
        out.display(),
        update.removed.len(),
        lines(&update.removed),
        update.narrowed.len(),
        update.added.len()
    );
    for (line, kept) in &update.narrowed {
        println!("  line {line}: narrowed to the {kept} trials it still covers");
    }
    for name in &update.added {
        println!("  untriaged: {name}");
    }
    for left in &update.left {
        println!("  not added: {left}");
    }
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::record::Known;

    fn record(name: &str, status: Status, message: &str, known: Option<usize>) -> Record {
        Record {
            message: message.into(),
            clauses: vec![
                "slice.reflect.mirror".into(),
                "slice.data.bits-unchanged".into(),
            ],
            known: known.map(|line| Known {
                selector: String::new(),
                clause: String::new(),
                class: "semantics".into(),
                reason: String::new(),
                line,
                condition: None,
            }),
            ..Record::bare(name, status)
        }
    }

    #[test]
    fn entries_keep_their_words_stale_ones_go_new_failures_are_untriaged() {
        let old = "# header\n\
                   slice::a::* | slice.reflect.mirror | semantics | mirrors once | if version < 2\n\
                   slice::b::x | slice.reflect.mirror | defect | gone now (repro/b.py)\n\
                   clause in slice::c::* | slice.reflect.mirror | adapter | half fixed\n\
                   slice::d::* | slice.reflect.mirror | semantics | matches nothing\n";
        let passes = "stale expectation: this case now passes; remove line";
        let trials = [
            record("slice::a::1", Status::KnownFailure, "known failure", Some(2)),
            record("slice::b::x", Status::Failed, &format!("{passes} 3 (`slice::b::x: gone now`) from the expectations file"), None),
            record("slice::c::1", Status::KnownFailure, "known failure", Some(4)),
            record("slice::c::2", Status::Failed, &format!("{passes} 4 (`x: half fixed`) from the expectations file"), None),
            record("expectations::line_5", Status::Failed, "stale expectation: line 5 (`slice::d::*`) matches no case; remove it", None),
            record("slice::e::1", Status::Failed, "case:   slice::e::1\nsource: x\nclauses: a\nat [0]: expected 1 | 2, got 3\nreplay: r", None),
            record("slice::f::1", Status::Passed, "", None),
        ];
        let update = update(old, &trials);
        assert_eq!(
            update.text,
            "# header\n\
             slice::a::* | slice.reflect.mirror | semantics | mirrors once | if version < 2\n\
             slice::c::1 | slice.reflect.mirror | adapter | half fixed\n\
             \n\
             # Not yet triaged (runner update-expectations): give each its class and reason.\n\
             slice::e::1 | slice.reflect.mirror | untriaged | at [0]: expected 1 / 2, got 3\n"
        );
        assert_eq!(update.removed, [3, 5]);
        assert_eq!(update.narrowed, [(4, 1)]);
        assert_eq!(update.added, ["slice::e::1"]);
    }

    /// The stale messages of the verdict are the ones read back.
    #[test]
    fn the_verdicts_stale_messages_name_their_line() {
        use crate::judge::expectations::{Class, Entry};
        use crate::judge::verdict::{decide, Verdict};
        let entry = Entry {
            pattern: Some("slice::*".into()),
            by_clause: false,
            clause: "slice.reflect.mirror".into(),
            class: Class::Semantics,
            reason: "why".into(),
            line: 17,
            condition: None,
            holds: true,
            unknown_facts: Vec::new(),
        };
        for verdict in [
            Verdict::new(Status::Passed, String::new()),
            Verdict::new(Status::ImplementationDefined, "differs".into()),
        ] {
            let stale = decide(verdict, Some(&entry), None);
            let r = Record {
                message: stale.message,
                ..record("slice::x", stale.status, "", None)
            };
            assert_eq!(stale_line(&r), Some(17), "{}", r.message);
        }
    }
}
