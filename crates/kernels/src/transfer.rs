//! Step 1, normalising: a copy as a [`Transfer`] between two strided sides, its axes
//! folded, turned into strides and merged where the tables allow ([`Transfer::normalize`]),
//! and [`outer`], the walk over the axes a path does not take itself.

use crate::maps::{advance, AxisGather};
use opspec::tensor::row_major_strides;

/// A table entry meaning "fill" (source side) or "not written" (destination side).
pub(crate) const FILL: isize = isize::MIN;

/// One side of one axis: the offset that coordinate `y` adds.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Map {
    /// `y · step`, never fill.
    Affine(isize),
    /// Offsets relative to the base, or [`FILL`].
    Table(Vec<isize>),
}

impl Map {
    /// From a per-axis table: the anchor (first non-fill entry, moved into the base) and the
    /// map of the rest relative to it; `None` when every entry is fill.
    fn from_table(table: &[Option<usize>]) -> Option<(isize, Map)> {
        let anchor = table.iter().find_map(|&entry| entry)? as isize;
        // An arithmetic progression from its first entry is kept as its step (checked before
        // any table is built: an AsStrided axis may have millions of entries).
        let step = match table {
            [Some(a), Some(b), ..] => *b as isize - *a as isize,
            _ => 0,
        };
        let affine = table[0].is_some()
            && table.iter().enumerate().all(|(y, entry)| {
                entry.map(|offset| offset as isize) == Some(anchor + y as isize * step)
            });
        if affine {
            return Some((anchor, Map::Affine(step)));
        }
        let relative = table
            .iter()
            .map(|entry| entry.map_or(FILL, |offset| offset as isize - anchor))
            .collect();
        Some((anchor, Map::Table(relative)))
    }

    pub(crate) fn at(&self, y: usize) -> isize {
        match self {
            Map::Affine(step) => y as isize * step,
            Map::Table(table) => table[y],
        }
    }

    pub(crate) fn has_fill(&self) -> bool {
        matches!(self, Map::Table(table) if table.contains(&FILL))
    }

    /// `at(1) - at(0)`, when neither is fill.
    pub(crate) fn first_step(&self) -> Option<isize> {
        match self {
            Map::Affine(step) => Some(*step),
            Map::Table(table) => match (table.first(), table.get(1)) {
                (Some(&a), Some(&b)) if a != FILL && b != FILL => Some(b - a),
                _ => None,
            },
        }
    }

    /// The smallest and largest offset over `0..len`, fills ignored.
    pub(crate) fn range(&self, len: usize) -> (isize, isize) {
        match self {
            Map::Affine(step) => {
                let last = (len as isize - 1) * step;
                (last.min(0), last.max(0))
            }
            Map::Table(table) => table
                .iter()
                .filter(|&&offset| offset != FILL)
                .fold((isize::MAX, isize::MIN), |(lo, hi), &offset| {
                    (lo.min(offset), hi.max(offset))
                }),
        }
    }
}

/// One axis of a normalised copy.
#[derive(Clone, Debug)]
pub(crate) struct Axis {
    pub(crate) len: usize,
    pub(crate) dst: Map,
    pub(crate) src: Map,
}

impl Axis {
    /// A table axis that walks `lanes`-long blocks, `y ↦ (y / L)·a + (y % L)·b` on both
    /// sides (a vector format's channel axis), as two strided axes: blocks, then lanes.
    pub(crate) fn split(&self) -> Option<[Axis; 2]> {
        let table = match (&self.dst, &self.src) {
            (Map::Table(t), _) | (_, Map::Table(t)) => t,
            _ => return None,
        };
        if self.dst.has_fill() || self.src.has_fill() {
            return None;
        }
        let step = *table.get(1)? - table[0]; // a cut (see `Transfer::cut`) may leave one entry
        let lanes = (2..table.len()).find(|&y| table[y] - table[y - 1] != step)?;
        if self.len % lanes != 0 {
            return None;
        }
        let mut pair = [(0, 0); 2]; // (outer, inner) step, dst then src
        for (steps, map) in pair.iter_mut().zip([&self.dst, &self.src]) {
            let (outer, inner) = (map.at(lanes), map.at(1));
            let fits = (0..self.len)
                .all(|y| map.at(y) == (y / lanes) as isize * outer + (y % lanes) as isize * inner);
            if !fits {
                return None;
            }
            *steps = (outer, inner);
        }
        Some([
            Axis {
                len: self.len / lanes,
                dst: Map::Affine(pair[0].0),
                src: Map::Affine(pair[1].0),
            },
            Axis {
                len: lanes,
                dst: Map::Affine(pair[0].1),
                src: Map::Affine(pair[1].1),
            },
        ])
    }
}

/// `dst[dst_base + Σ dst(y)] = src[src_base + Σ src(y)]` over every `y`, row-major.
#[derive(Clone, Debug)]
pub(crate) struct Transfer {
    pub(crate) dst_base: isize,
    pub(crate) src_base: isize,
    pub(crate) axes: Vec<Axis>,
}

pub(crate) enum Normal {
    /// Some axis has length 0: nothing moves.
    Empty,
    /// Some axis is fill at every coordinate (source) or never written (destination).
    Vacant,
    Copy(Transfer),
}

