//! Judging an outcome against a case's expectation, and the failure report a person reads.
//!
//! Outputs are compared as [`opspec_spec::compare`] says: layout ops bit for bit, Scale within the
//! case's tolerance or the default for its output dtype. A case marked
//! `implementation_defined` holds the reference's reading of undocumented behaviour: the
//! reference must match it, while another backend whose values differ, that rejects the case,
//! or (for a case that expects an error) that returns outputs or another error kind, gets the
//! status [`Status::ImplementationDefined`] with the difference as the reason, not a failure.
//! A wrong dtype, shape or output count still fails.
//!
//! A case expecting an error is sent even when the backend's hello excludes one of its dtypes
//! (a backend must still reject input it does not support); since the case then breaks a
//! second rule for that backend, `unsupported_dtype` passes in place of the expected kind
//! (docs/protocol.md, "What the runner does with a hello").

use opspec::{DType, ErrorKind, Tensor};
use opspec_spec::compare::{compare, comparison_for, Comparison, Mismatch};
use opspec_spec::{Case, Evidence, Expectation};

use crate::backend::hello::dtype_declaration;
use crate::backend::interface::{BuiltOutput, Exclusion, Outcome};
use crate::judge::expectations::{Entry, EntryLine};
use crate::judge::status::Status;

/// What became of a trial: its status, and the report or reason a person reads (empty for a
/// pass).
#[derive(Clone, Debug, PartialEq)]
pub struct Verdict {
    pub status: Status,
    pub(crate) message: String,
    /// The hello declaration that excluded the trial, when it is [`Status::Excluded`].
    pub(crate) excluded_by: Option<String>,
    /// The expectations entry that made it a [`Status::KnownFailure`].
    pub(crate) known: Option<EntryLine>,
}

impl Verdict {
    fn new(status: Status, message: String) -> Verdict {
        Verdict {
            status,
            message,
            excluded_by: None,
            known: None,
        }
    }

    /// A verdict of `status` and nothing else, for the tests of what reads one.
    #[cfg(test)]
    pub(crate) fn of_status(status: Status, message: String) -> Verdict {
        Verdict::new(status, message)
    }

    pub(crate) fn pass() -> Verdict {
        Verdict::new(Status::Passed, String::new())
    }

    pub(crate) fn fail(report: String) -> Verdict {
        Verdict::new(Status::Failed, report)
    }

    /// The backend replied `unsupported` to a case its hello did not exclude.
    pub(crate) fn unsupported(reason: String) -> Verdict {
        Verdict::new(Status::Unsupported, reason)
    }

    /// Not run because the backend's hello excludes it, or an `unsupported` reply to such a
    /// case.
    pub(crate) fn excluded(exclusion: Exclusion) -> Verdict {
        Verdict {
            excluded_by: Some(exclusion.by),
            ..Verdict::new(Status::Excluded, exclusion.reason)
        }
    }

    /// Not sent to the backend, for this reason (it was given up on); fails the run.
    pub(crate) fn not_run(reason: String) -> Verdict {
        Verdict::new(Status::NotRun, format!("not run: {reason}"))
    }

    /// Not sent because `--fail-fast` stopped the run at the failure of the trial `first`.
    pub(crate) fn stopped(first: &str) -> Verdict {
        Verdict::not_run(format!(
            "--fail-fast stopped the run at the failure of {first}"
        ))
    }

    /// A pass that says what it did (a trial that removes an unused golden when blessing).
    pub(crate) fn pass_with(message: String) -> Verdict {
        Verdict::new(Status::Passed, message)
    }
}

/// A verdict with the known failures applied: the status a trial's record holds. A record
/// is made of nothing else ([`crate::judge::record::Record::of`]), and a decision only here,
/// by [`decide`] or, for a trial no known failure can cover, by [`Decision::uncovered`]: only
/// the verdict gives a trial its status.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Decision(Verdict);

impl Decision {
    /// The decision on a trial that no expectations entry covers, its verdict as it is: a
    /// trial that is no case (a spec problem, a stale expectation, an unused golden), one the
    /// hello excludes, one not run, and a case verdict when the run has no known failures.
    pub(crate) fn uncovered(verdict: Verdict) -> Decision {
        Decision(verdict)
    }

    pub(crate) fn verdict(&self) -> &Verdict {
        &self.0
    }

    pub(crate) fn into_verdict(self) -> Verdict {
        self.0
    }
}

