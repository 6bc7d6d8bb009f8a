//! npy files: the format of spec data files (`data: file.npy`) and of golden outputs, read and
//! written by this crate so that numpy reads them without it (the format:
//! numpy.lib.format, <https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html>).
//!
//! **npy dtypes.** numpy has no int4, fp8 or bfloat16: int4 is stored unpacked, one
//! sign-extended value per byte (`|i1`); fp8 and bfloat16 as their raw bits (`|u1`, `<u2`);
//! the reader's dtype says which. bool is `|b1`, float16 `<f2`, the others their numpy
//! equivalents. Every file written is npy format 1.0, C order, little-endian.

use crate::bytes::{from_le_bytes, to_le_bytes};
use opspec::dtype::DType;
use opspec::tensor::{Limits, Tensor};

/// The npy `descr` a dtype is stored as.
pub fn npy_descr(dtype: DType) -> &'static str {
    match dtype {
        DType::Bool => "|b1",
        DType::Int4 | DType::Int8 => "|i1",
        DType::UInt8 | DType::Fp8 => "|u1",
        DType::Int32 => "<i4",
        DType::Int64 => "<i8",
        DType::Float16 => "<f2",
        DType::BFloat16 => "<u2",
        DType::Float32 => "<f4",
    }
}

/// A tensor as an npy 1.0 file.
pub fn to_npy(tensor: &Tensor) -> Vec<u8> {
    let shape = match tensor.shape.as_slice() {
        [] => "()".to_owned(),
        [n] => format!("({n},)"),
        dims => format!(
            "({})",
            dims.iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let mut header = format!(
        "{{'descr': '{}', 'fortran_order': False, 'shape': {shape}, }}",
        npy_descr(tensor.dtype)
    );
    // Magic (6) + version (2) + header length (2) + header, padded to 64 bytes, ending in \n.
    let unpadded = 10 + header.len() + 1;
    header.push_str(&" ".repeat(unpadded.next_multiple_of(64) - unpadded));
    header.push('\n');
    let mut bytes = Vec::with_capacity(10 + header.len() + tensor.len() * 4);
    bytes.extend_from_slice(b"\x93NUMPY\x01\x00");
    bytes.extend_from_slice(&(header.len() as u16).to_le_bytes());
    bytes.extend_from_slice(header.as_bytes());
    if tensor.dtype == DType::Int4 {
        bytes.extend((0..tensor.len()).map(|i| tensor.bits(i) as u8));
    } else {
        bytes.extend(to_le_bytes(tensor));
    }
    bytes
}

/// The descrs read as `dtype`: the one [`npy_descr`] writes, and for the dtypes numpy lacks
/// also what `np.save` writes for ml_dtypes' `bfloat16`, `float8_e4m3fn` and `int4` arrays
/// (`<V2`, `<V1`, `<V1`: untyped bytes, so the reader's dtype says which it is).
pub fn npy_descrs(dtype: DType) -> &'static [&'static str] {
    match dtype {
        DType::Bool => &["|b1"],
        DType::Int4 => &["|i1", "<V1", "|V1"],
        DType::Int8 => &["|i1"],
        DType::UInt8 => &["|u1"],
        DType::Fp8 => &["|u1", "<V1", "|V1"],
        DType::Int32 => &["<i4"],
        DType::Int64 => &["<i8"],
        DType::Float16 => &["<f2"],
        DType::BFloat16 => &["<u2", "<V2", "|V2"],
        DType::Float32 => &["<f4"],
    }
}

/// Why bytes are not an npy file of the dtype asked for.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NpyError {
    /// Not npy 1.0-3.0, or a header this reader cannot parse.
    #[error("{0}")]
    Header(String),
    /// The header's descr is not one [`npy_descrs`] lists for the dtype.
    #[error("npy descr is {descr:?}; {dtype} is stored as {}", npy_descrs(*.dtype).iter().map(|d| format!("{d:?}")).collect::<Vec<_>>().join(" or "))]
    Descr { descr: String, dtype: DType },
    /// The data does not hold the header's shape of the dtype.
    #[error("{0}")]
    Data(String),
}

/// An npy header: the element descr and the shape, C order (a Fortran-order file is refused).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NpyHeader {
    pub descr: String,
    pub shape: Vec<usize>,
    /// Where the data starts in the file.
    pub data_offset: usize,
}

