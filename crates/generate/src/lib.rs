//! opspec-generate: generated cases, the space between the hand-written ones, at a scale no one
//! writes by hand, and the goldens that hold their expected outputs.
//!
//! A crate of its own rather than part of `opspec`, so that the reference interpreter stays
//! what a reader checks against the documents (dtypes, tensors, ops), and rather than
//! part of the runner, so that generation and goldens have no tie to the backend protocol: the
//! runner uses them for generated trials and `opspec-fuzz`, the spec tests for sweep loading.
//!
//! - [`sweep`]: YAML sweeps (`sweeps/<op>/*.yaml`) that declare a family of cases; their
//!   expected results are goldens ([`crate::golden`]) computed by the reference and
//!   cross-checked by the independent numpy backend.
//! - [`values`]: provenance inputs (each element's value names its index), special values.
//! - [`metamorphic`]: round trips that must give the input back (shuffle and its inverse,
//!   pack then unpack, pad by FILL then STRICT_BOUNDS slice).
//! - [`random`], [`shrink`], [`yaml`]: random valid and invalid cases for differential
//!   fuzzing (`opspec-fuzz`), their shrinking, and their writing as spec YAML.
//! - [`golden`]: the goldens' store (manifests, `.npy` files, blessing).
//! - [`rng`]: the fixed random number generator every seed goes through.
//!
//! Each op's generators are reached through one table, [`GENERATORS`].

pub mod golden;
pub mod metamorphic;
pub mod random;
pub mod rng;
pub mod shrink;
pub mod sweep;
pub mod values;
pub mod yaml;

use std::collections::BTreeMap;
use std::path::Path;

use sha2::{Digest, Sha256};

use crate::golden::GoldenId;
use crate::metamorphic::RoundTrip;
use crate::rng::Rng;
use crate::shrink::AttrsShrink;
use opspec::dtype::DType;
use opspec::ops::{as_strided, reformat, scale, Attrs, Invocation, Op};
use opspec_spec::bytes::to_le_bytes;
use opspec_spec::ops::OpTable;
use opspec_spec::{Case, Expectation};

/// The version of the generators. Bump it when the same sweep file would give different
/// inputs (provenance codes, special values, random streams, expansion order): every golden
/// then reads as stale until re-blessed.
pub const GENERATOR_VERSION: u32 = 1;

/// One generated case and what its trial needs.
#[derive(Clone, Debug)]
pub struct GeneratedCase {
    /// Named `<op>::sweep::<file>::<case>[::<dtype>]`; its `expect` is a placeholder until the
    /// golden is read.
    pub case: Case,
    /// The sweep file's seed.
    pub seed: u64,
    /// [`case_hash`] of the case.
    pub hash: String,
    pub golden: GoldenId,
    /// The provenance codes of input 0, when its values are provenance.
    pub provenance: Option<values::Provenance>,
    /// The first step of the op's round trip, named `<op>::metamorphic::<file>::…`, when the
    /// sweep asks for it and it applies.
    pub metamorphic: Option<Case>,
}

/// A case with every optional field empty and a placeholder expectation.
pub fn new_case(op: Op, file: &str, path: &Path, name: &str, dtype: Option<DType>) -> Case {
    Case {
        op,
        file: file.to_owned(),
        path: path.to_path_buf(),
        name: name.to_owned(),
        dtype,
        source: String::new(),
        clauses: Vec::new(),
        inferred: false,
        note: None,
        invocation: Invocation {
            attrs: default_attrs(op),
            inputs: vec![None; op.inputs().len()],
        },
        expect: Expectation::Outputs(Vec::new()),
        tolerance: None,
        unsupported_on: BTreeMap::new(),
        implementation_defined: false,
        evidence: Default::default(),
    }
}

fn default_attrs(op: Op) -> Attrs {
    (GENERATORS.get(op).default_attrs)()
}