/// Compares what the backend did with what the case expects. `is_reference` says the backend
/// is this repository's interpreter: message fragments are checked only for it (other
/// implementations word their errors their own way), and only it is held to the expected
/// values of an implementation-defined case.
pub fn judge(case: &Case, outcome: Outcome, is_reference: bool) -> Verdict {
    judge_excluding(case, &outcome, is_reference, &[])
}

/// [`judge`] for a backend whose hello excludes `excluded`, dtypes of the case: an
/// `unsupported` reply is then [`Status::Excluded`], and `unsupported_dtype` answers an error
/// case whatever kind it expects.
pub(crate) fn judge_excluding(
    case: &Case,
    outcome: &Outcome,
    is_reference: bool,
    excluded: &[DType],
) -> Verdict {
    // `true`: the difference is in values or in the accept/reject decision (or kind), which an
    // implementation-defined case tolerates from other backends.
    let (failure, in_values) = match (&case.expect, outcome) {
        (_, Outcome::Unsupported(reason)) if !excluded.is_empty() => {
            return Verdict::excluded(Exclusion {
                by: dtype_declaration(case, excluded),
                reason: format!("{reason} (its hello excludes {})", dtype_list(excluded)),
            })
        }
        (_, Outcome::Unsupported(reason)) => return Verdict::unsupported(reason.clone()),
        (Expectation::Outputs(expected), Outcome::Outputs(actual)) => {
            if expected.len() != actual.len() {
                (
                    format!(
                        "expected {} output(s), got {}",
                        expected.len(),
                        actual.len()
                    ),
                    false,
                )
            } else {
                let mismatch = expected.iter().zip(actual).find_map(|(e, a)| {
                    compare(e, a, comparison(case, e)).err().map(|mismatch| {
                        let in_values = !matches!(mismatch, Mismatch::Header { .. });
                        (render_mismatch(&mismatch, e, a), in_values)
                    })
                });
                match mismatch {
                    None => return Verdict::pass(),
                    Some(found) => found,
                }
            }
        }
        (Expectation::Outputs(expected), Outcome::Built(built)) => {
            match built_mismatch(expected, built) {
                None => {
                    return Verdict::new(
                        Status::ShapeChecked,
                        format!(
                            "shape-checked: built with the expected {}; values not run (a build-only backend)",
                            describe_built(built)
                        ),
                    )
                }
                Some(difference) => (difference, false),
            }
        }
        (Expectation::Outputs(_), Outcome::Rejected { kind, message }) => (
            format!(
                "expected outputs, but the case was rejected: {}: {message}",
                kind.map_or("(no kind)", |k| k.name())
            ),
            true,
        ),
        (Expectation::Error { kind, .. }, Outcome::Outputs(actual)) => (
            format!(
                "expected error `{kind}`, but got outputs {}",
                describe_tensors(actual)
            ),
            true,
        ),
        (Expectation::Error { kind, .. }, Outcome::Built(built)) => (
            format!(
                "expected error `{kind}`, but the backend built it: outputs {}",
                describe_built(built)
            ),
            true,
        ),
        (
            Expectation::Error { kind, message },
            Outcome::Rejected {
                kind: got,
                message: text,
            },
        ) => {
            match got {
                Some(ErrorKind::UnsupportedDtype) if !excluded.is_empty() => {
                    return Verdict::pass()
                }
                // Any rejection would do here, whatever rule it is for: not a pass.
                None => {
                    return Verdict::new(
                        Status::RejectedUnclassified,
                        format!("rejected without an error kind (expected `{kind}`): {text}"),
                    )
                }
                Some(got) if got != kind => {
                    (format!("expected error `{kind}`, got `{got}`: {text}"), true)
                }
                Some(_) => match message {
                    Some(fragment) if is_reference && !text.contains(fragment.as_str()) => (
                        format!(
                            "error `{kind}` as expected, but its message does not contain {fragment:?}: {text}\n{}",
                            line_diff("message", fragment, "expected fragment", text)
                        ),
                        false,
                    ),
                    _ => return Verdict::pass(),
                },
            }
        }
    };
    if case.implementation_defined && in_values && !is_reference {
        let first = failure.lines().next().unwrap_or_default();
        return Verdict::new(
            Status::ImplementationDefined,
            format!("implementation-defined: differs from the reference's reading ({first})"),
        );
    }
    Verdict::fail(format!("{}\n{failure}", describe_case(case)))
}

