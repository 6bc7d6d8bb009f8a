//! Which fast paths the tests' generated tables take: each path counts its hits in test
//! builds (`hit!`), and a test asserts that every path was taken.

use std::sync::atomic::{AtomicUsize, Ordering};

/// Declares the paths once: the enum, and `ALL` listing every variant in order.
macro_rules! paths {
    ($($path:ident),* $(,)?) => {
        #[derive(Clone, Copy, Debug)]
        pub enum Path {
            $($path),*
        }

        pub const ALL: &[Path] = &[$(Path::$path),*];
    };
}

paths![
    Empty,
    Vacant,
    Outside,
    Single,
    Elements,
    OneRow,
    TightRows,
    Rows,
    FillRun,
    RepeatRun,
    ReversedRun,
    HalvingRun,
    SteppedRun,
    BackSteppedRun,
    FillTile,
    FillInPlace,
    Deinterleave,
    SquareDeinterleave,
    Interleave,
    SquareInterleave,
    Blocks4,
    Blocks8,
    Streamed,
    OneRun,
    TableRun,
    Chunks,
    InPlace,
    LocalStore,
    ScatteredStore,
    Split,
    Pieces,
    NestedPieces,
    PaddedSplit,
    PresetOutput,
    OutputSetInParts,
    AppendedRows,
];

static HITS: [AtomicUsize; ALL.len()] = [const { AtomicUsize::new(0) }; ALL.len()];

pub fn hit(path: Path) {
    HITS[path as usize].fetch_add(1, Ordering::Relaxed);
}

pub fn hits(path: Path) -> usize {
    HITS[path as usize].load(Ordering::Relaxed)
}
