//! Values as written in spec files, and their conversion to a dtype's bit patterns.
//!
//! The rules (CONTRIBUTING.md "How values are read"):
//! - integer types take integers, or decimals with no fraction, inside the type's range;
//! - bool takes `true`/`false` or `0`/`1`;
//! - float types round a decimal once to nearest even, require an integer to be exact, read
//!   `.nan`/`.inf`/`-.inf`, and take a quoted hex string as an exact bit pattern; a magnitude
//!   past the largest finite value is an error, never ∞.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, Error as _, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeSeq, Serializer};

use crate::dtype::DType;
use crate::ops::scale::Coefficients;

/// A scalar or a nested list, as YAML gave it.
#[derive(Clone, Debug, PartialEq)]
pub enum DataNode {
    List(Vec<DataNode>),
    Int(i128),
    Float(f64),
    Bool(bool),
    Text(String),
}

impl<'de> Deserialize<'de> for DataNode {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<DataNode, D::Error> {
        struct NodeVisitor;
        impl<'de> Visitor<'de> for NodeVisitor {
            type Value = DataNode;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a number, a boolean, a quoted bit pattern, or a list of them")
            }
            fn visit_bool<E>(self, v: bool) -> Result<DataNode, E> {
                Ok(DataNode::Bool(v))
            }
            fn visit_i64<E>(self, v: i64) -> Result<DataNode, E> {
                Ok(DataNode::Int(v as i128))
            }
            fn visit_u64<E>(self, v: u64) -> Result<DataNode, E> {
                Ok(DataNode::Int(v as i128))
            }
            fn visit_i128<E>(self, v: i128) -> Result<DataNode, E> {
                Ok(DataNode::Int(v))
            }
            fn visit_u128<E: de::Error>(self, v: u128) -> Result<DataNode, E> {
                i128::try_from(v)
                    .map(DataNode::Int)
                    .map_err(|_| E::custom(format!("{v} is too large")))
            }
            fn visit_f64<E>(self, v: f64) -> Result<DataNode, E> {
                Ok(DataNode::Float(v))
            }
            fn visit_str<E>(self, v: &str) -> Result<DataNode, E> {
                Ok(DataNode::Text(v.to_owned()))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<DataNode, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element()? {
                    items.push(item);
                }
                Ok(DataNode::List(items))
            }
        }
        deserializer.deserialize_any(NodeVisitor)
    }
}

/// `Data`: a number, a boolean, a quoted bit pattern, or a list of them (recursively).
impl schemars::JsonSchema for DataNode {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Data".into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let item = generator.subschema_for::<DataNode>();
        schemars::json_schema!({
            "description": "A number (rounded once to the dtype; .nan, .inf, -.inf), true/false, a quoted bit pattern such as \"0x7e01\", or a list of them nested to match the shape.",
            "anyOf": [
                {"type": "number"},
                {"type": "boolean"},
                {"type": "string", "pattern": "^0[xX][0-9a-fA-F]+$"},
                {"type": "array", "items": item}
            ]
        })
    }
}

impl fmt::Display for DataNode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DataNode::List(items) => write!(f, "a list of {}", items.len()),
            DataNode::Int(v) => write!(f, "{v}"),
            DataNode::Float(v) => write!(f, "{v:?}"),
            DataNode::Bool(v) => write!(f, "{v}"),
            DataNode::Text(v) => write!(f, "{v:?}"),
        }
    }
}

/// What kind of problem a [`ValueError`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ValueErrorKind {
    /// The nesting of the data does not match the shape.
    Shape,
    /// A value of the wrong sort for the dtype (a list, a string, `true` for a float, ...).
    WrongType,
    /// An integer that a float dtype cannot hold exactly.
    Inexact,
    /// A value outside the dtype's range.
    OutOfRange,
    /// A quoted bit pattern that is malformed or wider than the dtype.
    BitPattern,
}

impl ValueErrorKind {
    /// The kind's stable name.
    pub fn name(self) -> &'static str {
        match self {
            ValueErrorKind::Shape => "shape",
            ValueErrorKind::WrongType => "wrong_type",
            ValueErrorKind::Inexact => "inexact",
            ValueErrorKind::OutOfRange => "out_of_range",
            ValueErrorKind::BitPattern => "bit_pattern",
        }
    }
}