/// What this crate generates of an op.
pub struct OpGenerators {
    /// The attributes of a [`new_case`], before a sweep sets any.
    pub default_attrs: fn() -> Attrs,
    /// A random case ([`random::random_case`]); with `invalid`, one that breaks a rule on
    /// purpose.
    pub random_case: fn(&mut Rng, bool) -> Invocation,
    /// The shrinking of the op's attributes and optional inputs, if it has its own; without,
    /// a case shrinks by its input's values only.
    pub shrink: Option<AttrsShrink>,
    /// The op's round trip ([`metamorphic`]), if it has one.
    pub round_trip: Option<RoundTrip>,
}

/// Every op's generators: the only place this crate lists the ops. The modules reach their
/// per-op functions through it.
pub static GENERATORS: OpTable<OpGenerators> = OpTable::new([
    (
        Op::Shuffle,
        OpGenerators {
            default_attrs: || Attrs::Shuffle(Default::default()),
            random_case: random::shuffle_case,
            shrink: Some(AttrsShrink {
                cost: shrink::shuffle_cost,
                candidates: shrink::shuffle_candidates,
            }),
            round_trip: Some(metamorphic::SHUFFLE),
        },
    ),
    (
        Op::Slice,
        OpGenerators {
            default_attrs: || Attrs::Slice(Default::default()),
            random_case: random::slice_case,
            shrink: Some(AttrsShrink {
                cost: shrink::slice_cost,
                candidates: shrink::slice_candidates,
            }),
            round_trip: Some(metamorphic::SLICE),
        },
    ),
    (
        Op::AsStrided,
        OpGenerators {
            default_attrs: || {
                Attrs::AsStrided(as_strided::Attrs {
                    size: vec![],
                    stride: vec![],
                    offset: vec![],
                })
            },
            random_case: random::as_strided_case,
            shrink: Some(AttrsShrink {
                cost: shrink::as_strided_cost,
                candidates: shrink::as_strided_candidates,
            }),
            round_trip: None,
        },
    ),
    (
        Op::Scale,
        OpGenerators {
            default_attrs: || {
                Attrs::Scale(scale::Attrs {
                    mode: scale::Mode::Uniform,
                    scale: Default::default(),
                    shift: Default::default(),
                    power: Default::default(),
                    channel_axis: None,
                    output_dtype: None,
                })
            },
            random_case: random::scale_case,
            shrink: Some(AttrsShrink {
                cost: shrink::scale_cost,
                candidates: shrink::scale_candidates,
            }),
            round_trip: None,
        },
    ),
    (
        Op::Reformat,
        OpGenerators {
            default_attrs: || {
                Attrs::Reformat(reformat::Attrs {
                    from: reformat::Format::Linear,
                    to: reformat::Format::Linear,
                    shape: None,
                    dla: None,
                })
            },
            random_case: random::reformat_case,
            shrink: Some(AttrsShrink {
                cost: shrink::reformat_cost,
                candidates: shrink::reformat_candidates,
            }),
            round_trip: Some(metamorphic::REFORMAT),
        },
    ),
]);

/// A short hash of what a case computes: op, attributes and inputs (16 hex digits of
/// SHA-256). A golden records it, so a changed case makes its golden stale.
pub fn case_hash(invocation: &Invocation) -> String {
    let mut hasher = Sha256::new();
    hasher.update(invocation.op().name());
    hasher.update(b"\n");
    hasher.update(serde_json::to_string(&invocation.attrs).expect("attributes serialize"));
    for input in &invocation.inputs {
        match input {
            None => hasher.update(b"\nnone"),
            Some(tensor) => {
                hasher.update(format!("\n{} {:?} ", tensor.dtype, tensor.shape));
                hasher.update(to_le_bytes(tensor));
            }
        }
    }
    hasher
        .finalize()
        .iter()
        .take(8)
        .map(|b| format!("{b:02x}"))
        .collect()
}
