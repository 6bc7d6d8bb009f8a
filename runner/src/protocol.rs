//! The backend wire protocol (docs/protocol.md): JSON Lines messages, and tensors as
//! `{"dtype", "shape", "data": base64 of the little-endian memory image}`.

use std::collections::BTreeMap;

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine;
use opspec::ops::scale::Coefficients;
use opspec::ops::{Attrs, Invocation, Op};
use opspec::tensor::{from_le_bytes, to_le_bytes};
use opspec::{DType, Tensor};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

pub const PROTOCOL_VERSION: u64 = 1;

/// A tensor on the wire.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WireTensor {
    pub dtype: String,
    pub shape: Vec<usize>,
    pub data: String,
}

impl WireTensor {
    pub fn encode(tensor: &Tensor) -> WireTensor {
        WireTensor {
            dtype: tensor.dtype.name().to_owned(),
            shape: tensor.shape.clone(),
            data: BASE64.encode(to_le_bytes(tensor)),
        }
    }

    /// Checks the dtype name, the base64 and the byte count against the shape.
    pub fn decode(&self) -> Result<Tensor, String> {
        let dtype = DType::from_name(&self.dtype)
            .ok_or_else(|| format!("unknown dtype {:?}", self.dtype))?;
        let bytes = BASE64
            .decode(&self.data)
            .map_err(|e| format!("data is not base64: {e}"))?;
        from_le_bytes(dtype, self.shape.clone(), &bytes)
    }
}

/// A message from the backend.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum Reply {
    Hello {
        protocol: u64,
        name: String,
        ops: Vec<String>,
        #[serde(default)]
        dtypes: Option<BTreeMap<String, Vec<String>>>,
        #[serde(default)]
        targets: Vec<String>,
        /// Per op, per declarable attribute, the values implemented
        /// ([`crate::attributes`]).
        #[serde(default)]
        attributes: BTreeMap<String, BTreeMap<String, Vec<String>>>,
    },
    Ok {
        id: String,
        outputs: Vec<WireTensor>,
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
    pub fn id(&self) -> Option<&str> {
        match self {
            Reply::Hello { .. } => None,
            Reply::Ok { id, .. } | Reply::Error { id, .. } | Reply::Unsupported { id, .. } => {
                Some(id)
            }
        }
    }
}

pub fn hello_request() -> String {
    json!({"type": "hello", "protocol": PROTOCOL_VERSION}).to_string()
}

/// The `run` line for one case.
pub fn run_request(id: &str, invocation: &Invocation) -> String {
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

/// The case's attributes as the wire's JSON object. Scale's coefficient lists travel as
/// float32 tensor objects so that every bit pattern survives JSON.
pub fn attrs_json(invocation: &Invocation) -> Value {
    let mut value = serde_json::to_value(&invocation.attrs).expect("attributes always serialize");
    if let (Attrs::Scale(attrs), Some(object)) = (&invocation.attrs, value.as_object_mut()) {
        for (name, list) in [
            ("scale", &attrs.scale),
            ("shift", &attrs.shift),
            ("power", &attrs.power),
        ] {
            if object.contains_key(name) {
                object.insert(name.into(), json!(WireTensor::encode(&list.to_tensor())));
            }
        }
    }
    value
}

/// The inverse of [`attrs_json`]: attributes of `op` from the wire.
pub fn decode_attrs(op: Op, mut value: Value) -> Result<Attrs, String> {
    let mut coefficients = Vec::new();
    if op == Op::Scale {
        if let Some(object) = value.as_object_mut() {
            for name in ["scale", "shift", "power"] {
                if let Some(wire) = object.remove(name) {
                    let tensor = serde_json::from_value::<WireTensor>(wire)
                        .map_err(|e| e.to_string())
                        .and_then(|w| w.decode())
                        .map_err(|e| format!("{name}: {e}"))?;
                    let list = Coefficients::from_tensor(&tensor)
                        .ok_or_else(|| format!("{name}: expected a float32 tensor of shape [n]"))?;
                    coefficients.push((name, list));
                }
            }
        }
    }
    let typed = |e: serde_json::Error| e.to_string();
    let mut attrs = match op {
        Op::Shuffle => Attrs::Shuffle(serde_json::from_value(value).map_err(typed)?),
        Op::Slice => Attrs::Slice(serde_json::from_value(value).map_err(typed)?),
        Op::AsStrided => Attrs::AsStrided(serde_json::from_value(value).map_err(typed)?),
        Op::Scale => Attrs::Scale(serde_json::from_value(value).map_err(typed)?),
        Op::Reformat => Attrs::Reformat(serde_json::from_value(value).map_err(typed)?),
    };
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
        assert_eq!(wire.decode(), Ok(tensor));
        let short = WireTensor {
            data: "AA==".into(),
            ..wire.clone()
        };
        assert_eq!(short.decode().unwrap_err(), "int4 [3] needs 2 bytes, got 1");
        let unknown = WireTensor {
            dtype: "float64".into(),
            ..wire
        };
        assert!(unknown.decode().unwrap_err().contains("unknown dtype"));
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
}
