//! The backend wire protocol (docs/protocol.md): JSON Lines messages, and tensors as
//! `{"dtype", "shape", "data": base64 of the little-endian memory image}`.

use std::collections::BTreeMap;

use crate::backend::facts::{EngineId, EnvDeclaration, Platform};
use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine;
use opspec::ops::scale::Coefficients;
use opspec::ops::{Attrs, Invocation, Op};
use opspec::tensor::Limits;
use opspec::{DType, Tensor};
use opspec_spec::bytes::{from_le_bytes, to_le_bytes, BytesError};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

pub(crate) const PROTOCOL_VERSION: u64 = 1;

/// The most cases one batch request holds (docs/protocol.md, "Batches"): a hello's larger
/// `batch` means this many, and `--batch` takes no more.
pub(crate) const MAX_BATCH: usize = 4096;

/// A part of a message that does not decode, with where it is (`attrs: scale: ...`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum WireError {
    #[error("unknown dtype {0:?}")]
    UnknownDtype(String),
    #[error("data is not base64: {0}")]
    Base64(String),
    /// The bytes do not fit the dtype and shape.
    #[error("{0}")]
    Bytes(#[from] BytesError),
    /// JSON of the wrong structure (serde_json's message).
    #[error("{0}")]
    Json(String),
    #[error("expected a float32 tensor of shape [n]")]
    NotCoefficients,
    /// A `run` request without this member (`an id`, `an op`, `inputs`).
    #[error("run request without {0}")]
    Missing(&'static str),
    #[error("unknown op {0:?}")]
    UnknownOp(String),
    /// The problem is in this part of the message.
    #[error("{part}: {source}")]
    In {
        part: String,
        source: Box<WireError>,
    },
}

impl WireError {
    /// This error, located in `part`.
    pub(crate) fn within(self, part: impl Into<String>) -> WireError {
        WireError::In {
            part: part.into(),
            source: Box::new(self),
        }
    }
}

impl From<serde_json::Error> for WireError {
    fn from(e: serde_json::Error) -> WireError {
        WireError::Json(e.to_string())
    }
}

/// A tensor on the wire.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct WireTensor {
    pub(crate) dtype: String,
    pub(crate) shape: Vec<usize>,
    pub(crate) data: String,
}

impl WireTensor {
    pub(crate) fn encode(tensor: &Tensor) -> WireTensor {
        WireTensor {
            dtype: tensor.dtype.name().to_owned(),
            shape: tensor.shape.clone(),
            data: BASE64.encode(to_le_bytes(tensor)),
        }
    }

    /// Checks the dtype name, the base64 and the byte count against the shape, which stays
    /// within `limits`.
    pub(crate) fn decode(&self, limits: Limits) -> Result<Tensor, WireError> {
        let dtype = DType::from_name(&self.dtype)
            .ok_or_else(|| WireError::UnknownDtype(self.dtype.clone()))?;
        let bytes = BASE64
            .decode(&self.data)
            .map_err(|e| WireError::Base64(e.to_string()))?;
        Ok(from_le_bytes(dtype, self.shape.clone(), &bytes, limits)?)
    }
}

/// An output of a `built` reply: its dtype and shape, and the engine's own description of
/// its format if it gives one (shown in reports, not judged).
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub(crate) struct BuiltTensor {
    pub(crate) dtype: String,
    pub(crate) shape: Vec<usize>,
    #[serde(default)]
    pub(crate) format: Option<String>,
}

/// A message from the backend.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub(crate) enum Reply {
    Hello {
        protocol: u64,
        name: String,
        ops: Vec<String>,
        #[serde(default)]
        dtypes: Option<BTreeMap<String, Vec<String>>>,
        #[serde(default)]
        targets: Vec<String>,
        /// Per op, per declarable attribute, the values implemented
        /// ([`crate::backend::attributes`]).
        #[serde(default)]
        attributes: BTreeMap<String, BTreeMap<String, Vec<String>>>,
        /// The backend can only build what a case asks for, not run it: it answers `built`
        /// with output dtypes and shapes instead of `ok` (docs/protocol.md, "Build-only
        /// backends").
        #[serde(default)]
        build_only: bool,
        /// The engine's name and version ([`crate::backend::facts`]).
        #[serde(default)]
        engine: Option<EngineId>,
        /// Facts of the machine as the engine sees them.
        #[serde(default)]
        platform: Option<Box<Platform>>,
        /// The ops (`slice`) and formats (`reformat:CHW4`) the adapter composes from other
        /// ops of the engine rather than the engine implementing them, each with how.
        #[serde(default)]
        composed: BTreeMap<String, String>,
        /// The most cases the backend takes in one `batch` request (docs/protocol.md,
        /// "Batches"); absent: single `run` requests only.
        #[serde(default)]
        batch: Option<u64>,
        /// The environment variables that change what the backend does: their values are
        /// facts of the run, and every replay command sets them.
        #[serde(default)]
        env: EnvDeclaration,
    },
    Ok {
        id: String,
        outputs: Vec<WireTensor>,
        /// The keys of the hello's `composed` whose paths produced this answer.
        #[serde(default)]
        composed: Vec<String>,
    },
    /// A build-only backend's answer: what the built engine's outputs are, without values.
    Built {
        id: String,
        outputs: Vec<BuiltTensor>,
        #[serde(default)]
        composed: Vec<String>,
    },
    Error {
        id: String,
        #[serde(default)]
        kind: Option<String>,
        #[serde(default)]
        message: Option<String>,
    },
    Unsupported {
        id: String,
        #[serde(default)]
        reason: Option<String>,
    },
}

