//! The files a run writes: never a file it reads, and each replaced whole.
//!
//! A report, log, request dump or HTML page that names an input of the run (a spec, an `.npy`
//! file, a golden, the known-failures file, a report read) or another output is refused before
//! anything runs: writing it would destroy the input. Reports are written to a temporary file
//! beside their place and renamed over it, so a reader (or a crash) never sees half a report.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// `path` made absolute and free of `.`/`..` and symbolic links as far as it exists: two
/// spellings of one file compare equal.
pub fn resolved(path: &Path) -> PathBuf {
    if let Ok(path) = path.canonicalize() {
        return path;
    }
    match (path.parent(), path.file_name()) {
        (Some(parent), Some(name)) if !parent.as_os_str().is_empty() => resolved(parent).join(name),
        _ => std::env::current_dir()
            .map(|here| here.join(path))
            .unwrap_or_else(|_| path.to_path_buf()),
    }
}

/// What a run reads, for [`check_outputs`].
#[derive(Debug, Default)]
pub struct Inputs<'a> {
    /// Files read, each with the flag that names it.
    pub files: Vec<(&'a str, &'a Path)>,
    /// Folders whose data files are read (spec, sweep and golden folders): any `.yaml`,
    /// `.yml`, `.npy` or `.json` file in them is an input.
    pub folders: Vec<(&'a str, &'a Path)>,
}

/// The extensions of the files read from an input folder.
const READ_EXTENSIONS: [&str; 4] = ["yaml", "yml", "npy", "json"];

/// `Err` naming the flags when an output names an input file, lies in a folder the run reads,
/// or is also another output.
pub fn check_outputs(outputs: &[(&str, &Path)], inputs: &Inputs) -> Result<(), String> {
    let outputs: Vec<(&str, PathBuf)> = outputs.iter().map(|(f, p)| (*f, resolved(p))).collect();
    for (index, (flag, path)) in outputs.iter().enumerate() {
        let shown = path.display();
        for (input_flag, input) in &inputs.files {
            if *path == resolved(input) {
                return Err(format!(
                    "{flag} {shown} would overwrite the file {input_flag} reads: give the output another path"
                ));
            }
        }
        for (input_flag, folder) in &inputs.folders {
            let folder = resolved(folder);
            let read = path
                .extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| READ_EXTENSIONS.contains(&e.to_ascii_lowercase().as_str()));
            if path.starts_with(&folder) && read {
                return Err(format!(
                    "{flag} {shown} would be read as data: it is a .yaml, .yml, .npy or .json file inside {} ({input_flag}); write outputs elsewhere",
                    folder.display()
                ));
            }
        }
        if let Some((other, _)) = outputs[..index].iter().find(|(_, p)| p == path) {
            return Err(format!(
                "{other} and {flag} both name {shown}: give each output its own path"
            ));
        }
        if path.is_dir() {
            return Err(format!("{flag} {shown} is a folder: name a file"));
        }
    }
    Ok(())
}

/// Writes `contents` to `path` whole: to a uniquely named temporary file beside it, then
/// renamed over it. On failure `path` is as it was and the temporary file is gone.
pub fn write_replacing(path: &Path, contents: impl AsRef<[u8]>) -> std::io::Result<()> {
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temporary = path.with_file_name(format!(
        ".{name}.{}.{}.writing",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let result = (|| {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temporary)?;
        file.write_all(contents.as_ref())?;
        file.sync_all()?;
        std::fs::rename(&temporary, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_output_naming_an_input_or_another_output_is_refused() {
        let scratch = tempfile::tempdir().unwrap();
        let known = scratch.path().join("k.txt");
        std::fs::write(&known, "x").unwrap();
        let specs = scratch.path().join("specs");
        std::fs::create_dir(&specs).unwrap();
        let inputs = Inputs {
            files: vec![("--expectations", &known)],
            folders: vec![("--specs", &specs)],
        };
        // Another spelling of the same file.
        let other = scratch.path().join("specs/../k.txt");
        let error = check_outputs(&[("--report-json", &other)], &inputs).unwrap_err();
        assert!(error.contains("--expectations"), "{error}");
        let spec = specs.join("shuffle/basic.yaml");
        let error = check_outputs(&[("--report-json", &spec)], &inputs).unwrap_err();
        assert!(error.contains("--specs"), "{error}");
        let report = scratch.path().join("r.json");
        let error = check_outputs(&[("--report-json", &report), ("--junit", &report)], &inputs)
            .unwrap_err();
        assert!(error.contains("both name"), "{error}");
        assert!(check_outputs(&[("--report-json", &report)], &inputs).is_ok());
        assert_eq!(std::fs::read_to_string(&known).unwrap(), "x");
    }

    #[test]
    fn a_report_replaces_its_file_whole_and_leaves_no_temporary() {
        let scratch = tempfile::tempdir().unwrap();
        let path = scratch.path().join("r.json");
        std::fs::write(&path, "old").unwrap();
        write_replacing(&path, "new").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        // A write that fails (its folder is gone) leaves nothing behind.
        let missing = scratch.path().join("gone/r.json");
        assert!(write_replacing(&missing, "x").is_err());
        let names: Vec<_> = std::fs::read_dir(scratch.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["r.json"]);
    }
}
