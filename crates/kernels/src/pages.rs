//! Output allocation: large buffers are advised onto transparent huge pages, and outputs that
//! threads write are set part by part.
//!
//! A fresh 64 MiB output costs 16 384 page faults on 4 KiB pages, which on a virtual machine
//! is most of the time of an operator that only moves bytes (`BENCHMARKS.md`: the clone
//! column, a plain `Vec::clone` on 4 KiB pages, against the copy on huge pages). numpy asks
//! for huge pages on every array of 4 MiB or more (`madvise(MADV_HUGEPAGE)` in its allocator);
//! this does the same, and nothing else. The advice never changes contents: it is a hint the
//! kernel may ignore (where transparent huge pages are off, or off Linux, it is a no-op).
//!
//! An output written by several threads ([`Output`]) is also where its initial value is set:
//! each part is set by the thread that then writes it, rather than by `calloc` on the
//! calling thread beforehand. That matters for outputs small enough for glibc to reuse freed
//! memory (32 MiB or less), which `calloc` clears with a `memset` before the op starts; the
//! op then reads those lines back from memory; setting them part by part measured faster on
//! the strided slice of `BENCHMARKS.md` (16 MiB output). Larger outputs are fresh pages that
//! the kernel clears on first touch, on the writing thread already; setting them again
//! measured slower (a 60 MiB crop), so they are still taken from `calloc` when their initial
//! value is zero. A part that a copy writes whole, row after row in order, into a large output
//! is not set at all: its rows are streamed into it as they come ([`Part::push_streamed`]).
//! The figures: BENCHMARKS.md, "Kernel design measurements", "Output pages".
//!
//! Its `unsafe` code is a call to `madvise` on the allocation's own pages, the view of a set
//! part as initialised, and the length of an [`Output`] once each of its parts is set (the
//! crate's other `unsafe` code is the streamed stores of [`super::stream`]).

use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicUsize, Ordering};

/// numpy's threshold for the advice.
const HUGE_PAGE_THRESHOLD: usize = 4 << 20;

/// The size of a transparent huge page on x86-64 and most arm64 kernels.
pub const HUGE_PAGE: usize = 2 << 20;

/// A vector of `len` zero words (all-zero bits is a valid element of every width).
pub fn zeroed<T: Copy + Default + ZeroBits>(len: usize) -> Vec<T> {
    // `vec![0; len]` is `calloc`: for a large buffer, untouched pages fresh from `mmap`, so the
    // advice below still comes before the first fault.
    let mut vec = vec![T::default(); len];
    advise_huge_pages(&mut vec);
    vec
}

/// A vector of `len` copies of `value`.
pub fn filled<T: Copy + Default + ZeroBits>(len: usize, value: T) -> Vec<T> {
    if value.is_zero() {
        return zeroed(len);
    }
    let mut vec = Vec::with_capacity(len);
    advise_huge_pages(&mut vec);
    vec.resize(len, value);
    vec
}

/// Output bytes above which glibc's `calloc` always maps fresh pages (its largest dynamic
/// `mmap` threshold on 64-bit targets); at or below, it may reuse freed memory and `memset`
/// it. Tests use a small value, so that outputs of both kinds are generated.
#[cfg(not(test))]
const RECYCLED_BYTES: usize = 32 << 20;
#[cfg(test)]
const RECYCLED_BYTES: usize = 8 << 10;

/// A buffer of `len` words, each set to an initial value or overwritten, in parts that
/// threads take ([`Output::write_in_parts`]).
pub struct Output<T> {
    vec: Vec<T>,
    len: usize,
    value: T,
}

impl<T: Copy + Default + ZeroBits> Output<T> {
    /// An output of `len` words whose elements start as `value` (those that no part
    /// overwrites end as `value`).
    pub fn new(len: usize, value: T) -> Output<T> {
        let vec = if value.is_zero() && len * std::mem::size_of::<T>() > RECYCLED_BYTES {
            // Fresh pages, cleared by the kernel on the thread that first touches them.
            zeroed(len)
        } else {
            let mut vec = Vec::with_capacity(len);
            advise_huge_pages(&mut vec);
            vec
        };
        Output { vec, len, value }
    }

    /// Whether the output came set already (fresh zeroed pages), rather than being set part
    /// by part.
    pub fn is_preset(&self) -> bool {
        self.vec.len() == self.len
    }

