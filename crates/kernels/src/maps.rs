//! Index maps: where each element of an output comes from, as the kernels move it.
//!
//! Slice and Reformat produce an output whose element at `(y_0, …, y_{n-1})` is the input
//! element at flat offset `base + Σ_i table_i[y_i]`, or a fill value where any axis says
//! "outside". [`AxisGather`] holds those per-axis tables; [`crate::gather`] applies one to a
//! buffer of any width. The rules come from the ops' plans (`opspec::ops::slice::Plan::
//! source_coordinate`, `opspec::ops::reformat::Image::axis_slots`); this module only turns them
//! into tables.
//!
//! **Cost.** A table has one entry per coordinate of its axis, so the tables of a map cost
//! the sum of its dims, whatever its element count: a shape `[0, 2^32]` holds no element but
//! would need 2^32 entries, and a 1-D int8 output 16 bytes of table per byte of output. The
//! ops' maps are therefore given as rules ([`IndexMap`]: a stride, or a function of the
//! coordinate), and [`gather_map`] and [`scatter_map`] build tables from them only for outputs
//! that hold elements, and at most [`TABLE_ENTRIES`] entries at a time: a map whose dims add
//! up to more is applied in blocks, each a contiguous stretch of the row-major side of at
//! most [`BLOCK_ELEMENTS`] elements (or one row of the block axis's inner axes), the last
//! axes' tables built once and the block axis's table built per block. A strided map
//! ([`StridedView`]: AsStrided, Shuffle's transposes) needs no table at all. So an op's memory
//! is its input and output plus a bounded amount (docs/protocol.md, "Memory").
//!
//! The plain table loops below ([`gather_reference`], [`scatter_reference`]) move one element
//! at a time, in row-major order: the kernels' fallback for a map that reaches outside its
//! buffer, and their oracle in the tests.

use std::fmt;
use std::ops::Range;

use opspec::tensor::Buffer;

/// The most table entries [`gather_map`] and [`scatter_map`] build at a time (4 MiB of
/// tables, and half as much again in the fast paths' own form of them).
pub const TABLE_ENTRIES: usize = 1 << 18;

/// The most elements of one block of a blocked [`gather_map`] (at most 8 MiB, held beside the
/// output while it is copied in).
pub const BLOCK_ELEMENTS: usize = 1 << 20;

/// Per output axis, the flat input offset each coordinate contributes (`None` = fill).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AxisGather {
    pub base: usize,
    pub tables: Vec<Vec<Option<usize>>>,
}

impl AxisGather {
    /// The output shape: one dim per table.
    pub fn shape(&self) -> Vec<usize> {
        self.tables.iter().map(Vec::len).collect()
    }
}

/// A strided view of a flat buffer, `out[y] = source[base + Σ y_i · strides_i]` (AsStrided,
/// Shuffle's transposes), kept as strides: one axis of a view may have millions of
/// coordinates, whose table of offsets is never built.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StridedView {
    pub shape: Vec<usize>,
    pub strides: Vec<usize>,
    pub base: usize,
}

/// The offset that coordinate `y` of an axis adds, or `None` (fill / not written).
pub type AxisRule<'a> = Box<dyn Fn(usize) -> Option<usize> + Send + Sync + 'a>;

/// One axis of an [`IndexMap`].
pub enum MapAxis<'a> {
    /// `y · stride`.
    Strided { len: usize, stride: usize },
    /// Any other rule.
    Rule { len: usize, offset: AxisRule<'a> },
}

impl MapAxis<'_> {
    pub fn len(&self) -> usize {
        match self {
            MapAxis::Strided { len, .. } | MapAxis::Rule { len, .. } => *len,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The offset coordinate `y` adds.
    pub fn at(&self, y: usize) -> Option<usize> {
        match self {
            MapAxis::Strided { stride, .. } => Some(y * stride),
            MapAxis::Rule { offset, .. } => offset(y),
        }
    }

    /// The table of the coordinates `range`.
    fn table(&self, range: Range<usize>) -> Vec<Option<usize>> {
        range.map(|y| self.at(y)).collect()
    }
}

impl fmt::Debug for MapAxis<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MapAxis::Strided { len, stride } => {
                write!(f, "Strided {{ len: {len}, stride: {stride} }}")
            }
            MapAxis::Rule { len, .. } => write!(f, "Rule {{ len: {len} }}"),
        }
    }
}

