//! The suite run in process through the example backend. Declared, it runs the Shuffle and
//! Slice trials but reflect, which pass, and the rest are excluded: the run passes. Without
//! its declaration, the reflect trials are sent and answered unsupported, more than a tenth
//! of the Slice trials: the run is no pass unless skips are allowed, as for a backend process.

use std::path::Path;

use libtest_mimic::Arguments;
use opspec::ops::{slice, Attrs, Op};
use opspec_example_backend::PartialReference;
use opspec_runner::run::config::Options;
use opspec_runner::{run_in_process, Declaration, InProcessBackend, Refusal, Status};

fn config() -> opspec_runner::Config {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut config = Options::default()
        .resolve(&root)
        .expect("the default options");
    config.specs = vec![root.join("specs")];
    config.sweeps = Vec::new(); // the hand-written cases only
    config.expectations = None;
    config
}

fn is_reflect(case: &opspec_spec::Case) -> bool {
    matches!(&case.invocation.attrs, Attrs::Slice(a) if a.mode == Some(slice::Mode::Reflect))
}

#[test]
fn a_declared_backend_runs_what_it_implements_and_passes() {
    let config = config();
    // The expected counts, from the spec files themselves.
    let cases = opspec_spec::load_dirs(&config.specs, None, config.limits()).cases;
    let (implemented, left_out): (Vec<_>, Vec<_>) = cases
        .iter()
        .partition(|c| [Op::Shuffle, Op::Slice].contains(&c.op) && !is_reflect(c));
    let args = Arguments {
        quiet: true,
        ..Arguments::default()
    };
    let summary = run_in_process(args, config, PartialReference::default()).expect("the run");
    assert_eq!(
        summary.counts[Status::Passed],
        implemented.len(),
        "{summary:?}"
    );
    assert_eq!(
        summary.counts[Status::Excluded],
        left_out.len(),
        "{summary:?}"
    );
    assert_eq!(
        summary.counts[Status::Failed]
            + summary.counts[Status::Unsupported]
            + summary.counts[Status::NotRun],
        0
    );
    assert!(summary.success, "{summary:?}");
}

#[test]
fn undeclared_the_reflect_trials_are_unsupported_and_the_run_no_pass() {
    let mut config = config();
    let cases = opspec_spec::load_dirs(&config.specs, None, config.limits()).cases;
    let slices: Vec<_> = cases.iter().filter(|c| c.op == Op::Slice).collect();
    let reflect = slices.iter().filter(|c| is_reflect(c)).count();
    assert!(
        reflect > 0 && 10 * reflect > slices.len(),
        "{reflect} of {}",
        slices.len()
    );

    let args = Arguments {
        filter: Some("slice::".into()),
        quiet: true,
        ..Arguments::default()
    };
    let undeclared = PartialReference { declared: false };
    let summary = run_in_process(args.clone(), config.clone(), undeclared).expect("the run");
    assert_eq!(summary.counts[Status::Unsupported], reflect, "{summary:?}");
    assert_eq!(
        summary.counts[Status::Passed],
        slices.len() - reflect,
        "{summary:?}"
    );
    assert_eq!(
        summary.counts[Status::Failed]
            + summary.counts[Status::NotRun]
            + summary.counts[Status::Excluded],
        0
    );
    assert!(!summary.success && !summary.trial_failed, "{summary:?}");
    assert_eq!(summary.problems.len(), 1, "{summary:?}");
    assert!(summary.problems[0].contains("unsupported"), "{summary:?}");

    config.allow_skips = true;
    let allowed = run_in_process(args, config, undeclared).expect("the run");
    assert!(allowed.success, "{allowed:?}");
}

/// A declaration naming what the suite does not know is refused before anything runs.
#[test]
fn a_declaration_with_an_unknown_name_is_refused() {
    struct Typo;
    impl InProcessBackend for Typo {
        fn name(&self) -> String {
            "typo".into()
        }
        fn declaration(&self) -> Option<Declaration> {
            Some(Declaration {
                ops: vec!["slcie".into()],
                ..Declaration::default()
            })
        }
        fn evaluate(
            &self,
            _: &opspec::ops::Invocation,
            _: opspec::tensor::Limits,
        ) -> Result<Vec<opspec::Tensor>, Refusal> {
            Err(Refusal::Unsupported("nothing".into()))
        }
    }
    let error = run_in_process(Arguments::default(), config(), Typo).unwrap_err();
    let text = error.to_string();
    assert!(
        text.starts_with("the declaration of backend `typo` names unknown op \"slcie\" in `ops`"),
        "{text}"
    );
}
