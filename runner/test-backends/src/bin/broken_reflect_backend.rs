//! A backend with a deliberate bug, to show that `opspec-fuzz` finds one: it serves the
//! reference interpreter, except that Slice's REFLECT mode mirrors off by one, repeating the
//! edge element (`z = 2d-1-c` where the rule says `2d-2-c`, the "symmetric" variant of the
//! cookbook README that docs/semantics.md §2.2 warns about). Everything else is the reference's.

use opspec::ops::slice::{self, Mode};
use opspec::ops::{Attrs, Invocation};
use opspec::tensor::row_major_strides;
use opspec::{OpError, Tensor};
use opspec_runner::serve;

fn main() -> std::io::Result<()> {
    let stdin = std::io::stdin().lock();
    let stdout = std::io::stdout().lock();
    serve(
        stdin,
        stdout,
        "broken-reflect",
        &[],
        opspec::tensor::Limits::DEFAULT,
        |_, invocation| match &invocation.attrs {
            Attrs::Slice(attrs) if attrs.mode == Some(Mode::Reflect) => {
                broken_reflect(attrs, invocation)
            }
            _ => opspec::ops::evaluate(invocation, opspec::tensor::Limits::DEFAULT),
        },
    )
}

fn broken_reflect(attrs: &slice::Attrs, invocation: &Invocation) -> Result<Vec<Tensor>, OpError> {
    let input_at = |i: usize| invocation.inputs.get(i).and_then(Option::as_ref);
    let input = input_at(0).expect("input");
    // Let the reference reject what it rejects.
    slice::plan(
        attrs,
        input,
        slice::Inputs {
            start: input_at(1),
            size: input_at(2),
            stride: input_at(3),
            fill: input_at(4),
            axes: input_at(5),
        },
        opspec::tensor::Limits::DEFAULT,
    )?;
    let list = |position: usize, attr: &Option<Vec<i64>>| match input_at(position) {
        Some(tensor) => tensor.int_values(),
        None => attr.clone(),
    };
    let rank = input.rank();
    let axes: Vec<usize> = match list(5, &attrs.axes) {
        None => (0..rank).collect(),
        Some(axes) => axes
            .iter()
            .map(|&a| {
                if a < 0 {
                    (a + rank as i64) as usize
                } else {
                    a as usize
                }
            })
            .collect(),
    };
    let start = list(1, &attrs.start).expect("validated");
    let size = list(2, &attrs.size).expect("validated");
    let stride = list(3, &attrs.stride).unwrap_or_else(|| vec![1; axes.len()]);
    let mut per_axis: Vec<(i64, i64, i64)> =
        input.shape.iter().map(|&d| (0, d as i64, 1)).collect();
    for (k, &axis) in axes.iter().enumerate() {
        per_axis[axis] = (start[k], size[k], stride[k]);
    }
    let out_shape: Vec<usize> = per_axis.iter().map(|p| p.1 as usize).collect();
    let strides = row_major_strides(&input.shape);
    let n: usize = out_shape.iter().product();
    let bits = (0..n)
        .map(|flat| {
            let index = opspec_spec::unravel(&out_shape, flat);
            let source: usize = index
                .iter()
                .enumerate()
                .map(|(axis, &y)| {
                    let (start, _, stride) = per_axis[axis];
                    let d = input.shape[axis] as i64;
                    let x = y as i64 * stride + start;
                    let z = if d == 1 {
                        0
                    } else {
                        let c = x.abs() % (2 * d - 2);
                        // The bug: the rule says 2d-2-c.
                        if c >= d {
                            2 * d - 1 - c
                        } else {
                            c
                        }
                    };
                    z as usize * strides[axis]
                })
                .sum();
            input.bits(source)
        })
        .collect();
    Ok(vec![Tensor::from_bits(input.dtype, out_shape, bits)])
}
