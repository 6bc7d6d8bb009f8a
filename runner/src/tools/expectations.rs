//! `runner expectations`: a known-failures file listed as the runner reads it
//! (`crate::judge::expectations`), with its conditions evaluated on a run's facts.

use crate::backend::facts::Facts;
use std::path::Path;

use crate::judge::expectations::{EntryLine, Expectations, EXPECTATIONS_LIMIT};

/// An entry as `runner expectations` lists it: what the file says, and whether its condition
/// holds on the facts given (`held` is absent for a condition not evaluated).
#[derive(Debug, serde::Serialize)]
struct Listed<'a> {
    #[serde(flatten)]
    entry: &'a EntryLine,
    #[serde(skip_serializing_if = "Option::is_none")]
    held: Option<bool>,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    unknown_facts: &'a [String],
}

/// What `runner expectations FILE [--facts REPORT] --json` prints.
#[derive(Debug, serde::Serialize)]
struct Listing<'a> {
    file: String,
    /// The fingerprint a run's report records for this file (`run.expectations`): a report made
    /// with another version of the file has another.
    fingerprint: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    facts: Option<&'a Facts>,
    entries: Vec<Listed<'a>>,
}

/// `runner expectations FILE [--facts REPORT.json] [--json]`: every entry of a known-failures
/// file as the runner reads it (selector, clause, class, reason, line, condition), checked
/// against the catalogue of `builtin` (and `OPSPEC_SPECS`), and, given the JSON report of a run,
/// whether each condition holds on that run's facts. Scripts read the file through this, never
/// by parsing it again. Exit 0; 2 when the file or the report cannot be read or the file is
/// malformed.
pub fn list_main(
    file: &Path,
    facts_report: Option<&Path>,
    json: bool,
    builtin: &Path,
) -> std::process::ExitCode {
    let fail = |message: String| {
        eprintln!("error: {message}");
        std::process::ExitCode::from(2)
    };
    let mut expectations = match Expectations::load(file, builtin) {
        Ok(expectations) => expectations,
        Err(e) => return fail(e.to_string()),
    };
    let facts = match facts_report.map(crate::reports::report::read).transpose() {
        Ok(report) => report.map(|r| r.context.facts),
        Err(e) => return fail(e.to_string()),
    };
    if let Some(facts) = &facts {
        expectations.resolve(facts);
    }
    let bytes = opspec_spec::source::read_bounded(file, EXPECTATIONS_LIMIT).unwrap_or_default();
    let listing = Listing {
        file: file.display().to_string(),
        fingerprint: crate::reports::merge::bytes_fingerprint(&bytes),
        facts: facts.as_ref(),
        entries: (expectations.entries.iter())
            .map(|entry| Listed {
                entry: &entry.written,
                held: match (&entry.condition, &facts) {
                    (None, _) => Some(true),
                    (Some(_), Some(_)) => Some(entry.holds),
                    (Some(_), None) => None,
                },
                unknown_facts: &entry.unknown_facts,
            })
            .collect(),
    };
    // A closed pipe (`| head`) ends the listing, not the process with a panic.
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    if json {
        let text = serde_json::to_string_pretty(&listing).expect("listings serialize");
        let _ = writeln!(out, "{text}");
    } else {
        for listed in &listing.entries {
            let entry = listed.entry;
            let condition = match (&entry.condition, listed.held) {
                (None, _) => String::new(),
                (Some(c), Some(true)) => format!(" | if {c}  [holds]"),
                (Some(c), Some(false)) => format!(" | if {c}  [does not hold]"),
                (Some(c), None) => format!(" | if {c}  [not evaluated: no --facts]"),
            };
            let _ = writeln!(
                out,
                "{}: {} | {} | {} | {}{condition}",
                entry.line, entry.selector, entry.clause, entry.class, entry.reason
            );
        }
    }
    std::process::ExitCode::SUCCESS
}