/// How a backend's outcome disagrees with what the case expects, should it fail: the class
/// `opspec-fuzz` shrinks by (a shrunk candidate must disagree in the same way).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Disagreement {
    /// Both computed; the outputs differ (dtype, shape, or values beyond the tolerance).
    Outputs,
    /// The reference computes; the backend rejected the case.
    Rejected,
    /// The reference rejects; the backend computed.
    Accepted,
    /// Both rejected, with different error kinds.
    Kind,
    /// The backend crashed, hung or answered out of protocol.
    Broken,
}

impl Disagreement {
    /// The class of a difference between `expect` and `outcome`, if they differ (whether they
    /// do is [`judge`]'s to say); none for an `unsupported` reply, which is no answer.
    pub(crate) fn of(expect: &Expectation, outcome: &Outcome) -> Option<Disagreement> {
        Some(match (expect, outcome) {
            (_, Outcome::Unsupported(_)) => return None,
            (Expectation::Outputs(_), Outcome::Outputs(_) | Outcome::Built(_)) => {
                Disagreement::Outputs
            }
            (Expectation::Outputs(_), Outcome::Rejected { .. }) => Disagreement::Rejected,
            (Expectation::Error { .. }, Outcome::Outputs(_) | Outcome::Built(_)) => {
                Disagreement::Accepted
            }
            (Expectation::Error { .. }, Outcome::Rejected { .. }) => Disagreement::Kind,
        })
    }

    pub fn describe(self) -> &'static str {
        match self {
            Disagreement::Outputs => "different outputs",
            Disagreement::Rejected => "the backend rejects a case the reference computes",
            Disagreement::Accepted => "the backend computes a case the reference rejects",
            Disagreement::Kind => "a different error kind",
            Disagreement::Broken => "the backend broke",
        }
    }
}

/// Where a build-only backend's outputs differ from the expected ones in count, dtype or
/// shape.
fn built_mismatch(expected: &[Tensor], built: &[BuiltOutput]) -> Option<String> {
    if expected.len() != built.len() {
        return Some(format!(
            "expected {} output(s), the backend built {}",
            expected.len(),
            built.len()
        ));
    }
    expected
        .iter()
        .zip(built)
        .enumerate()
        .find(|(_, (e, b))| e.dtype != b.dtype || e.shape != b.shape)
        .map(|(position, (e, b))| {
            format!(
                "output {position}: expected {} {:?}, the backend built {} {:?}",
                e.dtype, e.shape, b.dtype, b.shape
            )
        })
}

/// Applies the backend's known failures to a trial's verdict: the one place where a verdict
/// ([`judge`]d, or found before anything was sent) becomes the status the reports show, for
/// every trial a run records. A failure or an `unsupported` reply that `known` covers is a
/// known failure; any other status under an entry makes the entry stale, which fails the
/// trial. An unexpected failure of a case gets the command that replays it (`replay`; none
/// for a trial that is no case, such as a spec problem).
pub(crate) fn decide(verdict: Verdict, known: Option<&Entry>, replay: Option<&str>) -> Decision {
    Decision(decided(verdict, known, replay))
}

fn decided(verdict: Verdict, known: Option<&Entry>, replay: Option<&str>) -> Verdict {
    let message = verdict.message.clone();
    match (verdict.status, known) {
        (Status::Failed | Status::Unsupported, Some(entry)) => {
            let report = if verdict.status == Status::Unsupported {
                format!("unsupported: {message}")
            } else {
                message
            };
            Verdict {
                known: Some(entry.written.clone()),
                ..Verdict::new(
                    Status::KnownFailure,
                    format!("known failure: {}\n{report}", entry.reason()),
                )
            }
        }
        (Status::Failed, None) => match replay {
            Some(replay) => Verdict::fail(format!("{}\nreplay: {replay}", message.trim_end())),
            None => verdict,
        },
        // Excluded and not-run trials were never answered: an entry says nothing about them.
        (Status::Excluded | Status::NotRun, _) | (_, None) => verdict,
        (Status::Passed, Some(entry)) => Verdict::fail(format!(
            "stale expectation: this case now passes; remove line {} (`{}: {}`) from the expectations file",
            entry.line(),
            entry.selector(),
            entry.reason()
        )),
        (status, Some(entry)) => Verdict::fail(format!(
            "stale expectation: line {} (`{}: {}`) says this case fails, but it is {}: {message}",
            entry.line(),
            entry.selector(),
            entry.reason(),
            status.name()
        )),
    }
}

/// Outputs of at most this many elements get their values shown whole, as a line diff.
pub(crate) const SMALL_TENSOR: usize = 64;

