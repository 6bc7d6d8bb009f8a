//! Reading spec folders into cases. Every call to the YAML crate is in this file, except the
//! attribute decoder's (`crate::ops`), which reads a YAML value as it reads any deserializer.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::form::{CaseDef, FileDef, TensorDef};
use super::value::{self, TensorData};
use super::yaml;
use super::CaseProblemKind::{self, Attrs as BadAttrs, Conflict, Invalid, Missing, Unknown};
use super::SpecErrorKind::{self, Duplicate, Layout, Structure, Syntax, Unreadable};
use super::{Case, CaseProblem, Evidence, Expectation, SpecError, TARGETS};
use crate::npy;
use opspec::dtype::DType;
use opspec::error::ErrorKind;
use opspec::ops::{Attrs, Invocation, Op};
use opspec::tensor::{Limits, Tensor};

/// Parses a YAML document into `T`; a problem comes back as (the field's path, the message).
/// The clause catalogue ([`super::clauses`]) reads its files through this.
pub(crate) fn parse_yaml<T: serde::de::DeserializeOwned>(
    text: &str,
) -> Result<T, (String, String)> {
    let mut deserializer =
        yaml::Deserializer::new(text.as_bytes()).map_err(|e| (".".to_owned(), e.to_string()))?;
    let value = serde_path_to_error::deserialize(&mut deserializer)
        .map_err(|e| (e.path().to_string(), e.into_inner().to_string()))?;
    deserializer
        .end()
        .map_err(|e| (".".to_owned(), e.to_string()))?;
    Ok(value)
}

/// A YAML document as JSON, for checking a spec file against its JSON Schema as an editor
/// does. JSON has no NaN or infinity: `.nan`, `.inf` and `-.inf` (numbers to YAML and to the
/// YAML language server) become the number 0, which a schema checks the same way.
pub fn yaml_to_json(text: &str) -> Result<serde_json::Value, YamlToJsonError> {
    fn convert(value: serde_yaml::Value) -> Result<serde_json::Value, YamlToJsonError> {
        use serde_json::Value as J;
        use serde_yaml::Value as Y;
        Ok(match value {
            Y::Null => J::Null,
            Y::Bool(b) => J::Bool(b),
            Y::Number(n) => {
                if let Some(i) = n.as_i64() {
                    J::from(i)
                } else if let Some(u) = n.as_u64() {
                    J::from(u)
                } else {
                    let f = n.as_f64().unwrap_or(0.0);
                    J::from(if f.is_finite() { f } else { 0.0 })
                }
            }
            Y::String(s) => J::String(s),
            Y::Sequence(items) => {
                J::Array(items.into_iter().map(convert).collect::<Result<_, _>>()?)
            }
            Y::Mapping(map) => {
                let mut out = serde_json::Map::new();
                for (key, value) in map {
                    let key = match key {
                        Y::String(s) => s,
                        Y::Number(n) => n.to_string(),
                        Y::Bool(b) => b.to_string(),
                        other => return Err(YamlToJsonError::Key(format!("{other:?}"))),
                    };
                    out.insert(key, convert(value)?);
                }
                J::Object(out)
            }
            Y::Tagged(tagged) => convert(tagged.value)?,
        })
    }
    let value: serde_yaml::Value =
        serde_yaml::from_str(text).map_err(|e| YamlToJsonError::Yaml(e.to_string()))?;
    convert(value)
}

/// Why [`yaml_to_json`] cannot convert a document.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum YamlToJsonError {
    /// Not YAML.
    #[error("{0}")]
    Yaml(String),
    /// A mapping key JSON cannot hold (a list, a mapping, null).
    #[error("unsupported mapping key {0}")]
    Key(String),
}

/// The cases and problems found in a set of spec folders.
#[derive(Debug, Default)]
pub struct Loaded {
    pub cases: Vec<Case>,
    pub errors: Vec<SpecError>,
}

/// Loads every `<dir>/<op>/<file>.yaml`. With `only = Some((op, file))`, reads just that file
/// (a runner that executes one named trial need not parse the rest).
pub fn load_dirs(dirs: &[PathBuf], only: Option<(&str, &str)>, limits: Limits) -> Loaded {
    let (files, errors) = op_files(dirs, only, "spec", "");
    let mut loaded = Loaded {
        cases: Vec::new(),
        errors,
    };
    for OpFile { op, path, .. } in files {
        let (cases, errors) = load_file(op, &path, limits);
        loaded.cases.extend(cases);
        loaded.errors.extend(errors);
    }
    reject_duplicate_trials(&mut loaded);
    loaded
}

/// A YAML file in an op folder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpFile {
    pub op: Op,
    pub path: PathBuf,
    /// The file's stem.
    pub file: String,
}

/// The YAML files of `<dir>/<op>/`, in sorted order, for spec and sweep folders alike; with
/// `only = Some((op, file))` just that file is listed. Entries whose names start with `.` are
/// skipped. Every other entry that cannot be used is a problem naming its path, never skipped
/// in silence: an unreadable folder, a dangling symbolic link or a loop of them, a folder that
/// names no op, anything in an op folder but a `.yaml` / `.yml` file (a folder named `x.yaml`,
/// `x.YAML`, `notes.txt`; but a folder named after a YAML file beside it holds that file's
/// data), and YAML files directly in `<dir>` (an op folder given as `<dir>`;
/// `<op>.clauses.yaml` catalogues belong there). Other files in `<dir>` are left alone. A
/// problem's trial is `<op>::<file_prefix><entry name>`, or `<kind>s::<folder>` for `<dir>`
/// itself.
pub fn op_files(
    dirs: &[PathBuf],
    only: Option<(&str, &str)>,
    kind: &str,
    file_prefix: &str,
) -> (Vec<OpFile>, Vec<SpecError>) {
    let mut files = Vec::new();
    let mut errors = Vec::new();
    let problem = |kind, path: &Path, op: &str, file: &str, message: String| SpecError {
        kind,
        path: path.to_path_buf(),
        op: op.to_owned(),
        file: format!("{file_prefix}{file}"),
        case: None,
        field: None,
        message,
    };
    let root_op = format!("<{kind}s>");
    for dir in dirs {
        let entries = match sorted_entries(dir) {
            Ok(entries) => entries,
            Err(message) => {
                errors.push(problem(Unreadable, dir, &root_op, "<folder>", message));
                continue;
            }
        };
        let mut loose = Vec::new();
        for op_dir in entries {
            let op_name = file_name(&op_dir);
            if op_name.starts_with('.') {
                continue;
            }
            let metadata = match follow(&op_dir) {
                Ok(metadata) => metadata,
                Err(message) => {
                    if !only.is_some_and(|(op, _)| op != op_name) {
                        errors.push(problem(Unreadable, &op_dir, &root_op, &op_name, message));
                    }
                    continue;
                }
            };
            if !metadata.is_dir() {
                if yaml_extension(&op_dir).is_some() && !op_name.ends_with(".clauses.yaml") {
                    loose.push(op_name);
                }
                continue;
            }
            if only.is_some_and(|(op, _)| op != op_name) {
                continue;
            }
            let Some(op) = Op::from_name(&op_name) else {
                let message = format!(
                    "unknown op `{op_name}` ({kind} folders are named after ops: {}){}",
                    Op::ALL.map(Op::name).join(", "),
                    crate::did_you_mean(&op_name, Op::ALL.map(Op::name))
                );
                errors.push(problem(Layout, &op_dir, &op_name, "<folder>", message));
                continue;
            };
            let paths = match sorted_entries(&op_dir) {
                Ok(paths) => paths,
                Err(message) => {
                    errors.push(problem(Unreadable, &op_dir, &op_name, "<folder>", message));
                    continue;
                }
            };
            for path in paths {
                let (name, file) = (file_name(&path), stem(&path));
                if name.starts_with('.')
                    || only.is_some_and(|(_, only)| only != file)
                    || is_data_folder(&path)
                {
                    continue;
                }
                match check_file(&path, kind) {
                    Ok(()) => files.push(OpFile { op, path, file }),
                    Err((kind, message)) => {
                        errors.push(problem(kind, &path, &op_name, &name, message))
                    }
                }
            }
        }
        if !loose.is_empty() {
            let parent = dir.parent().unwrap_or(dir);
            errors.push(problem(
                Layout,
                dir,
                &root_op,
                "<folder>",
                format!(
                    "holds {kind} files directly ({}), as an op folder does: a {kind} folder holds <op>/<file>.yaml, so give its parent {} instead",
                    loose.join(", "),
                    parent.display()
                ),
            ));
        }
    }
    (files, errors)
}

/// A folder named after a YAML file beside it (`npy_data/` beside `npy_data.yaml`) holds that
/// file's data, the `.npy` files its cases name; it is not walked.
fn is_data_folder(path: &Path) -> bool {
    path.is_dir()
        && ["yaml", "yml"]
            .iter()
            .any(|extension| path.with_extension(extension).is_file())
}

