//! The hello: what a backend declares it runs (its ops, dtypes per op, targets and attribute
//! values, checked against the names the suite knows), and which cases that declaration
//! leaves out (docs/protocol.md, "What the runner does with a hello").

use std::collections::{BTreeMap, BTreeSet};

use opspec::{DType, Op};
use opspec_spec::{Case, Expectation, TARGETS};

use crate::backend::attributes::{declarable, declarable_names};
use crate::backend::facts::{EngineId, EnvDeclaration, Facts, Platform};
use crate::backend::interface::{trial_dtypes, Exclusion};
use crate::backend::protocol::{Reply, MAX_BATCH, PROTOCOL_VERSION};

/// Why the runner cannot take a hello ([`Capabilities::from_reply`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum HelloRefusal {
    /// The message is no hello.
    NotHello,
    /// A hello of another protocol version.
    Protocol(u64),
    /// A hello declaring something the runner does not take (`names ...`, `declares ...`).
    Declares(String),
}

impl std::fmt::Display for HelloRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HelloRefusal::NotHello => f.write_str("not a hello"),
            HelloRefusal::Protocol(protocol) => write!(
                f,
                "a hello of protocol {protocol}; the runner speaks {PROTOCOL_VERSION}"
            ),
            HelloRefusal::Declares(what) => write!(f, "the hello {what}"),
        }
    }
}

/// What the backend said it can do in its hello.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Capabilities {
    pub(crate) name: String,
    pub(crate) ops: BTreeSet<String>,
    /// Per op, the dtypes it supports; an op absent here supports every dtype.
    pub(crate) dtypes: BTreeMap<String, BTreeSet<String>>,
    pub(crate) targets: BTreeSet<String>,
    /// Per op, per declarable attribute ([`crate::backend::attributes`]), the values it implements; an
    /// attribute absent here takes every value.
    pub(crate) attributes: BTreeMap<Op, BTreeMap<&'static str, BTreeSet<String>>>,
    /// The hello's `build_only`: the backend answers `built`, never `ok`.
    pub(crate) build_only: bool,
    /// The hello's `engine` and `platform` ([`crate::backend::facts`]).
    pub(crate) engine: Option<EngineId>,
    pub(crate) platform: Option<Platform>,
    /// The hello's `composed`: what the adapter composes rather than the engine implements.
    pub(crate) composed: BTreeMap<String, String>,
    /// The hello's `batch`: the most cases one request may hold (1 without it).
    pub(crate) batch: usize,
    /// The hello's `env`: the environment variables that change what the backend does.
    pub(crate) env: EnvDeclaration,
}

/// A name in a hello that the suite does not know: a typo there would silently skip cases.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum UnknownName {
    /// `field` is `ops` or `dtypes` (a key of it).
    #[error(
        "unknown op {name:?} in `{field}` (known: {}){}",
        known(Op::ALL.map(Op::name)),
        opspec_spec::did_you_mean(name, Op::ALL.map(Op::name))
    )]
    Op { name: String, field: &'static str },
    #[error("unknown dtype {name:?} in `dtypes.{op}` (known: {})", known(DType::ALL.map(DType::name)))]
    Dtype { name: String, op: String },
    #[error("unknown target {name:?} in `targets` (known: {})", known(TARGETS))]
    Target { name: String },
    #[error("unknown attribute {name:?} in `attributes.{op}` (known: {})", declarable_names(*op).join(", "))]
    Attribute { name: String, op: Op },
    #[error("unknown value {name:?} in `attributes.{op}.{attribute}` (known: {})", (declarable(*op, attribute).expect("a declarable attribute").values)().join(", "))]
    Value {
        name: String,
        op: Op,
        attribute: &'static str,
    },
}

fn known<const N: usize>(names: [&str; N]) -> String {
    names.join(", ")
}

/// Every unknown name of a hello.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
pub(crate) struct HelloError(pub Vec<UnknownName>);

