//! The op vocabulary for the Python side, `schema/vocabulary.json`: the ops with their input
//! names and the probe case an adapter runs at start-up in every dtype, the Slice and Scale
//! modes, the tensor formats, the dtypes and the error kinds, each as the wire spells it and in
//! the order of its Rust `ALL`. The engine adapters' common code (`runner/backends/common/`) and
//! the scripts read it instead of keeping lists of their own; the numpy oracle
//! (`runner/backends/numpy/`) keeps its own on purpose, as an implementation apart.
//!
//! `crates/spec/tests/schema.rs` checks the committed file against [`vocabulary`], with the
//! schemas (`OPSPEC_BLESS=1 cargo test -p opspec-spec --test schema` rewrites it).

use serde_json::{json, Value};

use super::ops::OpTable;
use opspec::dtype::DType;
use opspec::error::ErrorKind;
use opspec::ops::{reformat, scale, slice, Op};

/// The file name of the vocabulary, in [`super::schema::SCHEMA_DIR`].
pub const VOCABULARY_FILE: &str = "vocabulary.json";

/// Per op, the simplest case an adapter runs in every dtype at start-up (zeros of the input
/// shape), so that its hello lists the dtypes the installed engine runs the op in: the
/// attributes as JSON text, and the shape of input 0.
pub static PROBES: OpTable<(&str, &[usize])> = OpTable::new([
    (
        Op::Shuffle,
        (
            r#"{"first_transpose": [1, 0], "reshape_dims": [4]}"#,
            &[2, 2],
        ),
    ),
    (
        Op::Slice,
        (r#"{"start": [1], "size": [2], "stride": [1]}"#, &[4]),
    ),
    (
        Op::AsStrided,
        (r#"{"size": [2], "stride": [1], "offset": [1]}"#, &[4]),
    ),
    (Op::Scale, (r#"{"mode": "uniform"}"#, &[1, 1, 1, 2])),
    (
        Op::Reformat,
        (r#"{"from": "LINEAR", "to": "HWC"}"#, &[1, 2, 1, 1]),
    ),
]);

fn wire<T: serde::Serialize>(value: T) -> Value {
    serde_json::to_value(value).expect("a mode or format serializes as its name")
}

/// The vocabulary as JSON.
pub fn vocabulary() -> Value {
    let ops: Vec<Value> = Op::ALL
        .into_iter()
        .map(|op| {
            let (attrs, shape) = PROBES.get(op);
            let attrs: Value = serde_json::from_str(attrs).expect("a probe's attributes are JSON");
            json!({
                "name": op.name(),
                "inputs": op.inputs(),
                "probe": {"attrs": attrs, "shape": shape},
            })
        })
        .collect();
    json!({
        "about": "Generated from the Rust definitions by crates/spec/src/vocabulary.rs; do not edit. Regenerate with OPSPEC_BLESS=1 cargo test -p opspec-spec --test schema.",
        "ops": ops,
        "slice_modes": slice::Mode::ALL.map(wire),
        "scale_modes": scale::Mode::ALL.map(wire),
        "formats": reformat::Format::ALL.map(|f| f.name()),
        "dtypes": DType::ALL.map(|d| d.name()),
        "error_kinds": ErrorKind::ALL.iter().map(|k| k.name()).collect::<Vec<_>>(),
    })
}
