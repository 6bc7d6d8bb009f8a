//! Generated trials: the cases of the sweeps (`sweeps/<op>/*.yaml`), judged against their
//! goldens (`golden/`), the metamorphic round trips, and one failing trial per unused golden.
//!
//! | trial | passes when |
//! |---|---|
//! | `<op>::sweep::<file>::<case>[::<dtype>]` | the golden is intact (hash, provenance), the reference still gives it, and the backend matches it |
//! | `<op>::metamorphic::<file>::<case>[::<dtype>]` | the backend, running the case and then its inverse (`opspec_generate::metamorphic`), gives the input back bit for bit |
//! | `golden::unused::<op>/<file>/<golden>` | never: a golden no case uses (when blessing: removed, or kept if its sweep was not loaded) |
//!
//! A failing generated layout case also says where each wrong element came from, decoding the
//! provenance inputs: `out[2,0,1] holds in[1,2,0], expected in[0,1,2]`.
//!
//! This module loads the sweeps and their goldens ([`GeneratedTrials`]) and judges a trial
//! ([`judge`], [`round_trip`]); the harness ([`crate::run::harness`]) makes them trials and records
//! their verdicts, as for spec cases.
//!
//! Blessing (`OPSPEC_BLESS=1`) rewrites missing, stale or corrupt goldens from the reference and
//! removes the orphans of the sweeps it loaded, listing each (the rules: `opspec_generate::golden`); it
//! is refused when `CI` is set, so CI never writes a golden.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;

use libtest_mimic::Arguments;
use opspec::tensor::Limits;
use opspec::{ErrorKind, Op, OpError, Tensor};
use opspec_generate::golden::{GoldenError, GoldenStore, Unused};
use opspec_generate::metamorphic;
use opspec_generate::sweep::{load_dirs, Sweeps};
use opspec_generate::values::Provenance;
use opspec_generate::GeneratedCase;
use opspec_spec::compare::compare_exact;
use opspec_spec::{Case, Expectation, SpecError};

use crate::backend::interface::{Backend, BackendError, Exclusion, Outcome, Reference};
use crate::judge::status::Status;
use crate::judge::verdict::{describe_case, render_mismatch, Verdict};
use crate::run::config::{env_flag, exact_trial, Config};
use crate::run::send::send_and_judge;

/// How many wrong elements a provenance report decodes.
const DECODED: usize = 8;

/// Where the sweeps and goldens are, and whether to bless.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct GeneratedConfig {
    pub(crate) sweeps: Vec<PathBuf>,
    pub(crate) golden: PathBuf,
    /// How the golden folder is named in messages.
    pub(crate) label: String,
    pub(crate) bless: bool,
    /// The run's bounds of every tensor, which the sweeps' inputs and the goldens read stay
    /// within.
    pub(crate) limits: Limits,
}

impl GeneratedConfig {
    /// From the run's sweep and golden folders, and whether to bless. `Ok(None)`: no sweep
    /// folder, so no generated trials. `Err` when blessing is asked for while `CI` is set.
    pub(crate) fn from_config(config: &Config) -> Result<Option<GeneratedConfig>, String> {
        let Some(first) = config.sweeps.first() else {
            return Ok(None);
        };
        if config.bless && env_flag(std::env::var_os("CI")) {
            return Err(
                "blessing (--bless or OPSPEC_BLESS) is asked for while CI is set: goldens are never written in CI. Bless locally (`runner --bless` or `OPSPEC_BLESS=1 cargo test`), review `git diff golden/` and commit it."
                    .into(),
            );
        }
        let (golden, label) = match &config.golden {
            Some(dir) => (dir.clone(), dir.display().to_string()),
            None => {
                let dir = first
                    .parent()
                    .map_or(PathBuf::from("golden"), |p| p.join("golden"));
                let label = if config.sweeps == [config.checkout.root.join("sweeps")] {
                    "golden".to_owned()
                } else {
                    dir.display().to_string()
                };
                (dir, label)
            }
        };
        Ok(Some(GeneratedConfig {
            sweeps: config.sweeps.clone(),
            golden,
            label,
            bless: config.bless,
            limits: config.limits(),
        }))
    }
}

/// The generated cases of a run and their golden store.
pub(crate) struct GeneratedTrials {
    sweeps: Sweeps,
    store: Arc<GoldenStore>,
    unused: Vec<Unused>,
}

impl GeneratedTrials {
    /// Loads the sweeps the arguments can select (one file for an exact trial name, as cargo
    /// nextest runs them); `None` when generated trials are off.
    pub(crate) fn load(
        args: &Arguments,
        config: &Config,
    ) -> Result<Option<GeneratedTrials>, String> {
        let Some(config) = GeneratedConfig::from_config(config)? else {
            return Ok(None);
        };
        Ok(Some(GeneratedTrials::with_config(
            &config,
            exact_sweep(args),
        )))
    }