impl Capabilities {
    /// The capabilities of a hello, or every name in it that the suite does not know.
    pub(crate) fn from_hello(
        name: String,
        ops: Vec<String>,
        dtypes: BTreeMap<String, Vec<String>>,
        targets: Vec<String>,
        attributes: BTreeMap<String, BTreeMap<String, Vec<String>>>,
    ) -> Result<Capabilities, HelloError> {
        let mut problems = Vec::new();
        let unknown_op = |name: &String, field| {
            Op::from_name(name).is_none().then(|| UnknownName::Op {
                name: name.clone(),
                field,
            })
        };
        problems.extend(ops.iter().filter_map(|op| unknown_op(op, "ops")));
        for (op, list) in &dtypes {
            problems.extend(unknown_op(op, "dtypes"));
            problems.extend(
                list.iter()
                    .filter(|d| DType::from_name(d).is_none())
                    .map(|d| UnknownName::Dtype {
                        name: d.clone(),
                        op: op.clone(),
                    }),
            );
        }
        problems.extend(
            targets
                .iter()
                .filter(|t| !TARGETS.contains(&t.as_str()))
                .map(|t| UnknownName::Target { name: t.clone() }),
        );
        let mut declared = BTreeMap::new();
        for (op_name, lists) in attributes {
            let Some(op) = Op::from_name(&op_name) else {
                problems.extend(unknown_op(&op_name, "attributes"));
                continue;
            };
            let per_op: &mut BTreeMap<_, _> = declared.entry(op).or_default();
            for (name, values) in lists {
                let Some(attribute) = declarable(op, &name) else {
                    problems.push(UnknownName::Attribute { name, op });
                    continue;
                };
                let known = (attribute.values)();
                problems.extend(values.iter().filter(|v| !known.contains(v)).map(|v| {
                    UnknownName::Value {
                        name: v.clone(),
                        op,
                        attribute: attribute.name,
                    }
                }));
                per_op.insert(attribute.name, values.into_iter().collect::<BTreeSet<_>>());
            }
        }
        if !problems.is_empty() {
            return Err(HelloError(problems));
        }
        Ok(Capabilities {
            name,
            ops: ops.into_iter().collect(),
            dtypes: dtypes
                .into_iter()
                .map(|(op, list)| (op, list.into_iter().collect()))
                .collect(),
            targets: targets.into_iter().collect(),
            attributes: declared,
            build_only: false,
            engine: None,
            platform: None,
            composed: BTreeMap::new(),
            batch: 1,
            env: EnvDeclaration::default(),
        })
    }

    /// The capabilities a hello reply declares, or why the runner cannot take them: for the
    /// hello of a backend process (`crate::backend::process`) and one read from a file
    /// (`runner judge`, `crate::backend::offline`) alike.
    pub(crate) fn from_reply(reply: Reply) -> Result<Capabilities, HelloRefusal> {
        let Reply::Hello {
            protocol,
            name,
            ops,
            dtypes,
            targets,
            attributes,
            build_only,
            engine,
            platform,
            composed,
            batch,
            env,
        } = reply
        else {
            return Err(HelloRefusal::NotHello);
        };
        if protocol != PROTOCOL_VERSION {
            return Err(HelloRefusal::Protocol(protocol));
        }
        let batch = match batch {
            None => 1,
            Some(0) => return Err(HelloRefusal::Declares(
                "declares `batch: 0`: a batch holds at least one case (leave `batch` out to get single requests)".into(),
            )),
            // A backend that takes any number takes the most the runner sends.
            Some(n) => n.min(MAX_BATCH as u64) as usize,
        };
        let capabilities =
            Capabilities::from_hello(name, ops, dtypes.unwrap_or_default(), targets, attributes)
                .map_err(|e| HelloRefusal::Declares(format!("names {e}")))?;
        Ok(Capabilities {
            build_only,
            engine,
            platform: platform.map(|p| *p),
            composed,
            batch,
            env,
            ..capabilities
        })
    }

    /// The facts of a run of this backend: `base` (the machine as the runner reads it) with
    /// the hello's engine, platform and environment variables, those named in a list read
    /// from the runner's environment, which the backend inherits.
    pub(crate) fn facts(&self, base: Facts) -> Facts {
        base.with_hello(self.engine.as_ref(), self.platform.as_ref())
            .with_env(&self.env, |name| std::env::var(name).ok())
    }

