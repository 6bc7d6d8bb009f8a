//! Which checkout a run reads: its specs, sweeps and goldens, and where its backend log goes.
//!
//! A runner binary is found where it was built, but a user may start it from another clone
//! (their own, with private changes): the suite is the one of the checkout the runner is
//! started in, the nearest folder at or above the current one that holds it
//! (`holds_suite`). Started outside any checkout, it reads the one it was built from and
//! says so on stderr, naming it; but its backend starts in the current folder (the command's
//! relative paths are the user's, `backend_dir`) and its backend log goes to the temporary
//! folder (`outside_log_folder`): nothing is written into the checkout it was built from.

use std::path::{Path, PathBuf};

/// The checkout this runner was built from.
pub(crate) fn built_from() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().unwrap_or(manifest).to_path_buf()
}

/// Whether `dir` holds the suite: `specs/` with its common clause catalogue, and `sweeps/`.
pub(crate) fn holds_suite(dir: &Path) -> bool {
    dir.join("specs").join("common.clauses.yaml").is_file() && dir.join("sweeps").is_dir()
}

/// The nearest folder at or above `start` that holds the suite.
pub(crate) fn find_from(start: &Path) -> Option<PathBuf> {
    start
        .ancestors()
        .find(|dir| holds_suite(dir))
        .map(Path::to_path_buf)
}

/// The folder of the backend log by default when the runner is started outside any checkout.
pub(crate) fn outside_log_folder() -> PathBuf {
    std::env::temp_dir().join("opspec")
}

/// The checkout a run reads, found once when its configuration is made and passed down in it
/// (`crate::run::config::Config::checkout`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Checkout {
    /// Its root: the folder holding `specs/`, `sweeps/` and `golden/`.
    pub root: PathBuf,
    /// Whether it was found from the current folder (else it is the one the runner was built
    /// from).
    pub(crate) found: bool,
}

impl Checkout {
    /// The checkout the current folder is in, else the one the runner was built from.
    pub fn discover() -> Checkout {
        match std::env::current_dir().ok().as_deref().and_then(find_from) {
            Some(root) => Checkout { root, found: true },
            None => Checkout {
                root: built_from(),
                found: false,
            },
        }
    }

    /// Says on stderr, naming it, that the checkout read is the one the runner was built from,
    /// when it is.
    pub fn warn_if_outside(&self) {
        if self.found {
            return;
        }
        let here = std::env::current_dir().ok();
        eprintln!(
            "warning: {} is in no opspec checkout (a folder holding specs/ and sweeps/); reading the one this runner was built from, {}; a backend starts in the current folder and logs under {} (--backend-log to choose)",
            here.map_or_else(|| "the current folder".into(), |h| h.display().to_string()),
            self.root.display(),
            outside_log_folder().display()
        );
    }

    /// Its `specs/`, whose catalogues serve folders that do not catalogue the built-in ops
    /// themselves.
    pub(crate) fn specs(&self) -> PathBuf {
        self.root.join("specs")
    }

    /// The folder a backend is started in: the checkout's root, or the current folder outside
    /// any checkout.
    pub(crate) fn backend_dir(&self) -> PathBuf {
        match self.found {
            true => self.root.clone(),
            false => std::env::current_dir().unwrap_or_else(|_| built_from()),
        }
    }

    /// The folder of the backend log by default.
    pub(crate) fn log_folder(&self) -> PathBuf {
        match self.found {
            // Outside any checkout, nothing is written into the one read.
            true => self.root.join("target"),
            false => outside_log_folder(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_suite_is_found_from_any_folder_inside_a_checkout() {
        let built = built_from();
        assert!(holds_suite(&built));
        assert_eq!(
            find_from(&built.join("runner").join("src")),
            Some(built.clone())
        );
        assert_eq!(find_from(&built), Some(built));
        let scratch = tempfile::tempdir().unwrap();
        assert_eq!(find_from(scratch.path()), None);
    }
}