    /// The address of element 0 (to align parts with pages).
    pub fn address(&self) -> usize {
        self.vec.as_ptr() as usize
    }

    /// Cuts the output at `cuts` (ascending, at most `len`) into consecutive parts that tile
    /// it, hands them to `work`, and returns the whole. A part's elements that were not pushed
    /// ([`Part::push_streamed`], [`Part::push_copies`]) hold `value` once it is taken or
    /// dropped.
    pub fn write_in_parts<W>(mut self, cuts: &[usize], work: W) -> Vec<T>
    where
        W: FnOnce(Vec<Part<'_, T>>),
    {
        assert!(
            cuts.windows(2).all(|pair| pair[0] <= pair[1]) && cuts.iter().all(|&c| c <= self.len),
            "output cuts out of order or past the end"
        );
        let (len, value) = (self.len, self.value);
        if self.is_preset() {
            let parts = tile(&mut self.vec[..], cuts)
                .map(|(start, part)| Part::new(start, Slice::Set(part), value, None))
                .collect();
            work(parts);
            return self.vec;
        }
        let set = AtomicUsize::new(0);
        let parts: Vec<Part<T>> = tile(&mut self.vec.spare_capacity_mut()[..len], cuts)
            .map(|(start, part)| Part::new(start, Slice::Unset(part), value, Some(&set)))
            .collect();
        let count = parts.len();
        work(parts);
        if set.load(Ordering::SeqCst) != count {
            // A part was forgotten (`mem::forget`) before it was set: set everything.
            for element in &mut self.vec.spare_capacity_mut()[..len] {
                element.write(value);
            }
        }
        // SAFETY: the parts tiled `[0, len)` of the spare capacity, and each was set: its
        // pushed elements by the pushes, the rest to `value` (counted in `set` when it was; a part
        // is counted at most once, since taking it consumes it and its drop sets only an
        // untaken one), or else every element was set just above. Writes through a taken part
        // were writes of whole `T`s. So all `len` elements are initialised, within the
        // capacity of `len`.
        #[allow(unsafe_code)]
        unsafe {
            self.vec.set_len(len)
        };
        self.vec
    }
}

/// `slice` cut at the ascending `cuts` into consecutive stretches, each with its start.
fn tile<'a, S>(
    slice: &'a mut [S],
    cuts: &'a [usize],
) -> impl Iterator<Item = (usize, &'a mut [S])> {
    let ends = cuts.iter().copied().chain([slice.len()]);
    let (mut rest, mut at) = (slice, 0);
    ends.map(move |end| {
        let (part, tail) = std::mem::take(&mut rest).split_at_mut(end - at);
        rest = tail;
        (std::mem::replace(&mut at, end), part)
    })
}

/// The elements of a part: already holding their value, or not yet set.
enum Slice<'a, T> {
    Set(&'a mut [T]),
    Unset(&'a mut [MaybeUninit<T>]),
    Taken,
}

/// A stretch `[start, start + len)` of an [`Output`], for one thread to write: either taken
/// whole ([`Part::take`]), or appended to in order ([`Part::push_streamed`]), the rest then holding
/// the output's initial value.
pub struct Part<'a, T: Copy> {
    start: usize,
    len: usize,
    slice: Slice<'a, T>,
    /// Elements `[0, pushed)` hold what was pushed.
    pushed: usize,
    value: T,
    set: Option<&'a AtomicUsize>,
}

impl<'a, T: Copy> Part<'a, T> {
    fn new(start: usize, slice: Slice<'a, T>, value: T, set: Option<&'a AtomicUsize>) -> Self {
        let len = match &slice {
            Slice::Set(part) => part.len(),
            Slice::Unset(part) => part.len(),
            Slice::Taken => 0,
        };
        Part {
            start,
            len,
            slice,
            pushed: 0,
            value,
            set,
        }
    }

    /// The offset of the part's first element in the output.
    pub fn start(&self) -> usize {
        self.start
    }

    /// The number of elements of the part.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the part has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether the part already holds the initial value (fresh zeroed pages), so that taking
    /// it costs nothing, rather than being set when taken.
    pub fn is_preset(&self) -> bool {
        matches!(self.slice, Slice::Set(_))
    }

