//! The ops as the suite reads them, one entry each in [`OPS`]: the serde form of the op's
//! attributes (one decoder for spec files and the wire alike), its schema's root, and what its
//! schema says of it. The crates above this one keep their own per-op functions (generators,
//! shrinkers, round trips, coverage tables) in an [`OpTable`] of their own, one per crate, so
//! that an op without an entry is a compile error rather than a gap found at run time.

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::de::{DeserializeOwned, Deserializer};

use super::form::FileDef;
use super::value::ScaleAttrs;
use opspec::ops::{as_strided, reformat, shuffle, slice, Attrs, Op};

/// One `T` per op, in the order of [`Op::ALL`]. Built in a `static`, the order is checked at
/// compile time, and an array without one of the ops does not have the table's length.
pub struct OpTable<T>([(Op, T); Op::ALL.len()]);

impl<T> OpTable<T> {
    /// The table of `entries`; panics (a compile error in a `static`) unless entry `i` is op
    /// `Op::ALL[i]`.
    pub const fn new(entries: [(Op, T); Op::ALL.len()]) -> OpTable<T> {
        let mut i = 0;
        while i < entries.len() {
            // `get` indexes by discriminant: `Op::ALL` must list the ops in declaration order.
            assert!(
                Op::ALL[i] as usize == i,
                "Op::ALL is not in declaration order"
            );
            assert!(
                entries[i].0 as usize == i,
                "an op table's entries are not in the order of Op::ALL"
            );
            i += 1;
        }
        OpTable(entries)
    }

    /// The entry of `op`.
    pub fn get(&self, op: Op) -> &T {
        &self.0[op as usize].1
    }
}

/// The serde form of an op's attributes, as spec files and the wire write them: the op's own
/// `Attrs`, or a form of the suite's where the two differ (Scale's coefficients follow the
/// spec's float32 rules, [`ScaleAttrs`]).
pub trait AttrsForm: DeserializeOwned + JsonSchema {
    fn into_attrs(self) -> Attrs;
}

impl AttrsForm for shuffle::Attrs {
    fn into_attrs(self) -> Attrs {
        Attrs::Shuffle(self)
    }
}

impl AttrsForm for slice::Attrs {
    fn into_attrs(self) -> Attrs {
        Attrs::Slice(self)
    }
}

impl AttrsForm for as_strided::Attrs {
    fn into_attrs(self) -> Attrs {
        Attrs::AsStrided(self)
    }
}

impl AttrsForm for ScaleAttrs {
    fn into_attrs(self) -> Attrs {
        Attrs::Scale(self.into())
    }
}

impl AttrsForm for reformat::Attrs {
    fn into_attrs(self) -> Attrs {
        Attrs::Reformat(self)
    }
}

/// An error of [`decode_attrs`], with the path of the field it is in (`.` for the whole object).
pub type AttrsError<E> = serde_path_to_error::Error<E>;

/// The one attribute decoder: form `F` from any deserializer, spec YAML or wire JSON.
pub fn decode_attrs<'de, F: AttrsForm, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Attrs, AttrsError<D::Error>> {
    serde_path_to_error::deserialize::<D, F>(deserializer).map(F::into_attrs)
}

/// The root schema of a spec file whose `attrs` are form `F`.
fn schema_root<F: AttrsForm>(generator: SchemaGenerator) -> Schema {
    generator.into_root_schema_for::<FileDef<F>>()
}

/// What the suite knows of an op beyond the reference.
pub struct OpEntry {
    /// Whose documents the op follows, as the schema's description names them.
    pub documented_by: &'static str,
    /// The schema's description of each input after input 0, by name; an input not listed is
    /// "An input of the op."
    pub input_docs: &'static [(&'static str, &'static str)],
    /// [`decode_attrs`] of the op's form, at the two deserializers the suite reads.
    from_yaml: fn(serde_yaml::Value) -> Result<Attrs, AttrsError<serde_yaml::Error>>,
    from_json: fn(serde_json::Value) -> Result<Attrs, AttrsError<serde_json::Error>>,
    /// The root schema of a spec file of the op (its `attrs` typed by the form).
    schema_root: fn(SchemaGenerator) -> Schema,
}

