//! The memory an op holds, at an output as large as the element budget allows
//! (docs/protocol.md, "Memory"): at most its output plus [`OVERHEAD_MIB`], over what the
//! process held before the call (its inputs included), for every op, the dims of the output
//! along the axes where they cost most (one long axis, fill and wrap-around tables, a long
//! vector dim).
//!
//! Comparing two such outputs that differ everywhere holds at most [`OVERHEAD_MIB`] too
//! (`crates/spec/tests/memory.rs`, which runs its comparisons through [`check_children`]).
//!
//! This binary checks the reference's plain evaluation (`opspec::ops::evaluate`), which holds
//! nothing beyond its output; `crates/kernels/tests/memory.rs` runs the same cases on the fast
//! engine, whose index tables and blocks take the overhead.
//!
//! Each case runs in a child process (this binary, re-invoked with `OPSPEC_MEMORY_CASE`), which
//! resets its peak resident memory (`/proc/self/clear_refs`) after building the input, runs
//! the op, and reports the peak (`VmHWM`) over its resident memory before the call. Debug
//! builds are slow on 2^28 elements, so the budget here is [`ELEMENTS`]; the bound does not
//! depend on it. `OPSPEC_MEMORY_ELEMENTS=268435456 cargo test --release --test memory` checks
//! it at the default budget (a few seconds in release).

use std::process::{Command, ExitCode};

use opspec::dtype::{DType, Width};
use opspec::ops::{scale, Attrs, Invocation, Op};
use opspec::tensor::{Buffer, Limits, Tensor};
use opspec::OpError;

/// The element budget of the children, and so each case's output element count, unless
/// `OPSPEC_MEMORY_ELEMENTS` gives another (a multiple of 8).
const ELEMENTS: usize = 1 << 22;

pub fn elements() -> usize {
    std::env::var("OPSPEC_MEMORY_ELEMENTS")
        .map(|n| {
            n.parse()
                .expect("OPSPEC_MEMORY_ELEMENTS is a number of elements")
        })
        .unwrap_or(ELEMENTS)
}

/// What an op may hold beyond its output: on the fast engine, tables of at most
/// `opspec_kernels::maps::TABLE_ENTRIES` entries and blocks of at most
/// `opspec_kernels::maps::BLOCK_ELEMENTS` elements; and the allocator's slack.
const OVERHEAD_MIB: u64 = 32;

/// A case: op, attributes (YAML; `$N` is [`ELEMENTS`], `$HALF` half of it, `$LAST` one less),
/// input dtype and shape.
struct MemoryCase {
    name: &'static str,
    op: Op,
    attrs: &'static str,
    dtype: DType,
    shape: fn(usize) -> Vec<usize>,
}