impl Reply {
    pub(crate) fn id(&self) -> Option<&str> {
        match self {
            Reply::Hello { .. } => None,
            Reply::Ok { id, .. }
            | Reply::Built { id, .. }
            | Reply::Error { id, .. }
            | Reply::Unsupported { id, .. } => Some(id),
        }
    }
}

pub(crate) fn hello_request() -> String {
    json!({"type": "hello", "protocol": PROTOCOL_VERSION}).to_string()
}

/// The `batch` line of several cases' `run` lines (each exactly as it would be sent alone).
pub(crate) fn batch_request<'a>(runs: impl IntoIterator<Item = &'a str>) -> String {
    let runs: Vec<&str> = runs.into_iter().collect();
    format!("{{\"type\":\"batch\",\"cases\":[{}]}}", runs.join(","))
}

/// The id a reply line carries, if it is a JSON object with a string `id`: a batch's replies
/// come in any order, matched by it.
pub(crate) fn reply_id(line: &str) -> Option<String> {
    #[derive(Deserialize)]
    struct Carrying {
        id: Option<String>,
    }
    serde_json::from_str::<Carrying>(line).ok()?.id
}

/// The `run` line for one case.
pub(crate) fn run_request(id: &str, invocation: &Invocation) -> String {
    let inputs: Vec<Value> = invocation
        .inputs
        .iter()
        .map(|input| match input {
            Some(tensor) => json!(WireTensor::encode(tensor)),
            None => Value::Null,
        })
        .collect();
    json!({
        "type": "run",
        "id": id,
        "op": invocation.op().name(),
        "attrs": attrs_json(invocation),
        "inputs": inputs,
    })
    .to_string()
}

/// The case's attributes as the wire's JSON object: their own serialisation, except Scale's
/// coefficient lists, which travel as float32 tensor objects of their bit patterns so that
/// a backend reads them as it reads any tensor (docs/protocol.md, "Scale's coefficients").
pub(crate) fn attrs_json(invocation: &Invocation) -> Value {
    let mut value = serde_json::to_value(&invocation.attrs).expect("attributes always serialize");
    if let (Attrs::Scale(attrs), Some(object)) = (&invocation.attrs, value.as_object_mut()) {
        let lists = [
            ("scale", &attrs.scale),
            ("shift", &attrs.shift),
            ("power", &attrs.power),
        ];
        for (name, list) in lists {
            if !list.is_empty() {
                object.insert(name.into(), json!(coefficients_to_wire(list)));
            }
        }
    }
    value
}

/// A coefficient list as a float32 tensor object of shape `[n]`: its bit patterns, little-endian.
fn coefficients_to_wire(list: &Coefficients) -> WireTensor {
    let bytes: Vec<u8> = list.0.iter().flat_map(|bits| bits.to_le_bytes()).collect();
    WireTensor {
        dtype: DType::Float32.name().to_owned(),
        shape: vec![list.len()],
        data: BASE64.encode(bytes),
    }
}

/// The inverse of [`coefficients_to_wire`], with [`WireTensor::decode`]'s checks.
fn coefficients_from_wire(wire: Value, limits: Limits) -> Result<Coefficients, WireError> {
    let tensor = serde_json::from_value::<WireTensor>(wire)?.decode(limits)?;
    if tensor.dtype != DType::Float32 || tensor.rank() != 1 {
        return Err(WireError::NotCoefficients);
    }
    Ok(Coefficients(
        (0..tensor.len()).map(|i| tensor.bits(i) as u32).collect(),
    ))
}