/// A value in a spec file that does not fit its tensor or its dtype. `position` (`data[1]`)
/// is set when the value is found inside a data list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValueError {
    pub kind: ValueErrorKind,
    pub position: Option<String>,
    pub message: String,
}

impl ValueError {
    fn new(kind: ValueErrorKind, message: impl Into<String>) -> ValueError {
        ValueError {
            kind,
            position: None,
            message: message.into(),
        }
    }
}

impl fmt::Display for ValueError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.position {
            Some(position) => write!(f, "{position}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for ValueError {}

/// The scalars of `node` in row-major order, checking the nesting against `shape`.
/// Errors name the position, e.g. `data[1]`.
pub fn flatten<'a>(node: &'a DataNode, shape: &[usize]) -> Result<Vec<&'a DataNode>, ValueError> {
    fn walk<'a>(
        node: &'a DataNode,
        shape: &[usize],
        path: &mut String,
        out: &mut Vec<&'a DataNode>,
    ) -> Result<(), ValueError> {
        let at = |message: String| ValueError {
            kind: ValueErrorKind::Shape,
            position: Some(path.clone()),
            message,
        };
        match (shape.split_first(), node) {
            (None, DataNode::List(_)) => Err(at(
                "expected a scalar here (the shape has no more dims), found a list".into(),
            )),
            (None, scalar) => {
                out.push(scalar);
                Ok(())
            }
            (Some((&dim, rest)), DataNode::List(items)) => {
                if items.len() != dim {
                    return Err(at(format!(
                        "the shape says {dim} entries here, the data has {}",
                        items.len()
                    )));
                }
                for (i, item) in items.iter().enumerate() {
                    let len = path.len();
                    path.push_str(&format!("[{i}]"));
                    walk(item, rest, path, out)?;
                    path.truncate(len);
                }
                Ok(())
            }
            (Some((&dim, _)), scalar) => Err(at(format!(
                "the shape says a list of {dim} here, found {scalar}"
            ))),
        }
    }
    let mut out = Vec::new();
    walk(node, shape, &mut String::from("data"), &mut out)?;
    Ok(out)
}

/// Converts one scalar to an element of `dtype`, as its bit pattern.
pub fn to_bits(node: &DataNode, dtype: DType) -> Result<u64, ValueError> {
    use ValueErrorKind::{Inexact, OutOfRange, WrongType};
    match dtype.float_format() {
        Some(format) => {
            let value = match node {
                DataNode::Text(text) => return parse_bit_pattern(text, dtype),
                DataNode::Int(v) => {
                    let value = *v as f64;
                    if value as i128 != *v || !format.is_exact(value) {
                        return Err(ValueError::new(Inexact, format!(
                            "integer {v} is not exact in {dtype}; write it as a decimal ({v}.0) to have it rounded, or quote it if it is a bit pattern"
                        )));
                    }
                    value
                }
                DataNode::Float(v) => *v,
                DataNode::Bool(_) | DataNode::List(_) => {
                    return Err(ValueError::new(
                        WrongType,
                        format!("{node} is not {} value", dtype.with_article()),
                    ))
                }
            };
            format.encode(value).map_err(|_| {
                ValueError::new(
                    OutOfRange,
                    format!(
                        "{value:?} is outside the range of {dtype} (a value the dtype cannot hold)"
                    ),
                )
            })
        }
        None => {
            let (low, high) = dtype.int_range().expect("non-float dtypes are integers");
            let value = match node {
                DataNode::Int(v) => *v,
                DataNode::Bool(b) if dtype == DType::Bool => *b as i128,
                DataNode::Float(v) if v.fract() == 0.0 && v.abs() < 1e38 => *v as i128,
                _ => {
                    return Err(ValueError::new(
                        WrongType,
                        format!("{node} is not {} value", dtype.with_article()),
                    ))
                }
            };
            if value < low || value > high {
                return Err(ValueError::new(
                    OutOfRange,
                    format!("{value} is outside the range of {dtype} [{low}, {high}]"),
                ));
            }
            Ok(dtype.int_to_bits(value))
        }
    }
}

/// `NaN`, `Infinity`, `inf` and the like (any case, signed or not): NaN and infinity as other
/// languages spell them, which YAML reads as strings.
fn is_json_special(text: &str) -> bool {
    let unsigned = text.strip_prefix(['+', '-']).unwrap_or(text);
    ["nan", "inf", "infinity"]
        .iter()
        .any(|word| unsigned.eq_ignore_ascii_case(word))
}

