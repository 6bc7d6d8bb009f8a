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

use crate::judge::expectations::{Expectations, EXPECTATIONS_LIMIT};
use crate::judge::record::Record;
use crate::judge::status::Status;
use crate::reports::{merge, output, report};

/// What an update did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Update {
    /// The new text of the file.
    pub(crate) text: String,
    /// Lines removed (1-based, of the old file): matched nothing, or every trial passes.
    pub(crate) removed: Vec<usize>,
    /// Comment lines removed with an entry, as its own comment ([`own_comment`]).
    pub(crate) comments: Vec<usize>,
    /// Lines narrowed to the trials they still cover, with how many.
    pub(crate) narrowed: Vec<(usize, usize)>,
    /// The trials added as untriaged entries.
    pub(crate) added: Vec<String>,
    /// Failed trials that cannot be an entry (they cite no clause: a spec error, an unused
    /// golden), with why.
    pub(crate) left: Vec<String>,
}

impl Update {
    /// Whether the file is left as it was.
    pub(crate) fn unchanged(&self) -> bool {
        self.removed.is_empty() && self.narrowed.is_empty() && self.added.is_empty()
    }
}

/// The expectations line a failed trial's verdict calls stale, if it does
/// ([`crate::judge::verdict::decide`] and the harness's `expectations::line_N` trials write these).
pub(crate) fn stale_line(record: &Record) -> Option<usize> {
    if record.status() != Status::Failed {
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

/// One line of the file: its text and its own line ending (`\n`, `\r\n`, or none at the end).
struct Line<'a> {
    text: &'a str,
    ending: &'a str,
}

impl Line<'_> {
    fn is_comment(&self) -> bool {
        self.text.trim_start().starts_with('#')
    }

    fn is_blank(&self) -> bool {
        self.text.trim().is_empty()
    }

    fn is_entry(&self) -> bool {
        !self.is_comment() && !self.is_blank()
    }
}

/// The comment lines (0-based indices) that are the entry at `index`'s own: the comment lines
/// right above it, when the entry is the only line below them before a blank line, a comment
/// or the file's end. A comment above several entries (a section heading, or a note on all of
/// them) is not one entry's own, nor is the file's opening comment.
fn own_comment(lines: &[Line], index: usize) -> std::ops::Range<usize> {
    let mut first = index;
    while first > 0 && lines[first - 1].is_comment() {
        first -= 1;
    }
    let alone = lines.get(index + 1).map_or(true, |next| !next.is_entry());
    if first == 0 || first == index || !alone {
        return index..index;
    }
    first..index
}

