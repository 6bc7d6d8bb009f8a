//! The request dump (`--dump-requests FILE`): every `run` request of a run, one JSON line each,
//! exactly as the backend gets it (docs/protocol.md), in the order the trials ran; a
//! metamorphic trial sends two, each with its own id. With the built-in reference it holds the
//! requests a backend would get.

use std::fs::File;
use std::io::Write;
use std::path::Path;
use std::sync::{Arc, Mutex};

use opspec::DType;
use opspec_spec::Case;

use crate::backend::interface::{Backend, BackendError, Exclusion, LateFault, Outcome};
use crate::backend::protocol::run_request;

/// The request dump file could not be created.
#[derive(Debug, thiserror::Error)]
#[error("cannot write the request dump {}: {source}", path.display())]
pub(crate) struct DumpError {
    /// The dump file asked for.
    pub(crate) path: std::path::PathBuf,
    /// Why it could not be created.
    pub(crate) source: std::io::Error,
}

/// A backend whose requests are also written to a file.
pub(crate) struct Dumping {
    inner: Arc<dyn Backend>,
    file: Mutex<File>,
    path: std::path::PathBuf,
}

impl Dumping {
    /// Creates (or empties) the dump file.
    pub(crate) fn create(inner: Arc<dyn Backend>, path: &Path) -> Result<Dumping, DumpError> {
        if let Some(parent) = path.parent() {
            let _ = std::fs::create_dir_all(parent);
        }
        let file = File::create(path).map_err(|source| DumpError {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(Dumping {
            inner,
            file: Mutex::new(file),
            path: path.to_path_buf(),
        })
    }
}

impl Backend for Dumping {
    fn name(&self) -> String {
        self.inner.name()
    }

    fn facts(&self) -> crate::backend::facts::Facts {
        self.inner.facts()
    }

    fn composed(&self) -> std::collections::BTreeMap<String, String> {
        self.inner.composed()
    }

    fn is_reference(&self) -> bool {
        self.inner.is_reference()
    }

    fn build_only(&self) -> bool {
        self.inner.build_only()
    }

    fn excluded_dtypes(&self, case: &Case) -> Vec<DType> {
        self.inner.excluded_dtypes(case)
    }

    fn supports(&self, case: &Case) -> Result<(), Exclusion> {
        self.inner.supports(case)
    }

    fn run(&self, case: &Case) -> Result<Outcome, BackendError> {
        let mut line = run_request(&case.trial_name(), &case.invocation);
        line.push('\n');
        // One write per line, under the lock, so that parallel trials never interleave.
        self.file
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .write_all(line.as_bytes())
            .map_err(|e| {
                BackendError::Broken(format!(
                    "cannot write the request dump {}: {e}",
                    self.path.display()
                ))
            })?;
        self.inner.run(case)
    }

    fn halt(&self) {
        self.inner.halt();
    }

    fn finish(&self) -> Vec<LateFault> {
        self.inner.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::interface::Reference;

    #[test]
    fn an_unwritable_dump_is_a_typed_error_naming_its_file() {
        let dir = tempfile::tempdir().unwrap();
        // A directory cannot be opened as the dump file.
        let err = match Dumping::create(Arc::new(Reference::default()), dir.path()) {
            Err(err) => err,
            Ok(_) => panic!("a directory was accepted as the request dump"),
        };
        assert_eq!(err.path, dir.path());
        assert!(err.to_string().starts_with(&format!(
            "cannot write the request dump {}: ",
            dir.path().display()
        )));
    }
}
