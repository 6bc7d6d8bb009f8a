//! Sweep files: YAML that declares a family of cases instead of one.
//!
//! `sweeps/<op>/<file>.yaml` (the folder names the op, as in `specs/`):
//!
//! ```yaml
//! seed: 1                    # seeds `values: random`; recorded with every golden
//! sweeps:
//!   - name: mode_stride_start
//!     source: "seed 004 SampleMode formulas"
//!     dtypes: [int8, float32]
//!     matrix:                # one case per combination, in this order
//!       mode: [strict_bounds, wrap, clamp, fill, reflect]
//!       stride: [-1, 0, 2]
//!       start: [-4, 0, 3, 6]
//!     attrs: {mode: $mode, start: [$start], size: [4], stride: [$stride]}
//!     inputs:
//!       input: {shape: [5]}  # values: provenance unless given
//!     metamorphic: true      # also run the op's round trip (metamorphic.rs) where it applies
//! ```
//!
//! A matrix variable is a list of YAML values, `{permutations: n}` (every permutation of
//! `0..n`, in lexicographic order) or `{range: [a, b]}` (`a..=b`). `$name` anywhere in the entry
//! (except `name` and `matrix`) is replaced by the variable's value, `$name.key` by a field of a
//! mapping value. A combination is named `<name>__<value>__<value>…` (`-2` → `m2`, lists
//! joined by `_`, a mapping by its `name` field).
//!
//! An input is `{dtype?, shape, data? | values?, image?}`: `data` as in spec files, or
//! `values`: `provenance` (the default, see [`super::values`]), `special` (the dtype's special
//! values, repeated), `random` (random bit patterns from the file's seed), or a list of
//! values repeated to fill the shape. `image: {format: F, dla?: …}` makes the input the 1-D
//! memory image of a `shape` tensor in format F (for reformat's unpack), padding slots
//! included. Other fields are those of a spec case: `source` (required), `clauses`, `note`,
//! `inferred`, `implementation_defined`, `tolerance`.
//!
//! Each trial cites the clauses of its own combination: an item of `clauses` may be a list
//! (`$mode.clauses`, when the matrix values are mappings carrying the clauses of their mode or
//! format) or `{dtypes: [...], clauses: [...]}`, cited only by the trials of those dtypes; the
//! trial's clauses are the ids in order, each once.
//!
//! Each combination and dtype is one case, named `<op>::sweep::<file>::<case>[::<dtype>]`; its
//! expected result is its golden ([`crate::golden`]). All YAML parsing of sweeps is in
//! [`expand_file`].

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_yaml::{Mapping, Value};

use super::values::{random_bits, special_bits, Provenance};
use super::{case_hash, metamorphic, new_case, GeneratedCase};
use crate::golden::GoldenId;
use crate::rng::Rng;
use opspec::dtype::DType;
use opspec::ops::reformat::{Dla, Format, Image};
use opspec::ops::{Invocation, Op};
use opspec::tensor::{Limits, Tensor};
use opspec_spec::compare::Tolerance;
use opspec_spec::value::{flatten, to_bits, DataNode};
use opspec_spec::{op_files, parse_attrs, OpFile, SpecError, SpecErrorKind};