const CASES: &[MemoryCase] = &[
    MemoryCase {
        name: "shuffle identity, one long axis",
        op: Op::Shuffle,
        attrs: "{}",
        dtype: DType::Int8,
        shape: |n| vec![n],
    },
    MemoryCase {
        name: "shuffle transpose [2, N/2]",
        op: Op::Shuffle,
        attrs: "{first_transpose: [1, 0]}",
        dtype: DType::Int8,
        shape: |n| vec![2, n / 2],
    },
    MemoryCase {
        name: "shuffle transpose, reshape, transpose",
        op: Op::Shuffle,
        attrs: "{first_transpose: [1, 0], reshape_dims: [-1, 4], second_transpose: [1, 0]}",
        dtype: DType::Int8,
        shape: |n| vec![4, n / 4],
    },
    MemoryCase {
        name: "slice strict_bounds, reversed",
        op: Op::Slice,
        attrs: "{start: [$LAST], size: [$N], stride: [-1]}",
        dtype: DType::Int8,
        shape: |n| vec![n],
    },
    MemoryCase {
        name: "slice fill, size N from 3 elements",
        op: Op::Slice,
        attrs: "{start: [0], size: [$N], mode: fill}",
        dtype: DType::Int8,
        shape: |_| vec![3],
    },
    MemoryCase {
        name: "slice wrap, size N from 3 elements",
        op: Op::Slice,
        attrs: "{start: [0], size: [$N], mode: wrap}",
        dtype: DType::Int8,
        shape: |_| vec![3],
    },
    MemoryCase {
        name: "slice clamp, size N from 3 elements",
        op: Op::Slice,
        attrs: "{start: [0], size: [$N], mode: clamp}",
        dtype: DType::Int8,
        shape: |_| vec![3],
    },
    MemoryCase {
        name: "slice reflect, size N from 3 elements",
        op: Op::Slice,
        attrs: "{start: [0], size: [$N], mode: reflect}",
        dtype: DType::Int8,
        shape: |_| vec![3],
    },
    MemoryCase {
        name: "slice wrap, [2, N/2] from [2, 3]",
        op: Op::Slice,
        attrs: "{start: [0, 0], size: [2, $HALF], mode: wrap}",
        dtype: DType::Int8,
        shape: |_| vec![2, 3],
    },
    MemoryCase {
        name: "as_strided broadcast of one element",
        op: Op::AsStrided,
        attrs: "{size: [$N], stride: [0], offset: [0]}",
        dtype: DType::Float16,
        shape: |_| vec![1],
    },
    MemoryCase {
        name: "scale uniform, one long axis",
        op: Op::Scale,
        attrs: "{mode: uniform, scale: [2]}",
        dtype: DType::Float32,
        shape: |n| vec![1, 1, 1, n],
    },
    MemoryCase {
        name: "reformat pack CHW4, a long vector dim",
        op: Op::Reformat,
        attrs: "{from: LINEAR, to: CHW4}",
        dtype: DType::Int8,
        shape: |n| vec![1, n, 1, 1],
    },
    MemoryCase {
        name: "reformat unpack CHW4, a long vector dim",
        op: Op::Reformat,
        attrs: "{from: CHW4, to: LINEAR, shape: [1, $N, 1, 1]}",
        dtype: DType::Int8,
        shape: |n| vec![n],
    },
    MemoryCase {
        name: "reformat pack HWC8, a long W",
        op: Op::Reformat,
        attrs: "{from: LINEAR, to: HWC8}",
        dtype: DType::Float16,
        shape: |n| vec![1, 1, n / 8],
    },
];

/// An evaluation of an invocation within limits: the reference's, or an engine's.
pub type Evaluate = fn(&Invocation, Limits) -> Result<Vec<Tensor>, OpError>;

#[allow(dead_code)] // a module of crates/kernels/tests/memory.rs, which has its own `main`
fn main() -> ExitCode {
    check_memory(opspec::ops::evaluate)
}

/// Runs every case in a child process on `evaluate` and checks its bound.
pub fn check_memory(evaluate: Evaluate) -> ExitCode {
    let names: Vec<&str> = CASES.iter().map(|c| c.name).collect();
    check_children(&names, |name| child(name, evaluate))
}

/// Runs `child(name)` in a child process (this binary, re-invoked with `OPSPEC_MEMORY_CASE`)
/// for every name, and checks the figures it prints
/// (`memory: <peak bytes over the resident memory before> <output bytes>`) against the bound.
pub fn check_children(names: &[&str], child: impl Fn(&str)) -> ExitCode {
    if let Ok(name) = std::env::var("OPSPEC_MEMORY_CASE") {
        child(&name);
        return ExitCode::SUCCESS;
    }
    let exe = std::env::current_exe().expect("the test binary");
    let mut failures = Vec::new();
    for &name in names {
        let output = Command::new(&exe)
            .env("OPSPEC_MEMORY_CASE", name)
            .output()
            .expect("run a child");
        let out = String::from_utf8_lossy(&output.stdout).into_owned()
            + &String::from_utf8_lossy(&output.stderr);
        let figures: Option<Vec<u64>> = out
            .lines()
            .find_map(|l| l.strip_prefix("memory: "))
            .map(|l| l.split(' ').map(|f| f.parse().expect("a figure")).collect());
        let Some(&[extra, output_bytes]) = figures.as_deref() else {
            failures.push(format!("{name}: no figures from the child:\n{out}"));
            continue;
        };
        let bound = output_bytes + (OVERHEAD_MIB << 20);
        println!(
            "{:<45} output {:>6.1} MiB, held {:>6.1} MiB over the input (bound {:.1} MiB)",
            name,
            output_bytes as f64 / (1 << 20) as f64,
            extra as f64 / (1 << 20) as f64,
            bound as f64 / (1 << 20) as f64
        );
        if extra > bound {
            failures.push(format!(
                "{name}: held {extra} bytes over its input, more than its output ({output_bytes} bytes) + {OVERHEAD_MIB} MiB"
            ));
        }
    }
    if failures.is_empty() {
        println!(
            "memory: {} cases within their output + {OVERHEAD_MIB} MiB",
            names.len()
        );
        ExitCode::SUCCESS
    } else {
        eprintln!("{}", failures.join("\n"));
        ExitCode::FAILURE
    }
}