    pub(crate) fn with_config(
        config: &GeneratedConfig,
        only: Option<(&str, &str)>,
    ) -> GeneratedTrials {
        let sweeps = load_dirs(&config.sweeps, only, config.limits);
        // The tests of an interrupted bless ask for a fault through the environment.
        let fault = std::env::var("OPSPEC_BLESS_FAULT").ok();
        let store = Arc::new(
            GoldenStore::new(config.golden.clone(), config.label.clone(), config.bless)
                .with_limits(config.limits)
                .with_fault(fault.as_deref()),
        );
        // A partial load would report every other golden as unused.
        let unused = if only.is_none() && sweeps.errors.is_empty() {
            let used: BTreeSet<_> = sweeps.cases.iter().map(|g| g.golden.clone()).collect();
            store.unused(&used)
        } else {
            Vec::new()
        };
        GeneratedTrials {
            sweeps,
            store,
            unused,
        }
    }

    pub(crate) fn cases(&self) -> &[GeneratedCase] {
        &self.sweeps.cases
    }

    pub(crate) fn unused(&self) -> &[Unused] {
        &self.unused
    }

    /// The problems of the sweep files, each a failing trial.
    pub(crate) fn errors(&self) -> &[SpecError] {
        &self.sweeps.errors
    }

    /// The golden store the generated trials are judged against (and blessing writes).
    pub(crate) fn store(&self) -> &Arc<GoldenStore> {
        &self.store
    }

    /// The case of every generated trial (a sweep case, and its round trip's first step).
    pub(crate) fn trial_cases(&self) -> Vec<&Case> {
        let mut cases = Vec::new();
        for generated in &self.sweeps.cases {
            cases.push(&generated.case);
            cases.extend(&generated.metamorphic);
        }
        cases
    }

    /// The generated case whose trial is `name`: the sweep case, or a round trip
    /// ([`GeneratedTrial::RoundTrip`]).
    pub(crate) fn find(&self, name: &str) -> Option<GeneratedTrial<'_>> {
        self.sweeps.cases.iter().find_map(|generated| {
            if generated.case.trial_name() == name {
                return Some(GeneratedTrial::Sweep(generated));
            }
            (generated.metamorphic.as_ref())
                .filter(|m| m.trial_name() == name)
                .map(|first| GeneratedTrial::RoundTrip {
                    first,
                    provenance: generated.provenance.as_ref(),
                })
        })
    }

    /// Writes what blessing changed, and says so.
    pub(crate) fn finish(&self) -> Result<(), GoldenError> {
        if !self.store.is_blessing() {
            // What a stopped bless left is named; the next bless removes it.
            for line in self.store.leftovers() {
                eprintln!("warning: {line}");
            }
            return Ok(());
        }
        let summary = self.store.finish()?;
        for line in summary.removals.iter().chain(&summary.kept) {
            println!("{line}");
        }
        println!(
            "blessed: {} golden(s) written, {} removed under {}/; review them with `git diff -- {}` before committing",
            summary.written,
            summary.removed,
            self.store.label(),
            self.store.label()
        );
        Ok(())
    }
}

/// `(op, sweep file)` when the arguments run one exact generated trial (every sweep for an
/// unused golden's trial, which needs them all).
fn exact_sweep(args: &Arguments) -> Option<(&str, &str)> {
    let name = exact_trial(args).filter(|name| !name.starts_with("golden::"))?;
    let mut parts = name.split("::");
    let op = parts.next()?;
    match parts.next()? {
        "sweep" | "metamorphic" => parts.next().map(|file| (op, file)),
        // A spec trial: no sweep needed, but an unknown file loads nothing.
        _ => Some((op, "")),
    }
}

/// One generated trial: a sweep case judged against its golden, or the round trip of one.
#[derive(Clone, Copy, Debug)]
pub(crate) enum GeneratedTrial<'a> {
    Sweep(&'a GeneratedCase),
    RoundTrip {
        /// The round trip's first step.
        first: &'a Case,
        provenance: Option<&'a Provenance>,
    },
}

/// A generated case's verdict, with the error the reference gives the case (if any): the
/// case's expected error, by which known failures match it ([`with_expected_error`]).
pub(crate) struct GeneratedVerdict {
    pub(crate) verdict: Verdict,
    pub(crate) reference_error: Option<ErrorKind>,
    /// The composed paths the backend's reply names.
    pub(crate) composed: Vec<String>,
}

/// Judges a generated case: the golden first (intact, fresh against the reference's result),
/// then the backend against it.
pub(crate) fn judge(
    backend: &dyn Backend,
    reference: Reference,
    generated: &GeneratedCase,
    store: &GoldenStore,
) -> GeneratedVerdict {
    let reference = reference.evaluate(&generated.case.invocation);
    let reference_error = reference.as_ref().err().map(|error| error.kind);
    let (verdict, composed) = judge_against_golden(backend, generated, store, &reference);
    GeneratedVerdict {
        verdict,
        reference_error,
        composed,
    }
}