/// The generated cases of a set of sweep folders.
#[derive(Debug, Default)]
pub struct Sweeps {
    pub cases: Vec<GeneratedCase>,
    pub errors: Vec<SpecError>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileDef {
    seed: u64,
    sweeps: Vec<Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EntryDef {
    #[allow(dead_code)] // read before substitution; kept so the field is known
    name: String,
    source: String,
    #[serde(default)]
    clauses: Vec<ClauseItem>,
    #[serde(default)]
    note: Option<String>,
    #[serde(default)]
    inferred: bool,
    #[serde(default)]
    implementation_defined: bool,
    #[serde(default)]
    dtypes: Vec<String>,
    #[serde(default)]
    attrs: Option<Value>,
    inputs: BTreeMap<String, TensorTemplate>,
    #[serde(default)]
    tolerance: Option<ToleranceDef>,
    #[serde(default)]
    metamorphic: bool,
}

/// An item of a sweep's `clauses`: a clause id, a list of them (what `$mode.clauses` gives when
/// the matrix value carries its own clauses), or clauses cited only by the trials of some dtypes.
#[derive(Deserialize)]
#[serde(untagged)]
enum ClauseItem {
    Id(String),
    List(Vec<ClauseItem>),
    ForDtypes(ForDtypes),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ForDtypes {
    dtypes: Vec<String>,
    clauses: Vec<ClauseItem>,
}

/// The clause ids `items` cite for a trial of `dtype`, in order, each once.
fn cited(items: &[ClauseItem], dtype: Option<DType>, out: &mut Vec<String>) {
    for item in items {
        match item {
            ClauseItem::Id(id) => {
                if !out.contains(id) {
                    out.push(id.clone());
                }
            }
            ClauseItem::List(items) => cited(items, dtype, out),
            ClauseItem::ForDtypes(ForDtypes { dtypes, clauses }) => {
                if dtype.is_some_and(|d| dtypes.iter().any(|name| name == d.name())) {
                    cited(clauses, dtype, out);
                }
            }
        }
    }
}

/// The dtype names of `items`' `{dtypes, clauses}` entries that are no dtype.
fn unknown_dtypes(items: &[ClauseItem]) -> Option<String> {
    items.iter().find_map(|item| match item {
        ClauseItem::Id(_) => None,
        ClauseItem::List(items) => unknown_dtypes(items),
        ClauseItem::ForDtypes(ForDtypes { dtypes, clauses }) => dtypes
            .iter()
            .find(|name| DType::from_name(name).is_none())
            .cloned()
            .or_else(|| unknown_dtypes(clauses)),
    })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TensorTemplate {
    #[serde(default)]
    dtype: Option<String>,
    shape: Vec<i64>,
    #[serde(default)]
    data: Option<DataNode>,
    #[serde(default)]
    values: Option<ValuesDef>,
    #[serde(default)]
    image: Option<ImageDef>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum ValuesDef {
    Named(String),
    List(Vec<DataNode>),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ImageDef {
    format: Format,
    #[serde(default)]
    dla: Option<Dla>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ToleranceDef {
    #[serde(default)]
    ulp: Option<u64>,
    #[serde(default)]
    abs: Option<u64>,
}

/// Loads every `<dir>/<op>/<file>.yaml`; with `only = Some((op, file))` just that file.
pub fn load_dirs(dirs: &[PathBuf], only: Option<(&str, &str)>, limits: Limits) -> Sweeps {
    let (files, errors) = op_files(dirs, only, "sweep", "sweep::");
    let mut sweeps = Sweeps {
        errors,
        ..Sweeps::default()
    };
    let mut seen: BTreeMap<(Op, String), PathBuf> = BTreeMap::new();
    for OpFile { op, path, file } in files {
        if let Some(first) = seen.insert((op, file.clone()), path.clone()) {
            let message = format!(
                "a sweep `{op}/{file}` is also defined in {}; goldens are named by op and file, so they must be unique",
                first.display()
            );
            sweeps.errors.push(SpecError {
                kind: SpecErrorKind::Duplicate,
                path: path.clone(),
                op: op.name().into(),
                file: format!("sweep::{file}"),
                case: None,
                field: None,
                message,
            });
            continue;
        }
        let (cases, errors) = expand_file(op, &path, limits);
        sweeps.cases.extend(cases);
        sweeps.errors.extend(errors);
    }
    sweeps
}

/// A problem of a sweep file before it is located in the file ([`SpecError`] adds the file):
/// its kind, the case (a sweep, or one of its combinations) when known, and the field.
#[derive(Clone, Debug, PartialEq, Eq)]
struct SweepProblem {
    kind: SpecErrorKind,
    case: Option<String>,
    field: Option<String>,
    message: String,
}

impl SweepProblem {
    /// A problem of a sweep's case (or of the sweep, before its name is known).
    fn in_case(case: Option<String>, field: Option<String>, message: String) -> SweepProblem {
        SweepProblem {
            kind: SpecErrorKind::Case,
            case,
            field,
            message,
        }
    }
}

/// A problem with one field of an input's template (`dtype`, `shape`, `data`, `values`).
#[derive(Clone, Debug, PartialEq, Eq)]
struct FieldProblem {
    field: &'static str,
    message: String,
}

impl FieldProblem {
    fn new(field: &'static str, message: impl Into<String>) -> FieldProblem {
        FieldProblem {
            field,
            message: message.into(),
        }
    }
}

/// Expands one sweep file of `op`.
pub fn expand_file(op: Op, path: &Path, limits: Limits) -> (Vec<GeneratedCase>, Vec<SpecError>) {
    let file = stem(path);
    let error = |problem: SweepProblem| SpecError {
        kind: problem.kind,
        path: path.to_path_buf(),
        op: op.name().into(),
        file: format!("sweep::{file}"),
        case: problem.case,
        field: problem.field,
        message: problem.message,
    };
    // A sweep is a few KiB of parameters: a regular file of at most 16 MiB.
    let text = match opspec_spec::source::read_bounded(path, 16 << 20)
        .and_then(|bytes| String::from_utf8(bytes).map_err(|_| "not UTF-8 text".to_owned()))
    {
        Ok(text) => text,
        Err(e) => {
            return (
                vec![],
                vec![error(SweepProblem {
                    kind: SpecErrorKind::Unreadable,
                    case: None,
                    field: None,
                    message: e,
                })],
            )
        }
    };
    // The one YAML reader of the suite ([`opspec_spec::yaml`]), with its bounds on aliases,
    // nesting and documents; the field is named by the reader, the message says the problem.
    let def: FileDef = match opspec_spec::yaml::from_str(&text) {
        Ok(def) => def,
        Err(e) => {
            let kind = if e.is_syntax() {
                SpecErrorKind::Syntax
            } else {
                SpecErrorKind::Structure
            };
            return (
                vec![],
                vec![error(SweepProblem {
                    kind,
                    case: None,
                    field: Some(e.field()),
                    message: e.without_path(),
                })],
            );
        }
    };
    let mut cases = Vec::new();
    let mut errors = Vec::new();
    let mut names = BTreeSet::new();
    for (index, entry) in def.sweeps.iter().enumerate() {
        match expand_entry(op, path, &file, def.seed, entry, index, limits) {
            Ok(expanded) => {
                for generated in expanded {
                    if names.insert(generated.golden.key.clone()) {
                        cases.push(generated);
                    } else {
                        let message = format!(
                            "two combinations are both named `{}`: give the matrix values distinct names",
                            generated.golden.key
                        );
                        errors.push(error(SweepProblem {
                            kind: SpecErrorKind::Duplicate,
                            case: Some(generated.case.name.clone()),
                            field: Some("name".into()),
                            message,
                        }));
                    }
                }
            }
            Err(problem) => errors.push(error(problem)),
        }
    }
    (cases, errors)
}

fn expand_entry(
    op: Op,
    path: &Path,
    file: &str,
    seed: u64,
    entry: &Value,
    index: usize,
    limits: Limits,
) -> Result<Vec<GeneratedCase>, SweepProblem> {
    let at = |field: &str, message: String| {
        SweepProblem::in_case(None, Some(format!("sweeps[{index}].{field}")), message)
    };
    let Value::Mapping(map) = entry else {
        return Err(at(
            "",
            "a sweep is a mapping with name, source, attrs, inputs, ...".into(),
        ));
    };
    let name = match map.get("name") {
        Some(Value::String(name)) => name.clone(),
        _ => return Err(at("name", "every sweep has a `name`".into())),
    };
    let named = |field: Option<String>, message: String| {
        SweepProblem::in_case(Some(name.clone()), field, message)
    };
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        || name.contains("__")
    {
        return Err(named(
            Some("name".into()),
            "a sweep name uses only a-z, 0-9 and single _ (`__` separates the matrix values)"
                .into(),
        ));
    }
    let matrix = match map.get("matrix") {
        None => Vec::new(),
        Some(Value::Mapping(vars)) => {
            let mut matrix = Vec::new();
            for (key, value) in vars {
                let Value::String(var) = key else {
                    return Err(named(
                        Some("matrix".into()),
                        "variable names are strings".into(),
                    ));
                };
                let values =
                    matrix_values(value).map_err(|m| named(Some(format!("matrix.{var}")), m))?;
                matrix.push((var.clone(), values));
            }
            matrix
        }
        Some(_) => {
            return Err(named(
                Some("matrix".into()),
                "`matrix` maps variable names to lists of values".into(),
            ))
        }
    };
    let mut body = map.clone();
    body.remove("matrix");
    let body = Value::Mapping(body);
    let mut generated = Vec::new();
    let mut metamorphic_wanted = false;
    for combination in combinations(&matrix) {
        let vars: BTreeMap<&str, &Value> = matrix
            .iter()
            .zip(&combination)
            .map(|((var, values), &i)| (var.as_str(), &values[i]))
            .collect();
        let suffix: Vec<String> = matrix
            .iter()
            .zip(&combination)
            .map(|((_, values), &i)| name_part(&values[i]))
            .collect();
        let case_name = if suffix.is_empty() {
            name.clone()
        } else {
            format!("{name}__{}", suffix.join("__"))
        };
        let in_case = |field: Option<String>, message: String| {
            let values: Vec<String> = matrix
                .iter()
                .zip(&combination)
                .map(|((var, values), &i)| format!("{var}={}", show(&values[i])))
                .collect();
            let context = if values.is_empty() {
                String::new()
            } else {
                format!(" (with {})", values.join(", "))
            };
            SweepProblem::in_case(
                Some(case_name.clone()),
                field,
                format!("{message}{context}"),
            )
        };
        let substituted = substitute(&body, &vars).map_err(|m| in_case(None, m))?;
        let def: EntryDef = serde_path_to_error::deserialize(substituted).map_err(|e| {
            let field = e.path().to_string();
            in_case(Some(field), e.into_inner().to_string())
        })?;
        metamorphic_wanted |= def.metamorphic;
        if def.metamorphic && !metamorphic::supported(op) {
            return Err(in_case(
                Some("metamorphic".into()),
                format!("{op} has no round trip (metamorphic.rs lists shuffle, slice, reformat)"),
            ));
        }
        if def.source.trim().is_empty() {
            return Err(in_case(
                Some("source".into()),
                "every sweep names its source".into(),
            ));
        }
        let attrs = parse_attrs(op, def.attrs.clone())
            .map_err(|problem| in_case(Some(problem.field), problem.message))?;
        let tolerance = match &def.tolerance {
            None => None,
            Some(_) if op != Op::Scale => {
                return Err(in_case(
                    Some("tolerance".into()),
                    format!("{op} compares bit for bit; only scale takes a tolerance"),
                ))
            }
            Some(ToleranceDef {
                ulp: Some(n),
                abs: None,
            }) => Some(Tolerance::Ulp(*n)),
            Some(ToleranceDef {
                ulp: None,
                abs: Some(n),
            }) => Some(Tolerance::Abs(*n)),
            Some(_) => {
                return Err(in_case(
                    Some("tolerance".into()),
                    "give exactly one of `ulp` or `abs`".into(),
                ))
            }
        };
        for input in def.inputs.keys() {
            if !op.inputs().contains(&input.as_str()) {
                return Err(in_case(
                    Some(format!("inputs.{input}")),
                    format!(
                        "{op} has no input `{input}` (inputs: {})",
                        op.inputs().join(", ")
                    ),
                ));
            }
        }
        if !def.inputs.contains_key("input") {
            return Err(in_case(
                Some("inputs".into()),
                "the `input` tensor is required".into(),
            ));
        }
        if let Some(name) = unknown_dtypes(&def.clauses) {
            return Err(in_case(
                Some("clauses".into()),
                format!("unknown dtype `{name}` in a `{{dtypes, clauses}}` entry"),
            ));
        }
        let mut dtypes = Vec::new();
        for (i, dtype) in def.dtypes.iter().enumerate() {
            let dtype = DType::from_name(dtype).ok_or_else(|| {
                in_case(
                    Some(format!("dtypes[{i}]")),
                    format!("unknown dtype `{dtype}`"),
                )
            })?;
            dtypes.push(Some(dtype));
        }
        if dtypes.is_empty() {
            dtypes.push(None);
        }
        let matrix_note: Vec<String> = matrix
            .iter()
            .zip(&combination)
            .map(|((var, values), &i)| format!("{var}={}", show(&values[i])))
            .collect();
        let note = match (&def.note, matrix_note.is_empty()) {
            (Some(note), true) => Some(note.clone()),
            (Some(note), false) => Some(format!("{note} [{}]", matrix_note.join(", "))),
            (None, true) => None,
            (None, false) => Some(format!("[{}]", matrix_note.join(", "))),
        };
        for dtype in dtypes {
            let mut inputs = vec![None; op.inputs().len()];
            let mut provenance = None;
            for (position, input_name) in op.inputs().iter().enumerate() {
                let Some(template) = def.inputs.get(*input_name) else {
                    continue;
                };
                let stream = format!(
                    "{op}/{file}/{case_name}/{}/{input_name}",
                    dtype.map_or("-", DType::name)
                );
                let (tensor, is_provenance) = build_tensor(template, dtype, seed, &stream, limits)
                    .map_err(|FieldProblem { field, message }| {
                        in_case(Some(format!("inputs.{input_name}.{field}")), message)
                    })?;
                if position == 0 && is_provenance {
                    provenance = Some(Provenance::new(tensor.dtype, tensor.len()));
                }
                inputs[position] = Some(tensor);
            }
            if let Some(name) = opspec_spec::given_twice(&attrs, &inputs).first() {
                return Err(in_case(
                    Some(format!("attrs.{name}")),
                    format!("`{name}` is given both as an attribute and as an input"),
                ));
            }
            let invocation = Invocation {
                attrs: attrs.clone(),
                inputs,
            };
            let mut case = new_case(op, &format!("sweep::{file}"), path, &case_name, dtype);
            case.source = def.source.clone();
            cited(&def.clauses, dtype, &mut case.clauses);
            case.inferred = def.inferred;
            case.note = note.clone();
            case.tolerance = tolerance;
            case.implementation_defined = def.implementation_defined;
            let metamorphic_case = (def.metamorphic
                && metamorphic::applies(&invocation)
                && opspec::ops::evaluate(&invocation, limits).is_ok())
            .then(|| {
                let mut first = case.clone();
                first.file = format!("metamorphic::{file}");
                for id in metamorphic::way_back_clauses(op) {
                    if !first.clauses.iter().any(|c| c == id) {
                        first.clauses.push((*id).to_owned());
                    }
                }
                first.invocation = invocation.clone();
                first
            });
            case.invocation = invocation;
            generated.push(GeneratedCase {
                hash: case_hash(&case.invocation),
                golden: GoldenId::new(op, file, &case_name, dtype),
                seed,
                provenance,
                metamorphic: metamorphic_case,
                case,
            });
        }
    }
    if metamorphic_wanted && generated.iter().all(|g| g.metamorphic.is_none()) {
        return Err(named(
            Some("metamorphic".into()),
            format!(
                "no combination admits the round trip ({}); remove `metamorphic`",
                metamorphic::describe(op)
            ),
        ));
    }
    Ok(generated)
}

/// Builds one input; the flag says its values are provenance codes.
fn build_tensor(
    template: &TensorTemplate,
    case_dtype: Option<DType>,
    seed: u64,
    stream: &str,
    limits: Limits,
) -> Result<(Tensor, bool), FieldProblem> {
    let dtype = match (&template.dtype, case_dtype) {
        (Some(name), _) => DType::from_name(name)
            .ok_or_else(|| FieldProblem::new("dtype", format!("unknown dtype `{name}`")))?,
        (None, Some(dtype)) => dtype,
        (None, None) => {
            return Err(FieldProblem::new(
                "dtype",
                "no dtype: give the tensor a `dtype` or the sweep a `dtypes` list",
            ))
        }
    };
    let mut logical = Vec::with_capacity(template.shape.len());
    for &dim in &template.shape {
        logical.push(
            usize::try_from(dim)
                .map_err(|_| FieldProblem::new("shape", format!("dim {dim} is negative")))?,
        );
    }
    limits
        .checked_volume(&logical)
        .map_err(|e| FieldProblem::new("shape", e.message))?;
    let shape = match &template.image {
        None => logical,
        Some(image) => {
            let dla = image.dla.unwrap_or_default();
            let len = Image::new(image.format, dtype, &logical, dla, limits)
                .map(|image| image.len())
                .unwrap_or_else(|_| logical.iter().product());
            vec![len]
        }
    };
    let n: usize = shape.iter().product();
    let literal = |nodes: Vec<&DataNode>, field: &'static str| -> Result<Vec<u64>, FieldProblem> {
        nodes
            .into_iter()
            .map(|node| to_bits(node, dtype).map_err(|m| FieldProblem::new(field, m.to_string())))
            .collect()
    };
    let (bits, provenance) = match (&template.data, &template.values) {
        (Some(_), Some(_)) => {
            return Err(FieldProblem::new(
                "data",
                "give `data` or `values`, not both",
            ));
        }
        (Some(_), None) if template.image.is_some() => {
            return Err(FieldProblem::new(
                "data",
                "an `image` input takes `values`, not `data`",
            ));
        }
        (Some(data), None) => {
            let nodes =
                flatten(data, &shape).map_err(|m| FieldProblem::new("data", m.to_string()))?;
            (literal(nodes, "data")?, false)
        }
        (None, None) => (Provenance::tensor(dtype, shape.clone()).buffer_bits(), true),
        (None, Some(ValuesDef::Named(name))) => match name.as_str() {
            "provenance" => (Provenance::tensor(dtype, shape.clone()).buffer_bits(), true),
            "special" => (cycle(&special_bits(dtype), n), false),
            "random" => (
                random_bits(dtype, n, &mut Rng::for_stream(seed, stream)),
                false,
            ),
            other => {
                let message = format!(
                    "unknown values `{other}` (provenance, special, random, or a list of values)"
                );
                return Err(FieldProblem::new("values", message));
            }
        },
        (None, Some(ValuesDef::List(nodes))) => {
            if nodes.is_empty() {
                return Err(FieldProblem::new("values", "the list of values is empty"));
            }
            (cycle(&literal(nodes.iter().collect(), "values")?, n), false)
        }
    };
    Ok((Tensor::from_bits(dtype, shape, bits), provenance))
}

fn cycle(items: &[u64], n: usize) -> Vec<u64> {
    (0..n).map(|i| items[i % items.len()]).collect()
}

trait BufferBits {
    fn buffer_bits(&self) -> Vec<u64>;
}

impl BufferBits for Tensor {
    fn buffer_bits(&self) -> Vec<u64> {
        (0..self.len()).map(|i| self.bits(i)).collect()
    }
}

fn matrix_values(value: &Value) -> Result<Vec<Value>, String> {
    match value {
        Value::Sequence(items) if !items.is_empty() => Ok(items.clone()),
        Value::Sequence(_) => Err("an empty list gives no case".into()),
        Value::Mapping(map) if map.len() == 1 => {
            if let Some(n) = map.get("permutations") {
                let n = n
                    .as_u64()
                    .filter(|&n| n <= 8)
                    .ok_or("`permutations: n` takes n from 0 to 8")?;
                Ok(permutations(n as usize)
                    .into_iter()
                    .map(|p| {
                        Value::Sequence(p.into_iter().map(|a| Value::from(a as u64)).collect())
                    })
                    .collect())
            } else if let Some(Value::Sequence(bounds)) = map.get("range") {
                match bounds.as_slice() {
                    [a, b] => {
                        let (a, b) = (
                            a.as_i64().ok_or("range bounds are integers")?,
                            b.as_i64().ok_or("range bounds are integers")?,
                        );
                        if a > b || b - a > 10_000 {
                            return Err(format!("range [{a}, {b}] is empty or too long"));
                        }
                        Ok((a..=b).map(Value::from).collect())
                    }
                    _ => Err("`range: [a, b]` takes two integers".into()),
                }
            } else {
                Err("a matrix variable is a list, `{permutations: n}` or `{range: [a, b]}`".into())
            }
        }
        _ => Err("a matrix variable is a list, `{permutations: n}` or `{range: [a, b]}`".into()),
    }
}

/// Every permutation of `0..n` in lexicographic order.
fn permutations(n: usize) -> Vec<Vec<usize>> {
    let mut perm: Vec<usize> = (0..n).collect();
    let mut all = vec![perm.clone()];
    loop {
        // Next lexicographic permutation.
        let Some(i) = (1..n).rev().find(|&i| perm[i - 1] < perm[i]) else {
            return all;
        };
        let j = (i..n)
            .rev()
            .find(|&j| perm[j] > perm[i - 1])
            .expect("exists");
        perm.swap(i - 1, j);
        perm[i..].reverse();
        all.push(perm.clone());
    }
}

/// The index of each variable's value, for every combination (first variable outermost).
fn combinations(matrix: &[(String, Vec<Value>)]) -> Vec<Vec<usize>> {
    let mut all = vec![vec![]];
    for (_, values) in matrix {
        all = all
            .into_iter()
            .flat_map(|prefix: Vec<usize>| {
                (0..values.len()).map(move |i| {
                    let mut next = prefix.clone();
                    next.push(i);
                    next
                })
            })
            .collect();
    }
    all
}

fn substitute(value: &Value, vars: &BTreeMap<&str, &Value>) -> Result<Value, String> {
    Ok(match value {
        Value::String(text) if text.starts_with('$') => {
            let (var, key) = match text[1..].split_once('.') {
                Some((var, key)) => (var, Some(key)),
                None => (&text[1..], None),
            };
            let found = vars.get(var).ok_or_else(|| {
                format!(
                    "`{text}` names no matrix variable (variables: {})",
                    vars.keys().copied().collect::<Vec<_>>().join(", ")
                )
            })?;
            match key {
                None => (*found).clone(),
                Some(key) => found.get(key).cloned().ok_or_else(|| {
                    format!("`{text}`: the value of `{var}` has no field `{key}`")
                })?,
            }
        }
        Value::Sequence(items) => Value::Sequence(
            items
                .iter()
                .map(|item| substitute(item, vars))
                .collect::<Result<_, _>>()?,
        ),
        Value::Mapping(map) => {
            let mut out = Mapping::new();
            for (key, item) in map {
                out.insert(key.clone(), substitute(item, vars)?);
            }
            Value::Mapping(out)
        }
        other => other.clone(),
    })
}

/// A value as part of a case name: `-2` → `m2`, `[0, 2, 1]` → `0_2_1`, `0.5` → `0p5`.
fn name_part(value: &Value) -> String {
    match value {
        Value::Null => "none".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => match n.as_i64() {
            Some(i) if i < 0 => format!("m{}", i.unsigned_abs()),
            Some(i) => i.to_string(),
            None => {
                let f = n.as_f64().unwrap_or(0.0);
                if f.is_nan() {
                    "nan".into()
                } else if f.is_infinite() {
                    if f > 0.0 { "inf" } else { "minf" }.into()
                } else {
                    format!("{f:?}").replace('-', "m").replace(['.', '+'], "p")
                }
            }
        },
        Value::String(s) => {
            let text: String = s
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() {
                        c.to_ascii_lowercase()
                    } else {
                        '_'
                    }
                })
                .collect();
            let text = text.trim_matches('_').to_owned();
            if text.is_empty() {
                "x".into()
            } else {
                text
            }
        }
        Value::Sequence(items) if items.is_empty() => "empty".into(),
        Value::Sequence(items) => items.iter().map(name_part).collect::<Vec<_>>().join("_"),
        Value::Mapping(map) => match map.get("name") {
            Some(name) => name_part(name),
            None => map
                .iter()
                .map(|(k, v)| format!("{}_{}", name_part(k), name_part(v)))
                .collect::<Vec<_>>()
                .join("_"),
        },
        Value::Tagged(tagged) => name_part(&tagged.value),
    }
}

/// A value as a note shows it (flow YAML).
fn show(value: &Value) -> String {
    match value {
        Value::Mapping(map) if map.get("name").is_some() => show(&map["name"]),
        _ => serde_yaml::to_string(value)
            .map(|s| flow(s.trim()))
            .unwrap_or_default(),
    }
}

/// serde_yaml writes block style; a one-line rendering for notes.
fn flow(block: &str) -> String {
    if !block.contains('\n') {
        return block.to_owned();
    }
    let items: Vec<&str> = block
        .lines()
        .map(|l| l.trim().trim_start_matches("- ").trim())
        .collect();
    format!("[{}]", items.join(", "))
}

fn stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `<scratch>/<op>/<name>.yaml` holding `yaml`; the folder is removed when dropped.
    fn scratch(name: &str, op: &str, yaml: &str) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(op)).unwrap();
        let path = dir.path().join(op).join(format!("{name}.yaml"));
        std::fs::write(&path, yaml).unwrap();
        (dir, path)
    }

    /// A sweep file is read by the spec files' reader: a field of the wrong type or an unknown
    /// field voids the file with its kind, the file and the field, and the line.
    #[test]
    fn a_bad_field_of_a_sweep_file_is_named_with_its_file_and_line() {
        let (_dir, path) = scratch("bad", "slice", "seed: one\nsweeps: []\n");
        let (cases, errors) = expand_file(Op::Slice, &path, Limits::DEFAULT);
        assert!(cases.is_empty());
        let [error] = errors.as_slice() else {
            panic!("{errors:?}")
        };
        assert_eq!(error.kind, SpecErrorKind::Structure, "{error:?}");
        assert_eq!(error.path, path);
        assert_eq!(error.file, "sweep::bad");
        assert_eq!(error.field.as_deref(), Some("seed"), "{error:?}");
        assert!(
            error.message.contains("expected u64") && error.message.contains("line 1"),
            "{error:?}"
        );

        std::fs::write(&path, "seed: 1\nsweeps: []\nsweep: []\n").unwrap();
        let (_, errors) = expand_file(Op::Slice, &path, Limits::DEFAULT);
        assert_eq!(errors[0].field.as_deref(), Some("sweep"), "{errors:?}");
        assert!(
            errors[0].message.contains("unknown field `sweep`")
                && errors[0].message.contains("line 3"),
            "{errors:?}"
        );

        std::fs::write(&path, "seed: 1\nsweeps: [\n").unwrap();
        let (_, errors) = expand_file(Op::Slice, &path, Limits::DEFAULT);
        assert_eq!(errors[0].kind, SpecErrorKind::Syntax, "{errors:?}");
        assert!(errors[0].message.contains("line "), "{errors:?}");
    }

    /// The reader's bounds hold for sweeps: nine aliases of nine aliases (9^9 values, the
    /// "billion laughs") and lists nested past the limit are refused as they are read.
    #[test]
    fn an_alias_bomb_or_deep_nesting_in_a_sweep_file_is_refused() {
        let mut yaml = String::from(
            "seed: 1\nsweeps:\n  - name: bomb\n    l0: &l0 [x, x, x, x, x, x, x, x, x]\n",
        );
        for level in 1..9 {
            let below = vec![format!("*l{}", level - 1); 9].join(", ");
            yaml.push_str(&format!("    l{level}: &l{level} [{below}]\n"));
        }
        let (_dir, path) = scratch("bomb", "slice", &yaml);
        let (cases, errors) = expand_file(Op::Slice, &path, Limits::DEFAULT);
        assert!(cases.is_empty());
        let [error] = errors.as_slice() else {
            panic!("{errors:?}")
        };
        assert_eq!(error.kind, SpecErrorKind::Structure, "{error:?}");
        assert_eq!(error.file, "sweep::bomb");
        assert!(
            error.message.contains("their aliases come to more than"),
            "{error:?}"
        );
        // Refused as it is read, as in a spec file: the whole file, at a line.
        assert_eq!(error.field.as_deref(), Some("."), "{error:?}");
        assert!(error.message.contains(" at line "), "{error:?}");

        let deep = format!(
            "seed: 1\nsweeps: [{}{}]\n",
            "[".repeat(200),
            "]".repeat(200)
        );
        std::fs::write(&path, deep).unwrap();
        let (_, errors) = expand_file(Op::Slice, &path, Limits::DEFAULT);
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert!(
            errors[0].message.contains("recursion limit exceeded"),
            "{errors:?}"
        );
    }

    #[test]
    fn a_matrix_expands_to_named_cases() {
        let yaml = r#"
seed: 3
sweeps:
  - name: modes
    source: test
    dtypes: [int8, float32]
    matrix:
      mode: [wrap, fill]
      start: [-2, 1]
    attrs: {mode: $mode, start: [$start], size: [4]}
    inputs:
      input: {shape: [3]}
"#;
        let (_dir, path) = scratch("modes", "slice", yaml);
        let (cases, errors) = expand_file(Op::Slice, &path, Limits::DEFAULT);
        assert!(errors.is_empty(), "{errors:?}");
        let names: Vec<String> = cases.iter().map(|g| g.case.trial_name()).collect();
        assert_eq!(names.len(), 8);
        assert_eq!(names[0], "slice::sweep::modes::modes__wrap__m2::int8");
        assert_eq!(names[7], "slice::sweep::modes::modes__fill__1::float32");
        let first = &cases[0];
        assert_eq!(first.seed, 3);
        assert_eq!(first.golden.key, "modes__wrap__m2::int8");
        assert!(first.provenance.is_some());
        assert_eq!(first.case.note.as_deref(), Some("[mode=wrap, start=-2]"));
        let input = first.case.invocation.inputs[0].as_ref().unwrap();
        assert!(Provenance::holds(input));
    }

    #[test]
    fn each_trial_cites_the_clauses_of_its_own_combination_and_dtype() {
        let yaml = r#"
seed: 1
sweeps:
  - name: modes
    source: test
    clauses: [slice.coordinates.formula, $mode.clauses, slice.coordinates.formula]
    dtypes: [int8, int64]
    matrix:
      mode:
        - {name: wrap, clauses: [slice.wrap.modulo]}
        - {name: clamp, clauses: [slice.clamp.clamp, {dtypes: [int64], clauses: [slice.dtype.clamp-fill-reflect-exclude-int64-bf16]}]}
    attrs: {mode: $mode.name, start: [0], size: [2]}
    inputs:
      input: {shape: [3]}
"#;
        let (_dir, path) = scratch("modes", "slice", yaml);
        let (cases, errors) = expand_file(Op::Slice, &path, Limits::DEFAULT);
        assert!(errors.is_empty(), "{errors:?}");
        let cited: Vec<(String, Vec<String>)> = cases
            .iter()
            .map(|g| (g.golden.key.clone(), g.case.clauses.clone()))
            .collect();
        let ids = |ids: &[&str]| ids.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            cited,
            vec![
                (
                    "modes__wrap::int8".into(),
                    ids(&["slice.coordinates.formula", "slice.wrap.modulo"])
                ),
                (
                    "modes__wrap::int64".into(),
                    ids(&["slice.coordinates.formula", "slice.wrap.modulo"])
                ),
                (
                    "modes__clamp::int8".into(),
                    ids(&["slice.coordinates.formula", "slice.clamp.clamp"])
                ),
                (
                    "modes__clamp::int64".into(),
                    ids(&[
                        "slice.coordinates.formula",
                        "slice.clamp.clamp",
                        "slice.dtype.clamp-fill-reflect-exclude-int64-bf16"
                    ])
                ),
            ]
        );
        std::fs::write(&path, yaml.replace("dtypes: [int64]", "dtypes: [int65]")).unwrap();
        let (_, errors) = expand_file(Op::Slice, &path, Limits::DEFAULT);
        assert!(
            errors[0].message.contains("unknown dtype `int65`"),
            "{errors:?}"
        );
    }

