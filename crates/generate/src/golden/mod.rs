//! Golden files: the expected outputs of generated cases, stored as `.npy` files that numpy
//! reads without this project, each with its provenance recorded beside it and checked when
//! it is read.
//!
//! Layout, for the sweep `sweeps/<op>/<sweep>.yaml`:
//!
//! ```text
//! golden/<op>/<sweep>.json                      the manifest: one line per generated case
//! golden/<op>/<sweep>/<case>[.<dtype>].npy      the expected output of a case that has one
//! ```
//!
//! A manifest entry records the generator version and the sweep's seed that produced the
//! case, a hash of the case itself (op, attributes, inputs: [`crate::case_hash`]),
//! and either the expected error kind or the output's dtype, shape and the SHA-256 of its
//! `.npy` file (so `sha256sum` checks it too). Reading a golden checks, in turn: the entry
//! exists, the file's hash, its npy header against the entry, the provenance (version, seed,
//! case hash), and finally that the reference still gives the stored result. Any difference
//! fails the case with a [`GoldenError`] (its kind: missing, corrupt, stale, ...) saying which
//! check failed and how to bless. A golden is checked once per run; every trial that asks for
//! it again gets the same verdict.
//!
//! **npy dtypes** are those of [`opspec_spec::npy`]; the manifest gives the real dtype (bfloat16,
//! fp8 and int4, which numpy lacks, are stored as raw bits or unpacked bytes).
//!
//! **Blessing** ([`GoldenStore::new`] with `bless`): a golden that is missing, stale or
//! corrupt is rewritten from the reference instead of failing, and the manifests are rewritten
//! once at the end ([`GoldenStore::finish`]). The runner refuses to bless when `CI` is set.
//! Nothing a user had is lost on the way:
//!
//! - each sweep switches all at once ([`GoldenStore::finish`]): its new goldens are staged
//!   beside the old under names of the bless's own (`.<name>.<pid>.<n>.staged`), and one rename
//!   replaces the manifest with one that names them; only then are they given their usual
//!   names and the manifest rewritten with those. A bless that fails or is killed before the
//!   switch leaves the sweep exactly as it was; after it, whole and new. What a killed bless
//!   left (its staged files, its lock) is reported and removed by the next bless; blesses of
//!   one golden folder take turns switching (`<golden>/.bless.lock`, taken over from a process
//!   that is gone). [`GoldenStore::with_fault`] injects a failure or a pause at a step, for the tests
//!   of all this (`runner/tests/bless.rs`);
//! - only goldens shown to be orphans of a sweep that was loaded are removed: an entry of a
//!   readable manifest that none of the sweep's cases uses, or a file that the sweep's final
//!   manifest does not name. A manifest that cannot be read proves nothing about its files,
//!   and the manifest of a sweep that was not loaded (another sweeps folder sharing the golden
//!   folder, or a deleted sweep) is kept and reported: deleting it is left to the user;
//! - every removal and every kept manifest is listed ([`BlessSummary`]).

mod bless;
mod fault;
mod manifest;
mod store;

