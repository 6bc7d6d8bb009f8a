//! `runner report A.json B.json ... --html FILE`: the JSON reports of runs against several
//! backends (engines) on one self-contained HTML page.
//!
//! The page holds everything it shows (inline CSS; no script, image, font or link to load), so
//! that it can be kept as a CI artifact and opened offline. The matrix has a row per op and
//! dtype and a column per report; a cell counts its trials per status and links to its
//! drill-down below the matrix: a closed `<details>` listing each trial with the clauses its case
//! names (and, for a known failure, the clause the known-failures entry says it breaks), why it
//! did not pass, and the command that replays it. The link opens the drill-down without any
//! script: a browser opens a closed `<details>` holding the target of the fragment it navigates
//! to (HTML Living Standard, "scroll to the fragment": the ancestor details revealing
//! algorithm).
//!
//! The page opens on what needs attention: the totals of each report, then the failing trials
//! grouped by clause (each trial once, under the clause of its case that the most failing trials
//! cite), the first group open. The matrix comes next, then the trials each declaration of an
//! engine's hello excluded (its op, a dtype, an attribute value, a target: docs/protocol.md,
//! "What the runner does with a hello"), a column per engine. The trials of ops a hello does not
//! declare (excluded by `op X`) are counted but not listed unless asked
//! ([`PageOptions::show_undeclared`], `runner report --show-undeclared`): for an engine of two
//! ops they are most of a run, and they say nothing but that the op is absent. The trials a
//! dtype, attribute value or target excluded are counted in their cells and in the exclusions
//! table, and listed only under the same option.
//!
//! When two or more reports are of one engine at different versions (the `engine` and `version`
//! facts of their hellos), the page opens, after the totals, on what changed from each version
//! to the next, in the order the reports are given: a table per engine with a row per clause and
//! a column per upgrade, counted as `runner diff` counts by clause, each count opening the list of
//! its trials (`scripts/engines/version_matrix.py` makes such a page).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::judge::record::{Record, Report};
use crate::judge::status::{Status, Tint, ROWS};
use crate::reports::report::{exclusions, read, xml_escape as escape};

/// What the page shows beyond its default.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PageOptions {
    /// List the excluded trials: those of ops an engine's hello does not declare, and those a
    /// dtype, attribute value or target excluded (by default only counted).
    pub show_undeclared: bool,
}

/// A trial excluded because the hello does not declare its op.
fn undeclared(record: &Record) -> bool {
    record.status() == Status::Excluded
        && record
            .excluded_by
            .as_deref()
            .is_some_and(|by| by.starts_with("op "))
}

/// The CSS class of a status: its name in the JSON report.
fn class(status: Status) -> &'static str {
    status.name()
}

/// The page's colours of statuses and matrix cells, from the status table (`ROWS`, `Tint`).
fn status_style() -> String {
    let mut css = String::from(":root {");
    for row in &ROWS {
        let _ = write!(css, " --{}: {};", row.name, row.colour);
    }
    css.push_str(" }\n");
    for row in &ROWS {
        let _ = writeln!(css, ".chip.{0} {{ background: var(--{0}); }}", row.name);
    }
    for tint in Tint::ALL {
        let _ = writeln!(
            css,
            "table.matrix td.{} {{ background: {}; }}",
            tint.class(),
            tint.background()
        );
    }
    css
}

