//! Values as written in spec files, and their conversion to a dtype's bit patterns.
//!
//! The rules (CONTRIBUTING.md "How values are read"):
//! - integer types take integers, or decimals with no fraction, inside the type's range;
//! - bool takes `true`/`false` or `0`/`1`;
//! - float types round a decimal once to nearest even, require an integer to be exact, read
//!   `.nan`/`.inf`/`-.inf`, and take a quoted hex string as an exact bit pattern; a magnitude
//!   past the largest finite value is an error, never ∞.

use std::cell::Cell;
use std::fmt;

use serde::de::{
    self, Deserialize, DeserializeSeed as _, Deserializer, Error as _, SeqAccess, Visitor,
};

use opspec::dtype::{DType, Width};
use opspec::ops::scale::{self, Coefficients};
use opspec::tensor::{Buffer, Limits, Tensor};

thread_local! {
    /// The limits of the load running on this thread ([`with_limits`]), which bound a data
    /// list while it is read. serde's derived `Deserialize` of the spec types hands nothing
    /// down to a field, so the loader sets them around each file it reads; they are never
    /// process-wide, and outside a load they are [`Limits::DEFAULT`].
    static LIMITS: Cell<Limits> = const { Cell::new(Limits::DEFAULT) };
}

/// Runs `read` with `limits` bounding every data list it reads on this thread (the spec
/// loader's argument), restoring the previous limits after, also when `read` panics.
pub(crate) fn with_limits<T>(limits: Limits, read: impl FnOnce() -> T) -> T {
    struct Restore(Limits);
    impl Drop for Restore {
        fn drop(&mut self) {
            LIMITS.set(self.0);
        }
    }
    let _restore = Restore(LIMITS.replace(limits));
    read()
}

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

/// The deepest nesting of a data list: deeper than any rank an op allows (8, `ops::MAX_RANK`;
/// cases one past it check that rule), shallow enough that reading a list recurses little. A
/// deeper list is refused where it goes past, with its line, before the rest is read.
pub const MAX_DATA_DEPTH: usize = 32;

/// A tensor's `data` as read from a spec file, streamed straight from the YAML reader into
/// compact buffers (no tree of nodes): the nesting as one token per list, the scalars as a
/// kind byte and a 64-bit word each. [`TensorData::to_tensor`] checks it against a shape and
/// converts it to a dtype, with the same messages as [`flatten`] and [`to_bits`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TensorData {
    /// Per list [`LIST`] | its length; per run of scalars inside one list, the run's length.
    tokens: Vec<u64>,
    kinds: Vec<u8>,
    words: Vec<u64>,
    texts: Vec<String>,
    wide: Vec<i128>,
}

const LIST: u64 = 1 << 63;
const INT: u8 = 0;
const FLOAT: u8 = 1;
const BOOL: u8 = 2;
const TEXT: u8 = 3;
const WIDE: u8 = 4;

const DATA_EXPECTING: &str = "a number, a boolean, a quoted bit pattern, or a list of them";

impl TensorData {
    /// The text when the data is one string (the name of an `.npy` file, or a bit pattern).
    pub fn as_text(&self) -> Option<&str> {
        match (self.tokens.as_slice(), self.kinds.as_slice()) {
            ([1], [TEXT]) => Some(&self.texts[self.words[0] as usize]),
            _ => None,
        }
    }

    /// The number of scalars read.
    pub fn scalar_count(&self) -> usize {
        self.kinds.len()
    }

    fn scalar(&self, index: usize) -> DataNode {
        let word = self.words[index];
        match self.kinds[index] {
            INT => DataNode::Int(word as i64 as i128),
            FLOAT => DataNode::Float(f64::from_bits(word)),
            BOOL => DataNode::Bool(word != 0),
            TEXT => DataNode::Text(self.texts[word as usize].clone()),
            _ => DataNode::Int(self.wide[word as usize]),
        }
    }

