//! Stable partitions of a run's trials (`--partition K/N`, or Bazel's sharding variables): the
//! K-th of N disjoint parts, chosen by a hash of each trial's name alone, so that adding a trial
//! moves no other between parts, and the N parts hold every trial exactly once.

use std::fmt;

/// One of N parts of the trials: `index` from 1 to `total`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Partition {
    pub(crate) index: u64,
    pub(crate) total: u64,
}

/// Why a partition's text is not one.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum PartitionError {
    #[error("not a partition: expected K/N with 1 <= K <= N, such as 2/3")]
    Malformed,
}

impl Partition {
    /// `K/N`, with 1 <= K <= N.
    pub(crate) fn parse(text: &str) -> Result<Partition, PartitionError> {
        let (index, total) = text
            .trim()
            .split_once('/')
            .ok_or(PartitionError::Malformed)?;
        let number = |t: &str| -> Result<u64, PartitionError> {
            let t = t.trim();
            if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
                return Err(PartitionError::Malformed);
            }
            t.parse().map_err(|_| PartitionError::Malformed)
        };
        let (index, total) = (number(index)?, number(total)?);
        if index == 0 || index > total {
            return Err(PartitionError::Malformed);
        }
        Ok(Partition { index, total })
    }

    /// Bazel's sharding: `TEST_SHARD_INDEX` counts from 0, `TEST_TOTAL_SHARDS` is N.
    pub(crate) fn from_bazel(index: &str, total: &str) -> Result<Partition, PartitionError> {
        let index: u64 = index
            .trim()
            .parse()
            .map_err(|_| PartitionError::Malformed)?;
        Partition::parse(&format!("{}/{}", index + 1, total.trim()))
    }

    /// The part (from 1 to `total`) a trial named `name` belongs to.
    pub(crate) fn part_of(name: &str, total: u64) -> u64 {
        stable_hash(name.as_bytes()) % total.max(1) + 1
    }

    /// Whether the trial named `name` is in this part.
    pub(crate) fn contains(&self, name: &str) -> bool {
        Partition::part_of(name, self.total) == self.index
    }
}

impl fmt::Display for Partition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.total)
    }
}

/// 64-bit FNV-1a: fixed by its definition, the same on every platform and in every version
/// (std's hashers promise neither), so a trial stays in its part.
pub(crate) fn stable_hash(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// A fingerprint of a set of trial names, whatever their order: the stable hash of the sorted
/// names, one a line, in hex.
pub(crate) fn fingerprint<'a>(names: impl IntoIterator<Item = &'a str>) -> String {
    let mut names: Vec<&str> = names.into_iter().collect();
    names.sort_unstable();
    let mut text = Vec::new();
    for name in names {
        text.extend_from_slice(name.as_bytes());
        text.push(b'\n');
    }
    format!("{:016x}", stable_hash(&text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partitions_parse_and_refuse_what_is_none() {
        assert_eq!(
            Partition::parse("2/3"),
            Ok(Partition { index: 2, total: 3 })
        );
        for bad in ["0/3", "4/3", "3", "/3", "a/b", "-1/3", "1/0", "1/3/4", ""] {
            assert_eq!(
                Partition::parse(bad),
                Err(PartitionError::Malformed),
                "{bad}"
            );
        }
        assert_eq!(
            Partition::from_bazel("0", "4"),
            Ok(Partition { index: 1, total: 4 })
        );
        assert!(Partition::from_bazel("4", "4").is_err());
    }

    /// The hash is FNV-1a's published one (its test vectors), so parts never move between
    /// versions of the runner.
    #[test]
    fn the_hash_is_fnv1a() {
        assert_eq!(stable_hash(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(stable_hash(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(stable_hash(b"foobar"), 0x8594_4171_f739_67e8);
    }

    /// Each name is in exactly one part, and the parts of a name do not depend on the others.
    #[test]
    fn the_parts_are_disjoint_covering_and_stable() {
        let names: Vec<String> = (0..1000)
            .map(|i| format!("slice::f::case_{i}::int8"))
            .collect();
        for total in [1, 2, 3, 7] {
            let parts: Vec<Partition> = (1..=total)
                .map(|index| Partition { index, total })
                .collect();
            let mut sizes = vec![0; total as usize];
            for name in &names {
                let holding: Vec<&Partition> = parts.iter().filter(|p| p.contains(name)).collect();
                assert_eq!(holding.len(), 1, "{name} in {holding:?}");
                sizes[holding[0].index as usize - 1] += 1;
            }
            // Roughly even parts.
            assert!(sizes.iter().all(|&s| s * total as usize > 700), "{sizes:?}");
        }
        assert_eq!(fingerprint(["b", "a"]), fingerprint(["a", "b"]));
        assert_ne!(fingerprint(["a"]), fingerprint(["a", "b"]));
    }
}
