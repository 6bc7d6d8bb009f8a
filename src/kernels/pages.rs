//! Output allocation: large buffers are advised onto transparent huge pages.
//!
//! A fresh 64 MiB output costs 16 384 page faults on 4 KiB pages, which on a virtual machine
//! is most of the time of an operator that only moves bytes (measured in `BENCHMARKS.md`:
//! a plain `Vec::clone` of 64 MiB is ~4× slower than the same copy on huge pages). numpy asks
//! for huge pages on every array of 4 MiB or more (`madvise(MADV_HUGEPAGE)` in its allocator);
//! this does the same, and nothing else. The advice never changes contents: it is a hint the
//! kernel may ignore (where transparent huge pages are off, or off Linux, it is a no-op).
//!
//! Its one `unsafe` block is a call to `madvise` on the allocation's own pages (the crate's
//! other `unsafe` code is the streamed stores of [`super::stream`]).

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
}