/// `"0x7e01"` → the bits, if they fit the type's width.
fn parse_bit_pattern(text: &str, dtype: DType) -> Result<u64, ValueError> {
    let format = dtype
        .float_format()
        .expect("only float types take bit patterns");
    let hex = text
        .strip_prefix("0x")
        .or_else(|| text.strip_prefix("0X"))
        .ok_or_else(|| {
            let a_dtype = dtype.with_article();
            ValueError::new(
                ValueErrorKind::WrongType,
                if is_json_special(text) {
                    // JSON exporters write NaN and Infinity; YAML's spellings are these.
                    format!("{text:?} is not {a_dtype} value: write NaN as .nan and the infinities as .inf and -.inf (unquoted)")
                } else {
                    format!("{text:?} is not {a_dtype} value (a bit pattern is written \"0x7e01\")")
                },
            )
        })?;
    let bits = u64::from_str_radix(hex, 16).map_err(|_| {
        ValueError::new(
            ValueErrorKind::BitPattern,
            format!("{text:?} is not a hexadecimal bit pattern"),
        )
    })?;
    if bits >> format.total_bits() != 0 {
        return Err(ValueError::new(
            ValueErrorKind::BitPattern,
            format!(
                "bit pattern {text} has more than {} bits, the width of {dtype}",
                format.total_bits()
            ),
        ));
    }
    Ok(bits)
}

// Scale's coefficient lists (`ops::scale::Coefficients`) as spec files write them: the op holds
// bit patterns, and how they are read from and written to a file is the spec format's rule.

/// One coefficient, read from YAML by the float32 value rules.
struct Coefficient(u32);

impl<'de> Deserialize<'de> for Coefficient {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Coefficient, D::Error> {
        let node = DataNode::deserialize(deserializer)?;
        to_bits(&node, DType::Float32)
            .map(|bits| Coefficient(bits as u32))
            .map_err(D::Error::custom)
    }
}

/// In a spec file: a list of float32 values by the tensor value rules.
impl schemars::JsonSchema for Coefficients {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Coefficients".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "float32 values: numbers rounded once to float32, .nan, .inf, -.inf, -0.0, or quoted bit patterns such as \"0x7fc00001\"; empty or absent = the default",
            "type": "array",
            "items": {
                "anyOf": [
                    {"type": "number"},
                    {"type": "string", "pattern": "^0[xX][0-9a-fA-F]{1,8}$"}
                ]
            }
        })
    }
}

impl<'de> Deserialize<'de> for Coefficients {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Coefficients, D::Error> {
        let items = Vec::<Coefficient>::deserialize(deserializer)?;
        Ok(Coefficients(items.into_iter().map(|c| c.0).collect()))
    }
}

