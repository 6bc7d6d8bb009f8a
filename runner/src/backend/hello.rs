//! The hello: what a backend declares it runs (its ops, dtypes per op, targets and attribute
//! values, checked against the names the suite knows), and which cases that declaration
//! leaves out (docs/protocol.md, "What the runner does with a hello").

use std::collections::{BTreeMap, BTreeSet};

use opspec::{DType, Op};
use opspec_spec::{Case, Expectation, TARGETS};

use crate::backend::attributes::{declarable, declarable_names};
use crate::backend::facts::{EngineId, Platform};
use crate::backend::interface::{trial_dtypes, Exclusion};

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
        })
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

/// The declaration a dtype exclusion is counted under: `<op> dtype <dtype>[,<dtype>...]`.
pub(crate) fn dtype_declaration(case: &Case, excluded: &[DType]) -> String {
    let names: Vec<&str> = excluded.iter().map(|d| d.name()).collect();
    format!("{} dtype {}", case.op.name(), names.join(","))
}