    /// Appends a scalar; past the element budget (or 2^20 values under a smaller budget, so
    /// that a case over a small budget gets the shape's message) the list is refused where it
    /// is, so that no list takes more memory than the budget allows.
    fn push<E: de::Error>(
        &mut self,
        kind: u8,
        word: u64,
        run: &mut Option<usize>,
    ) -> Result<(), E> {
        let budget = LIMITS.get().max_elements.max(1 << 20);
        if self.kinds.len() as u64 >= budget {
            return Err(E::custom(format!(
                "the data holds more than {budget} values, over the element budget (OPSPEC_MAX_ELEMENTS)"
            )));
        }
        match *run {
            Some(at) => self.tokens[at] += 1,
            None => {
                *run = Some(self.tokens.len());
                self.tokens.push(1);
            }
        }
        self.kinds.push(kind);
        self.words.push(word);
        Ok(())
    }

    /// The tensor of `dtype` and `shape` these values make. The nesting is checked against
    /// the shape first, then each value converted; errors name the position (`data[1][0]`).
    pub fn to_tensor(&self, dtype: DType, shape: &[usize]) -> Result<Tensor, ValueError> {
        if self.tokens.is_empty() {
            return Err(ValueError::new(ValueErrorKind::Shape, "no data"));
        }
        let mut walk = Walk {
            data: self,
            token: 0,
            run_left: 0,
            scalar: 0,
            path: Vec::new(),
        };
        walk.node(shape)?;
        let volume: usize = shape.iter().product();
        let position = |index: usize, e: ValueError| ValueError {
            position: Some(format!(
                "data{}",
                crate::unravel(shape, index)
                    .iter()
                    .map(|i| format!("[{i}]"))
                    .collect::<String>()
            )),
            ..e
        };
        macro_rules! collect {
            ($ty:ty, $variant:ident) => {{
                let mut out: Vec<$ty> = Vec::with_capacity(volume);
                for index in 0..self.kinds.len() {
                    let bits =
                        to_bits(&self.scalar(index), dtype).map_err(|e| position(index, e))?;
                    out.push(bits as $ty);
                }
                Buffer::$variant(out)
            }};
        }
        let buffer = match dtype.width() {
            Width::W8 => collect!(u8, W8),
            Width::W16 => collect!(u16, W16),
            Width::W32 => collect!(u32, W32),
            Width::W64 => collect!(u64, W64),
        };
        Ok(Tensor {
            dtype,
            shape: shape.to_vec(),
            buffer,
        })
    }
}

/// A cursor over [`TensorData`]'s tokens, checking them against a shape as [`flatten`] does.
struct Walk<'a> {
    data: &'a TensorData,
    token: usize,
    run_left: u64,
    scalar: usize,
    /// The index at each level above the current value; written out only for a message.
    path: Vec<u64>,
}

impl Walk<'_> {
    /// The next child: `Some(len)` for a list, `None` for a scalar (which it consumes).
    fn next_child(&mut self) -> Option<u64> {
        if self.run_left == 0 {
            let token = self.data.tokens[self.token];
            self.token += 1;
            if token & LIST != 0 {
                return Some(token & !LIST);
            }
            self.run_left = token;
        }
        self.run_left -= 1;
        self.scalar += 1;
        None
    }

    fn node(&mut self, shape: &[usize]) -> Result<(), ValueError> {
        let child = self.next_child();
        self.check(child, shape)
    }

    fn at(&self, message: String) -> ValueError {
        let mut position = String::from("data");
        for i in &self.path {
            position.push_str(&format!("[{i}]"));
        }
        ValueError {
            kind: ValueErrorKind::Shape,
            position: Some(position),
            message,
        }
    }

    fn check(&mut self, child: Option<u64>, shape: &[usize]) -> Result<(), ValueError> {
        match (shape.split_first(), child) {
            (None, Some(_)) => {
                Err(self
                    .at("expected a scalar here (the shape has no more dims), found a list".into()))
            }
            (None, None) => Ok(()),
            (Some((&dim, rest)), Some(len)) => {
                if len != dim as u64 {
                    return Err(self.at(format!(
                        "the shape says {dim} entries here, the data has {len}"
                    )));
                }
                for i in 0..len {
                    self.path.push(i);
                    let child = self.next_child();
                    self.check(child, rest)?;
                    self.path.pop();
                }
                Ok(())
            }
            (Some((&dim, _)), None) => {
                let scalar = self.data.scalar(self.scalar - 1);
                Err(self.at(format!(
                    "the shape says a list of {dim} here, found {scalar}"
                )))
            }
        }
    }
}

