//! Step 3, tiles: an axis that jumps through memory on one side walked in blocks with one
//! that is contiguous on the other, transposed through a local buffer (register transposes,
//! deinterleaves and interleaves of a few lanes) or built in the destination directly.

use crate::rows::{copy_short, prefetch, store};
use crate::stream;
use crate::stream::Stores;
use crate::transfer::{outer, Map, Transfer};
use crate::words::Word;

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
pub(crate) fn tiles<T: Word>(
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
pub(crate) fn deinterleave<T: Word>(local: &mut [T], stride: usize, stretch: &[T], n: usize) {
    pub(crate) fn fixed<T: Word, const N: usize>(local: &mut [T], stride: usize, stretch: &[T]) {
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
    pub(crate) fn blocks<T: Word, const N: usize, const B: usize>(
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
pub(crate) fn interleave<T: Word>(
    local: &mut [T],
    src: &[T],
    first: usize,
    sq: &[isize],
    count: usize,
) {
    pub(crate) fn fixed<T: Word, const N: usize>(local: &mut [T], runs: [&[T]; N]) {
        for (k, out) in local.chunks_exact_mut(N).enumerate() {
            let out: &mut [T; N] = out.try_into().expect("N lanes");
            *out = std::array::from_fn(|b| runs[b][k]);
        }
    }
    pub(crate) fn runs<'a, T, const N: usize>(
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
    pub(crate) fn square<T: Word, const N: usize>(
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
    pub(crate) src: &'a [T],
    pub(crate) s0: usize,
    pub(crate) sq: &'a [isize],
    pub(crate) i0: usize,
    pub(crate) len: usize,
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
/// Where a transposed block goes: local row `k` (of `stride` elements) to destination offset
/// `dp[k]`, chunk `j` of it at `dq[j]` (or `j0 + j` chunks on when `q_dense`).
struct Block<'a> {
    pub(crate) dp: &'a [isize],
    pub(crate) ni: usize,
    pub(crate) dq: &'a [isize],
    pub(crate) j0: usize,
    pub(crate) w: usize,
    pub(crate) stride: usize,
    pub(crate) q_dense: bool,
    pub(crate) stores: Stores,
}

impl Block<'_> {
    #[inline]
    pub(crate) fn store<T: Word>(&self, dst: &mut [T], local: &[T]) {
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
