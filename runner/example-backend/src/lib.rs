//! Example in-process backends: implementations written in Rust, tested by handing them to
//! the harness (`opspec_runner::run_in_process`) rather than by speaking the wire protocol.
//!
//! [`LayoutEngine`] (`src/engine.rs`) is an engine of its own: Shuffle and Slice computed from
//! the inputs' bits by its own index arithmetic, rejections with the rule's error kind, and a
//! declaration of what it implements. `cargo run --release -p opspec-example-backend --` runs
//! the suite against it and takes the runner's options (`src/main.rs`); `tests/engine.rs`
//! checks that it passes.
//!
//! [`PartialReference`] shows what a declaration does: the reference interpreter with Shuffle
//! and Slice only, and without Slice's reflect mode. It says so in its [`Declaration`], as a
//! backend process does in its hello: the suite then runs only the cases it implements and
//! reports the rest as excluded, counted per declaration. Asked a case it does not implement
//! anyway, it answers `unsupported`. `tests/suite.rs` runs the suite through it and checks the
//! counts, with the declaration and without.

mod engine;

pub use engine::LayoutEngine;

use opspec::ops::{slice, Attrs, Invocation, Op};
use opspec::tensor::Limits;
use opspec::Tensor;
use opspec_runner::{Declaration, InProcessBackend, Refusal};

/// The reference's Shuffle and Slice, without Slice's reflect mode; `declared` says whether
/// it declares that (the default) or leaves the suite to find out.
#[derive(Clone, Copy, Debug)]
pub struct PartialReference {
    pub declared: bool,
}

impl Default for PartialReference {
    fn default() -> PartialReference {
        PartialReference { declared: true }
    }
}

impl InProcessBackend for PartialReference {
    fn name(&self) -> String {
        "partial-reference".into()
    }

    fn declaration(&self) -> Option<Declaration> {
        let modes = ["strict_bounds", "wrap", "clamp", "fill"];
        self.declared.then(|| Declaration {
            ops: vec!["shuffle".into(), "slice".into()],
            attributes: [(
                "slice".to_owned(),
                [("mode".to_owned(), modes.map(String::from).to_vec())].into(),
            )]
            .into(),
            ..Declaration::default()
        })
    }

    fn evaluate(&self, invocation: &Invocation, limits: Limits) -> Result<Vec<Tensor>, Refusal> {
        if ![Op::Shuffle, Op::Slice].contains(&invocation.op()) {
            return Err(Refusal::Unsupported(format!(
                "{} is not implemented",
                invocation.op()
            )));
        }
        if let Attrs::Slice(attrs) = &invocation.attrs {
            if attrs.mode == Some(slice::Mode::Reflect) {
                return Err(Refusal::Unsupported("slice mode reflect".into()));
            }
        }
        Ok(opspec::ops::evaluate(invocation, limits)?)
    }
}