/// The report of a mismatch: [`Mismatch`]'s own text; for an output of at most
/// [`SMALL_TENSOR`] elements with more differing elements than that text lists, its summary
/// lines and then every value as a line diff (one element a line, `-` expected, `+` actual),
/// where a misplaced block is easier to see than in a list of the first differences. Each
/// difference is shown once.
pub(crate) fn render_mismatch(mismatch: &Mismatch, expected: &Tensor, actual: &Tensor) -> String {
    let text = mismatch.to_string();
    let Mismatch::Elements(elements) = mismatch else {
        return text;
    };
    // When the list of the first differences holds them all, it says everything; otherwise
    // the value diff shows every element and the list, which would repeat its first lines,
    // is left out.
    if expected.len() > SMALL_TENSOR || elements.count <= elements.first.len() {
        return text;
    }
    let lines = |tensor: &Tensor| {
        (0..tensor.len())
            .map(|i| {
                let index = opspec_spec::unravel(&tensor.shape, i);
                format!("{index:?} {}\n", tensor.dtype.format_bits(tensor.bits(i)))
            })
            .collect::<String>()
    };
    let mut summary = String::new();
    for line in text.lines() {
        let line = match line.rsplit_once("; first ") {
            Some((head, _)) => head,
            None => line,
        };
        if !line.starts_with("  at ") && !line.starts_with("first ") {
            summary.push_str(line);
            summary.push('\n');
        }
    }
    summary + &line_diff("values", &lines(expected), "expected", &lines(actual))
}

/// `expected` against `actual` as similar-asserts' line diff, headed
/// `<title> (-<label>|+actual):`, in plain text: reports are written to files too, so the
/// diff's terminal colours are left out.
pub(crate) fn line_diff(title: &str, expected: &str, label: &str, actual: &str) -> String {
    let diff = similar_asserts::SimpleDiff::from_str(expected, actual, label, "actual").to_string();
    let plain = strip_ansi(&diff);
    match plain.strip_prefix("Differences") {
        Some(rest) => format!("{title}{rest}"),
        None => plain,
    }
}