fn judge_against_golden(
    backend: &dyn Backend,
    generated: &GeneratedCase,
    store: &GoldenStore,
    reference: &Result<Vec<Tensor>, OpError>,
) -> (Verdict, Vec<String>) {
    let golden = match store.check(
        &generated.golden,
        generated.seed,
        &generated.hash,
        reference,
    ) {
        Ok(golden) => golden,
        Err(problem) => {
            let report = format!("{}\n{problem}", describe_case(&generated.case));
            return (Verdict::fail(report), Vec::new());
        }
    };
    let mut case = generated.case.clone();
    case.expect = golden.expect;
    let sent = send_and_judge(backend, &case);
    let verdict = sent.verdict;
    let composed = sent.composed;
    let actual = match sent.outcome {
        Some(Outcome::Outputs(mut outputs)) if !outputs.is_empty() => Some(outputs.swap_remove(0)),
        _ => None,
    };
    let verdict = match verdict.status {
        Status::Failed => {
            let decoded = match (&generated.provenance, &actual, &case.expect) {
                (Some(provenance), Some(actual), Expectation::Outputs(expected)) => {
                    let input = case.invocation.inputs[0].as_ref().expect("input");
                    provenance_report(case.op, provenance, &input.shape, &expected[0], actual)
                }
                _ => None,
            };
            Verdict::fail(with_lines(verdict.message, decoded))
        }
        _ => verdict,
    };
    (verdict, composed)
}

/// Judges a round trip: the backend runs `first`, then its inverse on the output, and must
/// give the input back bit for bit; `limits` bound the second step's tensors. With the
/// composed paths the two replies name.
pub(crate) fn round_trip(
    backend: &dyn Backend,
    first: &Case,
    provenance: Option<&Provenance>,
    limits: Limits,
) -> (Verdict, Vec<String>) {
    let noted = std::cell::RefCell::new(Vec::new());
    let verdict = round_trip_noting(backend, first, provenance, limits, &noted);
    let mut composed = noted.into_inner();
    composed.sort();
    composed.dedup();
    (verdict, composed)
}

fn round_trip_noting(
    backend: &dyn Backend,
    first: &Case,
    provenance: Option<&Provenance>,
    limits: Limits,
    noted: &std::cell::RefCell<Vec<String>>,
) -> Verdict {
    let relation = metamorphic::describe(first.op);
    let fail = |message: String| {
        Verdict::fail(format!(
            "{}\nround trip: {relation}\n{message}",
            describe_case(first)
        ))
    };
    if let Err(reason) = backend.supports(first) {
        return Verdict::excluded(reason);
    }
    if backend.build_only() {
        return Verdict::excluded(Exclusion {
            by: "build_only".into(),
            reason: format!(
                "{} only builds cases: a round trip needs the first step's values",
                backend.name()
            ),
        });
    }
    let step = |case: &Case, which: &str| -> Result<Tensor, Box<Verdict>> {
        let answer = backend.run_noting(case).map(|(outcome, composed)| {
            noted.borrow_mut().extend(composed);
            outcome
        });
        let verdict = match answer {
            Err(BackendError::NotRun(reason)) => Verdict::not_run(reason),
            Err(broken) => fail(format!("the {which} step broke: {broken}")),
            Ok(Outcome::Unsupported(reason)) => Verdict::unsupported(reason),
            Ok(Outcome::Built(_)) => fail(format!(
                "the {which} step was answered `built`, without values"
            )),
            Ok(Outcome::Rejected { kind, message }) => fail(format!(
                "the {which} step was rejected ({}: {message}); the reference accepts it",
                kind.map_or("no kind", |k| k.name())
            )),
            Ok(Outcome::Outputs(mut outputs)) if !outputs.is_empty() => {
                return Ok(outputs.remove(0))
            }
            Ok(Outcome::Outputs(_)) => fail(format!("the {which} step gave no output")),
        };
        Err(Box::new(verdict))
    };
    let middle = match step(first, "first") {
        Ok(output) => output,
        Err(verdict) => return *verdict,
    };
    let second_invocation = match metamorphic::second(&first.invocation, &middle, limits) {
        Ok(invocation) => invocation,
        Err(message) => return fail(format!("no second step: {message}")),
    };
    let mut second = first.clone();
    second.invocation = second_invocation;
    // Its own name, hence its own request id (docs/protocol.md, "Round trips"): a reply to
    // the first step can never be taken for the second's.
    second.name = format!("{}::{BACK_STEP}", first.name);
    // The way back may use a value the hello leaves out (fill, then strict_bounds).
    if let Err(exclusion) = backend.supports(&second) {
        return Verdict::excluded(exclusion);
    }
    let back = match step(&second, "second") {
        Ok(output) => output,
        Err(verdict) => return *verdict,
    };
    let input = first.invocation.inputs[0].as_ref().expect("input");
    match compare_exact(input, &back) {
        Ok(()) => Verdict::pass(),
        Err(mismatch) => {
            let message = format!(
                "then:   {}\nthe round trip did not give the input back (expected = the input):\n{}",
                crate::backend::protocol::attrs_json(&second.invocation),
                render_mismatch(&mismatch, input, &back)
            );
            let decoded =
                provenance.and_then(|p| provenance_report(first.op, p, &input.shape, input, &back));
            fail(with_lines(message, decoded))
        }
    }
}

