//! The choice of path for a normalised copy: rows, tiles or the plain loop ([`walk`]).

use crate::transfer::{Axis, Map, Transfer};

/// The kinds of walk a copy is moved by.
pub(crate) enum Walk {
    /// One element.
    Single,
    /// [`tiles`] over axes `p` and `q`, in chunks of `chunk` elements.
    Tiles { p: usize, q: usize, chunk: usize },
    /// [`rows`] of the innermost axis.
    Rows,
}

/// The walk for `copy`, whose words are `size` bytes.
pub(crate) fn walk(copy: &Transfer, size: usize) -> Walk {
    let Some(inner) = copy.axes.last() else {
        return Walk::Single;
    };
    let contiguous = inner.dst == Map::Affine(1) && inner.src == Map::Affine(1);
    if contiguous {
        // Rows that are contiguous on both sides: copied whole, unless they are shorter than a
        // cache line, then moved as chunks of a tiled transpose when one fits.
        if inner.len * size < 64 {
            if let Some((p, q)) = tile_axes(&copy.axes[..copy.axes.len() - 1], inner.len) {
                return Walk::Tiles {
                    p,
                    q,
                    chunk: inner.len,
                };
            }
        }
        return Walk::Rows;
    }
    let rows_fit = inner.dst == Map::Affine(1)
        && match inner.src {
            Map::Affine(step) => step.abs() <= 1,
            Map::Table(_) => true,
        };
    if !rows_fit {
        if let Some((p, q)) = tile_axes(&copy.axes, 1) {
            return Walk::Tiles { p, q, chunk: 1 };
        }
    }
    Walk::Rows
}

/// For a tiled walk in chunks of `chunk` elements: `q`, the innermost axis whose step in the
/// destination is one chunk, and `p`, the innermost other axis whose step in the source is one
/// chunk; neither with fill on either side.
fn tile_axes(axes: &[Axis], chunk: usize) -> Option<(usize, usize)> {
    let chunk = chunk as isize;
    let clean = |axis: &Axis| !axis.dst.has_fill() && !axis.src.has_fill();
    let q = axes
        .iter()
        .rposition(|axis| clean(axis) && axis.dst.first_step() == Some(chunk))?;
    let p = axes
        .iter()
        .enumerate()
        .rposition(|(i, axis)| i != q && clean(axis) && axis.src.first_step() == Some(chunk))?;
    Some((p, q))
}
