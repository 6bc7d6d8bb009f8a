//! Known failures of a backend, declared in one file per backend.
//!
//! ```text
//! # Known failures of my-backend. One per line, four fields separated by ` | `:
//! # <selector> | <clause id> | <class> | <one-line reason>
//! # a name ending in `*` matches every trial that starts with the rest.
//! slice::reflect::reflect_d2::* | slice.reflect.mirror | semantics | Pad reflect pads at most d-1 per side
//! shuffle::dtypes::int4_* | shuffle.dtype.listed | adapter | int4 is not implemented yet
//! # every trial whose case cites the clause, or those of them under a prefix:
//! clause | slice.coordinates.any-stride | adapter | zero strides are not mapped
//! clause in slice::fill::* | slice.fill.value | semantics | the fill value is cast first
//! ```
//! A selector is a trial name, a `prefix*`, `clause` (every trial whose case cites the entry's
//! clause) or `clause in <name or prefix*>` (those of them it matches). Every trial that a
//! name or prefix matches must cite the entry's clause: one that does not is an error naming
//! the line ([`Expectations::check`]), since the entry would then claim a difference the case
//! does not test.
//! Every entry names the clause of `specs/*.clauses.yaml` the backend breaks (an unknown id, or
//! a clause of another op than the one the name starts with, is an error), and one class:
//!
//! - `semantics`: the engine's semantics differ from TensorRT's (a documented behaviour of its own);
//! - `defect`: a defect of the engine (it breaks its own documented behaviour);
//! - `adapter`: the adapter's own limit (what its mapping onto the engine does not cover);
//! - `untriaged`: a failure not yet looked at (`runner update-expectations` writes it); a run
//!   in which one covers a trial is no pass.
//!
//! The engine adapters' files (`runner/backends/*/known-failures.txt`) are what
//! `scripts/engines/engines_md.py` turns into `docs/engines.md`.
//! A known failure that fails is reported as ignored with its reason; one that passes is a
//! failure ("stale": remove the entry); an entry that matches no case is a failure too.
//!
//! An entry may end with a condition on the run's facts ([`crate::backend::facts`]: the engine, its
//! version, the OS and CPU), as a last field that starts with `if`:
//! ```text
//! slice::dtypes::fp8_* | slice.data.bits-unchanged | defect | Pad drops the sign of -0 (repro/pad_fp8_negative_zero.py) | if cpu_flags lacks avx512_fp16
//! ```
//! A field after the reason that looks like a condition but is not one (`If`, `IF`, `iff`, a
//! bare `if`) or is followed by another field is an error naming the line, never reason.
//! Such an entry covers trials only on a run where its condition holds; where it does not, its
//! trials are judged as if it were absent, and it is not stale. The selector and clause checks
//! apply to it on every run. The JSON report lists every entry with its condition and whether
//! it held.

use std::path::{Path, PathBuf};

/// The largest known-failures file read (64 MiB).
pub(crate) const EXPECTATIONS_LIMIT: u64 = 64 << 20;

use opspec::ErrorKind;

use crate::backend::facts::{Condition, ConditionError, Facts};
use opspec_spec::clauses::{Catalogue, SCOPES};
use opspec_spec::{Case, Expectation};

/// Why a backend fails a clause.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Class {
    /// The engine's semantics differ from TensorRT's.
    Semantics,
    /// A defect of the engine.
    Defect,
    /// The adapter's own limit.
    Adapter,
    /// Not yet triaged: written by `runner update-expectations` for a new failure. A run in
    /// which such an entry covers a trial is no pass.
    Untriaged,
}

impl Class {
    pub(crate) const ALL: [Class; 4] = [
        Class::Semantics,
        Class::Defect,
        Class::Adapter,
        Class::Untriaged,
    ];

    pub(crate) fn name(self) -> &'static str {
        match self {
            Class::Semantics => "semantics",
            Class::Defect => "defect",
            Class::Adapter => "adapter",
            Class::Untriaged => "untriaged",
        }
    }

    pub(crate) fn parse(text: &str) -> Option<Class> {
        Class::ALL.into_iter().find(|c| c.name() == text)
    }
}

