//! opspec-kernels: the fast engine of the opspec reference interpreter.
//!
//! A crate of its own because the reference never needs it: each op of `opspec` checks an
//! invocation into a plan ([`opspec::ops::plan`]) and evaluates it by its plain rule
//! ([`opspec::ops::Plan::evaluate`]); [`fast`] evaluates the same plan by the kernels below
//! (index maps built from the plan's rules, [`maps`]), Scale's element loop by typed loops
//! ([`scale`]) and Shuffle's three stages by one pass where the reshape needs no copy
//! ([`shuffle`]). Outputs below [`THRESHOLD`] elements ([`SCALE_THRESHOLD`] for Scale) stay
//! on the plain evaluation, which can be faster there (BENCHMARKS.md, "Engine threshold");
//! [`kernels`] is the same without the threshold.
//!
//! # The layout kernels
//!
//! Fast paths for the index maps of [`maps`]: the same results as its plain table loops
//! ([`maps::gather_reference`], [`maps::scatter_reference`]), reached by other means, and
//! tested against them on generated tables of every dtype (the tests also check that the
//! generated tables take every path below), and against the reference's evaluation of each op.
//!
//! 1. **Normalise** the map (`transfer.rs`). An element moves from `src[s + Σ src_i(y_i)]` to
//!    `dst[d + Σ dst_i(y_i)]`; length-1 axes are folded into `s` and `d`, per-axis tables that
//!    are arithmetic progressions become strides, a table that walks blocks of lanes
//!    (`(y / L)·a + (y % L)·b`, a vector format's channel axis) becomes two strided axes, and
//!    neighbouring axes that together walk one stride on both sides are merged: a crop becomes
//!    a 2-D copy of rows, NCHW → NHWC a 2-D transpose of `[C, H·W]`.
//! 2. **Rows** (`rows.rs`, the choice of walk in `walk.rs`): when the innermost axis is contiguous in the destination, it is cut once into
//!    runs — fill, contiguous (`copy_from_slice`), reversed, repeated, strided — which every row
//!    replays; rows of one contiguous run at fixed steps go through a tight loop.
//! 3. **Tiles** (`tiles.rs`): when the innermost axis jumps through memory on one side while another axis
//!    walks the other side contiguously (transposes, the vector formats), the two are walked in
//!    blocks: long source runs are transposed into a local buffer (square blocks of 4 × 4 or
//!    8 × 8 words, transposed in registers, see [`words`]; or a deinterleave / interleave of a
//!    few lanes), which is written out in destination runs, or, when the block is itself one
//!    destination run, built in the destination directly. Rows shorter than a cache line that
//!    are contiguous on both sides are moved as chunks of such a transpose. Source runs that
//!    are far apart are asked for a group ahead (a prefetch hint), as are the rows of a
//!    strided row copy.
//!
//! 4. **Threads** (`threads.rs`, each piece moved by `dispatch.rs`): a gather or scatter that moves 4 MiB or more is cut into a few pieces per
//!    core, each a smaller copy of the same kind taken through the steps above, which one
//!    thread per core takes from a shared queue. Pieces write disjoint stretches of the
//!    output: they are cut along the axis with the largest destination step when every other
//!    axis stays within one of its steps (a gather's outermost axis; for a scatter into a
//!    vector format's image, its batch or pixel axis), and end on huge-page boundaries. An axis
//!    shorter than the number of pieces (a batch of 2, a format's 2 channel blocks) is cut
//!    into its coordinates, each cut further the same way, unless the pieces would share the
//!    source's cache lines. Each thread also sets the stretch it takes to the output's
//!    initial value, just before writing it; or, for rows written in order into a large
//!    output, streams them into it unset.
//!
//! A map that reaches outside its buffer is handed to the plain loop, which panics on the same
//! element it always did; the fast paths never see one. Everything here is safe code except
//! [`pages`], which asks for huge pages for large outputs and lets the threads that write an
//! output set its initial value part by part, and [`stream`], which writes the
//! rows of a large stored block whose rows lie far apart past the caches (the register
//! transposes and the prefetch hints go through `safe_arch`'s safe wrappers).

// Allowed in two places: `pages` (madvise, outputs set part by part) and `stream` (streamed
// stores), both measured in BENCHMARKS.md.
#![deny(unsafe_code)]

use opspec::tensor::{row_major_strides, Buffer};

/// Applies `$body` to the vector inside a [`Buffer`], whatever its width.
macro_rules! with_buffer {
    ($buffer:expr, $vec:ident => $body:expr) => {
        match $buffer {
            Buffer::W8($vec) => $body,
            Buffer::W16($vec) => $body,
            Buffer::W32($vec) => $body,
            Buffer::W64($vec) => $body,
        }
    };
}

/// Like [`with_buffer!`], wrapping a resulting `Vec` of the same width back into a `Buffer`.
macro_rules! map_buffer {
    ($buffer:expr, $vec:ident => $body:expr) => {
        match $buffer {
            Buffer::W8($vec) => Buffer::W8($body),
            Buffer::W16($vec) => Buffer::W16($body),
            Buffer::W32($vec) => Buffer::W32($body),
            Buffer::W64($vec) => Buffer::W64($body),
        }
    };
}

/// Counts the paths taken, so that a test can show the generated tables reach every one.
#[cfg(test)]
pub(crate) mod coverage;

/// Records a path in test builds; nothing otherwise.
macro_rules! hit {
    ($path:ident) => {
        #[cfg(test)]
        crate::coverage::hit(crate::coverage::Path::$path);
    };
}

