//! The two YAML readers of the suite side by side: the streaming reader
//! (`opspec_spec::yaml::from_str`) and serde_yaml_ng's (`serde_yaml::from_str`), each reading
//! the same files into the same types, with the peak heap of each read and its time.
//!
//! ```sh
//! python3 scripts/benchmarks/big_specs.py /tmp/probe block 66000000
//! cargo bench -p opspec-spec --bench yaml_readers -- $PWD/specs/reformat/vector_major.yaml /tmp/probe/shuffle/load.yaml
//! ```
//!
//! Three targets: `IgnoredAny` (the parse alone), `serde_yaml::Value` (the tree a sweep is read
//! into before its matrix is expanded) and a spec file's shape with its data lists as
//! `TensorData` (what the spec loader keeps). The peak is the most heap bytes allocated at once
//! during the read, over what was allocated before it, counted by this binary's allocator; the
//! time is the median of 3 reads' wall time (1 for files past 10 MB). It prints a Markdown table.

use std::alloc::{GlobalAlloc, Layout, System};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::time::{Duration, Instant};

use opspec_spec::value::TensorData;
use serde::de::{DeserializeOwned, IgnoredAny};
use serde::Deserialize;

/// The system allocator, counting the bytes allocated now and their most since a reset.
struct Counting;

static NOW: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is passed on to the system allocator unchanged; only counters are added.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let now = NOW.fetch_add(layout.size(), Relaxed) + layout.size();
        PEAK.fetch_max(now, Relaxed);
        System.alloc(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        NOW.fetch_sub(layout.size(), Relaxed);
        System.dealloc(ptr, layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size > layout.size() {
            let now = NOW.fetch_add(new_size - layout.size(), Relaxed) + new_size - layout.size();
            PEAK.fetch_max(now, Relaxed);
        } else {
            NOW.fetch_sub(layout.size() - new_size, Relaxed);
        }
        System.realloc(ptr, layout, new_size)
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// A spec file as the loader keeps it: its cases' tensors, data lists in their typed buffers.
#[derive(Deserialize)]
#[allow(dead_code)] // read to be held, not looked at
struct SpecFile {
    cases: Vec<SpecCase>,
}

#[derive(Deserialize)]
#[allow(dead_code)]
struct SpecCase {
    name: String,
    #[serde(default)]
    attrs: Option<serde_yaml::Value>,
    #[serde(default)]
    inputs: BTreeMap<String, SpecTensor>,
    #[serde(default)]
    expected: Option<BTreeMap<String, SpecTensor>>,
}

#[derive(Deserialize)]
#[allow(dead_code)]
struct SpecTensor {
    #[serde(default)]
    dtype: Option<String>,
    #[serde(default)]
    shape: Option<serde_yaml::Value>,
    #[serde(default)]
    data: Option<TensorData>,
}

/// One read of `text` into `T` by `reader`: (peak heap bytes over the start, wall time), or
/// why the file is not a `T` (a sweep is no spec file).
fn measure<T: DeserializeOwned>(text: &str, streaming: bool) -> Result<(usize, Duration), String> {
    let base = NOW.load(Relaxed);
    PEAK.store(base, Relaxed);
    let start = Instant::now();
    let ok = if streaming {
        opspec_spec::yaml::from_str::<T>(text)
            .map(drop)
            .map_err(|e| e.to_string())
    } else {
        serde_yaml::from_str::<T>(text)
            .map(drop)
            .map_err(|e| e.to_string())
    };
    let time = start.elapsed();
    ok.map(|()| (PEAK.load(Relaxed) - base, time))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // `--only=streaming` or `--only=serde_yaml_ng`: one reader's lines.
    let only = args
        .iter()
        .find_map(|a| a.strip_prefix("--only="))
        .map(str::to_owned);
    let files: Vec<String> = args
        .iter()
        .filter(|a| !a.starts_with("--"))
        .cloned()
        .collect();
    assert!(!files.is_empty(), "name the YAML files to read");
    println!("| file | MB | target | reader | peak heap MiB | peak / file | ms (wall) | MB/s |");
    println!("|---|---:|---|---|---:|---:|---:|---:|");
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let mb = text.len() as f64 / 1e6;
        let reps = if text.len() > 10_000_000 { 1 } else { 3 };
        type Read = fn(&str, bool) -> Result<(usize, Duration), String>;
        let targets: [(&str, Read); 3] = [
            ("IgnoredAny", measure::<IgnoredAny>),
            ("serde_yaml::Value", measure::<serde_yaml::Value>),
            ("spec (TensorData)", measure::<SpecFile>),
        ];
        for (target, read) in targets {
            for (reader, streaming) in [("streaming", true), ("serde_yaml_ng", false)] {
                if only.as_deref().is_some_and(|only| only != reader) {
                    continue;
                }
                let runs: Result<Vec<(usize, Duration)>, String> =
                    (0..reps).map(|_| read(&text, streaming)).collect();
                let mut runs = match runs {
                    Ok(runs) => runs,
                    Err(e) => {
                        println!(
                            "| {file} | {mb:.2} | {target} | {reader} | not read: {e} | | | |"
                        );
                        continue;
                    }
                };
                runs.sort_by_key(|r| r.1);
                let (peak, time) = (runs.iter().map(|r| r.0).max().unwrap(), runs[reps / 2].1);
                println!(
                    "| {file} | {mb:.2} | {target} | {reader} | {:.1} | {:.2} | {:.1} | {:.1} |",
                    peak as f64 / (1 << 20) as f64,
                    peak as f64 / text.len() as f64,
                    time.as_secs_f64() * 1e3,
                    mb / time.as_secs_f64(),
                );
            }
        }
    }
}
