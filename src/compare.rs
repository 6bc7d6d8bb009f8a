//! Comparison of an implementation's outputs with a case's expectation, and the one place
//! that says how close is close enough.
//!
//! Layout operators (shuffle, slice, as_strided, reformat) move data, so they are compared bit
//! for bit: NaN payloads and -0.0 count ([`compare_exact`]).
//!
//! Scale computes, and two correct implementations may round differently (`docs/semantics.md` §9:
//! `pow` is not correctly rounded; `x·scale + shift` may be one fused multiply-add or two
//! roundings), so it is compared within a tolerance ([`compare_within`]):
//! - float outputs by **ULP distance**: how many representable values apart two results are,
//!   counted on the format's ordered integer line (magnitude bits, negated for negative
//!   values). -0.0 and +0.0 both sit at 0, so they are **equal**: the sign of a zero result
//!   is not compared (the formula's `-0.0 · 1 + 0.0` is +0.0, while an engine that skips the
//!   add of a default shift keeps -0.0; both are right). The smallest subnormals of either
//!   sign are 2 apart;
//! - NaN matches any NaN (payload and sign ignored), and nothing else;
//! - ±∞ matches only the same infinity: the largest finite value is not "1 ULP" from ∞;
//! - int8 outputs by **absolute difference**.
//!
//! Defaults, by output dtype ([`default_tolerance`]), and why:
//!
//! | output | power = 1 | power ≠ 1 |
//! |---|---|---|
//! | float32 | 1 ULP | 4 ULP |
//! | float16, bfloat16 | 1 ULP | 2 ULP |
//! | int8 | 1 | 1 |
//!
//! - float32, power = 1: FMA against a multiply then an add differ by at most 1 ULP when the
//!   product does not cancel against the shift (§9). Cases must not rely on cancellation.
//! - float32, power ≠ 1: vendor `powf`s are off by 1 ULP in about a quarter of the elements
//!   (ONNX Runtime, §9) and by up to 2.6 ULP in vectorised libraries (Arm optimized-routines'
//!   AdvSIMD `powf`), and a 1-ULP difference in the base grows `|power|`-fold: 4 covers
//!   squaring plus the `pow` error.
//! - float16 / bfloat16: the float32 result is rounded once more, which absorbs most float32
//!   differences; an implementation that flips a rounding, or computes natively in half
//!   precision, is 1 ULP away (2 with `pow`).
//! - int8: a value computed a hair either side of a .5 tie rounds to neighbouring integers.
//!
//! A case overrides the default with `tolerance: {ulp: N}` or `tolerance: {abs: N}`; 0 asks for
//! equality under the rules above. A failure names the worst distance and where it was, and
//! the smallest tolerance that would have passed (if any would).

use std::fmt;

use crate::dtype::DType;
use crate::float::FloatFormat;
use crate::ops::Attrs;
use crate::tensor::Tensor;

/// How many differing elements a report lists.
pub const REPORTED_ELEMENTS: usize = 8;

/// A bound on how far an output element may be from the expected one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tolerance {
    /// Float outputs: at most this many representable values apart.
    Ulp(u64),
    /// Integer outputs: at most this far apart.
    Abs(u64),
}

impl fmt::Display for Tolerance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tolerance::Ulp(n) => write!(f, "{{ulp: {n}}}"),
            Tolerance::Abs(n) => write!(f, "{{abs: {n}}}"),
        }
    }
}

impl Tolerance {
    /// Whether this kind of tolerance measures outputs of `dtype`.
    pub fn applies_to(self, dtype: DType) -> bool {
        match self {
            Tolerance::Ulp(_) => dtype.float_format().is_some(),
            Tolerance::Abs(_) => dtype.float_format().is_none(),
        }
    }

    fn bound(self) -> u64 {
        match self {
            Tolerance::Ulp(n) | Tolerance::Abs(n) => n,
        }
    }

    fn with_bound(self, n: u64) -> Tolerance {
        match self {
            Tolerance::Ulp(_) => Tolerance::Ulp(n),
            Tolerance::Abs(_) => Tolerance::Abs(n),
        }
    }
}

/// How one output is compared.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Comparison {
    /// Bit for bit.
    Exact,
    Within(Tolerance),
}

/// The default tolerance of a Scale output of `dtype` (see the module doc's table); `None`
/// for a dtype Scale does not produce.
pub fn default_tolerance(dtype: DType, has_power: bool) -> Option<Tolerance> {
    match (dtype, has_power) {
        (DType::Float32, false) => Some(Tolerance::Ulp(1)),
        (DType::Float32, true) => Some(Tolerance::Ulp(4)),
        (DType::Float16 | DType::BFloat16, false) => Some(Tolerance::Ulp(1)),
        (DType::Float16 | DType::BFloat16, true) => Some(Tolerance::Ulp(2)),
        (DType::Int8, _) => Some(Tolerance::Abs(1)),
        _ => None,
    }
}

