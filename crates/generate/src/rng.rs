//! A small deterministic random number generator (SplitMix64).
//!
//! Goldens record the seed their inputs came from, so the sequence a seed gives must never
//! change with a dependency's version: this is the whole generator, fixed here.

/// SplitMix64 (Steele, Lea, Flood 2014): 64 bits of state, every seed valid.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// A generator for one named stream of `seed` (e.g. one input of one case).
    pub fn for_stream(seed: u64, stream: &str) -> Rng {
        // FNV-1a over the name, mixed with the seed.
        let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
        for byte in stream.bytes() {
            hash ^= byte as u64;
            hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        }
        let mut rng = Rng(seed ^ hash);
        rng.next_u64();
        rng
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`), by Lemire's multiply-shift (bias below 2^-32 for the
    /// small `n` used here).
    pub fn below(&mut self, n: u64) -> u64 {
        assert!(n > 0, "below(0)");
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }

    /// Uniform in `low..=high`.
    pub fn range(&mut self, low: i64, high: i64) -> i64 {
        assert!(low <= high, "empty range {low}..={high}");
        low + self.below((high - low) as u64 + 1) as i64
    }

    /// `true` with probability `percent`/100.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }

    /// A random permutation of `0..n` (Fisher-Yates).
    pub fn permutation(&mut self, n: usize) -> Vec<usize> {
        let mut perm: Vec<usize> = (0..n).collect();
        for i in (1..n).rev() {
            let j = self.below(i as u64 + 1) as usize;
            perm.swap(i, j);
        }
        perm
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sequence_is_fixed() {
        // SplitMix64's published first outputs for seed 0.
        let mut rng = Rng::new(0);
        assert_eq!(rng.next_u64(), 0xe220_a839_7b1d_cdaf);
        assert_eq!(rng.next_u64(), 0x6e78_9e6a_a1b9_65f4);
    }

    #[test]
    fn streams_differ_and_repeat() {
        let a: Vec<u64> = (0..4)
            .map({
                let mut r = Rng::for_stream(1, "a");
                move |_| r.next_u64()
            })
            .collect();
        let mut again = Rng::for_stream(1, "a");
        assert_eq!(a[0], again.next_u64());
        assert_ne!(a[0], Rng::for_stream(1, "b").next_u64());
        let mut rng = Rng::new(7);
        for _ in 0..1000 {
            let v = rng.range(-3, 3);
            assert!((-3..=3).contains(&v));
        }
        let mut perm = rng.permutation(6);
        perm.sort();
        assert_eq!(perm, vec![0, 1, 2, 3, 4, 5]);
    }
}
