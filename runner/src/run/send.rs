//! Sending a case and judging what came back, written once for every trial that sends one
//! case: a spec case of the main run ([`crate::run::harness`]), a generated case
//! ([`crate::run::generated`]) and a fuzzed one ([`crate::tools::fuzz`]).

use opspec_spec::Case;

use crate::backend::interface::{Backend, BackendError, Outcome};
use crate::judge::verdict::{describe_case, judge_excluding, Disagreement, Verdict};

/// What became of a case sent to a backend.
pub(crate) struct Sent {
    /// Its verdict, before the known failures apply ([`crate::judge::verdict::decide`]).
    pub(crate) verdict: Verdict,
    /// How the backend's answer differs from the case's expectation, should it be a failure:
    /// [`Disagreement::Broken`] for a backend that broke or was given up on; none when it
    /// was not sent, or was answered `unsupported`.
    pub(crate) disagreement: Option<Disagreement>,
    /// The backend's answer, if it gave one.
    pub(crate) outcome: Option<Outcome>,
    /// The composed paths its reply names ([`Backend::run_noting`]).
    pub(crate) composed: Vec<String>,
}

/// Sends `case` to `backend`, unless its hello excludes the case, and judges the answer
/// ([`judge_excluding`], with the dtypes the hello excludes).
pub(crate) fn send_and_judge(backend: &dyn Backend, case: &Case) -> Sent {
    let unsent = |verdict: Verdict, disagreement: Option<Disagreement>| Sent {
        verdict,
        disagreement,
        outcome: None,
        composed: Vec::new(),
    };
    if let Err(exclusion) = backend.supports(case) {
        return unsent(Verdict::excluded(exclusion), None);
    }
    match backend.run_noting(case) {
        Ok((outcome, composed)) => Sent {
            verdict: judge_excluding(
                case,
                &outcome,
                backend.is_reference(),
                &backend.excluded_dtypes(case),
            ),
            disagreement: Disagreement::of(&case.expect, &outcome),
            outcome: Some(outcome),
            composed,
        },
        Err(BackendError::NotRun(reason)) => {
            unsent(Verdict::not_run(reason), Some(Disagreement::Broken))
        }
        Err(broken) => unsent(
            Verdict::fail(format!("{}\n{broken}", describe_case(case))),
            Some(Disagreement::Broken),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::backend::interface::Reference;
    use crate::judge::status::Status;

    /// The reference agrees with every spec case of the repository, so every case it is sent
    /// passes; had it disagreed, the disagreement would be of the class the matrix gives.
    #[test]
    fn the_reference_passes_the_cases_it_is_sent() {
        let specs = crate::backend::checkout::built_from().join("specs");
        let loaded = opspec_spec::load_dirs(&[specs], None, opspec::tensor::Limits::DEFAULT);
        let reference = Reference::default();
        let mut sent_any = false;
        for case in loaded.cases.iter().take(50) {
            let sent = send_and_judge(&reference, case);
            assert_eq!(
                sent.verdict.status,
                Status::Passed,
                "{}",
                sent.verdict.message
            );
            let outcome = sent.outcome.expect("the reference answers");
            assert_eq!(sent.disagreement, Disagreement::of(&case.expect, &outcome));
            sent_any = true;
        }
        assert!(sent_any);
    }
}
