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
//! 1. **Normalise** the map. An element moves from `src[s + Σ src_i(y_i)]` to
//!    `dst[d + Σ dst_i(y_i)]`; length-1 axes are folded into `s` and `d`, per-axis tables that
//!    are arithmetic progressions become strides, a table that walks blocks of lanes
//!    (`(y / L)·a + (y % L)·b`, a vector format's channel axis) becomes two strided axes, and
//!    neighbouring axes that together walk one stride on both sides are merged: a crop becomes
//!    a 2-D copy of rows, NCHW → NHWC a 2-D transpose of `[C, H·W]`.
//! 2. **Rows**: when the innermost axis is contiguous in the destination, it is cut once into
//!    runs — fill, contiguous (`copy_from_slice`), reversed, repeated, strided — which every row
//!    replays; rows of one contiguous run at fixed steps go through a tight loop.
//! 3. **Tiles**: when the innermost axis jumps through memory on one side while another axis
//!    walks the other side contiguously (transposes, the vector formats), the two are walked in
//!    blocks: long source runs are transposed into a local buffer (square blocks of 4 × 4 or
//!    8 × 8 words, transposed in registers, see [`words`]; or a deinterleave / interleave of a
//!    few lanes), which is written out in destination runs, or, when the block is itself one
//!    destination run, built in the destination directly. Rows shorter than a cache line that
//!    are contiguous on both sides are moved as chunks of such a transpose. Source runs that
//!    are far apart are asked for a group ahead (a prefetch hint), as are the rows of a
//!    strided row copy.
//!
//! 4. **Threads**: a gather or scatter that moves 4 MiB or more is cut into a few pieces per
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

mod evaluate;
pub mod maps;
pub mod pages;
pub mod scale;
pub mod shuffle;
pub mod stream;
pub mod words;

pub use evaluate::{evaluate, fast, kernels, SCALE_THRESHOLD, THRESHOLD};
use maps::{advance, gather_reference, scatter_reference, AxisGather, StridedView};
use stream::Stores;
pub use words::Word;

/// Counts the paths taken, so that a test can show the generated tables reach every one.
#[cfg(test)]
pub(crate) mod coverage {
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Declares the paths once: the enum, and `ALL` listing every variant in order.
    macro_rules! paths {
        ($($path:ident),* $(,)?) => {
            #[derive(Clone, Copy, Debug)]
            pub enum Path {
                $($path),*
            }

            pub const ALL: &[Path] = &[$(Path::$path),*];
        };
    }

    paths![
        Empty,
        Vacant,
        Outside,
        Single,
        Elements,
        OneRow,
        TightRows,
        Rows,
        FillRun,
        RepeatRun,
        ReversedRun,
        HalvingRun,
        SteppedRun,
        BackSteppedRun,
        FillTile,
        FillInPlace,
        Deinterleave,
        SquareDeinterleave,
        Interleave,
        SquareInterleave,
        Blocks4,
        Blocks8,
        Streamed,
        OneRun,
        TableRun,
        Chunks,
        InPlace,
        LocalStore,
        ScatteredStore,
        Split,
        Pieces,
        NestedPieces,
        PaddedSplit,
        PresetOutput,
        OutputSetInParts,
        AppendedRows,
    ];

    static HITS: [AtomicUsize; ALL.len()] = [const { AtomicUsize::new(0) }; ALL.len()];

    pub fn hit(path: Path) {
        HITS[path as usize].fetch_add(1, Ordering::Relaxed);
    }

    pub fn hits(path: Path) -> usize {
        HITS[path as usize].load(Ordering::Relaxed)
    }
}

/// Records a path in test builds; nothing otherwise.
macro_rules! hit {
    ($path:ident) => {
        #[cfg(test)]
        coverage::hit(coverage::Path::$path);
    };
}

/// A table entry meaning "fill" (source side) or "not written" (destination side).
const FILL: isize = isize::MIN;

/// One side of one axis: the offset that coordinate `y` adds.
#[derive(Clone, Debug, PartialEq)]
enum Map {
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

    fn at(&self, y: usize) -> isize {
        match self {
            Map::Affine(step) => y as isize * step,
            Map::Table(table) => table[y],
        }
    }

    fn has_fill(&self) -> bool {
        matches!(self, Map::Table(table) if table.contains(&FILL))
    }

    /// `at(1) - at(0)`, when neither is fill.
    fn first_step(&self) -> Option<isize> {
        match self {
            Map::Affine(step) => Some(*step),
            Map::Table(table) => match (table.first(), table.get(1)) {
                (Some(&a), Some(&b)) if a != FILL && b != FILL => Some(b - a),
                _ => None,
            },
        }
    }