/// Reads a `data` value straight into a [`TensorData`].
struct DataSeed<'a> {
    data: &'a mut TensorData,
    /// The run of scalars being appended to in the current list, if any.
    run: &'a mut Option<usize>,
    depth: usize,
}

impl<'de> de::DeserializeSeed<'de> for DataSeed<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for DataSeed<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(DATA_EXPECTING)
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<(), E> {
        self.data.push(BOOL, v as u64, self.run)
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<(), E> {
        self.data.push(INT, v as u64, self.run)
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<(), E> {
        self.visit_i128(v as i128)
    }
    fn visit_i128<E: de::Error>(self, v: i128) -> Result<(), E> {
        match i64::try_from(v) {
            Ok(small) => self.data.push(INT, small as u64, self.run),
            Err(_) => {
                let at = self.data.wide.len() as u64;
                self.data.wide.push(v);
                self.data.push(WIDE, at, self.run)
            }
        }
    }
    fn visit_u128<E: de::Error>(self, v: u128) -> Result<(), E> {
        let v = i128::try_from(v).map_err(|_| E::custom(format!("{v} is too large")))?;
        self.visit_i128(v)
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<(), E> {
        self.data.push(FLOAT, v.to_bits(), self.run)
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<(), E> {
        let at = self.data.texts.len() as u64;
        self.data.texts.push(v.to_owned());
        self.data.push(TEXT, at, self.run)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        if self.depth >= MAX_DATA_DEPTH {
            return Err(de::Error::custom(format!(
                "data lists nest more than {MAX_DATA_DEPTH} levels deep (no tensor has that many dims; ops take at most {})",
                opspec::ops::MAX_RANK
            )));
        }
        let at = self.data.tokens.len();
        self.data.tokens.push(LIST);
        let mut run = None;
        let mut len = 0u64;
        while seq
            .next_element_seed(DataSeed {
                data: &mut *self.data,
                run: &mut run,
                depth: self.depth + 1,
            })?
            .is_some()
        {
            len += 1;
        }
        self.data.tokens[at] = LIST | len;
        // The list's parent goes on with a new run after it.
        *self.run = None;
        Ok(())
    }
}

impl<'de> Deserialize<'de> for TensorData {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<TensorData, D::Error> {
        let mut data = TensorData::default();
        let mut run = None;
        DataSeed {
            data: &mut data,
            run: &mut run,
            depth: 0,
        }
        .deserialize(deserializer)?;
        Ok(data)
    }
}

impl schemars::JsonSchema for TensorData {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        DataNode::schema_name()
    }
    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        DataNode::json_schema(generator)
    }
}

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
                        let message = format!(
                            "integer {v} is not exact in {dtype}; write it as a decimal ({v}.0) to have it rounded, or quote it if it is a bit pattern"
                        );
                        return Err(ValueError::new(Inexact, message));
                    }
                    value
                }
                DataNode::Float(v) => *v,
                DataNode::Bool(_) | DataNode::List(_) => {
                    return Err(ValueError::new(
                        WrongType,
                        format!("{node} is not {} value", crate::with_article(dtype)),
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
                        format!("{node} is not {} value", crate::with_article(dtype)),
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
    const YAML_SPECIALS: &str = "write NaN as .nan and the infinities as .inf and -.inf (unquoted)";
    let format = dtype
        .float_format()
        .expect("only float types take bit patterns");
    let hex = text
        .strip_prefix("0x")
        .or_else(|| text.strip_prefix("0X"))
        .ok_or_else(|| {
            let a_dtype = crate::with_article(dtype);
            ValueError::new(
                ValueErrorKind::WrongType,
                if is_json_special(text) {
                    // JSON exporters write NaN and Infinity; YAML's spellings are these.
                    format!("{text:?} is not {a_dtype} value: {YAML_SPECIALS}")
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
// bit patterns, and how they are read from a file is the spec format's rule.

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

/// A coefficient list of a spec file: float32 values by the tensor value rules.
#[derive(Default)]
pub struct CoefficientList(pub Coefficients);

impl CoefficientList {
    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl schemars::JsonSchema for CoefficientList {
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

impl<'de> Deserialize<'de> for CoefficientList {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<CoefficientList, D::Error> {
        let items = Vec::<Coefficient>::deserialize(deserializer)?;
        Ok(CoefficientList(Coefficients(
            items.into_iter().map(|c| c.0).collect(),
        )))
    }
}

// Scale's attributes as spec files and the wire write them: the fields of
// `opspec::ops::scale::Attrs`, whose coefficients are read by the float32 value rules above. (The
// doc comment is the schema's description, as the other ops' attributes have theirs.)
/// Scale's attributes: `out = (input · scale + shift) ^ power` (docs/protocol.md).
#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "ScaleAttrs")]
pub struct ScaleAttrs {
    /// `uniform`, `channel` or `elementwise` (required).
    pub mode: scale::Mode,
    /// Empty or absent = 1.
    #[serde(default, skip_serializing_if = "CoefficientList::is_empty")]
    pub scale: CoefficientList,
    /// Empty or absent = 0.
    #[serde(default, skip_serializing_if = "CoefficientList::is_empty")]
    pub shift: CoefficientList,
    /// Empty or absent = 1.
    #[serde(default, skip_serializing_if = "CoefficientList::is_empty")]
    pub power: CoefficientList,
    /// `add_scale_nd`'s channel axis; absent = `add_scale`'s third-to-last axis.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channel_axis: Option<i64>,
    /// int8, float16, bfloat16 or float32; absent = the input's dtype (`int8` with a float32
    /// input is TensorRT's INT8 quantization).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "output_dtype"
    )]
    #[schemars(schema_with = "output_dtype_schema")]
    pub output_dtype: Option<DType>,
}

impl From<ScaleAttrs> for scale::Attrs {
    fn from(attrs: ScaleAttrs) -> scale::Attrs {
        scale::Attrs {
            mode: attrs.mode,
            scale: attrs.scale.0,
            shift: attrs.shift.0,
            power: attrs.power.0,
            channel_axis: attrs.channel_axis,
            output_dtype: attrs.output_dtype,
        }
    }
}

/// `output_dtype`'s schema: a dtype name. That Scale supports only four is the op's check
/// (`unsupported_dtype`), not the file format's.
fn output_dtype_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "description": "The output's dtype: Scale supports int8, float16, bfloat16 and float32; absent = the input's dtype.",
        "type": "string",
        "enum": DType::ALL.map(DType::name).to_vec(),
    })
}

/// `output_dtype` by its spec name.
fn output_dtype<'de, D: Deserializer<'de>>(d: D) -> Result<Option<DType>, D::Error> {
    let name = String::deserialize(d)?;
    DType::from_name(&name).map(Some).ok_or_else(|| {
        D::Error::custom(format!(
            "unknown dtype `{name}` (known: {})",
            DType::ALL.map(DType::name).join(", ")
        ))
    })
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

    #[test]
    fn coefficients_keep_bits_through_yaml() {
        let read = |yaml: &str| -> Result<scale::Attrs, serde_yaml::Error> {
            serde_yaml::from_str::<ScaleAttrs>(yaml).map(scale::Attrs::from)
        };
        let a = read(
            "{mode: channel, scale: [0.1, .nan, \"0x7fc00001\", -0.0, 2], channel_axis: 1, output_dtype: int8}",
        )
        .unwrap();
        assert_eq!(
            a.scale.0,
            [
                0.1f32.to_bits(),
                0x7fc0_0000,
                0x7fc0_0001,
                0x8000_0000,
                0x4000_0000
            ]
        );
        assert_eq!(a.output_dtype, Some(DType::Int8));
        // Written by the op's own serialization, read back by these rules: the same bits.
        let text = serde_yaml::to_string(&a).unwrap();
        assert_eq!(read(&text).unwrap(), a, "{text}");
        assert!(read("{mode: uniform, scale: [1e40]}").is_err());
        assert!(read("{mode: uniform, output_dtype: float64}").is_err());
    }
}
