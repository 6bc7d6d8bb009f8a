//! The form of a spec file as serde reads it and schemars describes it: the file, its cases,
//! tensors, tolerances and errors (`FileDef` and the definitions under it), with the schemas of
//! the fields whose names come from the reference (dtypes, error kinds, evidence, targets). The
//! loader (`load.rs`) reads files into these; the op table (`ops.rs`) types their `attrs` per op
//! for the JSON Schemas (`schema.rs`). It depends on none of them.

use std::collections::BTreeMap;

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::Deserialize;
use serde_json::{json, Map, Value};

use super::value::TensorData;
use super::CaseProblemKind::Invalid;
use super::{CaseProblem, TARGETS};
use crate::compare::Tolerance;
use opspec::dtype::DType;
use opspec::error::ErrorKind;

/// A spec file: `specs/<op>/<file>.yaml`. Generic over the attributes' type so that the JSON
/// Schema of each op ([`super::schema`]) types them; the loader reads them as YAML first.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct FileDef<A = serde_yaml::Value> {
    /// The cases; each becomes one test per entry of its `dtypes` (or one test), named
    /// `<op>::<file>::<case>[::<dtype>]`.
    pub(super) cases: Vec<CaseDef<A>>,
}

/// One case: attributes, inputs, and the expected output or error, with where they come from.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Case")]
pub(super) struct CaseDef<A = serde_yaml::Value> {
    /// Unique within the file: lower-case letters, digits and `_`.
    #[schemars(regex(pattern = r"^[a-z0-9_]+$"))]
    pub(super) name: String,
    /// Where the case and its expected values come from: the seed document and example, or the
    /// header / doc clause the case encodes.
    #[schemars(length(min = 1))]
    pub(super) source: String,
    /// The clauses of the op's catalogue (`specs/<op>.clauses.yaml`) the case exercises; a case
    /// that expects an error names the clause the error enforces.
    #[serde(default)]
    pub(super) clauses: Vec<String>,
    /// `true` when the expected result rests on a point docs/semantics.md marks `[inferred]`.
    #[serde(default)]
    pub(super) inferred: bool,
    /// Free text: why the case exists, how the expected value was worked out.
    #[serde(default)]
    pub(super) note: Option<String>,
    /// Runs the case once per dtype; every tensor without a `dtype` of its own takes the entry.
    #[serde(default)]
    #[schemars(schema_with = "super::form::dtype_list_schema")]
    pub(super) dtypes: Vec<String>,
    /// The op's attributes; an attribute left out takes its documented default.
    pub(super) attrs: Option<A>,
    /// Input tensors by name (`input` is required).
    pub(super) inputs: BTreeMap<String, TensorDef>,
    /// The expected outputs by name (`output`); give this or `error`.
    #[serde(default)]
    pub(super) expected: Option<BTreeMap<String, TensorDef>>,
    /// The case must fail with this error; give this or `expected`.
    #[serde(default)]
    pub(super) error: Option<ErrorDef>,
    /// Scale only, with `expected`: `{ulp: N}` (float outputs) or `{abs: N}` (int8 outputs),
    /// replacing the default tolerance; 0 = equal.
    #[serde(default)]
    pub(super) tolerance: Option<ToleranceDef>,
    /// Targets on which the case does not run, with the documented reason, e.g.
    /// `{dla: "custom power values are not supported on DLA"}`.
    #[serde(default)]
    #[schemars(schema_with = "super::form::targets_schema")]
    pub(super) unsupported_on: BTreeMap<String, String>,
    /// `true` when the vendor leaves the result undocumented and the expected value is the
    /// reference's reading (another backend that differs, for an error case also by returning
    /// outputs or another kind, is reported as an implementation-defined divergence).
    #[serde(default)]
    pub(super) implementation_defined: bool,
    /// Where the expected values come from: `documented` (the default: worked out from the
    /// documents the case cites) or `recorded` (printed by a run of the vendor's implementation;
    /// `source` names the log, the commit it was read at and the version that printed it).
    #[serde(default)]
    #[schemars(schema_with = "super::form::evidence_schema")]
    pub(super) evidence: Option<String>,
}

/// `{ulp: N}` or `{abs: N}`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Tolerance")]
pub(super) struct ToleranceDef {
    /// Representable float values allowed between expected and actual (float outputs).
    #[serde(default)]
    #[schemars(range(min = 0))]
    pub(super) ulp: Option<f64>,
    /// Integer difference allowed (int8 outputs).
    #[serde(default)]
    #[schemars(range(min = 0))]
    pub(super) abs: Option<f64>,
}

