//! The manifest: which goldens a sweep has, each with its provenance and its file's SHA-256.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::GoldenStore;
use opspec::dtype::DType;
use opspec::ops::Op;

/// The `generator` field of every manifest.
pub const GENERATOR: &str = "opspec-sweep";

/// Lower-case hex SHA-256.
pub fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut text = String::with_capacity(64);
    for byte in digest {
        let _ = write!(text, "{byte:02x}");
    }
    text
}

/// One sweep's manifest.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    pub about: String,
    pub generator: String,
    /// The sweep file, relative to its sweeps folder (`slice/modes.yaml`).
    pub sweep: String,
    /// Keyed by `<case>[::<dtype>]`.
    pub cases: BTreeMap<String, Entry>,
}

/// The provenance and the expected result of one generated case.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// [`crate::GENERATOR_VERSION`] when written.
    pub version: u32,
    /// The sweep file's seed when written.
    pub seed: u64,
    /// [`crate::case_hash`] of the case when written.
    pub case: String,
    /// The expected error kind, for a case the reference rejects.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dtype: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shape: Option<Vec<usize>>,
    /// SHA-256 of the whole `.npy` file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
    /// The file's name in the sweep's folder when it is not `<case>[.<dtype>].npy`: only while
    /// a bless switches a sweep over (the manifest names the new files beside the old ones),
    /// or after a bless was stopped in that step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
}

/// The name of an entry's `.npy` file in its sweep's folder.
pub(super) fn entry_file(key: &str, entry: &Entry) -> String {
    entry.file.clone().unwrap_or_else(|| file_name_of(key))
}

impl Manifest {
    pub(super) fn new(op: Op, stem: &str) -> Manifest {
        let about = format!(
            "Expected results of the generated cases of sweeps/{op}/{stem}.yaml, computed by the reference interpreter and cross-checked by the numpy backend. Written by `OPSPEC_BLESS=1 cargo test`; do not edit by hand (golden/README.md)."
        );
        Manifest {
            about,
            generator: GENERATOR.into(),
            sweep: format!("{op}/{stem}.yaml"),
            cases: BTreeMap::new(),
        }
    }

    /// JSON with one line per case, so that a diff shows one line per changed golden.
    pub fn to_json(&self) -> String {
        let mut text = String::from("{\n");
        for (name, value) in [
            ("about", &self.about),
            ("generator", &self.generator),
            ("sweep", &self.sweep),
        ] {
            let _ = writeln!(
                text,
                "  {}: {},",
                serde_json::to_string(name).expect("string"),
                serde_json::to_string(value).expect("string")
            );
        }
        text.push_str("  \"cases\": {");
        for (i, (key, entry)) in self.cases.iter().enumerate() {
            let _ = write!(
                text,
                "{}\n    {}: {}",
                if i == 0 { "" } else { "," },
                serde_json::to_string(key).expect("string"),
                serde_json::to_string(entry).expect("entry")
            );
        }
        text.push_str(if self.cases.is_empty() {
            "}\n}\n"
        } else {
            "\n  }\n}\n"
        });
        text
    }
}

/// Where one generated case's golden lives.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GoldenId {
    pub op: Op,
    /// The sweep file's stem.
    pub stem: String,
    /// `<case>[::<dtype>]`, the manifest key.
    pub key: String,
}

impl GoldenId {
    pub fn new(op: Op, stem: &str, case: &str, dtype: Option<DType>) -> GoldenId {
        GoldenId {
            op,
            stem: stem.to_owned(),
            key: match dtype {
                Some(dtype) => format!("{case}::{dtype}"),
                None => case.to_owned(),
            },
        }
    }

    /// The npy file's name inside `<op>/<stem>/`.
    pub fn file_name(&self) -> String {
        file_name_of(&self.key)
    }
}

pub(super) fn file_name_of(key: &str) -> String {
    format!("{}.npy", key.replace("::", "."))
}

pub(super) type SweepKey = (String, String);

/// A manifest as read: absent (`None`), or why it cannot be read.
pub(super) type LoadedManifest = Arc<Result<Option<Manifest>, String>>;

impl GoldenStore {
    pub(super) fn manifest_path(&self, op: &str, stem: &str) -> PathBuf {
        self.root.join(op).join(format!("{stem}.json"))
    }

    pub(super) fn manifest(&self, op: &str, stem: &str) -> LoadedManifest {
        let key = (op.to_owned(), stem.to_owned());
        let invalid = |e: serde_json::Error| {
            format!(
                "{} is not a valid golden manifest ({e}); restore it from version control or re-bless",
                self.shown(&format!("{op}/{stem}.json"))
            )
        };
        let mut cache = self.manifests.lock().unwrap_or_else(|p| p.into_inner());
        Arc::clone(cache.entry(key).or_insert_with(|| {
            let path = self.manifest_path(op, stem);
            Arc::new(match read_manifest(&path) {
                Err(ManifestRead::Missing) => Ok(None),
                Err(ManifestRead::Unreadable(message)) => Err(message),
                Ok(text) => serde_json::from_str::<Manifest>(&text)
                    .map(Some)
                    .map_err(invalid),
            })
        }))
    }
}

/// Why a manifest was not read.
pub(super) enum ManifestRead {
    Missing,
    Unreadable(String),
}

/// The largest manifest read: one line per case, about 250 bytes each.
const MAX_MANIFEST_BYTES: u64 = 256 << 20;

/// A manifest's text, read only if it is a regular file of at most [`MAX_MANIFEST_BYTES`].
pub(super) fn read_manifest(path: &Path) -> Result<String, ManifestRead> {
    match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(ManifestRead::Missing),
        _ => {}
    }
    let bytes = opspec_spec::source::read_bounded(path, MAX_MANIFEST_BYTES)
        .map_err(ManifestRead::Unreadable)?;
    String::from_utf8(bytes)
        .map_err(|_| ManifestRead::Unreadable(format!("{} is not UTF-8 text", path.display())))
}