/// The attributes of an op from their YAML (the spec files' and the wire's form).
fn parse_attrs(op: Op, yaml: &str) -> Attrs {
    fn read<T: serde::de::DeserializeOwned>(op: Op, yaml: &str) -> T {
        serde_yaml::from_str(yaml)
            .unwrap_or_else(|e| panic!("the attributes of {op} do not parse: {e}"))
    }
    match op {
        Op::Shuffle => Attrs::Shuffle(read(op, yaml)),
        Op::Slice => Attrs::Slice(read(op, yaml)),
        Op::AsStrided => Attrs::AsStrided(read(op, yaml)),
        Op::Scale => {
            // The coefficients' YAML rules are the spec format's (crate opspec-spec): plain
            // numbers here.
            #[derive(serde::Deserialize)]
            struct Plain {
                mode: scale::Mode,
                scale: Vec<f32>,
            }
            let plain: Plain = read(op, yaml);
            Attrs::Scale(scale::Attrs {
                mode: plain.mode,
                scale: scale::Coefficients::from_values(&plain.scale),
                shift: Default::default(),
                power: Default::default(),
                channel_axis: None,
                output_dtype: None,
            })
        }
        Op::Reformat => Attrs::Reformat(read(op, yaml)),
    }
}

/// Runs one case and prints `memory: <peak bytes over the resident memory before> <output bytes>`.
fn child(name: &str, evaluate: Evaluate) {
    let case = CASES.iter().find(|c| c.name == name).expect("a known case");
    let n = elements();
    let limits = Limits {
        max_elements: n as u64,
    };
    let attrs = case
        .attrs
        .replace("$HALF", &(n / 2).to_string())
        .replace("$LAST", &(n - 1).to_string())
        .replace("$N", &n.to_string());
    let attrs = parse_attrs(case.op, &attrs);
    let shape = (case.shape)(n);
    let len: usize = shape.iter().product();
    // Built in place: a `Vec<u64>` of bits would raise the peak before the call.
    let buffer = match case.dtype.width() {
        Width::W8 => Buffer::W8((0..len).map(|i| i as u8 & 0x3f).collect()),
        Width::W16 => Buffer::W16((0..len).map(|i| i as u16 & 0x3bff).collect()),
        Width::W32 => Buffer::W32((0..len).map(|i| i as u32 & 0x3fff_ffff).collect()),
        Width::W64 => Buffer::W64((0..len).map(|i| i as u64).collect()),
    };
    let mut inputs = vec![None; case.op.inputs().len()];
    inputs[0] = Some(Tensor {
        dtype: case.dtype,
        shape,
        buffer,
    });
    let invocation = Invocation { attrs, inputs };
    std::fs::write("/proc/self/clear_refs", "5").expect("reset the peak (Linux)");
    let before = status_kib("VmRSS");
    let outputs = evaluate(&invocation, limits).expect("the case is valid");
    let peak = status_kib("VmHWM");
    // The words held (int4 one per byte, as the reference holds it).
    let output_bytes: usize = outputs.iter().map(|t| word_bytes(t.dtype) * t.len()).sum();
    assert_eq!(outputs[0].len(), n, "a budget-sized output");
    println!(
        "memory: {} {output_bytes}",
        (peak.saturating_sub(before)) << 10
    );
}

/// The bytes of the word an element of `dtype` is held in.
fn word_bytes(dtype: DType) -> usize {
    match dtype.width() {
        Width::W8 => 1,
        Width::W16 => 2,
        Width::W32 => 4,
        Width::W64 => 8,
    }
}

/// A `/proc/self/status` figure, KiB.
pub fn status_kib(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or_else(|| panic!("no {field} in /proc/self/status"))
}