/// The metadata of `path`, following symbolic links; a dangling link says where it points.
fn follow(path: &Path) -> Result<std::fs::Metadata, String> {
    std::fs::metadata(path).map_err(|e| match std::fs::read_link(path) {
        Ok(target) if e.kind() == std::io::ErrorKind::NotFound => format!(
            "a symbolic link to {}, which does not exist",
            target.display()
        ),
        _ => format!("cannot read it: {e}"),
    })
}

/// `Ok` when `path`, an entry of an op folder, is a file to load.
fn check_file(path: &Path, kind: &str) -> Result<(), (SpecErrorKind, String)> {
    let metadata = follow(path).map_err(|message| (Unreadable, message))?;
    let layout = |message| Err((Layout, message));
    if metadata.is_dir() {
        return layout(format!(
            "is a folder, not a {kind} file: op folders hold <file>.yaml files and no folders"
        ));
    }
    match yaml_extension(path) {
        Some("yaml" | "yml") if metadata.is_file() => Ok(()),
        Some(extension) if !matches!(extension, "yaml" | "yml") => layout(format!(
            "the extension `.{extension}` is not read: {kind} files end in `.yaml` or `.yml`, in lower case; rename it"
        )),
        _ => layout(format!(
            "not a {kind} file: op folders hold only <file>.yaml files; rename or move it"
        )),
    }
}

/// The extension of `path` when it is `yaml` or `yml` in any case.
fn yaml_extension(path: &Path) -> Option<&str> {
    path.extension()
        .and_then(|e| e.to_str())
        .filter(|e| e.eq_ignore_ascii_case("yaml") || e.eq_ignore_ascii_case("yml"))
}

/// Two folders in `OPSPEC_SPECS` may not define the same trial.
fn reject_duplicate_trials(loaded: &mut Loaded) {
    let mut seen = BTreeMap::new();
    let mut duplicates = Vec::new();
    for (index, case) in loaded.cases.iter().enumerate() {
        if let Some(first) = seen.insert(case.trial_name(), index) {
            duplicates.push((first, index));
        }
    }
    for &(first, second) in duplicates.iter().rev() {
        let case = loaded.cases.remove(second);
        loaded.errors.push(SpecError {
            kind: Duplicate,
            path: case.path.clone(),
            op: case.op.name().into(),
            file: case.file.clone(),
            case: Some(format!("{}#duplicate", case.name)),
            field: Some("name".into()),
            message: format!(
                "trial {} is also defined in {}",
                case.trial_name(),
                loaded.cases[first].path.display()
            ),
        });
    }
}

/// Loads one spec file of `op`.
pub fn load_file(op: Op, path: &Path, limits: Limits) -> (Vec<Case>, Vec<SpecError>) {
    // Every read of the file (its cases, and the case a structural error is in) bounds its
    // data lists by `limits`.
    value::with_limits(limits, || read_file(op, path, limits))
}

fn read_file(op: Op, path: &Path, limits: Limits) -> (Vec<Case>, Vec<SpecError>) {
    let file = stem(path);
    let error = |kind, case: Option<&str>, field: Option<String>, message: String| SpecError {
        kind,
        path: path.to_path_buf(),
        op: op.name().into(),
        file: file.clone(),
        case: case.map(str::to_owned),
        field,
        message,
    };
    let def: FileDef = match read_yaml_file(path) {
        Ok(def) => def,
        Err(YamlFileError::Unreadable(message)) => {
            return (vec![], vec![error(Unreadable, None, None, message)])
        }
        Err(YamlFileError::Yaml(e)) => return (vec![], vec![file_error(path, e, error)]),
    };
    build_file(op, path, &file, def, limits, &error)
}

/// The longest case name: a trial's name holds it, and names must stay printable (libtest's
/// printer fails on names of 65,520 characters or more) and readable.
pub const MAX_CASE_NAME_CHARS: usize = 200;

/// How much of a name past [`MAX_CASE_NAME_CHARS`] its error shows.
const SHOWN_NAME_CHARS: usize = 40;

/// The cases of a spec file read, and the problems of those that cannot run.
fn build_file(
    op: Op,
    path: &Path,
    file: &str,
    def: FileDef,
    limits: Limits,
    error: &impl Fn(SpecErrorKind, Option<&str>, Option<String>, String) -> SpecError,
) -> (Vec<Case>, Vec<SpecError>) {
    let mut cases = Vec::new();
    let mut errors = Vec::new();
    let mut names = BTreeSet::new();
    for case in def.cases {
        if case.name.chars().count() > MAX_CASE_NAME_CHARS {
            // The error's trial is named by the name's start: the whole name would be one
            // trial name too long to print.
            let start: String = case.name.chars().take(SHOWN_NAME_CHARS).collect();
            errors.push(error(
                SpecErrorKind::Case,
                Some(&format!("{start}_etc")),
                Some("name".into()),
                format!(
                    "a case name is at most {MAX_CASE_NAME_CHARS} characters; this one has {} (it starts `{start}`)",
                    case.name.chars().count()
                ),
            ));
            continue;
        }
        if !names.insert(case.name.clone()) {
            errors.push(error(
                Duplicate,
                Some(&case.name),
                Some("name".into()),
                "duplicate case name in this file".into(),
            ));
            continue;
        }
        let name = case.name.clone();
        match build_cases(op, path, file, case, limits) {
            Ok(built) => cases.extend(built),
            Err(problem) => errors.push(error(
                SpecErrorKind::Case,
                Some(&name),
                Some(problem.field),
                problem.message,
            )),
        }
    }
    (cases, errors)
}

/// Why a YAML file was not read.
enum YamlFileError {
    /// Not a regular file, or reading it failed: the message says which.
    Unreadable(String),
    /// Not YAML, or YAML of another structure.
    Yaml(yaml::Error),
}

/// Reads a YAML file into `T` with the one reader ([`yaml`]), streaming: only what `T` keeps
/// is held. The file must be a regular file (a FIFO, device, socket or folder would block or
/// never end).
fn read_yaml_file<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, YamlFileError> {
    let file = crate::source::open_regular(path).map_err(YamlFileError::Unreadable)?;
    let mut reader = std::io::BufReader::with_capacity(1 << 16, file);
    // libyaml reads UTF-16 too, but a file saved so is a mistake here (and its errors then
    // point past the file's end): spec files are UTF-8.
    let start = std::io::BufRead::fill_buf(&mut reader)
        .map_err(|e| YamlFileError::Unreadable(format!("cannot read {}: {e}", path.display())))?;
    if start.starts_with(&[0xFF, 0xFE]) || start.starts_with(&[0xFE, 0xFF]) {
        return Err(YamlFileError::Yaml(yaml::Error::encoding(
            "spec files are UTF-8; this one is UTF-16 (it starts with a UTF-16 byte-order mark): save it as UTF-8",
        )));
    }
    let mut deserializer = yaml::Deserializer::new(reader).map_err(YamlFileError::Yaml)?;
    // The reader keeps the path of the value it reads itself (no serde_path_to_error
    // wrapper around every value: a data list is read at the reader's own speed).
    let value = T::deserialize(&mut deserializer).map_err(YamlFileError::Yaml)?;
    deserializer.end().map_err(YamlFileError::Yaml)?;
    Ok(value)
}

/// The problem that stops a whole file from being read. Nothing of the file runs, so the
/// message says so: a syntax error with its line, or a structural error with its field.
fn file_error(
    path: &Path,
    e: yaml::Error,
    error: impl Fn(SpecErrorKind, Option<&str>, Option<String>, String) -> SpecError,
) -> SpecError {
    const DROPPED: &str = "every case in this file was dropped";
    if e.is_syntax() {
        return error(
            Syntax,
            None,
            None,
            format!("YAML syntax error: {e}; {DROPPED}"),
        );
    }
    let field = e.field();
    let case = case_name_at(path, &field).map(|name| match name.chars().count() {
        n if n > MAX_CASE_NAME_CHARS => {
            let start: String = name.chars().take(SHOWN_NAME_CHARS).collect();
            format!("{start}_etc")
        }
        _ => name,
    });
    // The field is named by the error's own field; the message says the problem alone.
    let message = format!("{}; {DROPPED}", e.without_path());
    error(Structure, case.as_deref(), Some(field), message)
}

