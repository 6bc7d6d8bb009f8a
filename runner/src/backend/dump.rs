//! The request dump (`--dump-requests FILE`): every `run` request of a run, one JSON line each,
//! exactly as the backend gets it (docs/protocol.md), in the order the trials ran; a
//! metamorphic trial sends two, each with its own id. With the built-in reference it holds the
//! requests a backend would get. It observes the backend ([`crate::backend::observed`]).

use std::fs::File;
use std::io::Write;
use std::path::Path;
#[cfg(test)]
use std::sync::Arc;
use std::sync::Mutex;

use opspec_spec::Case;

#[cfg(test)]
use crate::backend::interface::Backend;
use crate::backend::interface::BackendError;
#[cfg(test)]
use crate::backend::observed::Observed;
use crate::backend::observed::Observer;
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

/// The file every request is also written to.
pub(crate) struct RequestDump {
    file: Mutex<File>,
    path: std::path::PathBuf,
}

/// A backend whose requests are also written to a file.
#[cfg(test)]
pub(crate) type Dumping = Observed<RequestDump>;

impl RequestDump {
    /// Creates (or empties) the dump file.
    pub(crate) fn create(path: &Path) -> Result<RequestDump, DumpError> {
        if let Some(parent) = path.parent() {
            let _ = std::fs::create_dir_all(parent);
        }
        let file = File::create(path).map_err(|source| DumpError {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(RequestDump {
            file: Mutex::new(file),
            path: path.to_path_buf(),
        })
    }

    /// `inner`, its requests written to the dump file `path` (created, or emptied).
    #[cfg(test)]
    pub(crate) fn wrap(inner: Arc<dyn Backend>, path: &Path) -> Result<Dumping, DumpError> {
        Ok(Observed::new(inner, RequestDump::create(path)?))
    }
}

impl RequestDump {
    /// Writes one request line, exactly as sent: a `run`, or a `batch` of several.
    pub(crate) fn write_line(&self, request: &str) -> Result<(), BackendError> {
        let mut line = String::with_capacity(request.len() + 1);
        line.push_str(request);
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
            })
    }
}

impl Observer for RequestDump {
    fn request(&self, case: &Case) -> Result<(), BackendError> {
        self.write_line(&run_request(&case.trial_name(), &case.invocation))
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
        let err = match RequestDump::wrap(Arc::new(Reference::default()), dir.path()) {
            Err(err) => err,
            Ok(_) => panic!("a directory was accepted as the request dump"),
        };
        assert_eq!(err.path, dir.path());
        assert!(err.to_string().starts_with(&format!(
            "cannot write the request dump {}: ",
            dir.path().display()
        )));
    }

    /// Each request is written once, as the backend gets it, before it is sent.
    #[test]
    fn each_request_is_dumped_then_sent() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("requests.jsonl");
        let dumping = RequestDump::wrap(Arc::new(Reference::default()), &path).unwrap();
        let specs = crate::backend::checkout::built_from().join("specs");
        let loaded = opspec_spec::load_dirs(&[specs], None, opspec::tensor::Limits::DEFAULT);
        let case = &loaded.cases[0];
        assert!(dumping.run(case).is_ok());
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(
            text,
            format!("{}\n", run_request(&case.trial_name(), &case.invocation))
        );
    }
}