/// `old` rewritten from the trials of a run that used it. Every line kept keeps its bytes and
/// its line ending; new lines take the file's (that of its first line).
pub(crate) fn update(old: &str, trials: &[Record]) -> Update {
    let mut stale: BTreeSet<usize> = BTreeSet::new();
    let mut still: BTreeMap<usize, Vec<&str>> = BTreeMap::new();
    let mut update = Update::default();
    let mut new = Vec::new();
    for record in trials {
        if let Some(line) = stale_line(record) {
            stale.insert(line);
        } else if let (Status::KnownFailure, Some(known)) = (record.status(), &record.known) {
            still.entry(known.line).or_default().push(&record.name);
        } else if record.status() == Status::Failed {
            match record.clauses.first() {
                Some(clause) => new.push((record, clause)),
                None => update.left.push(format!(
                    "{}: cites no clause, so no entry can cover it",
                    record.name
                )),
            }
        }
    }
    let (mark, body) = match old.strip_prefix('\u{FEFF}') {
        Some(body) => ("\u{FEFF}", body),
        None => ("", old),
    };
    let lines: Vec<Line> = body
        .split_inclusive('\n')
        .map(|raw| {
            let text = raw.strip_suffix('\n').unwrap_or(raw);
            let text = text.strip_suffix('\r').unwrap_or(text);
            Line {
                text,
                ending: &raw[text.len()..],
            }
        })
        .collect();
    let eol = lines
        .iter()
        .map(|l| l.ending)
        .find(|e| !e.is_empty())
        .unwrap_or("\n");
    // What goes: stale entries that cover nothing now, with their own comments.
    let mut dropped = vec![false; lines.len()];
    let mut narrowed: BTreeMap<usize, &Vec<&str>> = BTreeMap::new();
    for &number in &stale {
        let Some(index) = number.checked_sub(1).filter(|&i| i < lines.len()) else {
            continue;
        };
        match (still.get(&number), after_selector(lines[index].text)) {
            (Some(names), Some(_)) => {
                update.narrowed.push((number, names.len()));
                narrowed.insert(index, names);
            }
            _ => {
                update.removed.push(number);
                dropped[index] = true;
            }
        }
    }
    for index in 0..lines.len() {
        if !dropped[index] || !lines[index].is_entry() {
            continue;
        }
        let comment = own_comment(&lines, index);
        if comment.is_empty() {
            continue;
        }
        for line in comment.clone() {
            dropped[line] = true;
            update.comments.push(line + 1);
        }
        // A paragraph gone whole between two blank lines leaves one of them.
        let blank_before = lines[comment.start - 1].is_blank();
        if blank_before && lines.get(index + 1).is_some_and(Line::is_blank) {
            dropped[index + 1] = true;
        }
    }
    update.comments.sort_unstable();
    let mut text = String::from(mark);
    for (index, line) in lines.iter().enumerate() {
        if dropped[index] {
            continue;
        }
        match (narrowed.get(&index), after_selector(line.text)) {
            (Some(names), Some(rest)) => {
                for (k, name) in names.iter().enumerate() {
                    text.push_str(&format!("{name} {rest}"));
                    text.push_str(if k + 1 == names.len() {
                        line.ending
                    } else {
                        eol
                    });
                }
            }
            _ => {
                text.push_str(line.text);
                text.push_str(line.ending);
            }
        }
    }
    if !new.is_empty() {
        if !text.is_empty() && !text.ends_with('\n') {
            text.push_str(eol);
        }
        let last = text[mark.len()..].trim_end_matches(['\r', '\n']);
        let last_line = last.rsplit('\n').next().unwrap_or_default();
        if !last.is_empty() && !last_line.trim().is_empty() {
            text.push_str(eol);
        }
        text.push_str(
            "# Not yet triaged (runner update-expectations): give each its class and reason.",
        );
        text.push_str(eol);
        for (record, clause) in new {
            text.push_str(&format!(
                "{} | {clause} | untriaged | {}",
                record.name,
                failure_line(&record.message)
            ));
            text.push_str(eol);
            update.added.push(record.name.clone());
        }
    }
    update.text = text;
    update
}

/// Whether two paths name one file (the same inode, or, where one does not exist, the same
/// path once resolved).
fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
        _ => output::resolved(a) == output::resolved(b),
    }
}

/// The known-failures file's old text, once it is the one the report's run read (its
/// fingerprint, the report's `run.expectations`); empty for a new file when the run read
/// none. `Err` says why the report's lines cannot be applied to it.
fn checked_old_text(report: &Path, file: &Path) -> Result<String, String> {
    let read = report::read(report).map_err(|e| e.to_string())?;
    let again = format!(
        "run again with --expectations {} --report-json {}, then update",
        file.display(),
        report.display()
    );
    let Some(run) = read.run else {
        return Err(format!(
            "{} does not say which known-failures file its run read (it has no `run` description: an older runner wrote it, or not --report-json), so its line numbers cannot be checked against {}; nothing was written: {again}",
            report.display(),
            file.display()
        ));
    };
    if let Some(part) = &run.partition {
        return Err(format!(
            "{} is the report of part {part} of a run, which holds only some of the trials of each entry: an update needs the whole run's report (`runner merge` the parts first); nothing was written",
            report.display()
        ));
    }
    if let Some(filter) = &run.filter {
        return Err(format!(
            "{} is the report of a run of the trials `{filter}` selects, which holds only some of the trials of each entry: an update from it would narrow or drop entries the other trials need; update from a run of every trial; nothing was written",
            report.display()
        ));
    }
    let exists = std::fs::symlink_metadata(file).is_ok();
    if run.expectations.is_empty() {
        if !exists {
            return Ok(String::new());
        }
        return Err(format!(
            "the run of {} read no known-failures file (it was made without --expectations), so it cannot say which entries of {} are stale; nothing was written: {again} (or give a FILE that does not exist yet, to write a new one)",
            report.display(),
            file.display()
        ));
    }
    // Only a regular file of at most EXPECTATIONS_LIMIT bytes is read, as `--expectations`
    // reads it: a FIFO would wait for a writer, `/dev/zero` would fill the memory.
    let bytes = opspec_spec::source::read_bounded(file, EXPECTATIONS_LIMIT)?;
    let ours = merge::bytes_fingerprint(&bytes);
    if ours != run.expectations {
        return Err(format!(
            "{} is not the known-failures file the run of {} read: that file had fingerprint {}, this one has {} (it was edited since the run, or it is another file); the report's line numbers would land on other entries, so nothing was written: {again}",
            file.display(),
            report.display(),
            run.expectations,
            ours
        ));
    }
    String::from_utf8(bytes)
        .map_err(|e| format!("cannot read {}: it is not UTF-8 text ({e})", file.display()))
}

