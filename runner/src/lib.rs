//! The conformance harness: every spec case becomes one libtest-mimic trial, run against the
//! built-in reference or another backend.
//!
//! Configuration comes from the environment, so that it reaches `cargo test` and cargo nextest
//! alike (neither forwards custom flags): `OPSPEC_SPECS=dir1:dir2` reads those spec folders
//! instead of `specs/`.

pub mod backend;
pub mod verdict;

use std::path::PathBuf;
use std::sync::Arc;

use libtest_mimic::{Arguments, Completion, Conclusion, Failed, Trial};
use opspec::spec::{load_dirs, Loaded};

use backend::Backend;
use verdict::{judge, Verdict};

/// The spec folders to read: `OPSPEC_SPECS` (colon-separated) or this repository's `specs/`.
pub fn spec_dirs() -> Vec<PathBuf> {
    match std::env::var_os("OPSPEC_SPECS") {
        Some(dirs) if !dirs.is_empty() => std::env::split_paths(&dirs).collect(),
        _ => vec![PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../specs")],
    }
}

/// Loads the cases the arguments can select. A run of one exact trial name (as cargo nextest
/// does for every test) reads only the file that name points at.
pub fn load(args: &Arguments, dirs: &[PathBuf]) -> Loaded {
    let only = match (&args.filter, args.exact) {
        (Some(name), true) => {
            let mut parts = name.split("::");
            parts.next().zip(parts.next())
        }
        _ => None,
    };
    load_dirs(dirs, only)
}

/// One trial per case, plus one failing trial per spec problem; sorted by name.
pub fn trials(loaded: Loaded, backend: Arc<dyn Backend>) -> Vec<Trial> {
    let mut trials: Vec<Trial> = loaded
        .errors
        .into_iter()
        .map(|error| {
            let message = error.to_string();
            Trial::test(error.trial_name(), move || Err(Failed::from(message)))
        })
        .collect();
    for case in loaded.cases {
        let backend = Arc::clone(&backend);
        let name = case.trial_name();
        trials.push(Trial::ignorable_test(name, move || {
            let outcome = backend.run(&case);
            match judge(&case, outcome, backend.is_reference()) {
                Verdict::Pass => Ok(Completion::Completed),
                Verdict::Unsupported(reason) => Ok(Completion::ignored_with(reason)),
                Verdict::Fail(report) => Err(Failed::from(report)),
            }
        }));
    }
    trials.sort_by(|a, b| a.name().cmp(b.name()));
    trials
}

/// Runs the suite with libtest's arguments against `backend`.
pub fn run(args: Arguments, backend: Arc<dyn Backend>) -> Conclusion {
    let loaded = load(&args, &spec_dirs());
    libtest_mimic::run(&args, trials(loaded, backend))
}