impl ToleranceDef {
    /// N must be a whole number; it is read as a number so that a fraction gets a message
    /// saying what the field means rather than a type error.
    pub(super) fn parse(&self) -> Result<Tolerance, CaseProblem> {
        let whole = |name: &str, n: f64, meaning: &str| {
            if n >= 0.0 && n.fract() == 0.0 && n <= u32::MAX as f64 {
                Ok(n as u64)
            } else {
                Err(CaseProblem::new(
                    Invalid,
                    format!("tolerance.{name}"),
                    format!("{n} is not a whole number >= 0: {meaning}"),
                ))
            }
        };
        match (self.ulp, self.abs) {
            (Some(n), None) => Ok(Tolerance::Ulp(whole(
                "ulp",
                n,
                "ulp counts representable float values between expected and actual",
            )?)),
            (None, Some(n)) => Ok(Tolerance::Abs(whole(
                "abs",
                n,
                "abs is the integer difference allowed in an int8 output; float outputs take `ulp`",
            )?)),
            _ => Err(CaseProblem::new(
                Invalid,
                "tolerance",
                "give exactly one of `ulp` (float outputs) or `abs` (int8 outputs)",
            )),
        }
    }
}

/// A tensor: dtype, shape and data.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Tensor")]
pub(super) struct TensorDef {
    /// The element type; leave it out to take the case's `dtypes` entry.
    #[serde(default)]
    #[schemars(schema_with = "super::form::dtype_schema")]
    pub(super) dtype: Option<String>,
    /// The dims, `[]` for a scalar.
    pub(super) shape: Vec<i64>,
    /// Nested lists matching `shape` exactly (a scalar is a bare value; a zero dim is `[]` at its
    /// level). Numbers are rounded once to the dtype; `.nan`, `.inf`, `-.inf`; a quoted hex string
    /// (`"0x7e01"`) is an exact float bit pattern. Or the name of an `.npy` file, relative to the
    /// spec file, whose header gives the same dtype and shape.
    #[schemars(schema_with = "super::form::tensor_data_schema")]
    pub(super) data: TensorData,
}

/// The expected error.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "ExpectedError")]
pub(super) struct ErrorDef {
    /// The stable error kind (docs/protocol.md "Error kinds").
    #[schemars(schema_with = "super::form::error_kind_schema")]
    pub(super) kind: String,
    /// A fragment the reference's error message must contain.
    #[serde(default)]
    pub(super) message: Option<String>,
}

fn names_schema(description: &str, names: Vec<&'static str>) -> Schema {
    json_schema!({"description": description, "type": "string", "enum": names})
}

/// A dtype name (`TensorDef::dtype`).
pub(crate) fn dtype_schema(_: &mut SchemaGenerator) -> Schema {
    names_schema(
        "The element type; leave it out to take the case's `dtypes` entry.",
        DType::ALL.map(DType::name).to_vec(),
    )
}

/// A list of distinct dtype names (`CaseDef::dtypes`).
pub(crate) fn dtype_list_schema(generator: &mut SchemaGenerator) -> Schema {
    json_schema!({
        "description": "Runs the case once per dtype; every tensor without a `dtype` of its own takes the entry.",
        "type": "array",
        "items": dtype_schema(generator),
        "uniqueItems": true
    })
}

/// An error kind name (`ErrorDef::kind`, a catalogue clause's `error`).
pub(crate) fn error_kind_schema(_: &mut SchemaGenerator) -> Schema {
    names_schema(
        "A stable error kind (docs/protocol.md \"Error kinds\").",
        ErrorKind::ALL.iter().map(|kind| kind.name()).collect(),
    )
}

/// `evidence`: where a case's expected values come from.
pub(crate) fn evidence_schema(_: &mut SchemaGenerator) -> Schema {
    names_schema(
        "Where the expected values come from: `documented` (the default) or `recorded` (a run of the vendor's implementation, named in `source`).",
        crate::Evidence::ALL.iter().map(|e| e.name()).collect(),
    )
}

/// A tensor's `data`: the values (`Data`), or an `.npy` file's name.
pub(crate) fn tensor_data_schema(generator: &mut SchemaGenerator) -> Schema {
    let values = generator.subschema_for::<super::value::DataNode>();
    json_schema!({
        "description": "The values, nested lists matching `shape` (a scalar is a bare value); or the name of an .npy file, relative to the spec file, whose header gives the tensor's dtype and shape.",
        "anyOf": [
            values,
            {"type": "string", "pattern": "\\.npy$", "description": "An .npy file, relative to the spec file (CONTRIBUTING.md \"Data in .npy files\")."}
        ]
    })
}

/// `unsupported_on`: target → reason.
pub(crate) fn targets_schema(_: &mut SchemaGenerator) -> Schema {
    let properties: Map<String, Value> = TARGETS
        .iter()
        .map(|&target| {
            (
                target.to_owned(),
                json!({"type": "string", "minLength": 1, "description": format!("Why the case does not run on {target}.")}),
            )
        })
        .collect();
    json_schema!({
        "description": "Targets on which the case does not run, with the documented reason.",
        "type": "object",
        "properties": properties,
        "additionalProperties": false
    })
}