/// The inverse of [`attrs_json`]: attributes of `op` from the wire.
pub(crate) fn decode_attrs(op: Op, mut value: Value, limits: Limits) -> Result<Attrs, WireError> {
    let mut coefficients = Vec::new();
    if let (Op::Scale, Some(object)) = (op, value.as_object_mut()) {
        for name in ["scale", "shift", "power"] {
            if let Some(wire) = object.remove(name) {
                let list = coefficients_from_wire(wire, limits).map_err(|e| e.within(name))?;
                coefficients.push((name, list));
            }
        }
    }
    // The spec files' decoder; the wire's message has no field path, as serde_json's own.
    let mut attrs = opspec_spec::ops::entry(op)
        .attrs_from_json(value)
        .map_err(|e| e.into_inner())?;
    if let Attrs::Scale(scale) = &mut attrs {
        for (name, list) in coefficients {
            match name {
                "scale" => scale.scale = list,
                "shift" => scale.shift = list,
                _ => scale.power = list,
            }
        }
    }
    Ok(attrs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tensors_round_trip_and_bad_ones_are_named() {
        let tensor = Tensor::from_bits(DType::Int4, vec![3], vec![0xf8, 0x07, 0x01]);
        let wire = WireTensor::encode(&tensor);
        assert_eq!(wire.data, "eAE="); // bytes 0x78, 0x01
        assert_eq!(wire.decode(Limits::DEFAULT), Ok(tensor));
        let short = WireTensor {
            data: "AA==".into(),
            ..wire.clone()
        };
        assert_eq!(
            short.decode(Limits::DEFAULT).unwrap_err().to_string(),
            "int4 [3] needs 2 bytes, got 1"
        );
        let unknown = WireTensor {
            dtype: "float64".into(),
            ..wire
        };
        assert_eq!(
            unknown.decode(Limits::DEFAULT),
            Err(WireError::UnknownDtype("float64".into()))
        );
    }

    #[test]
    fn replies_parse() {
        let reply: Reply =
            serde_json::from_str(r#"{"type":"error","id":"a","kind":"out_of_bounds"}"#).unwrap();
        assert_eq!(reply.id(), Some("a"));
        let hello: Reply =
            serde_json::from_str(r#"{"type":"hello","protocol":1,"name":"x","ops":["slice"]}"#)
                .unwrap();
        assert!(matches!(hello, Reply::Hello { ref targets, .. } if targets.is_empty()));
    }

    /// docs/protocol.md's Scale request is what the runner sends for that case, byte for byte
    /// (in the compact form the runner writes).
    #[test]
    fn the_documented_scale_request_is_sent() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
        let docs = std::fs::read_to_string(format!("{root}/docs/protocol.md")).unwrap();
        let id = "scale::channel::channel_default_axis_4d::float32";
        let block = docs
            .split("```json\n")
            .find(|block| block.starts_with(&format!("{{\"type\": \"run\", \"id\": \"{id}\"")))
            .and_then(|block| block.split("```").next())
            .expect("the documented Scale request");
        let documented: Value = serde_json::from_str(block).unwrap();
        let path = std::path::PathBuf::from(format!("{root}/specs/scale/channel.yaml"));
        let (cases, errors) = opspec_spec::load_file(Op::Scale, &path, Limits::DEFAULT);
        assert!(errors.is_empty(), "{errors:?}");
        let case = cases.iter().find(|c| c.trial_name() == id).unwrap();
        assert_eq!(
            run_request(id, &case.invocation),
            serde_json::to_string(&documented).unwrap()
        );
    }

    /// Every coefficient bit pattern (NaN payloads, -0.0, infinities) survives the wire.
    #[test]
    fn coefficients_cross_the_wire_bit_exactly() {
        let bits = vec![
            0x7fc0_0001,
            0x8000_0000,
            0xff80_0000,
            0x3f80_0000,
            0x0000_0001,
        ];
        let attrs = opspec::ops::scale::Attrs {
            mode: opspec::ops::scale::Mode::Elementwise,
            scale: Coefficients(bits.clone()),
            shift: Coefficients::default(),
            power: Coefficients(vec![0xffc0_0000]),
            channel_axis: Some(1),
            output_dtype: None,
        };
        let invocation = Invocation {
            attrs: Attrs::Scale(attrs.clone()),
            inputs: vec![None],
        };
        let wire = attrs_json(&invocation);
        assert_eq!(
            wire["scale"],
            json!({"dtype": "float32", "shape": [5], "data": "AQDAfwAAAIAAAID/AACAPwEAAAA="})
        );
        assert!(wire.get("shift").is_none());
        assert_eq!(
            decode_attrs(Op::Scale, wire, Limits::DEFAULT).unwrap(),
            Attrs::Scale(attrs)
        );
        let bad =
            json!({"mode": "uniform", "scale": {"dtype": "float16", "shape": [1], "data": "AAA="}});
        assert_eq!(
            decode_attrs(Op::Scale, bad, Limits::DEFAULT)
                .unwrap_err()
                .to_string(),
            "scale: expected a float32 tensor of shape [n]"
        );
    }

    /// A request that does not decode says what is missing or wrong, and where.
    #[test]
    fn bad_requests_are_located() {
        use crate::backend::serve::decode_run;
        assert_eq!(
            decode_run(&json!({"type": "run", "op": "slice"}), Limits::DEFAULT).unwrap_err(),
            WireError::Missing("an id")
        );
        let request = json!({"type": "run", "id": "x", "op": "shuffle", "inputs": [
            {"dtype": "int8", "shape": [2], "data": "AQ=="}, null]});
        let error = decode_run(&request, Limits::DEFAULT).unwrap_err();
        assert!(
            matches!(&error, WireError::In { part, .. } if part == "input 0"),
            "{error:?}"
        );
        assert_eq!(error.to_string(), "input 0: int8 [2] needs 2 bytes, got 1");
    }
}