impl Transfer {
    /// Folds length-1 axes into the bases and merges neighbouring strided axes.
    pub(crate) fn normalize(mut self) -> Normal {
        if self.axes.iter().any(|axis| axis.len == 0) {
            return Normal::Empty;
        }
        let mut kept: Vec<Axis> = Vec::with_capacity(self.axes.len());
        let axes = self.axes.into_iter().flat_map(|axis| match axis.split() {
            Some(pair) => pair.to_vec(),
            None => vec![axis],
        });
        for axis in axes {
            if axis.len == 1 {
                let (d, s) = (axis.dst.at(0), axis.src.at(0));
                if d == FILL || s == FILL {
                    return Normal::Vacant;
                }
                self.dst_base += d;
                self.src_base += s;
                continue;
            }
            if let Some(outer) = kept.last_mut() {
                if let (Map::Affine(od), Map::Affine(os), Map::Affine(id), Map::Affine(is)) =
                    (&outer.dst, &outer.src, &axis.dst, &axis.src)
                {
                    let n = axis.len as isize;
                    if *od == id * n && *os == is * n {
                        outer.len *= axis.len;
                        outer.dst = axis.dst;
                        outer.src = axis.src;
                        continue;
                    }
                }
            }
            kept.push(axis);
        }
        self.axes = kept;
        Normal::Copy(self)
    }

    /// The coordinates `start..end` of axis `a`, whose destination map must be affine: the same
    /// offsets, that axis's first coordinate moved into the bases.
    pub(crate) fn cut(&self, a: usize, start: usize, end: usize) -> Transfer {
        let mut axes = self.axes.clone();
        let axis = &mut axes[a];
        axis.len = end - start;
        let mut src_base = self.src_base;
        match &mut axis.src {
            Map::Affine(step) => src_base += start as isize * *step,
            // Table entries are relative to the base: the cut keeps its own entries.
            Map::Table(table) => *table = table[start..end].to_vec(),
        }
        Transfer {
            dst_base: self.dst_base + axis.dst.at(start),
            src_base,
            axes,
        }
    }

    /// Whether every offset either side may reach lies inside buffers of these lengths.
    pub(crate) fn in_bounds(&self, dst_len: usize, src_len: usize) -> bool {
        let side = |base: isize, len: usize, map: fn(&Axis) -> &Map| {
            let (mut lo, mut hi) = (base, base);
            for axis in &self.axes {
                let (a, b) = map(axis).range(axis.len);
                if a > b {
                    return true; // every entry is fill: nothing is read on this side
                }
                lo += a;
                hi += b;
            }
            lo >= 0 && (hi as usize) < len
        };
        side(self.dst_base, dst_len, |axis| &axis.dst)
            && side(self.src_base, src_len, |axis| &axis.src)
    }
}

/// The side of a copy that per-axis tables index (the source of a gather, the destination of
/// a scatter): its base with each table's anchor added; the copy's axes, that side's maps
/// against the row-major strides of the tables' shape on the other (`order` says which is
/// `(dst, src)`); and whether some non-empty table has no entry at all, so that no element
/// has an offset on that side.
pub(crate) fn indexed_side(
    tables: &AxisGather,
    order: fn(Map, Map) -> (Map, Map),
) -> (isize, Vec<Axis>, bool) {
    let shape = tables.shape();
    let row_major = row_major_strides(&shape);
    let (mut base, mut vacant) = (tables.base as isize, false);
    let axes = tables
        .tables
        .iter()
        .zip(row_major)
        .map(|(table, stride)| {
            let map = match Map::from_table(table) {
                Some((anchor, map)) => {
                    base += anchor;
                    map
                }
                None => {
                    vacant |= !table.is_empty();
                    Map::Affine(0)
                }
            };
            let (dst, src) = order(map, Map::Affine(stride as isize));
            Axis {
                len: table.len(),
                dst,
                src,
            }
        })
        .collect();
    (base, axes, vacant)
}

/// Calls `each(dst_offset, src_offset)` for every coordinate of the axes not in `skip`, in
/// row-major order; `src_offset` is `None` where some axis is fill, and coordinates where some
/// axis says "not written" are left out.
pub(crate) fn outer<F: FnMut(usize, Option<usize>)>(copy: &Transfer, skip: &[usize], mut each: F) {
    let axes: Vec<&Axis> = copy
        .axes
        .iter()
        .enumerate()
        .filter(|(i, _)| !skip.contains(i))
        .map(|(_, axis)| axis)
        .collect();
    let lens: Vec<usize> = axes.iter().map(|axis| axis.len).collect();
    let count: usize = lens.iter().product();
    let mut index = vec![0usize; axes.len()];
    for _ in 0..count {
        let (mut d, mut s, mut skipped, mut filled) = (copy.dst_base, copy.src_base, false, false);
        for (axis, &y) in axes.iter().zip(&index) {
            match axis.dst.at(y) {
                FILL => skipped = true,
                offset => d += offset,
            }
            match axis.src.at(y) {
                FILL => filled = true,
                offset => s += offset,
            }
        }
        if !skipped {
            each(d as usize, (!filled).then_some(s as usize));
        }
        advance(&mut index, &lens);
    }
}