/// An index map given per axis as a rule (`out[y] = in[base + Σ_i rule_i(y_i)]`), built into
/// tables only where and as far as it is applied (see the module doc's *Cost*).
#[derive(Debug)]
pub struct IndexMap<'a> {
    pub base: usize,
    pub axes: Vec<MapAxis<'a>>,
}

impl IndexMap<'_> {
    /// The output shape: one dim per axis.
    pub fn shape(&self) -> Vec<usize> {
        self.axes.iter().map(MapAxis::len).collect()
    }

    /// The whole map as tables.
    pub fn tables(&self) -> AxisGather {
        AxisGather {
            base: self.base,
            tables: self.axes.iter().map(|a| a.table(0..a.len())).collect(),
        }
    }

    /// The blocks of a map too large to build whole: `(k, step)`: every coordinate of the
    /// axes before `k` in turn, `step` coordinates of axis `k` at a time, axes after `k`
    /// whole; `None` when the whole map fits in [`TABLE_ENTRIES`].
    fn blocks(&self) -> Option<(usize, usize)> {
        let shape = self.shape();
        if shape.iter().sum::<usize>() <= TABLE_ENTRIES {
            return None;
        }
        // The outermost axis whose inner axes fit in half the tables and in a block.
        let mut k = shape.len() - 1;
        let (mut inner_sum, mut inner_volume) = (0usize, 1usize);
        while k > 0 {
            let sum = inner_sum + shape[k];
            let volume = inner_volume.saturating_mul(shape[k]);
            if sum > TABLE_ENTRIES / 2 || volume > BLOCK_ELEMENTS {
                break;
            }
            (inner_sum, inner_volume) = (sum, volume);
            k -= 1;
        }
        let step = (TABLE_ENTRIES - inner_sum)
            .min(BLOCK_ELEMENTS / inner_volume)
            .clamp(1, shape[k].max(1));
        Some((k, step))
    }

    /// Calls `each(block_tables, elements)` for every block of [`IndexMap::blocks`] in
    /// row-major order; `block_tables` is `None` where an axis before `k` says fill.
    fn for_each_block(
        &self,
        (k, step): (usize, usize),
        mut each: impl FnMut(Option<&AxisGather>, usize),
    ) {
        let shape = self.shape();
        let slab: usize = shape[k + 1..].iter().product();
        let mut block = AxisGather {
            base: 0,
            tables: std::iter::once(Vec::new())
                .chain(self.axes[k + 1..].iter().map(|a| a.table(0..a.len())))
                .collect(),
        };
        let mut outer = vec![0usize; k];
        for _ in 0..shape[..k].iter().product::<usize>() {
            let base = outer
                .iter()
                .zip(&self.axes)
                .try_fold(self.base, |base, (&y, axis)| Some(base + axis.at(y)?));
            for start in (0..shape[k]).step_by(step) {
                let end = (start + step).min(shape[k]);
                match base {
                    None => each(None, (end - start) * slab),
                    Some(base) => {
                        block.base = base;
                        block.tables[0] = self.axes[k].table(start..end);
                        each(Some(&block), (end - start) * slab);
                    }
                }
            }
            advance(&mut outer, &shape[..k]);
        }
    }
}

/// [`crate::gather`] of an [`IndexMap`], its tables built only for an output that holds
/// elements, at most [`TABLE_ENTRIES`] entries at a time.
pub fn gather_map(source: &Buffer, map: &IndexMap, fill_bits: u64) -> Buffer {
    let volume: usize = map.shape().iter().product();
    if volume == 0 {
        return map_buffer!(source, _input => Vec::new());
    }
    let Some(blocks) = map.blocks() else {
        return crate::gather(source, &map.tables(), fill_bits);
    };
    let mut output = map_buffer!(source, _input => Vec::with_capacity(volume));
    map.for_each_block(blocks, |tables, elements| match tables {
        None => with_buffer!(&mut output, out => out.resize(out.len() + elements, fill_bits as _)),
        Some(tables) => append(&mut output, &crate::gather(source, tables, fill_bits)),
    });
    output
}