/// `text` without ANSI escape sequences (`ESC [ ... letter`).
fn strip_ansi(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            if chars.next() == Some('[') {
                for c in chars.by_ref() {
                    if c.is_ascii_alphabetic() {
                        break;
                    }
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// How the case's output `expected` is compared.
pub(crate) fn comparison(case: &Case, expected: &Tensor) -> Comparison {
    comparison_for(&case.invocation.attrs, expected.dtype, case.tolerance)
}

/// The header of a failure report: which case, where from, with what.
pub(crate) fn describe_case(case: &Case) -> String {
    let inputs: Vec<String> = case
        .op
        .inputs()
        .iter()
        .zip(&case.invocation.inputs)
        .filter_map(|(name, tensor)| {
            tensor
                .as_ref()
                .map(|t| format!("{name}: {} {:?}", t.dtype, t.shape))
        })
        .collect();
    let mut text = format!(
        "case:   {} ({})\nsource: {}{}{}{}\nclauses: {}\ninputs: {}\nattrs:  {}",
        case.trial_name(),
        case.path.display(),
        case.source,
        if case.evidence == Evidence::Recorded {
            " [recorded]"
        } else {
            ""
        },
        if case.inferred { " [inferred]" } else { "" },
        if case.implementation_defined {
            " [implementation-defined]"
        } else {
            ""
        },
        if case.clauses.is_empty() {
            "(none)".to_owned()
        } else {
            case.clauses.join(", ")
        },
        inputs.join(", "),
        crate::backend::protocol::attrs_json(&case.invocation),
    );
    if let Expectation::Outputs(expected) = &case.expect {
        if let Some(Comparison::Within(tolerance)) = expected.first().map(|e| comparison(case, e)) {
            let origin = if case.tolerance.is_some() {
                "the case's"
            } else {
                "default"
            };
            text.push_str(&format!("\ncompare: within {tolerance} ({origin})"));
        }
    }
    if let Some(note) = &case.note {
        text.push_str(&format!("\nnote:   {note}"));
    }
    text
}

/// `fp8, int8`.
fn dtype_list(dtypes: &[DType]) -> String {
    dtypes
        .iter()
        .map(|d| d.name())
        .collect::<Vec<_>>()
        .join(", ")
}

fn describe_built(outputs: &[BuiltOutput]) -> String {
    outputs
        .iter()
        .map(|o| match &o.format {
            Some(format) => format!("{} {:?} ({format})", o.dtype, o.shape),
            None => format!("{} {:?}", o.dtype, o.shape),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn describe_tensors(tensors: &[Tensor]) -> String {
    tensors
        .iter()
        .map(|t| format!("{} {:?}", t.dtype, t.shape))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::backend::interface::{Backend, BuiltOutput};

    use opspec::DType;
    use opspec_spec::load_dirs;

    /// A scratch spec folder holding `scale/<file>.yaml`.
    fn load_scale(name: &str, yaml: &str) -> Vec<Case> {
        let scratch = tempfile::tempdir().unwrap();
        let dir = scratch.path();
        std::fs::create_dir_all(dir.join("scale")).unwrap();
        std::fs::write(dir.join("scale").join(format!("{name}.yaml")), yaml).unwrap();
        let loaded = load_dirs(&[dir.to_path_buf()], None, opspec::tensor::Limits::DEFAULT);
        assert!(loaded.errors.is_empty(), "{:?}", loaded.errors);
        loaded.cases
    }

    /// Seed 003 "Scale 4D" with the expected 9.0 written 1 ULP high (9.000001 = 0x41100001).
    fn seed_case(tolerance: &str) -> String {
        format!(
            r#"
cases:
  - name: seed_uniform_off_by_one_ulp
    source: "seed 003, example 'Scale 4D', first value moved up 1 ULP"
    {tolerance}
    attrs: {{mode: uniform, scale: [2], shift: [1], power: [2]}}
    inputs:
      input: {{dtype: float32, shape: [1, 1, 3, 3], data: [[[[1, 2, 3], [4, 5, 6], [7, 8, 9]]]]}}
    expected:
      output:
        dtype: float32
        shape: [1, 1, 3, 3]
        data: [[[["0x41100001", 25, 49], [81, 121, 169], [225, 289, 361]]]]
"#
        )
    }

    fn reference_outcome(case: &Case) -> Outcome {
        Outcome::Outputs(
            opspec::ops::evaluate(&case.invocation, opspec::tensor::Limits::DEFAULT).unwrap(),
        )
    }

    #[test]
    fn one_ulp_off_passes_under_one_ulp_and_fails_under_zero() {
        let cases = load_scale("ulp1", &seed_case("tolerance: {ulp: 1}"));
        let case = &cases[0];
        assert_eq!(judge(case, reference_outcome(case), true), Verdict::pass());

        let cases = load_scale("ulp0", &seed_case("tolerance: {ulp: 0}"));
        let case = &cases[0];
        let Verdict {
            status: Status::Failed,
            message: report,
            ..
        } = judge(case, reference_outcome(case), true)
        else {
            panic!("a 1-ULP difference must fail under {{ulp: 0}}");
        };
        assert!(
            report.contains("1 of 9 elements are outside tolerance {ulp: 0}"),
            "{report}"
        );
        assert!(
            report.contains("worst ULP distance: 1 at [0, 0, 0, 0]"),
            "{report}"
        );
        assert!(
            report.contains("smallest tolerance that passes: {ulp: 1}"),
            "{report}"
        );
        assert!(
            report.contains("compare: within {ulp: 0} (the case's)"),
            "{report}"
        );

        // Without an override, power 2 on float32 takes the default of 4 ULP.
        let cases = load_scale("default", &seed_case(""));
        assert_eq!(
            judge(&cases[0], reference_outcome(&cases[0]), true),
            Verdict::pass()
        );
    }

    /// A small output's values are shown as a line diff (expected against actual), one
    /// element a line; a large one's are not.
    #[test]
    fn small_outputs_get_a_value_diff() {
        // One element differs: the list of first differences says it all, once.
        let cases = load_scale("diff", &seed_case("tolerance: {ulp: 0}"));
        let case = &cases[0];
        let Verdict {
            status: Status::Failed,
            message: report,
            ..
        } = judge(case, reference_outcome(case), true)
        else {
            panic!("a 1-ULP difference must fail under {{ulp: 0}}");
        };
        assert!(!report.contains("values (-expected|+actual):"), "{report}");
        assert_eq!(report.matches("9.000001").count(), 1, "{report}");

        // All twelve differ, more than the list keeps: the diff shows every value.
        let shape = vec![12];
        let expected = Tensor::from_bits(DType::Int8, shape.clone(), (0..12).collect());
        let actual = Tensor::from_bits(DType::Int8, shape, (0..12).map(|v| (v + 2) % 12).collect());
        let mismatch = opspec_spec::compare::compare_exact(&expected, &actual).unwrap_err();
        let report = render_mismatch(&mismatch, &expected, &actual);
        assert!(report.contains("values (-expected|+actual):"), "{report}");
        assert!(
            report.starts_with("12 of 12 elements differ (int8 [12])\nvalues"),
            "{report}"
        );
        assert!(report.contains("\n-[0] 0\n"), "{report}");
        assert!(report.contains("\n+[11] 1\n"), "{report}");
        // Each wrong value once: in the diff, not again in a list.
        assert_eq!(report.matches("[0] 2").count(), 1, "{report}");
        assert!(
            !report.contains('\u{1b}'),
            "no terminal colours in a report: {report:?}"
        );

        let n = SMALL_TENSOR + 1;
        let expected = Tensor::from_bits(DType::Int8, vec![n], vec![0; n]);
        let actual = Tensor::from_bits(DType::Int8, vec![n], vec![1; n]);
        let mismatch = opspec_spec::compare::compare_exact(&expected, &actual).unwrap_err();
        let text = render_mismatch(&mismatch, &expected, &actual);
        assert!(
            text.starts_with(&format!("{n} of {n} elements differ")),
            "{text}"
        );
        assert!(!text.contains("values (-expected"), "{text}");
    }

    /// An error message that lacks the expected fragment is shown against it as a diff.
    #[test]
    fn message_mismatches_get_a_diff() {
        let yaml = r#"
cases:
  - name: channel_axis_out_of_range
    source: "test"
    attrs: {mode: uniform, channel_axis: 4}
    inputs:
      input: {dtype: float32, shape: [1, 1, 1, 2], data: [[[[1, 2]]]]}
    error: {kind: invalid_channel_axis, message: "channel_axis 5 is outside"}
"#;
        let cases = load_scale("message", yaml);
        let case = &cases[0];
        let reference = crate::backend::interface::Reference::default()
            .run(case)
            .unwrap();
        let Verdict {
            status: Status::Failed,
            message: report,
            ..
        } = judge(case, reference, true)
        else {
            panic!("the fragment names another axis");
        };
        assert!(
            report.contains("message (-expected fragment|+actual):"),
            "{report}"
        );
        assert!(
            report.contains("\n-channel_axis 5 is outside\n"),
            "{report}"
        );
        assert!(
            report.contains("\n+channel_axis 4 is outside [-4, 4)"),
            "{report}"
        );
    }

    #[test]
    fn nan_and_infinity_rules_in_a_verdict() {
        let cases = load_scale("nan", &seed_case("tolerance: {ulp: 0}"));
        let case = &cases[0];
        let mut output = opspec::ops::evaluate(&case.invocation, opspec::tensor::Limits::DEFAULT)
            .unwrap()
            .remove(0);
        // Put an infinity where 25 is expected: no tolerance passes.
        let mut bits: Vec<u64> = (0..output.len()).map(|i| output.bits(i)).collect();
        bits[0] = 0x4110_0001;
        bits[1] = f32::INFINITY.to_bits() as u64;
        output = Tensor::from_bits(DType::Float32, output.shape.clone(), bits);
        let Verdict {
            status: Status::Failed,
            message: report,
            ..
        } = judge(case, Outcome::Outputs(vec![output]), true)
        else {
            panic!("an infinity for a finite value must fail");
        };
        assert!(report.contains("no tolerance passes"), "{report}");
        assert!(!report.contains("smallest tolerance"), "{report}");
    }

    #[test]
    fn a_failing_recorded_case_says_its_values_come_from_a_run() {
        let yaml = r#"
cases:
  - name: uniform_run
    source: "example/repo@0123456789abcdef0123456789abcdef01234567 run.log (Vendor 1.0)"
    evidence: recorded
    attrs: {mode: uniform, shift: [1]}
    inputs:
      input: {dtype: float32, shape: [1, 1, 1, 1], data: [[[[2]]]]}
    expected:
      output: {dtype: float32, shape: [1, 1, 1, 1], data: [[[[3]]]]}
"#;
        let cases = load_scale("recorded", yaml);
        let case = &cases[0];
        assert_eq!(case.evidence, Evidence::Recorded);
        let wrong = Tensor::from_bits(DType::Float32, vec![1, 1, 1, 1], vec![0]);
        let verdict = judge(case, Outcome::Outputs(vec![wrong]), false);
        assert_eq!(verdict.status, Status::Failed, "{verdict:?}");
        assert!(
            verdict
                .message
                .contains("run.log (Vendor 1.0) [recorded]\n"),
            "{}",
            verdict.message
        );
    }

    #[test]
    fn implementation_defined_cases_bind_only_the_reference() {
        let yaml = r#"
cases:
  - name: negative_base_half_power
    source: "docs/semantics.md §3.5: IEEE pow, negative base with non-integer power is NaN"
    implementation_defined: true
    unsupported_on: {dla: "custom power values are not supported on DLA"}
    attrs: {mode: uniform, power: [0.5]}
    inputs:
      input: {dtype: float32, shape: [1, 1, 1, 2], data: [[[[-4, 4]]]]}
    expected:
      output: {dtype: float32, shape: [1, 1, 1, 2], data: [[[[.nan, 2]]]]}
"#;
        let cases = load_scale("impl", yaml);
        let case = &cases[0];
        assert!(case.implementation_defined);
        assert_eq!(
            case.unsupported_reason(&["gpu", "dla"]),
            Some(("dla", "custom power values are not supported on DLA"))
        );
        assert_eq!(case.unsupported_reason(&["gpu"]), None);
        assert_eq!(judge(case, reference_outcome(case), true), Verdict::pass());
        // An engine that returns -2 for sqrt(-4) differs in values: skipped with the reason
        // for other backends, a failure for the reference.
        let other = Tensor::from_bits(
            DType::Float32,
            vec![1, 1, 1, 2],
            vec![(-2f32).to_bits() as u64, 2f32.to_bits() as u64],
        );
        let verdict = judge(case, Outcome::Outputs(vec![other.clone()]), false);
        assert!(
            matches!(&verdict, Verdict { status: Status::ImplementationDefined, message: reason, .. } if reason.starts_with("implementation-defined")),
            "{verdict:?}"
        );
        assert!(matches!(
            judge(case, Outcome::Outputs(vec![other]), true),
            Verdict {
                status: Status::Failed,
                ..
            }
        ));
        // A wrong shape is still a failure.
        let wrong = Tensor::from_bits(DType::Float32, vec![2], vec![0, 0]);
        assert!(matches!(
            judge(case, Outcome::Outputs(vec![wrong]), false),
            Verdict {
                status: Status::Failed,
                ..
            }
        ));
    }

    #[test]
    fn implementation_defined_error_cases_bind_only_the_reference() {
        let yaml = r#"
cases:
  - name: power_on_channel_axis_one
    source: "test: an error the vendor may not raise"
    implementation_defined: true
    attrs: {mode: uniform, channel_axis: 4}
    inputs:
      input: {dtype: float32, shape: [1, 1, 1, 2], data: [[[[1, 2]]]]}
    error: {kind: invalid_channel_axis}
"#;
        let cases = load_scale("impl-error", yaml);
        let case = &cases[0];
        let reference = crate::backend::interface::Reference::default()
            .run(case)
            .unwrap();
        assert_eq!(judge(case, reference, true), Verdict::pass());
        let outputs = Outcome::Outputs(vec![Tensor::from_bits(
            DType::Float32,
            vec![1, 1, 1, 2],
            vec![0, 0],
        )]);
        // Outputs where the reference rejects: a divergence for another backend...
        let verdict = judge(case, outputs.clone(), false);
        assert!(
            matches!(&verdict, Verdict { status: Status::ImplementationDefined, message: reason, .. }
                if reason.contains("expected error `invalid_channel_axis`, but got outputs")),
            "{verdict:?}"
        );
        // ...a failure for the reference.
        assert!(matches!(
            judge(case, outputs, true),
            Verdict {
                status: Status::Failed,
                ..
            }
        ));
        // Another kind is a divergence too.
        let other_kind = Outcome::Rejected {
            kind: Some(ErrorKind::InvalidRank),
            message: "rank".into(),
        };
        assert!(matches!(
            judge(case, other_kind.clone(), false),
            Verdict {
                status: Status::ImplementationDefined,
                message: _,
                ..
            }
        ));
        assert!(matches!(
            judge(case, other_kind, true),
            Verdict {
                status: Status::Failed,
                ..
            }
        ));
    }

    #[test]
    fn an_excluded_dtype_may_be_rejected_as_unsupported_dtype() {
        let yaml = r#"
cases:
  - name: bad_axis
    source: "test"
    attrs: {mode: uniform, channel_axis: 4}
    inputs:
      input: {dtype: float16, shape: [1, 1, 1, 2], data: [[[[1, 2]]]]}
    error: {kind: invalid_channel_axis}
"#;
        let cases = load_scale("excluded", yaml);
        let case = &cases[0];
        let rejected = Outcome::Rejected {
            kind: Some(ErrorKind::UnsupportedDtype),
            message: "no float16".into(),
        };
        assert_eq!(
            judge_excluding(case, &rejected, false, &[DType::Float16]),
            Verdict::pass()
        );
        assert!(matches!(
            judge(case, rejected, false),
            Verdict { status: Status::Failed, message: report, .. } if report.contains("got `unsupported_dtype`")
        ));
        let unsupported = Outcome::Unsupported("no float16".into());
        assert_eq!(
            judge_excluding(case, &unsupported, false, &[DType::Float16]),
            Verdict::excluded(Exclusion {
                by: format!("{} dtype float16", case.op),
                reason: "no float16 (its hello excludes float16)".into()
            })
        );
        assert_eq!(
            judge(case, unsupported, false),
            Verdict::unsupported("no float16".into())
        );
    }

    fn built(case: &Case) -> Vec<BuiltOutput> {
        let Expectation::Outputs(expected) = &case.expect else {
            panic!("a case with outputs");
        };
        expected
            .iter()
            .map(|t| BuiltOutput {
                dtype: t.dtype,
                shape: t.shape.clone(),
                format: None,
            })
            .collect()
    }

    #[test]
    fn a_build_only_answer_is_shape_checked_never_passed() {
        let cases = load_scale("built", &seed_case(""));
        let case = &cases[0];
        let verdict = judge(case, Outcome::Built(built(case)), false);
        assert_eq!(verdict.status, Status::ShapeChecked, "{verdict:?}");
        assert!(verdict
            .message
            .starts_with("shape-checked: built with the expected float32 [1, 1, 3, 3]"));
        // The known failures leave it as it is; an entry over it is stale.
        assert_eq!(
            decide(verdict.clone(), None, Some("r")).verdict().status,
            Status::ShapeChecked
        );
        let entry = Entry::new(
            7,
            Some("scale::*".into()),
            false,
            "scale.formula".into(),
            crate::judge::expectations::Class::Semantics,
            "why".into(),
            None,
        );
        let stale = decide(verdict, Some(&entry), Some("r")).into_verdict();
        assert_eq!(stale.status, Status::Failed);
        assert!(
            stale
                .message
                .contains("line 7 (`scale::*: why`) says this case fails, but it is shape_checked"),
            "{}",
            stale.message
        );

        let mut wrong = built(case);
        wrong[0].shape = vec![1, 1, 9];
        let verdict = judge(case, Outcome::Built(wrong), false);
        assert_eq!(verdict.status, Status::Failed);
        assert!(
            verdict.message.contains(
                "output 0: expected float32 [1, 1, 3, 3], the backend built float32 [1, 1, 9]"
            ),
            "{}",
            verdict.message
        );
    }

    #[test]
    fn a_rejection_without_a_kind_is_unclassified() {
        let yaml = r#"
cases:
  - name: bad_axis
    source: "test"
    attrs: {mode: uniform, channel_axis: 4}
    inputs:
      input: {dtype: float32, shape: [1, 1, 1, 2], data: [[[[1, 2]]]]}
    error: {kind: invalid_channel_axis}
"#;
        let cases = load_scale("kindless", yaml);
        let kindless = Outcome::Rejected {
            kind: None,
            message: "bad axis".into(),
        };
        let verdict = judge(&cases[0], kindless, false);
        assert_eq!(verdict.status, Status::RejectedUnclassified);
        assert_eq!(
            verdict.message,
            "rejected without an error kind (expected `invalid_channel_axis`): bad axis"
        );
    }

    /// The expectation × outcome matrix the fuzzer shrinks by: every expectation against every
    /// kind of answer.
    #[test]
    fn each_expectation_and_answer_has_its_disagreement() {
        let outputs = Expectation::Outputs(Vec::new());
        let error = Expectation::Error {
            kind: ErrorKind::InvalidRank,
            message: None,
        };
        let rejected = Outcome::Rejected {
            kind: Some(ErrorKind::InvalidRank),
            message: String::new(),
        };
        let answers = [
            Outcome::Outputs(Vec::new()),
            Outcome::Built(Vec::new()),
            rejected,
            Outcome::Unsupported("no".into()),
        ];
        let classes = |expect: &Expectation| -> Vec<Option<Disagreement>> {
            answers
                .iter()
                .map(|a| Disagreement::of(expect, a))
                .collect()
        };
        use Disagreement::*;
        assert_eq!(
            classes(&outputs),
            [Some(Outputs), Some(Outputs), Some(Rejected), None]
        );
        assert_eq!(
            classes(&error),
            [Some(Accepted), Some(Accepted), Some(Kind), None]
        );
    }
}