fn build_cases(
    op: Op,
    path: &Path,
    file: &str,
    mut def: CaseDef,
    limits: Limits,
) -> Result<Vec<Case>, CaseProblem> {
    if def.name.is_empty()
        || !def
            .name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
    {
        return Err(CaseProblem::new(
            Invalid,
            "name",
            "a case name uses only a-z, 0-9 and _",
        ));
    }
    if def.source.trim().is_empty() {
        return Err(CaseProblem::new(
            Missing,
            "source",
            "every case names its source",
        ));
    }
    let evidence = match def.evidence.as_deref() {
        None => Evidence::default(),
        Some(name) => Evidence::from_name(name).ok_or_else(|| {
            CaseProblem::new(
                Unknown,
                "evidence",
                format!(
                    "unknown evidence `{name}` (known: {}; leave it out for documented)",
                    Evidence::names()
                ),
            )
        })?,
    };
    let attrs = parse_attrs(op, def.attrs)?;
    let expect_error = match (&def.expected, def.error) {
        (Some(_), Some(_)) => {
            return Err(CaseProblem::new(
                Conflict,
                "error",
                "give either `expected` or `error`, not both",
            ))
        }
        (None, None) => {
            return Err(CaseProblem::new(
                Missing,
                "expected",
                "a case needs `expected` outputs or an `error`",
            ))
        }
        (None, Some(e)) => {
            let kind = ErrorKind::from_name(&e.kind).ok_or_else(|| {
                CaseProblem::new(
                    Unknown,
                    "error.kind",
                    format!(
                        "unknown error kind `{}` (known: {})",
                        e.kind,
                        ErrorKind::names()
                    ),
                )
            })?;
            Some((kind, e.message))
        }
        (Some(_), None) => None,
    };
    for name in def.inputs.keys() {
        if !op.inputs().contains(&name.as_str()) {
            return Err(CaseProblem::new(
                Unknown,
                format!("inputs.{name}"),
                format!(
                    "{op} has no input `{name}` (inputs: {})",
                    op.inputs().join(", ")
                ),
            ));
        }
    }
    if !def.inputs.contains_key("input") {
        return Err(CaseProblem::new(
            Missing,
            "inputs",
            "the `input` tensor is required",
        ));
    }
    if let Some(expected) = &def.expected {
        if let Some(name) = expected.keys().find(|name| *name != "output") {
            return Err(CaseProblem::new(
                Unknown,
                format!("expected.{name}"),
                format!("{op} has one output, `output`"),
            ));
        }
        if expected.is_empty() {
            return Err(CaseProblem::new(
                Missing,
                "expected",
                "`expected` names no output",
            ));
        }
    }
    let tolerance = match &def.tolerance {
        None => None,
        Some(_) if op != Op::Scale => {
            return Err(CaseProblem::new(
                Conflict,
                "tolerance",
                format!(
                    "{op} is a layout op and compares bit for bit; only scale takes a tolerance"
                ),
            ))
        }
        Some(_) if def.expected.is_none() => {
            return Err(CaseProblem::new(
                Conflict,
                "tolerance",
                "a tolerance applies to expected outputs; this case expects an error",
            ))
        }
        Some(tolerance) => Some(tolerance.parse()?),
    };
    for (target, reason) in &def.unsupported_on {
        let field = format!("unsupported_on.{target}");
        if !TARGETS.contains(&target.as_str()) {
            return Err(CaseProblem::new(
                Unknown,
                &field,
                format!("unknown target `{target}` (known: {})", TARGETS.join(", ")),
            ));
        }
        if reason.trim().is_empty() {
            return Err(CaseProblem::new(
                Invalid,
                &field,
                "say why the case does not run there",
            ));
        }
    }
    let mut dtypes = Vec::new();
    for (i, name) in def.dtypes.iter().enumerate() {
        let dtype = DType::from_name(name).ok_or_else(|| {
            CaseProblem::new(Unknown, format!("dtypes[{i}]"), unknown_dtype(name))
        })?;
        if dtypes.contains(&Some(dtype)) {
            return Err(CaseProblem::new(
                Conflict,
                format!("dtypes[{i}]"),
                format!("{name} is listed twice"),
            ));
        }
        dtypes.push(Some(dtype));
    }
    if dtypes.is_empty() {
        dtypes.push(None);
    }
    let mut cases = Vec::with_capacity(dtypes.len());
    let count = dtypes.len();
    for (number, dtype) in dtypes.into_iter().enumerate() {
        // The last dtype's tensors are the last read from the data: free it as it is read.
        let last = number + 1 == count;
        let mut inputs = vec![None; op.inputs().len()];
        for (position, name) in op.inputs().iter().enumerate() {
            if let Some(tensor) = def.inputs.get_mut(*name) {
                inputs[position] = Some(build_tensor(
                    tensor,
                    dtype,
                    path,
                    last,
                    &format!("inputs.{name}"),
                    limits,
                )?);
            }
        }
        if let Some(name) = crate::given_twice(&attrs, &inputs).first() {
            return Err(CaseProblem::new(
                Conflict,
                format!("attrs.{name}"),
                format!("`{name}` is given both as an attribute and as an input; give it one way"),
            ));
        }
        let expect = match (&mut def.expected, &expect_error) {
            (Some(expected), _) => Expectation::Outputs(vec![build_tensor(
                expected.get_mut("output").expect("checked above"),
                dtype,
                path,
                last,
                "expected.output",
                limits,
            )?]),
            (None, Some((kind, message))) => Expectation::Error {
                kind: *kind,
                message: message.clone(),
            },
            (None, None) => unreachable!("checked above"),
        };
        if let (Some(tolerance), Expectation::Outputs(outputs)) = (tolerance, &expect) {
            if let Some(output) = outputs.iter().find(|o| !tolerance.applies_to(o.dtype)) {
                return Err(CaseProblem::new(Conflict,
                    "tolerance",
                    format!(
                        "tolerance {tolerance} does not apply to {} output: use `ulp` for float outputs, `abs` for integer ones",
                        crate::with_article(output.dtype)
                    ),
                ));
            }
        }
        cases.push(Case {
            op,
            file: file.to_owned(),
            path: path.to_path_buf(),
            name: def.name.clone(),
            dtype,
            source: def.source.clone(),
            clauses: def.clauses.clone(),
            inferred: def.inferred,
            note: def.note.clone(),
            invocation: Invocation {
                attrs: attrs.clone(),
                inputs,
            },
            expect,
            tolerance,
            unsupported_on: def.unsupported_on.clone(),
            implementation_defined: def.implementation_defined,
            evidence,
        });
    }
    Ok(cases)
}

/// An op's typed attributes from their YAML mapping (absent = all defaults); an error names
/// the field, e.g. `attrs.start`. Spec and sweep loaders share it.
pub fn parse_attrs(op: Op, value: Option<serde_yaml::Value>) -> Result<Attrs, CaseProblem> {
    let value = value.unwrap_or_else(|| serde_yaml::Value::Mapping(Default::default()));
    crate::ops::entry(op).attrs_from_yaml(value).map_err(|e| {
        let path = e.path().to_string();
        let field = if path == "." {
            "attrs".to_owned()
        } else {
            format!("attrs.{path}")
        };
        CaseProblem::new(BadAttrs, field, e.into_inner().to_string())
    })
}

/// A tensor of a case; `spec` is the spec file, which `data` naming an `.npy` file is relative
/// to. With `last`, the values read are freed once converted (no other dtype needs them).
fn build_tensor(
    def: &mut TensorDef,
    case_dtype: Option<DType>,
    spec: &Path,
    last: bool,
    field: &str,
    limits: Limits,
) -> Result<Tensor, CaseProblem> {
    let problem = |kind, sub: &str, message: String| {
        CaseProblem::new(kind, format!("{field}.{sub}"), message)
    };
    let dtype = match (&def.dtype, case_dtype) {
        (Some(name), _) => {
            DType::from_name(name).ok_or_else(|| problem(Unknown, "dtype", unknown_dtype(name)))?
        }
        (None, Some(dtype)) => dtype,
        (None, None) => {
            return Err(problem(
                Missing,
                "dtype",
                "no dtype: give the tensor a `dtype` or the case a `dtypes` list".into(),
            ))
        }
    };
    let mut shape = Vec::with_capacity(def.shape.len());
    for &dim in &def.shape {
        shape.push(usize::try_from(dim).map_err(|_| {
            problem(
                CaseProblemKind::Tensor,
                "shape",
                format!("dim {dim} is negative"),
            )
        })?);
    }
    limits
        .checked_volume(&shape)
        .map_err(|e| problem(CaseProblemKind::Tensor, "shape", e.message))?;
    if let Some(name) = def.data.as_text() {
        if name.ends_with(NPY) {
            let npy = spec.parent().unwrap_or(Path::new("")).join(name);
            return read_npy(&npy, dtype, shape, limits)
                .map_err(|message| problem(CaseProblemKind::Tensor, "data", message));
        }
    }
    let tensor = def.data.to_tensor(dtype, &shape).map_err(|e| {
        CaseProblem::new(
            CaseProblemKind::Tensor,
            format!("{field}.{}", e.position.as_deref().unwrap_or("data")),
            e.message,
        )
    });
    if last {
        def.data = TensorData::default();
    }
    tensor
}

/// How `data` names a file instead of holding the values.
const NPY: &str = ".npy";

