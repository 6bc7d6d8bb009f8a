//! Stores for large outputs: destination rows written past the caches (non-temporal stores).
//!
//! A store through the cache first reads the destination's line, to own it, and writes it
//! back later. glibc's `memcpy`, the benchmarks' plain copy, streams copies this large
//! instead. For the ops that matters in two cases:
//!
//! - A tiled copy whose stored block has rows far apart (unpacking a vector format writes 32
//!   or 64 planes at once). There each line of the fresh output is written long after its
//!   page was first touched and zeroed, so it is read back from memory. Those rows are
//!   streamed, and the op is faster.
//! - Rows appended in order to an output whose memory glibc reuses, which nothing has set
//!   yet ([`super::pages::Part::push_streamed`]): the strided slice of 16 MiB.
//!
//! Rows written in order to fresh pages gain nothing and lose some, because the kernel has
//! just zeroed their page in the cache: streaming every stored row measured slower on the
//! AsStrided windows, a crop and a swap of the last two axes, whose stored blocks span 1 MiB.
//! The figures: BENCHMARKS.md, "Kernel design measurements", "Streamed stores".
//!
//! Only whole 64-byte lines of a row are streamed; its ragged ends are stored as usual, so a
//! line is never half written by the two kinds of store. Streamed stores are weakly ordered:
//! every copy ends with [`fence`] before its thread hands the output on.
//!
//! This module is the crate's other place of `unsafe` code (besides [`super::pages`]): 16-byte
//! loads and streamed stores between two slices of the same length, at offsets inside them,
//! the fence, and the view of an initialised row as one to stream into.

use super::Word;
use std::mem::MaybeUninit;

/// Output bytes from which a copy may stream: past a large share of the last-level cache
/// (32 MiB on the benchmark machine; glibc streams from ¾ of it). Tests use small thresholds
/// here and below, so that the generated plans cross them both ways.
#[cfg(not(test))]
pub const STREAM_BYTES: usize = 16 << 20;
#[cfg(test)]
pub const STREAM_BYTES: usize = 2 << 10;

/// The least span of the destination rows of one stored block for which they are streamed:
/// more than the caches near a core hold (measured: 32 MiB for unpack HWC8 gains, 1 MiB for
/// a swap of the last two axes does not).
#[cfg(not(test))]
pub const SPAN_BYTES: usize = 4 << 20;
#[cfg(test)]
pub const SPAN_BYTES: usize = 1 << 10;

/// How a copy stores its destination rows.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Stores {
    /// Through the cache (the output is small enough to stay there for whoever reads it).
    Cached,
    /// Whole lines streamed past the caches.
    Streamed,
}

impl Stores {
    /// The stores for an output of `bytes`.
    pub fn for_output(bytes: usize) -> Stores {
        if bytes >= STREAM_BYTES {
            Stores::Streamed
        } else {
            Stores::Cached
        }
    }
}

/// `out.copy_from_slice(from)`, the whole 64-byte lines of `out` streamed (where the target
/// has streamed stores; elsewhere a plain copy). Returns whether any line was streamed.
#[inline]
pub fn copy<T: Word>(out: &mut [T], from: &[T]) -> bool {
    // SAFETY: `MaybeUninit<T>` has the layout of `T`, and `copy_uninit` writes only whole
    // words of `from` into `out` (never an uninitialised value), so every element of `out`
    // still holds a valid `T` when the borrow ends.
    #[allow(unsafe_code)]
    let out = unsafe { &mut *(out as *mut [T] as *mut [MaybeUninit<T>]) };
    copy_uninit(out, from)
}