/// One declared known failure: the entry as its line writes it, which every report names, and
/// what the matching reads of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Entry {
    /// Its line, selector, clause, class, reason and condition as written.
    pub(crate) written: EntryLine,
    /// The trial name or `prefix*` it matches; with `by_clause`, the one it is limited to, if
    /// any.
    pub(crate) pattern: Option<String>,
    /// The entry covers the trials whose cases cite its clause (`clause`, `clause in ...`).
    pub(crate) by_clause: bool,
    pub(crate) class: Class,
    /// The entry's condition, if it has one.
    pub(crate) condition: Option<Condition>,
    /// Whether the condition held on the run's facts ([`Expectations::resolve`]); true for an
    /// entry without one.
    pub(crate) holds: bool,
    /// The facts the condition tests that the run did not know.
    pub(crate) unknown_facts: Vec<String>,
}

/// An expectations entry as its line writes it: what a known failure's record names
/// ([`crate::judge::record::Record::known`]), and what the JSON report lists of every entry
/// (`expectation_entries`, with whether it held) and of the entries that matched
/// (`known_failure_entries`, with their trials). One shape from the file to every report.
#[derive(
    Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
pub(crate) struct EntryLine {
    /// The entry's line in the expectations file.
    pub(crate) line: usize,
    /// The entry's selector (a trial name, `prefix*`, `clause` or `clause in ...`); empty in
    /// a report written before it was recorded.
    #[serde(default)]
    pub(crate) selector: String,
    /// The clause the backend breaks.
    pub(crate) clause: String,
    /// `semantics`, `defect`, `adapter` or `untriaged` ([`Class::name`]).
    pub(crate) class: String,
    pub(crate) reason: String,
    /// The entry's condition on the run's facts, as written, if it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) condition: Option<String>,
}

impl Entry {
    /// The entry of line `line` (its condition not yet resolved on a run's facts).
    pub(crate) fn new(
        line: usize,
        pattern: Option<String>,
        by_clause: bool,
        clause: String,
        class: Class,
        reason: String,
        condition: Option<Condition>,
    ) -> Entry {
        let selector = match (&pattern, by_clause) {
            (Some(pattern), false) => pattern.clone(),
            (Some(pattern), true) => format!("clause in {pattern}"),
            (None, _) => "clause".to_owned(),
        };
        Entry {
            written: EntryLine {
                line,
                selector,
                clause,
                class: class.name().to_owned(),
                reason,
                condition: condition.as_ref().map(|c| c.text.clone()),
            },
            pattern,
            by_clause,
            class,
            condition,
            holds: true,
            unknown_facts: Vec::new(),
        }
    }

    pub(crate) fn line(&self) -> usize {
        self.written.line
    }

    pub(crate) fn clause(&self) -> &str {
        &self.written.clause
    }

    pub(crate) fn reason(&self) -> &str {
        &self.written.reason
    }

    /// Whether the entry covers a trial named `trial` whose case cites `clauses`, whether or
    /// not its condition holds.
    pub(crate) fn matches(&self, trial: &str, clauses: &[String]) -> bool {
        let named = self
            .pattern
            .as_deref()
            .map_or(true, |pattern| name_matches(pattern, trial));
        named && (!self.by_clause || clauses.contains(&self.written.clause))
    }

    /// The selector as the file writes it.
    pub(crate) fn selector(&self) -> &str {
        &self.written.selector
    }
}

/// A trial name, or a `prefix*` of one, matches `trial`.
fn name_matches(pattern: &str, trial: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some(prefix) => trial.starts_with(prefix),
        None => trial == pattern,
    }
}

/// A trial as the expectations see it: its name and the clauses its case cites.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct TrialClauses {
    pub(crate) name: String,
    pub(crate) clauses: Vec<String>,
}