/// Finite values as numbers (exact: every float32 is a binary64), NaN and ±∞ as quoted bit
/// patterns, which read back to the same bits.
impl Serialize for Coefficients {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.len()))?;
        for &bits in &self.0 {
            let value = f32::from_bits(bits);
            if value.is_finite() {
                seq.serialize_element(&value)?;
            } else {
                seq.serialize_element(&format!("0x{bits:08x}"))?;
            }
        }
        seq.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(yaml: &str) -> DataNode {
        serde_yaml::from_str(yaml).unwrap()
    }

    #[test]
    fn yaml_scalars_become_nodes() {
        assert_eq!(node("3"), DataNode::Int(3));
        assert_eq!(node("-0.0"), DataNode::Float(-0.0));
        assert!(matches!(node(".nan"), DataNode::Float(v) if v.is_nan()));
        assert_eq!(node("\"0x7e01\""), DataNode::Text("0x7e01".into()));
        assert_eq!(
            node("[true, 1]"),
            DataNode::List(vec![DataNode::Bool(true), DataNode::Int(1)])
        );
    }

    #[test]
    fn shape_must_match_nesting() {
        let data = node("[[1, 2], [3]]");
        let err = flatten(&data, &[2, 2]).unwrap_err();
        assert_eq!(err.kind, ValueErrorKind::Shape);
        assert_eq!(err.position.as_deref(), Some("data[1]"));
        assert!(err.to_string().starts_with("data[1]:"), "{err}");
        assert_eq!(flatten(&node("[[], []]"), &[2, 0]).unwrap().len(), 0);
        assert_eq!(flatten(&node("5"), &[]).unwrap().len(), 1);
        assert!(flatten(&node("[5]"), &[]).is_err());
    }

    #[test]
    fn integers_are_range_checked() {
        assert_eq!(to_bits(&DataNode::Int(-8), DType::Int4), Ok(0xf8));
        assert!(to_bits(&DataNode::Int(8), DType::Int4).is_err());
        assert_eq!(
            to_bits(&DataNode::Int(300), DType::Int8).unwrap_err().kind,
            ValueErrorKind::OutOfRange
        );
        assert_eq!(
            to_bits(&DataNode::Int(16777217), DType::Float32)
                .unwrap_err()
                .kind,
            ValueErrorKind::Inexact
        );
        assert!(to_bits(&DataNode::Int(-1), DType::UInt8).is_err());
        assert_eq!(to_bits(&DataNode::Float(3.0), DType::Int32), Ok(3));
        assert!(to_bits(&DataNode::Float(0.5), DType::Int32).is_err());
        assert_eq!(to_bits(&DataNode::Bool(true), DType::Bool), Ok(1));
        assert!(to_bits(&DataNode::Int(2), DType::Bool).is_err());
    }

    #[test]
    fn floats_round_once_and_never_overflow_silently() {
        assert_eq!(
            to_bits(&DataNode::Float(0.1), DType::Float32),
            Ok(0.1f32.to_bits() as u64)
        );
        assert!(to_bits(&DataNode::Float(1e40), DType::Float32).is_err());
        assert!(to_bits(&DataNode::Float(1e6), DType::Fp8).is_err());
        assert!(to_bits(&DataNode::Float(f64::INFINITY), DType::Fp8).is_err());
        assert_eq!(
            to_bits(&DataNode::Float(f64::INFINITY), DType::Float16),
            Ok(0x7c00)
        );
        assert_eq!(to_bits(&DataNode::Float(-0.0), DType::BFloat16), Ok(0x8000));
        assert!(to_bits(&DataNode::Int(16777217), DType::Float32).is_err());
        assert_eq!(
            to_bits(&DataNode::Float(16777217.0), DType::Float32),
            Ok(0x4b80_0000)
        );
    }

    #[test]
    fn bit_patterns_are_exact() {
        assert_eq!(
            to_bits(&DataNode::Text("0x7e01".into()), DType::Float16),
            Ok(0x7e01)
        );
        assert_eq!(
            to_bits(&DataNode::Text("0xff".into()), DType::Fp8),
            Ok(0xff)
        );
        assert!(to_bits(&DataNode::Text("0x100".into()), DType::Fp8).is_err());
        assert!(to_bits(&DataNode::Text("nan".into()), DType::Float32).is_err());
    }

    #[test]
    fn json_spellings_of_nan_and_infinity_suggest_the_yaml_ones() {
        for text in ["NaN", "nan", "Infinity", "-Infinity", "inf", "+inf", "-INF"] {
            let e = to_bits(&DataNode::Text(text.into()), DType::Float32)
                .unwrap_err()
                .to_string();
            assert!(
                e.starts_with(&format!("{text:?} is not a float32 value")),
                "{e}"
            );
            for yaml in [".nan", ".inf", "-.inf"] {
                assert!(e.contains(yaml), "{e}");
            }
        }
        let e = to_bits(&DataNode::Text("NaN".into()), DType::Int8)
            .unwrap_err()
            .to_string();
        assert!(e.contains("an int8 value"), "{e}");
        let e = to_bits(&DataNode::Text("0xzz".into()), DType::Float16).unwrap_err();
        assert_eq!(e.kind, ValueErrorKind::BitPattern);
        let e = e.to_string();
        assert!(!e.contains(".nan"), "{e}");
    }

    #[test]
    fn messages_put_an_before_dtypes_read_with_a_vowel() {
        let e = to_bits(&DataNode::Float(0.5), DType::Int32).unwrap_err();
        assert_eq!(e.message, "0.5 is not an int32 value");
        let e = to_bits(&DataNode::Bool(true), DType::Fp8).unwrap_err();
        assert_eq!(e.message, "true is not an fp8 value");
        let e = to_bits(&DataNode::Bool(true), DType::UInt8).unwrap_err();
        assert_eq!(e.message, "true is not a uint8 value");
        let e = to_bits(&DataNode::Bool(true), DType::Float16).unwrap_err();
        assert_eq!(e.message, "true is not a float16 value");
    }
}
