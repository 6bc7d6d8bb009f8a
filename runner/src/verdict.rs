//! Judging an outcome against a case's expectation, and the failure report a person reads.

use opspec::compare::compare_exact;
use opspec::spec::{Case, Expectation};
use opspec::Tensor;

use crate::backend::Outcome;

/// The result of one trial.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    Pass,
    Fail(String),
    Unsupported(String),
}

/// Compares what the backend did with what the case expects. Message fragments are checked
/// only for the reference: other implementations word their errors their own way.
pub fn judge(case: &Case, outcome: Outcome, check_message: bool) -> Verdict {
    let failure = match (&case.expect, outcome) {
        (_, Outcome::Unsupported(reason)) => return Verdict::Unsupported(reason),
        (Expectation::Outputs(expected), Outcome::Outputs(actual)) => {
            if expected.len() != actual.len() {
                format!("expected {} output(s), got {}", expected.len(), actual.len())
            } else {
                match expected.iter().zip(&actual).find_map(|(e, a)| compare_exact(e, a).err()) {
                    None => return Verdict::Pass,
                    Some(report) => report,
                }
            }
        }
        (Expectation::Outputs(_), Outcome::Rejected { kind, message }) => format!(
            "expected outputs, but the case was rejected: {}: {message}",
            kind.map_or("(no kind)", |k| k.name())
        ),
        (Expectation::Error { kind, .. }, Outcome::Outputs(actual)) => format!(
            "expected error `{kind}`, but got outputs {}",
            describe_tensors(&actual)
        ),
        (Expectation::Error { kind, message }, Outcome::Rejected { kind: got, message: text }) => {
            match got {
                Some(got) if got != *kind => {
                    format!("expected error `{kind}`, got `{got}`: {text}")
                }
                _ => match message {
                    Some(fragment) if check_message && !text.contains(fragment.as_str()) => format!(
                        "error `{kind}` as expected, but its message does not contain {fragment:?}: {text}"
                    ),
                    _ => return Verdict::Pass,
                },
            }
        }
    };
    Verdict::Fail(format!("{}\n{failure}", describe_case(case)))
}

/// The header of a failure report: which case, where from, with what.
pub fn describe_case(case: &Case) -> String {
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
        "case:   {} ({})\nsource: {}{}\ninputs: {}\nattrs:  {:?}",
        case.trial_name(),
        case.path.display(),
        case.source,
        if case.inferred { " [inferred]" } else { "" },
        inputs.join(", "),
        case.invocation.attrs,
    );
    if let Some(note) = &case.note {
        text.push_str(&format!("\nnote:   {note}"));
    }
    text
}

fn describe_tensors(tensors: &[Tensor]) -> String {
    tensors
        .iter()
        .map(|t| format!("{} {:?}", t.dtype, t.shape))
        .collect::<Vec<_>>()
        .join(", ")
}