impl OpEntry {
    const fn new<F: AttrsForm>(
        documented_by: &'static str,
        input_docs: &'static [(&'static str, &'static str)],
    ) -> OpEntry {
        OpEntry {
            documented_by,
            input_docs,
            from_yaml: decode_attrs::<F, serde_yaml::Value>,
            from_json: decode_attrs::<F, serde_json::Value>,
            schema_root: schema_root::<F>,
        }
    }

    /// The op's attributes from a spec file's YAML.
    pub fn attrs_from_yaml(
        &self,
        value: serde_yaml::Value,
    ) -> Result<Attrs, AttrsError<serde_yaml::Error>> {
        (self.from_yaml)(value)
    }

    /// The op's attributes from a wire request's JSON.
    pub fn attrs_from_json(
        &self,
        value: serde_json::Value,
    ) -> Result<Attrs, AttrsError<serde_json::Error>> {
        (self.from_json)(value)
    }

    pub(crate) fn schema_root(&self, generator: SchemaGenerator) -> Schema {
        (self.schema_root)(generator)
    }
}

/// Every op's entry.
pub static OPS: OpTable<OpEntry> = OpTable::new([
    (
        Op::Shuffle,
        OpEntry::new::<shuffle::Attrs>(
            "TensorRT IShuffleLayer",
            &[(
                "reshape_dims",
                "Input 1: the reshape dims as a 1-D int32 or int64 tensor, instead of the attribute.",
            )],
        ),
    ),
    (
        Op::Slice,
        OpEntry::new::<slice::Attrs>(
            "TensorRT ISliceLayer",
            &[
                ("start", "Input 1: start as a 1-D int32 or int64 tensor."),
                ("size", "Input 2: size as a 1-D int32 or int64 tensor."),
                ("stride", "Input 3: stride as a 1-D int32 or int64 tensor."),
                (
                    "fill",
                    "Input 4: the fill value, a scalar (shape [] or [1]); FILL mode only (default 0).",
                ),
                ("axes", "Input 5: axes as a 1-D int32 or int64 tensor."),
            ],
        ),
    ),
    (
        Op::AsStrided,
        OpEntry::new::<as_strided::Attrs>("Ascend ATB AsStridedOperation", &[]),
    ),
    (
        Op::Scale,
        OpEntry::new::<ScaleAttrs>("TensorRT IScaleLayer", &[]),
    ),
    (
        Op::Reformat,
        OpEntry::new::<reformat::Attrs>("TensorRT TensorFormat memory layouts", &[]),
    ),
]);

/// The entry of `op`.
pub fn entry(op: Op) -> &'static OpEntry {
    OPS.get(op)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Spec files and the wire go through the one decoder: the same attributes, and an error
    /// at the same field.
    #[test]
    fn yaml_and_json_read_alike() {
        let text = "{start: [1, -2], size: [3, 4], mode: wrap}";
        let yaml: serde_yaml::Value = serde_yaml::from_str(text).unwrap();
        let json: serde_json::Value =
            serde_json::from_str(r#"{"start": [1, -2], "size": [3, 4], "mode": "wrap"}"#).unwrap();
        let slice = entry(Op::Slice);
        assert_eq!(
            slice.attrs_from_yaml(yaml).unwrap(),
            slice.attrs_from_json(json).unwrap()
        );
        let yaml = serde_yaml::from_str("{start: [x]}").unwrap();
        let json = serde_json::json!({"start": ["x"]});
        let (yaml, json) = (
            slice.attrs_from_yaml(yaml).unwrap_err(),
            slice.attrs_from_json(json).unwrap_err(),
        );
        assert_eq!(yaml.path().to_string(), "start[0]");
        assert_eq!(json.path().to_string(), "start[0]");
    }
}