// The layers of the layout kernels, each taking only from those above it.
mod dispatch;
mod rows;
mod threads;
mod tiles;
mod transfer;
mod walk;

mod evaluate;
pub mod maps;
pub mod pages;
pub mod scale;
pub mod shuffle;
pub mod stream;
pub mod words;

pub use evaluate::{evaluate, fast, kernels, SCALE_THRESHOLD, THRESHOLD};
use maps::{gather_reference, scatter_reference, AxisGather, StridedView};
use threads::run_split;
use transfer::{indexed_side, Axis, Map, Normal, Transfer};
pub use words::Word;

/// [`maps::gather_reference`], fast.
pub fn gather(source: &Buffer, tables: &AxisGather, fill_bits: u64) -> Buffer {
    let (src_base, axes, vacant) = indexed_side(tables, |table, row_major| (row_major, table));
    let copy = Transfer {
        dst_base: 0,
        src_base,
        axes,
    };
    gather_copy(source, copy, vacant, fill_bits, || {
        gather_reference(source, tables, fill_bits)
    })
}

/// A strided view (AsStrided, a Shuffle's transposes) read by the kernels: the view's strides
/// are the copy's source maps. The same bits as `opspec::ops::as_strided::evaluate`.
pub fn gather_view(source: &Buffer, view: &StridedView) -> Buffer {
    let row_major = row_major_strides(&view.shape);
    let axes = view
        .shape
        .iter()
        .zip(&view.strides)
        .zip(row_major)
        .map(|((&len, &stride), row_major)| Axis {
            len,
            dst: Map::Affine(row_major as isize),
            src: Map::Affine(stride as isize),
        })
        .collect();
    let copy = Transfer {
        dst_base: 0,
        src_base: view.base as isize,
        axes,
    };
    gather_copy(source, copy, false, 0, || {
        gather_reference(source, &view_tables(view), 0)
    })
}

/// A strided view as per-axis tables, for the plain loop.
pub fn view_tables(view: &StridedView) -> AxisGather {
    strided_tables(&view.shape, &view.strides, view.base)
}

/// `out[y] = in[base + Σ y_i · strides_i]` as per-axis tables.
pub fn strided_tables(shape: &[usize], strides: &[usize], base: usize) -> AxisGather {
    let tables = shape
        .iter()
        .zip(strides)
        .map(|(&dim, &stride)| (0..dim).map(|y| Some(y * stride)).collect())
        .collect();
    AxisGather { base, tables }
}

/// NumPy transpose of a row-major tensor of `shape` as per-axis tables: output axis `i` is
/// input axis `perm[i]`, a permutation of `0..shape.len()`.
pub fn transpose_tables(shape: &[usize], perm: &[usize]) -> AxisGather {
    let strides = row_major_strides(shape);
    let out_shape: Vec<usize> = perm.iter().map(|&axis| shape[axis]).collect();
    let out_strides: Vec<usize> = perm.iter().map(|&axis| strides[axis]).collect();
    strided_tables(&out_shape, &out_strides, 0)
}

/// A gather's output from its copy (`vacant`: every element is fill); a copy that reaches
/// outside `source` is handed to `reference`, the plain loop.
fn gather_copy(
    source: &Buffer,
    copy: Transfer,
    vacant: bool,
    fill_bits: u64,
    reference: impl FnOnce() -> Buffer,
) -> Buffer {
    let volume: usize = copy.axes.iter().map(|axis| axis.len).product();
    let normal = if vacant {
        // Every output element has a fill coordinate (unless the output is empty).
        if volume == 0 {
            Normal::Empty
        } else {
            Normal::Vacant
        }
    } else {
        copy.normalize()
    };
    match normal {
        Normal::Empty => {
            hit!(Empty);
            map_buffer!(source, _input => Vec::new())
        }
        Normal::Vacant => {
            hit!(Vacant);
            map_buffer!(source, _input => pages::filled(volume, fill_bits as _))
        }
        Normal::Copy(copy) if copy.in_bounds(volume, source.len()) => {
            map_buffer!(source, input => {
                // Every element is written (fill included): zero is only the start.
                run_split(volume, 0, input, &copy, fill_bits as _)
            })
        }
        Normal::Copy(_) => {
            hit!(Outside);
            reference()
        }
    }
}

/// [`maps::scatter_reference`], fast.
pub fn scatter(source: &Buffer, tables: &AxisGather, len: usize, fill_bits: u64) -> Buffer {
    let (dst_base, axes, vacant) = indexed_side(tables, |table, row_major| (table, row_major));
    let copy = Transfer {
        dst_base,
        src_base: 0,
        axes,
    };
    let volume: usize = tables.shape().iter().product();
    let normal = if vacant {
        Normal::Vacant
    } else {
        copy.normalize()
    };
    match normal {
        Normal::Empty | Normal::Vacant if source.len() == volume => {
            hit!(Vacant);
            map_buffer!(source, _input => pages::filled(len, fill_bits as _))
        }
        Normal::Copy(copy) if source.len() == volume && copy.in_bounds(len, source.len()) => {
            map_buffer!(source, input => {
                // Elements the copy does not write are fill.
                run_split(len, fill_bits as _, input, &copy, fill_bits as _)
            })
        }
        _ => {
            hit!(Outside);
            scatter_reference(source, tables, len, fill_bits)
        }
    }
}

#[cfg(test)]
mod tests;