/// How an output of `dtype` of an op with `attrs` is compared: layout ops exactly, Scale
/// within the case's `tolerance`, or else the default for the dtype.
pub fn comparison_for(attrs: &Attrs, dtype: DType, tolerance: Option<Tolerance>) -> Comparison {
    match attrs {
        Attrs::Scale(scale) => tolerance
            .or_else(|| default_tolerance(dtype, scale.has_power()))
            .map_or(Comparison::Exact, Comparison::Within),
        _ => Comparison::Exact,
    }
}

/// Compares under `comparison`; `Err` carries the rendered report.
pub fn compare(expected: &Tensor, actual: &Tensor, comparison: Comparison) -> Result<(), String> {
    match comparison {
        Comparison::Exact => compare_exact(expected, actual),
        Comparison::Within(tolerance) => compare_within(expected, actual, tolerance),
    }
}

fn header_mismatch(expected: &Tensor, actual: &Tensor) -> Result<(), String> {
    if expected.dtype != actual.dtype || expected.shape != actual.shape {
        return Err(format!(
            "expected {} {:?}, got {} {:?}",
            expected.dtype, expected.shape, actual.dtype, actual.shape
        ));
    }
    Ok(())
}

/// Compares bit for bit; `Err` carries the rendered report.
pub fn compare_exact(expected: &Tensor, actual: &Tensor) -> Result<(), String> {
    header_mismatch(expected, actual)?;
    // Counted, and only the reported ones kept: an output may have 2^28 elements.
    let mut differing = 0;
    let mut first = Vec::with_capacity(REPORTED_ELEMENTS);
    for i in (0..expected.len()).filter(|&i| expected.bits(i) != actual.bits(i)) {
        differing += 1;
        if first.len() < REPORTED_ELEMENTS {
            first.push(i);
        }
    }
    if differing == 0 {
        return Ok(());
    }
    let mut report = format!(
        "{} of {} elements differ ({} {:?}); first {}:\n",
        differing,
        expected.len(),
        expected.dtype,
        expected.shape,
        first.len()
    );
    for &i in &first {
        report.push_str(&format!(
            "  at {:?}: expected {}, got {}\n",
            Tensor::unravel(&expected.shape, i),
            expected.dtype.format_bits(expected.bits(i)),
            actual.dtype.format_bits(actual.bits(i)),
        ));
    }
    Err(report)
}

/// How far apart two elements are.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Distance {
    /// ULPs for floats, the absolute difference for integers.
    Finite(u64),
    /// NaN against a number, or an infinity against anything but itself: no tolerance covers it.
    Unbounded,
}

impl fmt::Display for Distance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Distance::Finite(n) => write!(f, "{n}"),
            Distance::Unbounded => f.write_str("unbounded (NaN or infinity mismatch)"),
        }
    }
}

/// The distance between two elements of `dtype` under the module doc's rules.
pub fn distance(dtype: DType, a: u64, b: u64) -> Distance {
    match dtype.float_format() {
        None => Distance::Finite(dtype.bits_to_int(a).abs_diff(dtype.bits_to_int(b)) as u64),
        Some(format) => {
            let (a_nan, b_nan) = (format.is_nan(a), format.is_nan(b));
            if a_nan || b_nan {
                return if a_nan && b_nan {
                    Distance::Finite(0)
                } else {
                    Distance::Unbounded
                };
            }
            if format.decode(a).is_infinite() || format.decode(b).is_infinite() {
                return if a == b {
                    Distance::Finite(0)
                } else {
                    Distance::Unbounded
                };
            }
            Distance::Finite(ordinal(format, a).abs_diff(ordinal(format, b)))
        }
    }
}

/// The position of a non-NaN bit pattern on the format's ordered line; ±0 are both 0.
fn ordinal(format: FloatFormat, bits: u64) -> i64 {
    let sign = 1u64 << (format.total_bits() - 1);
    let magnitude = (bits & (sign - 1)) as i64;
    if bits & sign != 0 {
        -magnitude
    } else {
        magnitude
    }
}

