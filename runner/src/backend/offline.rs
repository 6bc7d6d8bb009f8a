//! Offline cases: the requests of a run written as files a harness in any language can read
//! without this project (`runner export --cases DIR`), and a backend that answers each case
//! from what that harness wrote beside them (`OfflineBackend`, `runner judge DIR`), so that
//! the run's verdicts, known failures and reports are the live run's own. The layout is
//! docs/protocol.md's "Offline cases":
//!
//! ```text
//! DIR/index.json               every case: key, id, op, attrs, inputs (dtype, shape, file)
//! DIR/cases/<key>.in<k>.bin    input k's bytes, little-endian, as the wire's base64 holds them
//! DIR/cases/<key>.<attr>.bin   Scale's coefficient lists (`scale`, `shift`, `power`), float32
//! DIR/answers/hello.json       the harness's hello (a protocol hello reply)
//! DIR/answers/<key>.json       its reply to the case (a protocol reply, `id` optional)
//! DIR/answers/<key>.out<k>.bin an output's bytes, when the reply names them (`file`)
//! ```
//! No file says what a case expects: as a live backend, the harness learns nothing of the
//! expected outputs or error. The judge reads the expectations from the checkout, as a live run
//! does, and checks that each case the index holds is the one the checkout would send.

use std::collections::{BTreeMap, HashMap};
use std::path::{Component, Path, PathBuf};

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine;
use opspec::ops::Invocation;
use opspec::tensor::Limits;
use opspec::DType;
use opspec_spec::bytes::to_le_bytes;
use opspec_spec::source::read_bounded;
use opspec_spec::Case;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::backend::facts::{EnvDeclaration, Facts};
use crate::backend::hello::{bad_hello, Capabilities};
use crate::backend::interface::{Backend, BackendError, Exclusion, Outcome};
use crate::backend::process::{reply_line_limit, ProcessBackend, MIN_REPLY_LINE_LIMIT};
use crate::backend::protocol::{attrs_json, Reply, WireTensor};

/// The index's `format`.
pub(crate) const FORMAT: &str = "opspec offline cases";
/// The index's `version`: the layout of docs/protocol.md, "Offline cases".
pub(crate) const VERSION: u64 = 1;
/// The index, in the folder.
pub(crate) const INDEX: &str = "index.json";
/// The harness's hello, in the folder.
pub(crate) const HELLO: &str = "answers/hello.json";
/// The largest index read (a whole suite's is a few MiB).
const INDEX_LIMIT: u64 = 1 << 30;
/// The declaration the left-out round trips are counted under (`excluded: 888 by offline
/// round trip`); the console's warnings of large exclusions leave it out.
pub(crate) const LEFT_OUT_BY: &str = "offline round trip";
/// Why a round trip is not among the offline cases.
pub(crate) const ROUND_TRIP: &str =
    "a round trip: its second request is built from the first's output, and offline cases are single requests";

/// A tensor of the index: its dtype and shape, and the file (from the folder) of its bytes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FileTensor {
    /// The file's size, for a harness that allocates first. (The fields are in the order of
    /// their names, as `attrs` holds them.)
    pub(crate) bytes: usize,
    pub(crate) dtype: String,
    pub(crate) file: String,
    pub(crate) shape: Vec<usize>,
}

/// One case of the index: the request a live run would send, its tensors in files.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct IndexCase {
    /// The name of its files (`cases/<key>.in0.bin`) and of its answer (`answers/<key>.json`).
    pub(crate) key: String,
    /// The trial's name, the `id` a live request carries.
    pub(crate) id: String,
    pub(crate) op: String,
    /// The attributes as the wire's `attrs`, Scale's coefficient lists as [`FileTensor`]s.
    pub(crate) attrs: Value,
    /// One entry per input position of the op; `null` for an absent optional input.
    pub(crate) inputs: Vec<Option<FileTensor>>,
}

/// A selected trial the export leaves out, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct LeftOut {
    pub(crate) id: String,
    pub(crate) why: String,
}