/// Reads the header of an npy file (format 1.0-3.0).
pub fn npy_header(bytes: &[u8]) -> Result<NpyHeader, NpyError> {
    let bad = |message: &str| NpyError::Header(message.to_owned());
    let rest = bytes
        .strip_prefix(b"\x93NUMPY")
        .ok_or_else(|| bad("not an npy file (no \\x93NUMPY magic)"))?;
    let (major, rest) = rest
        .split_at_checked(2)
        .ok_or_else(|| bad("truncated npy header"))?;
    let (header_len, rest) = match major[0] {
        1 => {
            let (len, rest) = rest
                .split_at_checked(2)
                .ok_or_else(|| bad("truncated npy header"))?;
            (u16::from_le_bytes([len[0], len[1]]) as usize, rest)
        }
        2 | 3 => {
            let (len, rest) = rest
                .split_at_checked(4)
                .ok_or_else(|| bad("truncated npy header"))?;
            (
                u32::from_le_bytes(len.try_into().expect("4 bytes")) as usize,
                rest,
            )
        }
        v => return Err(bad(&format!("npy format version {v} is not supported"))),
    };
    let header = rest
        .get(..header_len)
        .ok_or_else(|| bad("truncated npy header"))?;
    let header = std::str::from_utf8(header).map_err(|_| bad("npy header is not text"))?;
    let field = |name: &str| -> Result<&str, NpyError> {
        let key = format!("'{name}':");
        let start = header
            .find(&key)
            .ok_or_else(|| bad(&format!("npy header has no {name}: {header:?}")))?
            + key.len();
        Ok(header[start..].trim_start())
    };
    let descr = field("descr")?
        .strip_prefix('\'')
        .and_then(|d| d.split('\'').next())
        .ok_or_else(|| bad("npy header: bad descr"))?;
    if !field("fortran_order")?.starts_with("False") {
        return Err(bad("npy file is in Fortran order; only C order is read"));
    }
    let shape_text = field("shape")?
        .strip_prefix('(')
        .and_then(|s| s.split(')').next())
        .ok_or_else(|| bad("npy header: bad shape"))?;
    let shape = shape_text
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| {
            s.parse::<usize>()
                .map_err(|_| bad(&format!("npy shape entry {s:?}")))
        })
        .collect::<Result<Vec<usize>, NpyError>>()?;
    Ok(NpyHeader {
        descr: descr.to_owned(),
        shape,
        data_offset: bytes.len() - rest.len() + header_len,
    })
}

/// Reads an npy file (format 1.0-3.0, C order) as a tensor of `dtype`, checking the header's
/// descr against [`npy_descrs`]. int4 is one value per byte: sign-extended (`|i1`, as
/// [`to_npy`] writes it) or in the low nibble with the high one 0 (ml_dtypes' `<V1`).
pub fn from_npy(dtype: DType, bytes: &[u8], limits: Limits) -> Result<Tensor, NpyError> {
    let header = npy_header(bytes)?;
    if !npy_descrs(dtype).contains(&header.descr.as_str()) {
        return Err(NpyError::Descr {
            descr: header.descr,
            dtype,
        });
    }
    let data = &bytes[header.data_offset..];
    let shape = header.shape;
    if dtype == DType::Int4 {
        let n = limits
            .checked_volume(&shape)
            .map_err(|e| NpyError::Data(e.message))?;
        if data.len() != n {
            return Err(NpyError::Data(format!(
                "int4 {shape:?} needs {n} bytes, got {}",
                data.len()
            )));
        }
        let nibbles = header.descr.contains('V');
        let bits = data
            .iter()
            .map(|&b| {
                let value = match nibbles {
                    true if b < 0x10 => (b << 4) as i8 >> 4,
                    true => i8::MIN, // a high nibble: not what ml_dtypes writes
                    false => b as i8,
                };
                if (-8..=7).contains(&value) {
                    Ok(DType::Int4.int_to_bits(value as i128))
                } else {
                    Err(NpyError::Data(format!(
                        "int4 byte {b:#04x} is out of range"
                    )))
                }
            })
            .collect::<Result<Vec<u64>, NpyError>>()?;
        return Ok(Tensor::from_bits(dtype, shape, bits));
    }
    from_le_bytes(dtype, shape, data, limits).map_err(|e| NpyError::Data(e.to_string()))
}

/// The bytes of one element as the header's descr gives them (`<f4` → 4).
fn descr_size(descr: &str) -> Option<u64> {
    descr.get(2..)?.parse().ok()
}

/// The largest header read: numpy writes a few hundred bytes; 1 MiB allows any real one.
const MAX_HEADER: u64 = 1 << 20;