/// Compares within `tolerance` (ULPs for float dtypes, absolute difference for integers).
pub fn compare_within(
    expected: &Tensor,
    actual: &Tensor,
    tolerance: Tolerance,
) -> Result<(), String> {
    header_mismatch(expected, actual)?;
    let dtype = expected.dtype;
    if !tolerance.applies_to(dtype) {
        return Err(format!(
            "tolerance {tolerance} does not apply to {dtype} outputs (ulp is for floats, abs for integers)"
        ));
    }
    // One pass, keeping only what the report shows: an output may have 2^28 elements.
    let mut outside = 0;
    let mut first: Vec<(usize, Distance)> = Vec::with_capacity(REPORTED_ELEMENTS);
    // The first element at the largest finite distance, and the first NaN or infinity mismatch.
    let mut worst_finite: Option<(usize, u64)> = None;
    let (mut unbounded, mut first_unbounded) = (0, None);
    for i in 0..expected.len() {
        let d = distance(dtype, expected.bits(i), actual.bits(i));
        if d <= Distance::Finite(tolerance.bound()) {
            continue;
        }
        outside += 1;
        if first.len() < REPORTED_ELEMENTS {
            first.push((i, d));
        }
        match d {
            Distance::Unbounded => {
                unbounded += 1;
                first_unbounded.get_or_insert(i);
            }
            Distance::Finite(n) => match worst_finite {
                Some((_, worst)) if worst >= n => {}
                _ => worst_finite = Some((i, n)),
            },
        }
    }
    if outside == 0 {
        return Ok(());
    }
    let unit = match tolerance {
        Tolerance::Ulp(_) => "ULP",
        Tolerance::Abs(_) => "abs",
    };
    let at = |i: usize| format!("{:?}", Tensor::unravel(&expected.shape, i));
    let mut report = format!(
        "{} of {} elements are outside tolerance {tolerance} ({dtype} {:?})\n",
        outside,
        expected.len(),
        expected.shape,
    );
    if let Some((i, n)) = worst_finite {
        report.push_str(&format!(
            "worst {unit} distance: {} at {}\n",
            Distance::Finite(n),
            at(i)
        ));
    }
    if let Some(i) = first_unbounded {
        report.push_str(&format!(
            "{unbounded} element(s) differ in NaN or infinity, first at {}: no tolerance passes\n",
            at(i)
        ));
    } else if let Some((_, n)) = worst_finite {
        report.push_str(&format!(
            "smallest tolerance that passes: {}\n",
            tolerance.with_bound(n)
        ));
    }
    report.push_str(&format!("first {}:\n", first.len()));
    for &(i, d) in &first {
        report.push_str(&format!(
            "  at {}: expected {}, got {} ({unit} distance {d})\n",
            at(i),
            dtype.format_bits(expected.bits(i)),
            dtype.format_bits(actual.bits(i)),
        ));
    }
    Err(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::scale;
    use crate::DType;

    #[test]
    fn nan_payload_and_signed_zero_matter() {
        let a = Tensor::from_bits(DType::Float16, vec![2], vec![0x7e00, 0x0000]);
        let b = Tensor::from_bits(DType::Float16, vec![2], vec![0x7e01, 0x8000]);
        let report = compare_exact(&a, &b).unwrap_err();
        assert!(report.starts_with("2 of 2 elements differ"), "{report}");
        assert!(
            report.contains("at [0]: expected nan(0x7e00), got nan(0x7e01)"),
            "{report}"
        );
        assert!(
            report.contains("at [1]: expected 0.0, got -0.0(0x8000)"),
            "{report}"
        );
        assert!(compare_exact(&a, &a).is_ok());
    }

    #[test]
    fn shape_and_dtype_mismatches() {
        let a = Tensor::from_bits(DType::Int8, vec![2], vec![1, 2]);
        let b = Tensor::from_bits(DType::Int8, vec![1, 2], vec![1, 2]);
        assert_eq!(
            compare_exact(&a, &b).unwrap_err(),
            "expected int8 [2], got int8 [1, 2]"
        );
        assert_eq!(
            compare_within(&a, &b, Tolerance::Abs(1)).unwrap_err(),
            "expected int8 [2], got int8 [1, 2]"
        );
    }

    #[test]
    fn ulp_distance_on_the_ordered_line() {
        let f32d =
            |a: f32, b: f32| distance(DType::Float32, a.to_bits() as u64, b.to_bits() as u64);
        assert_eq!(f32d(1.0, 1.0 + f32::EPSILON), Distance::Finite(1));
        assert_eq!(f32d(1.0, 1.0 - f32::EPSILON / 2.0), Distance::Finite(1));
        assert_eq!(f32d(-0.0, 0.0), Distance::Finite(0));
        let tiny = f32::from_bits(1);
        assert_eq!(f32d(-tiny, tiny), Distance::Finite(2));
        assert_eq!(f32d(f32::NAN, -f32::NAN), Distance::Finite(0));
        assert_eq!(f32d(f32::NAN, 1.0), Distance::Unbounded);
        assert_eq!(f32d(f32::MAX, f32::INFINITY), Distance::Unbounded);
        assert_eq!(f32d(f32::INFINITY, f32::NEG_INFINITY), Distance::Unbounded);
        assert_eq!(f32d(f32::INFINITY, f32::INFINITY), Distance::Finite(0));
        // float16: 1.0 (0x3c00) and 1.0009765625 (0x3c01); -1.0 (0xbc00) is far away.
        assert_eq!(
            distance(DType::Float16, 0x3c00, 0x3c01),
            Distance::Finite(1)
        );
        assert_eq!(
            distance(DType::Float16, 0x3c00, 0xbc00),
            Distance::Finite(2 * 0x3c00)
        );
        assert_eq!(
            distance(DType::Float16, 0x7e00, 0xfe01),
            Distance::Finite(0)
        );
        let i8 = |v: i128| DType::Int8.int_to_bits(v);
        assert_eq!(
            distance(DType::Int8, i8(-128), i8(127)),
            Distance::Finite(255)
        );
    }

    fn f32_tensor(values: &[f32]) -> Tensor {
        Tensor::from_bits(
            DType::Float32,
            vec![values.len()],
            values.iter().map(|v| v.to_bits() as u64).collect(),
        )
    }

    #[test]
    fn within_reports_worst_distance_place_and_passing_tolerance() {
        let up = |v: f32, n: u32| f32::from_bits(v.to_bits() + n);
        let expected = f32_tensor(&[1.0, 2.0, 3.0, -0.0]);
        let actual = f32_tensor(&[up(1.0, 1), 2.0, up(3.0, 3), 0.0]);
        assert!(compare_within(&expected, &actual, Tolerance::Ulp(3)).is_ok());
        let report = compare_within(&expected, &actual, Tolerance::Ulp(1)).unwrap_err();
        assert!(
            report.starts_with("1 of 4 elements are outside tolerance {ulp: 1}"),
            "{report}"
        );
        assert!(report.contains("worst ULP distance: 3 at [2]"), "{report}");
        assert!(
            report.contains("smallest tolerance that passes: {ulp: 3}"),
            "{report}"
        );
        let report = compare_within(&expected, &actual, Tolerance::Ulp(0)).unwrap_err();
        assert!(report.contains("2 of 4"), "{report}");
        assert!(
            report.contains("at [0]: expected 1.0, got 1.0000001 (ULP distance 1)"),
            "{report}"
        );

        let with_nan = f32_tensor(&[f32::NAN, 2.0, up(3.0, 2), f32::INFINITY]);
        let report = compare_within(&expected, &with_nan, Tolerance::Ulp(4)).unwrap_err();
        assert!(
            report.contains("2 element(s) differ in NaN or infinity, first at [0]"),
            "{report}"
        );
        assert!(!report.contains("smallest tolerance"), "{report}");
        assert!(compare_within(&with_nan, &with_nan, Tolerance::Ulp(0)).is_ok());
    }

    #[test]
    fn int8_tolerance_is_absolute() {
        let i8s = |values: &[i128]| {
            Tensor::from_bits(
                DType::Int8,
                vec![values.len()],
                values.iter().map(|&v| DType::Int8.int_to_bits(v)).collect(),
            )
        };
        let expected = i8s(&[2, -128, 0]);
        let actual = i8s(&[3, -127, 0]);
        assert!(compare_within(&expected, &actual, Tolerance::Abs(1)).is_ok());
        let report = compare_within(&expected, &actual, Tolerance::Abs(0)).unwrap_err();
        assert!(report.contains("worst abs distance: 1 at [0]"), "{report}");
        assert!(
            report.contains("smallest tolerance that passes: {abs: 1}"),
            "{report}"
        );
        assert!(compare_within(&expected, &actual, Tolerance::Ulp(1))
            .unwrap_err()
            .contains("does not apply"));
    }

    #[test]
    fn only_scale_gets_a_tolerance() {
        let scale: scale::Attrs = serde_yaml::from_str("{mode: uniform, power: [2]}").unwrap();
        let attrs = Attrs::Scale(scale);
        assert_eq!(
            comparison_for(&attrs, DType::Float32, None),
            Comparison::Within(Tolerance::Ulp(4))
        );
        assert_eq!(
            comparison_for(&attrs, DType::Int8, None),
            Comparison::Within(Tolerance::Abs(1))
        );
        assert_eq!(
            comparison_for(&attrs, DType::Float16, Some(Tolerance::Ulp(0))),
            Comparison::Within(Tolerance::Ulp(0))
        );
        let linear: scale::Attrs = serde_yaml::from_str("{mode: uniform, power: [1]}").unwrap();
        assert_eq!(
            comparison_for(&Attrs::Scale(linear), DType::Float32, None),
            Comparison::Within(Tolerance::Ulp(1))
        );
        let slice = Attrs::Slice(Default::default());
        assert_eq!(
            comparison_for(&slice, DType::Float32, Some(Tolerance::Ulp(3))),
            Comparison::Exact
        );
    }
}