/// [`crate::scatter`] of an [`IndexMap`], its tables built as [`gather_map`] builds them; a
/// map too large to build whole is scattered block by block by the plain loop.
pub fn scatter_map(source: &Buffer, map: &IndexMap, len: usize, fill_bits: u64) -> Buffer {
    let volume: usize = map.shape().iter().product();
    if volume == 0 {
        return map_buffer!(source, _input => vec![fill_bits as _; len]);
    }
    let Some(blocks) = map.blocks() else {
        return crate::scatter(source, &map.tables(), len, fill_bits);
    };
    assert_eq!(
        source.len(),
        volume,
        "scatter source does not match the map's shape"
    );
    map_buffer!(source, input => {
        let mut output = vec![fill_bits as _; len];
        let mut at = 0;
        map.for_each_block(blocks, |tables, elements| {
            if let Some(tables) = tables {
                scatter_block(&mut output, &input[at..at + elements], tables);
            }
            at += elements;
        });
        output
    })
}

/// Appends `block` to `output`, a buffer of the same width.
fn append(output: &mut Buffer, block: &Buffer) {
    match (output, block) {
        (Buffer::W8(out), Buffer::W8(block)) => out.extend_from_slice(block),
        (Buffer::W16(out), Buffer::W16(block)) => out.extend_from_slice(block),
        (Buffer::W32(out), Buffer::W32(block)) => out.extend_from_slice(block),
        (Buffer::W64(out), Buffer::W64(block)) => out.extend_from_slice(block),
        _ => unreachable!("a gather keeps its source's width"),
    }
}

/// The plain gather: `out[y] = source[base + Σ table_i[y_i]]`, or `fill_bits` where a table
/// says `None`, element by element in row-major order.
pub fn gather_reference(source: &Buffer, tables: &AxisGather, fill_bits: u64) -> Buffer {
    let shape = tables.shape();
    let volume: usize = shape.iter().product();
    let mut index = vec![0usize; shape.len()];
    map_buffer!(source, input => {
        let mut output = Vec::with_capacity(volume);
        for _ in 0..volume {
            let mut offset = Some(tables.base);
            for (table, &y) in tables.tables.iter().zip(&index) {
                offset = offset.zip(table[y]).map(|(a, b)| a + b);
            }
            output.push(match offset {
                Some(offset) => input[offset],
                None => fill_bits as _,
            });
            advance(&mut index, &shape);
        }
        output
    })
}

/// The plain scatter, the inverse movement: a buffer of `len` elements, all `fill_bits`, into
/// which element `y` of `source` (row-major in the tables' shape) is written at
/// `base + Σ table_i[y_i]`; elements where a table says `None` are dropped. The offsets must be
/// distinct (a memory image has one slot per element), and `source` must hold exactly the
/// tables' volume. Element by element in the source's row-major order.
pub fn scatter_reference(
    source: &Buffer,
    tables: &AxisGather,
    len: usize,
    fill_bits: u64,
) -> Buffer {
    let shape = tables.shape();
    let volume: usize = shape.iter().product();
    assert_eq!(
        source.len(),
        volume,
        "scatter source does not match the tables' shape"
    );
    map_buffer!(source, input => {
        let mut output = vec![fill_bits as _; len];
        scatter_block(&mut output, input, tables);
        output
    })
}

/// Writes element `y` of `input` (row-major in the tables' shape) to
/// `output[base + Σ table_i[y_i]]`, skipping fill entries.
fn scatter_block<T: Copy>(output: &mut [T], input: &[T], tables: &AxisGather) {
    let shape = tables.shape();
    let mut index = vec![0usize; shape.len()];
    for &element in input {
        let mut offset = Some(tables.base);
        for (table, &y) in tables.tables.iter().zip(&index) {
            offset = offset.zip(table[y]).map(|(a, b)| a + b);
        }
        if let Some(offset) = offset {
            output[offset] = element;
        }
        advance(&mut index, &shape);
    }
}