/// The data of a tensor from an `.npy` file, whose header must give the tensor's dtype
/// ([`npy::npy_descrs`]) and shape. Messages name the file.
fn read_npy(
    path: &Path,
    dtype: DType,
    shape: Vec<usize>,
    limits: Limits,
) -> Result<Tensor, String> {
    let shown = path.display();
    let bytes = npy::read_npy_file(path, limits)?;
    let header = npy::npy_header(&bytes).map_err(|e| format!("{shown}: {e}"))?;
    if !npy::npy_descrs(dtype).contains(&header.descr.as_str()) {
        let accepted: Vec<String> = npy::npy_descrs(dtype)
            .iter()
            .map(|d| format!("{d:?}"))
            .collect();
        return Err(format!(
            "{shown}: the npy header gives descr {:?}, not {} ({})",
            header.descr,
            crate::with_article(dtype),
            accepted.join(" or ")
        ));
    }
    if header.shape != shape {
        return Err(format!(
            "{shown}: the npy header gives shape {:?}, the tensor's shape is {shape:?}",
            header.shape
        ));
    }
    npy::from_npy(dtype, &bytes, limits).map_err(|e| format!("{shown}: {e}"))
}

fn unknown_dtype(name: &str) -> String {
    format!(
        "unknown dtype `{name}` (known: {})",
        DType::ALL.map(DType::name).join(", ")
    )
}

/// The name of the case a structural error points into (`cases[3]...`), if it can be read:
/// the file is read again, streaming, keeping only the cases' names.
fn case_name_at(path: &Path, field: &str) -> Option<String> {
    let index: usize = field
        .strip_prefix("cases[")?
        .split(']')
        .next()?
        .parse()
        .ok()?;
    /// Any value, kept only when it is a string.
    struct Name(Option<String>);
    impl<'de> Deserialize<'de> for Name {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Name, D::Error> {
            struct V;
            impl<'de> serde::de::Visitor<'de> for V {
                type Value = Name;
                fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                    f.write_str("anything")
                }
                fn visit_str<E>(self, v: &str) -> Result<Name, E> {
                    Ok(Name(Some(v.to_owned())))
                }
                fn visit_bool<E>(self, _: bool) -> Result<Name, E> {
                    Ok(Name(None))
                }
                fn visit_i64<E>(self, _: i64) -> Result<Name, E> {
                    Ok(Name(None))
                }
                fn visit_u64<E>(self, _: u64) -> Result<Name, E> {
                    Ok(Name(None))
                }
                fn visit_i128<E>(self, _: i128) -> Result<Name, E> {
                    Ok(Name(None))
                }
                fn visit_u128<E>(self, _: u128) -> Result<Name, E> {
                    Ok(Name(None))
                }
                fn visit_f64<E>(self, _: f64) -> Result<Name, E> {
                    Ok(Name(None))
                }
                fn visit_unit<E>(self) -> Result<Name, E> {
                    Ok(Name(None))
                }
                fn visit_none<E>(self) -> Result<Name, E> {
                    Ok(Name(None))
                }
                fn visit_seq<A: serde::de::SeqAccess<'de>>(
                    self,
                    mut a: A,
                ) -> Result<Name, A::Error> {
                    while a.next_element::<serde::de::IgnoredAny>()?.is_some() {}
                    Ok(Name(None))
                }
                fn visit_map<A: serde::de::MapAccess<'de>>(
                    self,
                    mut a: A,
                ) -> Result<Name, A::Error> {
                    while a
                        .next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?
                        .is_some()
                    {}
                    Ok(Name(None))
                }
            }
            d.deserialize_any(V)
        }
    }
    #[derive(Deserialize)]
    struct Named {
        name: Option<Name>,
    }
    #[derive(Deserialize)]
    struct Cases {
        cases: Vec<Named>,
    }
    let cases: Cases = read_yaml_file(path).ok()?;
    cases.cases.into_iter().nth(index)?.name?.0
}