/// A problem with an expectations file; `line` is 1-based.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub(crate) enum ExpectationsError {
    #[error("cannot read expectations file {}: {message}", path.display())]
    Read { path: PathBuf, message: String },
    #[error("line {line}: expected `<selector> | <clause id> | <class> | <reason>`, got {text:?}")]
    Fields { line: usize, text: String },
    #[error("line {line}: field `{field}` is empty")]
    Empty { line: usize, field: &'static str },
    #[error("line {line}: unknown class `{class}` (one of semantics, defect, adapter, untriaged)")]
    Class { line: usize, class: String },
    #[error(
        "line {line}: unknown clause `{clause}` (not in the specs' *.clauses.yaml){suggestion}"
    )]
    UnknownClause {
        line: usize,
        clause: String,
        /// ` (did you mean ...?)` or empty.
        suggestion: String,
    },
    #[error(
        "line {line}: clause `{clause}` is a clause of `{scope}`, but the trial name is of `{op}`"
    )]
    OtherOp {
        line: usize,
        clause: String,
        scope: String,
        op: String,
    },
    #[error(
        "line {line}: `{pattern}` matches trial {trial}, whose case does not cite clause `{clause}` (it cites {}); key the entry by a clause the trial tests, or narrow the selector",
        if cites.is_empty() { "none".to_owned() } else { cites.join(", ") }
    )]
    NotCited {
        line: usize,
        pattern: String,
        clause: String,
        trial: String,
        cites: Vec<String>,
    },
    #[error("line {line}: `clause in` needs a trial name or `prefix*` after it")]
    EmptyWithin { line: usize },
    #[error("line {line}: {error}")]
    Condition { line: usize, error: ConditionError },
    /// A field after the reason that looks like a condition but is not one.
    #[error("line {line}: {problem}")]
    ConditionField { line: usize, problem: String },
    #[error("{}: {source}", path.display())]
    In {
        path: PathBuf,
        source: Box<ExpectationsError>,
    },
}

/// A field after the reason that looks like a condition: its first word is `if` in any case,
/// `iff`, or `if` run into punctuation (`if(`). The word when it is one.
fn condition_word(field: &str) -> Option<&str> {
    let word = field.split_whitespace().next()?;
    let lower = word.to_ascii_lowercase();
    let punctuated = (lower.strip_prefix("if"))
        .is_some_and(|rest| rest.starts_with(|c: char| !c.is_ascii_alphanumeric()));
    (lower == "if" || lower == "iff" || punctuated).then_some(word)
}

/// An entry line split before its condition: the text up to the reason's end, and the
/// condition's text; `None` when no field after the reason looks like a condition
/// ([`condition_word`]). A field that looks like one but is not written `if <condition>`, or
/// one followed by another field, is an error: joined to the reason, it would make the entry
/// hold on every run.
fn split_condition(text: &str, line: usize) -> Result<Option<(&str, &str)>, ExpectationsError> {
    // The `|` before each field past the first.
    let bars: Vec<usize> = text.match_indices('|').map(|(at, _)| at).collect();
    // The reason is the fourth field: a condition may start at the fifth.
    for (index, &at) in bars.iter().enumerate().skip(3) {
        let end = bars.get(index + 1).copied().unwrap_or(text.len());
        let field = &text[at + 1..end];
        let Some(word) = condition_word(field) else {
            continue;
        };
        let shown = field.trim().chars().take(60).collect::<String>();
        let problem = if word != "if" {
            format!(
                "`{shown}` looks like a condition but starts with `{word}`: write it `| if <condition>`, with `if` in lower case"
            )
        } else if end != text.len() {
            format!(
                "the condition `{shown}` is followed by another field (`{}`): the condition is the entry's last field",
                text[end + 1..].trim().chars().take(60).collect::<String>()
            )
        } else {
            let condition = field.trim_start()["if".len()..].trim();
            return Ok(Some((text[..at].trim_end(), condition)));
        };
        return Err(ExpectationsError::ConditionField { line, problem });
    }
    Ok(None)
}