/// `runner update-expectations REPORT FILE [--out OUT]`: rewrites FILE (or writes OUT) from
/// the run REPORT made with it; the new text must load as an expectations file before it is
/// written, checked against the catalogues of `builtin_specs` (the checkout's `specs/`).
///
/// FILE must be the file the run read, byte for byte (the report's fingerprint of it), and a
/// regular file of at most 64 MiB (`EXPECTATIONS_LIMIT`); the report must be a whole run's, and
/// OUT may not be the report. A file left as it was is not written. The new file replaces the
/// old whole (`output::write_replacing`: a temporary file renamed over it, signals held back
/// meanwhile), with its permission bits; a file with other hard links, or read-only, is
/// refused. Exit 2 when anything is refused or cannot be read or written.
pub fn main(report_path: &Path, file: &Path, out: Option<&Path>, builtin_specs: &Path) -> ExitCode {
    let fail = |message: String| {
        eprintln!("error: {message}");
        ExitCode::from(2)
    };
    let target = out.unwrap_or(file);
    if same_file(target, report_path) {
        let what = match out {
            Some(_) => format!("--out {}", target.display()),
            None => format!("the known-failures file {}", target.display()),
        };
        return fail(format!(
            "{what} is the report {} this update reads: writing it would destroy the report; give the output another path",
            report_path.display()
        ));
    }
    let report = match crate::reports::report::read(report_path) {
        Ok(report) => report,
        Err(e) => return fail(e.to_string()),
    };
    let old = match checked_old_text(report_path, file) {
        Ok(text) => text,
        Err(e) => return fail(e),
    };
    let update = update(&old, &report.trials);
    if let Err(e) = Expectations::parse(&update.text, &Expectations::catalogue(builtin_specs)) {
        return fail(format!(
            "the updated file would not load, so nothing was written: {e}"
        ));
    }
    let exists = std::fs::symlink_metadata(target).is_ok();
    if update.unchanged() && out.is_none() && exists {
        println!(
            "{}: unchanged (every entry covers a trial that still fails, and no trial failed without one)",
            file.display()
        );
        for left in &update.left {
            println!("  not added: {left}");
        }
        return ExitCode::SUCCESS;
    }
    if let Err(e) = output::check_replaceable(target) {
        return fail(e);
    }
    if let Err(e) = output::write_replacing(target, &update.text) {
        return fail(format!("cannot write {}: {e}", target.display()));
    }
    let lines = |numbers: &[usize]| -> String {
        numbers
            .iter()
            .map(|n| n.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let count =
        |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let mut removed = count(update.removed.len(), "entry removed", "entries removed");
    if !update.removed.is_empty() {
        removed.push_str(&format!(
            " ({} {})",
            if update.removed.len() == 1 {
                "line"
            } else {
                "lines"
            },
            lines(&update.removed)
        ));
    }
    if !update.comments.is_empty() {
        removed.push_str(&format!(
            " with {} ({} {})",
            count(update.comments.len(), "comment line", "comment lines"),
            if update.comments.len() == 1 {
                "line"
            } else {
                "lines"
            },
            lines(&update.comments)
        ));
    }
    println!(
        "{}: {removed}, {} narrowed, {} untriaged added",
        target.display(),
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
    use crate::judge::expectations::EntryLine as Known;

    fn record(name: &str, status: Status, message: &str, known: Option<usize>) -> Record {
        let mut r = Record::bare(name, status);
        r.message = message.into();
        r.clauses = vec![
            "slice.reflect.mirror".into(),
            "slice.data.bits-unchanged".into(),
        ];
        r.known = known.map(|line| Known {
            selector: String::new(),
            clause: String::new(),
            class: "semantics".into(),
            reason: String::new(),
            line,
            condition: None,
        });
        r
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

    fn stale(line: usize) -> Record {
        record(
            &format!("expectations::line_{line}"),
            Status::Failed,
            &format!("stale expectation: line {line} (`x`) matches no case; remove it"),
            None,
        )
    }

    /// A CRLF file keeps its endings, every line kept keeps its bytes, and a file nothing
    /// changes in comes back byte for byte.
    #[test]
    fn line_endings_and_untouched_files_are_kept_byte_for_byte() {
        let old = "\u{FEFF}# header\r\n\r\nslice::a::* | slice.reflect.mirror | semantics | x\r\nslice::b::* | slice.reflect.mirror | semantics | y\r\n";
        let kept = [
            record("slice::a::1", Status::KnownFailure, "", Some(3)),
            record("slice::b::1", Status::KnownFailure, "", Some(4)),
        ];
        let same = update(old, &kept);
        assert!(same.unchanged());
        assert_eq!(same.text, old);
        let new_failure = record("slice::e::1", Status::Failed, "at [0]: wrong", None);
        let changed = update(old, &[kept[0].clone(), stale(4), new_failure]);
        assert_eq!(
            changed.text,
            "\u{FEFF}# header\r\n\r\nslice::a::* | slice.reflect.mirror | semantics | x\r\n\r\n\
             # Not yet triaged (runner update-expectations): give each its class and reason.\r\n\
             slice::e::1 | slice.reflect.mirror | untriaged | at [0]: wrong\r\n"
        );
        // A last line without an ending keeps none when nothing is added after it.
        let bare = "# h\nslice::a::* | slice.reflect.mirror | semantics | x\nslice::b::* | slice.reflect.mirror | semantics | y";
        assert_eq!(
            update(bare, &[kept[1].clone(), stale(2)]).text,
            "# h\nslice::b::* | slice.reflect.mirror | semantics | y"
        );
    }

    /// The comment right above an entry goes with it when it is that entry's alone; a heading
    /// above several entries, or the file's opening comment, stays.
    #[test]
    fn an_entry_removed_takes_only_its_own_comment() {
        let old = "# file header\n\
                   slice::a::* | slice.reflect.mirror | semantics | a\n\
                   \n\
                   # slice\n\
                   slice::b::* | slice.reflect.mirror | semantics | b\n\
                   slice::c::* | slice.reflect.mirror | semantics | c\n\
                   \n\
                   # d only (repro/d.py)\n\
                   # second line of d's note\n\
                   slice::d::* | slice.reflect.mirror | defect | d\n\
                   \n\
                   # e only\n\
                   slice::e::* | slice.reflect.mirror | defect | e\n";
        let covered =
            |line: usize| record(&format!("t{line}"), Status::KnownFailure, "", Some(line));
        let updated = update(
            old,
            &[stale(2), stale(5), covered(6), stale(10), covered(13)],
        );
        assert_eq!(
            updated.text,
            "# file header\n\
             \n\
             # slice\n\
             slice::c::* | slice.reflect.mirror | semantics | c\n\
             \n\
             # e only\n\
             slice::e::* | slice.reflect.mirror | defect | e\n"
        );
        assert_eq!(updated.removed, [2, 5, 10]);
        assert_eq!(updated.comments, [8, 9]);
    }

    /// The stale messages of the verdict are the ones read back.
    #[test]
    fn the_verdicts_stale_messages_name_their_line() {
        use crate::judge::expectations::{Class, Entry};
        use crate::judge::verdict::{decide, Verdict};
        let entry = Entry::new(
            17,
            Some("slice::*".into()),
            false,
            "slice.reflect.mirror".into(),
            Class::Semantics,
            "why".into(),
            None,
        );
        for verdict in [
            Verdict::of_status(Status::Passed, String::new()),
            Verdict::of_status(Status::ImplementationDefined, "differs".into()),
        ] {
            let r = Record::of(
                decide(verdict, Some(&entry), None),
                "slice::x".into(),
                "slice".into(),
            );
            assert_eq!(stale_line(&r), Some(17), "{}", r.message);
        }
    }
}
