//! The fast paths against the plain loops, on generated tables: transposes, slices with every
//! out-of-bounds rule, strided views (as tables and as strides) with zero and repeated strides, format maps with split
//! axes, random tables; ranks 0–6, axes long enough to cross tile edges; every dtype (so all
//! four word widths, int4 and bool among the bytes).

use super::*;
use crate::shuffle::{reshape_strides, transpose_reshape_transpose};
use opspec::dtype::DType;
use opspec::tensor::{Limits, Tensor};

/// xorshift64*: deterministic, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    fn permutation(&mut self, n: usize) -> Vec<usize> {
        let mut perm: Vec<usize> = (0..n).collect();
        for i in (1..n).rev() {
            perm.swap(i, self.below(i + 1));
        }
        perm
    }

    /// A shape of rank 0–6 with at most `budget` elements; now and then a long axis (tiles),
    /// a 1 (folded away) or a 0 (empty).
    fn shape(&mut self, budget: usize) -> Vec<usize> {
        let rank = self.below(7);
        let mut shape = Vec::with_capacity(rank);
        let mut volume = 1;
        for _ in 0..rank {
            let dim = match self.below(10) {
                0 => 1,
                1 if self.chance(20) => 0,
                2 | 3 => 20 + self.below(60),
                _ => 2 + self.below(5),
            };
            let dim = if volume * dim.max(1) > budget {
                1 + self.below(3)
            } else {
                dim
            };
            volume *= dim.max(1);
            shape.push(dim);
        }
        shape
    }

    /// Random bits valid for `dtype` (bool 0/1, int4 sign-extended nibbles).
    fn tensor(&mut self, dtype: DType, shape: Vec<usize>) -> Tensor {
        let len: usize = shape.iter().product();
        let bits = (0..len)
            .map(|_| {
                let raw = self.next();
                match dtype {
                    DType::Bool => raw & 1,
                    DType::Int4 => (((raw as u8) << 4) as i8 >> 4) as u8 as u64,
                    _ => raw,
                }
            })
            .collect();
        Tensor::from_bits(dtype, shape, bits)
    }
}

/// Slice's tables (semantics of `ops::slice`, all five rules) for an input of `shape`.
fn slice_tables(rng: &mut Rng, shape: &[usize]) -> AxisGather {
    let strides = row_major_strides(shape);
    let mode = rng.below(5);
    let mut budget = 8000; // output elements
    let tables = shape
        .iter()
        .zip(&strides)
        .map(|(&d, &stride)| {
            let d = d as i64;
            let long = rng.chance(30);
            let size = rng.below(if long { 70 } else { 9 }).min(budget);
            budget /= size.max(1);
            let step = [1, 1, 2, 3, -1, -2, 0][rng.below(7)];
            let start = rng.below(2 * d as usize + 6) as i64 - d - 3;
            (0..size as i64)
                .map(|y| {
                    let x = start + y * step;
                    let z = match mode {
                        _ if d == 0 => None,
                        0 => (0..d).contains(&x).then_some(x), // fill
                        1 => Some(x.rem_euclid(d)),            // wrap
                        2 => Some(x.clamp(0, d - 1)),          // clamp
                        3 if d == 1 => Some(0),                // reflect
                        3 => {
                            let period = 2 * (d - 1);
                            let r = x.rem_euclid(period);
                            Some(if r < d { r } else { period - r })
                        }
                        _ => (0..d).contains(&x).then_some(x),
                    };
                    z.map(|z| z as usize * stride)
                })
                .collect()
        })
        .collect();
    AxisGather { base: 0, tables }
}

/// The unpack map of a vector-major format: axis `c` split into (blocks, lanes) slots.
fn vector_tables(rng: &mut Rng, shape: &[usize]) -> Option<(AxisGather, usize)> {
    if shape.is_empty() {
        return None;
    }
    let c = rng.below(shape.len());
    let lanes = [2, 4, 8, 16, 32][rng.below(5)];
    let mut padded = shape.to_vec();
    padded[c] = shape[c].div_ceil(lanes) * lanes;
    // memory: [.., blocks, rest.., lanes]
    let mut memory: Vec<usize> = padded.clone();
    memory[c] = padded[c] / lanes;
    memory.push(lanes);
    let memory_strides = row_major_strides(&memory);
    let lane_stride = memory_strides[memory.len() - 1];
    let tables = shape
        .iter()
        .enumerate()
        .map(|(axis, &dim)| {
            (0..dim)
                .map(|y| {
                    Some(if axis == c {
                        (y / lanes) * memory_strides[c] + (y % lanes) * lane_stride
                    } else {
                        y * memory_strides[axis]
                    })
                })
                .collect()
        })
        .collect();
    Some((AxisGather { base: 0, tables }, memory.iter().product()))
}

