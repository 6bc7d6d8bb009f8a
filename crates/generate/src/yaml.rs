//! Writing a case as spec YAML (the format of CONTRIBUTING.md), for cases found by the fuzzer.
//!
//! Floats are written as the shortest decimal that reads back to the same bits, NaNs as
//! quoted bit patterns, so the file loads back to exactly the case ([`to_yaml`] is checked by
//! loading it again in the fuzzer, which falls back to bit patterns everywhere).

use std::fmt::Write as _;

use serde_json::Value;

use opspec::dtype::DType;
use opspec::tensor::Tensor;
use opspec_spec::value::{to_bits, DataNode};
use opspec_spec::{Case, Expectation};

/// How floats are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Floats {
    /// Shortest decimals where they read back exactly, bit patterns otherwise.
    Decimal,
    /// Bit patterns everywhere.
    Bits,
}

/// A spec file holding `case`, after the comment lines `header` (without `#`).
pub fn to_yaml(case: &Case, header: &[String], floats: Floats) -> String {
    let mut out = String::new();
    for line in header {
        let _ = writeln!(out, "# {line}");
    }
    out.push_str("cases:\n");
    let _ = writeln!(out, "  - name: {}", case.name);
    let _ = writeln!(out, "    source: {}", quoted(&case.source));
    if !case.clauses.is_empty() {
        let _ = writeln!(out, "    clauses: [{}]", case.clauses.join(", "));
    }
    if case.inferred {
        out.push_str("    inferred: true\n");
    }
    if let Some(note) = &case.note {
        let _ = writeln!(out, "    note: {}", quoted(note));
    }
    if case.implementation_defined {
        out.push_str("    implementation_defined: true\n");
    }
    if let Some(tolerance) = case.tolerance {
        let _ = writeln!(out, "    tolerance: {tolerance}");
    }
    let attrs = serde_json::to_value(&case.invocation.attrs).expect("attributes serialize");
    if attrs.as_object().is_some_and(|o| !o.is_empty()) {
        let _ = writeln!(out, "    attrs: {}", flow(&attrs));
    }
    out.push_str("    inputs:\n");
    for (name, tensor) in case.op.inputs().iter().zip(&case.invocation.inputs) {
        if let Some(tensor) = tensor {
            write_tensor(&mut out, name, tensor, floats);
        }
    }
    match &case.expect {
        Expectation::Outputs(outputs) => {
            out.push_str("    expected:\n");
            if let Some(output) = outputs.first() {
                write_tensor(&mut out, "output", output, floats);
            }
        }
        Expectation::Error { kind, message } => match message {
            Some(message) => {
                let _ = writeln!(
                    out,
                    "    error: {{kind: {kind}, message: {}}}",
                    quoted(message)
                );
            }
            None => {
                let _ = writeln!(out, "    error: {{kind: {kind}}}");
            }
        },
    }
    out
}

fn write_tensor(out: &mut String, name: &str, tensor: &Tensor, floats: Floats) {
    let shape = tensor
        .shape
        .iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    let data = data(tensor, floats);
    let one_line = format!(
        "      {name}: {{dtype: {}, shape: [{shape}], data: {data}}}",
        tensor.dtype
    );
    if one_line.len() <= 100 || tensor.rank() < 2 {
        let _ = writeln!(out, "{one_line}");
    } else {
        // One row of the last dim per line.
        let _ = writeln!(out, "      {name}:");
        let _ = writeln!(out, "        dtype: {}", tensor.dtype);
        let _ = writeln!(out, "        shape: [{shape}]");
        let _ = writeln!(out, "        data:");
        let last = *tensor.shape.last().expect("rank >= 2");
        let rows = tensor.len() / last.max(1);
        let outer = &tensor.shape[..tensor.rank() - 1];
        for row in 0..rows {
            let index = opspec_spec::unravel(outer, row);
            let opening = index.iter().rev().take_while(|&&i| i == 0).count();
            let closing = index
                .iter()
                .zip(outer)
                .rev()
                .take_while(|(&i, &d)| i + 1 == d)
                .count();
            let items: Vec<String> = (0..last)
                .map(|i| element(tensor.dtype, tensor.bits(row * last + i), floats))
                .collect();
            let _ = writeln!(
                out,
                "          {}{}[{}]{}{}",
                " ".repeat(outer.len() - opening),
                "[".repeat(opening),
                items.join(", "),
                "]".repeat(closing),
                if row + 1 < rows { "," } else { "" }
            );
        }
        if rows == 0 {
            let _ = writeln!(out, "          {}", data);
        }
    }
}