const STYLE: &str = r#"
:root { --line: #d0d7de; --head: #f6f8fa; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Helvetica, Arial, sans-serif;
  color: #1f2328; margin: 24px; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 17px; margin: 28px 0 8px; }
p.lead { color: #59636e; margin: 0 0 16px; }
table { border-collapse: collapse; }
th, td { border: 1px solid var(--line); padding: 4px 8px; vertical-align: top; text-align: left; }
thead th { background: var(--head); position: sticky; top: 0; z-index: 1; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
table.summary td.n { white-space: nowrap; }
table.summary thead th { font-size: 13px; }
table.summary tbody th, table.summary td.path { max-width: 12em; overflow-wrap: anywhere; }
table.summary td.path code { font-size: 12px; }
.chip { display: inline-block; border-radius: 10px; padding: 0 7px; margin: 1px 2px 1px 0;
  font-size: 12px; color: #fff; white-space: nowrap; font-variant-numeric: tabular-nums; }
table.matrix th[scope=rowgroup] { background: var(--head); }
table.matrix td { min-width: 11em; }
table.matrix td a { display: block; text-decoration: none; }
table.matrix td.none { color: #8c959f; text-align: center; }
details.drill { border: 1px solid var(--line); border-radius: 6px; margin: 6px 0; }
details.drill > summary { padding: 6px 10px; cursor: pointer; background: var(--head); }
details.drill > summary .where { font-weight: 600; margin-right: 8px; }
details.drill[open] > summary { border-bottom: 1px solid var(--line); }
div.trials { padding: 8px 10px; scroll-margin-top: 48px; }
div.trials:target { outline: 3px solid #0969da; }
table.trials { width: 100%; font-size: 13px; }
table.trials code, details.passed p code { font-size: 12px; overflow-wrap: anywhere; }
table.trials td.name { min-width: 16em; }
ul.names { font: 12px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
  margin: 4px 0; padding-left: 18px; overflow-wrap: anywhere; }
p.clauses { font-size: 13px; }
td.reason pre { white-space: pre-wrap; font-size: 12px; margin: 4px 0; max-height: 24em;
  overflow: auto; background: var(--head); padding: 6px; }
details.passed { margin-top: 8px; }
p.problem { color: var(--failed); margin: 6px 0; }
table.failure-clauses td.failed { color: var(--failed); font-weight: 600; }
p.undeclared { color: #59636e; margin: 4px 0 8px; }
table.trials td.clauses code { white-space: nowrap; overflow-wrap: normal; }
ul.legend { list-style: none; padding: 0; margin: 8px 0 16px; }
ul.legend li { display: inline-block; margin-right: 14px; }
h3 { font-size: 15px; margin: 18px 0 6px; }
table.versions td { min-width: 13em; font-size: 13px; }
table.versions details.change > summary { cursor: pointer; }
table.versions details.worse > summary, strong.worse { color: var(--failed); }
table.versions details.better > summary { color: var(--passed); }
"#;

/// A report's column: the backend's name, and when two reports share it, the file's name (its
/// whole path when two of them share that too).
fn engine_labels(reports: &[Report]) -> Vec<String> {
    let name =
        |report: &Report| (report.path.file_name()).map(|n| n.to_string_lossy().into_owned());
    reports
        .iter()
        .map(|report| {
            let sharing: Vec<&Report> = (reports.iter())
                .filter(|r| r.backend == report.backend)
                .collect();
            let named_alike = sharing.iter().filter(|r| name(r) == name(report)).count();
            match (sharing.len(), name(report)) {
                (1, _) => report.backend.clone(),
                (_, Some(file)) if named_alike == 1 => format!("{} ({file})", report.backend),
                _ => format!("{} ({})", report.backend, report.path.display()),
            }
        })
        .collect()
}

/// Counts of each status, as chips (the statuses with none are left out).
fn chips(records: &[&Record]) -> String {
    let mut html = String::new();
    for status in Status::ALL {
        let n = records.iter().filter(|r| r.status() == status).count();
        if n > 0 {
            let _ = write!(
                html,
                "<span class=\"chip {}\" title=\"{n} {}\">{n} {}</span>",
                class(status),
                status.label(),
                status.row().short
            );
        }
    }
    html
}

/// The tint of a matrix cell: its worst status.
fn tint(records: &[&Record]) -> &'static str {
    (records.iter())
        .map(|r| r.status().row().tint)
        .min()
        .unwrap_or(Tint::Skip)
        .class()
}

/// An id made of `parts`, readable, and unique among `taken`.
fn unique_id(parts: &[&str], taken: &mut BTreeSet<String>) -> String {
    let base: String = parts
        .iter()
        .map(|part| {
            part.chars()
                .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("-");
    let mut id = format!("t-{base}");
    let mut n = 1;
    while !taken.insert(id.clone()) {
        n += 1;
        id = format!("t-{base}-{n}");
    }
    id
}

/// The trials of one cell (one op, dtype and report), keyed by op and dtype (`None` first).
type Cells<'a> = BTreeMap<(&'a str, Option<&'a str>), Vec<Vec<&'a Record>>>;

fn cells(reports: &[Report], options: PageOptions) -> Cells<'_> {
    let mut cells: Cells = BTreeMap::new();
    for (index, report) in reports.iter().enumerate() {
        for record in &report.trials {
            if undeclared(record) && !options.show_undeclared {
                continue;
            }
            let row = cells
                .entry((&record.op, record.dtype.as_deref()))
                .or_insert_with(|| vec![Vec::new(); reports.len()]);
            row[index].push(record);
        }
    }
    cells
}

fn code_list(items: &[String]) -> String {
    items
        .iter()
        .map(|item| format!("<code>{}</code>", escape(item)))
        .collect::<Vec<_>>()
        .join("<br>")
}

/// The clauses column of a trial: the clause a known failure breaks, then its case's clauses.
fn clauses(record: &Record) -> String {
    let mut html = String::new();
    if let Some(known) = &record.known {
        let _ = write!(
            html,
            "breaks <code>{}</code> ({})",
            escape(&known.clause),
            escape(&known.class)
        );
        if !record.clauses.is_empty() {
            html.push_str("<br>case: ");
        }
    }
    html + &code_list(&record.clauses)
}

fn replay(record: &Record) -> String {
    record
        .replay
        .as_ref()
        .map(|command| format!("<code>{}</code>", escape(command)))
        .unwrap_or_default()
}

/// A trial's replay command with `TRIAL` in place of its name, if it names it as
/// [`crate::reports::replay_command::command`] does.
fn replay_template(record: &Record) -> Option<String> {
    let command = record.replay.as_ref()?;
    let name = format!(
        " replay {} ",
        crate::reports::replay_command::shell_quote(&record.name)
    );
    let (before, after) = format!("{command} ")
        .split_once(&name)
        .map(|(b, a)| (b.to_owned(), a.to_owned()))?;
    Some(
        format!("{before} replay TRIAL {after}")
            .trim_end()
            .to_owned(),
    )
}

/// The ids of the failing trials' rows in the failures section, by report index and name.
type FailureIds<'a> = BTreeMap<(usize, &'a str), String>;

/// The drill-down of one cell: the trials that did not pass, then the passed ones folded. A
/// failing trial links to its row in the failures section, which holds its whole report; an
/// excluded one gives why (it was never sent, so there is nothing to replay).
fn drill_down(
    html: &mut String,
    id: &str,
    title: &str,
    records: &[&Record],
    engine: usize,
    failure_ids: &FailureIds,
    options: PageOptions,
) {
    let _ = write!(
        html,
        "<details class=\"drill\"><summary><span class=\"where\">{}</span>{}</summary>\n<div class=\"trials\" id=\"{id}\">\n",
        escape(title),
        chips(records)
    );
    let (passed, other): (Vec<&Record>, Vec<&Record>) =
        records.iter().partition(|r| r.status() == Status::Passed);
    // Excluded trials are counted (the chips, the exclusions table), not listed unless asked.
    let (excluded, other): (Vec<&Record>, Vec<&Record>) = other
        .into_iter()
        .partition(|r| r.status() == Status::Excluded && !options.show_undeclared);
    if !excluded.is_empty() {
        let _ = writeln!(
            html,
            "<p class=\"undeclared\">{} excluded by the hello, counted, not listed \
             (<code>runner report --show-undeclared</code> lists them).</p>",
            excluded.len()
        );
    }
    let head = "<table class=\"trials\"><thead><tr><th>trial</th><th>status</th><th>clauses</th>";
    if !other.is_empty() {
        let _ = writeln!(
            html,
            "{head}<th>reason</th><th>replay</th></tr></thead><tbody>"
        );
        let mut other = other;
        // Those that fail the run first, then in the order of the chips.
        other.sort_by_key(|r| {
            (
                !r.status().fails(),
                Status::ALL.iter().position(|s| *s == r.status()),
            )
        });
        for record in other {
            let failure = failure_ids.get(&(engine, record.name.as_str()));
            let report = match failure {
                Some(failure) => format!(" <a href=\"#{failure}\">report</a>"),
                None if record.status() == Status::Excluded || record.message.trim().is_empty() => {
                    String::new()
                }
                None => format!(
                    "<details><summary>report</summary><pre>{}</pre></details>",
                    escape(&record.message)
                ),
            };
            let replay = if record.status() == Status::Excluded {
                String::new()
            } else {
                replay(record)
            };
            let _ = writeln!(
                html,
                "<tr class=\"{0}\"><td class=\"name\"><code>{1}</code></td><td><span class=\"chip {0}\">{2}</span></td><td>{3}</td><td class=\"reason\">{4}{report}</td><td>{replay}</td></tr>",
                class(record.status()),
                escape(&record.name),
                record.status().label(),
                clauses(record),
                escape(&record.reason()),
            );
        }
        html.push_str("</tbody></table>\n");
    }
    if !passed.is_empty() {
        // The passed trials are most of a page: their replay command is given once, with
        // TRIAL in place of the name, when all of them share it (the trials of one report do).
        let templates: BTreeSet<Option<String>> =
            passed.iter().map(|r| replay_template(r)).collect();
        let shared = match templates.into_iter().collect::<Vec<_>>().as_slice() {
            [Some(template)] => Some(template.clone()),
            _ => None,
        };
        let _ = write!(
            html,
            "<details class=\"passed\"><summary>{} passed</summary>",
            passed.len()
        );
        if let Some(template) = &shared {
            let _ = write!(
                html,
                "<p>Replay one with <code>{}</code>, TRIAL being its name.</p>",
                escape(template)
            );
        }
        // Their clauses once for all, with the number of trials naming each.
        let mut named: BTreeMap<&str, usize> = BTreeMap::new();
        for clause in passed.iter().flat_map(|r| &r.clauses) {
            *named.entry(clause).or_default() += 1;
        }
        if !named.is_empty() {
            let list: Vec<String> = named
                .iter()
                .map(|(clause, n)| format!("<code>{}</code>&nbsp;({n})", escape(clause)))
                .collect();
            let _ = write!(
                html,
                "<p class=\"clauses\">Clauses they exercise (trials): {}</p>",
                list.join(", ")
            );
        }
        html.push_str("<ul class=\"names\">");
        for record in passed {
            let _ = write!(html, "<li>{}", escape(&record.name));
            if shared.is_none() {
                let _ = write!(html, " {}", replay(record));
            }
            html.push_str("</li>\n");
        }
        html.push_str("</ul></details>\n");
    }
    html.push_str("</div></details>\n");
}

/// The failing trials (failed or not run) grouped by clause: each trial once, under the clause of
/// its case that the most failing trials of all the reports cite (ties by name), so that a rule
/// broken everywhere gathers its trials, and those citing no clause last. A table of the groups
/// (a column per engine), then each group's trials with their whole report, the first group
/// open. Gives the HTML and the id of each failing trial's row.
fn failures<'a>(
    reports: &'a [Report],
    labels: &[String],
    ids: &mut BTreeSet<String>,
) -> (String, FailureIds<'a>) {
    let mut html = String::new();
    let mut failure_ids = FailureIds::new();
    let failing: Vec<(usize, &Record)> = reports
        .iter()
        .enumerate()
        .flat_map(|(engine, report)| {
            report
                .trials
                .iter()
                .filter(|r| r.status().fails())
                .map(move |r| (engine, r))
        })
        .collect();
    if failing.is_empty() {
        return (html, failure_ids);
    }
    let mut citing: BTreeMap<&str, usize> = BTreeMap::new();
    for (_, record) in &failing {
        for clause in &record.clauses {
            *citing.entry(clause).or_default() += 1;
        }
    }
    let mut groups: BTreeMap<&str, Vec<(usize, &Record)>> = BTreeMap::new();
    for &(engine, record) in &failing {
        let clause = record
            .clauses
            .iter()
            .map(String::as_str)
            .max_by(|a, b| citing[a].cmp(&citing[b]).then(b.cmp(a)))
            .unwrap_or("");
        groups.entry(clause).or_default().push((engine, record));
    }
    let mut groups: Vec<(&str, Vec<(usize, &Record)>)> = groups.into_iter().collect();
    groups.sort_by(|a, b| {
        (a.0.is_empty(), std::cmp::Reverse(a.1.len()), a.0).cmp(&(
            b.0.is_empty(),
            std::cmp::Reverse(b.1.len()),
            b.0,
        ))
    });
    let _ = write!(
        html,
        "<h2 id=\"failures\">Failures by clause</h2>\n<p class=\"lead\">{} failing trials (failed or \
         not run). Each is counted once, under the clause of its case that the most failing \
         trials cite; its row lists all of its clauses.</p>\n\
         <table class=\"failure-clauses\" id=\"failure-clauses\"><thead><tr><th>clause</th>",
        failing.len()
    );
    for label in labels {
        let _ = write!(html, "<th scope=\"col\">{}</th>", escape(label));
    }
    html.push_str("</tr></thead><tbody>\n");
    let group_ids: Vec<String> = groups
        .iter()
        .map(|(clause, _)| {
            unique_id(
                &["clause", if clause.is_empty() { "none" } else { clause }],
                ids,
            )
        })
        .collect();
    for ((clause, trials), id) in groups.iter().zip(&group_ids) {
        let name = if clause.is_empty() {
            "(no clause)".to_owned()
        } else {
            format!("<code>{}</code>", escape(clause))
        };
        let _ = write!(
            html,
            "<tr><th scope=\"row\"><a href=\"#{id}\">{name}</a></th>"
        );
        for engine in 0..reports.len() {
            let n = trials.iter().filter(|(e, _)| *e == engine).count();
            let _ = write!(
                html,
                "<td class=\"n{}\" data-engine=\"{engine}\">{n}</td>",
                if n > 0 { " failed" } else { "" }
            );
        }
        html.push_str("</tr>\n");
    }
    html.push_str("</tbody></table>\n");
    // The engine of each trial, when there are several.
    let several = reports.len() > 1;
    for (index, ((clause, trials), id)) in groups.iter().zip(&group_ids).enumerate() {
        let title = if clause.is_empty() {
            "no clause"
        } else {
            clause
        };
        let _ = write!(
            html,
            "<details class=\"drill failures\"{}><summary><span class=\"where\">{}</span>{} failing</summary>\n<div class=\"trials\" id=\"{id}\">\n\
             <table class=\"trials\"><thead><tr><th>trial</th>{}<th>clauses</th><th>reason</th><th>replay</th></tr></thead><tbody>\n",
            if index == 0 { " open" } else { "" },
            escape(title),
            trials.len(),
            if several { "<th>engine</th>" } else { "" },
        );
        let mut trials = trials.clone();
        trials.sort_by_key(|(engine, record)| (*engine, record.name.as_str()));
        for (engine, record) in trials {
            let id = unique_id(&["failure", &labels[engine], &record.name], ids);
            let report = if record.message.trim().is_empty() {
                String::new()
            } else {
                format!(
                    "<details><summary>report</summary><pre>{}</pre></details>",
                    escape(&record.message)
                )
            };
            let _ = writeln!(
                html,
                "<tr class=\"{0}\" id=\"{id}\"><td class=\"name\"><code>{1}</code></td>{2}<td class=\"clauses\">{3}</td><td class=\"reason\">{4}{report}</td><td>{5}</td></tr>",
                class(record.status()),
                escape(&record.name),
                if several {
                    format!("<td>{}</td>", escape(&labels[engine]))
                } else {
                    String::new()
                },
                clauses(record),
                escape(&record.reason()),
                replay(record),
            );
            failure_ids.insert((engine, record.name.as_str()), id);
        }
        html.push_str("</tbody></table>\n</div></details>\n");
    }
    (html, failure_ids)
}

/// The trials not listed because their engine's hello does not declare their op, per engine.
fn undeclared_note(html: &mut String, reports: &[Report], labels: &[String]) {
    for (report, label) in reports.iter().zip(labels) {
        let counts: Vec<String> = exclusions(&report.trials)
            .into_iter()
            .filter(|(by, _)| by.starts_with("op "))
            .map(|(by, n)| format!("{n} by {}", escape(by)))
            .collect();
        if counts.is_empty() {
            continue;
        }
        let total = report.trials.iter().filter(|r| undeclared(r)).count();
        let _ = writeln!(
            html,
            "<p class=\"undeclared\">{}: {total} trials of ops its hello does not declare are not \
             listed ({}); <code>runner report --show-undeclared</code> lists them.</p>",
            escape(label),
            counts.join(", ")
        );
    }
}

/// The trials each hello declaration excluded, a row per declaration (most first, over all the
/// reports) and a column per report; nothing when no hello excluded a trial.
fn exclusion_table(html: &mut String, reports: &[Report], labels: &[String]) {
    let counts: Vec<BTreeMap<&str, usize>> = reports
        .iter()
        .map(|report| exclusions(&report.trials).into_iter().collect())
        .collect();
    let mut totals: BTreeMap<&str, usize> = BTreeMap::new();
    for (by, n) in counts.iter().flatten() {
        *totals.entry(by).or_default() += n;
    }
    if totals.is_empty() {
        return;
    }
    let mut rows: Vec<(&str, usize)> = totals.into_iter().collect();
    rows.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    html.push_str(
        "<h2>Excluded by the hello</h2>\n<p class=\"lead\">Trials not sent to an engine because \
         its hello leaves out their op, a dtype, an attribute value or a target they need, per \
         declaration.</p>\n<table class=\"exclusions\" id=\"exclusions\"><thead><tr><th>declaration</th>",
    );
    for label in labels {
        let _ = write!(html, "<th scope=\"col\">{}</th>", escape(label));
    }
    html.push_str("</tr></thead><tbody>\n");
    for (by, _) in rows {
        let _ = write!(html, "<tr><th scope=\"row\">{}</th>", escape(by));
        for (engine, counts) in counts.iter().enumerate() {
            let n = counts.get(by).copied().unwrap_or(0);
            let _ = write!(html, "<td class=\"n\" data-engine=\"{engine}\">{n}</td>");
        }
        html.push_str("</tr>\n");
    }
    html.push_str("</tbody></table>\n");
}

/// The reports of one engine at several versions, or several runs of one version.
struct VersionGroup<'a> {
    engine: &'a str,
    /// Its reports from the oldest version to the newest
    /// ([`crate::backend::facts::compare_versions`]); those of one version in the order given.
    steps: Vec<usize>,
    /// Reports of the engine not in `steps`: those whose hello names no version.
    left_out: Vec<usize>,
}

/// What tells report `index` apart from `same`, the other reports of its engine at its version,
/// for a column header that does not read `0.4.0 → 0.4.0`: the first fact whose value differs
/// (`env.BUG_PAD=1`, `cpu_model=AMD EPYC`; the short facts first), else the report's file name.
fn told_apart(reports: &[Report], index: usize, same: &[usize]) -> String {
    let facts = |i: usize| reports[i].context.facts.pairs();
    let mine = facts(index);
    let others: Vec<_> = same
        .iter()
        .filter(|&&i| i != index)
        .map(|&i| facts(i))
        .collect();
    let mut keys: Vec<String> = (mine.keys().chain(others.iter().flat_map(|o| o.keys())))
        .filter(|k| *k != "engine" && *k != "version")
        .cloned()
        .collect();
    let order = |key: &str| match key {
        k if k.starts_with("env.") => 0,
        "os" => 1,
        "arch" => 2,
        "cpu_vendor" => 3,
        "cpu_model" => 4,
        "engine_flags" => 5,
        _ => 6,
    };
    keys.sort_by(|a, b| order(a).cmp(&order(b)).then(a.cmp(b)));
    keys.dedup();
    for key in keys {
        let value = mine.get(&key);
        if others.iter().any(|o| o.get(&key) != value) {
            return match value {
                Some(value) if value.chars().count() > 40 => {
                    format!("{key}={}…", value.chars().take(40).collect::<String>())
                }
                Some(value) => format!("{key}={value}"),
                None if key.starts_with("env.") => format!("{key} unset"),
                None => format!("no {key}"),
            };
        }
    }
    let path = &reports[index].path;
    (path.file_name()).map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

/// The engines with two or more reports that name a version (the `engine` and `version` facts
/// of their hellos), each with its reports in version order, whatever the order the reports
/// were given in (a shell glob puts `1.10` before `1.9`); runs of one version in the order given.
fn version_groups(reports: &[Report]) -> Vec<VersionGroup<'_>> {
    use crate::backend::facts::compare_versions;
    let mut groups: Vec<VersionGroup<'_>> = Vec::new();
    for (index, report) in reports.iter().enumerate() {
        let Some(engine) = report.context.facts.engine.as_deref() else {
            continue;
        };
        let at = match groups.iter().position(|g| g.engine == engine) {
            Some(at) => at,
            None => {
                groups.push(VersionGroup {
                    engine,
                    steps: Vec::new(),
                    left_out: Vec::new(),
                });
                groups.len() - 1
            }
        };
        let group = &mut groups[at];
        match reports[index].context.facts.version {
            Some(_) => group.steps.push(index),
            None => group.left_out.push(index),
        }
    }
    for group in &mut groups {
        group.steps.sort_by(|&a, &b| {
            let version = |i: usize| reports[i].context.facts.version.as_deref().unwrap_or("");
            compare_versions(version(a), version(b))
        });
    }
    groups.retain(|g| g.steps.len() > 1);
    groups
}

/// For each engine run at several versions ([`version_groups`]): a table of the changes from
/// each version to the next (in version order, whatever the order of the reports), a row per clause and a column per
/// upgrade, each trial counted once as `runner diff` counts it ([`crate::reports::diff::Diff::by_clause`]),
/// each count opening the list of its trials.
fn across_versions(html: &mut String, reports: &[Report], labels: &[String]) {
    let groups = version_groups(reports);
    if groups.is_empty() {
        return;
    }
    html.push_str(
        "<h2 id=\"versions\">Across versions</h2>\n<p class=\"lead\">What changed from each \
         version of an engine to the next (and between two runs of one version, each named by \
         what tells it apart), clause by clause: each trial whose status changed \
         counted once, under the clause of its case that the most changed trials of that upgrade \
         cite (as <code>runner diff</code> counts them).</p>\n",
    );
    for group in groups {
        let engine = group.engine;
        let plain_version = |i: usize| {
            reports[i]
                .context
                .facts
                .version
                .clone()
                .unwrap_or_else(|| labels[i].clone())
        };
        // A version run more than once is named by what tells its runs apart.
        let version = |i: usize| {
            let same: Vec<usize> = (group.steps.iter().copied())
                .filter(|&j| {
                    crate::backend::facts::compare_versions(&plain_version(j), &plain_version(i))
                        == std::cmp::Ordering::Equal
                })
                .collect();
            match same.len() {
                1 => plain_version(i),
                _ => format!("{} ({})", plain_version(i), told_apart(reports, i, &same)),
            }
        };
        let steps: Vec<(usize, usize)> = group.steps.windows(2).map(|w| (w[0], w[1])).collect();
        let diffs: Vec<crate::reports::diff::Diff> = steps
            .iter()
            .map(|&(a, b)| crate::reports::diff::Diff::new(&reports[a], &reports[b]))
            .collect();
        let groups: Vec<Vec<crate::reports::diff::ClauseChange>> = diffs
            .iter()
            .map(crate::reports::diff::Diff::by_clause)
            .collect();
        let _ = write!(
            html,
            "<h3>{}</h3>\n<table class=\"versions\"><thead><tr><th>clause</th>",
            escape(engine)
        );
        for &(a, b) in &steps {
            let _ = write!(
                html,
                "<th scope=\"col\">{} → {}</th>",
                escape(&version(a)),
                escape(&version(b))
            );
        }
        html.push_str("</tr></thead><tbody>\n<tr><th scope=\"row\">all clauses</th>");
        for (diff, groups) in diffs.iter().zip(&groups) {
            let changed: usize = groups.iter().map(|g| g.trials.len()).sum();
            let regressions = diff.regressions().len();
            let _ = write!(
                html,
                "<td>{changed} of {} trials changed{}</td>",
                diff.trials,
                match regressions {
                    0 => String::new(),
                    1 => ", <strong class=\"worse\">1 regression</strong>".to_owned(),
                    n => format!(", <strong class=\"worse\">{n} regressions</strong>"),
                }
            );
        }
        html.push_str("</tr>\n");
        let mut clauses: Vec<&str> = groups
            .iter()
            .flatten()
            .map(crate::reports::diff::ClauseChange::clause_label)
            .collect();
        clauses.sort_by_key(|c| (c.starts_with('('), *c));
        clauses.dedup();
        for clause in clauses {
            let _ = write!(
                html,
                "<tr><th scope=\"row\"><code>{}</code></th>",
                escape(clause)
            );
            for groups in &groups {
                html.push_str("<td>");
                for group in groups.iter().filter(|g| g.clause_label() == clause) {
                    let worse =
                        group.old == Some(Status::Passed) || group.new.is_some_and(Status::fails);
                    let better = group.new == Some(Status::Passed);
                    let _ = write!(
                        html,
                        "<details class=\"change{}\"><summary>{} {}</summary><ul class=\"names\">",
                        if worse {
                            " worse"
                        } else if better {
                            " better"
                        } else {
                            ""
                        },
                        group.trials.len(),
                        escape(&group.change())
                    );
                    for trial in &group.trials {
                        let _ = write!(html, "<li>{}</li>", escape(trial));
                    }
                    html.push_str("</ul></details>");
                }
                html.push_str("</td>");
            }
            html.push_str("</tr>\n");
        }
        html.push_str("</tbody></table>\n");
        for index in &group.left_out {
            let _ = writeln!(
                html,
                "<p class=\"lead\">Not in the table: {}, its hello names no version.</p>",
                escape(&labels[*index])
            );
        }
    }
}

/// The page, with the default [`PageOptions`].
/// Each report's engine and machine, and its trials of what the engine implements apart from
/// those the adapter composes from other operations (the hello's `composed`): no line of the
/// page says an engine passes what it never implemented.
fn native_and_composed(html: &mut String, reports: &[Report], labels: &[String]) {
    let known =
        |r: &Report| r.context.facts != Default::default() || !r.context.composed.is_empty();
    if !reports.iter().any(known) {
        return;
    }
    html.push_str(
        "<h2>Engines: native and composed</h2>\n<p class=\"lead\">What each engine was, on what \
         machine, and its trials apart: <em>native</em>, the engine's own operation; \
         <em>composed</em>, built by the adapter from other operations of the engine (a Gather of \
         indices it computes, a pad-reshape-transpose chain), which judge the engine's other \
         operations, not its own of this rule.</p>\n<table class=\"composed\" id=\"composed\"><thead>\
         <tr><th>engine</th><th>engine and machine</th><th>native: passed / trials</th>\
         <th>composed: passed / trials</th><th>composed by the adapter</th></tr></thead><tbody>\n",
    );
    for (report, label) in reports.iter().zip(labels) {
        let [native, composed] = crate::reports::report::native_and_composed(&report.trials);
        let keys = crate::reports::report::composed_counts(&report.trials);
        let list: Vec<String> = (keys.iter())
            .map(|(key, (trials, passed))| {
                let how = report.context.composed.get(*key).map_or("", String::as_str);
                format!(
                    "<span title=\"{}\"><code>{}</code> {passed}/{trials}</span>",
                    escape(how),
                    escape(key)
                )
            })
            .collect();
        let _ = writeln!(
            html,
            "<tr><th scope=\"row\">{}</th><td>{}</td><td class=\"n\">{} / {}</td>\
             <td class=\"n\">{} / {}</td><td>{}</td></tr>",
            escape(label),
            escape(&report.context.facts.line()),
            native.0,
            native.1,
            composed.0,
            composed.1,
            if list.is_empty() {
                "none".to_owned()
            } else {
                list.join(", ")
            }
        );
    }
    html.push_str("</tbody></table>\n");
}

#[cfg(test)]
fn page(reports: &[Report]) -> String {
    page_with(reports, PageOptions::default())
}

/// The page.
pub(crate) fn page_with(reports: &[Report], options: PageOptions) -> String {
    let labels = engine_labels(reports);
    let cells = cells(reports, options);
    let mut html = String::new();
    let _ = write!(
        html,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>opspec conformance: {}</title>\n<style>{STYLE}{}</style>\n</head>\n<body>\n\
         <h1>opspec conformance across engines</h1>\n\
         <p class=\"lead\">{} report{}, {} trials. A cell counts the trials of one op and dtype \
         on one engine; follow it to its trials, with their clauses, reason and replay \
         command.</p>\n",
        escape(&labels.join(", ")),
        status_style(),
        reports.len(),
        if reports.len() == 1 { "" } else { "s" },
        reports.iter().map(|r| r.trials.len()).sum::<usize>()
    );

    // The totals of each report.
    html.push_str(
        "<table class=\"summary\" id=\"summary\"><thead><tr><th>engine</th><th>report</th>",
    );
    for status in Status::ALL {
        let _ = write!(html, "<th>{}</th>", status.label());
    }
    html.push_str("<th>trials</th></tr></thead><tbody>\n");
    for (report, label) in reports.iter().zip(&labels) {
        let _ = write!(
            html,
            "<tr><th scope=\"row\">{}</th><td class=\"path\"><code>{}</code></td>",
            escape(label),
            escape(&report.path.display().to_string())
        );
        for status in Status::ALL {
            let n = report
                .trials
                .iter()
                .filter(|r| r.status() == status)
                .count();
            let _ = write!(html, "<td class=\"n {}\">{n}</td>", class(status));
        }
        let _ = writeln!(html, "<td class=\"n\">{}</td></tr>", report.trials.len());
    }
    html.push_str("</tbody></table>\n");
    // Why a run was no pass although no trial failed (nothing passed, too many skips).
    for (report, label) in reports.iter().zip(&labels) {
        for problem in &report.problems {
            let _ = writeln!(
                html,
                "<p class=\"problem\"><strong>{}: the run is no pass:</strong> {}</p>",
                escape(label),
                escape(problem)
            );
        }
    }
    native_and_composed(&mut html, reports, &labels);
    across_versions(&mut html, reports, &labels);
    let mut ids = BTreeSet::new();
    let (failures, failure_ids) = failures(reports, &labels, &mut ids);
    html.push_str(&failures);

    // The matrix, after the legend of its chips.
    html.push_str("<h2>Op × dtype × engine</h2>\n");
    if !options.show_undeclared {
        undeclared_note(&mut html, reports, &labels);
    }
    html.push_str("<ul class=\"legend\">");
    for status in Status::ALL {
        let _ = write!(
            html,
            "<li><span class=\"chip {}\">{}</span> {}: {}</li>",
            class(status),
            status.row().short,
            status.label(),
            status.row().meaning
        );
    }
    html.push_str("</ul>\n");
    html.push_str("<table class=\"matrix\" id=\"matrix\"><thead><tr><th>op</th><th>dtype</th>");
    for label in &labels {
        let _ = write!(html, "<th scope=\"col\">{}</th>", escape(label));
    }
    html.push_str("</tr></thead>\n");
    let mut drills = String::new();
    let mut op_rows: BTreeMap<&str, usize> = BTreeMap::new();
    for (op, _) in cells.keys() {
        *op_rows.entry(op).or_default() += 1;
    }
    let mut current_op = None;
    for ((op, dtype), row) in &cells {
        let dtype_label = dtype.unwrap_or("—");
        if current_op != Some(*op) {
            if current_op.is_some() {
                html.push_str("</tbody>\n");
            }
            current_op = Some(*op);
            let _ = write!(
                html,
                "<tbody><tr><th scope=\"rowgroup\" rowspan=\"{}\">{}</th>",
                op_rows[op],
                escape(op)
            );
        } else {
            html.push_str("<tr>");
        }
        let _ = write!(html, "<th scope=\"row\">{}</th>", escape(dtype_label));
        for ((records, label), engine) in row.iter().zip(&labels).zip(0..) {
            if records.is_empty() {
                let _ = write!(
                    html,
                    "<td class=\"none\" data-engine=\"{engine}\" title=\"no trial\">·</td>"
                );
                continue;
            }
            let id = unique_id(&[op, dtype.unwrap_or("none"), label], &mut ids);
            let _ = write!(
                html,
                "<td class=\"{}\" data-engine=\"{engine}\"><a href=\"#{id}\">{}</a></td>",
                tint(records),
                chips(records)
            );
            drill_down(
                &mut drills,
                &id,
                &format!("{op} · {dtype_label} · {label}"),
                records,
                engine,
                &failure_ids,
                options,
            );
        }
        html.push_str("</tr>\n");
    }
    if current_op.is_some() {
        html.push_str("</tbody>\n");
    }
    html.push_str("</table>\n");
    exclusion_table(&mut html, reports, &labels);
    html.push_str("<h2>Trials</h2>\n");
    html.push_str(&drills);
    html.push_str("</body>\n</html>\n");
    html
}

/// `runner report A.json B.json ... --html FILE`; exit code 2 when a report cannot be read or
/// the page cannot be written.
pub fn main(inputs: &[PathBuf], output: &Path, options: PageOptions) -> ExitCode {
    let reports_read: Vec<(&str, &Path)> = inputs.iter().map(|p| ("REPORT", p.as_path())).collect();
    let inputs_read = crate::reports::output::Inputs {
        files: reports_read,
        folders: Vec::new(),
    };
    if let Err(e) = crate::reports::output::check_outputs(&[("--html", output)], &inputs_read) {
        eprintln!("error: {e}");
        return ExitCode::from(2);
    }
    let reports: Result<Vec<Report>, _> = inputs.iter().map(|path| read(path)).collect();
    let reports = match reports {
        Ok(reports) => reports,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    if let Err(e) = crate::reports::output::write_replacing(output, page_with(&reports, options)) {
        eprintln!("error: cannot write {}: {e}", output.display());
        return ExitCode::from(2);
    }
    println!(
        "wrote {} ({} reports, {} trials)",
        output.display(),
        reports.len(),
        reports.iter().map(|r| r.trials.len()).sum::<usize>()
    );
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::judge::expectations::EntryLine as Known;

    fn record(name: &str, dtype: Option<&str>, status: Status) -> Record {
        let mut r = Record::bare(name, status);
        r.op = name.split("::").next().unwrap().into();
        r.dtype = dtype.map(Into::into);
        r.dtypes = dtype.into_iter().map(Into::into).collect();
        r.message = match status {
            Status::Passed => String::new(),
            _ => {
                format!("case:   {name}\nsource: x\nat [0]: expected 1, got <2> & 3\nreplay: r")
            }
        };
        r.seconds = 0.0;
        r.clauses = vec!["slice.strict.in-bounds".into()];
        r.known = (status == Status::KnownFailure).then(|| Known {
            selector: "slice::*".into(),
            clause: "slice.strict.out-of-bounds".into(),
            class: "semantics".into(),
            reason: "the engine clamps".into(),
            line: 3,
            condition: None,
        });
        r.replay = Some(crate::reports::replay_command::command(
            crate::reports::replay_command::CARGO_RUNNER,
            name,
            " --backend 'my engine'",
        ));
        r
    }

    fn report(path: &str, backend: &str, trials: Vec<Record>) -> Report {
        Report {
            path: path.into(),
            backend: backend.into(),
            problems: Vec::new(),
            context: Default::default(),
            trials,
            run: None,
        }
    }

    /// The engine's facts and its native trials apart from those the adapter composes.
    #[test]
    fn composed_trials_are_counted_apart_from_native_ones() {
        let mut reports = sample();
        // A page of reports with no facts and nothing composed has no such section.
        assert!(!page(&reports).contains("id=\"composed\""));
        let engine = &mut reports[1];
        engine.context.facts.engine = Some("openvino".into());
        engine.context.facts.version = Some("2026.4.1".into());
        engine
            .context
            .composed
            .insert("slice:WRAP".into(), "a Gather <of> indices".into());
        engine.trials[0].composed = vec!["slice:WRAP".into()];
        engine.trials[1].composed = vec!["slice:WRAP".into()];
        let html = page(&reports);
        let table = html
            .split("<table class=\"composed\" id=\"composed\">")
            .nth(1)
            .unwrap();
        let row = table
            .lines()
            .find(|l| l.contains("engine &lt;x&gt;"))
            .unwrap();
        assert!(row.contains("<td>openvino 2026.4.1</td>"), "{row}");
        // Native: the unsupported trial, not passed; composed: a failure and a known failure.
        assert!(
            row.contains("<td class=\"n\">0 / 1</td><td class=\"n\">0 / 2</td>"),
            "{row}"
        );
        assert!(
            row.contains(
                "<span title=\"a Gather &lt;of&gt; indices\"><code>slice:WRAP</code> 0/2</span>"
            ),
            "{row}"
        );
    }

    fn sample() -> Vec<Report> {
        vec![
            report(
                "a.json",
                "reference",
                vec![
                    record("slice::f::a::int8", Some("int8"), Status::Passed),
                    record("slice::f::b::int8", Some("int8"), Status::Passed),
                    record("shuffle::f::c", None, Status::Passed),
                ],
            ),
            report(
                "b.json",
                "engine <x>",
                vec![
                    record("slice::f::a::int8", Some("int8"), Status::Failed),
                    record("slice::f::b::int8", Some("int8"), Status::KnownFailure),
                    record("slice::f::d::int8", Some("int8"), Status::Unsupported),
                ],
            ),
        ]
    }

    /// The page's colours are the status table's: every status's chip and every tint's cell
    /// has its colour from `ROWS` and `Tint`, and two statuses never share one.
    #[test]
    fn status_colours_come_from_the_status_table() {
        let page = page(&sample());
        let style = page.split("</style>").next().unwrap();
        for row in &ROWS {
            assert!(
                style.contains(&format!("--{}: {};", row.name, row.colour)),
                "{}",
                row.name
            );
            assert!(
                style.contains(&format!(
                    ".chip.{0} {{ background: var(--{0}); }}",
                    row.name
                )),
                "{}",
                row.name
            );
        }
        for tint in Tint::ALL {
            let rule = format!(
                "td.{} {{ background: {}; }}",
                tint.class(),
                tint.background()
            );
            assert_eq!(style.matches(&rule).count(), 1, "{rule}");
        }
        let colours: BTreeSet<&str> = ROWS.iter().map(|row| row.colour).collect();
        assert_eq!(colours.len(), ROWS.len());
        assert_eq!(style.matches(".chip.").count(), ROWS.len());
    }

    #[test]
    fn the_page_loads_nothing_and_runs_no_script() {
        let page = page(&sample());
        for banned in [
            "<script", " src=", "<link", "url(", "@import", "http:", "https:",
        ] {
            assert!(!page.contains(banned), "{banned} in the page");
        }
        assert!(page.starts_with("<!DOCTYPE html>"));
    }

    #[test]
    fn every_cell_links_to_its_drill_down() {
        let page = page(&sample());
        let matrix = page.split("id=\"matrix\"").nth(1).unwrap();
        let matrix = matrix.split("</table>").next().unwrap();
        let hrefs: Vec<&str> = matrix
            .split("href=\"#")
            .skip(1)
            .map(|s| s.split('"').next().unwrap())
            .collect();
        // slice × int8 on both engines, shuffle × (no dtype) on the reference only.
        assert_eq!(
            hrefs,
            [
                "t-shuffle-none-reference",
                "t-slice-int8-reference",
                "t-slice-int8-engine__x_"
            ]
        );
        // Every link of the page (cells, clauses, failures) reaches exactly one element.
        for href in page.split("href=\"#").skip(1) {
            let href = href.split('"').next().unwrap();
            assert_eq!(page.matches(&format!("id=\"{href}\"")).count(), 1, "{href}");
        }
        // The engine without a shuffle trial has an empty cell.
        assert!(page.contains("<td class=\"none\" data-engine=\"1\" title=\"no trial\">·</td>"));
        // The failing cell counts each status, and is tinted by its worst.
        assert!(page.contains("<td class=\"bad\" data-engine=\"1\"><a href=\"#t-slice-int8-engine__x_\"><span class=\"chip failed\" title=\"1 failed\">1 fail</span><span class=\"chip known_failure\" title=\"1 known failure\">1 known</span><span class=\"chip unsupported\" title=\"1 unsupported\">1 unsup</span></a></td>"), "{page}");
    }

    #[test]
    fn a_drill_down_gives_clause_reason_and_replay_escaped() {
        let page = page(&sample());
        let drill = page.split("id=\"t-slice-int8-engine__x_\"").nth(1).unwrap();
        let drill = drill.split("<details class=\"drill\">").next().unwrap();
        // Failed first, with the first line of its report after the case's description.
        let failed = drill.find("slice::f::a::int8").unwrap();
        let known = drill.find("slice::f::b::int8").unwrap();
        assert!(failed < known);
        assert!(
            drill.contains(
                "<td class=\"reason\">at [0]: expected 1, got &lt;2&gt; &amp; 3<details>"
            ),
            "{drill}"
        );
        assert!(drill.contains("breaks <code>slice.strict.out-of-bounds</code> (semantics)<br>case: <code>slice.strict.in-bounds</code>"), "{drill}");
        assert!(
            drill.contains("<td class=\"reason\">the engine clamps"),
            "{drill}"
        );
        assert!(
            drill.contains(
                "<td><code>cargo run -q -p opspec-runner --bin runner -- replay slice::f::a::int8 --backend 'my engine'</code></td>"
            ),
            "{drill}"
        );
        assert!(page.contains("engine &lt;x&gt;"));
        // The passed trials of a cell share one replay command, TRIAL standing for the name.
        let reference = page.split("id=\"t-slice-int8-reference\"").nth(1).unwrap();
        assert!(reference.contains("Replay one with <code>cargo run -q -p opspec-runner --bin runner -- replay TRIAL --backend 'my engine'</code>"), "{reference}");
        assert!(
            reference.contains("<code>slice.strict.in-bounds</code>&nbsp;(2)"),
            "{reference}"
        );
    }

    #[test]
    fn a_run_that_is_no_pass_says_why() {
        let mut reports = sample();
        reports[1].problems = vec!["nothing <passed>".into()];
        assert!(page(&reports).contains(
            "<p class=\"problem\"><strong>engine &lt;x&gt;: the run is no pass:</strong> nothing &lt;passed&gt;</p>"
        ));
    }

    #[test]
    fn reports_of_one_backend_are_told_apart_by_file() {
        let reports = [
            report("old.json", "ort", vec![]),
            report("new.json", "ort", vec![]),
            report("c.json", "xla", vec![]),
        ];
        assert_eq!(
            engine_labels(&reports),
            ["ort (old.json)", "ort (new.json)", "xla"]
        );
    }

    #[test]
    fn the_exclusions_of_each_hello_are_counted_per_engine() {
        let mut reports = sample();
        // No hello excluded anything: no table.
        assert!(!page(&reports).contains("id=\"exclusions\""));
        for (name, by) in [
            ("slice::f::e::int8", "slice mode=<wrap>"),
            ("slice::f::g::int8", "slice dtype int8"),
            ("slice::f::h::int8", "slice dtype int8"),
        ] {
            let mut excluded = record(name, Some("int8"), Status::Excluded);
            excluded.excluded_by = Some(by.into());
            reports[1].trials.push(excluded);
        }
        let page = page(&reports);
        let table = page
            .split("<table class=\"exclusions\" id=\"exclusions\">")
            .nth(1)
            .unwrap();
        let table = table.split("</table>").next().unwrap();
        // Most first, a cell per engine.
        assert!(table.contains("<th>declaration</th><th scope=\"col\">reference</th><th scope=\"col\">engine &lt;x&gt;</th>"), "{table}");
        assert!(table.contains("<tbody>\n<tr><th scope=\"row\">slice dtype int8</th><td class=\"n\" data-engine=\"0\">0</td><td class=\"n\" data-engine=\"1\">2</td></tr>\n<tr><th scope=\"row\">slice mode=&lt;wrap&gt;</th><td class=\"n\" data-engine=\"0\">0</td><td class=\"n\" data-engine=\"1\">1</td></tr>"), "{table}");
    }

    #[test]
    fn the_page_opens_on_the_failures_grouped_by_clause() {
        let mut reports = sample();
        let mut cites = |name: &str, clauses: &[&str]| {
            let mut failed = record(name, Some("int8"), Status::Failed);
            failed.clauses = clauses.iter().map(|c| c.to_string()).collect();
            reports[1].trials.push(failed);
        };
        cites(
            "slice::r::one::int8",
            &["slice.reflect.mirror", "slice.axes.subset"],
        );
        cites("slice::r::two::int8", &["slice.reflect.mirror"]);
        cites(
            "slice::r::three::int8",
            &["slice.axes.subset", "slice.reflect.mirror"],
        );
        cites("slice::r::four::int8", &[]);
        let page = page(&reports);
        // Before the matrix and the exclusions, right after the totals.
        let failures = page.find("id=\"failures\"").unwrap();
        assert!(page.find("id=\"summary\"").unwrap() < failures);
        assert!(failures < page.find("id=\"matrix\"").unwrap());
        // Each failing trial once, under the clause most failures cite (the mirror: 3 of 5;
        // slice::f::a cites slice.strict.in-bounds alone), those citing none last.
        let table = page.split("id=\"failure-clauses\">").nth(1).unwrap();
        let table = table.split("</table>").next().unwrap();
        let rows: Vec<&str> = table.split("<tr><th scope=\"row\">").skip(1).collect();
        assert_eq!(rows.len(), 3, "{table}");
        assert!(rows[0].contains("<code>slice.reflect.mirror</code></a></th><td class=\"n\" data-engine=\"0\">0</td><td class=\"n failed\" data-engine=\"1\">3</td>"), "{table}");
        assert!(
            rows[1].contains("<code>slice.strict.in-bounds</code>"),
            "{table}"
        );
        assert!(rows[2].contains("(no clause)"), "{table}");
        // The first group is open; each failing trial's row holds its whole report, once.
        assert!(page.contains("<details class=\"drill failures\" open><summary><span class=\"where\">slice.reflect.mirror</span>3 failing"));
        assert_eq!(
            page.matches("<details class=\"drill failures\" open>")
                .count(),
            1
        );
        for name in [
            "slice::r::one::int8",
            "slice::r::two::int8",
            "slice::f::a::int8",
        ] {
            let id = format!("id=\"t-failure-engine__x_-{}\"", name.replace("::", "__"));
            let row = page.split(&id).nth(1).unwrap_or_else(|| panic!("{id}"));
            let row = row.split("</tr>").next().unwrap();
            assert!(
                row.contains("<details><summary>report</summary><pre>case:   "),
                "{row}"
            );
            assert_eq!(
                page.matches(&format!("case:   {name}")).count(),
                1,
                "{name}"
            );
        }
        // The cell's drill-down links to it.
        let drill = page.split("id=\"t-slice-int8-engine__x_\"").nth(1).unwrap();
        assert!(drill.contains("<tr class=\"failed\"><td class=\"name\"><code>slice::f::a::int8</code></td><td><span class=\"chip failed\">failed</span></td><td><code>slice.strict.in-bounds</code></td><td class=\"reason\">at [0]: expected 1, got &lt;2&gt; &amp; 3 <a href=\"#t-failure-engine__x_-slice__f__a__int8\">report</a></td>"), "{drill}");
        // No failure, no section.
        assert!(!super::page(&sample()[..1]).contains("id=\"failures\""));
    }

    #[test]
    fn versions_of_one_engine_get_a_change_table_by_clause() {
        let versioned = |path: &str, version: &str, statuses: [Status; 3]| {
            let mut report = report(
                path,
                &format!("ort-{version}"),
                [
                    "slice::f::a::int8",
                    "slice::f::b::int8",
                    "slice::f::c::int8",
                ]
                .iter()
                .zip(statuses)
                .map(|(name, status)| record(name, Some("int8"), status))
                .collect(),
            );
            report.context.facts.engine = Some("ort".into());
            report.context.facts.version = Some(version.into());
            report
        };
        use Status::*;
        let mut reports = vec![
            versioned("1.json", "1.18", [Passed, Failed, Passed]),
            versioned("2.json", "1.20", [Failed, Passed, Passed]),
            versioned("3.json", "1.32", [Failed, Passed, Passed]),
        ];
        // Another engine, at one version, gets no table.
        reports.push(report("x.json", "xla", vec![]));
        let page = page(&reports);
        let section = page.split("<h2 id=\"versions\">").nth(1).unwrap();
        let section = section.split("<h2").next().unwrap();
        assert_eq!(section.matches("<table class=\"versions\">").count(), 1);
        assert!(section.contains("<h3>ort</h3>"), "{section}");
        assert!(
            section
                .contains("<th scope=\"col\">1.18 → 1.20</th><th scope=\"col\">1.20 → 1.32</th>"),
            "{section}"
        );
        assert!(section.contains("<tr><th scope=\"row\">all clauses</th><td>2 of 3 trials changed, <strong class=\"worse\">1 regression</strong></td><td>0 of 3 trials changed</td></tr>"), "{section}");
        assert!(section.contains("<tr><th scope=\"row\"><code>slice.strict.in-bounds</code></th><td><details class=\"change better\"><summary>1 failed → passed</summary><ul class=\"names\"><li>slice::f::b::int8</li></ul></details><details class=\"change worse\"><summary>1 passed → failed</summary><ul class=\"names\"><li>slice::f::a::int8</li></ul></details></td><td></td></tr>"), "{section}");
        // Before the failures.
        assert!(page.find("id=\"versions\"").unwrap() < page.find("id=\"failures\"").unwrap());
        // One version of each engine: no section.
        assert!(!super::page(&reports[2..]).contains("id=\"versions\""));
        // Given newest first (as a shell glob gives `1.10` before `1.9`), with a second report
        // of one version: the table still goes from the older version to the newer, and the
        // two runs of one version are named by what tells them apart (here their files), never
        // `1.9 → 1.9`.
        let reports = vec![
            versioned("a-1.10.json", "1.10", [Failed, Passed, Passed]),
            versioned("a-1.9.json", "1.9", [Passed, Failed, Passed]),
            versioned("b-1.9.json", "1.9.0", [Passed, Failed, Passed]),
        ];
        let page = super::page(&reports);
        let section = page.split("<h2 id=\"versions\">").nth(1).unwrap();
        assert!(
            section.contains("<th scope=\"col\">1.9 (a-1.9.json) → 1.9.0 (b-1.9.json)</th><th scope=\"col\">1.9.0 (b-1.9.json) → 1.10</th></tr>"),
            "{section}"
        );
        assert!(!section.contains("1.10 → 1.9"), "{section}");
        assert!(!section.contains("1.9 → 1.9"), "{section}");
        // The regression of the upgrade 1.9 → 1.10 is slice::f::a, not the fix reversed.
        assert!(section.contains("<details class=\"change worse\"><summary>1 passed → failed</summary><ul class=\"names\"><li>slice::f::a::int8</li>"), "{section}");
        // Two runs of one version alone get their table, named by the fact that differs.
        let mut runs = vec![
            versioned("x.json", "0.4.0", [Passed, Passed, Passed]),
            versioned("y.json", "0.4.0", [Failed, Passed, Passed]),
        ];
        runs[0].context.facts.env = [("BUG_PAD".to_owned(), None)].into_iter().collect();
        runs[1].context.facts.env = [("BUG_PAD".to_owned(), Some("1".to_owned()))]
            .into_iter()
            .collect();
        let page = super::page(&runs);
        let section = page.split("<h2 id=\"versions\">").nth(1).unwrap();
        assert!(
            section.contains(
                "<th scope=\"col\">0.4.0 (env.BUG_PAD unset) → 0.4.0 (env.BUG_PAD=1)</th>"
            ),
            "{section}"
        );
        assert!(
            section
                .contains("1 of 3 trials changed, <strong class=\"worse\">1 regression</strong>"),
            "{section}"
        );
        // A report whose hello names no version is said to be left out.
        runs[1].context.facts.version = None;
        runs.push(versioned("z.json", "0.5.0", [Passed, Passed, Passed]));
        let page = super::page(&runs);
        assert!(page.contains("<p class=\"lead\">Not in the table: ort-0.4.0 (y.json), its hello names no version.</p>"), "{page}");
    }

    #[test]
    fn excluded_trials_are_counted_but_listed_only_when_asked() {
        let mut reports = sample();
        for (name, by) in [
            ("scale::f::s::float32", "op scale"),
            ("scale::f::t::float32", "op scale"),
            ("slice::f::w::int8", "slice mode=wrap"),
        ] {
            let mut excluded = record(
                name,
                name.ends_with("int8").then_some("int8"),
                Status::Excluded,
            );
            excluded.excluded_by = Some(by.into());
            excluded.message = format!("{by} is not declared");
            reports[1].trials.push(excluded);
        }
        let hidden = page(&reports);
        assert!(!hidden.contains("scale::f::s::float32"));
        assert!(!hidden.contains("<th scope=\"rowgroup\" rowspan=\"1\">scale</th>"));
        assert!(hidden.contains("<p class=\"undeclared\">engine &lt;x&gt;: 2 trials of ops its hello does not declare are not listed (2 by op scale); <code>runner report --show-undeclared</code> lists them.</p>"), "{hidden}");
        // Still counted: the totals and the exclusions table.
        assert!(hidden.contains("<tr><th scope=\"row\">op scale</th>"));
        // An excluded trial of a declared op (a dtype, an attribute value) is counted in its
        // cell, not listed.
        assert!(
            !hidden.contains("<code>slice::f::w::int8</code>"),
            "{hidden}"
        );
        assert!(
            hidden.contains("<p class=\"undeclared\">1 excluded by the hello, counted, not listed"),
            "{hidden}"
        );
        let shown = page_with(
            &reports,
            PageOptions {
                show_undeclared: true,
            },
        );
        assert!(shown.contains("<code>scale::f::s::float32</code>"));
        // Listed when asked, without a replay command (never sent).
        assert!(shown.contains("<tr class=\"excluded\"><td class=\"name\"><code>slice::f::w::int8</code></td><td><span class=\"chip excluded\">excluded</span></td><td><code>slice.strict.in-bounds</code></td><td class=\"reason\">slice mode=wrap is not declared</td><td></td></tr>"), "{shown}");
        assert!(!shown.contains("class=\"undeclared\""));
    }
}
