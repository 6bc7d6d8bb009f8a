//! Layout operators on 64 MiB tensors, timed against a plain copy of the same bytes and against
//! numpy, both measured in the same run; the peak heap of each call; the whole conformance
//! suite's wall time and peak RSS.
//!
//! ```text
//! scripts/benchmarks/bench.sh                      regenerates BENCHMARKS.md (builds the runner first)
//! cargo bench -p opspec-kernels --bench layout            prints the table
//! cargo bench -p opspec-kernels --bench layout -- slice   only the lines whose name contains `slice`
//! cargo bench -p opspec-kernels --bench layout -- --markdown   BENCHMARKS.md's sections on stdout
//! ```
//! A bench only prints: with `--markdown`, the table goes to stderr and stdout carries the
//! title and sections of BENCHMARKS.md this bench measures, which `scripts/benchmarks/bench.sh` merges into
//! the file (`scripts/benchmarks/benchmarks_md.py`, keeping the sections other benches or people wrote).
//! Variables: `OPSPEC_BENCH_REPS` (timed repetitions per line, default 11; the median is kept),
//! `OPSPEC_BENCH_RUNS` (whole runs, default 1: each line's row is the run whose ratio to the
//! copy is the median, the slower middle one for an even count, and a column gives the
//! ratio's range over all of them),
//! `OPSPEC_BENCH_NUMPY=0` (skip numpy).
//!
//! What is compared:
//! - **copy**: a fresh zeroed buffer as large as the op's *output* (`pages::zeroed`: `calloc`,
//!   huge pages advised), filled by `copy_from_slice` from a buffer allocated as the inputs
//!   are: its page faults, or for 32 MiB or less glibc's `memset` of reused memory, and a
//!   `memcpy`. The ops set their outputs' initial value too, but part by part on the threads
//!   that write them (`pages::Output`). It is timed right after each repetition of the op, and the ratio
//!   is the median of those pairs' ratios, so that the machine's slower and faster spells
//!   weigh on both sides alike. A `Vec<u8>::clone` (4 KiB pages) is shown beside it, timed
//!   after all the pairs (freeing a clone just before an op slowed the op by a quarter).
//! - **numpy**: `crates/kernels/benches/numpy_layout.py`, the same operation written the idiomatic numpy way
//!   (`ascontiguousarray` of a transposed view, `np.pad`, `as_strided(...).copy()`, ...), with its
//!   own copy baseline. Both sides take the median of the same number of repetitions. The
//!   script runs beside the harness (`--serve`) and times each line right after the harness
//!   has timed its own, in every run, so that both are timed in the same spell.
//! - **peak**: the largest live heap during the call, counting the input, over the largest of
//!   the input and output tensors (a counting global allocator in this binary).

use std::alloc::{GlobalAlloc, Layout, System};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use opspec::dtype::{DType, Width};
use opspec::ops::{as_strided, reformat, scale, shuffle, slice, Plan};
use opspec::tensor::{Buffer, Limits, Tensor};
use opspec::OpError;
use opspec_kernels::pages;

