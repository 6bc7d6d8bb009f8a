//! `runner coverage`: what the cases cover, and what they leave out.
//!
//! ```text
//! runner coverage [--specs DIRS] [--clauses]
//! ```
//! For every op it prints the clauses of its catalogue (`specs/<op>.clauses.yaml`) that no case
//! names, and the combinations the documents list that no case reaches:
//!
//! | op | combinations |
//! |---|---|
//! | shuffle | reshape special value (0, -1, both) × `zero_is_placeholder` |
//! | slice | mode × dtype, as docs/semantics.md §2.6 lists them (int64 and bfloat16 must be rejected by clamp, fill and reflect) |
//! | as_strided | constraint × boundary: each ATB constraint at its limit (accepted) and one past it (rejected) |
//! | scale | mode × input dtype (§3.5) |
//! | reformat | format × dtype, as the format table lists them (§4) |
//!
//! Each op's line counts its cases and trials, and the next its recorded cases (`evidence:
//! recorded`: values from a run of the vendor's implementation, not from the documents).
//!
//! It also lints the specs: spec and catalogue errors, cases without a source or without
//! clauses, unknown clause ids (or another op's), cases whose `inferred` / `implementation_defined`
//! marks differ from the statuses of the clauses they cite, recorded cases whose source names no
//! commit, duplicate cases (the same op, attributes, inputs and dtype under two names and of the
//! same evidence: a recorded case may repeat a documented one), and error cases whose error the
//! reference raises under a clause the case does not name. An error clause counts as covered only when a case that names
//! it gets that error from the reference. The command fails (exit 1) on a clause without a case,
//! a combination no case reaches, or any lint finding; `--clauses` also lists every clause with
//! the number of cases that name it.
//!
//! A private folder (`--specs DIR` or `OPSPEC_SPECS`) is linted against the built-in catalogues
//! of this repository's `specs/`, plus any `<op>.clauses.yaml` of its own, which may add clauses
//! (new ids; a built-in id must keep its rule). Only the clauses a folder catalogues itself must
//! have cases there: an op whose whole catalogue it holds (specs/ or a copy) is held to every
//! clause and combination, the others' built-in clauses and combinations are counted, not
//! required.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use opspec::ops::reformat::Format;
use opspec::ops::{self, as_strided, scale, slice, Attrs, Invocation, Op};
use opspec::tensor::Limits;
use opspec::{DType, ErrorKind};
use opspec_spec::clauses::{Catalogue, Clause, Marks};
use opspec_spec::ops::OpTable;
use opspec_spec::{load_dirs, Case, Evidence, Expectation};

use crate::backend::attributes::wire;
use crate::run::config::Config;

/// Combinations a document lists that no case reaches, each with the reason it stays a gap.
/// The report shows them as known gaps instead of failing. Empty: every listed combination has
/// a case.
pub(crate) const KNOWN_GAPS: &[(&str, &str, &str)] = &[];

/// The result of a coverage run.
#[derive(Debug, Default)]
pub(crate) struct Coverage {
    pub(crate) text: String,
    pub(crate) uncovered: usize,
    pub(crate) unreached: usize,
    pub(crate) findings: usize,
}

impl Coverage {
    pub(crate) fn ok(&self) -> bool {
        self.uncovered == 0 && self.unreached == 0 && self.findings == 0
    }
}

/// `runner coverage [--specs DIRS] [--clauses]`, its flags parsed by the `runner` binary. The
/// run's sweep folders are linted too.
pub fn main(config: &Config, list_clauses: bool) -> ExitCode {
    let coverage = run(
        &config.checkout.specs(),
        &config.specs,
        &config.sweeps,
        list_clauses,
    );
    print!("{}", coverage.text);
    if coverage.ok() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// One case: its trials (one per dtype) share name, source and clauses.
struct CaseGroup<'a> {
    trials: Vec<&'a Case>,
}

impl CaseGroup<'_> {
    fn first(&self) -> &Case {
        self.trials[0]
    }

    fn label(&self) -> String {
        let case = self.first();
        format!("{}::{}::{}", case.op, case.file, case.name)
    }
}