/// Steps a row-major odometer: the coordinates after `index` in a tensor of `shape` (back to
/// all zeros after the last).
pub fn advance(index: &mut [usize], shape: &[usize]) {
    for axis in (0..shape.len()).rev() {
        index[axis] += 1;
        if index[axis] < shape[axis] {
            return;
        }
        index[axis] = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transpose_of_a_matrix() {
        {
            let source = Buffer::W32((0..6).collect());
            // The transpose of a row-major [2, 3]: output axis 0 steps 1, axis 1 steps 3.
            let tables = AxisGather {
                base: 0,
                tables: vec![vec![Some(0), Some(1), Some(2)], vec![Some(0), Some(3)]],
            };
            assert_eq!(tables.shape(), vec![3, 2]);
            assert_eq!(
                gather_reference(&source, &tables, 0),
                Buffer::W32(vec![0, 3, 1, 4, 2, 5])
            );
        }
    }

    #[test]
    fn fill_where_a_table_says_outside() {
        {
            let source = Buffer::W8(vec![1, 2]);
            let tables = AxisGather {
                base: 0,
                tables: vec![vec![Some(0), None, Some(1)]],
            };
            assert_eq!(
                gather_reference(&source, &tables, 9),
                Buffer::W8(vec![1, 9, 2])
            );
        }
    }

    #[test]
    fn maps_too_large_to_build_whole_are_applied_in_blocks() {
        {
            // [3, L, 2]: axis 0 reads rows 0, fill, 10; axis 1 wraps backwards over 5 columns,
            // L past the table limit; axis 2 is strided. Blocks cut axis 1.
            let len = TABLE_ENTRIES + 1001;
            let map = IndexMap {
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
            assert_eq!(map.blocks(), Some((1, TABLE_ENTRIES - 2)));
            let source = Buffer::W16((0..20).collect());
            let whole = gather_reference(&source, &map.tables(), 0xffff);
            assert_eq!(gather_map(&source, &map, 0xffff), whole);
            // One long axis: blocks of it, in order.
            let long = IndexMap {
                base: 1,
                axes: vec![MapAxis::Rule {
                    len,
                    offset: Box::new(|y| (y % 7 != 3).then_some(y % 2)),
                }],
            };
            assert_eq!(long.blocks(), Some((0, TABLE_ENTRIES)));
            let source = Buffer::W8(vec![5, 6, 7]);
            assert_eq!(
                gather_map(&source, &long, 9),
                gather_reference(&source, &long.tables(), 9)
            );
            // The scatter of a transpose of [2, L] into [L, 2], block by block.
            let transpose = IndexMap {
                base: 0,
                axes: vec![
                    MapAxis::Strided { len: 2, stride: 1 },
                    MapAxis::Strided { len, stride: 2 },
                ],
            };
            assert!(transpose.blocks().is_some());
            let source = Buffer::W32((0..2 * len as u32).collect());
            assert_eq!(
                scatter_map(&source, &transpose, 2 * len + 3, 7),
                scatter_reference(&source, &transpose.tables(), 2 * len + 3, 7)
            );
        }
    }

    #[test]
    fn maps_with_no_element_build_nothing() {
        {
            // 2^40 entries of table would not fit in memory: the map is never built.
            let map = IndexMap {
                base: 0,
                axes: vec![
                    MapAxis::Strided { len: 0, stride: 1 },
                    MapAxis::Strided {
                        len: 1 << 40,
                        stride: 1,
                    },
                ],
            };
            let source = Buffer::W8(vec![1, 2]);
            assert_eq!(gather_map(&source, &map, 0), Buffer::W8(vec![]));
            assert_eq!(scatter_map(&source, &map, 2, 4), Buffer::W8(vec![4, 4]));
            let view = StridedView {
                shape: vec![1 << 40, 0],
                strides: vec![1, 1],
                base: 0,
            };
            assert_eq!(crate::gather_view(&source, &view), Buffer::W8(vec![]));
        }
    }

    #[test]
    fn scalar_and_empty_outputs() {
        {
            let source = Buffer::W16(vec![7]);
            let scalar = AxisGather {
                base: 0,
                tables: vec![],
            };
            assert_eq!(gather_reference(&source, &scalar, 0), Buffer::W16(vec![7]));
            let empty = AxisGather {
                base: 0,
                tables: vec![vec![Some(0), Some(1)], vec![]],
            };
            assert_eq!(gather_reference(&source, &empty, 0), Buffer::W16(vec![]));
        }
    }
}