/// `index.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Index {
    pub(crate) format: String,
    pub(crate) version: u64,
    /// Where the layout is documented.
    #[serde(default)]
    pub(crate) layout: String,
    /// The runner that wrote it, and the suite's revision it read.
    #[serde(default)]
    pub(crate) runner: String,
    #[serde(default)]
    pub(crate) suite: String,
    pub(crate) cases: Vec<IndexCase>,
    #[serde(default)]
    pub(crate) left_out: Vec<LeftOut>,
}

/// The index entry of a case whose files are keyed `key`, and the files' contents (path from
/// the folder, bytes): what `runner export --cases` writes, and what the judge compares the
/// folder with.
pub(crate) fn entry(
    id: &str,
    invocation: &Invocation,
    key: &str,
) -> (IndexCase, Vec<(String, Vec<u8>)>) {
    let mut files = Vec::new();
    let mut file_tensor = |dtype: DType, shape: Vec<usize>, file: String, bytes: Vec<u8>| {
        let tensor = FileTensor {
            bytes: bytes.len(),
            dtype: dtype.name().to_owned(),
            file: file.clone(),
            shape,
        };
        files.push((file, bytes));
        tensor
    };
    let inputs = (invocation.inputs.iter().enumerate())
        .map(|(k, input)| {
            input.as_ref().map(|tensor| {
                let file = format!("cases/{key}.in{k}.bin");
                file_tensor(
                    tensor.dtype,
                    tensor.shape.clone(),
                    file,
                    to_le_bytes(tensor),
                )
            })
        })
        .collect();
    let mut attrs = attrs_json(invocation);
    if let Some(object) = attrs.as_object_mut() {
        for (name, value) in object.iter_mut() {
            // Scale's coefficient lists travel as tensor objects: their bytes go to a file.
            let Ok(wire) = serde_json::from_value::<WireTensor>(value.clone()) else {
                continue;
            };
            let (Some(dtype), Ok(bytes)) =
                (DType::from_name(&wire.dtype), BASE64.decode(&wire.data))
            else {
                continue;
            };
            let file = format!("cases/{key}.{name}.bin");
            *value = json!(file_tensor(dtype, wire.shape, file, bytes));
        }
    }
    let case = IndexCase {
        key: key.to_owned(),
        id: id.to_owned(),
        op: invocation.op().name().to_owned(),
        attrs,
        inputs,
    };
    (case, files)
}

/// What [`write`] wrote.
pub(crate) struct Written {
    pub(crate) cases: usize,
    pub(crate) left_out: usize,
    pub(crate) bytes: u64,
}

