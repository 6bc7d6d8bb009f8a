//! The suite run in process through the example backend: every Slice trial of the spec files
//! passes but those in reflect mode, which are unsupported; nothing fails. Unsupported
//! replies to more than a tenth of the trials make the run no pass unless skips are allowed,
//! as for a backend process. Unsupported
//! replies to more than a tenth of the trials make the run no pass unless skips are allowed,
//! as for a backend process.

use std::path::Path;

use libtest_mimic::Arguments;
use opspec::ops::{slice, Attrs, Op};
use opspec_example_backend::PartialReference;
use opspec_runner::config::Options;
use opspec_runner::run_in_process;

#[test]
fn the_slice_trials_pass_but_reflect_which_is_unsupported() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut config = Options::default()
        .resolve(&root)
        .expect("the default options");
    config.specs = vec![root.join("specs")];
    config.sweeps = Vec::new(); // the hand-written cases only
    config.expectations = None;

    // The expected counts, from the spec files themselves.
    let cases = opspec::spec::load_dirs(&config.specs, None).cases;
    let slices: Vec<_> = cases.iter().filter(|c| c.op == Op::Slice).collect();
    let reflect = slices
        .iter()
        .filter(|c| {
            matches!(&c.invocation.attrs, Attrs::Slice(a) if a.mode == Some(slice::Mode::Reflect))
        })
        .count();
    assert!(
        reflect > 0 && reflect < slices.len(),
        "{reflect} of {}",
        slices.len()
    );

    let args = Arguments {
        filter: Some("slice::".into()),
        quiet: true,
        ..Arguments::default()
    };
    let summary =
        run_in_process(args.clone(), config.clone(), PartialReference).expect("the run is made");
    assert_eq!(summary.unsupported, reflect, "{summary:?}");
    assert_eq!(summary.passed, slices.len() - reflect, "{summary:?}");
    assert_eq!(summary.failed, 0, "{summary:?}");
    assert_eq!(
        summary.not_run + summary.excluded + summary.known_failures,
        0
    );
    // Reflect is more than a tenth of the Slice trials: no pass, for that reason alone.
    assert!(10 * reflect > slices.len());
    assert!(!summary.success && !summary.trial_failed, "{summary:?}");
    assert_eq!(summary.problems.len(), 1, "{summary:?}");
    assert!(summary.problems[0].contains("unsupported"), "{summary:?}");

    config.allow_skips = true;
    let allowed = run_in_process(args, config, PartialReference).expect("the run is made");
    assert!(allowed.success, "{allowed:?}");
    assert_eq!(
        (allowed.passed, allowed.unsupported),
        (summary.passed, reflect)
    );
}