    /// `Err` when the declaration leaves the case out: its op, a target it is restricted on,
    /// an attribute value, or (for a case that expects outputs) a dtype.
    pub(crate) fn supports(&self, case: &Case) -> Result<(), Exclusion> {
        let op = case.op.name();
        let backend = &self.name;
        if !self.ops.contains(op) {
            return Err(Exclusion {
                by: format!("op {op}"),
                reason: format!("{backend} does not implement {op}"),
            });
        }
        let targets: Vec<&String> = self.targets.iter().collect();
        if let Some((target, reason)) = case.unsupported_reason(&targets) {
            return Err(Exclusion {
                by: format!("target {target}"),
                reason: format!("restricted on {target}: {reason}"),
            });
        }
        // Every case using an undeclared value is left out, error cases too: the value names
        // a behaviour the backend does not have, so it could not tell which rule it breaks.
        for (attribute, values) in self.attributes.get(&case.op).into_iter().flatten() {
            let declarable = declarable(case.op, attribute).expect("validated in the hello");
            if let Some(value) = (declarable.used)(&case.invocation.attrs)
                .into_iter()
                .find(|v| !values.contains(v))
            {
                return Err(Exclusion {
                    by: format!("{op} {attribute}={value}"),
                    reason: format!("{backend} does not support {op} with {attribute} {value}"),
                });
            }
        }
        let excluded = self.excluded_dtypes(case);
        // An error case is sent anyway: the backend must still reject what it cannot run.
        if !excluded.is_empty() && matches!(case.expect, Expectation::Outputs(_)) {
            let names: Vec<&str> = excluded.iter().map(|d| d.name()).collect();
            return Err(Exclusion {
                by: dtype_declaration(case, &excluded),
                reason: format!("{backend} does not support {op} in {}", names.join(", ")),
            });
        }
        Ok(())
    }

    /// The dtypes of the case ([`trial_dtypes`]) that the declaration leaves out for its op.
    pub(crate) fn excluded_dtypes(&self, case: &Case) -> Vec<DType> {
        match self.dtypes.get(case.op.name()) {
            Some(listed) => trial_dtypes(case)
                .into_iter()
                .filter(|d| !listed.contains(d.name()))
                .collect(),
            None => Vec::new(),
        }
    }
}

/// Where in a JSON text a byte offset lies, as a path of object keys and array indices
/// (`platform.engine_flags[0]`): the field an error found there is in.
fn json_path_at(text: &str, offset: usize) -> String {
    enum Frame {
        Object { key: Option<String>, in_key: bool },
        Array(usize),
    }
    let bytes = text.as_bytes();
    let end = offset.min(bytes.len());
    let mut frames: Vec<Frame> = Vec::new();
    let mut at = 0;
    while at < end {
        match bytes[at] {
            b'{' => frames.push(Frame::Object {
                key: None,
                in_key: true,
            }),
            b'[' => frames.push(Frame::Array(0)),
            b'}' | b']' => {
                frames.pop();
            }
            b',' => match frames.last_mut() {
                Some(Frame::Object { key, in_key }) => {
                    *key = None;
                    *in_key = true;
                }
                Some(Frame::Array(index)) => *index += 1,
                None => {}
            },
            b':' => {
                if let Some(Frame::Object { in_key, .. }) = frames.last_mut() {
                    *in_key = false;
                }
            }
            b'"' => {
                let start = at + 1;
                at += 1;
                while at < end && bytes[at] != b'"' {
                    at += if bytes[at] == b'\\' { 2 } else { 1 };
                }
                if let Some(Frame::Object { key, in_key: true }) = frames.last_mut() {
                    let raw = &text[start..at.min(end)];
                    *key =
                        Some(serde_json::from_str(&format!("\"{raw}\"")).unwrap_or(raw.to_owned()));
                }
            }
            _ => {}
        }
        at += 1;
    }
    let mut path = String::new();
    for frame in &frames {
        match frame {
            Frame::Object { key: Some(key), .. } => {
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(key);
            }
            Frame::Object { key: None, .. } => {}
            Frame::Array(index) => path.push_str(&format!("[{index}]")),
        }
    }
    path
}

/// serde's words for a JSON type, as the protocol's documents say them.
fn plain_words(message: &str) -> String {
    message
        .replace("a sequence", "a list")
        .replace("a map", "an object")
        .replace("expected u64", "expected a whole number (u64)")
}

