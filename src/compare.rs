//! Comparison of an implementation's outputs with a case's expectation.
//!
//! Layout operators move data, so they are compared bit for bit: NaN payloads and -0.0 count.
//! A mismatch renders as a short report (dtype, shape, then the first differing elements with
//! their indices), never as a dump of every value.

use crate::tensor::Tensor;

/// How many differing elements a report lists.
pub const REPORTED_ELEMENTS: usize = 8;

/// Compares bit for bit; `Err` carries the rendered report.
pub fn compare_exact(expected: &Tensor, actual: &Tensor) -> Result<(), String> {
    if expected.dtype != actual.dtype || expected.shape != actual.shape {
        return Err(format!(
            "expected {} {:?}, got {} {:?}",
            expected.dtype, expected.shape, actual.dtype, actual.shape
        ));
    }
    let differing: Vec<usize> = (0..expected.len())
        .filter(|&i| expected.bits(i) != actual.bits(i))
        .collect();
    if differing.is_empty() {
        return Ok(());
    }
    let mut report = format!(
        "{} of {} elements differ ({} {:?}); first {}:\n",
        differing.len(),
        expected.len(),
        expected.dtype,
        expected.shape,
        differing.len().min(REPORTED_ELEMENTS)
    );
    for &i in differing.iter().take(REPORTED_ELEMENTS) {
        report.push_str(&format!(
            "  at {:?}: expected {}, got {}\n",
            Tensor::unravel(&expected.shape, i),
            expected.dtype.format_bits(expected.bits(i)),
            actual.dtype.format_bits(actual.bits(i)),
        ));
    }
    Err(report)
}

#[cfg(test)]
mod tests {
    use super::*;
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
    }
}