/// Tables over a source of the returned length.
fn gather_tables(rng: &mut Rng) -> (AxisGather, usize) {
    match rng.below(6) {
        0 => {
            let shape = rng.shape(6000);
            let perm = rng.permutation(shape.len());
            (transpose_tables(&shape, &perm), shape.iter().product())
        }
        1 => {
            let shape = rng.shape(6000);
            (slice_tables(rng, &shape), shape.iter().product())
        }
        2 => {
            let (view, len) = strided_view(rng);
            (view_tables(&view), len)
        }
        3 => {
            let shape = rng.shape(6000);
            match vector_tables(rng, &shape) {
                Some((tables, len)) => (tables, len),
                None => (
                    AxisGather {
                        base: 0,
                        tables: vec![],
                    },
                    1,
                ),
            }
        }
        4 => {
            // Random tables, with holes.
            let shape = rng.shape(3000);
            let spread = 1 + rng.below(100);
            let tables: Vec<Vec<Option<usize>>> = shape
                .iter()
                .map(|&dim| {
                    (0..dim)
                        .map(|_| (!rng.chance(10)).then(|| rng.below(spread)))
                        .collect()
                })
                .collect();
            let base = rng.below(spread);
            let len = base + tables.len() * spread + 1;
            (AxisGather { base, tables }, len)
        }
        _ => {
            // A transpose of a sliced tensor: tiles over tables with fills around them.
            let shape = rng.shape(6000);
            let mut tables = slice_tables(rng, &shape);
            let perm = rng.permutation(tables.tables.len());
            tables.tables = perm
                .iter()
                .map(|&axis| tables.tables[axis].clone())
                .collect();
            (tables, shape.iter().product())
        }
    }
}

/// A strided view, zero strides (broadcast) and overlaps included, and a source length that
/// holds it.
fn strided_view(rng: &mut Rng) -> (StridedView, usize) {
    let shape = rng.shape(6000);
    let strides: Vec<usize> = shape
        .iter()
        .map(|_| [0, 1, 2, 3, 7, 32, 40, 100][rng.below(8)])
        .collect();
    let base = rng.below(10);
    let last: usize = shape
        .iter()
        .zip(&strides)
        .map(|(&d, &s)| d.saturating_sub(1) * s)
        .sum();
    let len = base + last + 1 + rng.below(3);
    (
        StridedView {
            shape,
            strides,
            base,
        },
        len,
    )
}

/// Where two buffers first differ, briefly (a failure message must stay readable).
fn difference(got: &Buffer, expected: &Buffer) -> Option<String> {
    if got == expected {
        return None;
    }
    if got.len() != expected.len() {
        return Some(format!("lengths {} and {}", got.len(), expected.len()));
    }
    let at = (0..got.len()).find(|&i| got.bits(i) != expected.bits(i))?;
    Some(format!(
        "element {at} of {} is {:#x}, expected {:#x}",
        got.len(),
        got.bits(at),
        expected.bits(at)
    ))
}

/// Tables, briefly: shape, base, and each table's first entries.
fn brief(tables: &AxisGather) -> String {
    let entries: Vec<String> = tables
        .tables
        .iter()
        .map(|t| {
            format!(
                "{:?}{}",
                &t[..t.len().min(6)],
                if t.len() > 6 { "…" } else { "" }
            )
        })
        .collect();
    format!(
        "shape {:?} base {} tables [{}]",
        tables.shape(),
        tables.base,
        entries.join(", ")
    )
}

fn dtypes() -> impl Iterator<Item = DType> {
    DType::ALL.into_iter().cycle()
}

fn generated_gathers() {
    let mut rng = Rng(0x5eed_1a70_0000_0001);
    for (case, dtype) in (0..2000).zip(dtypes()) {
        let (tables, len) = gather_tables(&mut rng);
        let source = rng.tensor(dtype, vec![len]);
        let fill = rng.tensor(dtype, vec![]).bits(0);
        let expected = gather_reference(&source.buffer, &tables, fill);
        let got = gather(&source.buffer, &tables, fill);
        if let Some(why) = difference(&got, &expected) {
            panic!("case {case}, {dtype}, {}: {why}", brief(&tables));
        }
    }
}

fn generated_views() {
    let mut rng = Rng(0x5eed_0a55_7d1d_0003);
    for (case, dtype) in (0..1000).zip(dtypes()) {
        let (view, len) = strided_view(&mut rng);
        let source = rng.tensor(dtype, vec![len]);
        let expected = gather_reference(&source.buffer, &view_tables(&view), 0);
        let got = gather_view(&source.buffer, &view);
        if let Some(why) = difference(&got, &expected) {
            panic!("case {case}, {dtype}, {view:?}: {why}");
        }
    }
}

