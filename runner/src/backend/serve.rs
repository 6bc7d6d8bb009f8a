//! The backend side of the protocol: serves an implementation over stdin/stdout.
//!
//! `runner --serve` serves the reference interpreter this way; it is also a worked example of a
//! backend, and lets the suite check the protocol itself (every case must pass through it).

use std::io::{BufRead, Write};

use opspec::ops::{Invocation, Op};
use opspec::tensor::Limits;
use opspec::{OpError, Tensor};
use serde_json::{json, Value};

use crate::backend::protocol::{decode_attrs, WireError, WireTensor, PROTOCOL_VERSION};

/// Decodes a `run` request into a trial id and an invocation, its tensors within `limits`.
pub(crate) fn decode_run(
    request: &Value,
    limits: Limits,
) -> Result<(String, Invocation), WireError> {
    let id = request["id"]
        .as_str()
        .ok_or(WireError::Missing("an id"))?
        .to_owned();
    let op_name = request["op"].as_str().ok_or(WireError::Missing("an op"))?;
    let op = Op::from_name(op_name).ok_or_else(|| WireError::UnknownOp(op_name.to_owned()))?;
    let attrs_value = request.get("attrs").cloned().unwrap_or_else(|| json!({}));
    let attrs = decode_attrs(op, attrs_value, limits).map_err(|e| e.within("attrs"))?;
    let inputs = request["inputs"]
        .as_array()
        .ok_or(WireError::Missing("inputs"))?
        .iter()
        .enumerate()
        .map(|(position, value)| match value {
            Value::Null => Ok(None),
            value => serde_json::from_value::<WireTensor>(value.clone())
                .map_err(WireError::from)
                .and_then(|wire| wire.decode(limits))
                .map(Some)
                .map_err(|e| e.within(format!("input {position}"))),
        })
        .collect::<Result<Vec<Option<Tensor>>, WireError>>()?;
    Ok((id, Invocation { attrs, inputs }))
}

/// The reply line for one evaluated request.
pub(crate) fn encode_result(id: &str, result: Result<Vec<Tensor>, OpError>) -> String {
    match result {
        Ok(outputs) => json!({
            "type": "ok",
            "id": id,
            "outputs": outputs.iter().map(WireTensor::encode).collect::<Vec<_>>(),
        }),
        Err(e) => json!({"type": "error", "id": id, "kind": e.kind.name(), "message": e.detail()}),
    }
    .to_string()
}

/// Serves requests until the input ends, as a backend called `name` for `targets` (e.g.
/// `["dla"]`), reading tensors within `limits`. `evaluate` computes one invocation.
pub fn serve(
    input: impl BufRead,
    mut output: impl Write,
    name: &str,
    targets: &[String],
    limits: Limits,
    mut evaluate: impl FnMut(&str, &Invocation) -> Result<Vec<Tensor>, OpError>,
) -> std::io::Result<()> {
    for line in input.lines() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let reply = match serde_json::from_str::<Value>(&line) {
            Ok(request) if request["type"] == "hello" => json!({
                "type": "hello",
                "protocol": PROTOCOL_VERSION,
                "name": name,
                "ops": Op::ALL.map(Op::name),
                "targets": targets,
            })
            .to_string(),
            Ok(request) if request["type"] == "run" => match decode_run(&request, limits) {
                Ok((id, invocation)) => encode_result(&id, evaluate(&id, &invocation)),
                Err(message) => json!({
                    "type": "error",
                    "id": request["id"],
                    "kind": "invalid_input",
                    "message": message.to_string(),
                })
                .to_string(),
            },
            Ok(other) => {
                json!({"type": "error", "id": other["id"], "message": "unknown request type"})
                    .to_string()
            }
            Err(e) => json!({"type": "error", "id": null, "message": format!("bad JSON: {e}")})
                .to_string(),
        };
        writeln!(output, "{reply}")?;
        output.flush()?;
    }
    Ok(())
}
