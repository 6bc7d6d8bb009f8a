//! The example engine ([`LayoutEngine`]) against the whole suite in process, its own
//! arithmetic on every Shuffle and Slice trial, hand-written and generated: no trial fails, and
//! the only ones it does not answer are fill values of another dtype (a conversion it leaves
//! out, answered `unsupported`).

use std::path::Path;

use libtest_mimic::Arguments;
use opspec::ops::Invocation;
use opspec::tensor::Limits;
use opspec::{DType, ErrorKind, Tensor};
use opspec_example_backend::LayoutEngine;
use opspec_runner::run::config::Options;
use opspec_runner::{run_in_process, InProcessBackend, Refusal, Status};

#[test]
fn the_example_engine_passes_every_shuffle_and_slice_trial() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut config = Options::default()
        .resolve(&root)
        .expect("the default options");
    config.expectations = None;
    let args = Arguments {
        quiet: true,
        ..Arguments::default()
    };
    let summary = run_in_process(args, config, LayoutEngine).expect("the run");
    assert_eq!(
        summary.counts[Status::Failed] + summary.counts[Status::NotRun],
        0,
        "{summary:?}"
    );
    assert!(summary.counts[Status::Passed] > 3000, "{summary:?}");
    assert!(summary.counts[Status::Unsupported] <= 20, "{summary:?}");
    assert!(summary.success, "{summary:?}");
}

#[test]
fn it_computes_from_bits_and_rejects_with_the_rules_kind() {
    let input = Tensor::from_bits(DType::Int8, vec![2, 3], (1..=6).collect());
    let transpose = Invocation {
        attrs: opspec::ops::Attrs::Shuffle(opspec::ops::shuffle::Attrs {
            first_transpose: Some(vec![1, 0]),
            ..Default::default()
        }),
        inputs: vec![Some(input.clone()), None],
    };
    let out = LayoutEngine
        .evaluate(&transpose, Limits::DEFAULT)
        .expect("a transpose");
    assert_eq!(out[0].shape, vec![3, 2]);
    let bits: Vec<u64> = (0..6).map(|i| out[0].bits(i)).collect();
    assert_eq!(bits, vec![1, 4, 2, 5, 3, 6]);
    let bad = Invocation {
        attrs: opspec::ops::Attrs::Shuffle(opspec::ops::shuffle::Attrs {
            first_transpose: Some(vec![0, 0]),
            ..Default::default()
        }),
        inputs: vec![Some(input), None],
    };
    match LayoutEngine.evaluate(&bad, Limits::DEFAULT) {
        Err(Refusal::Rejected { kind, .. }) => {
            assert_eq!(kind, Some(ErrorKind::InvalidPermutation))
        }
        other => panic!("{other:?}"),
    }
}