fn generated_scatters() {
    let mut rng = Rng(0x5eed_5ca7_7e40_0002);
    for (case, dtype) in (0..2000).zip(dtypes()) {
        let shape = rng.shape(6000);
        // Injective maps: a format's unpack map, or a transpose of a padded row-major layout.
        let (mut tables, len) = match vector_tables(&mut rng, &shape) {
            Some(found) if rng.chance(50) => found,
            _ => {
                let padded: Vec<usize> = shape.iter().map(|&d| d + rng.below(3)).collect();
                let perm = rng.permutation(shape.len());
                let permuted: Vec<usize> = perm.iter().map(|&a| padded[a]).collect();
                let strides = row_major_strides(&permuted);
                let mut of_axis = vec![0; shape.len()];
                for (position, &axis) in perm.iter().enumerate() {
                    of_axis[axis] = strides[position];
                }
                let base = rng.below(4);
                let len = base + padded.iter().product::<usize>() + rng.below(3);
                (strided_tables(&shape, &of_axis, base), len)
            }
        };
        // Now and then drop some elements (None = not written).
        if rng.chance(20) {
            for table in &mut tables.tables {
                for entry in table.iter_mut() {
                    if rng.chance(5) {
                        *entry = None;
                    }
                }
            }
        }
        let source = rng.tensor(dtype, shape.clone());
        let fill = if rng.chance(50) {
            0
        } else {
            rng.tensor(dtype, vec![]).bits(0)
        };
        let expected = scatter_reference(&source.buffer, &tables, len, fill);
        let got = scatter(&source.buffer, &tables, len, fill);
        if let Some(why) = difference(&got, &expected) {
            panic!("case {case}, {dtype}, len {len}, {}: {why}", brief(&tables));
        }
    }
}

#[test]
fn scatter_of_the_unpack_map_inverts_gather() {
    let mut rng = Rng(7);
    for _ in 0..300 {
        let shape = rng.shape(4000);
        let Some((tables, len)) = vector_tables(&mut rng, &shape) else {
            continue;
        };
        let logical = rng.tensor(DType::Float16, shape);
        let image = scatter(&logical.buffer, &tables, len, 0);
        let back = gather(&image, &tables, 0);
        if let Some(why) = difference(&back, &logical.buffer) {
            panic!("{}: {why}", brief(&tables));
        }
    }
}

fn large_tables() {
    // Big enough for many tiles and long rows: NCHW → NHWC, a swap of the last two axes,
    // a padded window with each rule, a flip.
    let mut rng = Rng(11);
    let shape = [2, 37, 45, 67];
    for dtype in [
        DType::Bool,
        DType::Int4,
        DType::Float16,
        DType::Float32,
        DType::Int64,
    ] {
        let input = rng.tensor(dtype, shape.to_vec());
        let mut all_tables = vec![
            transpose_tables(&shape, &[0, 2, 3, 1]),
            transpose_tables(&shape, &[0, 1, 3, 2]),
            transpose_tables(&shape, &[3, 2, 1, 0]),
        ];
        for _ in 0..8 {
            all_tables.push(slice_tables(&mut rng, &shape));
        }
        // N, W, two channels between fill, H: tiles of W rows (a split piece's share of 67)
        // far apart in the destination, built in the local buffer and stored, some of them
        // all fill.
        let strides = row_major_strides(&shape);
        let axis = |len: usize, stride: usize| (0..len).map(|y| Some(y * stride)).collect();
        all_tables.push(AxisGather {
            base: 0,
            tables: vec![
                axis(shape[0], strides[0]),
                axis(shape[3], strides[3]),
                vec![None, Some(0), None, Some(5 * strides[1])],
                axis(shape[2], strides[2]),
            ],
        });
        for tables in all_tables {
            let expected = gather_reference(&input.buffer, &tables, 1);
            let got = gather(&input.buffer, &tables, 1);
            if let Some(why) = difference(&got, &expected) {
                panic!("{dtype}, {}: {why}", brief(&tables));
            }
        }
    }
}

/// Gathers and scatters on generated tables, and large ones, agree with the plain loops; and
/// between them they take every fast path (one test, so that the path counts are its own).
#[test]
fn fast_paths_match_the_reference_on_generated_tables() {
    generated_gathers();
    generated_views();
    generated_scatters();
    large_tables();
    out_of_bounds();
    let missed: Vec<_> = coverage::ALL
        .iter()
        .copied()
        .filter(|&path| coverage::hits(path) == 0)
        .collect();
    assert!(missed.is_empty(), "no generated tables take {missed:?}");
}

#[test]
fn out_of_bounds_tables_panic_as_the_plain_loop_does() {
    out_of_bounds();
}