/// Writes `cases` (sorted by trial name, the order a live run sends them in) into `dir`, which
/// must be new or empty, with the index naming the trials `left_out` and why.
pub(crate) fn write(
    dir: &Path,
    cases: &[&Case],
    left_out: Vec<LeftOut>,
    suite: &str,
) -> Result<Written, String> {
    match std::fs::read_dir(dir) {
        Ok(mut entries) => {
            if entries.next().is_some() {
                return Err(format!(
                    "{} is not empty: export into a new or empty folder (answers of other cases would be judged as this export's)",
                    dir.display()
                ));
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(format!("cannot read {}: {e}", dir.display())),
    }
    let create = |path: &Path| {
        std::fs::create_dir_all(path).map_err(|e| format!("cannot create {}: {e}", path.display()))
    };
    create(&dir.join("cases"))?;
    create(&dir.join("answers"))?;
    let width = cases.len().to_string().len().max(5);
    let mut index = Index {
        format: FORMAT.to_owned(),
        version: VERSION,
        layout: "docs/protocol.md, \"Offline cases\"".to_owned(),
        runner: env!("CARGO_PKG_VERSION").to_owned(),
        suite: suite.to_owned(),
        cases: Vec::with_capacity(cases.len()),
        left_out,
    };
    let mut bytes = 0;
    for (n, case) in cases.iter().enumerate() {
        let key = format!("{:0width$}", n + 1);
        let (entry, files) = entry(&case.trial_name(), &case.invocation, &key);
        for (file, contents) in files {
            let path = dir.join(&file);
            std::fs::write(&path, &contents)
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
            bytes += contents.len() as u64;
        }
        index.cases.push(entry);
    }
    let path = dir.join(INDEX);
    let text = index_text(&index);
    std::fs::write(&path, &text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(Written {
        cases: index.cases.len(),
        left_out: index.left_out.len(),
        bytes: bytes + text.len() as u64,
    })
}

/// The index as JSON, a case a line (for `grep`).
fn index_text(index: &Index) -> String {
    fn json<T: Serialize>(value: &T) -> String {
        serde_json::to_string(value).expect("the index serializes")
    }
    fn lines(items: Vec<String>) -> String {
        match items.is_empty() {
            true => "[]".to_owned(),
            false => format!("[\n    {}\n  ]", items.join(",\n    ")),
        }
    }
    let cases = lines(index.cases.iter().map(json).collect());
    let left_out = lines(index.left_out.iter().map(json).collect());
    format!(
        "{{\n  \"format\": {},\n  \"version\": {},\n  \"layout\": {},\n  \"runner\": {},\n  \"suite\": {},\n  \"cases\": {cases},\n  \"left_out\": {left_out}\n}}\n",
        json(&index.format),
        index.version,
        json(&index.layout),
        json(&index.runner),
        json(&index.suite),
    )
}

/// `file`, a path from `dir` that a file of the folder names, if it stays inside `dir`: relative,
/// without `..`, and not leaving through a symbolic link.
fn inside(dir: &Path, file: &str) -> Result<PathBuf, String> {
    let relative = Path::new(file);
    let plain = relative
        .components()
        .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
    if file.is_empty() || !plain {
        return Err(format!(
            "{file:?} is not a relative path inside {} (no `..`, no leading `/`)",
            dir.display()
        ));
    }
    let path = dir.join(relative);
    if let (Ok(real), Ok(root)) = (path.canonicalize(), dir.canonicalize()) {
        if !real.starts_with(&root) {
            return Err(format!(
                "{file:?} leads outside {} (to {})",
                dir.display(),
                real.display()
            ));
        }
    }
    Ok(path)
}

/// The backend of `runner judge DIR`: each case's answer is what the harness wrote into
/// `DIR/answers/`, its hello `DIR/answers/hello.json`.
pub(crate) struct OfflineBackend {
    dir: PathBuf,
    /// The index's cases, by id.
    cases: HashMap<String, IndexCase>,
    /// The trials the export left out, by id, with why.
    left_out: HashMap<String, String>,
    capabilities: Capabilities,
    limits: Limits,
}

impl OfflineBackend {
    /// Reads the index and the hello of `dir`; an error names the file and the field.
    pub(crate) fn open(dir: &Path, limits: Limits) -> Result<OfflineBackend, String> {
        let path = dir.join(INDEX);
        if !path.is_file() {
            return Err(format!(
                "{}: no such file: `runner export --cases {}` writes it, and the harness's answers go beside it (docs/protocol.md, \"Offline cases\")",
                path.display(),
                dir.display()
            ));
        }
        let text = read_bounded(&path, INDEX_LIMIT)?;
        let mut reader = serde_json::Deserializer::from_slice(&text);
        let index: Index = serde_path_to_error::deserialize(&mut reader).map_err(|e| {
            let field = e.path().to_string();
            format!("{}: field `{field}`: {}", path.display(), e.inner())
        })?;
        if index.format != FORMAT || index.version != VERSION {
            return Err(format!(
                "{}: a {:?} file of version {}, not {FORMAT:?} version {VERSION} (export again with this runner)",
                path.display(),
                index.format,
                index.version
            ));
        }
        let mut cases = HashMap::with_capacity(index.cases.len());
        let mut keys = std::collections::HashSet::new();
        for (at, case) in index.cases.into_iter().enumerate() {
            let field = |name: &str| format!("{}: field `cases[{at}].{name}`", path.display());
            let plain = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
            if case.key.is_empty() || case.key == "hello" || !case.key.chars().all(plain) {
                return Err(format!(
                    "{}: {:?} is not a key (letters, digits, `_` and `-`; not `hello`)",
                    field("key"),
                    case.key
                ));
            }
            if !keys.insert(case.key.clone()) {
                return Err(format!(
                    "{}: the key {:?} is given twice",
                    field("key"),
                    case.key
                ));
            }
            let id = case.id.clone();
            if cases.insert(id.clone(), case).is_some() {
                return Err(format!("{}: the case {id:?} is given twice", field("id")));
            }
        }
        let left_out = (index.left_out.into_iter())
            .map(|l| (l.id, l.why))
            .collect();
        let hello = dir.join(HELLO);
        let capabilities = read_hello(&hello)?;
        if let EnvDeclaration::Names(names) = &capabilities.env {
            if !names.is_empty() {
                return Err(format!(
                    "{}: field `env`: give the variables with their values, an object such as {{\"{}\": \"1\"}}: the judge cannot read the environment the harness ran in",
                    hello.display(),
                    names[0]
                ));
            }
        }
        Ok(OfflineBackend {
            dir: dir.to_path_buf(),
            cases,
            left_out,
            capabilities,
            limits,
        })
    }

    /// Checks that the index's entry and files are what this checkout would export for `case`.
    fn check_case(&self, entry: &IndexCase, case: &Case) -> Result<(), BackendError> {
        let stale = |what: String| {
            BackendError::Broken(format!(
                "{what} is not the case `{}` of this checkout (the specs, sweeps or runner changed since the export): export again, and answer the new cases",
                entry.id
            ))
        };
        let (expected, files) = entry_of(case, &entry.key);
        if &expected != entry {
            return Err(stale(format!(
                "the entry of key {} in {}",
                entry.key,
                self.dir.join(INDEX).display()
            )));
        }
        for (file, contents) in files {
            let path = self.dir.join(&file);
            let limit = contents.len() as u64;
            match read_bounded(&path, limit) {
                Ok(read) if read == contents => {}
                // Other bytes, or more of them.
                _ if path.is_file() => return Err(stale(path.display().to_string())),
                Err(e) => return Err(BackendError::Broken(e)),
                Ok(_) => unreachable!("a file was read"),
            }
        }
        Ok(())
    }

    /// The reply line of the answer at `path` to case `id`: the file's JSON, with the case's id
    /// when it gives none and each output's `file` read into its `data`, within `limit` bytes.
    fn answer_line(&self, path: &Path, id: &str, limit: usize) -> Result<String, BackendError> {
        let broken =
            |problem: String| BackendError::Broken(format!("{}: {problem}", path.display()));
        if !path.exists() {
            return Err(broken(format!(
                "no answer: the harness wrote none for case `{id}` (docs/protocol.md, \"Offline cases\")"
            )));
        }
        let text = read_bounded(path, limit as u64).map_err(BackendError::Broken)?;
        let mut value: Value =
            serde_json::from_slice(&text).map_err(|e| broken(format!("not JSON: {e}")))?;
        let Some(object) = value.as_object_mut() else {
            return Err(broken(
                "not a JSON object: a reply, as a backend writes it (docs/protocol.md)".into(),
            ));
        };
        match object.get("id") {
            None => {
                object.insert("id".into(), Value::from(id));
            }
            Some(Value::String(_)) => {}
            Some(other) => return Err(broken(format!("field `id`: {other} is not a string"))),
        }
        let mut size = text.len();
        if let Some(outputs) = object.get_mut("outputs").and_then(Value::as_array_mut) {
            for (k, output) in outputs.iter_mut().enumerate() {
                let Some(fields) = output.as_object_mut() else {
                    continue;
                };
                let Some(file) = fields.remove("file") else {
                    continue;
                };
                let field = format!("field `outputs[{k}].file`");
                if fields.contains_key("data") {
                    return Err(broken(format!(
                        "{field}: an output gives its bytes as `file` or as `data`, not both"
                    )));
                }
                let Some(file) = file.as_str() else {
                    return Err(broken(format!("{field}: {file} is not a string")));
                };
                let output =
                    inside(&self.dir, file).map_err(|p| broken(format!("{field}: {p}")))?;
                if !output.is_file() {
                    return Err(broken(format!(
                        "{field}: {} does not exist",
                        output.display()
                    )));
                }
                let left = (limit.saturating_sub(size) / 4 * 3) as u64;
                let bytes = read_bounded(&output, left).map_err(|e| {
                    broken(format!(
                        "{field}: {e} (the outputs the case allows, docs/protocol.md \"Limits\")"
                    ))
                })?;
                size += bytes.len().div_ceil(3) * 4;
                fields.insert("data".into(), Value::from(BASE64.encode(bytes)));
            }
        }
        Ok(value.to_string())
    }
}

/// The index entry and files of `case` keyed `key`.
fn entry_of(case: &Case, key: &str) -> (IndexCase, Vec<(String, Vec<u8>)>) {
    entry(&case.trial_name(), &case.invocation, key)
}

/// The capabilities the hello at `path` declares; an error names the file and the field.
fn read_hello(path: &Path) -> Result<Capabilities, String> {
    if !path.is_file() {
        return Err(format!(
            "{}: no such file: the harness writes its hello there, as a backend answers the runner's (docs/protocol.md, \"Offline cases\")",
            path.display()
        ));
    }
    let text = read_bounded(path, MIN_REPLY_LINE_LIMIT as u64)?;
    let text = String::from_utf8(text).map_err(|_| format!("{}: not UTF-8", path.display()))?;
    let reply = serde_json::from_str::<Reply>(&text)
        .map_err(|_| format!("{}: {}", path.display(), bad_hello(text.trim())))?;
    Capabilities::from_reply(reply).map_err(|e| format!("{}: {e}", path.display()))
}

impl Backend for OfflineBackend {
    fn name(&self) -> String {
        self.capabilities.name.clone()
    }

    /// The hello's facts alone: the machine the harness ran on is not this one.
    fn facts(&self) -> Facts {
        self.capabilities.facts(Facts::default())
    }

    fn composed(&self) -> BTreeMap<String, String> {
        self.capabilities.composed.clone()
    }

    fn build_only(&self) -> bool {
        self.capabilities.build_only
    }

    fn supports(&self, case: &Case) -> Result<(), Exclusion> {
        if let Some(why) = self.left_out.get(&case.trial_name()) {
            return Err(Exclusion {
                by: LEFT_OUT_BY.into(),
                reason: format!("not among the offline cases: {why}"),
            });
        }
        self.capabilities.supports(case)
    }

    fn excluded_dtypes(&self, case: &Case) -> Vec<DType> {
        self.capabilities.excluded_dtypes(case)
    }

    fn run(&self, case: &Case) -> Result<Outcome, BackendError> {
        self.run_noting(case).map(|(outcome, _)| outcome)
    }

    fn run_noting(&self, case: &Case) -> Result<(Outcome, Vec<String>), BackendError> {
        let id = case.trial_name();
        let Some(entry) = self.cases.get(&id) else {
            return Err(BackendError::Broken(format!(
                "{}: no case `{id}`: the export did not select this trial (export with this run's filter and part)",
                self.dir.join(INDEX).display()
            )));
        };
        self.check_case(entry, case)?;
        let path = self.dir.join("answers").join(format!("{}.json", entry.key));
        let line = self.answer_line(&path, &id, reply_line_limit(case))?;
        let c = &self.capabilities;
        ProcessBackend::interpret(&id, &line, c.build_only, self.limits, &c.composed).map_err(
            |misreply| BackendError::Broken(format!("{}: {}", path.display(), misreply.message)),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_stays_inside_the_folder() {
        let dir = tempfile::tempdir().unwrap();
        assert!(inside(dir.path(), "answers/1.out0.bin").is_ok());
        assert!(inside(dir.path(), "./answers/1.out0.bin").is_ok());
        for bad in ["../x.bin", "/etc/passwd", "", "a/../../b", "a/.."] {
            let error = inside(dir.path(), bad).unwrap_err();
            assert!(
                error.contains("is not a relative path inside"),
                "{bad}: {error}"
            );
        }
        std::os::unix::fs::symlink("/", dir.path().join("up")).unwrap();
        let error = inside(dir.path(), "up/etc").unwrap_err();
        assert!(error.contains("leads outside"), "{error}");
    }
}
