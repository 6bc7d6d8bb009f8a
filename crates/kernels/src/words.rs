//! The word types the kernels move, and the small square transposes the tiled paths are
//! built from.
//!
//! A transpose of a block of `N` rows of `N` words is the inner step of every tiled copy
//! (transposes, a vector format's lanes). Element by element it costs `N²` loads and stores
//! (the compiler did not turn the array form into shuffles); on x86-64 a 16-byte row of
//! 4 × 32-bit or 8 × 16-bit words is transposed in registers instead (an 8 × 8 block of 32-bit
//! words as four 4 × 4 quadrants), by SSE2 unpacks (SSE2 is
//! part of x86-64, so no feature detection is needed), through the safe wrappers of
//! `safe_arch`. Measured faster on the 64 MiB benchmark inputs together with the prefetch of
//! the next group of runs (BENCHMARKS.md, "Kernel design measurements", "Register
//! transposes"). Every other width, and every other
//! architecture, takes [`plain_transpose`]; the tests check each register transpose against it.

use super::pages::ZeroBits;

/// Word types the kernels move: `u8`, `u16`, `u32` and `u64` (the four buffer widths), and
/// no others (sealed: [`super::stream`] copies their bytes as whole words).
pub trait Word: sealed::Sealed + Copy + Default + ZeroBits {
    /// `out[k][b] = rows[b][k]` for a 4 × 4 block.
    #[inline(always)]
    fn transpose4(rows: [[Self; 4]; 4]) -> [[Self; 4]; 4] {
        plain_transpose(rows)
    }

    /// `out[k][b] = rows[b][k]` for an 8 × 8 block.
    #[inline(always)]
    fn transpose8(rows: [[Self; 8]; 8]) -> [[Self; 8]; 8] {
        plain_transpose(rows)
    }
}

/// `out[k][b] = rows[b][k]`, element by element: the definition the register versions meet.
#[inline(always)]
pub fn plain_transpose<T: Copy, const N: usize>(rows: [[T; N]; N]) -> [[T; N]; N] {
    std::array::from_fn(|k| std::array::from_fn(|b| rows[b][k]))
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for u8 {}
    impl Sealed for u16 {}
    impl Sealed for u32 {}
    impl Sealed for u64 {}
}

impl Word for u8 {}
impl Word for u64 {}

#[cfg(not(target_arch = "x86_64"))]
impl Word for u16 {}
#[cfg(not(target_arch = "x86_64"))]
impl Word for u32 {}

#[cfg(target_arch = "x86_64")]
impl Word for u32 {
    /// Pairs of rows interleaved by 32-bit lanes, then the pairs by 64-bit halves.
    #[inline(always)]
    fn transpose4(rows: [[u32; 4]; 4]) -> [[u32; 4]; 4] {
        use safe_arch::*;
        let [a, b, c, d] = rows.map(m128i::from);
        let (ab_lo, ab_hi) = (unpack_low_i32_m128i(a, b), unpack_high_i32_m128i(a, b));
        let (cd_lo, cd_hi) = (unpack_low_i32_m128i(c, d), unpack_high_i32_m128i(c, d));
        [
            unpack_low_i64_m128i(ab_lo, cd_lo).into(),
            unpack_high_i64_m128i(ab_lo, cd_lo).into(),
            unpack_low_i64_m128i(ab_hi, cd_hi).into(),
            unpack_high_i64_m128i(ab_hi, cd_hi).into(),
        ]
    }

    /// Four 4 × 4 quadrants, each transposed in registers, the off-diagonal two swapped.
    #[inline(always)]
    fn transpose8(rows: [[u32; 8]; 8]) -> [[u32; 8]; 8] {
        let quadrant = |r: usize, c: usize| {
            u32::transpose4(std::array::from_fn(|b| {
                rows[r + b][c..c + 4].try_into().expect("4 words")
            }))
        };
        // Output rows 0–3 hold the columns 0–3 of the input: quadrants (0, 0) and (4, 0).
        let [top_left, bottom_left, top_right, bottom_right] = [
            quadrant(0, 0),
            quadrant(4, 0),
            quadrant(0, 4),
            quadrant(4, 4),
        ];
        std::array::from_fn(|k| {
            let (left, right) = if k < 4 {
                (top_left[k], bottom_left[k])
            } else {
                (top_right[k - 4], bottom_right[k - 4])
            };
            std::array::from_fn(|b| if b < 4 { left[b] } else { right[b - 4] })
        })
    }
}

#[cfg(target_arch = "x86_64")]
impl Word for u16 {
    /// Three rounds of unpacks: 16-bit lanes of row pairs, 32-bit lanes of pair pairs, then
    /// 64-bit halves.
    #[inline(always)]
    fn transpose8(rows: [[u16; 8]; 8]) -> [[u16; 8]; 8] {
        use safe_arch::*;
        let a = rows.map(m128i::from);
        let b: [m128i; 8] = std::array::from_fn(|i| {
            let (x, y) = (a[i / 2 * 2], a[i / 2 * 2 + 1]);
            if i % 2 == 0 {
                unpack_low_i16_m128i(x, y)
            } else {
                unpack_high_i16_m128i(x, y)
            }
        });
        // c[i]: rows 0–3 (i < 4) or 4–7, columns 2·(i % 4) and the next.
        let c: [m128i; 8] = std::array::from_fn(|i| {
            let base = i / 4 * 4;
            let (x, y) = (b[base + i % 4 / 2], b[base + 2 + i % 4 / 2]);
            if i % 2 == 0 {
                unpack_low_i32_m128i(x, y)
            } else {
                unpack_high_i32_m128i(x, y)
            }
        });
        std::array::from_fn(|k| {
            let (x, y) = (c[k / 2], c[4 + k / 2]);
            if k % 2 == 0 {
                unpack_low_i64_m128i(x, y).into()
            } else {
                unpack_high_i64_m128i(x, y).into()
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Distinct words in every position, so any misplaced element shows.
    fn block<T: Copy, const N: usize>(word: impl Fn(usize) -> T) -> [[T; N]; N] {
        std::array::from_fn(|b| std::array::from_fn(|k| word(b * N + k)))
    }

    #[test]
    fn plain_transpose_moves_rows_to_columns() {
        let rows: [[u8; 2]; 2] = [[1, 2], [3, 4]];
        assert_eq!(plain_transpose(rows), [[1, 3], [2, 4]]);
    }

    #[test]
    fn register_transposes_match_the_plain_one() {
        let patterns: [fn(usize) -> u64; 2] = [
            |i| i as u64 + 1,
            |i| (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 3,
        ];
        for word in patterns {
            let b32 = block::<u32, 4>(|i| word(i) as u32);
            assert_eq!(u32::transpose4(b32), plain_transpose(b32));
            let b32 = block::<u32, 8>(|i| word(i) as u32);
            assert_eq!(u32::transpose8(b32), plain_transpose(b32));
            let b16 = block::<u16, 8>(|i| word(i) as u16);
            assert_eq!(u16::transpose8(b16), plain_transpose(b16));
            // The widths without a register version take the plain one.
            let b8 = block::<u8, 8>(|i| word(i) as u8);
            assert_eq!(u8::transpose8(b8), plain_transpose(b8));
            let b64 = block::<u64, 4>(word);
            assert_eq!(u64::transpose4(b64), plain_transpose(b64));
        }
    }
}