    /// The smallest and largest offset over `0..len`, fills ignored.
    fn range(&self, len: usize) -> (isize, isize) {
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
struct Axis {
    len: usize,
    dst: Map,
    src: Map,
}

impl Axis {
    /// A table axis that walks `lanes`-long blocks, `y ↦ (y / L)·a + (y % L)·b` on both
    /// sides (a vector format's channel axis), as two strided axes: blocks, then lanes.
    fn split(&self) -> Option<[Axis; 2]> {
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
struct Transfer {
    dst_base: isize,
    src_base: isize,
    axes: Vec<Axis>,
}

enum Normal {
    /// Some axis has length 0: nothing moves.
    Empty,
    /// Some axis is fill at every coordinate (source) or never written (destination).
    Vacant,
    Copy(Transfer),
}

impl Transfer {
    /// Folds length-1 axes into the bases and merges neighbouring strided axes.
    fn normalize(mut self) -> Normal {
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
    fn cut(&self, a: usize, start: usize, end: usize) -> Transfer {
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
    fn in_bounds(&self, dst_len: usize, src_len: usize) -> bool {
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
fn indexed_side(
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

/// Output bytes from which a gather is split across threads. Below it a thread's start-up
/// (tens of µs) is a noticeable share of the op; 4 MiB takes about a millisecond. Tests use a
/// small threshold so that the generated tables cross it both ways.
#[cfg(not(test))]
const PARALLEL_BYTES: usize = 4 << 20;
#[cfg(test)]
const PARALLEL_BYTES: usize = 4 << 10;

/// How many chunks a large gather is cut into: one per core. Tests use 3 (uneven cuts, more
/// than one boundary) whatever the machine.
fn parallel_chunks() -> usize {
    if cfg!(test) {
        return 3;
    }
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// Pieces per thread of a split copy (see [`run_split`]).
const PIECES_PER_THREAD: usize = 4;

/// Where pieces end in the output: on huge-page boundaries. Tests use cache lines, so that
/// their small outputs are cut into several pieces too.
#[cfg(not(test))]
const PIECE_ALIGN: usize = pages::HUGE_PAGE;
#[cfg(test)]
const PIECE_ALIGN: usize = 64;

/// A new output of `len` words, each `initial` unless the copy writes it: [`run`], or for a
/// large copy, cut into pieces that write disjoint stretches of the output (see
/// [`cut_pieces`]), moved by one scoped thread per core. Each thread sets the stretch it takes
/// to `initial` just before writing it ([`pages::Output`]). The layout kernels are bound by the
/// latency of scattered reads and by first-touch page faults of the fresh output more than by
/// memory bandwidth, so a second core helps much (measured: BENCHMARKS.md, "Kernel design measurements", "Threads").
///
/// There are a few pieces per thread, taken from a shared queue, so that a core that is busy
/// elsewhere only slows the op down by the share it could not take: with one fixed half per
/// core, the op waited for the slower core. Many small pieces (2 MiB each) measured slower
/// than halves; four per thread measured as fast as halves (same section). Every element is still written by the same code from the same
/// source offset, and the pieces' writes do not overlap, so the bits do not change.
fn run_split<T: Word + Send + Sync>(
    len: usize,
    initial: T,
    src: &[T],
    copy: &Transfer,
    fill: T,
) -> Vec<T> {
    let output = pages::Output::new(len, initial);
    if output.is_preset() {
        hit!(PresetOutput);
    } else {
        hit!(OutputSetInParts);
    }
    let threads = parallel_chunks();
    let size = std::mem::size_of::<T>();
    let stores = Stores::for_output(len * size);
    let moved: usize = copy.axes.iter().map(|axis| axis.len).product();
    let mut pieces = Vec::new();
    let split = threads >= 2
        && moved * size >= PARALLEL_BYTES
        && cut_pieces(
            copy,
            len,
            (output.address(), size),
            threads * PIECES_PER_THREAD,
            &mut pieces,
        );
    if !split {
        return output.write_in_parts(&[], |parts| {
            for part in parts {
                write(part, src, copy, fill, stores);
            }
        });
    }
    hit!(Split);
    if let Some((a, step)) = outermost(copy) {
        if copy.dst_base != 0 || step * copy.axes[a].len != len {
            // Not the whole output: a scatter into a padded or offset image.
            hit!(PaddedSplit);
        }
    }
    if pieces.len() > 1 {
        hit!(Pieces);
    }
    // Parts between pieces (an image's padding) keep the initial value.
    let cuts: Vec<usize> = pieces
        .iter()
        .flat_map(|piece| [piece.start, piece.end])
        .collect();
    let mut works = pieces.into_iter().map(|piece| piece.work);
    output.write_in_parts(&cuts, |parts| {
        // Every second part, from the second on, is a piece's.
        let parts = parts
            .into_iter()
            .enumerate()
            .map(|(k, part)| (if k % 2 == 1 { works.next() } else { None }, part));
        let queue = std::sync::Mutex::new(parts);
        let work = || loop {
            // The lock is held only to take the next part.
            let next = queue.lock().map(|mut queue| queue.next());
            let Ok(Some((work, part))) = next else {
                return;
            };
            match work {
                Some(Normal::Copy(mut piece)) => {
                    piece.dst_base -= part.start() as isize;
                    write(part, src, &piece, fill, stores);
                }
                // A coordinate whose every element is fill.
                Some(Normal::Vacant) => part.take().fill(fill),
                // Left as the initial value, set here, on the thread that took the part.
                Some(Normal::Empty) | None => drop(part),
            }
        };
        std::thread::scope(|scope| {
            for _ in 1..threads {
                scope.spawn(work);
            }
            // This thread takes parts too, rather than only wait.
            work();
        });
    })
}

/// A piece of a split copy: `work` writes inside `dst[start..end]` (its offsets are still
/// those of the whole `dst`).
struct Piece {
    work: Normal,
    start: usize,
    end: usize,
}

/// Cuts `copy`, which writes inside `dst[copy.dst_base..end]`, into about `count` pieces that
/// write disjoint stretches, pushed in order: along the axis with the largest destination step
/// (a gather's outermost axis; for a scatter into a vector format's image, its batch or pixel
/// axis), when the other axes stay within one of its steps. An axis shorter than `count` (a
/// batch of 2) is cut into its coordinates, each cut further the same way. Pieces end where a
/// huge page of the output does, where the step allows: two threads that fault in the same
/// fresh page wait for each other while the kernel clears it. `at` is the address of `dst[0]`
/// and the size of its word. False, with nothing pushed, when no axis can be cut.
fn cut_pieces(
    copy: &Transfer,
    end: usize,
    at: (usize, usize),
    count: usize,
    pieces: &mut Vec<Piece>,
) -> bool {
    let Some((a, step)) = outermost(copy) else {
        return false;
    };
    let (len, base) = (copy.axes[a].len, copy.dst_base as usize);
    let (origin, size) = at;
    // Pieces that would share the source's cache lines (a cut through a vector format's
    // pixels, 16 of 64 channels each) read each line once per piece: measured, unpack HWC8
    // cut into 4 pieces per image 24.0 → 28.3 ms. Such a copy is not cut.
    let whole_lines = match copy.axes[a].src {
        Map::Affine(step) => step.unsigned_abs() * size * (len / count).max(1) >= 64,
        Map::Table(_) => true,
    };
    if !whole_lines {
        return false;
    }
    if len < count {
        hit!(NestedPieces);
        let each = count.div_ceil(len);
        for y in 0..len {
            let start = base + y * step;
            let stop = if y + 1 == len { end } else { start + step };
            let work = copy.cut(a, y, y + 1).normalize();
            if let Normal::Copy(inner) = &work {
                if each > 1 && cut_pieces(inner, stop, at, each, pieces) {
                    continue;
                }
            }
            pieces.push(Piece {
                work,
                start,
                end: stop,
            });
        }
        return true;
    }
    let (first, bytes, step_bytes) = (origin + base * size, (end - base) * size, step * size);
    // The first coordinate at or past the first huge-page boundary past an even share; an
    // even share when a step spans a huge page.
    let cut = |k: usize| {
        if step_bytes >= PIECE_ALIGN {
            return len * k / count;
        }
        let target = (first + bytes * k / count).next_multiple_of(PIECE_ALIGN);
        (target - first).div_ceil(step_bytes).min(len)
    };
    let mut from = 0;
    for k in 1..=count {
        let to = if k == count { len } else { cut(k) };
        if to <= from {
            continue;
        }
        pieces.push(Piece {
            work: copy.cut(a, from, to).normalize(),
            start: base + from * step,
            // The last piece takes what is left (a padded image may end inside its last step).
            end: if to == len { end } else { base + to * step },
        });
        from = to;
    }
    true
}

/// The axis of `copy` with the largest positive destination step and that step, when every
/// other axis stays within one step of it in the destination (and the base is in `dst`).
fn outermost(copy: &Transfer) -> Option<(usize, usize)> {
    let (a, step) = copy
        .axes
        .iter()
        .enumerate()
        .filter_map(|(i, axis)| match axis.dst {
            Map::Affine(step) if step > 0 && axis.len > 1 => Some((i, step as usize)),
            _ => None,
        })
        .max_by_key(|&(_, step)| step)?;
    let mut inner = (0isize, 0isize);
    for other in copy.axes.iter().enumerate().filter(|&(i, _)| i != a) {
        let (lo, hi) = other.1.dst.range(other.1.len);
        if lo > hi {
            return None;
        }
        inner = (inner.0 + lo, inner.1 + hi);
    }
    let disjoint = copy.dst_base >= 0 && inner.0 >= 0 && inner.1 < step as isize;
    disjoint.then_some((a, step))
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

/// [`run`] into `part`, which holds the output's initial value wherever the copy does not
/// write: set on this thread just before, or never, when the copy [`appends`] every element
/// to a large output, past the caches.
fn write<T: Word>(
    mut part: pages::Part<'_, T>,
    src: &[T],
    copy: &Transfer,
    fill: T,
    stores: Stores,
) {
    // Fresh pages cost nothing to take, and are written in place; so is an output small
    // enough to stay cached (pushing its rows through the cache measured slower than setting
    // it first: strided slice 4.07 → 4.59 ms).
    let streamed = stores == Stores::Streamed && !part.is_preset();
    if streamed && appends(copy, part.len(), std::mem::size_of::<T>()) {
        appended_rows(&mut part, src, copy, fill);
        return stream::fence();
    }
    run(part.take(), src, copy, fill, stores);
}

/// Moves every element of a normalised, in-bounds copy, its destination rows stored as
/// `stores` says; every streamed store is ordered before the return.
fn run<T: Word>(dst: &mut [T], src: &[T], copy: &Transfer, fill: T, stores: Stores) {
    dispatch(dst, src, copy, fill, stores);
    stream::fence();
}

/// [`run`]'s choice of walk.
fn dispatch<T: Word>(dst: &mut [T], src: &[T], copy: &Transfer, fill: T, stores: Stores) {
    match walk(copy, std::mem::size_of::<T>()) {
        Walk::Single => {
            hit!(Single);
            dst[copy.dst_base as usize] = src[copy.src_base as usize];
        }
        Walk::Tiles { p, q, chunk } => tiles(dst, src, copy, p, q, chunk, fill, stores),
        Walk::Rows => rows(dst, src, copy, fill),
    }
}

/// The kinds of walk a copy is moved by.
enum Walk {
    /// One element.
    Single,
    /// [`tiles`] over axes `p` and `q`, in chunks of `chunk` elements.
    Tiles { p: usize, q: usize, chunk: usize },
    /// [`rows`] of the innermost axis.
    Rows,
}

/// The walk for `copy`, whose words are `size` bytes.
fn walk(copy: &Transfer, size: usize) -> Walk {
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

/// Calls `each(dst_offset, src_offset)` for every coordinate of the axes not in `skip`, in
/// row-major order; `src_offset` is `None` where some axis is fill, and coordinates where some
/// axis says "not written" are left out.
fn outer<F: FnMut(usize, Option<usize>)>(copy: &Transfer, skip: &[usize], mut each: F) {
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

/// A run of the innermost axis: `len` elements from destination position `start` on, read
/// from `offset + k · step` (relative to the row's source offset), or fill.
struct Run {
    start: usize,
    len: usize,
    source: Option<(isize, isize)>,
}

/// Cuts a source map into maximal runs of fill or of one step.
fn runs(map: &Map, len: usize) -> Vec<Run> {
    let table = match map {
        Map::Affine(step) => {
            return vec![Run {
                start: 0,
                len,
                source: Some((0, *step)),
            }]
        }
        Map::Table(table) => table,
    };
    let mut runs = Vec::new();
    let mut start = 0;
    while start < len {
        let mut end = start + 1;
        let source = if table[start] == FILL {
            while end < len && table[end] == FILL {
                end += 1;
            }
            None
        } else {
            let step = match table.get(start + 1) {
                Some(&next) if next != FILL => next - table[start],
                _ => 0,
            };
            while end < len && table[end] != FILL && table[end] - table[end - 1] == step {
                end += 1;
            }
            Some((table[start], step))
        };
        runs.push(Run {
            start,
            len: end - start,
            source,
        });
        start = end;
    }
    runs
}

/// Row by row over the innermost axis, the axis before it walked in a tight loop.
fn rows<T: Word>(dst: &mut [T], src: &[T], copy: &Transfer, fill: T) {
    let m = copy.axes.len() - 1;
    let inner = &copy.axes[m];
    if inner.dst != Map::Affine(1) {
        // Scattered writes with no axis to tile against: element by element.
        hit!(Elements);
        return outer(copy, &[], |d, s| match s {
            Some(s) => dst[d] = src[s],
            None => dst[d] = fill,
        });
    }
    let runs = runs(&inner.src, inner.len);
    let len = inner.len;
    let row = |dst: &mut [T], d: usize, s: Option<usize>| {
        let row = &mut dst[d..d + len];
        match s {
            Some(s) => copy_runs(row, src, s, &runs, fill),
            None => row.fill(fill),
        }
    };
    if m == 0 {
        hit!(OneRow);
        return row(dst, copy.dst_base as usize, Some(copy.src_base as usize));
    }
    let second = &copy.axes[m - 1];
    let contiguous = inner.src == Map::Affine(1);
    if let (true, Map::Affine(ds), Map::Affine(ss)) = (contiguous, &second.dst, &second.src) {
        // Contiguous rows at fixed steps (crops, windows, padded images): a tight loop.
        hit!(TightRows);
        let (ds, ss) = (*ds, *ss);
        return outer(copy, &[m - 1, m], |d0, s0| {
            let Some(s0) = s0 else {
                for y in 0..second.len {
                    let d = (d0 as isize + y as isize * ds) as usize;
                    dst[d..d + len].fill(fill);
                }
                return;
            };
            for y in 0..second.len {
                let d = (d0 as isize + y as isize * ds) as usize;
                let s = (s0 as isize + y as isize * ss) as usize;
                copy_short(&mut dst[d..d + len], &src[s..s + len]);
            }
        });
    }
    hit!(Rows);
    each_row(copy, src, true, |d, s| row(dst, d, s));
}

/// Calls `each(d, s)` for every row of the innermost axis, in row-major order: its destination
/// offset and its source offset (`None`: a row of fill); rows the destination leaves out are
/// skipped. Rows read with gaps (a strided slice skips rows and elements) are read too briefly
/// for the hardware prefetcher to follow: where `prefetching`, the lines of the row after next
/// are asked for ahead.
fn each_row<T>(
    copy: &Transfer,
    src: &[T],
    prefetching: bool,
    mut each: impl FnMut(usize, Option<usize>),
) {
    let m = copy.axes.len() - 1;
    let inner = &copy.axes[m];
    if m == 0 {
        return each(copy.dst_base as usize, Some(copy.src_base as usize));
    }
    let second = &copy.axes[m - 1];
    let (lo, hi) = inner.src.range(inner.len);
    let line = (64 / std::mem::size_of::<T>()) as isize;
    let ahead = |s: isize| {
        let mut at = s + lo;
        while at <= s + hi {
            prefetch(&src[at as usize]);
            at += line;
        }
    };
    let prefetching = prefetching && lo <= hi && (hi - lo) < 64 * line;
    outer(copy, &[m - 1, m], |d0, s0| {
        for y in 0..second.len {
            let d = match second.dst.at(y) {
                FILL => continue,
                offset => (d0 as isize + offset) as usize,
            };
            let s = s0.and_then(|s0| match second.src.at(y) {
                FILL => None,
                offset => Some((s0 as isize + offset) as usize),
            });
            if let (true, Some(s0)) = (prefetching, s0) {
                match second.src.at((y + 2).min(second.len - 1)) {
                    FILL => {}
                    offset => ahead(s0 as isize + offset),
                }
            }
            each(d, s);
        }
    });
}

/// The most bytes of a row with gaps that [`appended_rows`] builds in a local buffer (which
/// stays in the nearest cache).
const LOCAL_ROW_BYTES: usize = 16 << 10;

/// Whether `copy` is moved by [`rows`] and writes a destination of `len` words whole, once, in
/// order from its start (a gather's piece), with rows contiguous in its source or short
/// enough to be built locally: then [`appended_rows`] can push its rows instead.
fn appends(copy: &Transfer, len: usize, size: usize) -> bool {
    if copy.dst_base != 0 || !matches!(walk(copy, size), Walk::Rows) {
        return false;
    }
    let mut step = 1;
    for axis in copy.axes.iter().rev() {
        if axis.dst != Map::Affine(step as isize) {
            return false;
        }
        step *= axis.len;
    }
    let inner = copy.axes.last().expect("a copy moved by rows has an axis");
    step == len && (inner.src == Map::Affine(1) || inner.len * size <= LOCAL_ROW_BYTES)
}

/// [`rows`] for a copy that [`appends`]: each row is streamed to `part` in turn
/// ([`pages::Part::push_streamed`]), so that the part is neither set to its initial value
/// first nor read from memory to be written. Rows with gaps are built in a local buffer, then
/// pushed. Measured faster on the strided slice (16 MiB output, whose memory glibc reuses;
/// BENCHMARKS.md, "Kernel design measurements", "Streamed stores").
fn appended_rows<T: Word>(part: &mut pages::Part<'_, T>, src: &[T], copy: &Transfer, fill: T) {
    hit!(AppendedRows);
    let inner = copy.axes.last().expect("a copy moved by rows has an axis");
    let len = inner.len;
    let contiguous = inner.src == Map::Affine(1);
    let runs = runs(&inner.src, len);
    let mut local = vec![fill; if contiguous { 0 } else { len }];
    each_row(copy, src, !contiguous, |_, s| match s {
        Some(s) if contiguous => part.push_streamed(&src[s..s + len]),
        Some(s) => {
            copy_runs(&mut local, src, s, &runs, fill);
            part.push_streamed(&local);
        }
        None => part.push_copies(len, fill),
    });
}

/// Fills one destination row from the runs of the innermost axis, read from source offset `s`.
#[inline]
fn copy_runs<T: Word>(row: &mut [T], src: &[T], s: usize, runs: &[Run], fill: T) {
    for run in runs {
        let out = &mut row[run.start..run.start + run.len];
        let Some((offset, step)) = run.source else {
            hit!(FillRun);
            out.fill(fill);
            continue;
        };
        let first = (s as isize + offset) as usize;
        match step {
            1 => copy_short(out, &src[first..first + run.len]),
            0 => {
                hit!(RepeatRun);
                out.fill(src[first]);
            }
            -1 => {
                hit!(ReversedRun);
                let from = &src[first + 1 - run.len..=first];
                for (o, &x) in out.iter_mut().zip(from.iter().rev()) {
                    *o = x;
                }
            }
            2 => {
                hit!(HalvingRun);
                // Whole pairs, then the last element alone (the pair after it may lie past the
                // source): a loop the compiler vectorises. Downsampling by 2 is common.
                let (body, last) = out.split_at_mut(run.len - 1);
                let pairs = &src[first..first + 2 * body.len()];
                for (o, pair) in body.iter_mut().zip(pairs.chunks_exact(2)) {
                    *o = pair[0];
                }
                last[0] = src[first + 2 * body.len()];
            }
            step if step > 0 => {
                hit!(SteppedRun);
                let step = step as usize;
                let from = &src[first..first + (run.len - 1) * step + 1];
                for (k, o) in out.iter_mut().enumerate() {
                    *o = from[k * step];
                }
            }
            step => {
                hit!(BackSteppedRun);
                for (k, o) in out.iter_mut().enumerate() {
                    *o = src[(first as isize + k as isize * step) as usize];
                }
            }
        }
    }
}

/// `out.copy_from_slice(from)`, by `stores`: a destination row, or a piece of one.
#[inline]
fn store<T: Word>(stores: Stores, out: &mut [T], from: &[T]) {
    // Rows of one line or less have no whole line to stream, unless aligned.
    if stores == Stores::Cached || std::mem::size_of_val(out) < 128 {
        return copy_short(out, from);
    }
    if stream::copy(out, from) {
        hit!(Streamed);
    }
}

/// `copy_from_slice`, without a `memcpy` call for runs of up to 256 bytes (measured: rows of
/// 64 float16, AsStrided windows, spend more in the call than in the copy).
#[inline]
fn copy_short<T: Word>(out: &mut [T], from: &[T]) {
    fn chunked<T: Word, const N: usize>(out: &mut [T], from: &[T]) {
        let mut chunks = out.chunks_exact_mut(N);
        let mut from_chunks = from.chunks_exact(N);
        for (o, f) in (&mut chunks).zip(&mut from_chunks) {
            let o: &mut [T; N] = o.try_into().expect("N elements");
            *o = f.try_into().expect("N elements");
        }
        for (o, &f) in chunks
            .into_remainder()
            .iter_mut()
            .zip(from_chunks.remainder())
        {
            *o = f;
        }
    }
    if std::mem::size_of_val(out) > 256 {
        return out.copy_from_slice(from);
    }
    assert_eq!(out.len(), from.len());
    // 32-byte pieces: two 16-byte moves each.
    match std::mem::size_of::<T>() {
        1 => chunked::<T, 32>(out, from),
        2 => chunked::<T, 16>(out, from),
        4 => chunked::<T, 8>(out, from),
        _ => chunked::<T, 4>(out, from),
    }
}

/// Bytes of a tile's local buffer, and the most source runs it gathers. Measured on
/// NCHW → NHWC: long runs (4 KiB from each of 64 sources, an L2-sized block) beat L1-sized
/// 32 × 32 tiles (BENCHMARKS.md, "Kernel design measurements", "Tiles"); the hardware prefetcher follows a few dozen long
/// streams well.
const TILE_BYTES: usize = 256 << 10;
const TILE_RUNS: usize = 64;

/// The most rows, apart from each other, of a block built in place (see [`tiles`]).
const IN_PLACE_ROWS: usize = 8;

/// How far ahead a stored block asks for its destination rows' lines (see [`Block::store`]).
/// Chosen on a swap of the last two axes of float32 (rows of 256 bytes 2 KiB apart;
/// BENCHMARKS.md, "Kernel design measurements", "Tiles"); 1 KiB and 4 KiB ahead gained about as much.
const STORE_AHEAD_BYTES: usize = 2 << 10;

/// In blocks over axes `p` (one chunk per step in the source) and `q` (one chunk per step in
/// the destination), the other axes outside; with `chunk > 1`, the last axis is a run of
/// `chunk` elements contiguous on both sides, moved whole. Each block is read a source run at
/// a time and transposed into a local buffer laid out as the destination, then written out a
/// destination run at a time: every cache line is used whole, and source rows a power of two
/// apart do not evict each other before they are used up.
#[allow(clippy::too_many_arguments)]
fn tiles<T: Word>(
    dst: &mut [T],
    src: &[T],
    copy: &Transfer,
    p: usize,
    q: usize,
    chunk: usize,
    fill: T,
    stores: Stores,
) {
    let (pa, qa) = (&copy.axes[p], &copy.axes[q]);
    let w = chunk;
    let size = std::mem::size_of::<T>();
    let p_dense = pa.src == Map::Affine(w as isize);
    let q_dense = qa.dst == Map::Affine(w as isize);
    // A block is `tp` destination runs of `tq` chunks: up to TILE_RUNS source runs, or, when
    // the p axis is short (a vector format's lanes), as many as fill the block.
    let area = TILE_BYTES / size;
    let tq = if pa.len * w * size <= 256 {
        qa.len.min(area / (pa.len * w))
    } else {
        qa.len.min(TILE_RUNS)
    };
    let tp = (area / tq / w).max(1).min(pa.len);
    // Local elements per p coordinate; local rows of an odd number of cache lines, so that
    // writing down a column does not land every row in the same cache set.
    let run = tq * w;
    let line = (64 / size).max(1);
    let stride = if run * size > 256 {
        let lines = run.div_ceil(line);
        (lines + 1 - lines % 2) * line
    } else {
        run
    };
    // A block is built in the destination itself when its rows are destination runs (q steps
    // one chunk there) that either follow each other (the block is one destination run) or
    // are few (a format's lanes, far apart): no local copy to store afterwards then (measured,
    // best median of alternating runs: pack HWC8 of float16 18.4 → 10.2 ms, unpack CHW4 of
    // float16 10.9 → 10.0 ms). Many rows far apart land in a few cache sets: built in place,
    // the 64 rows 512 KiB apart of unpack HWC8 took 25 → 37 ms, and the 512 rows 2 KiB apart
    // of a swap of the last two axes gained nothing. Those blocks are built in `local`, rows
    // `stride` apart, and stored.
    let in_place = match pa.dst {
        Map::Affine(step)
            if q_dense && (step == run as isize || step > run as isize && tp <= IN_PLACE_ROWS) =>
        {
            Some(step as usize)
        }
        _ => None,
    };
    let row_step = in_place.unwrap_or(stride);
    // Stored blocks whose rows span more than the caches hold stream their rows: every line
    // of their output pages is written long after the page was first touched (see `stream`).
    let span = match pa.dst {
        Map::Affine(step) => step.unsigned_abs() * tp * size,
        Map::Table(_) => 0,
    };
    let stores = if span >= stream::SPAN_BYTES {
        stores
    } else {
        Stores::Cached
    };
    // The runs of one block are one stretch of the source when q steps over all of p.
    let runs_adjacent = p_dense && tp == pa.len && qa.src == Map::Affine((pa.len * w) as isize);
    // Adjacent runs of a few elements each are interleaved lanes, taken apart in one pass.
    let lanes = runs_adjacent && w == 1 && DEINTERLEAVED.contains(&pa.len);
    // The converse: a few long runs woven into each destination run, whose rows must follow
    // each other with no gap.
    let interleaved =
        p_dense && !runs_adjacent && w == 1 && row_step == run && INTERLEAVED.contains(&qa.len);
    let mut local = vec![T::default(); tp * stride];
    let (mut dp, mut sp) = (vec![0isize; tp], vec![0isize; tp]);
    let (mut dq, mut sq) = (vec![0isize; tq], vec![0isize; tq]);
    let mut skip = vec![p, q];
    if w > 1 {
        skip.push(copy.axes.len() - 1);
    }
    outer(copy, &skip, |d0, s0| {
        let d0 = d0 as isize;
        for i0 in (0..pa.len).step_by(tp) {
            let ni = tp.min(pa.len - i0);
            // Per-coordinate offsets, only where a path below reads more than the first.
            let dp_len = if in_place.is_some() { 1 } else { ni };
            for (k, d) in dp[..dp_len].iter_mut().enumerate() {
                *d = d0 + pa.dst.at(i0 + k);
            }
            if !(p_dense && w == 1) {
                for (k, s) in sp[..ni].iter_mut().enumerate() {
                    *s = pa.src.at(i0 + k);
                }
            }
            for j0 in (0..qa.len).step_by(tq) {
                let nj = tq.min(qa.len - j0);
                // As for p: only the offsets a path below reads.
                let dq_len = if q_dense { 0 } else { nj };
                for (k, d) in dq[..dq_len].iter_mut().enumerate() {
                    *d = qa.dst.at(j0 + k);
                }
                let sq_len = if lanes { 1 } else { nj };
                for (k, s) in sq[..sq_len].iter_mut().enumerate() {
                    *s = qa.src.at(j0 + k);
                }
                let block = Block {
                    dp: &dp,
                    ni,
                    dq: &dq[..nj],
                    j0,
                    w,
                    stride,
                    q_dense,
                    stores,
                };
                let buf: &mut [T] = match in_place {
                    Some(step) => {
                        hit!(InPlace);
                        let first = (dp[0] + (j0 * w) as isize) as usize;
                        let end = (first + ni * step).min(dst.len());
                        &mut dst[first..end]
                    }
                    None => &mut local,
                };
                let Some(s0) = s0 else {
                    // Row by row: in place, the gaps between rows belong to other blocks.
                    for row in buf.chunks_mut(row_step).take(ni) {
                        row[..nj * w].fill(fill);
                    }
                    if in_place.is_none() {
                        hit!(FillTile);
                        block.store(dst, &local);
                    } else {
                        hit!(FillInPlace);
                    }
                    continue;
                };
                // Load: one source run of `ni` chunks per q coordinate, transposed.
                let mut j = 0;
                if lanes {
                    hit!(Deinterleave);
                    // The block's source is one stretch of `nj` runs of `ni`: deinterleave.
                    let first = (s0 as isize + sq[0]) as usize;
                    deinterleave(buf, row_step, &src[first..first + nj * ni], ni);
                    j = nj;
                } else if interleaved && nj == tq {
                    hit!(Interleave);
                    // A few long runs woven into one: the lanes of a vector format.
                    let first = (s0 as isize + i0 as isize) as usize;
                    interleave(&mut buf[..ni * nj], src, first, &sq[..nj], ni);
                    j = nj;
                } else if p_dense && w == 1 {
                    // Runs a few at a time, in square blocks transposed in registers: 8 × 8
                    // for 16-bit words and bytes, 4 × 4 otherwise (see `words`).
                    let runs = Runs {
                        src,
                        s0,
                        sq: &sq[..nj],
                        i0,
                        len: ni,
                    };
                    j = if std::mem::size_of::<T>() <= 2 {
                        transpose_groups::<T, 8>(buf, row_step, &runs, T::transpose8)
                    } else {
                        transpose_groups::<T, 4>(buf, row_step, &runs, T::transpose4)
                    };
                }
                for j in j..nj {
                    let s = s0 as isize + sq[j];
                    let rows = buf.chunks_mut(row_step).take(ni);
                    if p_dense && w == 1 {
                        hit!(OneRun);
                        let first = (s + i0 as isize) as usize;
                        for (row, &x) in rows.zip(&src[first..first + ni]) {
                            row[j] = x;
                        }
                    } else if w == 1 {
                        hit!(TableRun);
                        for (row, &i) in rows.zip(&sp[..ni]) {
                            row[j] = src[(s + i) as usize];
                        }
                    } else {
                        hit!(Chunks);
                        for (row, &i) in rows.zip(&sp[..ni]) {
                            let first = (s + i) as usize;
                            copy_short(&mut row[j * w..j * w + w], &src[first..first + w]);
                        }
                    }
                }
                if in_place.is_none() {
                    hit!(LocalStore);
                    block.store(dst, &local);
                }
            }
        }
    });
}

/// The lane counts [`deinterleave`] takes, and those [`interleave`] takes (measured: weaving
/// 16 or 32 runs at once is slower than 4 × 4 blocks, taking 32 apart is faster).
const DEINTERLEAVED: [usize; 6] = [2, 3, 4, 8, 16, 32];
const INTERLEAVED: [usize; 4] = [2, 3, 4, 8];

/// `local[b · stride + j] = stretch[j · n + b]`: `n` interleaved runs apart (a vector
/// format's lanes), `n` one of [`DEINTERLEAVED`].
fn deinterleave<T: Word>(local: &mut [T], stride: usize, stretch: &[T], n: usize) {
    fn fixed<T: Word, const N: usize>(local: &mut [T], stride: usize, stretch: &[T]) {
        let count = stretch.len() / N;
        let mut rows = local.chunks_mut(stride);
        let mut rows: [&mut [T]; N] =
            std::array::from_fn(|_| &mut rows.next().expect("N rows")[..count]);
        for (j, lanes) in stretch.chunks_exact(N).enumerate() {
            for (row, &x) in rows.iter_mut().zip(lanes) {
                row[j] = x;
            }
        }
    }
    /// As `fixed`, `B` chunks and `B` lanes at a time through a square transpose.
    fn blocks<T: Word, const N: usize, const B: usize>(
        local: &mut [T],
        stride: usize,
        stretch: &[T],
        transpose: fn([[T; B]; B]) -> [[T; B]; B],
    ) {
        let count = stretch.len() / N;
        let whole = count / B * B;
        if whole > 0 {
            hit!(SquareDeinterleave);
        }
        let mut rows = local.chunks_mut(stride);
        let mut rows: [&mut [T]; N] =
            std::array::from_fn(|_| &mut rows.next().expect("N rows")[..count]);
        for (j, chunks) in stretch[..whole * N].chunks_exact(B * N).enumerate() {
            for g in (0..N).step_by(B) {
                let block = transpose(std::array::from_fn(|c| {
                    let at = c * N + g;
                    chunks[at..at + B].try_into().expect("B lanes")
                }));
                for (row, lanes) in rows[g..g + B].iter_mut().zip(block) {
                    let out: &mut [T; B] = (&mut row[j * B..j * B + B]).try_into().expect("B");
                    *out = lanes;
                }
            }
        }
        for (j, lanes) in stretch.chunks_exact(N).enumerate().skip(whole) {
            for (row, &x) in rows.iter_mut().zip(lanes) {
                row[j] = x;
            }
        }
    }
    match n {
        2 => fixed::<T, 2>(local, stride, stretch),
        3 => fixed::<T, 3>(local, stride, stretch),
        4 => blocks::<T, 4, 4>(local, stride, stretch, T::transpose4),
        8 => blocks::<T, 8, 8>(local, stride, stretch, T::transpose8),
        16 => blocks::<T, 16, 8>(local, stride, stretch, T::transpose8),
        32 => blocks::<T, 32, 8>(local, stride, stretch, T::transpose8),
        _ => unreachable!("deinterleave of {n} lanes"),
    }
}

/// `local[k · n + b] = src[first + sq[b] + k]` for `k < count`: `n` runs (one of
/// [`INTERLEAVED`]) woven into one.
fn interleave<T: Word>(local: &mut [T], src: &[T], first: usize, sq: &[isize], count: usize) {
    fn fixed<T: Word, const N: usize>(local: &mut [T], runs: [&[T]; N]) {
        for (k, out) in local.chunks_exact_mut(N).enumerate() {
            let out: &mut [T; N] = out.try_into().expect("N lanes");
            *out = std::array::from_fn(|b| runs[b][k]);
        }
    }
    fn runs<'a, T, const N: usize>(
        src: &'a [T],
        first: usize,
        sq: &[isize],
        count: usize,
    ) -> [&'a [T]; N] {
        std::array::from_fn(|b| {
            let start = (first as isize + sq[b]) as usize;
            &src[start..start + count]
        })
    }
    /// As `fixed`, `N` elements of each run at a time through a square transpose.
    fn square<T: Word, const N: usize>(
        local: &mut [T],
        runs: [&[T]; N],
        transpose: fn([[T; N]; N]) -> [[T; N]; N],
    ) {
        let count = runs[0].len();
        let whole = count / N * N;
        if whole > 0 {
            hit!(SquareInterleave);
        }
        for (k, out) in local[..whole * N].chunks_exact_mut(N * N).enumerate() {
            let block = transpose(std::array::from_fn(|b| {
                runs[b][k * N..k * N + N].try_into().expect("N elements")
            }));
            for (out, lanes) in out.chunks_exact_mut(N).zip(block) {
                let out: &mut [T; N] = out.try_into().expect("N lanes");
                *out = lanes;
            }
        }
        fixed(&mut local[whole * N..], runs.map(|run| &run[whole..]));
    }
    match sq.len() {
        2 => fixed::<T, 2>(local, runs(src, first, sq, count)),
        3 => fixed::<T, 3>(local, runs(src, first, sq, count)),
        4 => square::<T, 4>(local, runs(src, first, sq, count), T::transpose4),
        8 => square::<T, 8>(local, runs(src, first, sq, count), T::transpose8),
        n => unreachable!("interleave of {n} runs"),
    }
}

/// The source runs of a block: run `j` is `src[s0 + sq[j] + i0..][..len]`.
struct Runs<'a, T> {
    src: &'a [T],
    s0: usize,
    sq: &'a [isize],
    i0: usize,
    len: usize,
}

/// Square transposes of `N` source runs at a time: `local[k · stride + j] = run j [k]` for
/// `k < len` and each whole group of `N` runs `j`, the next group's lines asked for while one
/// is moved (the runs of a transpose are far apart, too short for the hardware prefetcher to
/// follow). Returns how many runs it moved.
fn transpose_groups<T: Word, const N: usize>(
    local: &mut [T],
    stride: usize,
    runs: &Runs<T>,
    transpose: fn([[T; N]; N]) -> [[T; N]; N],
) -> usize {
    let Runs {
        src,
        s0,
        sq,
        i0,
        len: ni,
    } = *runs;
    let group = |j: usize| -> [&[T]; N] {
        std::array::from_fn(|b| {
            let first = (s0 as isize + sq[j + b] + i0 as isize) as usize;
            &src[first..first + ni]
        })
    };
    if sq.len() >= N && ni >= N {
        if N == 8 {
            hit!(Blocks8);
        } else {
            hit!(Blocks4);
        }
    }
    let line = (64 / std::mem::size_of::<T>()).max(N);
    let mut j = 0;
    while j + N <= sq.len() {
        let (runs, next) = (group(j), (j + 2 * N <= sq.len()).then(|| group(j + N)));
        let mut k = 0;
        while k + N <= ni {
            if let Some(next) = next {
                if k % line == 0 {
                    for run in next {
                        prefetch(&run[k]);
                    }
                }
            }
            let block = transpose(std::array::from_fn(|b| {
                runs[b][k..k + N].try_into().expect("N elements")
            }));
            for (q, lanes) in block.into_iter().enumerate() {
                let at = (k + q) * stride + j;
                let out: &mut [T; N] = (&mut local[at..at + N]).try_into().expect("N elements");
                *out = lanes;
            }
            k += N;
        }
        for k in k..ni {
            let out = &mut local[k * stride + j..k * stride + j + N];
            for (o, r) in out.iter_mut().zip(&runs) {
                *o = r[k];
            }
        }
        j += N;
    }
    j
}

/// Asks for the cache line holding `x` ahead of its use (a hint: no effect on any value).
#[inline(always)]
fn prefetch<T>(x: &T) {
    #[cfg(target_arch = "x86_64")]
    safe_arch::prefetch_t0(x);
    #[cfg(not(target_arch = "x86_64"))]
    let _ = x;
}

/// Where a transposed block goes: local row `k` (of `stride` elements) to destination offset
/// `dp[k]`, chunk `j` of it at `dq[j]` (or `j0 + j` chunks on when `q_dense`).
struct Block<'a> {
    dp: &'a [isize],
    ni: usize,
    dq: &'a [isize],
    j0: usize,
    w: usize,
    stride: usize,
    q_dense: bool,
    stores: Stores,
}

impl Block<'_> {
    #[inline]
    fn store<T: Word>(&self, dst: &mut [T], local: &[T]) {
        let (ni, nj, w) = (self.ni, self.dq.len(), self.w);
        let size = std::mem::size_of::<T>();
        // Destination rows stored through the cache are far apart (a transpose's columns),
        // too short for the hardware prefetcher to follow: the lines of the row
        // STORE_AHEAD_BYTES of stores on are asked for while this one is stored. Streamed
        // rows are not (their lines are never read).
        let ahead = match self.stores {
            Stores::Cached => Some((STORE_AHEAD_BYTES / (nj * w * size).max(1)).max(1)),
            Stores::Streamed => None,
        };
        let line = (64 / size).max(1);
        for (k, row) in local.chunks_exact(self.stride).take(ni).enumerate() {
            if self.q_dense {
                let at = |k: usize| (self.dp[k] + (self.j0 * w) as isize) as usize;
                if let Some(ahead) = ahead.filter(|&ahead| k + ahead < ni) {
                    let next = at(k + ahead);
                    for x in dst[next..next + nj * w].iter().step_by(line) {
                        prefetch(x);
                    }
                }
                let first = at(k);
                store(self.stores, &mut dst[first..first + nj * w], &row[..nj * w]);
            } else if w == 1 {
                hit!(ScatteredStore);
                for (&x, &dj) in row.iter().zip(self.dq) {
                    dst[(self.dp[k] + dj) as usize] = x;
                }
            } else {
                for (j, &dj) in self.dq.iter().enumerate() {
                    let first = (self.dp[k] + dj) as usize;
                    copy_short(&mut dst[first..first + w], &row[j * w..j * w + w]);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;