    #[test]
    fn permutations_mappings_images_and_errors() {
        let yaml = r#"
seed: 1
sweeps:
  - name: perms
    source: test
    dtypes: [float16]
    matrix:
      perm: {permutations: 3}
      fmt: [{name: CHW2, dims: [1, 3, 2, 2]}]
    attrs: {from: $fmt.name, to: LINEAR, shape: $fmt.dims}
    inputs:
      input: {shape: $fmt.dims, image: {format: CHW2}}
"#;
        let (_dir, path) = scratch("perms", "reformat", yaml);
        let (cases, errors) = expand_file(Op::Reformat, &path, Limits::DEFAULT);
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(cases.len(), 6);
        assert_eq!(cases[5].golden.key, "perms__2_1_0__chw2::float16");
        // CHW2 of [1, 3, 2, 2]: [1][2][2][2][2] = 16 elements.
        assert_eq!(
            cases[0].case.invocation.inputs[0].as_ref().unwrap().shape,
            vec![16]
        );
        std::fs::write(&path, yaml.replace("$fmt.dims}", "$fmt.dimz}")).unwrap();
        let (_, errors) = expand_file(Op::Reformat, &path, Limits::DEFAULT);
        assert!(
            errors[0].message.contains("has no field `dimz`"),
            "{errors:?}"
        );
        std::fs::write(
            &path,
            yaml.replace("source: test", "source: test\n    metamorphic: true"),
        )
        .unwrap();
        let (_, errors) = expand_file(Op::Reformat, &path, Limits::DEFAULT);
        assert!(
            errors[0].message.contains("no combination admits"),
            "{errors:?}"
        );
        assert_eq!(permutations(3).len(), 6);
        assert_eq!(permutations(0), vec![Vec::<usize>::new()]);
    }
}