impl From<ExpectationsError> for String {
    fn from(error: ExpectationsError) -> String {
        error.to_string()
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Expectations {
    pub(crate) entries: Vec<Entry>,
    /// The catalogue's clauses that name an error kind: `(scope, kind, id)`. A case that
    /// expects an error cites the clauses of its kind, besides its own ([`Self::cited`]).
    error_clauses: Vec<(String, ErrorKind, String)>,
}

impl Expectations {
    /// Reads a file and checks its clause ids against the catalogue of this repository's
    /// `specs/` and of the folders in `OPSPEC_SPECS`, if set.
    pub(crate) fn load(path: &Path, builtin: &Path) -> Result<Expectations, ExpectationsError> {
        Self::load_with(path, &Self::catalogue(builtin))
    }

    /// The clause catalogue of the checkout's `specs/` (`builtin`) and of the folders in
    /// `OPSPEC_SPECS`, if set: the one [`Self::load`] checks a file against.
    pub(crate) fn catalogue(builtin: &Path) -> Catalogue {
        let mut dirs = vec![builtin.to_path_buf()];
        if let Some(extra) = std::env::var_os("OPSPEC_SPECS").filter(|v| !v.is_empty()) {
            dirs.extend(std::env::split_paths(&extra));
        }
        // A folder without catalogues only adds "no clause catalogue" problems: the ids it
        // does hold still count, and an unknown id is reported by the check below.
        let (catalogue, _) = Catalogue::load(&dirs);
        catalogue
    }

    /// Reads a file (a regular file of at most [`EXPECTATIONS_LIMIT`] bytes) and checks its
    /// clause ids against `catalogue`.
    pub(crate) fn load_with(
        path: &Path,
        catalogue: &Catalogue,
    ) -> Result<Expectations, ExpectationsError> {
        let read = |message: String| ExpectationsError::Read {
            path: path.to_owned(),
            message,
        };
        // Only a regular file is read, and only so much of it: a FIFO would wait for a
        // writer, `/dev/zero` would fill the memory.
        let bytes =
            opspec_spec::source::read_bounded(path, EXPECTATIONS_LIMIT).map_err(|message| {
                read(message.replace(&format!("cannot read {}: ", path.display()), ""))
            })?;
        let text =
            String::from_utf8(bytes).map_err(|e| read(format!("it is not UTF-8 text ({e})")))?;
        Self::parse(&text, catalogue).map_err(|e| ExpectationsError::In {
            path: path.to_owned(),
            source: Box::new(e),
        })
    }

    pub(crate) fn parse(
        text: &str,
        catalogue: &Catalogue,
    ) -> Result<Expectations, ExpectationsError> {
        // A byte-order mark (an editor's UTF-8 signature) is not part of the first selector.
        let text = text.strip_prefix('\u{FEFF}').unwrap_or(text);
        let mut entries = Vec::new();
        for (index, raw) in text.lines().enumerate() {
            let line = index + 1;
            let trimmed = raw.trim();
            if trimmed.is_empty() || trimmed.starts_with('#') {
                continue;
            }
            // The reason is the rest of the line, so it may hold ` | ` itself, but for a field
            // after it that starts with `if`: the condition, which is the last field.
            let (trimmed, condition) = match split_condition(trimmed, line)? {
                Some((before, text)) => {
                    let condition = Condition::parse(text)
                        .map_err(|error| ExpectationsError::Condition { line, error })?;
                    (before, Some(condition))
                }
                None => (trimmed, None),
            };
            let fields: Vec<&str> = trimmed.splitn(4, '|').map(str::trim).collect();
            let [pattern, clause, class, reason] = fields[..] else {
                return Err(ExpectationsError::Fields {
                    line,
                    text: trimmed.to_owned(),
                });
            };
            for (field, value) in [
                ("selector", pattern),
                ("clause id", clause),
                ("class", class),
                ("reason", reason),
            ] {
                if value.is_empty() {
                    return Err(ExpectationsError::Empty { line, field });
                }
            }
            let class = Class::parse(class).ok_or_else(|| ExpectationsError::Class {
                line,
                class: class.to_owned(),
            })?;
            let Some(found) = catalogue.get(clause) else {
                return Err(ExpectationsError::UnknownClause {
                    line,
                    clause: clause.to_owned(),
                    suggestion: opspec_spec::did_you_mean(
                        clause,
                        catalogue.iter().map(|c| c.id.as_str()),
                    ),
                });
            };
            let (by_clause, pattern) = match pattern.strip_prefix("clause") {
                Some("") => (true, None),
                Some(rest) if rest.starts_with(' ') => match rest.trim().strip_prefix("in") {
                    Some(within) if within.starts_with(' ') => (true, Some(within.trim())),
                    Some("") => return Err(ExpectationsError::EmptyWithin { line }),
                    _ => (false, Some(pattern)),
                },
                _ => (false, Some(pattern)),
            };
            let op = pattern
                .and_then(|p| p.split("::").next())
                .unwrap_or_default();
            if SCOPES.contains(&op) && found.scope != op && found.scope != "common" {
                return Err(ExpectationsError::OtherOp {
                    line,
                    clause: clause.to_owned(),
                    scope: found.scope.clone(),
                    op: op.to_owned(),
                });
            }
            entries.push(Entry::new(
                line,
                pattern.map(str::to_owned),
                by_clause,
                clause.to_owned(),
                class,
                reason.to_owned(),
                condition,
            ));
        }
        let error_clauses = catalogue
            .iter()
            .filter_map(|c| c.error.map(|kind| (c.scope.clone(), kind, c.id.clone())))
            .collect();
        Ok(Expectations {
            entries,
            error_clauses,
        })
    }

    /// The clauses a case cites, as entries are matched against: its own, and, for a case
    /// that expects an error, the clauses of its op (or common ones) that name that error's
    /// kind (a bfloat16 sweep case in CLAMP mode expects `unsupported_dtype` under the dtype
    /// clause that its `clauses` need not repeat).
    pub(crate) fn cited(&self, case: &Case) -> Vec<String> {
        let mut cited = case.clauses.clone();
        if let Expectation::Error { kind, .. } = &case.expect {
            let op = case.op.name();
            cited.extend(
                (self.error_clauses.iter())
                    .filter(|(scope, k, _)| k == kind && (scope == op || scope == "common"))
                    .map(|(_, _, id)| id.clone()),
            );
        }
        cited
    }

    /// Evaluates each entry's condition on the run's facts: an entry whose condition does not
    /// hold covers no trial of the run.
    pub(crate) fn resolve(&mut self, facts: &Facts) {
        for entry in &mut self.entries {
            if let Some(condition) = &entry.condition {
                let evaluation = condition.evaluate(facts);
                entry.holds = evaluation.holds;
                entry.unknown_facts = evaluation.unknown;
            }
        }
    }

    /// The first entry that holds and covers a trial named `trial` whose case cites `clauses`.
    pub(crate) fn lookup(&self, trial: &str, clauses: &[String]) -> Option<&Entry> {
        self.entries
            .iter()
            .find(|entry| entry.holds && entry.matches(trial, clauses))
    }

    /// Entries that match none of `trials`.
    pub(crate) fn unmatched<'a>(&'a self, trials: &[TrialClauses]) -> Vec<&'a Entry> {
        self.entries
            .iter()
            .filter(|entry| !trials.iter().any(|t| entry.matches(&t.name, &t.clauses)))
            .collect()
    }