pub use bless::{BlessSummary, Unused};
pub use manifest::{sha256_hex, Entry, GoldenId, Manifest, GENERATOR};
pub use store::{expectation_of, Golden, GoldenError, GoldenErrorKind, GoldenStore};

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::bless::*;
    use super::manifest::*;
    use super::store::*;
    use opspec::dtype::DType;
    use opspec::ops::Op;
    use opspec::tensor::{Limits, Tensor};
    use opspec_spec::npy::{from_npy, to_npy};

    #[test]
    fn every_dtype_round_trips() {
        for dtype in DType::ALL {
            for shape in [vec![], vec![3], vec![2, 0, 2], vec![1, 2, 3]] {
                let n: usize = shape.iter().product();
                let t = crate::values::Provenance::tensor(dtype, shape.clone());
                assert_eq!(t.len(), n);
                let bytes = to_npy(&t);
                assert_eq!(
                    from_npy(dtype, &bytes, Limits::DEFAULT),
                    Ok(t),
                    "{dtype} {shape:?}"
                );
            }
        }
        let scalar = to_npy(&Tensor::from_bits(DType::Int8, vec![], vec![0x80]));
        assert!(String::from_utf8_lossy(&scalar).contains("'shape': (), }"));
        let one = to_npy(&Tensor::from_bits(DType::Int4, vec![1], vec![0xf8]));
        assert_eq!(*one.last().unwrap(), 0xf8); // -8, unpacked
        assert!(from_npy(
            DType::Float16,
            &to_npy(&Tensor::from_bits(DType::BFloat16, vec![1], vec![0])),
            Limits::DEFAULT
        )
        .is_err());
    }

    #[test]
    fn manifest_json_has_one_line_per_case_and_reads_back() {
        let mut m = Manifest::new(Op::Slice, "modes");
        for key in ["b::int8", "a::float32"] {
            m.cases.insert(
                key.into(),
                Entry {
                    version: 1,
                    seed: 7,
                    case: "0123".into(),
                    error: None,
                    dtype: Some("int8".into()),
                    shape: Some(vec![2]),
                    sha256: Some("ff".into()),
                    file: None,
                },
            );
        }
        let text = m.to_json();
        assert_eq!(text.lines().filter(|l| l.contains("\"seed\":7")).count(), 2);
        assert_eq!(serde_json::from_str::<Manifest>(&text).unwrap(), m);
        let empty = Manifest::new(Op::Slice, "x");
        assert_eq!(
            serde_json::from_str::<Manifest>(&empty.to_json()).unwrap(),
            empty
        );
    }

    /// Each golden is read and checked once per run, and a second trial asking for it gets
    /// the same verdict; each problem has its kind.
    #[test]
    fn a_golden_is_checked_once_and_problems_have_kinds() {
        let scratch = tempfile::tempdir().unwrap();
        let root = scratch.path().to_path_buf();
        let id = GoldenId::new(Op::Slice, "modes", "copy", Some(DType::Int8));
        let reference = Ok(vec![Tensor::from_bits(DType::Int8, vec![2], vec![1, 2])]);

        let blessing = GoldenStore::new(root.clone(), "golden", true);
        assert!(blessing.check(&id, 7, "abcd", &reference).unwrap().blessed);
        blessing.finish().unwrap();

        let store = GoldenStore::new(root.clone(), "golden", false);
        let first = store.check(&id, 7, "abcd", &reference).unwrap();
        assert!(!first.blessed);
        assert_eq!(store.checks(), 1);
        // Another case hash is another check: stale.
        let stale = store.check(&id, 7, "ef01", &reference).unwrap_err();
        assert_eq!(store.checks(), 2);
        assert_eq!(stale.kind, GoldenErrorKind::Stale, "{stale}");
        // The file is no longer read: the shared verdict stands even after it is damaged.
        std::fs::write(root.join("slice/modes").join(id.file_name()), b"damaged").unwrap();
        assert_eq!(store.check(&id, 7, "abcd", &reference), Ok(first));
        assert_eq!(store.checks(), 2);

        // A fresh store sees the damage.
        let store = GoldenStore::new(root.clone(), "golden", false);
        let corrupt = store.check(&id, 7, "abcd", &reference).unwrap_err();
        assert_eq!(corrupt.kind, GoldenErrorKind::Corrupt, "{corrupt}");
        assert!(
            corrupt.to_string().contains("fails its content hash"),
            "{corrupt}"
        );
        let other = GoldenId::new(Op::Slice, "modes", "new", None);
        let missing = store.check(&other, 7, "abcd", &reference).unwrap_err();
        assert_eq!(missing.kind, GoldenErrorKind::Missing, "{missing}");
        assert!(missing.to_string().contains("OPSPEC_BLESS=1"), "{missing}");
    }

    /// A golden or a manifest that is a FIFO, a device or a folder is a clear error, never a
    /// read that waits or never ends.
    #[test]
    fn goldens_and_manifests_that_are_not_regular_files_are_refused() {
        let scratch = tempfile::tempdir().unwrap();
        let root = scratch.path().to_path_buf();
        let id = GoldenId::new(Op::Slice, "modes", "copy", Some(DType::Int8));
        let reference = Ok(vec![Tensor::from_bits(DType::Int8, vec![2], vec![1, 2])]);
        let blessing = GoldenStore::new(root.clone(), "golden", true);
        blessing.check(&id, 7, "abcd", &reference).unwrap();
        blessing.finish().unwrap();
        let golden = root.join("slice/modes").join(id.file_name());
        std::fs::remove_file(&golden).unwrap();
        let made = std::process::Command::new("mkfifo").arg(&golden).status();
        assert!(made.is_ok_and(|s| s.success()), "mkfifo");
        let store = GoldenStore::new(root.clone(), "golden", false);
        let error = store.check(&id, 7, "abcd", &reference).unwrap_err();
        assert_eq!(error.kind, GoldenErrorKind::Corrupt, "{error}");
        assert!(error.to_string().contains("a FIFO"), "{error}");

        std::fs::remove_file(&golden).unwrap();
        std::os::unix::fs::symlink("/dev/zero", &golden).unwrap();
        let store = GoldenStore::new(root.clone(), "golden", false);
        let error = store.check(&id, 7, "abcd", &reference).unwrap_err();
        assert!(error.to_string().contains("a character device"), "{error}");

        let manifest = root.join("slice/modes.json");
        std::fs::remove_file(&manifest).unwrap();
        let made = std::process::Command::new("mkfifo").arg(&manifest).status();
        assert!(made.is_ok_and(|s| s.success()), "mkfifo");
        let store = GoldenStore::new(root.clone(), "golden", false);
        let error = store.check(&id, 7, "abcd", &reference).unwrap_err();
        assert_eq!(error.kind, GoldenErrorKind::Manifest, "{error}");
        assert!(error.to_string().contains("a FIFO"), "{error}");
    }

    /// A folder where a golden or a manifest belongs is reported as a folder to remove by
    /// hand, never promised to blessing (which removes no folder), and never named `x.json.json`.
    #[test]
    fn folders_in_a_golden_folder_are_reported_as_folders() {
        let scratch = tempfile::tempdir().unwrap();
        let root = scratch.path().to_path_buf();
        let id = GoldenId::new(Op::Slice, "modes", "copy", Some(DType::Int8));
        let reference = Ok(vec![Tensor::from_bits(DType::Int8, vec![2], vec![1, 2])]);
        let blessing = GoldenStore::new(root.clone(), "golden", true);
        blessing.check(&id, 7, "abcd", &reference).unwrap();
        blessing.finish().unwrap();
        std::fs::create_dir_all(root.join("slice/modes/stray")).unwrap();
        std::fs::create_dir_all(root.join("slice/bits.json")).unwrap();
        let store = GoldenStore::new(root.clone(), "golden", false);
        let used = BTreeSet::from([id]);
        let unused = store.unused(&used);
        let names: Vec<&str> = unused.iter().map(|u| u.name.as_str()).collect();
        assert_eq!(
            names,
            ["slice/bits.json", "slice/modes/stray"],
            "{unused:?}"
        );
        for u in &unused {
            assert!(u.message.contains("remove it by hand"), "{}", u.message);
            assert!(!u.message.contains("OPSPEC_BLESS"), "{}", u.message);
            assert!(!u.message.contains(".json.json"), "{}", u.message);
            assert!(!u.removable());
        }
    }

    /// A bless killed between creating its lock and writing its pid leaves an empty lock: once
    /// it is older than a moment it is stale, taken over and reported, not waited on.
    #[test]
    fn an_empty_bless_lock_is_taken_over() {
        let scratch = tempfile::tempdir().unwrap();
        let root = scratch.path().to_path_buf();
        let id = GoldenId::new(Op::Slice, "modes", "copy", Some(DType::Int8));
        let reference = Ok(vec![Tensor::from_bits(DType::Int8, vec![2], vec![1, 2])]);
        let lock = root.join(".bless.lock");
        let file = std::fs::File::create(&lock).unwrap();
        let old = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
        file.set_modified(old).unwrap();
        drop(file);
        let blessing = GoldenStore::new(root.clone(), "golden", true);
        blessing.check(&id, 7, "abcd", &reference).unwrap();
        let started = std::time::Instant::now();
        let summary = blessing.finish().unwrap();
        assert!(started.elapsed() < LOCK_WAIT / 2, "{:?}", started.elapsed());
        assert!(
            summary.removals.iter().any(|l| l.contains(".bless.lock")),
            "{:?}",
            summary.removals
        );
        assert!(!lock.exists());
    }

    /// Staged files of a bless that was killed are removed and reported by the next bless,
    /// also when that bless has the killed one's pid (as in a fresh container) or the pid now
    /// belongs to another process; a plain run names them.
    #[test]
    fn staged_leftovers_of_a_killed_bless_are_named_and_removed() {
        let scratch = tempfile::tempdir().unwrap();
        let root = scratch.path().to_path_buf();
        let id = GoldenId::new(Op::Slice, "modes", "copy", Some(DType::Int8));
        let reference = Ok(vec![Tensor::from_bits(DType::Int8, vec![2], vec![1, 2])]);
        let blessing = GoldenStore::new(root.clone(), "golden", true);
        blessing.check(&id, 7, "abcd", &reference).unwrap();
        blessing.finish().unwrap();
        let dir = root.join("slice/modes");
        // One with this process's pid; one with pid 1's, written before pid 1 started (a
        // year ago): the pid was reused since.
        let leftovers = [
            dir.join(format!(
                ".{}.{}.0.staged",
                id.file_name(),
                std::process::id()
            )),
            dir.join(format!(".{}.1.0.staged", id.file_name())),
        ];
        for path in &leftovers {
            std::fs::write(path, b"half").unwrap();
        }
        let year_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(365 * 86400);
        (std::fs::File::options().write(true).open(&leftovers[1]))
            .and_then(|f| f.set_modified(year_ago))
            .unwrap();
        let plain = GoldenStore::new(root.clone(), "golden", false);
        let named = plain.leftovers();
        assert_eq!(named.len(), 2, "{named:?}");
        assert!(named[0].contains("staged"), "{named:?}");
        let blessing = GoldenStore::new(root.clone(), "golden", true);
        blessing.check(&id, 7, "abcd", &reference).unwrap();
        let summary = blessing.finish().unwrap();
        for path in &leftovers {
            assert!(!path.exists(), "{} kept", path.display());
        }
        let reported = summary
            .removals
            .iter()
            .filter(|l| l.contains(".staged"))
            .count();
        assert_eq!(reported, 2, "{:?}", summary.removals);
    }
}
