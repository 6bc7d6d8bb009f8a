//! The fast engine, and the choice of engine a runner offers its users.

use std::fmt;
use std::str::FromStr;

use opspec::engine::{Engine, Plain};
use opspec::layout::{AxisGather, StridedView};
use opspec::ops::{scale, shuffle, Invocation};
use opspec::tensor::{Buffer, Tensor};
use opspec::OpError;

/// Layout outputs (gathers, scatters, views, Shuffle) of fewer elements than this stay on the
/// plain loops: below it, the kernels' set-up (normalising the map, cutting runs, tiles) can
/// cost more than it saves. Set by measurement (`benches/threshold.rs`; BENCHMARKS.md, "Engine
/// threshold"): the size from which every measured op ran faster on the kernels.
pub const THRESHOLD: usize = 4096;

/// Scale on fewer elements than this stays on the plain loop; its typed loops measured faster
/// from here on (BENCHMARKS.md, "Engine threshold").
pub const SCALE_THRESHOLD: usize = 16;

/// The fast engine: [`Kernels`] on outputs of [`THRESHOLD`] elements or more (Scale:
/// [`SCALE_THRESHOLD`]), [`Plain`] below. The same bits as [`Plain`], and never slower than it
/// (BENCHMARKS.md).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Fast;

impl Engine for Fast {
    fn gather(&self, source: &Buffer, plan: &AxisGather, fill_bits: u64) -> Buffer {
        if volume(&plan.shape()) < THRESHOLD {
            return Plain.gather(source, plan, fill_bits);
        }
        Kernels.gather(source, plan, fill_bits)
    }

    fn scatter(&self, source: &Buffer, plan: &AxisGather, len: usize, fill_bits: u64) -> Buffer {
        if source.len() < THRESHOLD {
            return Plain.scatter(source, plan, len, fill_bits);
        }
        Kernels.scatter(source, plan, len, fill_bits)
    }

    fn gather_view(&self, source: &Buffer, view: &StridedView) -> Option<Buffer> {
        if volume(&view.shape) < THRESHOLD {
            return None;
        }
        Kernels.gather_view(source, view)
    }

    fn shuffle(&self, input: &Tensor, plan: &shuffle::Plan) -> Option<Tensor> {
        if input.len() < THRESHOLD {
            return None;
        }
        Kernels.shuffle(input, plan)
    }

    fn scale(&self, attrs: &scale::Attrs, plan: &scale::Plan, input: &Tensor) -> Option<Tensor> {
        if input.len() < SCALE_THRESHOLD {
            return None;
        }
        Kernels.scale(attrs, plan, input)
    }
}

/// The kernels of this crate, Scale's typed loops and Shuffle's one-pass composition at every
/// size: what [`Fast`] runs above its thresholds, and what the tests and the thresholds'
/// measurement (`benches/threshold.rs`) run at every size.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Kernels;

impl Engine for Kernels {
    fn gather(&self, source: &Buffer, plan: &AxisGather, fill_bits: u64) -> Buffer {
        crate::gather(source, plan, fill_bits)
    }

    fn scatter(&self, source: &Buffer, plan: &AxisGather, len: usize, fill_bits: u64) -> Buffer {
        crate::scatter(source, plan, len, fill_bits)
    }

    fn gather_view(&self, source: &Buffer, view: &StridedView) -> Option<Buffer> {
        Some(crate::gather_view(source, view))
    }

    fn shuffle(&self, input: &Tensor, plan: &shuffle::Plan) -> Option<Tensor> {
        Some(crate::shuffle::run(input, plan))
    }

    fn scale(&self, attrs: &scale::Attrs, plan: &scale::Plan, input: &Tensor) -> Option<Tensor> {
        crate::scale::run(attrs, plan, input)
    }
}

/// The element count of a shape (saturating: a shape too large to hold is above any threshold).
fn volume(shape: &[usize]) -> usize {
    shape
        .iter()
        .try_fold(1usize, |n, &d| n.checked_mul(d))
        .unwrap_or(usize::MAX)
}

/// The engines a runner offers: `plain` (the reference's loops alone) or `fast` (the default).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum EngineChoice {
    /// [`Plain`]: the plain reference loops alone.
    Plain,
    /// [`Fast`]: the kernels (the default).
    #[default]
    Fast,
}

impl EngineChoice {
    pub const ALL: [EngineChoice; 2] = [EngineChoice::Plain, EngineChoice::Fast];

    pub fn name(self) -> &'static str {
        match self {
            EngineChoice::Plain => "plain",
            EngineChoice::Fast => "fast",
        }
    }

    pub fn is_plain(self) -> bool {
        self == EngineChoice::Plain
    }

    /// The engine itself.
    pub fn engine(self) -> &'static dyn Engine {
        match self {
            EngineChoice::Plain => &Plain,
            EngineChoice::Fast => &Fast,
        }
    }

    /// [`opspec::ops::evaluate_with`] on this engine.
    pub fn evaluate(self, invocation: &Invocation) -> Result<Vec<Tensor>, OpError> {
        opspec::ops::evaluate_with(invocation, self.engine())
    }
}

impl fmt::Display for EngineChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An engine name other than `plain` or `fast`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown engine `{0}`: expected `plain` or `fast`")]
pub struct UnknownEngine(pub String);

impl FromStr for EngineChoice {
    type Err = UnknownEngine;

    fn from_str(text: &str) -> Result<EngineChoice, UnknownEngine> {
        EngineChoice::ALL
            .into_iter()
            .find(|engine| engine.name() == text.trim())
            .ok_or_else(|| UnknownEngine(text.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_names_are_errors() {
        for engine in EngineChoice::ALL {
            assert_eq!(engine.name().parse(), Ok(engine));
        }
        assert_eq!(EngineChoice::default(), EngineChoice::Fast);
        assert_eq!(
            "kernels".parse::<EngineChoice>(),
            Err(UnknownEngine("kernels".into()))
        );
    }

    /// A map too large to build whole goes through `opspec::layout`'s blocks, each block on the
    /// kernels: the same bits as the plain loops, gather and scatter.
    #[test]
    fn blocked_maps_on_the_kernels_match_the_plain_loops() {
        use opspec::layout::{gather_map, scatter_map, IndexMap, MapAxis, TABLE_ENTRIES};
        let len = TABLE_ENTRIES + 1001;
        let map = || IndexMap {
            base: 0,
            axes: vec![
                MapAxis::Rule {
                    len: 3,
                    offset: Box::new(|y| [Some(0), None, Some(10)][y]),
                },
                MapAxis::Rule {
                    len,
                    offset: Box::new(|y| Some((4 - y % 5) * 2)),
                },
                MapAxis::Strided { len: 2, stride: 1 },
            ],
        };
        let source = Buffer::W16((0..20).collect());
        assert_eq!(
            gather_map(&source, &map(), 0xffff, &Kernels),
            gather_map(&source, &map(), 0xffff, &Plain)
        );
        let transpose = IndexMap {
            base: 0,
            axes: vec![
                MapAxis::Strided { len: 2, stride: 1 },
                MapAxis::Strided { len, stride: 2 },
            ],
        };
        let source = Buffer::W32((0..2 * len as u32).collect());
        assert_eq!(
            scatter_map(&source, &transpose, 2 * len + 3, 7, &Kernels),
            scatter_map(&source, &transpose, 2 * len + 3, 7, &Plain)
        );
    }
}
