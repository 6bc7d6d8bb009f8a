//! Step 4, threads: a large copy cut into pieces that write disjoint stretches of the
//! output, taken by one thread per core from a shared queue ([`run_split`]).

use crate::dispatch::write;
use crate::pages;
use crate::stream::Stores;
use crate::transfer::{Map, Normal, Transfer};
use crate::words::Word;

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
pub(crate) fn run_split<T: Word + Send + Sync>(
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
    pub(crate) work: Normal,
    pub(crate) start: usize,
    pub(crate) end: usize,
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
pub(crate) fn outermost(copy: &Transfer) -> Option<(usize, usize)> {
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