/// Reads an npy file whose header is checked before its data: the file must be a regular
/// file ([`crate::source::open_regular`]), its shape within the element budget
/// ([`Limits::checked_volume`]), and its size exactly the header's plus the data the shape and descr
/// imply, so that a padded, truncated or endless file is refused before its data is read.
/// Returns the whole file (header and data) for [`from_npy`].
pub fn read_npy_file(path: &std::path::Path, limits: Limits) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let shown = path.display();
    let mut file = crate::source::open_regular(path)?;
    let size = file
        .metadata()
        .map_err(|e| format!("cannot read {shown}: {e}"))?
        .len();
    let mut head = Vec::with_capacity(64);
    (&mut file)
        .take(size.min(MAX_HEADER + 12))
        .read_to_end(&mut head)
        .map_err(|e| format!("cannot read {shown}: {e}"))?;
    let header = match npy_header(&head) {
        Ok(header) => header,
        Err(e) if size > MAX_HEADER + 12 && head.len() as u64 >= MAX_HEADER => {
            return Err(format!(
                "{shown}: {e} (within its first {MAX_HEADER} bytes)"
            ))
        }
        Err(e) => return Err(format!("{shown}: {e}")),
    };
    let volume = limits
        .checked_volume(&header.shape)
        .map_err(|e| format!("{shown}: {}", e.message))?;
    let item = descr_size(&header.descr)
        .ok_or_else(|| format!("{shown}: npy descr {:?} has no element size", header.descr))?;
    let expected = (volume as u64)
        .checked_mul(item)
        .and_then(|data| data.checked_add(header.data_offset as u64))
        .ok_or_else(|| format!("{shown}: the npy header's shape overflows"))?;
    if size != expected {
        return Err(format!(
            "{shown}: the file is {size} bytes; its header ({} of shape {:?}) makes it {expected}",
            header.descr, header.shape
        ));
    }
    let mut bytes = Vec::with_capacity(expected as usize);
    bytes.extend_from_slice(&head[..head.len().min(expected as usize)]);
    (&mut file)
        .take(expected - bytes.len() as u64)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read {shown}: {e}"))?;
    if bytes.len() as u64 != expected {
        return Err(format!(
            "{shown}: the file changed while read ({} of {expected} bytes)",
            bytes.len()
        ));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn npy_header_is_numpy_1_0_aligned_to_64() {
        let t = Tensor::from_bits(DType::Float32, vec![2, 3], (0..6).collect());
        let bytes = to_npy(&t);
        assert_eq!(&bytes[..8], b"\x93NUMPY\x01\x00");
        let header_len = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
        assert_eq!((10 + header_len) % 64, 0);
        let header = std::str::from_utf8(&bytes[10..10 + header_len]).unwrap();
        assert!(header.starts_with("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"));
        assert!(header.ends_with('\n'));
        assert_eq!(bytes.len(), 10 + header_len + 24);
        assert_eq!(from_npy(DType::Float32, &bytes, Limits::DEFAULT), Ok(t));
    }

    /// `tensor` as an npy file whose header says `descr` (of the same length) instead.
    fn with_descr(tensor: &Tensor, descr: &str) -> Vec<u8> {
        let bytes = to_npy(tensor);
        let written = format!("'{}'", npy_descr(tensor.dtype));
        let at = bytes
            .windows(written.len())
            .position(|w| w == written.as_bytes())
            .unwrap();
        let mut bytes = bytes;
        bytes[at + 1..at + 1 + descr.len()].copy_from_slice(descr.as_bytes());
        bytes
    }

    #[test]
    fn ml_dtypes_files_read_as_the_dtypes_numpy_lacks() {
        // The bytes `np.save` writes for ml_dtypes arrays (ml_dtypes 0.6): bfloat16 [1, 2, 3]
        // as <V2 80 3f 00 40 40 40; float8_e4m3fn [1, -0, nan, 448] as <V1 38 80 7f 7e;
        // int4 [-1, -8, 7, 0] as <V1 0f 08 07 00 (the nibble alone, not sign-extended).
        let bf16 = Tensor::from_bits(DType::BFloat16, vec![3], vec![0x3f80, 0x4000, 0x4040]);
        assert_eq!(
            from_npy(DType::BFloat16, &with_descr(&bf16, "<V2"), Limits::DEFAULT),
            Ok(bf16)
        );
        let fp8 = Tensor::from_bits(DType::Fp8, vec![4], vec![0x38, 0x80, 0x7f, 0x7e]);
        assert_eq!(
            from_npy(DType::Fp8, &with_descr(&fp8, "<V1"), Limits::DEFAULT),
            Ok(fp8)
        );
        let nibbles = Tensor::from_bits(DType::UInt8, vec![4], vec![0x0f, 0x08, 0x07, 0x00]);
        let int4 = Tensor::from_bits(
            DType::Int4,
            vec![4],
            [-1, -8, 7, 0].map(|v| DType::Int4.int_to_bits(v)).to_vec(),
        );
        assert_eq!(
            from_npy(DType::Int4, &with_descr(&nibbles, "<V1"), Limits::DEFAULT),
            Ok(int4)
        );
        // Sign-extended bytes are `|i1`'s form; in a `<V1` file a high nibble is refused, and
        // in `|i1` a byte past 7 is.
        let extended = Tensor::from_bits(DType::UInt8, vec![1], vec![0xff]);
        assert!(from_npy(DType::Int4, &with_descr(&extended, "<V1"), Limits::DEFAULT).is_err());
        let eight = Tensor::from_bits(DType::Int8, vec![1], vec![0x08]);
        assert!(from_npy(DType::Int4, &to_npy(&eight), Limits::DEFAULT).is_err());
        // A V descr is untyped bytes: only the dtypes numpy lacks read it.
        let e = from_npy(
            DType::Float16,
            &with_descr(&bf16_zero(), "<V2"),
            Limits::DEFAULT,
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            r#"npy descr is "<V2"; float16 is stored as "<f2""#
        );
    }

    fn bf16_zero() -> Tensor {
        Tensor::from_bits(DType::BFloat16, vec![1], vec![0])
    }
}