    /// Writes `values` after what was pushed before, their whole lines streamed past the
    /// caches ([`super::stream::copy`]; the writing thread calls [`super::stream::fence`]
    /// before it hands the output on). A part written in order from its start this way is
    /// never set to the initial value first, nor read from memory to be written.
    pub fn push_streamed(&mut self, values: &[T])
    where
        T: super::Word,
    {
        let next = self.next(values.len());
        match &mut self.slice {
            Slice::Set(part) => super::stream::copy(&mut part[next.clone()], values),
            Slice::Unset(part) => super::stream::copy_uninit(&mut part[next.clone()], values),
            Slice::Taken => unreachable!("a taken part is consumed"),
        };
        self.pushed = next.end;
    }

    /// Writes `count` copies of `value` after what was pushed before.
    pub fn push_copies(&mut self, count: usize, value: T) {
        let next = self.next(count);
        match &mut self.slice {
            Slice::Set(part) => part[next.clone()].fill(value),
            Slice::Unset(part) => {
                for element in &mut part[next.clone()] {
                    element.write(value);
                }
            }
            Slice::Taken => unreachable!("a taken part is consumed"),
        }
        self.pushed = next.end;
    }

    /// The next `count` elements after those pushed (counted as pushed only once written, so
    /// that a push that panics never leaves an element counted but unset).
    fn next(&self, count: usize) -> std::ops::Range<usize> {
        let (from, to) = (self.pushed, self.pushed + count);
        assert!(to <= self.len, "pushed past the end of an output part");
        from..to
    }

    /// The part's elements: what was pushed, then the output's initial value.
    pub fn take(mut self) -> &'a mut [T] {
        match std::mem::replace(&mut self.slice, Slice::Taken) {
            Slice::Set(part) => part,
            Slice::Unset(part) => {
                self.set_rest(part);
                // SAFETY: `set_rest` initialised every element of `part` past those pushed,
                // which the pushes initialised; `MaybeUninit<T>` has the layout of `T`, and the
                // borrow keeps its lifetime `'a`.
                #[allow(unsafe_code)]
                unsafe {
                    &mut *(part as *mut [MaybeUninit<T>] as *mut [T])
                }
            }
            Slice::Taken => unreachable!("a part is taken once, by value"),
        }
    }

    /// Sets the elements not pushed to the initial value, and counts the part as set.
    fn set_rest(&self, part: &mut [MaybeUninit<T>]) {
        for element in &mut part[self.pushed..] {
            element.write(self.value);
        }
        if let Some(set) = self.set {
            set.fetch_add(1, Ordering::SeqCst);
        }
    }
}

impl<T: Copy> Drop for Part<'_, T> {
    fn drop(&mut self) {
        if let Slice::Unset(part) = std::mem::replace(&mut self.slice, Slice::Taken) {
            self.set_rest(part);
        }
    }
}

/// Word types whose all-zero bit pattern is `T::default()`.
pub trait ZeroBits {
    fn is_zero(&self) -> bool;
}

macro_rules! zero_bits {
    ($($t:ty),*) => {$(
        impl ZeroBits for $t {
            fn is_zero(&self) -> bool {
                *self == 0
            }
        }
    )*};
}
zero_bits!(u8, u16, u32, u64);

