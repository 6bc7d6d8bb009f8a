//! Step 2, rows: the innermost axis cut once into runs (fill, contiguous, reversed,
//! repeated, strided) that every row replays, and the stores and prefetch hints they use.

use crate::stream::Stores;
use crate::transfer::{outer, Map, Transfer, FILL};
use crate::walk::{walk, Walk};
use crate::words::Word;
use crate::{pages, stream};

/// A run of the innermost axis: `len` elements from destination position `start` on, read
/// from `offset + k · step` (relative to the row's source offset), or fill.
pub(crate) struct Run {
    pub(crate) start: usize,
    pub(crate) len: usize,
    pub(crate) source: Option<(isize, isize)>,
}

/// Cuts a source map into maximal runs of fill or of one step.
pub(crate) fn runs(map: &Map, len: usize) -> Vec<Run> {
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
pub(crate) fn rows<T: Word>(dst: &mut [T], src: &[T], copy: &Transfer, fill: T) {
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
pub(crate) fn appends(copy: &Transfer, len: usize, size: usize) -> bool {
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
pub(crate) fn appended_rows<T: Word>(
    part: &mut pages::Part<'_, T>,
    src: &[T],
    copy: &Transfer,
    fill: T,
) {
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
pub(crate) fn store<T: Word>(stores: Stores, out: &mut [T], from: &[T]) {
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
pub(crate) fn copy_short<T: Word>(out: &mut [T], from: &[T]) {
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

/// Asks for the cache line holding `x` ahead of its use (a hint: no effect on any value).
#[inline(always)]
pub(crate) fn prefetch<T>(x: &T) {
    #[cfg(target_arch = "x86_64")]
    safe_arch::prefetch_t0(x);
    #[cfg(not(target_arch = "x86_64"))]
    let _ = x;
}
