//! Which implementation of the layout loops, of Scale's element loop and of Shuffle's stages an
//! evaluation uses.
//!
//! This crate holds the reference, [`Plain`]: one element at a time, in row-major order
//! (`layout::gather_reference`, `layout::scatter_reference`, `ops::as_strided::reference`,
//! `ops::scale::reference`, Shuffle's three stages one after the other). An [`Engine`] may
//! replace any of these by a faster way to the same bits; the fast kernels (crate
//! `opspec-kernels`) are one, tested against [`Plain`].
//! The engine is an argument ([`crate::ops::evaluate_with`]), never read from the environment
//! by this crate: the runner maps its `--engine` flag / `OPSPEC_ENGINE` variable onto one.

use crate::layout::{gather_reference, scatter_reference, AxisGather, StridedView};
use crate::ops::{scale, shuffle};
use crate::tensor::{Buffer, Tensor};

/// The loops an evaluation runs on. Every method has the reference's meaning; the defaults are
/// the reference's loops, or `None` for "no faster way: run the reference's steps on this
/// engine". An implementation must give the same bits as [`Plain`] for every input.
pub trait Engine: Send + Sync {
    /// [`crate::layout::gather`]: `out[y] = source[base + Σ table_i[y_i]]`, or `fill_bits`.
    fn gather(&self, source: &Buffer, plan: &AxisGather, fill_bits: u64) -> Buffer {
        gather_reference(source, plan, fill_bits)
    }

    /// [`crate::layout::scatter`]: the inverse movement into `len` elements of `fill_bits`.
    fn scatter(&self, source: &Buffer, plan: &AxisGather, len: usize, fill_bits: u64) -> Buffer {
        scatter_reference(source, plan, len, fill_bits)
    }

    /// AsStrided's view read by other loops than `ops::as_strided::reference`, or `None`.
    fn gather_view(&self, _source: &Buffer, _view: &StridedView) -> Option<Buffer> {
        None
    }

    /// Shuffle's three stages of a validated plan in fewer passes, or `None`.
    fn shuffle(&self, _input: &Tensor, _plan: &shuffle::Plan) -> Option<Tensor> {
        None
    }

    /// Scale of a validated plan by other loops than [`scale::reference`], or `None`.
    fn scale(&self, _attrs: &scale::Attrs, _plan: &scale::Plan, _input: &Tensor) -> Option<Tensor> {
        None
    }
}

/// The reference: the plain loops alone.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Plain;

impl Engine for Plain {}

#[cfg(test)]
mod tests {
    /// The engine is chosen by the caller: no source file of this workspace's libraries (this
    /// crate and those of `crates/`) reads a variable (`var`, `var_os` or `vars` of
    /// `std::env`); the runner's binaries and the benches may.
    #[test]
    fn the_libraries_read_no_environment_variable() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut folders = vec![root.join("src")];
        for entry in std::fs::read_dir(root.join("crates")).expect("crates/ is readable") {
            folders.push(entry.expect("a folder entry").path().join("src"));
        }
        assert!(folders.len() >= 3, "{folders:?}");
        let mut readers = Vec::new();
        while let Some(folder) = folders.pop() {
            let Ok(entries) = std::fs::read_dir(&folder) else {
                continue; // a crate without src/ (none today)
            };
            for entry in entries {
                let path = entry.expect("a folder entry").path();
                if path.is_dir() {
                    folders.push(path);
                } else if path.extension().is_some_and(|e| e == "rs") {
                    let text = std::fs::read_to_string(&path).expect("a source file");
                    for (n, line) in text.lines().enumerate() {
                        // Split so that this line does not name what it looks for.
                        if line.contains(concat!("env::", "var")) {
                            readers.push(format!("{}:{}: {}", path.display(), n + 1, line.trim()));
                        }
                    }
                }
            }
        }
        assert!(
            readers.is_empty(),
            "the libraries read environment variables:\n{}",
            readers.join("\n")
        );
    }
}