/// Runs the whole report over the spec folders `dirs`, with the catalogues of the checkout's
/// `builtin` specs for the ops they do not catalogue, and lints the sweeps of `sweeps` (their
/// marks and powers, as for the spec cases).
pub(crate) fn run(
    builtin: &Path,
    dirs: &[PathBuf],
    sweeps: &[PathBuf],
    list_clauses: bool,
) -> Coverage {
    // Linting reads and evaluates cases within the default limits (no run's budget applies).
    let loaded = load_dirs(dirs, None, Limits::DEFAULT);
    let (catalogue, catalogue_errors) = Catalogue::load_over(builtin, dirs);
    // The clauses the folders catalogue themselves; only they must have cases there.
    let own = |clause: &Clause| dirs.iter().any(|dir| clause.path.starts_with(dir));
    let mut lint: Vec<String> = Vec::new();
    lint.extend(loaded.errors.iter().map(|e| format!("spec error: {e}")));
    if loaded.cases.is_empty() && loaded.errors.is_empty() {
        // Nothing to measure is no coverage: a mistyped folder must not read as complete.
        let shown: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
        lint.push(format!(
            "no spec file in {}: coverage measures nothing (spec folders hold <op>/<file>.yaml)",
            shown.join(", ")
        ));
    }
    lint.extend(
        catalogue_errors
            .iter()
            .map(|e| format!("catalogue error: {e}")),
    );

    let mut groups: BTreeMap<(Op, PathBuf, String), CaseGroup> = BTreeMap::new();
    for case in &loaded.cases {
        groups
            .entry((case.op, case.path.clone(), case.name.clone()))
            .or_insert_with(|| CaseGroup { trials: Vec::new() })
            .trials
            .push(case);
    }

    // Which cases name each clause, and which error clauses the reference raises for them.
    let mut named: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    let mut raised: BTreeMap<&'static str, BTreeSet<String>> = BTreeMap::new();
    for group in groups.values() {
        let case = group.first();
        let label = group.label();
        if case.source.trim().is_empty() {
            lint.push(format!("{label}: no source"));
        }
        if case.evidence == Evidence::Recorded && !names_commit(&case.source) {
            lint.push(format!(
                "{label}: a recorded case's source names the log and the commit it was read at \
                 (40 hex digits)"
            ));
        }
        if case.clauses.is_empty() {
            lint.push(format!(
                "{label}: names no clause (add `clauses: [...]` from specs/{}.clauses.yaml)",
                case.op
            ));
        }
        for finding in catalogue.mark_disagreements(&case.clauses, Marks::of(case)) {
            lint.push(format!("{label}: {finding}"));
        }
        let mut seen = BTreeSet::new();
        for id in &case.clauses {
            if !seen.insert(id.as_str()) {
                lint.push(format!("{label}: names `{id}` twice"));
            }
            match catalogue.get(id) {
                None => lint.push(format!(
                    "{label}: unknown clause `{id}`{}",
                    opspec_spec::did_you_mean(id, catalogue.iter().map(|c| c.id.as_str()))
                )),
                Some(_) if !catalogue.applies_to(id, case.op) => lint.push(format!(
                    "{label}: `{id}` is a clause of another op, not of {}",
                    case.op
                )),
                Some(clause) if clause.no_case.is_some() => lint.push(format!(
                    "{label}: names `{id}`, which the catalogue says no case can reach"
                )),
                Some(clause) => {
                    named.entry(&clause.id).or_default().insert(label.clone());
                }
            }
        }
        for trial in &group.trials {
            if let Some(finding) = power_meets_negative_base(trial) {
                lint.push(format!("{}: {finding}", trial.trial_name()));
                break;
            }
        }
        for trial in &group.trials {
            let Expectation::Error { kind, .. } = &trial.expect else {
                continue;
            };
            let Err(error) = ops::evaluate(&trial.invocation, Limits::DEFAULT) else {
                // The suite itself reports a case the reference does not reject.
                continue;
            };
            if !case.clauses.iter().any(|id| id == error.clause) {
                lint.push(format!(
                    "{}: the reference rejects it under `{}` ({}), which the case does not name",
                    trial.trial_name(),
                    error.clause,
                    error.kind
                ));
                continue;
            }
            if let Some(clause) = catalogue.get(error.clause) {
                if clause.error != Some(error.kind) {
                    lint.push(format!(
                        "{}: `{}` is raised as {} but the catalogue gives it {}",
                        trial.trial_name(),
                        error.clause,
                        error.kind,
                        clause.error.map_or("no error kind", ErrorKind::name)
                    ));
                }
            }
            if error.kind == *kind {
                raised
                    .entry(error.clause)
                    .or_default()
                    .insert(label.clone());
            }
        }
    }
    lint.extend(duplicates(&groups));
    lint.extend(sweep_lint(&catalogue, sweeps));

    let mut out = String::new();
    let mut coverage = Coverage::default();
    let _ = writeln!(
        out,
        "opspec coverage of {}",
        dirs.iter()
            .map(|d| d.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
    for scope in opspec_spec::clauses::SCOPES {
        let clauses: Vec<&Clause> = catalogue.scope(scope).collect();
        let op = Op::from_name(scope);
        let cases = groups.values().filter(|g| Some(g.first().op) == op).count();
        let trials = loaded.cases.iter().filter(|c| Some(c.op) == op).count();
        let is_covered = |clause: &Clause| match clause.error {
            Some(_) => raised.contains_key(clause.id.as_str()),
            None => named.contains_key(clause.id.as_str()),
        };
        // A scope whose whole catalogue the folders hold (specs/ or a copy of it) must be
        // covered; of another, only the clauses the folders add, the rest being specs/'s.
        let whole = clauses.iter().all(|c| own(c));
        let unreachable: Vec<&&Clause> = clauses.iter().filter(|c| c.no_case.is_some()).collect();
        let (uncovered, left): (Vec<&&Clause>, Vec<&&Clause>) = clauses
            .iter()
            .filter(|c| c.no_case.is_none() && !is_covered(c))
            .partition(|c| whole || own(c));
        let _ = write!(
            out,
            "\n{scope}: {} clauses, {} with a case",
            clauses.len(),
            clauses.len() - uncovered.len() - left.len() - unreachable.len()
        );
        if op.is_some() {
            let _ = write!(out, "; {cases} cases, {trials} trials");
        }
        out.push('\n');
        if op.is_some() {
            let recorded = groups
                .values()
                .filter(|g| Some(g.first().op) == op && g.first().evidence == Evidence::Recorded)
                .count();
            let _ = writeln!(out, "  recorded cases: {recorded}");
        }
        if uncovered.is_empty() {
            out.push_str("  clauses with no case: none\n");
        } else {
            let _ = writeln!(out, "  clauses with no case ({}):", uncovered.len());
            for clause in &uncovered {
                let why = match (clause.error, named.get(clause.id.as_str())) {
                    (Some(kind), Some(cases)) => format!(
                        " (named by {} case(s), none of which gets {kind} under it from the reference)",
                        cases.len()
                    ),
                    (Some(kind), None) => format!(" (needs a case expecting {kind})"),
                    _ => String::new(),
                };
                let _ = writeln!(
                    out,
                    "    {} [{}]: {}{why}",
                    clause.id,
                    clause.status.name(),
                    clause.rule
                );
            }
        }
        if !left.is_empty() {
            let _ = writeln!(
                out,
                "  built-in clauses with no case here: {} (required of the built-in specs only)",
                left.len()
            );
        }
        coverage.uncovered += uncovered.len();
        for clause in &unreachable {
            let _ = writeln!(
                out,
                "  no case can reach {}: {}",
                clause.id,
                clause.no_case.as_deref().unwrap_or_default()
            );
        }
        if let Some(op) = op {
            let trials: Vec<&Case> = loaded.cases.iter().filter(|c| c.op == op).collect();
            for table in combinations(op, &trials) {
                coverage.unreached += report_table(&mut out, op, &table, whole);
            }
        }
        if list_clauses {
            for clause in &clauses {
                let count = named.get(clause.id.as_str()).map_or(0, BTreeSet::len);
                let _ = writeln!(
                    out,
                    "    {:<56} {:>4} case(s)  [{}]",
                    clause.id,
                    count,
                    clause.status.name()
                );
            }
        }
    }
    coverage.findings = lint.len();
    if lint.is_empty() {
        out.push_str("\nlint: no findings\n");
    } else {
        let _ = writeln!(out, "\nlint: {} finding(s)", lint.len());
        for finding in &lint {
            let _ = writeln!(out, "  {finding}");
        }
    }
    let _ = writeln!(
        out,
        "\ncoverage: {} ({} clause(s) without a case, {} combination(s) not reached, {} lint finding(s))",
        if coverage.ok() { "ok" } else { "FAILED" },
        coverage.uncovered,
        coverage.unreached,
        coverage.findings
    );
    coverage.text = out;
    coverage
}

/// Whether `source` holds a full git commit id (40 hex digits), as a recorded case's must.
fn names_commit(source: &str) -> bool {
    source
        .split(|c: char| !c.is_ascii_alphanumeric())
        .any(|word| word.len() == 40 && word.chars().all(|c| c.is_ascii_hexdigit()))
}

/// The sweeps' findings: load errors, marks that differ from their clauses' statuses, an
/// explicit power meeting a negative base without citing its clause. One line per sweep and
/// finding, not per generated case.
fn sweep_lint(catalogue: &Catalogue, dirs: &[PathBuf]) -> Vec<String> {
    if dirs.is_empty() {
        return Vec::new();
    }
    let sweeps = opspec_generate::sweep::load_dirs(dirs, None, Limits::DEFAULT);
    let mut findings: BTreeSet<String> = sweeps
        .errors
        .iter()
        .map(|e| format!("sweep error: {e}"))
        .collect();
    for generated in &sweeps.cases {
        let case = &generated.case;
        let sweep = case.name.split("__").next().unwrap_or(&case.name);
        let label = format!("{}::{}::{sweep}", case.op, case.file);
        for finding in catalogue.mark_disagreements(&case.clauses, Marks::of(case)) {
            findings.insert(format!("{label}: {finding}"));
        }
        if let Some(finding) = power_meets_negative_base(case) {
            findings.insert(format!("{label}: {finding}"));
        }
    }
    findings.into_iter().collect()
}

/// The implementation-defined clauses a Scale invocation's explicit `power` depends on
/// (docs/semantics.md §3.5): `scale.pow.explicit-one` (all ones) or `scale.pow.negative-base`
/// when it meets a negative base `x·scale + shift` (TensorRT-RTX computes `pow` even for a power
/// of 1 and gives NaN for every negative base, pytorch/TensorRT PR #4181), and
/// `scale.pow.zero-exponent` when a power of 0 meets a NaN or infinite base. Empty for every
/// other invocation.
pub(crate) fn power_dependencies(invocation: &Invocation) -> Vec<&'static str> {
    let Attrs::Scale(attrs) = &invocation.attrs else {
        return Vec::new();
    };
    if attrs.power.is_empty() {
        return Vec::new();
    }
    let mut base = invocation.clone();
    if let Attrs::Scale(attrs) = &mut base.attrs {
        attrs.power = scale::Coefficients::default();
        // Keep the sign of the base visible: an int8 output would round -0.4 to 0.
        attrs.output_dtype = Some(DType::Float32);
    }
    let Some(bases) = ops::evaluate(&base, Limits::DEFAULT)
        .ok()
        .and_then(|outputs| {
            let output = outputs.first()?;
            let format = output.dtype.float_format()?;
            Some(
                (0..output.len())
                    .map(|i| format.decode(output.bits(i)))
                    .collect::<Vec<f64>>(),
            )
        })
    else {
        return Vec::new();
    };
    let mut found = Vec::new();
    if bases.iter().any(|&b| b < 0.0) {
        found.push(if attrs.has_power() {
            "scale.pow.negative-base"
        } else {
            "scale.pow.explicit-one"
        });
    }
    let zero_power = (0..attrs.power.len()).any(|i| attrs.power.value(i) == 0.0);
    if zero_power && bases.iter().any(|b| !b.is_finite()) {
        found.push("scale.pow.zero-exponent");
    }
    found
}

/// A finding for a Scale case that depends on an implementation-defined power clause it does not
/// cite.
fn power_meets_negative_base(case: &Case) -> Option<String> {
    let missing: Vec<String> = power_dependencies(&case.invocation)
        .into_iter()
        .filter(|needs| !case.clauses.iter().any(|id| id == needs))
        .map(|needs| format!("`{needs}`"))
        .collect();
    (!missing.is_empty()).then(|| {
        format!(
            "its explicit power depends on {}, which it must cite (docs/semantics.md §3.5)",
            missing.join(" and ")
        )
    })
}

/// Cases with the same op, attributes and inputs (dtypes included) under different names.
fn duplicates(groups: &BTreeMap<(Op, PathBuf, String), CaseGroup>) -> Vec<String> {
    // Trials by invocation and evidence: a recorded case may repeat a documented one (the run
    // corroborates the documents), but two cases of the same evidence may not.
    let mut by_invocation: BTreeMap<(String, Evidence), BTreeSet<String>> = BTreeMap::new();
    for group in groups.values() {
        for trial in &group.trials {
            // A hash of the op, the attributes and the inputs with their dtypes, whether the
            // data was written inline or in an .npy file.
            let key = opspec_generate::case_hash(&trial.invocation);
            by_invocation
                .entry((key, trial.evidence))
                .or_default()
                .insert(trial.trial_name());
        }
    }
    let mut findings: BTreeSet<String> = BTreeSet::new();
    for names in by_invocation.values().filter(|names| names.len() > 1) {
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        findings.insert(format!(
            "duplicate cases (same attributes and inputs): {}",
            names.join(", ")
        ));
    }
    findings.into_iter().collect()
}

/// One documented table of combinations: its title and each cell, reached or not.
struct Table {
    title: String,
    cells: Vec<(String, bool)>,
}

/// Reports a table; with `required` its unreached cells fail the run (their number is
/// returned), without it (an op these folders do not catalogue) only the count is shown.
fn report_table(out: &mut String, op: Op, table: &Table, required: bool) -> usize {
    let reached = table.cells.iter().filter(|(_, hit)| *hit).count();
    let _ = writeln!(
        out,
        "  {}: {reached} of {} reached{}",
        table.title,
        table.cells.len(),
        if required {
            ""
        } else {
            " (required of the built-in specs only)"
        }
    );
    if !required {
        return 0;
    }
    let mut failing = 0;
    for (cell, _) in table.cells.iter().filter(|(_, hit)| !hit) {
        match KNOWN_GAPS
            .iter()
            .find(|(gap_op, gap, _)| *gap_op == op.name() && gap == cell)
        {
            Some((_, _, why)) => {
                let _ = writeln!(out, "    known gap: {cell}: {why}");
            }
            None => {
                let _ = writeln!(out, "    not reached: {cell}");
                failing += 1;
            }
        }
    }
    failing
}

/// The input's dtype of a trial.
fn input_dtype(case: &Case) -> Option<DType> {
    case.invocation
        .inputs
        .first()
        .and_then(Option::as_ref)
        .map(|t| t.dtype)
}

/// Whether the trial expects outputs with at least one element (so the rule ran on data).
fn produces_elements(case: &Case) -> bool {
    matches!(&case.expect, Expectation::Outputs(outputs) if outputs.iter().any(|o| !o.is_empty()))
}

fn expects_error(case: &Case, kind: ErrorKind) -> bool {
    matches!(&case.expect, Expectation::Error { kind: k, .. } if *k == kind)
}

fn combinations(op: Op, trials: &[&Case]) -> Vec<Table> {
    vec![(COMBINATIONS.get(op))(trials)]
}

/// Each op's table of the combinations its documents list: the only place the runner lists
/// the ops.
static COMBINATIONS: OpTable<fn(&[&Case]) -> Table> = OpTable::new([
    (Op::Shuffle, shuffle_table),
    (Op::Slice, slice_table),
    (Op::AsStrided, as_strided_table),
    (Op::Scale, scale_table),
    (Op::Reformat, reformat_table),
]);

/// docs/semantics.md §1.3, §1.4: 0 and -1 in the reshape dims (attribute or input 1), with and
/// without `zero_is_placeholder`.
fn shuffle_table(trials: &[&Case]) -> Table {
    let mut reached = BTreeSet::new();
    for case in trials {
        let Attrs::Shuffle(attrs) = &case.invocation.attrs else {
            continue;
        };
        let dims = match case.invocation.inputs.get(1).and_then(Option::as_ref) {
            Some(tensor) => tensor.int_values(),
            None => attrs.reshape_dims.clone(),
        };
        let Some(dims) = dims else { continue };
        let special = match (dims.contains(&0), dims.contains(&-1)) {
            (true, false) => "0",
            (false, true) => "-1",
            (true, true) => "0 and -1",
            (false, false) => continue,
        };
        reached.insert((special, attrs.zero_is_placeholder.unwrap_or(true)));
    }
    let mut cells = Vec::new();
    for special in ["0", "-1", "0 and -1"] {
        for zero_is_placeholder in [true, false] {
            cells.push((
                format!("reshape dims with {special} × zero_is_placeholder {zero_is_placeholder}"),
                reached.contains(&(special, zero_is_placeholder)),
            ));
        }
    }
    Table {
        title: "reshape special value × zero_is_placeholder".into(),
        cells,
    }
}

fn slice_table(trials: &[&Case]) -> Table {
    let mode_of = |case: &Case| match &case.invocation.attrs {
        Attrs::Slice(attrs) => Some(attrs.mode.unwrap_or_default()),
        _ => None,
    };
    let mut cells = Vec::new();
    for mode in slice::Mode::ALL {
        let name = wire(mode);
        for dtype in DType::ALL.into_iter().filter(|&d| slice::lists(d)) {
            // The op's own rule: §2.6, "CLAMP, FILL and REFLECT modes do not support int64 or
            // bfloat16".
            let excluded = !mode.accepts(dtype);
            let hit = trials.iter().any(|case| {
                mode_of(case) == Some(mode)
                    && input_dtype(case) == Some(dtype)
                    && if excluded {
                        expects_error(case, ErrorKind::UnsupportedDtype)
                    } else {
                        produces_elements(case)
                    }
            });
            let expectation = if excluded { "rejected" } else { "outputs" };
            cells.push((format!("{name} × {dtype} ({expectation})"), hit));
        }
    }
    Table {
        title: "mode × dtype (docs/semantics.md §2.6)".into(),
        cells,
    }
}

fn scale_table(trials: &[&Case]) -> Table {
    let mut cells = Vec::new();
    for mode in scale::Mode::ALL {
        let name = wire(mode);
        for dtype in scale::DTYPES {
            let hit = trials.iter().any(|case| {
                matches!(&case.invocation.attrs, Attrs::Scale(a) if a.mode == mode)
                    && input_dtype(case) == Some(dtype)
                    && produces_elements(case)
            });
            cells.push((format!("{name} × {dtype} input"), hit));
        }
    }
    Table {
        title: "mode × input dtype (docs/semantics.md §3.5)".into(),
        cells,
    }
}

fn reformat_table(trials: &[&Case]) -> Table {
    let mut cells = Vec::new();
    for format in Format::ALL {
        for &dtype in format.dtypes() {
            let hit = trials.iter().any(|case| {
                matches!(&case.invocation.attrs, Attrs::Reformat(a) if a.from == format || a.to == format)
                    && input_dtype(case) == Some(dtype)
                    && produces_elements(case)
            });
            cells.push((format!("{} × {dtype}", format.name()), hit));
        }
    }
    Table {
        title: "format × dtype (docs/semantics.md §4 table)".into(),
        cells,
    }
}

/// docs/semantics.md §5.2, ATB's tensor checks and ParamCheck: each constraint at its limit
/// (accepted) and one past it (rejected).
fn as_strided_table(trials: &[&Case]) -> Table {
    /// The flat index of the last element the view reads.
    fn reach(a: &as_strided::Attrs) -> Option<i128> {
        let offset = *a.offset.first()?;
        let steps: i128 = a
            .size
            .iter()
            .zip(&a.stride)
            .map(|(&s, &t)| (s as i128 - 1) * t as i128)
            .sum();
        Some(offset as i128 + steps)
    }
    type Probe = fn(&as_strided::Attrs, i128, &[usize]) -> bool;
    // (constraint at the boundary, accepted?, whether a case's attributes are there given numel
    // and the input's shape)
    let rows: [(&str, bool, Probe); 21] = [
        ("input rank = 1 (fewest)", true, |_, _, s| s.len() == 1),
        ("input rank = 8 (most)", true, |_, _, s| s.len() == 8),
        ("input rank = 0", false, |_, _, s| s.is_empty()),
        ("input rank = 9", false, |_, _, s| s.len() == 9),
        ("input with no element", false, |_, _, s| s.contains(&0)),
        ("size entries = 1 (fewest)", true, |a, _, _| {
            a.size.len() == 1
        }),
        ("size entries = 8 (most)", true, |a, _, _| a.size.len() == 8),
        ("size entries = 0", false, |a, _, _| a.size.is_empty()),
        ("size entries = 9", false, |a, _, _| a.size.len() == 9),
        ("size entry = 1 (smallest)", true, |a, _, _| {
            a.size.contains(&1)
        }),
        ("size entry = 0", false, |a, _, _| a.size.contains(&0)),
        ("stride entries = size entries - 1", false, |a, _, _| {
            a.stride.len() + 1 == a.size.len()
        }),
        ("stride entries = size entries + 1", false, |a, _, _| {
            a.stride.len() == a.size.len() + 1
        }),
        ("stride entry = 0 (smallest)", true, |a, _, _| {
            a.stride.contains(&0)
        }),
        ("stride entry = -1", false, |a, _, _| a.stride.contains(&-1)),
        ("offset entries = 0", false, |a, _, _| a.offset.is_empty()),
        ("offset entries = 2", false, |a, _, _| a.offset.len() == 2),
        ("offset = 0 (smallest)", true, |a, _, _| a.offset == [0]),
        ("offset = -1", false, |a, _, _| a.offset == [-1]),
        ("reach = numel - 1 (the last element)", true, |a, n, _| {
            reach(a) == Some(n - 1)
        }),
        ("reach = numel (one past the end)", false, |a, n, _| {
            reach(a) == Some(n)
        }),
    ];
    let mut cells = Vec::new();
    for (name, accepted, probe) in rows {
        let hit = trials.iter().any(|case| {
            let Attrs::AsStrided(attrs) = &case.invocation.attrs else {
                return false;
            };
            let input = case.invocation.inputs.first().and_then(Option::as_ref);
            let numel = input.map_or(0, |t| t.len() as i128);
            let shape = input.map_or(&[][..], |t| t.shape.as_slice());
            probe(attrs, numel, shape)
                && if accepted {
                    produces_elements(case)
                } else {
                    matches!(case.expect, Expectation::Error { .. })
                }
        });
        let side = if accepted { "accepted" } else { "rejected" };
        cells.push((format!("{name} ({side})"), hit));
    }
    Table {
        title: "constraint × boundary (docs/semantics.md §5.2)".into(),
        cells,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The mode × dtype table expects what the op does: a rejection exactly where Slice
    /// rejects the dtype, and no cell for a dtype Slice does not list.
    #[test]
    fn slice_table_follows_the_op() {
        let cells = slice_table(&[]).cells;
        for mode in slice::Mode::ALL {
            for dtype in DType::ALL {
                let input = opspec::Tensor::from_bits(dtype, vec![1], vec![0]);
                let attrs = slice::Attrs {
                    start: Some(vec![0]),
                    size: Some(vec![1]),
                    mode: Some(mode),
                    ..slice::Attrs::default()
                };
                let rejected =
                    slice::plan(&attrs, &input, slice::Inputs::default(), Limits::DEFAULT)
                        .is_err_and(|e| e.kind == ErrorKind::UnsupportedDtype);
                let expected = if rejected { "rejected" } else { "outputs" };
                let label = format!("{} × {dtype} ({expected})", wire(mode));
                let listed = cells.iter().any(|(cell, _)| *cell == label);
                assert_eq!(listed, slice::lists(dtype), "{label}");
            }
        }
        assert_eq!(cells.len(), 5 * 9);
    }
}