    /// Checks every entry keyed by name against the trials it matches: each must cite the
    /// entry's clause. The error lists every entry that matches one that does not (with the
    /// first such trial), one a line.
    pub(crate) fn check(&self, trials: &[TrialClauses]) -> Result<(), Vec<ExpectationsError>> {
        let mut errors = Vec::new();
        for entry in self.entries.iter().filter(|e| !e.by_clause) {
            let Some(pattern) = &entry.pattern else {
                continue;
            };
            let stray = trials.iter().find(|t| {
                name_matches(pattern, &t.name) && !t.clauses.iter().any(|c| c == entry.clause())
            });
            if let Some(trial) = stray {
                errors.push(ExpectationsError::NotCited {
                    line: entry.line(),
                    pattern: pattern.clone(),
                    clause: entry.clause().to_owned(),
                    trial: trial.name.clone(),
                    // Each clause once: a case may cite one itself and through its error kind.
                    cites: trial.clauses.iter().fold(Vec::new(), |mut once, clause| {
                        if !once.contains(clause) {
                            once.push(clause.clone());
                        }
                        once
                    }),
                });
            }
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn builtin() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../specs")
    }

    fn catalogue() -> Catalogue {
        let (catalogue, errors) =
            Catalogue::load(&[PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../specs")]);
        assert!(errors.is_empty(), "{errors:?}");
        catalogue
    }

    #[test]
    fn parses_exact_and_prefix_entries() {
        let e = Expectations::parse(
            "# comment\n\nslice::a::b::float16 | slice.reflect.mirror | semantics | off by one\n\
             shuffle::dtypes::* | shuffle.dtype.listed | adapter | no int4 | not yet\n",
            &catalogue(),
        )
        .unwrap();
        assert_eq!(e.entries.len(), 2);
        let cites = |clause: &str| vec![clause.to_owned()];
        let first = e
            .lookup("slice::a::b::float16", &cites("slice.reflect.mirror"))
            .unwrap();
        assert_eq!(first.reason(), "off by one");
        assert_eq!(first.clause(), "slice.reflect.mirror");
        assert_eq!(first.class, Class::Semantics);
        assert!(e
            .lookup("slice::a::b::float32", &cites("slice.reflect.mirror"))
            .is_none());
        let second = e
            .lookup("shuffle::dtypes::x::int4", &cites("shuffle.dtype.listed"))
            .unwrap();
        assert_eq!(second.line(), 4);
        assert_eq!(second.class, Class::Adapter);
        assert_eq!(second.reason(), "no int4 | not yet");
        let trials = vec![TrialClauses {
            name: "slice::a::b::float16".to_owned(),
            clauses: cites("slice.reflect.mirror"),
        }];
        assert_eq!(e.unmatched(&trials)[0].selector(), "shuffle::dtypes::*");
    }

    /// A file saved with a byte-order mark: the mark is not part of the first selector.
    #[test]
    fn a_byte_order_mark_is_not_part_of_the_first_selector() {
        let e = Expectations::parse(
            "\u{FEFF}slice::a::b::float16 | slice.reflect.mirror | semantics | off by one\n",
            &catalogue(),
        )
        .unwrap();
        assert_eq!(e.entries[0].selector(), "slice::a::b::float16");
        let cites = ["slice.reflect.mirror".to_owned()];
        assert!(e.lookup("slice::a::b::float16", &cites).is_some());
    }

    /// A trial citing a clause twice (in its case and through its error kind) lists it once
    /// in an error.
    #[test]
    fn an_expectations_error_lists_each_clause_once() {
        let e = Expectations::parse(
            "slice::a::* | slice.reflect.mirror | semantics | x\n",
            &catalogue(),
        )
        .unwrap();
        let twice = trial(
            "slice::a::b::int8",
            &["slice.clamp.bounds", "slice.clamp.bounds"],
        );
        let errors = e.check(&[twice]).unwrap_err();
        let message = errors[0].to_string();
        assert_eq!(
            message.matches("slice.clamp.bounds").count(),
            1,
            "{message}"
        );
    }

    fn trial(name: &str, clauses: &[&str]) -> TrialClauses {
        TrialClauses {
            name: name.to_owned(),
            clauses: clauses.iter().map(|c| c.to_string()).collect(),
        }
    }

    #[test]
    fn clause_selectors_cover_the_trials_citing_the_clause() {
        let e = Expectations::parse(
            "clause | slice.reflect.mirror | semantics | every reflect\n\
             clause in shuffle::dtypes::* | shuffle.dtype.listed | adapter | dtypes only\n",
            &catalogue(),
        )
        .unwrap();
        assert_eq!(e.entries[0].selector(), "clause");
        assert_eq!(e.entries[1].selector(), "clause in shuffle::dtypes::*");
        let reflect = trial("slice::reflect::a::int8", &["slice.reflect.mirror"]);
        assert_eq!(e.lookup(&reflect.name, &reflect.clauses).unwrap().line(), 1);
        // The same name without the clause is not covered.
        assert!(e.lookup(&reflect.name, &[]).is_none());
        let listed = trial("shuffle::dtypes::x::int4", &["shuffle.dtype.listed"]);
        assert_eq!(e.lookup(&listed.name, &listed.clauses).unwrap().line(), 2);
        let elsewhere = trial("shuffle::other::x::int4", &["shuffle.dtype.listed"]);
        assert!(e.lookup(&elsewhere.name, &elsewhere.clauses).is_none());
        assert!(e.check(&[reflect, listed, elsewhere]).is_ok());
        assert_eq!(
            Expectations::parse(
                "clause in | slice.reflect.mirror | semantics | x",
                &catalogue()
            )
            .unwrap_err(),
            ExpectationsError::EmptyWithin { line: 1 }
        );
    }

    #[test]
    fn an_entry_whose_trials_do_not_cite_its_clause_is_refused() {
        let e = Expectations::parse(
            "slice::coordinates::* | slice.coordinates.any-stride | semantics | zero strides\n",
            &catalogue(),
        )
        .unwrap();
        let trials = [
            trial(
                "slice::coordinates::zero::int8",
                &["slice.coordinates.any-stride"],
            ),
            trial(
                "slice::coordinates::plain::int8",
                &["slice.coordinates.formula"],
            ),
        ];
        assert_eq!(
            e.check(&trials).unwrap_err()[0].to_string(),
            "line 1: `slice::coordinates::*` matches trial slice::coordinates::plain::int8, whose \
             case does not cite clause `slice.coordinates.any-stride` (it cites \
             slice.coordinates.formula); key the entry by a clause the trial tests, or narrow the \
             selector"
        );
        assert!(e.check(&trials[..1]).is_ok());
    }

    fn facts(vendor: &str, flags: &[&str]) -> Facts {
        Facts {
            engine: Some("openvino".into()),
            version: Some("2026.4.1".into()),
            os: Some("linux".into()),
            cpu_vendor: Some(vendor.into()),
            cpu_flags: flags.iter().map(|f| f.to_string()).collect(),
            ..Facts::default()
        }
    }

    #[test]
    fn a_last_field_starting_with_if_is_the_condition() {
        let mut e = Expectations::parse(
            "slice::a::* | slice.reflect.mirror | defect | drops -0 | not always | if cpu_vendor == AuthenticAMD\n\
             slice::b::* | slice.reflect.mirror | defect | if only | everywhere\n",
            &catalogue(),
        )
        .unwrap();
        assert_eq!(e.entries[0].reason(), "drops -0 | not always");
        let condition = e.entries[0].condition.as_ref().unwrap();
        assert_eq!(condition.text, "cpu_vendor == AuthenticAMD");
        // `if` in the reason itself, not as the last field, is reason.
        assert_eq!(e.entries[1].reason(), "if only | everywhere");
        assert!(e.entries[1].condition.is_none());
        let cites = ["slice.reflect.mirror".to_owned()];
        e.resolve(&facts("GenuineIntel", &["amx_tile"]));
        assert!(e.lookup("slice::a::x", &cites).is_none());
        assert!(e.lookup("slice::b::x", &cites).is_some());
        e.resolve(&facts("AuthenticAMD", &[]));
        assert_eq!(e.lookup("slice::a::x", &cites).unwrap().line(), 1);
        assert_eq!(
            Expectations::parse(
                "slice::a | slice.reflect.mirror | defect | why | if cpu_vendor is amd",
                &catalogue()
            )
            .unwrap_err()
            .to_string(),
            "line 1: condition `cpu_vendor is amd`: unknown relation `is` (one of ==, !=, <, <=, >, >=, has, lacks)"
        );
    }

    /// A field after the reason that looks like a condition but is mistyped, or is followed
    /// by another field, is an error naming the line: joined to the reason, it would make the
    /// entry hold on every run.
    #[test]
    fn a_mistyped_condition_is_an_error_not_part_of_the_reason() {
        let c = catalogue();
        let err = |last: &str| {
            let text = format!("# c\nslice::a | slice.reflect.mirror | defect | why | {last}\n");
            Expectations::parse(&text, &c).unwrap_err()
        };
        for last in [
            "If os == windows",
            "IF os == windows",
            "iff os == windows",
            "if(os == windows)",
        ] {
            let e = err(last);
            assert!(
                matches!(e, ExpectationsError::ConditionField { line: 2, .. }),
                "{last}: {e}"
            );
            assert!(e.to_string().contains("write it `| if <condition>`"), "{e}");
        }
        // `if` then a tab, or nothing: a condition, and an empty one is refused.
        for last in ["if", "if\t", "if "] {
            let e = err(last).to_string();
            assert_eq!(e, "line 2: condition ``: it is empty", "{last:?}");
        }
        let e = Expectations::parse(
            "slice::a | slice.reflect.mirror | defect | why | if\tos == windows\n",
            &c,
        )
        .unwrap();
        assert_eq!(
            e.entries[0].condition.as_ref().unwrap().text,
            "os == windows"
        );
        assert_eq!(e.entries[0].reason(), "why");
        let e = err("if os == windows | more words").to_string();
        assert_eq!(
            e,
            "line 2: the condition `if os == windows` is followed by another field (`more words`): the condition is the entry's last field"
        );
        // Words that merely start with the letters are reason.
        let e = Expectations::parse(
            "slice::a | slice.reflect.mirror | defect | why | iffy on AMD | ifdef'd out\n",
            &c,
        )
        .unwrap();
        assert_eq!(e.entries[0].reason(), "why | iffy on AMD | ifdef'd out");
        assert!(e.entries[0].condition.is_none());
        // Through a file, the message names it.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("k.txt");
        std::fs::write(
            &path,
            "slice::a | slice.reflect.mirror | defect | why | If os == x\n",
        )
        .unwrap();
        let message = Expectations::load(&path, &builtin())
            .unwrap_err()
            .to_string();
        assert!(
            message.starts_with(&format!("{}: line 1: ", path.display())),
            "{message}"
        );
    }

    /// OpenVINO's fp8 Pad entries hold where oneDNN may not use the AVX512_CORE_FP16 ISA: a CPU
    /// without avx512_fp16 (the AMD EPYC, an Intel CPU of AVX2 only), or a CPU plugin that lists
    /// no FP16 capability (an Intel Xeon with avx512_fp16 under ONEDNN_MAX_CPU_ISA below it); an
    /// Intel Xeon with avx512_fp16 and the FP16 capability keeps -0, whatever its vendor says
    /// (repro/pad_fp8_negative_zero.py --settings).
    #[test]
    fn the_openvino_fp8_entries_hold_without_the_fp16_isa() {
        let path =
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("backends/openvino/known-failures.txt");
        let mut e = Expectations::load_with(&path, &catalogue()).unwrap();
        let conditional = |e: &Expectations| -> (usize, usize) {
            let with: Vec<&Entry> = e.entries.iter().filter(|x| x.condition.is_some()).collect();
            (with.len(), with.iter().filter(|x| x.holds).count())
        };
        let with_engine_flags = |mut f: Facts, engine_flags: &[&str]| {
            f.engine_flags = engine_flags.iter().map(|f| f.to_string()).collect();
            f
        };
        let zen4 = facts("AuthenticAMD", &["avx512_bf16", "avx512f"]);
        e.resolve(&with_engine_flags(zen4, &["BF16", "FP32", "INT8"]));
        assert_eq!(conditional(&e), (18, 18));
        let xeon = facts(
            "GenuineIntel",
            &["amx_tile", "avx512_bf16", "avx512_fp16", "avx512f"],
        );
        e.resolve(&with_engine_flags(
            xeon.clone(),
            &["BF16", "FP16", "FP32", "INT8"],
        ));
        assert_eq!(conditional(&e), (18, 0));
        e.resolve(&with_engine_flags(xeon, &["BF16", "FP32", "INT8"]));
        assert_eq!(conditional(&e), (18, 18));
        e.resolve(&with_engine_flags(
            facts("GenuineIntel", &["avx2"]),
            &["FP32"],
        ));
        assert_eq!(conditional(&e), (18, 18));
    }

    #[test]
    fn common_clauses_apply_to_every_op() {
        let e = Expectations::parse(
            "scale::x::* | common.budget.too-large | adapter | smaller budget\n",
            &catalogue(),
        )
        .unwrap();
        assert_eq!(e.entries[0].clause(), "common.budget.too-large");
    }

    #[test]
    fn malformed_lines_are_named() {
        let c = catalogue();
        let err = |text: &str| Expectations::parse(text, &c).unwrap_err().to_string();
        // The old two-field format lacks the clause and the class.
        assert_eq!(
            err("slice::a::b: off by one"),
            "line 1: expected `<selector> | <clause id> | <class> | <reason>`, got \"slice::a::b: off by one\""
        );
        assert_eq!(
            err("# c\nslice::a | slice.reflect.mirror | semantics |  "),
            "line 2: field `reason` is empty"
        );
        assert_eq!(
            err("slice::a |  | semantics | why"),
            "line 1: field `clause id` is empty"
        );
        assert_eq!(
            err("slice::a | slice.reflect.mirror | bug | why"),
            "line 1: unknown class `bug` (one of semantics, defect, adapter, untriaged)"
        );
    }

    #[test]
    fn unknown_clauses_and_clauses_of_other_ops_are_errors() {
        let c = catalogue();
        assert_eq!(
            Expectations::parse("slice::a | slice.no-such.rule | defect | why", &c).unwrap_err(),
            ExpectationsError::UnknownClause {
                line: 1,
                clause: "slice.no-such.rule".into(),
                suggestion: String::new(),
            }
        );
        assert_eq!(
            Expectations::parse("slice::a | slice.reflect.mirorr | defect | why", &c)
                .unwrap_err()
                .to_string(),
            "line 1: unknown clause `slice.reflect.mirorr` (not in the specs' *.clauses.yaml) (did you mean `slice.reflect.mirror`?)"
        );
        assert_eq!(
            Expectations::parse("slice::a | shuffle.dtype.listed | defect | why", &c)
                .unwrap_err()
                .to_string(),
            "line 1: clause `shuffle.dtype.listed` is a clause of `shuffle`, but the trial name is of `slice`"
        );
    }

    #[test]
    fn load_names_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.expect");
        std::fs::write(&path, "slice::a | slice.nope | defect | why\n").unwrap();
        let message = Expectations::load(&path, &builtin())
            .unwrap_err()
            .to_string();
        assert_eq!(
            message,
            format!(
                "{}: line 1: unknown clause `slice.nope` (not in the specs' *.clauses.yaml)",
                path.display()
            )
        );
        let missing =
            Expectations::load(&dir.path().join("absent.expect"), &builtin()).unwrap_err();
        assert!(
            matches!(missing, ExpectationsError::Read { .. }),
            "{missing}"
        );
    }
}