#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn advise_huge_pages<T>(vec: &mut Vec<T>) {
    use std::ffi::{c_int, c_void};
    extern "C" {
        fn madvise(addr: *mut c_void, len: usize, advice: c_int) -> c_int;
    }
    const MADV_HUGEPAGE: c_int = 14;
    const PAGE: usize = 4096;
    let bytes = vec.capacity() * std::mem::size_of::<T>();
    if bytes < HUGE_PAGE_THRESHOLD {
        return;
    }
    let start = vec.as_mut_ptr() as usize;
    let first = start.next_multiple_of(PAGE);
    let end = (start + bytes) / PAGE * PAGE;
    if end > first {
        // SAFETY: [first, end) lies inside this vector's own allocation; MADV_HUGEPAGE only
        // changes how its pages are backed, never their contents, and a failure (EINVAL where
        // the page size is not 4 KiB, or no THP support) just leaves the advice unapplied.
        unsafe {
            madvise(first as *mut c_void, end - first, MADV_HUGEPAGE);
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge_pages<T>(_vec: &mut Vec<T>) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_hold_what_was_asked() {
        assert_eq!(zeroed::<u16>(3), vec![0, 0, 0]);
        assert_eq!(filled::<u32>(2, 7), vec![7, 7]);
        let large = filled::<u8>(HUGE_PAGE_THRESHOLD + 5, 9);
        assert!(large.iter().all(|&b| b == 9));
        let large = zeroed::<u64>(HUGE_PAGE_THRESHOLD);
        assert!(large.iter().all(|&b| b == 0));
    }

    /// Writes `k + 100` into the `k`-th part taken (parts whose index is in `skip` are dropped
    /// untaken) and checks the tiling.
    fn written(len: usize, value: u32, cuts: &[usize], skip: &[usize]) -> Vec<u32> {
        Output::new(len, value).write_in_parts(cuts, |parts| {
            let mut at = 0;
            for (k, part) in parts.into_iter().enumerate() {
                assert_eq!(part.start(), at, "parts tile the output");
                at += part.len();
                if skip.contains(&k) {
                    continue;
                }
                let slice = part.take();
                assert!(
                    slice.iter().all(|&x| x == value),
                    "a taken part holds the value"
                );
                slice.fill(k as u32 + 100);
            }
            assert_eq!(at, len);
        })
    }

    #[test]
    fn outputs_written_in_parts_hold_each_parts_writes_and_the_value_elsewhere() {
        // Below and above the size from which zero outputs come from fresh pages.
        for len in [10, RECYCLED_BYTES / 4 + 3] {
            for value in [0, 7] {
                let third = len / 3;
                let out = written(len, value, &[third, third, 2 * third], &[2]);
                // Part 1, [third, third), is empty; part 2 is dropped untaken.
                let mut expected = vec![100; third];
                expected.extend(vec![value; third]);
                expected.extend(vec![103; len - 2 * third]);
                assert_eq!(out, expected, "len {len}, value {value}");
                assert_eq!(written(len, value, &[], &[]), vec![100; len]);
            }
        }
    }

    #[test]
    fn pushed_elements_come_first_and_the_value_fills_the_rest() {
        // Long enough to stream whole lines, whatever the alignment.
        let run: Vec<u16> = (1..=100).collect();
        for len in [300, RECYCLED_BYTES / 2 + 3] {
            for value in [0u16, 999] {
                let half = len / 2;
                let out = Output::new(len, value).write_in_parts(&[half], |parts| {
                    let mut parts = parts.into_iter();
                    // Pushed, then taken: the pushed run is kept, the rest is the value.
                    let mut first = parts.next().unwrap();
                    first.push_streamed(&run);
                    first.push_copies(2, 500);
                    let first = first.take();
                    assert_eq!(first[102], value);
                    first[102] = 501;
                    // Pushed, then dropped.
                    let mut second = parts.next().unwrap();
                    second.push_streamed(&run[..7]);
                    super::super::stream::fence();
                });
                let mut expected = vec![value; len];
                expected[..100].copy_from_slice(&run);
                expected[100..103].copy_from_slice(&[500, 500, 501]);
                expected[half..half + 7].copy_from_slice(&run[..7]);
                assert_eq!(out, expected, "len {len}, value {value}");
            }
        }
    }

    #[test]
    #[should_panic(expected = "pushed past the end")]
    fn pushing_past_a_part_is_refused() {
        Output::new(4, 0u8).write_in_parts(&[2], |parts| {
            parts.into_iter().next().unwrap().push_copies(3, 1);
        });
    }

    #[test]
    fn a_forgotten_part_leaves_the_whole_output_set() {
        let out = Output::new(6, 5u16).write_in_parts(&[2, 4], |parts| {
            let mut parts = parts.into_iter();
            parts.next().unwrap().take().fill(1);
            std::mem::forget(parts.next());
            parts.next().unwrap().take().fill(3);
        });
        // Everything is set again: what the parts wrote is lost, but nothing is uninitialised.
        assert_eq!(out, vec![5; 6]);
    }

    #[test]
    #[should_panic(expected = "output cuts out of order")]
    fn cuts_out_of_order_are_refused() {
        Output::new(6, 0u8).write_in_parts(&[4, 2], |_| {});
    }
}