fn sorted_entries(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("cannot read spec folder {}: {e}", dir.display()))?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    Ok(entries)
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn stem(path: &Path) -> String {
    path.file_stem()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write_spec(dir: &Path, op: &str, file: &str, text: &str) -> PathBuf {
        let folder = dir.join(op);
        std::fs::create_dir_all(&folder).unwrap();
        let path = folder.join(format!("{file}.yaml"));
        std::fs::write(&path, text).unwrap();
        path
    }

    /// A scratch folder, removed when dropped (also when the test fails).
    fn scratch(name: &str) -> tempfile::TempDir {
        tempfile::Builder::new()
            .prefix(&format!("opspec-load-{name}-"))
            .tempdir()
            .unwrap()
    }

    const GOOD: &str = r#"
cases:
  - name: transpose
    source: test
    dtypes: [int8, float16]
    attrs: {first_transpose: [1, 0]}
    inputs:
      input: {shape: [1, 2], data: [[1, 2]]}
    expected:
      output: {shape: [2, 1], data: [[1], [2]]}
"#;

    #[test]
    fn evidence_defaults_to_documented() {
        let scratch = scratch("evidence");
        let dir = scratch.path().to_path_buf();
        let recorded = GOOD.replace("source: test", "source: test\n    evidence: recorded");
        let documented = GOOD.replace("source: test", "source: test\n    evidence: documented");
        for (file, text, evidence) in [
            ("absent", GOOD.to_owned(), Evidence::Documented),
            ("documented", documented, Evidence::Documented),
            ("recorded", recorded, Evidence::Recorded),
        ] {
            let path = write_spec(&dir, "shuffle", file, &text);
            let (cases, errors) = load_file(Op::Shuffle, &path, Limits::DEFAULT);
            assert!(errors.is_empty(), "{errors:?}");
            assert_eq!(cases.len(), 2);
            assert!(cases.iter().all(|c| c.evidence == evidence), "{file}");
        }
    }

    #[test]
    fn a_case_expands_per_dtype() {
        let scratch = scratch("good");
        let dir = scratch.path().to_path_buf();
        write_spec(&dir, "shuffle", "basic", GOOD);
        let loaded = load_dirs(std::slice::from_ref(&dir), None, Limits::DEFAULT);
        assert!(loaded.errors.is_empty(), "{:?}", loaded.errors);
        let names: Vec<_> = loaded.cases.iter().map(Case::trial_name).collect();
        assert_eq!(
            names,
            [
                "shuffle::basic::transpose::int8",
                "shuffle::basic::transpose::float16"
            ]
        );
        assert_eq!(
            load_dirs(
                std::slice::from_ref(&dir),
                Some(("shuffle", "other")),
                Limits::DEFAULT
            )
            .cases
            .len(),
            0
        );
    }

    fn single_error(text: &str) -> SpecError {
        let scratch = scratch("bad");
        let dir = scratch.path().to_path_buf();
        let path = write_spec(&dir, "shuffle", "bad", text);
        let (cases, errors) = load_file(Op::Shuffle, &path, Limits::DEFAULT);
        assert!(cases.is_empty());
        assert_eq!(errors.len(), 1, "{errors:?}");
        errors[0].clone()
    }

    #[test]
    fn errors_name_file_case_and_field() {
        let e = single_error(&GOOD.replace("first_transpose", "strat"));
        assert_eq!(e.kind, SpecErrorKind::Case);
        assert_eq!(e.case.as_deref(), Some("transpose"));
        assert_eq!(e.field.as_deref(), Some("attrs.strat"));
        assert!(
            e.to_string()
                .contains("bad.yaml: case `transpose`: field `attrs.strat`"),
            "{e}"
        );

        let e = single_error(&GOOD.replace("data: [[1, 2]]", "data: [[1, 300]]"));
        assert_eq!(e.kind, SpecErrorKind::Case);
        assert_eq!(e.field.as_deref(), Some("inputs.input.data[0][1]"));
        assert!(e.message.contains("int8"), "{e}");

        let e = single_error(&GOOD.replace("data: [[1, 2]]", "data: [[1, 2, 3]]"));
        assert_eq!(e.field.as_deref(), Some("inputs.input.data[0]"));

        let e = single_error(&GOOD.replace("source: test", "source: test\n    colour: red"));
        assert_eq!(e.case.as_deref(), Some("transpose"));
        assert_eq!(e.kind, SpecErrorKind::Structure);
        assert!(e.message.contains("unknown field `colour`"), "{e}");

        let e = single_error(&GOOD.replace("source: test", "source: test\n    evidence: measured"));
        assert_eq!(e.kind, SpecErrorKind::Case);
        assert_eq!(e.case.as_deref(), Some("transpose"));
        assert_eq!(e.field.as_deref(), Some("evidence"));
        assert!(
            e.to_string()
                .contains("bad.yaml: case `transpose`: field `evidence`: unknown evidence `measured` (known: documented, recorded"),
            "{e}"
        );

        let twice = GOOD.replace("cases:\n", "") + &GOOD.replace("cases:\n", "");
        let scratch = scratch("twice");
        let dir = scratch.path().to_path_buf();
        let path = write_spec(&dir, "shuffle", "twice", &format!("cases:\n{twice}"));
        let (cases, errors) = load_file(Op::Shuffle, &path, Limits::DEFAULT);
        assert_eq!(cases.len(), 2);
        assert!(errors[0].message.contains("duplicate case name"));
        assert_eq!(errors[0].kind, SpecErrorKind::Duplicate);
    }

    #[test]
    fn the_element_budget_is_the_callers() {
        // One file, two budgets in one process: the loader reads none of its own.
        let scratch = scratch("budget");
        let path = write_spec(scratch.path(), "shuffle", "basic", GOOD);
        let (cases, errors) = load_file(Op::Shuffle, &path, Limits::DEFAULT);
        assert_eq!((cases.len(), errors.len()), (2, 0), "{errors:?}");
        let (cases, errors) = load_file(Op::Shuffle, &path, Limits { max_elements: 1 });
        assert!(cases.is_empty(), "{cases:?}");
        assert_eq!(errors[0].field.as_deref(), Some("inputs.input.shape"));
        assert_eq!(
            errors[0].message,
            "shape [1, 2] has 2 elements, over the budget of 1 (OPSPEC_MAX_ELEMENTS)"
        );
        let (cases, _) = load_file(Op::Shuffle, &path, Limits::DEFAULT);
        assert_eq!(cases.len(), 2);
    }

    /// The problem that voids the one case of `text` (a spec file of shuffle cases), typed.
    fn case_problem(text: &str) -> CaseProblem {
        let mut file: FileDef = parse_yaml(text).expect("the file's structure");
        let case = file.cases.remove(0);
        build_cases(
            Op::Shuffle,
            Path::new("bad.yaml"),
            "bad",
            case,
            Limits::DEFAULT,
        )
        .unwrap_err()
    }

    #[test]
    fn a_case_problem_has_a_kind_and_names_its_field() {
        let kinds = [
            (
                GOOD.replace("first_transpose", "strat"),
                BadAttrs,
                "attrs.strat",
            ),
            (
                GOOD.replace("source: test", "source: ' '"),
                Missing,
                "source",
            ),
            (
                GOOD.replace("name: transpose", "name: Transpose"),
                Invalid,
                "name",
            ),
            (
                GOOD.replace("[int8, float16]", "[int8, int8]"),
                Conflict,
                "dtypes[1]",
            ),
            (
                GOOD.replace("[int8, float16]", "[int9]"),
                Unknown,
                "dtypes[0]",
            ),
            (
                GOOD.replace("data: [[1, 2]]", "data: [[1, 300]]"),
                CaseProblemKind::Tensor,
                "inputs.input.data[0][1]",
            ),
        ];
        for (text, kind, field) in kinds {
            let problem = case_problem(&text);
            assert_eq!(
                (problem.kind, problem.field.as_str()),
                (kind, field),
                "{problem}"
            );
            assert_eq!(
                problem.to_string(),
                format!("field `{field}`: {}", problem.message)
            );
        }
        let names: BTreeSet<&str> = CaseProblemKind::ALL.iter().map(|k| k.name()).collect();
        assert_eq!(names.len(), CaseProblemKind::ALL.len());
    }

    const SCALE: &str = r#"
cases:
  - name: quantize
    source: test
    implementation_defined: true
    unsupported_on: {dla: "custom power values are not supported on DLA"}
    tolerance: {abs: 0}
    attrs: {mode: uniform, scale: [2], power: [2], output_dtype: int8}
    inputs:
      input: {dtype: float32, shape: [1, 1, 1, 1], data: [[[[1.5]]]]}
    expected:
      output: {dtype: int8, shape: [1, 1, 1, 1], data: [[[[9]]]]}
"#;

    fn scale_error(text: &str) -> SpecError {
        let scratch = scratch("scale-bad");
        let dir = scratch.path().to_path_buf();
        let path = write_spec(&dir, "scale", "bad", text);
        let (cases, errors) = load_file(Op::Scale, &path, Limits::DEFAULT);
        assert!(cases.is_empty(), "{cases:?}");
        assert_eq!(errors.len(), 1, "{errors:?}");
        errors[0].clone()
    }

    #[test]
    fn scale_case_fields() {
        let scratch = scratch("scale");
        let dir = scratch.path().to_path_buf();
        let path = write_spec(&dir, "scale", "quantize", SCALE);
        let (cases, errors) = load_file(Op::Scale, &path, Limits::DEFAULT);
        assert!(errors.is_empty(), "{errors:?}");
        let case = &cases[0];
        assert_eq!(case.tolerance, Some(crate::compare::Tolerance::Abs(0)));
        assert!(case.implementation_defined);
        assert_eq!(
            case.unsupported_on.get("dla").map(String::as_str),
            Some("custom power values are not supported on DLA")
        );

        let e = scale_error(&SCALE.replace("{abs: 0}", "{ulp: 1}"));
        assert_eq!(e.field.as_deref(), Some("tolerance"));
        assert!(e.message.contains("int8 output"), "{e}");
        let e = scale_error(&SCALE.replace("{abs: 0}", "{abs: 0, ulp: 1}"));
        assert!(e.message.contains("exactly one"), "{e}");
        let e = scale_error(&SCALE.replace("{abs: 0}", "{abs: 0.00001}"));
        assert_eq!(e.field.as_deref(), Some("tolerance.abs"));
        assert!(e.message.contains("float outputs take `ulp`"), "{e}");
        let e = scale_error(&SCALE.replace("{abs: 0}", "{ulp: -1}"));
        assert_eq!(e.field.as_deref(), Some("tolerance.ulp"));
        let e = scale_error(&SCALE.replace("{abs: 0}", "{rel: 0.1}"));
        assert!(e.message.contains("unknown field `rel`"), "{e}");
        let e = scale_error(&SCALE.replace("{dla: ", "{gpu: "));
        assert_eq!(e.field.as_deref(), Some("unsupported_on.gpu"));
        let e =
            scale_error(&SCALE.replace("\"custom power values are not supported on DLA\"", "\"\""));
        assert_eq!(e.field.as_deref(), Some("unsupported_on.dla"));
        let error_case = SCALE.replace(
            "expected:\n      output: {dtype: int8, shape: [1, 1, 1, 1], data: [[[[9]]]]}",
            "error: {kind: invalid_weights}",
        );
        assert!(scale_error(&error_case)
            .message
            .contains("expects an error"));
        let e = scale_error(&SCALE.replace("scale: [2]", "scale: [2, 1e40]"));
        assert_eq!(e.field.as_deref(), Some("attrs.scale[1]"));

        let e =
            single_error(&GOOD.replace("source: test", "source: test\n    tolerance: {ulp: 1}"));
        assert!(e.message.contains("bit for bit"), "{e}");
    }

    #[test]
    fn unknown_op_folder_is_reported() {
        let scratch = scratch("unknown-op");
        let dir = scratch.path().to_path_buf();
        write_spec(&dir, "shufle", "basic", GOOD);
        let loaded = load_dirs(std::slice::from_ref(&dir), None, Limits::DEFAULT);
        assert!(loaded.errors[0].message.contains("unknown op `shufle`"));
        assert!(
            (loaded.errors[0].message).ends_with("(did you mean `shuffle`?)"),
            "{}",
            loaded.errors[0].message
        );
    }

    #[test]
    fn a_syntax_error_says_the_whole_file_is_dropped_and_where() {
        let broken = GOOD.replace("[1, 0]}", "[1, 0}");
        let e = single_error(&broken);
        assert_eq!(e.case, None, "{e}");
        assert_eq!(e.field, None, "{e}");
        assert!(e.message.starts_with("YAML syntax error"), "{e}");
        assert_eq!(e.kind, SpecErrorKind::Syntax);
        assert!(e.message.contains("at line 6 column"), "{e}");
        assert!(
            e.message.contains("every case in this file was dropped"),
            "{e}"
        );
        assert_eq!(e.trial_name(), "shuffle::bad");

        // A structural error also voids the file, and says so.
        let e = single_error(&GOOD.replace("source: test", "source: test\n    colour: red"));
        assert!(
            e.message.contains("every case in this file was dropped"),
            "{e}"
        );
    }

    const NPY_SPEC: &str = r#"
cases:
  - name: transpose
    source: test
    dtypes: [float32]
    attrs: {first_transpose: [1, 0]}
    inputs:
      input: {shape: [2, 3], data: data/input.npy}
    expected:
      output: {shape: [3, 2], data: data/output.npy}
"#;

    fn float32s(shape: Vec<usize>, values: &[f32]) -> Tensor {
        let bits = values.iter().map(|v| v.to_bits() as u64).collect();
        Tensor::from_bits(DType::Float32, shape, bits)
    }

    /// The one error of loading `NPY_SPEC` with `data/input.npy` made by `make`.
    fn npy_source_error(name: &str, make: impl FnOnce(&Path)) -> SpecError {
        let scratch = scratch(name);
        let dir = scratch.path().to_path_buf();
        let path = write_spec(&dir, "shuffle", "npy", NPY_SPEC);
        let data = path.parent().unwrap().join("data");
        std::fs::create_dir_all(&data).unwrap();
        let output = float32s(vec![3, 2], &[0.0, 3.0, 1.0, 4.0, 2.0, 5.0]);
        std::fs::write(data.join("output.npy"), npy::to_npy(&output)).unwrap();
        make(&data.join("input.npy"));
        let (cases, errors) = load_file(Op::Shuffle, &path, Limits::DEFAULT);
        assert!(cases.is_empty(), "{cases:?}");
        let [error] = &errors[..] else {
            panic!("one error: {errors:?}")
        };
        assert_eq!(error.case.as_deref(), Some("transpose"));
        assert_eq!(error.field.as_deref(), Some("inputs.input.data"));
        assert!(error.message.contains("input.npy"), "{error}");
        error.clone()
    }

    #[test]
    fn an_npy_source_that_is_a_fifo_is_refused_without_waiting() {
        let error = npy_source_error("fifo", |path| {
            let made = std::process::Command::new("mkfifo").arg(path).status();
            assert!(made.is_ok_and(|s| s.success()), "mkfifo");
        });
        assert!(error.message.contains("a FIFO"), "{error}");
    }

    #[test]
    fn an_npy_source_linked_to_dev_zero_is_refused_before_reading() {
        let error = npy_source_error("zero", |path| {
            std::os::unix::fs::symlink("/dev/zero", path).unwrap();
        });
        assert!(error.message.contains("a character device"), "{error}");
    }

    #[test]
    fn an_npy_source_that_is_a_folder_is_refused() {
        let error = npy_source_error("folder", |path| std::fs::create_dir(path).unwrap());
        assert!(error.message.contains("a folder"), "{error}");
    }

    #[test]
    fn a_padded_or_truncated_npy_source_is_refused_before_its_data_is_read() {
        let input = float32s(vec![2, 3], &[0.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
        let bytes = npy::to_npy(&input);
        let error = npy_source_error("padded", |path| {
            let file = std::fs::File::create(path).unwrap();
            use std::io::Write;
            (&file).write_all(&bytes).unwrap();
            // A sparse tail of 3 GB: never read, refused on its size.
            file.set_len(3_000_000_000).unwrap();
        });
        assert!(
            error.message.contains("the file is 3000000000 bytes")
                && error.message.contains(&format!("makes it {}", bytes.len())),
            "{error}"
        );
        let error = npy_source_error("truncated", |path| {
            std::fs::write(path, &bytes[..bytes.len() - 1]).unwrap();
        });
        assert!(error.message.contains("makes it"), "{error}");
    }

    #[test]
    fn an_npy_source_over_the_element_budget_is_refused_from_its_header() {
        let error = npy_source_error("budget", |path| {
            // A header claiming 2^40 float32 values, and no data.
            let header = "{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776,), }\n";
            let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
            bytes.extend_from_slice(&(header.len() as u16).to_le_bytes());
            bytes.extend_from_slice(header.as_bytes());
            std::fs::write(path, bytes).unwrap();
        });
        assert!(error.message.contains("over the budget"), "{error}");
    }

    #[test]
    fn a_spec_file_that_is_a_fifo_or_a_device_is_refused_without_waiting() {
        let scratch = scratch("spec-fifo");
        let folder = scratch.path().join("shuffle");
        std::fs::create_dir_all(&folder).unwrap();
        let fifo = folder.join("fifo.yaml");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.is_ok_and(|s| s.success()), "mkfifo");
        std::os::unix::fs::symlink("/dev/zero", folder.join("zero.yaml")).unwrap();
        let loaded = load_dirs(&[scratch.path().to_path_buf()], None, Limits::DEFAULT);
        assert!(loaded.cases.is_empty());
        assert_eq!(loaded.errors.len(), 2, "{:?}", loaded.errors);
        for error in &loaded.errors {
            assert!(error.message.contains("not a spec file"), "{error}");
        }
        // Read directly (a caller that skips the folder walk), each is refused by name.
        for (path, what) in [
            (&fifo, "a FIFO"),
            (&folder.join("zero.yaml"), "a character device"),
        ] {
            let (cases, errors) = load_file(Op::Shuffle, path, Limits::DEFAULT);
            assert!(cases.is_empty());
            assert!(errors[0].message.contains(what), "{:?}", errors);
        }
    }

    #[test]
    fn data_nested_without_end_is_refused_at_its_line_in_linear_time() {
        let scratch = scratch("deep");
        let dir = scratch.path().to_path_buf();
        // A million levels in 2 MB, on line 8: read up to the 33rd level and refused there.
        let text = GOOD.replace(
            "data: [[1, 2]]",
            &format!("data: {}{}", "[".repeat(1_000_000), "]".repeat(1_000_000)),
        );
        let path = write_spec(&dir, "shuffle", "deep", &text);
        let (cases, errors) = load_file(Op::Shuffle, &path, Limits::DEFAULT);
        assert!(cases.is_empty());
        let [error] = &errors[..] else {
            panic!("{errors:?}")
        };
        assert_eq!(error.kind, Structure);
        assert!(
            error.message.contains("nest more than 32 levels") && error.message.contains("line 8"),
            "{error}"
        );
    }

    #[test]
    fn data_may_name_npy_files_beside_the_spec() {
        let scratch = scratch("npy");
        let dir = scratch.path().to_path_buf();
        let path = write_spec(&dir, "shuffle", "npy", NPY_SPEC);
        let data = path.parent().unwrap().join("data");
        std::fs::create_dir_all(&data).unwrap();
        // in[i][j] = 3i + j; the transpose's out[j][i] = in[i][j].
        let input = float32s(vec![2, 3], &[0.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
        let output = float32s(vec![3, 2], &[0.0, 3.0, 1.0, 4.0, 2.0, 5.0]);
        std::fs::write(data.join("input.npy"), npy::to_npy(&input)).unwrap();
        std::fs::write(data.join("output.npy"), npy::to_npy(&output)).unwrap();
        let half = Tensor::from_bits(DType::Float16, vec![2, 3], vec![0; 6]);
        std::fs::write(data.join("half.npy"), npy::to_npy(&half)).unwrap();

        let (cases, errors) = load_file(Op::Shuffle, &path, Limits::DEFAULT);
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(cases[0].invocation.inputs[0].as_ref(), Some(&input));
        assert_eq!(cases[0].expect, Expectation::Outputs(vec![output.clone()]));
        assert_eq!(
            opspec::ops::evaluate(&cases[0].invocation, Limits::DEFAULT),
            Ok(vec![output])
        );

        let problem = |text: String| {
            std::fs::write(&path, text).unwrap();
            let (cases, errors) = load_file(Op::Shuffle, &path, Limits::DEFAULT);
            assert!(cases.is_empty(), "{cases:?}");
            assert_eq!(errors.len(), 1, "{errors:?}");
            errors[0].clone()
        };
        // The header's shape differs from the tensor's.
        let e = problem(NPY_SPEC.replace("data/input.npy", "data/output.npy"));
        assert_eq!(e.field.as_deref(), Some("inputs.input.data"), "{e}");
        assert!(e.message.contains("data/output.npy"), "{e}");
        assert!(
            e.message.contains("[3, 2], the tensor's shape is [2, 3]"),
            "{e}"
        );
        // The header's dtype differs.
        let e = problem(NPY_SPEC.replace("data/input.npy", "data/half.npy"));
        assert!(e.message.contains("data/half.npy"), "{e}");
        assert!(
            e.message.contains(r#"descr "<f2", not a float32 ("<f4")"#),
            "{e}"
        );
        // No such file.
        let e = problem(NPY_SPEC.replace("data/input.npy", "data/none.npy"));
        assert!(e.message.starts_with("cannot read"), "{e}");
        assert!(e.message.contains("data/none.npy"), "{e}");
        // Not an npy file.
        std::fs::write(data.join("text.npy"), "[1, 2]").unwrap();
        let e = problem(NPY_SPEC.replace("data/input.npy", "data/text.npy"));
        assert!(e.message.contains("data/text.npy: not an npy file"), "{e}");
    }

    #[test]
    fn the_committed_npy_case_holds_its_rule() {
        // specs/shuffle/npy_data.yaml: in[0][c][h][w] = out[0][h][w][c] = 50176c + 224h + w.
        let path = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
            .join("specs/shuffle/npy_data.yaml");
        let (cases, errors) = load_file(Op::Shuffle, &path, Limits::DEFAULT);
        assert!(errors.is_empty(), "{errors:?}");
        let value = |c: usize, h: usize, w: usize| ((50176 * c + 224 * h + w) as f32).to_bits();
        let input = cases[0].invocation.inputs[0].as_ref().unwrap();
        assert_eq!(input.shape, [1, 3, 224, 224]);
        let Expectation::Outputs(outputs) = &cases[0].expect else {
            panic!("expects outputs")
        };
        assert_eq!(outputs[0].shape, [1, 224, 224, 3]);
        for c in 0..3 {
            for h in 0..224 {
                for w in 0..224 {
                    assert_eq!(input.bits((c * 224 + h) * 224 + w), value(c, h, w) as u64);
                    assert_eq!(
                        outputs[0].bits((h * 224 + w) * 3 + c),
                        value(c, h, w) as u64
                    );
                }
            }
        }
        assert_eq!(
            opspec::ops::evaluate(&cases[0].invocation, Limits::DEFAULT).as_ref(),
            Ok(outputs)
        );
    }

    /// The CONTRIBUTING.md example of anchors and aliases.
    const ANCHORS: &str = r#"
cases:
  - name: transpose
    source: test
    dtypes: [int8]
    attrs: {first_transpose: [1, 0]}
    inputs:
      input: &t1 {shape: [2, 3], data: [[0, 1, 2], [3, 4, 5]]}
    expected:
      output: {shape: [3, 2], data: &t1_transposed [[0, 3], [1, 4], [2, 5]]}
  - name: transpose_back
    source: test
    dtypes: [int8]
    attrs: {first_transpose: [1, 0]}
    inputs:
      input: {shape: [3, 2], data: *t1_transposed}
    expected:
      output: *t1
"#;

    #[test]
    fn anchored_tensors_and_data_load_where_they_are_aliased() {
        let scratch = scratch("anchors");
        let dir = scratch.path().to_path_buf();
        let path = write_spec(&dir, "shuffle", "anchors", ANCHORS);
        let (cases, errors) = load_file(Op::Shuffle, &path, Limits::DEFAULT);
        assert!(errors.is_empty(), "{errors:?}");
        let [there, back] = &cases[..] else {
            panic!("two cases: {cases:?}")
        };
        let Expectation::Outputs(transposed) = &there.expect else {
            panic!("outputs")
        };
        assert_eq!(back.invocation.inputs[0].as_ref(), Some(&transposed[0]));
        assert_eq!(
            back.expect,
            Expectation::Outputs(vec![there.invocation.inputs[0].clone().unwrap()])
        );
        assert_eq!(
            opspec::ops::evaluate(&back.invocation, Limits::DEFAULT),
            Ok(vec![there.invocation.inputs[0].clone().unwrap()])
        );
    }

    /// A case name of 70,000 characters (libtest's printer fails on names past 65,519): the
    /// case is refused at load with the file, a shortened name and the field, and no trial
    /// gets the long name.
    #[test]
    fn a_case_name_past_the_limit_is_refused_with_its_file_and_field() {
        let scratch = scratch("long-name");
        let dir = scratch.path().to_path_buf();
        let long = "a".repeat(70_000);
        let text = ANCHORS.replacen("name: ", &format!("name: {long}\n    # "), 1);
        assert!(text.contains(&long));
        let path = write_spec(&dir, "shuffle", "long", &text);
        let (cases, errors) = load_file(Op::Shuffle, &path, Limits::DEFAULT);
        assert!(cases.iter().all(|c| c.name.len() <= MAX_CASE_NAME_CHARS));
        let error = errors
            .iter()
            .find(|e| e.field.as_deref() == Some("name"))
            .unwrap_or_else(|| panic!("{errors:?}"));
        assert_eq!(error.kind, SpecErrorKind::Case);
        let message = error.to_string();
        assert!(message.contains("long.yaml"), "{message}");
        assert!(message.contains("70000"), "{message}");
        assert!(error.trial_name().len() < 400, "{}", error.trial_name());
    }

    /// A spec saved as UTF-16 (with its byte-order mark) is refused as such, not as a syntax
    /// error at a line past its end.
    #[test]
    fn a_utf16_spec_is_refused_as_utf16() {
        let scratch = scratch("utf16");
        let dir = scratch.path().to_path_buf();
        let path = write_spec(&dir, "shuffle", "wide", "");
        for bom in [[0xFF, 0xFE], [0xFE, 0xFF]] {
            let mut bytes = bom.to_vec();
            for unit in ANCHORS.encode_utf16() {
                let pair = if bom[0] == 0xFF {
                    unit.to_le_bytes()
                } else {
                    unit.to_be_bytes()
                };
                bytes.extend_from_slice(&pair);
            }
            std::fs::write(&path, bytes).unwrap();
            let (cases, errors) = load_file(Op::Shuffle, &path, Limits::DEFAULT);
            assert!(cases.is_empty());
            let message = errors[0].to_string();
            assert!(
                message.contains("spec files are UTF-8; this one is UTF-16"),
                "{message}"
            );
            assert!(!message.contains("line"), "{message}");
        }
    }

    /// A structural error names its field once: the path is the error's field, not repeated
    /// in its message.
    #[test]
    fn a_field_error_names_its_field_once() {
        let scratch = scratch("field-once");
        let dir = scratch.path().to_path_buf();
        let text = ANCHORS.replacen("    source: test", "    source: test\n    bogus: 1", 1);
        let path = write_spec(&dir, "shuffle", "bogus", &text);
        let (_, errors) = load_file(Op::Shuffle, &path, Limits::DEFAULT);
        let error = &errors[0];
        assert_eq!(error.kind, SpecErrorKind::Structure);
        let field = error.field.clone().unwrap();
        let message = error.to_string();
        assert_eq!(message.matches(field.as_str()).count(), 1, "{message}");
        assert!(message.contains("unknown field `bogus`"), "{message}");
    }

    /// A large scalar aliased many times: the aliases are bounded by the bytes they replay,
    /// not only by their events (2,000 aliases of 64 KiB are 125 MiB of text in a 140 KB file).
    #[test]
    fn aliases_are_bounded_by_the_bytes_they_replay() {
        let scratch = scratch("large-anchor");
        let dir = scratch.path().to_path_buf();
        let big = "a".repeat(64 << 10);
        let aliases = vec!["*big"; 2000].join(", ");
        let text =
            format!("cases:\n  - name: c\n    source: &big \"{big}\"\n    clauses: [{aliases}]\n");
        let path = write_spec(&dir, "shuffle", "aliases", &text);
        let (cases, errors) = load_file(Op::Shuffle, &path, Limits::DEFAULT);
        assert!(cases.is_empty(), "{cases:?}");
        let errors: Vec<String> = errors.iter().map(ToString::to_string).collect();
        assert!(
            errors
                .iter()
                .any(|e| e.contains("their aliases come to more than") && e.contains("bytes")),
            "{:?}",
            errors
                .iter()
                .map(|e| &e[..e.len().min(300)])
                .collect::<Vec<_>>()
        );
    }

    #[test]
    fn a_folder_named_after_a_spec_file_holds_its_data() {
        let scratch = scratch("data-folder");
        let dir = scratch.path().to_path_buf();
        let path = write_spec(&dir, "shuffle", "npy", NPY_SPEC);
        let data = path.parent().unwrap().join("npy").join("data");
        std::fs::create_dir_all(&data).unwrap();
        std::fs::write(
            path.parent().unwrap().join("npy.yaml"),
            NPY_SPEC.replace("data/", "npy/data/"),
        )
        .unwrap();
        let input = float32s(vec![2, 3], &[0.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
        let output = float32s(vec![3, 2], &[0.0, 3.0, 1.0, 4.0, 2.0, 5.0]);
        std::fs::write(data.join("input.npy"), npy::to_npy(&input)).unwrap();
        std::fs::write(data.join("output.npy"), npy::to_npy(&output)).unwrap();
        let loaded = load_dirs(std::slice::from_ref(&dir), None, Limits::DEFAULT);
        assert!(loaded.errors.is_empty(), "{:?}", loaded.errors);
        assert_eq!(loaded.cases.len(), 1);
        // A folder that no spec file is named after is still a problem.
        std::fs::create_dir_all(path.parent().unwrap().join("stray")).unwrap();
        let loaded = load_dirs(std::slice::from_ref(&dir), None, Limits::DEFAULT);
        assert_eq!(loaded.errors.len(), 1, "{:?}", loaded.errors);
        assert!(
            loaded.errors[0].path.ends_with("stray"),
            "{:?}",
            loaded.errors
        );
    }

    /// A file as serde_yaml_ng reads it (it holds the document's events all at once): the
    /// reference for what YAML says, then the same checks as [`load_file`].
    fn load_with_serde_yaml(op: Op, path: &Path) -> (Vec<Case>, Vec<SpecError>) {
        let text = std::fs::read_to_string(path).unwrap();
        let error = |kind, case: Option<&str>, field: Option<String>, message: String| SpecError {
            kind,
            path: path.to_path_buf(),
            op: op.name().into(),
            file: stem(path),
            case: case.map(str::to_owned),
            field,
            message,
        };
        match serde_path_to_error::deserialize(serde_yaml::Deserializer::from_str(&text)) {
            Ok(def) => build_file(op, path, &stem(path), def, Limits::DEFAULT, &error),
            Err(e) => {
                // Not YAML, unless only serde_yaml_ng's own nesting limit refuses it (the
                // streaming reader refuses data nested that deep as a structural problem).
                let syntax = serde_yaml::from_str::<serde::de::IgnoredAny>(&text)
                    .is_err_and(|e| !e.to_string().contains("recursion limit exceeded"));
                let kind = if syntax { Syntax } else { Structure };
                let field = (!syntax).then(|| e.path().to_string());
                (
                    vec![],
                    vec![error(kind, None, field, e.into_inner().to_string())],
                )
            }
        }
    }

    /// The two readings agree: the same cases, or problems of the same kinds on the same
    /// fields (messages may word a syntax error differently). `deep` allows the one intended
    /// difference: data nested past [`MAX_DATA_DEPTH`], which the streaming reader refuses
    /// where serde_yaml_ng reads on to its own limit of 128.
    fn assert_same_meaning(op: Op, path: &Path, what: &str) {
        let (cases, errors) = load_file(op, path, Limits::DEFAULT);
        let (reference_cases, reference_errors) = load_with_serde_yaml(op, path);
        assert_eq!(cases, reference_cases, "{what}: {}", path.display());
        // Refused where the nesting goes too deep, before the rest is read: the reference
        // must refuse the file too, for that or for what comes after.
        if errors.len() == 1 && errors[0].message.contains("data lists nest more than") {
            assert!(
                reference_cases.is_empty() && reference_errors.len() == 1,
                "{what}"
            );
            assert!(
                matches!(reference_errors[0].kind, Structure | Syntax),
                "{what}: {reference_errors:?}"
            );
            return;
        }
        let summary = |errors: &[SpecError]| -> Vec<(SpecErrorKind, Option<String>)> {
            errors.iter().map(|e| (e.kind, e.field.clone())).collect()
        };
        assert_eq!(
            summary(&errors),
            summary(&reference_errors),
            "{what}: {}\n{errors:#?}\n{reference_errors:#?}",
            path.display()
        );
    }

    /// Mutations of a spec file's text that keep or break its meaning in ways a reader that
    /// looks at the text instead of the YAML gets wrong.
    fn mutations(text: &str) -> Vec<(&'static str, String)> {
        let mut out = vec![("as written", text.to_owned())];
        // Flow style everywhere and block style everywhere, as a YAML emitter writes them.
        if let Ok(value) = serde_yaml::from_str::<serde_yaml::Value>(text) {
            out.push(("block style", serde_yaml::to_string(&value).unwrap()));
            out.push((
                "flow style",
                serde_json::to_string(&to_json(&value)).unwrap(),
            ));
        }
        // A comment holding `data: [` inside every multi-line list, and after every line.
        out.push((
            "comments holding data lists",
            text.lines()
                .map(|line| {
                    if line.trim_end().ends_with(',') {
                        format!("{line}\n # data: [1, 2\n")
                    } else if line.trim().is_empty() {
                        format!("{line}\n")
                    } else {
                        format!("{line} # data: [9, 9]\n")
                    }
                })
                .collect(),
        ));
        // Strings holding lists, and a control character before `data`.
        out.push((
            "strings holding lists",
            text.replace(
                "source: ",
                "note: \"data: [1, 2] and \\u0001data 0\"\n    source: ",
            ),
        ));
        out.push((
            "a data string like a list's placeholder",
            text.replacen("data: [", "data: \"\\u0001data 0\"\n      bad: [", 1),
        ));
        // Tabs inside flow lists, and tab-indented continuation lines.
        out.push(("tabs after commas", text.replace(", ", ",\t")));
        out.push(("tab continuation lines", text.replace(", ", ",\n\t ")));
        // Nesting deeper than any data's and than the reader's limit.
        for depth in [20, 200] {
            out.push((
                "deep nesting",
                text.replacen("data: [", &format!("data: {}[", "[".repeat(depth)), 1)
                    .replacen("]}", &format!("]{}}}", "]".repeat(depth)), 1),
            ));
        }
        out
    }

    fn to_json(value: &serde_yaml::Value) -> serde_json::Value {
        use serde_json::Value as J;
        use serde_yaml::Value as Y;
        match value {
            Y::Null => J::Null,
            Y::Bool(b) => J::Bool(*b),
            // Numbers as YAML wrote them: JSON has no NaN, and the text keeps every digit.
            Y::Number(n) => J::String(format!("{n}")),
            Y::String(s) => J::String(s.clone()),
            Y::Sequence(items) => J::Array(items.iter().map(to_json).collect()),
            Y::Mapping(map) => J::Object(
                map.iter()
                    .map(|(k, v)| (k.as_str().unwrap_or_default().to_owned(), to_json(v)))
                    .collect(),
            ),
            Y::Tagged(tagged) => to_json(&tagged.value),
        }
    }

    #[test]
    fn every_repository_spec_and_its_mutations_mean_what_the_yaml_says() {
        let root = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
        let (files, _) = op_files(&[root.join("specs")], None, "spec", "");
        assert!(files.len() > 40, "{} spec files", files.len());
        let scratch = scratch("differential");
        let mut compared = 0;
        for OpFile { op, path, file } in files {
            let text = std::fs::read_to_string(&path).unwrap();
            for (what, mutated) in mutations(&text) {
                // Beside the original, so that `.npy` names still resolve.
                let copy = path.with_file_name(format!(".{file}.mutated.yaml"));
                let copy = if path.parent().unwrap().join(&file).is_dir() {
                    copy
                } else {
                    let folder = scratch.path().join(op.name());
                    std::fs::create_dir_all(&folder).unwrap();
                    folder.join(format!("{file}.yaml"))
                };
                struct Remove<'a>(&'a Path);
                impl Drop for Remove<'_> {
                    fn drop(&mut self) {
                        let _ = std::fs::remove_file(self.0);
                    }
                }
                std::fs::write(&copy, &mutated).unwrap();
                let _remove = Remove(&copy);
                assert_same_meaning(op, &copy, what);
                compared += 1;
            }
        }
        assert!(compared > 400, "only {compared} files compared");
    }

    #[test]
    fn awkward_files_mean_what_the_yaml_says() {
        let texts = [
            // Value errors, a nesting that differs from the shape, a JSON NaN.
            GOOD.replace("data: [[1, 2]]", "data: [[1, 300]]"),
            GOOD.replace("data: [[1, 2]]", "data: [[1, 2, 3]]"),
            GOOD.replace("data: [[1, 2]]", "data: [[1, 2], [3]]"),
            GOOD.replace("data: [[1, 2]]", "data: [[1, NaN]]"),
            GOOD.replace("data: [[1, 2]]", "data: [[1, 007]]"),
            GOOD.replace("data: [[1, 2]]", "data: [[1, 1e400]]"),
            GOOD.replace("data: [[1, 2]]", "data: [[1, 99999999999999999999]]"),
            GOOD.replace("data: [[1, 2]]", "data: [[1, 0x7f]]"),
            GOOD.replace("data: [[1, 2]]", "data: [[1, ~]]"),
            GOOD.replace("data: [[1, 2]]", "data: [[1,\n               2]]"),
            GOOD.replace("data: [[1, 2]]", "data:\n        - [1, 2]"),
            GOOD.replace("data: [[1, 2]]", "data: [[1, \"0x7e\"]]"),
            GOOD.replace("data: [[1, 2]]", "data: 1"),
            GOOD.replace("data: [[1, 2]]", "data: []"),
            GOOD.replace(
                "source: test",
                "source: test\n    note: |\n      data: [1, 2]",
            ),
            ANCHORS.to_owned(),
            GOOD.replace("data: [[1, 2]]", "data: &d [[1, 2]]"),
            GOOD.replace("data: [[1, 2]]", "data: &d [[1, 0]]")
                .replace("first_transpose: [1, 0]", "first_transpose: *d"),
            GOOD.replace(
                "first_transpose: [1, 0]}",
                "first_transpose: [1, 0]}\n    data: [1]",
            ),
            GOOD.replace("[[1], [2]]}", "[[1], [2]}"),
            GOOD.replace("source: test", "source: test\n    unknown: 1"),
            GOOD.replace("cases:", "cases:\n  - 5"),
            format!("{GOOD}---\ncases: []\n"),
            String::new(),
            "cases:".to_owned(),
        ];
        let scratch = scratch("awkward");
        let dir = scratch.path().to_path_buf();
        for (i, text) in texts.iter().enumerate() {
            let path = write_spec(&dir, "shuffle", &format!("f{i}"), text);
            assert_same_meaning(Op::Shuffle, &path, text);
        }
    }
}