/// A generated case, which carries no expectation until its golden is read, with the error
/// the reference gives it, if any: what known failures match it by
/// ([`crate::judge::expectations::Expectations::cited`]).
pub(crate) fn with_expected_error(case: &Case, reference_error: Option<ErrorKind>) -> Case {
    let mut case = case.clone();
    if let Some(kind) = reference_error {
        case.expect = Expectation::Error {
            kind,
            message: None,
        };
    }
    case
}

/// The error the reference gives `case`, if any.
pub(crate) fn reference_error(reference: Reference, case: &Case) -> Option<ErrorKind> {
    reference
        .evaluate(&case.invocation)
        .err()
        .map(|error| error.kind)
}

/// What the second step of a round trip adds to the case name, and so to its request id:
/// `<op>::metamorphic::<file>::<case>::back[::<dtype>]`.
pub(crate) const BACK_STEP: &str = "back";

/// `report` with `lines` appended on lines of their own.
fn with_lines(mut report: String, lines: Option<String>) -> String {
    if let Some(lines) = lines {
        report.truncate(report.trim_end().len());
        report.push('\n');
        report.push_str(&lines);
    }
    report
}

/// Where the wrong elements of a layout op's output came from, decoded from the provenance
/// input: `out[2,0,1] holds in[1,2,0], expected in[0,1,2]`. `None` for scale (it computes) or
/// when dtype or shape differ.
pub(crate) fn provenance_report(
    op: Op,
    provenance: &Provenance,
    input_shape: &[usize],
    expected: &Tensor,
    actual: &Tensor,
) -> Option<String> {
    if op == Op::Scale
        || expected.dtype != actual.dtype
        || expected.shape != actual.shape
        || expected.dtype != provenance.dtype
    {
        return None;
    }
    let wrong: Vec<usize> = (0..expected.len())
        .filter(|&i| expected.bits(i) != actual.bits(i))
        .collect();
    if wrong.is_empty() {
        return None;
    }
    let index = |shape: &[usize], flat: usize| {
        let parts: Vec<String> = opspec_spec::unravel(shape, flat)
            .iter()
            .map(usize::to_string)
            .collect();
        format!("[{}]", parts.join(","))
    };
    let source = |bits: u64| match provenance.decode(bits) {
        Some(i) => format!("in{}", index(input_shape, i)),
        None => format!("{} (no input element)", expected.dtype.format_bits(bits)),
    };
    let mut text = format!(
        "provenance (input element i holds the i-th code of {}{}):",
        provenance.dtype,
        if provenance.is_partial() {
            format!(
                "; partial: {} distinct codes for {} elements, a repeated code names its first element",
                provenance.capacity,
                provenance.len()
            )
        } else {
            String::new()
        }
    );
    for &i in wrong.iter().take(DECODED) {
        text.push_str(&format!(
            "\n  out{} holds {}, expected {}",
            index(&expected.shape, i),
            source(actual.bits(i)),
            source(expected.bits(i))
        ));
    }
    if wrong.len() > DECODED {
        text.push_str(&format!("\n  … and {} more", wrong.len() - DECODED));
    }
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use opspec::DType;

    #[test]
    fn a_wrong_element_names_its_source() {
        let provenance = Provenance::new(DType::Float32, 24);
        let input_shape = [2, 3, 4];
        // Expected out[0] = in[0,1,2] (flat 6), actual holds in[1,2,0] (flat 20).
        let code = |i: usize| provenance.code(i);
        let expected = Tensor::from_bits(DType::Float32, vec![1, 2], vec![code(6), code(1)]);
        let actual = Tensor::from_bits(DType::Float32, vec![1, 2], vec![code(20), 0]);
        let report =
            provenance_report(Op::Shuffle, &provenance, &input_shape, &expected, &actual).unwrap();
        assert!(
            report.contains("out[0,0] holds in[1,2,0], expected in[0,1,2]"),
            "{report}"
        );
        assert!(
            report.contains("out[0,1] holds 0.0 (no input element), expected in[0,0,1]"),
            "{report}"
        );
    }
}
