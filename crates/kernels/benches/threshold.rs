//! Where the kernels start to pay: each op, on outputs of 1 to 65,536 elements, timed on the
//! plain evaluation ([`opspec::ops::Plan::evaluate`]) and on the kernels at every size
//! ([`opspec_kernels::kernels`]), alternately, in
//! the same run, the fastest of 7 batches of each. Prints, per op and size, the kernels' time over the plain loops' (below 1:
//! the kernels are faster); [`opspec_kernels::THRESHOLD`] is chosen from it (BENCHMARKS.md,
//! "Engine threshold").
//!
//! ```text
//! cargo bench -p opspec-kernels --bench threshold
//! ```

use std::hint::black_box;
use std::time::Instant;

use opspec::dtype::DType;
use opspec::ops::{plan, Invocation, Op, Plan, Planned};
use opspec::tensor::{Limits, Tensor};
use opspec_spec::parse_attrs;

/// An op at a size: attributes (YAML; `$N` is the size, `$HALF` half of it, `$LAST` one less),
/// input dtype and shape.
struct Case {
    name: &'static str,
    op: Op,
    attrs: &'static str,
    dtype: DType,
    shape: fn(usize) -> Vec<usize>,
}

const CASES: &[Case] = &[
    Case {
        name: "shuffle transpose [2, N/2]",
        op: Op::Shuffle,
        attrs: "{first_transpose: [1, 0]}",
        dtype: DType::Float32,
        shape: |n| vec![2, n / 2],
    },
    Case {
        name: "shuffle [2, N/4, 2] perm [2, 0, 1]",
        op: Op::Shuffle,
        attrs: "{first_transpose: [2, 0, 1]}",
        dtype: DType::Int8,
        shape: |n| vec![2, n / 4, 2],
    },
    Case {
        name: "slice reversed",
        op: Op::Slice,
        attrs: "{start: [$LAST], size: [$N], stride: [-1]}",
        dtype: DType::Float16,
        shape: |n| vec![n],
    },
    Case {
        name: "slice wrap [2, N/2] from [2, 3]",
        op: Op::Slice,
        attrs: "{start: [0, 0], size: [2, $HALF], mode: wrap}",
        dtype: DType::Int8,
        shape: |_| vec![2, 3],
    },
    Case {
        name: "as_strided windows [N/2, 2]",
        op: Op::AsStrided,
        attrs: "{size: [$HALF, 2], stride: [1, 1], offset: [0]}",
        dtype: DType::Float16,
        shape: |n| vec![n.max(2)],
    },
    Case {
        name: "scale uniform f32",
        op: Op::Scale,
        attrs: "{mode: uniform, scale: [2], shift: [1]}",
        dtype: DType::Float32,
        shape: |n| vec![1, 1, 1, n],
    },
    Case {
        name: "scale f16 -> int8",
        op: Op::Scale,
        attrs: "{mode: uniform, scale: [2], output_dtype: int8}",
        dtype: DType::Float16,
        shape: |n| vec![1, 1, 1, n],
    },
    Case {
        name: "reformat pack CHW4",
        op: Op::Reformat,
        attrs: "{from: LINEAR, to: CHW4}",
        dtype: DType::Int8,
        shape: |n| vec![1, n, 1, 1],
    },
    Case {
        name: "reformat unpack CHW4",
        op: Op::Reformat,
        attrs: "{from: CHW4, to: LINEAR, shape: [1, $N, 1, 1]}",
        dtype: DType::Int8,
        shape: |n| vec![n.div_ceil(4) * 4],
    },
];

const SIZES: [usize; 13] = [
    1, 2, 4, 16, 64, 128, 256, 512, 1024, 2048, 4096, 16384, 65536,
];

fn invocation(case: &Case, n: usize) -> Invocation {
    let attrs = case
        .attrs
        .replace("$HALF", &(n / 2).max(1).to_string())
        .replace("$LAST", &(n - 1).to_string())
        .replace("$N", &n.to_string());
    let attrs = parse_attrs(case.op, Some(serde_yaml::from_str(&attrs).expect("YAML")))
        .expect("attributes");
    let shape = (case.shape)(n);
    let len: usize = shape.iter().product();
    // Small values every dtype holds (Scale needs numbers, not arbitrary bit patterns).
    let input = Tensor::from_bits(case.dtype, shape, (0..len as u64).map(|i| i % 7).collect());
    Invocation {
        attrs,
        inputs: vec![Some(input)],
    }
}

/// The plain evaluation of a plan.
fn plain(plan: &Plan, input: &Tensor) -> Tensor {
    plan.evaluate(input)
}

/// Seconds per call, the plan included, over a batch of `reps` calls.
fn per_call(invocation: &Invocation, engine: fn(&Plan, &Tensor) -> Tensor, reps: usize) -> f64 {
    let start = Instant::now();
    for _ in 0..reps {
        let Planned { plan, input } = plan(black_box(invocation), Limits::DEFAULT).expect("plans");
        black_box(engine(&plan, input));
    }
    start.elapsed().as_secs_f64() / reps as f64
}

fn main() {
    // `cargo bench` passes `--bench`; a name filters the cases.
    let filter: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    print!("{:<36}", "kernels / plain, per output size");
    for n in SIZES {
        print!("{n:>7}");
    }
    println!();
    for case in CASES {
        if !filter.is_empty() && !filter.iter().any(|f| case.name.contains(f.as_str())) {
            continue;
        }
        print!("{:<36}", case.name);
        for n in SIZES {
            let invocation = invocation(case, n);
            let reps = (100_000 / n).clamp(10, 10_000);
            // Alternately, so that both see the machine's same spells; the fastest batch of
            // each, the one least disturbed by other load.
            let (mut plain, mut kernels) = (f64::INFINITY, f64::INFINITY);
            for _ in 0..7 {
                plain = plain.min(per_call(&invocation, self::plain, reps));
                kernels = kernels.min(per_call(&invocation, opspec_kernels::kernels, reps));
            }
            print!("{:>7.2}", kernels / plain);
        }
        println!();
    }
}