/// The nested list of a tensor's values (a bare value for a scalar).
fn data(tensor: &Tensor, floats: Floats) -> String {
    fn nest(tensor: &Tensor, dims: &[usize], offset: usize, floats: Floats) -> String {
        match dims.split_first() {
            None => element(tensor.dtype, tensor.bits(offset), floats),
            Some((&d, rest)) => {
                let inner: usize = rest.iter().product();
                let items: Vec<String> = (0..d)
                    .map(|i| nest(tensor, rest, offset + i * inner, floats))
                    .collect();
                format!("[{}]", items.join(", "))
            }
        }
    }
    nest(tensor, &tensor.shape, 0, floats)
}

/// One element as the spec value rules read it back.
pub fn element(dtype: DType, bits: u64, floats: Floats) -> String {
    let Some(format) = dtype.float_format() else {
        return match dtype {
            DType::Bool => (bits != 0).to_string(),
            _ => dtype.bits_to_int(bits).to_string(),
        };
    };
    let hex = format!(
        "\"0x{:0width$x}\"",
        bits,
        width = format.total_bits() as usize / 4
    );
    if floats == Floats::Bits || format.is_nan(bits) {
        return hex;
    }
    let value = format.decode(bits);
    if value.is_infinite() {
        return if value > 0.0 { ".inf" } else { "-.inf" }.into();
    }
    // Every value of these formats is a float32; its shortest decimal, checked to read back.
    let text = format!("{:?}", value as f32);
    match text.parse::<f64>() {
        Ok(parsed) if to_bits(&DataNode::Float(parsed), dtype) == Ok(bits) => text,
        _ => hex,
    }
}

/// A string as a YAML double-quoted scalar.
fn quoted(text: &str) -> String {
    serde_json::to_string(text).expect("string")
}

/// JSON as YAML flow style, plain keys and plain simple strings.
fn flow(value: &Value) -> String {
    match value {
        Value::Object(map) => format!(
            "{{{}}}",
            map.iter()
                .map(|(k, v)| format!("{k}: {}", flow(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(flow).collect::<Vec<_>>().join(", ")
        ),
        Value::String(s)
            if !s.is_empty()
                && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !s.starts_with(|c: char| c.is_ascii_digit())
                && !matches!(
                    s.to_ascii_lowercase().as_str(),
                    "true" | "false" | "yes" | "no" | "on" | "off" | "null"
                ) =>
        {
            s.clone()
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::new_case;
    use opspec::ops::{slice, Attrs, Invocation, Op};
    use opspec::tensor::Limits;
    use opspec_spec::load_file;

    #[test]
    fn a_written_case_loads_back_to_the_same_case() {
        let scratch = tempfile::tempdir().unwrap();
        let dir = scratch.path();
        std::fs::create_dir_all(dir.join("slice")).unwrap();
        let path = dir.join("slice").join("found.yaml");
        let mut case = new_case(Op::Slice, "found", &path, "fuzz_seed1_case7", None);
        case.source = "opspec-fuzz seed 1".into();
        case.note = Some("reference: \"x\"".into());
        let bits = vec![0x7e01, 0x8000, 0x3c00, 0x0001, 0x7c00, 0x3555];
        let input = Tensor::from_bits(DType::Float16, vec![2, 3], bits);
        let mut inputs = vec![None; 6];
        inputs[0] = Some(input);
        inputs[4] = Some(Tensor::from_bits(DType::Float16, vec![], vec![0xfc00]));
        case.invocation = Invocation {
            attrs: Attrs::Slice(slice::Attrs {
                start: Some(vec![-1, 0]),
                size: Some(vec![3, 3]),
                stride: None,
                mode: Some(slice::Mode::Fill),
                axes: None,
            }),
            inputs,
        };
        case.expect =
            Expectation::Outputs(opspec::ops::evaluate(&case.invocation, Limits::DEFAULT).unwrap());
        for floats in [Floats::Decimal, Floats::Bits] {
            std::fs::write(&path, to_yaml(&case, &["found by a test".into()], floats)).unwrap();
            let (cases, errors) = load_file(Op::Slice, &path, Limits::DEFAULT);
            assert!(
                errors.is_empty(),
                "{errors:?}\n{}",
                std::fs::read_to_string(&path).unwrap()
            );
            assert_eq!(cases[0].invocation, case.invocation);
            assert_eq!(cases[0].expect, case.expect);
        }
        assert_eq!(element(DType::Float32, 0x3dcccccd, Floats::Decimal), "0.1");
        assert_eq!(element(DType::Fp8, 0x7f, Floats::Decimal), "\"0x7f\"");
        assert_eq!(element(DType::Int4, 0xf8, Floats::Decimal), "-8");
    }
}