/// The fast engine on an op's plan ([`opspec_kernels::fast`]), the plan included in the time.
fn fast(plan: Result<Plan, OpError>, input: &Tensor) -> Tensor {
    opspec_kernels::fast(&plan.expect("plans"), input)
}

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(bytes: usize) {
    let now = LIVE.fetch_add(bytes, Ordering::Relaxed) + bytes;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

// SAFETY: every call forwards to `System` unchanged; the counters only observe sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let pointer = System.alloc(layout);
        if !pointer.is_null() {
            grew(layout.size());
        }
        pointer
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let pointer = System.alloc_zeroed(layout);
        if !pointer.is_null() {
            grew(layout.size());
        }
        pointer
    }

    unsafe fn dealloc(&self, pointer: *mut u8, layout: Layout) {
        System.dealloc(pointer, layout);
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, pointer: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let moved = System.realloc(pointer, layout, new_size);
        if !moved.is_null() {
            if new_size >= layout.size() {
                grew(new_size - layout.size());
            } else {
                LIVE.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
            }
        }
        moved
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

const MIB: usize = 1 << 20;

/// One benchmark line: an input and the op call on it. `layout` lines are held to the
/// 1.5 × copy target; the name is also the numpy script's key.
struct Line {
    name: &'static str,
    layout: bool,
    input: Box<dyn Fn() -> Tensor>,
    run: Box<dyn Fn(&Tensor) -> Tensor>,
}

fn line(
    name: &'static str,
    layout: bool,
    input: impl Fn() -> Tensor + 'static,
    run: impl Fn(&Tensor) -> Tensor + 'static,
) -> Line {
    Line {
        name,
        layout,
        input: Box::new(input),
        run: Box::new(run),
    }
}

/// `len` words from `next`, in a buffer allocated as the ops allocate theirs (huge pages
/// advised, as numpy's arrays are): the input of a benchmarked op is what an op or numpy
/// would have produced.
fn words<W: Copy + Default + pages::ZeroBits>(len: usize, mut next: impl FnMut() -> W) -> Vec<W> {
    let mut words = pages::zeroed(len);
    for word in words.iter_mut() {
        *word = next();
    }
    words
}

/// Distinct, cheap bit patterns (a xorshift), `len` elements of `dtype`.
fn noise(dtype: DType, shape: &[usize]) -> Tensor {
    let len: usize = shape.iter().product();
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let buffer = match dtype.width() {
        Width::W8 => Buffer::W8(words(len, || next() as u8)),
        Width::W16 => Buffer::W16(words(len, || next() as u16 & 0x7bff)),
        Width::W32 => Buffer::W32(words(len, || next() as u32 & 0x7f7f_ffff)),
        Width::W64 => Buffer::W64(words(len, || next() >> 4)),
    };
    Tensor {
        dtype,
        shape: shape.to_vec(),
        buffer,
    }
}

/// Float32 values in [0, 2) (Scale needs numbers, not arbitrary bit patterns).
fn floats(shape: &[usize]) -> Tensor {
    let len: usize = shape.iter().product();
    let mut i = 0;
    Tensor {
        dtype: DType::Float32,
        shape: shape.to_vec(),
        buffer: Buffer::W32(words(len, || {
            i += 1;
            ((((i - 1) * 7919) % 2048) as f32 / 1024.0).to_bits()
        })),
    }
}

fn bytes(tensor: &Tensor) -> usize {
    let width = match tensor.buffer {
        Buffer::W8(_) => 1,
        Buffer::W16(_) => 2,
        Buffer::W32(_) => 4,
        Buffer::W64(_) => 8,
    };
    tensor.len() * width
}

const NCHW: [usize; 4] = [1, 64, 512, 512]; // 64 MiB of float32
const NCHW_F16: [usize; 4] = [2, 64, 512, 512]; // 64 MiB of float16
const NCHW_F16_DLA: [usize; 4] = [2, 64, 512, 500]; // W not a multiple of 32: rows are padded
const FLAT_F16: usize = 32 * MIB; // 64 MiB of float16

fn shuffle_line(name: &'static str, attrs: shuffle::Attrs) -> Line {
    line(
        name,
        true,
        || noise(DType::Float32, &NCHW),
        move |x| {
            fast(
                shuffle::plan(&attrs, &x.shape, None, Limits::DEFAULT).map(Plan::Shuffle),
                x,
            )
        },
    )
}

fn slice_line(
    name: &'static str,
    start: [i64; 4],
    size: [i64; 4],
    stride: [i64; 4],
    mode: slice::Mode,
) -> Line {
    let attrs = slice::Attrs {
        start: Some(start.to_vec()),
        size: Some(size.to_vec()),
        stride: Some(stride.to_vec()),
        mode: Some(mode),
        axes: None,
    };
    line(
        name,
        true,
        || noise(DType::Float32, &NCHW),
        move |x| {
            let plan = slice::plan(&attrs, x, slice::Inputs::default(), Limits::DEFAULT);
            fast(plan.map(Plan::Slice), x)
        },
    )
}

fn reformat_lines(
    format: reformat::Format,
    dtype: DType,
    shape: [usize; 4],
    pack: &'static str,
    unpack: &'static str,
) -> [Line; 2] {
    let dims: Vec<i64> = shape.iter().map(|&d| d as i64).collect();
    let to = reformat::Attrs {
        from: reformat::Format::Linear,
        to: format,
        shape: None,
        dla: None,
    };
    let back = reformat::Attrs {
        from: format,
        to: reformat::Format::Linear,
        shape: Some(dims),
        dla: None,
    };
    let packed_input = to.clone();
    [
        line(
            pack,
            true,
            move || noise(dtype, &shape),
            move |x| {
                fast(
                    reformat::plan(&to, x, Limits::DEFAULT).map(Plan::Reformat),
                    x,
                )
            },
        ),
        line(
            unpack,
            true,
            move || {
                let logical = noise(dtype, &shape);
                fast(
                    reformat::plan(&packed_input, &logical, Limits::DEFAULT).map(Plan::Reformat),
                    &logical,
                )
            },
            move |x| {
                fast(
                    reformat::plan(&back, x, Limits::DEFAULT).map(Plan::Reformat),
                    x,
                )
            },
        ),
    ]
}

fn lines() -> Vec<Line> {
    use slice::Mode::*;
    let mut lines = vec![
        shuffle_line(
            "shuffle NCHW→NHWC",
            shuffle::Attrs {
                first_transpose: Some(vec![0, 2, 3, 1]),
                ..Default::default()
            },
        ),
        shuffle_line(
            "shuffle swap last two axes",
            shuffle::Attrs {
                first_transpose: Some(vec![0, 1, 3, 2]),
                ..Default::default()
            },
        ),
        // NCHW → NHWC, split C into 8 × 8, bring the block axis out: NCHW → N(C/8)HW8.
        shuffle_line(
            "shuffle transpose–reshape–transpose",
            shuffle::Attrs {
                first_transpose: Some(vec![0, 2, 3, 1]),
                reshape_dims: Some(vec![1, 512, 512, 8, 8]),
                second_transpose: Some(vec![0, 3, 1, 2, 4]),
                ..Default::default()
            },
        ),
        slice_line(
            "slice strided (H, W step 2)",
            [0, 0, 0, 0],
            [1, 64, 256, 256],
            [1, 1, 2, 2],
            StrictBounds,
        ),
        slice_line(
            "slice negative stride (C, H, W reversed)",
            [0, 63, 511, 511],
            [1, 64, 512, 512],
            [1, -1, -1, -1],
            StrictBounds,
        ),
        slice_line(
            "slice crop STRICT_BOUNDS (8 off each edge)",
            [0, 0, 8, 8],
            [1, 64, 496, 496],
            [1, 1, 1, 1],
            StrictBounds,
        ),
    ];
    for (name, mode) in [
        ("slice pad 8 WRAP", Wrap),
        ("slice pad 8 CLAMP", Clamp),
        ("slice pad 8 FILL", Fill),
        ("slice pad 8 REFLECT", Reflect),
    ] {
        lines.push(slice_line(
            name,
            [0, 0, -8, -8],
            [1, 64, 528, 528],
            [1, 1, 1, 1],
            mode,
        ));
    }
    // Windows of 64 elements every 32: each element is read twice.
    let windows = (FLAT_F16 - 64) / 32 + 1;
    let strided = as_strided::Attrs {
        size: vec![windows as i64, 64],
        stride: vec![32, 1],
        offset: vec![0],
    };
    lines.push(line(
        "as_strided overlapping windows (64 every 32)",
        true,
        || noise(DType::Float16, &[FLAT_F16]),
        move |x| {
            fast(
                as_strided::plan(&strided, x, Limits::DEFAULT).map(Plan::AsStrided),
                x,
            )
        },
    ));
    use reformat::Format::*;
    lines.extend(reformat_lines(
        Chw4,
        DType::Float16,
        NCHW_F16,
        "pack CHW4 (float16)",
        "unpack CHW4 (float16)",
    ));
    lines.extend(reformat_lines(
        Chw32,
        DType::Float32,
        NCHW,
        "pack CHW32 (float32)",
        "unpack CHW32 (float32)",
    ));
    lines.extend(reformat_lines(
        Hwc8,
        DType::Float16,
        NCHW_F16,
        "pack HWC8 (float16)",
        "unpack HWC8 (float16)",
    ));
    lines.extend(reformat_lines(
        DlaLinear,
        DType::Float16,
        NCHW_F16_DLA,
        "pack DLA_LINEAR (float16, W 500)",
        "unpack DLA_LINEAR (float16, W 500)",
    ));
    let channels = NCHW[1];
    let coefficients = |f: fn(usize) -> f32| {
        scale::Coefficients::from_values(&(0..channels).map(f).collect::<Vec<f32>>())
    };
    let scale_attrs = scale::Attrs {
        mode: scale::Mode::Channel,
        scale: coefficients(|c| 0.5 + c as f32 / 64.0),
        shift: coefficients(|c| c as f32 - 32.0),
        power: scale::Coefficients::default(),
        channel_axis: None,
        output_dtype: None,
    };
    lines.push(line(
        "scale CHANNEL (float32)",
        false,
        || floats(&NCHW),
        move |x| {
            fast(
                scale::plan(&scale_attrs, x, Limits::DEFAULT).map(Plan::Scale),
                x,
            )
        },
    ));
    lines
}

/// `min–max` of a line's ratios over the runs.
fn spread(ratios: &[f64]) -> String {
    let lo = ratios.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = ratios.iter().copied().fold(0.0, f64::max);
    format!("{lo:.2}–{hi:.2}")
}

fn median_f64(values: impl Iterator<Item = f64>) -> f64 {
    let mut values: Vec<f64> = values.collect();
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn median(mut times: Vec<Duration>) -> f64 {
    times.sort();
    times[times.len() / 2].as_secs_f64()
}

/// numpy's op and copy seconds for a line, when numpy ran.
type NumpyTimes = Option<(f64, f64)>;

struct Measured {
    name: &'static str,
    layout: bool,
    out_bytes: usize,
    seconds: f64,
    copy_seconds: f64,
    /// The median of each repetition's op time over the copy timed right after it.
    ratio: f64,
    clone_seconds: f64,
    peak_ratio: f64,
}

fn measure(line: &Line, reps: usize) -> Measured {
    let input = (line.input)();
    let in_bytes = bytes(&input);
    // First call: the warm-up, and the peak heap (the input is live throughout).
    let before = LIVE.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let output = (line.run)(&input);
    let peak = PEAK.load(Ordering::Relaxed) - before + in_bytes;
    let out_bytes = bytes(&output);
    drop(output);
    let largest = in_bytes.max(out_bytes);
    // The copy reads a buffer allocated as the op's input is (huge pages advised).
    let copy_source = words(out_bytes, || 0x5a_u8);
    let (mut op, mut copy, mut clone) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..reps {
        let started = Instant::now();
        let output = (line.run)(&input);
        op.push(started.elapsed());
        drop(output);
        // The copy allocates as the ops' outputs do (huge pages advised, see opspec_kernels::pages).
        let started = Instant::now();
        let mut copied = pages::zeroed::<u8>(out_bytes);
        copied.copy_from_slice(&copy_source);
        copy.push(started.elapsed());
        drop(copied);
    }
    // The clones are timed apart: freeing a clone's 4 KiB pages just before an op slowed the
    // op by a quarter (AsStrided windows, medians: 21.6 ms without, 27.3–28.6 ms with).
    for _ in 0..reps {
        let started = Instant::now();
        let cloned = copy_source.clone();
        clone.push(started.elapsed());
        drop(cloned);
    }
    Measured {
        name: line.name,
        layout: line.layout,
        out_bytes,
        ratio: median_f64(
            op.iter()
                .zip(&copy)
                .map(|(o, c)| o.as_secs_f64() / c.as_secs_f64()),
        ),
        seconds: median(op),
        copy_seconds: median(copy),
        clone_seconds: median(clone),
        peak_ratio: peak as f64 / largest as f64,
    }
}

/// numpy's side, `crates/kernels/benches/numpy_layout.py --serve`, kept running beside the harness: each line
/// is sent to it right after the harness has timed its own, so that both sides of a ratio are
/// measured in the same spell of this shared machine (the whole script run after every line
/// measured numpy a minute or two later).
struct Numpy {
    child: std::process::Child,
    requests: Option<std::process::ChildStdin>,
    replies: std::io::BufReader<std::process::ChildStdout>,
    version: String,
}

impl Numpy {
    /// Starts the script; `None` (with a message) when python3 or numpy is missing.
    fn start(reps: usize) -> Option<Numpy> {
        use std::io::BufRead;
        use std::process::Stdio;
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/benches/numpy_layout.py");
        let mut child = Command::new("python3")
            .arg(script)
            .arg(reps.to_string())
            .arg("--serve")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| eprintln!("cannot start python3: {e}"))
            .ok()?;
        let requests = child.stdin.take();
        let mut replies = std::io::BufReader::new(child.stdout.take()?);
        let mut first = String::new();
        let _ = replies.read_line(&mut first);
        let Some(version) = first.trim_end().strip_prefix("#numpy\t") else {
            eprintln!("the numpy script did not start (is numpy installed?)");
            let _ = child.kill();
            return None;
        };
        let version = format!("numpy {version}");
        Some(Numpy {
            child,
            requests,
            replies,
            version,
        })
    }

    /// numpy's (seconds, its own copy's seconds) for the line `name`.
    fn measure(&mut self, name: &str) -> Option<(f64, f64)> {
        use std::io::{BufRead, Write};
        let requests = self.requests.as_mut()?;
        writeln!(requests, "{name}").ok()?;
        requests.flush().ok()?;
        let mut reply = String::new();
        self.replies.read_line(&mut reply).ok()?;
        let fields: Vec<&str> = reply.trim_end().split('\t').collect();
        match fields.as_slice() {
            [reply_name, seconds, copy] if *reply_name == name => {
                Some((seconds.parse().ok()?, copy.parse().ok()?))
            }
            _ => None,
        }
    }
}

impl Drop for Numpy {
    fn drop(&mut self) {
        // Closing stdin ends the script's loop; wait so that no process is left behind.
        drop(self.requests.take());
        let _ = self.child.wait();
    }
}

/// Wall time (median of `reps`) and peak RSS of `target/release/runner` over `specs/`.
fn suite(reps: usize) -> Option<(f64, String, String)> {
    // This crate lives in crates/kernels; the runner and specs/ are at the repository root.
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let runner = format!("{root}/target/release/runner");
    if !std::path::Path::new(&runner).exists() {
        return None;
    }
    let mut times = Vec::new();
    let (mut rss, mut result) = (String::from("?"), String::new());
    for _ in 0..reps {
        let started = Instant::now();
        let output = Command::new("/usr/bin/time")
            .args(["-f", "%M", &runner, "-q"])
            .current_dir(root)
            .output()
            .ok()?;
        times.push(started.elapsed());
        let stderr = String::from_utf8_lossy(&output.stderr);
        if let Some(kib) = stderr
            .lines()
            .last()
            .and_then(|l| l.trim().parse::<f64>().ok())
        {
            rss = format!("{:.1} MiB", kib / 1024.0);
        }
        let stdout = String::from_utf8_lossy(&output.stdout);
        if let Some(summary) = stdout.lines().find(|l| l.starts_with("test result:")) {
            result = summary
                .trim_start_matches("test result: ")
                .split("; finished")
                .next()
                .unwrap_or("")
                .to_string();
        }
    }
    Some((median(times), rss, result))
}

/// Which targets this run meets, line by line where one is missed.
fn targets(
    measured: &[Measured],
    numpy: &HashMap<String, (f64, f64)>,
    suite_seconds: Option<f64>,
) -> String {
    let mut text = String::new();
    let list = |lines: Vec<String>| {
        if lines.is_empty() {
            "met on every line".to_string()
        } else {
            format!("missed by {}", lines.join("; "))
        }
    };
    let slow: Vec<String> = measured
        .iter()
        .filter(|m| m.layout && m.ratio > 1.5)
        .map(|m| format!("{} ({:.2}×)", m.name, m.ratio))
        .collect();
    let _ = writeln!(text, "- Layout ops ≤ 1.5 × copy: {}.", list(slow));
    let beaten: Vec<String> = measured
        .iter()
        .filter_map(|m| {
            let &(s, _) = numpy.get(m.name)?;
            (m.seconds >= s).then(|| format!("{} ({:.2}×)", m.name, m.seconds / s))
        })
        .collect();
    let _ = if numpy.is_empty() {
        writeln!(text, "- Faster than numpy: not measured.")
    } else {
        writeln!(text, "- Faster than numpy: {}.", list(beaten))
    };
    let heavy: Vec<String> = measured
        .iter()
        .filter(|m| m.peak_ratio > 3.0)
        .map(|m| format!("{} ({:.2}×)", m.name, m.peak_ratio))
        .collect();
    let _ = writeln!(
        text,
        "- Peak memory ≤ 3 × the largest tensor: {}.",
        list(heavy)
    );
    let _ = match suite_seconds {
        Some(seconds) => writeln!(
            text,
            "- Whole suite under 2 s: {} ({seconds:.3} s).",
            if seconds < 2.0 { "met" } else { "missed" }
        ),
        None => writeln!(text, "- Whole suite under 2 s: not measured."),
    };
    text
}

/// The plain element-by-element loop, measured once when the fast paths came in (3
/// repetitions; its copy column was a `Vec::clone` on 4 KiB pages). Not regenerated.
const BEFORE: &str = "Recorded once, when every op still ran `layout::gather_reference`'s \
plain loop (not regenerated; the copy then was a `Vec::clone` on 4 KiB pages, 41–61 ms):\n\n\
| operation | plain loop ms |\n|---|---:|\n\
| shuffle NCHW→NHWC | 431.9 |\n\
| shuffle swap last two axes | 339.5 |\n\
| shuffle transpose–reshape–transpose | 665.3 |\n\
| slice strided (H, W step 2) | 46.5 |\n\
| slice negative stride (C, H, W reversed) | 167.0 |\n\
| slice crop STRICT_BOUNDS (8 off each edge) | 178.6 |\n\
| slice pad 8 WRAP / CLAMP / FILL / REFLECT | 189.7 / 153.7 / 144.1 / 167.4 |\n\
| as_strided overlapping windows (64 every 32) | 465.3 |\n\
| pack / unpack CHW4 (float16) | 578.5 / 254.0 |\n\
| pack / unpack CHW32 (float32) | 372.8 / 351.4 |\n\
| pack / unpack HWC8 (float16) | 890.4 / 485.8 |\n\
| pack / unpack DLA_LINEAR (float16, W 500) | 553.3 / 243.4 |\n\
| scale CHANNEL (float32) | 604.3 |\n";

/// What was measured about the lines furthest from the copy (not regenerated).
const BOUNDS: &str = "Recorded on 2026-11-23 with one-off timing programs, best medians of \
alternating runs of the old and new code, and `perf record` profiles (not regenerated):\n\n\
- **Fresh pages.** Every op returns a new tensor, and so does the copy. A 64 MiB output is \
fresh memory from the kernel, which zeroes each huge page on first touch: `clear_page_erms` \
took 36 % of the samples of a swap of the last two axes and 45 % of the AsStrided windows. \
An output of 32 MiB or less is memory glibc has recycled, which `calloc` zeroed with a \
`memset` instead, on the calling thread before the op started (15 % of the strided slice), \
and which the op then read back from memory. Such outputs are now set part by part by the \
threads that write them (`kernels::pages::Output`): the strided slice 4.65 → 4.18 ms; the \
64 MiB lines are unchanged (a crop set that way measured 10.2 → 11.8 ms, so outputs above \
32 MiB still come zeroed from `calloc`). Where a piece is written row after row in order \
(the strided slice), its rows are instead streamed into the unset memory, which is then \
never read from memory to be written: 4.7 → 3.7 ms more (three rounds: 4.66 → 3.72, \
4.91 → 3.78, 5.23 → 4.05 ms); through the cache, the same appending was slower than setting \
first (4.07 → 4.59 ms). The copy still pays `calloc`'s zeroing.\n\
- **Writes.** The copy is glibc's `memcpy`, which writes a buffer this large with \
non-temporal stores: it never reads the destination's lines. The ops write through the \
cache, which pays off when they write in order: the kernel has just zeroed the page, and its \
lines are still cached. Streaming every stored row measured slower (AsStrided windows \
20.4 → 25.9 ms, crop 8.7 → 9.9 ms, swap 15.1 → 17.0 ms). The unpack lines write 32 or 64 \
planes at once, and their lines are written long after the page was touched, so their \
stored rows are streamed (`kernels::stream`): unpack HWC8 25.0 → 20.2 ms, unpack CHW32 \
23.9 → 19.6 ms.\n\
- **Threads.** Before a fix on that day, a copy whose outermost axis was shorter than its \
pieces ran on one thread. This hit the batch of 2 of the float16 inputs and the 2 channel \
blocks of CHW32. It is now cut inside that axis: pack HWC8 20.0 → 14.2 ms, unpack HWC8 \
24.9 → 15.1 ms, unpack CHW32 21.2 → 13.5 ms, pack CHW32 21.6 → 12.8 ms.\n\
- **slice strided (H, W step 2)** reads every line of every other row: twice the bytes it \
writes, while the copy reads what it writes. Before its output was set part by part: \
reading those lines alone, one word per line on two threads, with the 16 MiB output \
allocated, took 4.5–6.0 ms (medians of 30 calls, alternating runs), the op 5.1–6.0 ms, and \
a copy of the output's bytes 3.2–3.8 ms: the op was within a tenth of its reads, which \
alone were about 1.4 × copy. Streaming its output rows past the cache measured no faster \
(best medians 5.03 against 5.21 ms). Reading every row, twice the \
lines, took as long as reading every other row (best medians of 8 alternating runs: 3.78 \
against 3.76 ms): the hardware prefetchers fetch the skipped rows too, and reading each row \
backwards did not stop them (3.66 ms, and slower in most runs). The row after next is \
prefetched (without it: 5.15 → 5.39 ms); prefetching four rows ahead changed nothing.\n\
- **Where the time of a 64 MiB line goes** (medians of 30 calls in separate processes, \
float32 `[1, 64, 512, 512]`). Taking a fresh 64 MiB buffer and touching each page costs \
11.3–12.4 ms on one thread and 6.6–8.5 ms split over two. The copy (one thread) takes \
14.8–21.8 ms, so about two thirds of it is page faults; the same copy on two threads takes \
11.1–12.9 ms, and 6.4–8.1 ms into memory already faulted. Writing into memory already \
faulted (a reused output, outside the harness), the swap of the last two axes takes \
11.7–14.5 ms, pack CHW32 10.3–11.9 ms, NCHW → NHWC 8.1–10.3 ms and unpack CHW32 \
6.6–9.3 ms; on fresh pages, the swap 16.4–23.0 ms and pack CHW32 13.4–24.8 ms. On one \
core, into memory already faulted, both threads of the swap take 19–23 ms (pack CHW32 \
16.2–16.5 ms) against 9.3–11.0 ms for a copy: per core, their \
transposes cost about twice a copy's work. What keeps them near 1.5 × copy is that they \
split the page faults over two threads, while the copy takes them all on one.\n\
- **swap of the last two axes**: 55 % of the samples are in the tiles, most of them in \
storing the 256-byte destination rows of each block, 2 KiB apart: too short a run for the \
hardware prefetcher to follow. A stored block now asks for the lines of the destination row \
2 KiB ahead while it stores one (`STORE_AHEAD_BYTES` in `kernels`): best / median of 15 \
alternating runs of 30 calls, 15.3 / 17.4 → 13.7 / 15.3 ms, and in a second round \
12.3 / 14.0 → 11.3 / 12.7 ms; in the harness, the swap alone measured 1.30, 1.15 and \
1.28 × copy before, 1.20, 1.06 and 1.17 after. 1 KiB or 4 KiB ahead gained about as much. \
Rows streamed past the cache are not asked for (unpack HWC8's median 17.7 → 19.3 ms when \
they were). Half or twice the block's runs, and local rows an odd number of lines apart, \
measured within the machine's noise. Also tried \
and not kept (best medians of alternating runs, before → after): blocks of all 512 source \
rows, whose destination is one stretch of 256 KiB, built in place (17.8 → 18.2 ms), built \
locally and stored (13.6 → 15.8 ms) or stored streamed (14.7 → 16.1 ms); block strips \
aligned to the destination's cache lines, as outputs start 16 bytes into a page \
(17.9 → 18.6 ms).\n\
- **Transposes in registers (swap and pack CHW32)**, tried and not kept: moving every run of \
a block 64, 128 or 256 elements at a time, so that its local rows stay in L1 (swap \
16.2 → 18.4, 15.8 → 19.1, 14.9 → 17.7 ms; pack CHW32 10.8 → 13.5, 10.3 → 11.3, \
11.4 → 11.9 ms); 8 or 16 runs per group instead of 4, so that each local row's lines are \
written whole (8: swap 14.9 → 15.4, pack CHW32 11.8 → 12.6 ms; 16: 15.8 → 18.7 and \
12.0 → 15.9 ms). The 32 source planes of CHW32 are 1 MiB apart, so their lines share a few \
L1 sets; groups of 4 runs, with the next 4 prefetched, keep within them (without the \
prefetch: pack CHW32 12.6 → 13.2 ms, swap 13.7 → 16.0 ms). Bounds checks hoisted out \
of the loop changed nothing measurable (swap 15.8 → 15.5 ms), nor did asking for the local \
rows' lines ahead of the transposes (medians 15.2 → 14.2 and 14.3 → 15.0 ms). AVX 8 × 8 \
transposes of 32-bit words, 8 runs per group, built for this CPU (`-C target-cpu=native`, \
old and new alike) gained nothing either (best medians: swap 16.9 → 17.2 ms, NCHW → NHWC \
12.1 → 13.1 ms): the instructions are not what bounds these lines, so no runtime feature \
detection was added for them.\n\
- Tried on the unpack lines and not kept: building the blocks in the destination \
(25 → 37 ms), regrouping to 8 planes at a time over cached source stretches (23 → 31 ms), \
larger or smaller tiles, pre-faulting the output.\n\
- **Noise.** The same binary's two-thread ops move by a third between runs minutes apart, \
while the one-thread copy holds steady. Within one process, the AsStrided windows measured \
25–43 ms in the harness, and 20–27 ms in four processes in a row. The machine is a guest \
with free page reporting on (`Free page reporting enabled` at boot, \
`page_reporting.page_reporting_order=11`): memory freed and left free for a moment is \
handed back to the host, which must fault it in again on next use. Measured with a C \
program that maps 64 MiB (huge pages advised), touches each page and unmaps it, 12 times: \
back to back, 8–13 ms each after the first; with 0.5 s, 1 s or 2 s idle between them, every \
second to fourth one takes 60–126 ms. The harness's repetitions follow each other with no \
pause, so this mostly reaches the warm-up call and the first line after numpy's turn, but a \
repetition that meets it is 5–10 × slower.\n";

fn shell(command: &str, args: &[&str]) -> String {
    Command::new(command)
        .args(args)
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default()
}

fn machine() -> String {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let cpu = cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split(':').nth(1))
        .unwrap_or("?")
        .trim()
        .to_string();
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let memory = meminfo
        .lines()
        .find(|l| l.starts_with("MemTotal"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kib| kib.parse::<f64>().ok())
        .map(|kib| format!("{:.0} GiB", kib / 1024.0 / 1024.0))
        .unwrap_or_default();
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    format!(
        "{cpu}, {cores} cores, {memory} RAM; {}; {}",
        shell("rustc", &["--version"]),
        shell("uname", &["-sr"])
    )
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if !args.iter().any(|a| a == "--bench") {
        // `cargo test --benches` builds this and runs it without `--bench`: nothing to do.
        return;
    }
    let filter: Vec<&String> = args.iter().filter(|a| !a.starts_with("--")).collect();
    let reps: usize = std::env::var("OPSPEC_BENCH_REPS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(11)
        .max(1);
    // Further whole runs show how far each ratio moves on this machine: the same binary's
    // ratios move between processes, so each line's row is its median run.
    let runs: usize = std::env::var("OPSPEC_BENCH_RUNS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(1)
        .max(1);
    let skip_numpy = std::env::var("OPSPEC_BENCH_NUMPY").is_ok_and(|v| v == "0");
    let mut server = if skip_numpy { None } else { Numpy::start(reps) };
    // Every run of every line, in line order, with numpy's side timed right after it.
    let mut runs_of: Vec<Vec<(Measured, NumpyTimes)>> = Vec::new();
    for run in 0..runs {
        if runs > 1 {
            eprintln!("run {} of {runs}", run + 1);
        }
        let mut index = 0;
        for line in lines() {
            if !filter.is_empty() && !filter.iter().any(|f| line.name.contains(f.as_str())) {
                continue;
            }
            let m = measure(&line, reps);
            eprintln!(
                "{:<45} {:>8.2} ms  copy {:>7.2} ms  {:>5.2}×  peak {:.2}×",
                m.name,
                m.seconds * 1e3,
                m.copy_seconds * 1e3,
                m.ratio,
                m.peak_ratio
            );
            // numpy's side of the line, right after this side's.
            let times = server.as_mut().and_then(|server| server.measure(m.name));
            if run == 0 {
                runs_of.push(Vec::new());
            }
            runs_of[index].push((m, times));
            index += 1;
        }
    }
    let ratios: HashMap<&'static str, Vec<f64>> = runs_of
        .iter()
        .map(|of_line| {
            (
                of_line[0].0.name,
                of_line.iter().map(|(m, _)| m.ratio).collect(),
            )
        })
        .collect();
    let numpy_losses: Vec<String> = runs_of
        .iter()
        .filter_map(|of_line| {
            let vs: Vec<f64> = of_line
                .iter()
                .filter_map(|(m, times)| times.map(|(s, _)| m.seconds / s))
                .collect();
            vs.iter()
                .any(|&v| v >= 1.0)
                .then(|| format!("{} ({})", of_line[0].0.name, spread(&vs)))
        })
        .collect();
    // Each line's row is one whole run's: the run whose ratio to the copy is the median.
    let mut numpy: HashMap<String, (f64, f64)> = HashMap::new();
    let mut measured = Vec::new();
    for mut of_line in runs_of {
        of_line.sort_by(|a, b| a.0.ratio.total_cmp(&b.0.ratio));
        let middle = of_line.len() / 2;
        let (m, times) = of_line.swap_remove(middle);
        if let Some(times) = times {
            numpy.insert(m.name.to_string(), times);
        }
        measured.push(m);
    }
    let numpy_version = server.take().map_or_else(
        || "numpy not run".to_string(),
        |server| server.version.clone(),
    );
    let suite = if filter.is_empty() { suite(5) } else { None };

    let mut report = String::new();
    let _ = writeln!(report, "| operation | output MiB | ms | copy ms | × copy | × copy over {runs} runs | numpy ms | × numpy | numpy × its copy | peak / largest tensor | `Vec::clone` ms |");
    let _ = writeln!(
        report,
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    );
    for m in &measured {
        let ratio = m.ratio;
        let mark = if m.layout && ratio > 1.5 { " ✗" } else { "" };
        let (numpy_ms, vs_numpy, numpy_copy) = match numpy.get(m.name) {
            Some(&(s, c)) => {
                let vs = m.seconds / s;
                let mark = if vs >= 1.0 { " ✗" } else { "" };
                (
                    format!("{:.1}", s * 1e3),
                    format!("{vs:.2}{mark}"),
                    format!("{:.2}", s / c),
                )
            }
            None => ("–".into(), "–".into(), "–".into()),
        };
        let peak_mark = if m.peak_ratio > 3.0 { " ✗" } else { "" };
        let spread = spread(&ratios[m.name]);
        let _ = writeln!(
            report,
            "| {} | {:.1} | {:.1} | {:.1} | {ratio:.2}{mark} | {spread} | {numpy_ms} | {vs_numpy} | {numpy_copy} | {:.2}{peak_mark} | {:.1} |",
            m.name,
            m.out_bytes as f64 / MIB as f64,
            m.seconds * 1e3,
            m.copy_seconds * 1e3,
            m.peak_ratio,
            m.clone_seconds * 1e3,
        );
    }
    let suite_text = match &suite {
        Some((seconds, rss, result)) => format!(
            "`target/release/runner -q` over `specs/` (median of 5 runs, build excluded): \
             **{:.3} s** wall, peak RSS {rss}; {result}.",
            seconds
        ),
        None => "not measured (build `target/release/runner` first, and run without a filter)"
            .to_string(),
    };
    let mut targets = targets(&measured, &numpy, suite.as_ref().map(|s| s.0));
    if runs > 1 {
        let over: Vec<String> = measured
            .iter()
            .filter(|m| m.layout && ratios[m.name].iter().any(|&r| r > 1.5))
            .map(|m| format!("{} ({})", m.name, spread(&ratios[m.name])))
            .collect();
        let mut every_run = |target: &str, misses: &[String]| {
            let verdict = if misses.is_empty() {
                "met on every line".to_string()
            } else {
                format!("missed in some run by {}", misses.join("; "))
            };
            let _ = writeln!(
                targets,
                "- {target} in every one of {runs} runs: {verdict}."
            );
        };
        every_run("Layout ops ≤ 1.5 × copy", &over);
        if !numpy.is_empty() {
            every_run("Faster than numpy", &numpy_losses);
        }
    }
    let markdown = args.iter().any(|a| a == "--markdown");
    if markdown {
        eprintln!("{report}\n{suite_text}\n\n{targets}");
    } else {
        println!("{report}\n{suite_text}\n\n{targets}");
    }

    if markdown {
        let document = format!(
            "# Benchmarks\n\n\
             Regenerate with `scripts/benchmarks/bench.sh` (builds `target/release/runner`, then runs \
             `OPSPEC_BENCH_RUNS=3 cargo bench -p opspec-kernels --bench layout -- --markdown`, \
             whose sections `scripts/benchmarks/benchmarks_md.py` merges into this file; about three \
             minutes). The harness is \
             `crates/kernels/benches/layout.rs`; numpy's side is \
             `crates/kernels/benches/numpy_layout.py`. The same binary's ratios move between whole runs on this \
             shared 2-core virtual machine, most on the lines bound by memory traffic (see *What \
             bounds the slowest lines* below), so it makes {runs} whole runs: each line's row is \
             one run's, the run whose × copy is the median of the {runs} (its op, copy and numpy \
             times were all taken in that run), and the column *× copy over {runs} runs* is the \
             ratio's range over all of them. The targets are checked on those rows, and again on \
             every run.\n\n\
             - Machine: {}\n- {numpy_version} (python3)\n- Date: {}\n- Repetitions: median \
             of {reps} per line, after one warm-up call\n\n\
             ## Layout operators\n\n\
             Inputs are 64 MiB (float32 `[1, 64, 512, 512]`; float16 `[2, 64, 512, 512]` where the \
             op or format does not take float32; DLA_LINEAR uses W = 500 so rows are padded; \
             AsStrided takes float16 or int64 only, here 32 Mi float16 elements). Unpack lines \
             read the packed buffer of the same logical tensor. Inputs are allocated as the ops \
             allocate outputs (huge pages advised, as numpy's arrays are).\n\n\
             - **× copy**: the op's time over a plain copy of as many bytes as the op's output \
             (a fresh zeroed buffer, `calloc` with huge pages advised, then `copy_from_slice` \
             from a buffer allocated as the inputs are; the ops also start from zeroed or \
             filled outputs, but set them part by part on the threads that write them), timed right after each repetition of the op; \
             the ratio is the median of those pairs' ratios (the times shown are the medians of \
             each side). Target: at most 1.5 for every layout op (✗ marks a miss; \
             Scale is arithmetic, not held to it). The last column is a `Vec<u8>::clone` of the \
             same bytes, on 4 KiB pages: most of its time is page faults (see \
             `crates/kernels/src/pages.rs`). The clones are timed after all the pairs: freeing one \
             just before an op slowed the op by a quarter.\n\
             - **× numpy**: the op's time over numpy's for the same operation, numpy's timed by \
             the script right after this side's (below 1 = faster than numpy; ✗ marks a loss). \
             *numpy × its copy* is numpy's own ratio to `np.copy` of the output bytes.\n\
             - **peak / largest tensor**: the most heap live during the call, the input included, \
             over the larger of input and output (counting allocator). Target: at most 3; a \
             two-pass op that holds input, intermediate and output shows 3.00 plus a few KiB of \
             tables, a miss.\n\
             - Shuffle's transpose–reshape–transpose runs as one composed pass \
             (`opspec_kernels::shuffle::transpose_reshape_transpose`); pack lines are `reformat`'s one pass, the \
             `opspec_kernels::maps::scatter_map` of the image's slots.\n\n\
             {report}\n\
             ## Whole suite\n\n{suite_text}\n\n\
             ## Targets\n\n{targets}\n\
             ## What bounds the slowest lines\n\n{BOUNDS}\n\
             ## Before the fast paths\n\n{BEFORE}",
            machine(),
            shell("date", &["-u", "+%Y-%m-%d %H:%M UTC"]),
        );
        print!("{document}");
    }
}
