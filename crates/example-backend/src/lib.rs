//! An example in-process backend: an implementation written in Rust, tested by handing it to
//! the harness (`opspec_runner::run_in_process`) rather than by speaking the wire protocol.
//!
//! [`PartialReference`] is the reference interpreter on its plain loops that does not
//! implement Slice's reflect mode: it answers `unsupported` for it, as a backend that lacks a
//! feature does, and the suite reports those trials as unsupported rather than failed.
//! `tests/suite.rs` runs the suite through it and checks the counts.

use opspec::ops::{slice, Attrs, Invocation};
use opspec::Tensor;
use opspec_runner::{InProcessBackend, Refusal};

/// The reference, without Slice's reflect mode.
#[derive(Clone, Copy, Debug, Default)]
pub struct PartialReference;

impl InProcessBackend for PartialReference {
    fn name(&self) -> String {
        "partial-reference".into()
    }

    fn evaluate(&self, invocation: &Invocation) -> Result<Vec<Tensor>, Refusal> {
        if let Attrs::Slice(attrs) = &invocation.attrs {
            if attrs.mode == Some(slice::Mode::Reflect) {
                return Err(Refusal::Unsupported("slice mode reflect".into()));
            }
        }
        Ok(opspec::ops::evaluate(invocation)?)
    }
}