fn out_of_bounds() {
    let source = Buffer::W32(vec![1, 2, 3]);
    let tables = strided_tables(&[4], &[1], 0);
    let fast = std::panic::catch_unwind(|| gather(&source, &tables, 0));
    let plain = std::panic::catch_unwind(|| gather_reference(&source, &tables, 0));
    assert!(fast.is_err() && plain.is_err());
}

#[test]
fn reshape_strides_follow_numpy() {
    // A transposed [2, 3] (strides [1, 2]) cannot be flattened; splitting an axis always works.
    assert_eq!(reshape_strides(&[3, 2], &[1, 3], &[6]), None);
    assert_eq!(
        reshape_strides(&[6, 4], &[1, 6], &[2, 3, 4]),
        Some(vec![3, 1, 6])
    );
    assert_eq!(
        reshape_strides(&[2, 3, 4], &[12, 4, 1], &[6, 4]),
        Some(vec![4, 1])
    );
    // Length-1 axes may take any stride; the 6 is contiguous.
    let strides = reshape_strides(&[2, 1, 3], &[3, 99, 1], &[1, 6, 1]).unwrap();
    assert_eq!(strides[1], 1);
    assert_eq!(reshape_strides(&[2, 0], &[1, 1], &[0, 5]), Some(vec![0, 0]));
}

/// Factors `volume` into a random shape (for reshapes).
fn factor(rng: &mut Rng, volume: usize) -> Vec<usize> {
    let mut dims = Vec::new();
    let mut rest = volume;
    while rest > 1 && dims.len() < 5 {
        let divisors: Vec<usize> = (2..=rest).filter(|d| rest % d == 0).collect();
        let d = divisors[rng.below(divisors.len().min(4))];
        dims.push(d);
        rest /= d;
    }
    if rest > 1 {
        dims.push(rest);
    }
    if rng.chance(30) {
        dims.insert(rng.below(dims.len() + 1), 1);
    }
    if volume == 0 {
        dims = vec![0, 3];
    }
    dims
}

#[test]
fn composed_shuffles_match_two_passes() {
    let mut rng = Rng(0x5817_ff1e);
    let mut composed = 0;
    for case in 0..2000 {
        let shape = rng.shape(3000);
        let volume: usize = shape.iter().product();
        let first = rng.permutation(shape.len());
        let reshaped = if rng.chance(20) {
            first.iter().map(|&a| shape[a]).collect()
        } else {
            factor(&mut rng, volume)
        };
        let second = rng.permutation(reshaped.len());
        let input = rng.tensor(
            [DType::Int4, DType::Int32, DType::BFloat16][case % 3],
            shape.clone(),
        );
        let t1 = gather_tensor(&input, &transpose_tables(&shape, &first));
        let t2 = Tensor {
            shape: reshaped.clone(),
            ..t1
        };
        let two_passes = gather_tensor(&t2, &transpose_tables(&reshaped, &second));
        if let Some(view) = transpose_reshape_transpose(&shape, &first, &reshaped, &second) {
            composed += 1;
            let got = gather_view(&input.buffer, &view);
            assert_eq!(view.shape, two_passes.shape);
            if let Some(why) = difference(&got, &two_passes.buffer) {
                panic!("{shape:?} {first:?} {reshaped:?} {second:?}: {why}");
            }
        }
    }
    assert!(composed > 1000, "only {composed} of 2000 composed");
}

/// Tables applied to a tensor by the plain loop, keeping its dtype.
fn gather_tensor(source: &Tensor, tables: &AxisGather) -> Tensor {
    Tensor {
        dtype: source.dtype,
        shape: tables.shape(),
        buffer: gather_reference(&source.buffer, tables, 0),
    }
}

/// Every op on random invocations (crates/generate, the fuzzer's cases: every dtype, modes,
/// formats, broken rules): where the reference's plan accepts one, the kernels at every size
/// give the bits of the reference's plain evaluation of the same plan.
#[test]
fn kernels_match_the_reference_evaluation_of_every_op() {
    use opspec::ops::{plan, Op, Planned};
    let mut rng = opspec_generate::rng::Rng::new(0x0b5e55ed);
    let mut planned = [0usize; Op::ALL.len()];
    for _ in 0..20_000 {
        let invocation = opspec_generate::random::random_case(&mut rng, &Op::ALL);
        let Ok(Planned { plan, input }) = plan(&invocation, Limits::DEFAULT) else {
            continue;
        };
        let expected = plan.evaluate(input);
        assert_eq!(kernels(&plan, input), expected, "{invocation:?}");
        assert_eq!(fast(&plan, input), expected, "{invocation:?}");
        planned[Op::ALL
            .iter()
            .position(|&op| op == invocation.op())
            .unwrap()] += 1;
    }
    assert!(planned.iter().all(|&n| n > 1000), "{planned:?}");
}