/// [`copy`] into elements that need not be initialised: afterwards each holds the matching
/// word of `from`. Returns whether any line was streamed.
#[inline]
pub fn copy_uninit<T: Word>(out: &mut [MaybeUninit<T>], from: &[T]) -> bool {
    assert_eq!(
        out.len(),
        from.len(),
        "a streamed copy between unequal rows"
    );
    let size = std::mem::size_of::<T>();
    let start = out.as_ptr() as usize;
    // Elements before the first line boundary (a word never straddles one: 64 is a multiple
    // of every word size and `out` is aligned to its word).
    let head = ((start.next_multiple_of(64) - start) / size).min(out.len());
    let lines = (out.len() - head) * size / 64;
    if lines == 0 || !cfg!(target_arch = "x86_64") {
        write(out, from);
        return false;
    }
    let body = lines * 64 / size;
    let (out_head, rest) = out.split_at_mut(head);
    let (out_body, out_tail) = rest.split_at_mut(body);
    write(out_head, &from[..head]);
    stream_lines(out_body, &from[head..head + body]);
    write(out_tail, &from[head + body..]);
    true
}

/// Stores `from` into `out` through the cache.
#[inline]
fn write<T: Word>(out: &mut [MaybeUninit<T>], from: &[T]) {
    for (element, &word) in out.iter_mut().zip(from) {
        element.write(word);
    }
}

/// Streams `from` into `out`: equal lengths, `out` starting on a 64-byte boundary and
/// covering whole lines.
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
#[inline]
fn stream_lines<T: Word>(out: &mut [MaybeUninit<T>], from: &[T]) {
    use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_stream_si128};
    let bytes = std::mem::size_of_val(out);
    assert!(
        bytes == std::mem::size_of_val(from) && bytes % 64 == 0 && out.as_ptr() as usize % 64 == 0
    );
    let (to, at) = (
        out.as_mut_ptr().cast::<__m128i>(),
        from.as_ptr().cast::<__m128i>(),
    );
    for k in 0..bytes / 16 {
        // SAFETY: `k · 16 + 16 ≤ bytes`, the length of both slices, so both 16-byte accesses
        // lie inside them; the load is unaligned (`loadu`), the store's address is 16-byte
        // aligned (asserted above). SSE2 is part of x86-64. `T` is one of the four unsigned
        // integer words (`Word` is sealed), so the bytes stored are each a whole word copied
        // from the matching word of `from`, valid for `T`.
        unsafe { _mm_stream_si128(to.add(k), _mm_loadu_si128(at.add(k))) };
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn stream_lines<T: Word>(out: &mut [MaybeUninit<T>], from: &[T]) {
    write(out, from);
}

/// Orders every streamed store of this thread before its later stores (the end of a copy,
/// before the output is handed to another thread or returned).
#[inline]
pub fn fence() {
    #[cfg(target_arch = "x86_64")]
    #[allow(unsafe_code)]
    // SAFETY: `sfence` has no operands; SSE is part of x86-64.
    unsafe {
        std::arch::x86_64::_mm_sfence()
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streamed_copies_equal_plain_copies_at_every_offset_and_length() {
        let from: Vec<u32> = (0..200).collect();
        let mut streamed = 0;
        for start in 0..20 {
            for len in [0, 1, 15, 16, 17, 31, 32, 33, 100, 150] {
                let mut out = vec![u32::MAX; 200];
                let before = out.clone();
                streamed += copy(&mut out[start..start + len], &from[7..7 + len]) as usize;
                fence();
                let mut expected = before;
                expected[start..start + len].copy_from_slice(&from[7..7 + len]);
                assert_eq!(out, expected, "start {start}, len {len}");
            }
        }
        if cfg!(target_arch = "x86_64") {
            assert!(streamed > 0, "no copy streamed a line");
        }
        let bytes: Vec<u8> = (0..=255).collect();
        let mut out = vec![0u8; 256];
        copy(&mut out[3..250], &bytes[1..248]);
        assert_eq!(&out[3..250], &bytes[1..248]);
        assert_eq!(
            (out[..3].to_vec(), out[250..].to_vec()),
            (vec![0; 3], vec![0; 6])
        );
    }

    #[test]
    fn stores_stream_from_the_threshold_on() {
        assert_eq!(Stores::for_output(STREAM_BYTES - 1), Stores::Cached);
        assert_eq!(Stores::for_output(STREAM_BYTES), Stores::Streamed);
    }
}