/// The part of `value` at `place` (object keys, and `0` for the first item of a list).
fn pointer<'v>(value: &'v mut serde_json::Value, place: &[String]) -> &'v mut serde_json::Value {
    place.iter().fold(value, |value, key| match value {
        serde_json::Value::Array(items) => &mut items[0],
        _ => &mut value[key.as_str()],
    })
}

/// Where inside `value` the hello's error `message` comes from: the path below it (`.name`,
/// `[0]`) to the smallest part that, put alone at `place` in `probe` (a hello that is right
/// but for what is put there), still gives that message.
fn narrow(
    probe: &mut serde_json::Value,
    place: &[String],
    value: &serde_json::Value,
    message: &str,
) -> String {
    use serde_json::Value;
    let fails_the_same = |probe: &mut Value, part: Value| {
        *pointer(probe, place) = part;
        serde_json::from_value::<Reply>(probe.clone()).is_err_and(|e| e.to_string() == message)
    };
    match value {
        Value::Object(fields) => {
            for (key, field) in fields {
                let alone = Value::Object([(key.clone(), field.clone())].into_iter().collect());
                if fails_the_same(probe, alone) {
                    let mut deeper = place.to_vec();
                    deeper.push(key.clone());
                    return format!(".{key}{}", narrow(probe, &deeper, field, message));
                }
            }
        }
        Value::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                if fails_the_same(probe, Value::Array(vec![item.clone()])) {
                    let mut deeper = place.to_vec();
                    deeper.push("0".to_owned());
                    return format!("[{index}]{}", narrow(probe, &deeper, item, message));
                }
            }
        }
        _ => {}
    }
    *pointer(probe, place) = value.clone();
    String::new()
}

/// Why a line read for the hello is no hello the runner can take, naming the field and the
/// type it should have (``field `engine`: invalid type: string "onnx", expected an object
/// {"name": string, "version": string}``), or that it is no JSON or no hello.
pub(crate) fn bad_hello(line: &str) -> String {
    use serde_json::Value;
    let value: Value = match serde_json::from_str(line) {
        Ok(value) => value,
        Err(e) => {
            // serde_json counts columns in bytes, from 1; a reply is one line.
            let offset = (line.split('\n').take(e.line().saturating_sub(1)))
                .map(|l| l.len() + 1)
                .sum::<usize>()
                + e.column();
            let message = e.to_string();
            let message = (message.rsplit_once(" at line ")).map_or(message.as_str(), |(m, _)| m);
            return match json_path_at(line, offset) {
                path if path.is_empty() => format!("a line that is not JSON ({message})"),
                path => format!("a line that is not JSON (in field `{path}`: {message})"),
            };
        }
    };
    let hello = Value::from("hello");
    let Some(fields) = value.as_object().filter(|v| v.get("type") == Some(&hello)) else {
        let kind = value
            .get("type")
            .map_or("none".to_owned(), Value::to_string);
        return format!("a message of type {kind}, not a hello");
    };
    let message = match serde_json::from_value::<Reply>(value.clone()) {
        Err(e) => e.to_string(),
        Ok(_) => return "a hello".to_owned(),
    };
    // Each field alone in a hello that is right otherwise: the one that gives the same error.
    let skeleton = serde_json::json!({"type": "hello", "protocol": 1, "name": "probe", "ops": []});
    for (key, field) in fields.iter().filter(|(k, _)| *k != "type") {
        let mut probe = skeleton.clone();
        probe[key.as_str()] = field.clone();
        let same =
            serde_json::from_value::<Reply>(probe.clone()).is_err_and(|e| e.to_string() == message);
        if same {
            let below = narrow(&mut probe, std::slice::from_ref(key), field, &message);
            let path = format!("{key}{below}");
            return format!(
                "field `{}`: {}",
                crate::backend::facts::printable(&path),
                plain_words(&message)
            );
        }
    }
    plain_words(&message)
}

/// The declaration a dtype exclusion is counted under: `<op> dtype <dtype>[,<dtype>...]`.
pub(crate) fn dtype_declaration(case: &Case, excluded: &[DType]) -> String {
    let names: Vec<&str> = excluded.iter().map(|d| d.name()).collect();
    format!("{} dtype {}", case.op.name(), names.join(","))
}
