//! A trial's [`Status`], and the one table of what each status is called and does in every
//! report ([`ROWS`]): its name in the JSON report, its words on the console, in `runner
//! replay` and on the HTML page, its wpt status and JUnit element, whether it fails the run
//! and whether it is a skip. The counts of a run are keyed by status ([`Counts`]).
//!
//! Adding a status takes its variant, its row here, and the verdict that decides it
//! (`crate::judge::verdict`); CONTRIBUTING.md, "Adding a status".

use std::ops::Index;

use schemars::JsonSchema;
use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize};

/// A trial's status: the one name of what became of a trial, decided by the verdict
/// ([`crate::judge::verdict::judge`], then `crate::judge::verdict::decide`) and only read by
/// the reports. The order of the variants is the order of the counts in the JSON report and
/// on the console; the order of the status table (`ROWS`) is the pages'.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Passed,
    Failed,
    /// The backend replied `unsupported` to a case its hello did not exclude (reported by
    /// libtest as ignored).
    Unsupported,
    /// Not run: the backend's hello excludes it (its op, a dtype, or a restriction of a
    /// target it declares) (reported as ignored).
    Excluded,
    /// Failed, or replied `unsupported`, as an expectations entry says (reported as ignored).
    KnownFailure,
    /// An implementation-defined case on which the backend differs from the reference's
    /// reading (reported as ignored, with the difference).
    ImplementationDefined,
    /// Not sent: the backend was given up on (it failed to start too often), or `--fail-fast`
    /// stopped the run at an earlier failure. Fails the run; a JUnit error, and counted as
    /// failed in the table.
    NotRun,
    /// A build-only backend built the case with the expected output dtypes and shapes; its
    /// values were never computed, so this is no pass (reported as ignored).
    ShapeChecked,
    /// A case that expects an error was rejected, but without an error kind: the rejection
    /// may be for another rule, so this is no pass (reported as ignored; fails the run under
    /// `--require-error-kinds`).
    RejectedUnclassified,
}

/// How a trial of a status is written in a JUnit file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum JunitKind {
    /// An empty `testcase`.
    Passed,
    /// A `failure` with the first line of the report.
    Failure,
    /// An `error`: the trial was never run.
    Error,
    /// `skipped`, with the status as the property `opspec.status`.
    Skipped,
    /// Ran, without a full verdict: neither failed nor skipped, the status named as the
    /// property `opspec.status` and the message as `system-out`.
    Ran,
}

/// The tint of an HTML matrix cell: the worst status among its trials, worst first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Tint {
    Bad,
    Known,
    Impl,
    Good,
    Skip,
}

impl Tint {
    /// The cell's CSS class.
    pub(crate) fn class(self) -> &'static str {
        match self {
            Tint::Bad => "bad",
            Tint::Known => "known",
            Tint::Impl => "impl",
            Tint::Good => "good",
            Tint::Skip => "skip",
        }
    }

    /// The cell's background on the HTML page.
    pub(crate) fn background(self) -> &'static str {
        match self {
            Tint::Bad => "#ffebe9",
            Tint::Known => "#fff8c5",
            Tint::Impl => "#ddf4ff",
            Tint::Good => "#dafbe1",
            Tint::Skip => "#f6f8fa",
        }
    }

    /// Every tint, worst first.
    pub(crate) const ALL: [Tint; 5] = [Tint::Bad, Tint::Known, Tint::Impl, Tint::Good, Tint::Skip];
}

/// What a status is called and does in every report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Row {
    pub(crate) status: Status,
    /// As the JSON report spells a trial's status (and the HTML page its CSS class).
    pub(crate) name: &'static str,
    /// The JSON report's count of the trials of this status.
    pub(crate) count_key: &'static str,
    /// How pages and lists name it to people.
    pub(crate) label: &'static str,
    /// The console summary's words after its count (`3 known failures`).
    pub(crate) tally: &'static str,
    /// The console summary shows its count only when a trial has it: most runs have none.
    pub(crate) rare: bool,
    /// `runner replay`'s verdict line.
    pub(crate) verdict: &'static str,
    /// The word of a count in an HTML matrix cell.
    pub(crate) short: &'static str,
    /// What it means, for the HTML page's legend.
    pub(crate) meaning: &'static str,
    /// Its wpt test status (`runner export --wpt`); a status that fails the run was expected
    /// to be `PASS`.
    pub(crate) wpt: &'static str,
    pub(crate) junit: JunitKind,
    /// Its colour on the HTML page (its chips, and the legend).
    pub(crate) colour: &'static str,
    pub(crate) tint: Tint,
    /// A trial of this status fails the run.
    pub(crate) fails: bool,
    /// Not run, or run without a verdict: what the `skipped` counts and columns show.
    pub(crate) skip: bool,
}

/// Every status, in the order pages and lists show them.
pub(crate) const ROWS: [Row; 9] = [
    Row {
        status: Status::Passed,
        name: "passed",
        count_key: "passed",
        label: "passed",
        tally: "passed",
        rare: false,
        verdict: "passed",
        short: "pass",
        meaning: "as the specs say",
        wpt: "PASS",
        junit: JunitKind::Passed,
        colour: "#1a7f37",
        tint: Tint::Good,
        fails: false,
        skip: false,
    },
    Row {
        status: Status::Failed,
        name: "failed",
        count_key: "failed",
        label: "failed",
        tally: "failed",
        rare: false,
        verdict: "failed",
        short: "fail",
        meaning: "differs from the specs; fails the run",
        wpt: "FAIL",
        junit: JunitKind::Failure,
        colour: "#cf222e",
        tint: Tint::Bad,
        fails: true,
        skip: false,
    },
    Row {
        status: Status::ShapeChecked,
        name: "shape_checked",
        count_key: "shape_checked",
        label: "shape-checked",
        tally: "shape-checked (built, not run)",
        rare: true,
        verdict: "shape-checked (built, not run)",
        short: "shape",
        meaning: "built with the expected dtypes and shapes by a build-only engine; values not run, so no pass",
        wpt: "PRECONDITION_FAILED",
        junit: JunitKind::Ran,
        colour: "#8250df",
        tint: Tint::Impl,
        fails: false,
        skip: false,
    },
    Row {
        status: Status::RejectedUnclassified,
        name: "rejected_unclassified",
        count_key: "rejected_unclassified",
        label: "rejected without kind",
        tally: "rejected without an error kind",
        rare: true,
        verdict: "rejected without an error kind",
        short: "no kind",
        meaning: "rejected as expected but without an error kind, so maybe for another rule; no pass",
        wpt: "PRECONDITION_FAILED",
        junit: JunitKind::Ran,
        colour: "#bc4c00",
        tint: Tint::Impl,
        fails: false,
        skip: false,
    },
    Row {
        status: Status::KnownFailure,
        name: "known_failure",
        count_key: "known_failures",
        label: "known failure",
        tally: "known failures",
        rare: false,
        verdict: "known failure",
        short: "known",
        meaning: "differs, as the engine's known-failures file declares",
        wpt: "FAIL",
        junit: JunitKind::Skipped,
        colour: "#9a6700",
        tint: Tint::Known,
        fails: false,
        skip: true,
    },
    Row {
        status: Status::Unsupported,
        name: "unsupported",
        count_key: "unsupported",
        label: "unsupported",
        tally: "unsupported",
        rare: false,
        verdict: "skipped (unsupported)",
        short: "unsup",
        meaning: "the engine answered that it does not support the case",
        wpt: "PRECONDITION_FAILED",
        junit: JunitKind::Skipped,
        colour: "#57606a",
        tint: Tint::Skip,
        fails: false,
        skip: true,
    },
    Row {
        status: Status::ImplementationDefined,
        name: "implementation_defined",
        count_key: "implementation_defined",
        label: "implementation-defined",
        tally: "implementation-defined",
        rare: false,
        verdict: "implementation-defined divergence",
        short: "impl",
        meaning: "differs where the vendor leaves the result open; accepted",
        wpt: "PASS",
        junit: JunitKind::Ran,
        colour: "#0969da",
        tint: Tint::Impl,
        fails: false,
        skip: false,
    },
    Row {
        status: Status::Excluded,
        name: "excluded",
        count_key: "excluded",
        label: "excluded",
        tally: "excluded by the hello",
        rare: false,
        verdict: "skipped (excluded by the hello)",
        short: "excl",
        meaning: "not sent: the engine's hello excludes its op, a dtype, an attribute value or its target",
        wpt: "SKIP",
        junit: JunitKind::Skipped,
        colour: "#8c959f",
        tint: Tint::Skip,
        fails: false,
        skip: true,
    },
    Row {
        status: Status::NotRun,
        name: "not_run",
        count_key: "not_run",
        label: "not run",
        tally: "not run",
        rare: false,
        verdict: "not run",
        short: "not run",
        meaning: "not sent: the engine was given up on, or --fail-fast stopped the run; fails the run",
        wpt: "ERROR",
        junit: JunitKind::Error,
        colour: "#82071e",
        tint: Tint::Bad,
        fails: true,
        skip: false,
    },
];

/// How many statuses there are.
const COUNT: usize = ROWS.len();

impl Status {
    /// Every status, in the order pages and lists show them (the order of [`ROWS`]).
    pub(crate) const ALL: [Status; COUNT] = {
        let mut all = [Status::Passed; COUNT];
        let mut i = 0;
        while i < COUNT {
            all[i] = ROWS[i].status;
            i += 1;
        }
        all
    };

    /// Every status in the order of the variants: the JSON report's counts and the console's.
    fn in_order() -> [Status; COUNT] {
        let mut all = Status::ALL;
        all.sort();
        all
    }

    /// Its row of [`ROWS`].
    pub(crate) fn row(self) -> &'static Row {
        (ROWS.iter())
            .find(|row| row.status == self)
            .expect("every status has its row (tested)")
    }

    /// Not run, or run without a verdict: what the `skipped` counts and columns show.
    pub(crate) fn is_skip(self) -> bool {
        self.row().skip
    }

    /// Whether a trial of this status fails the run.
    pub(crate) fn fails(self) -> bool {
        self.row().fails
    }

    /// As the JSON report spells it.
    pub(crate) fn name(self) -> &'static str {
        self.row().name
    }

    /// How pages and lists name it to people.
    pub(crate) fn label(self) -> &'static str {
        self.row().label
    }

    /// Its column of the console's op × dtype table: passed, failed (not run included: it
    /// fails the run), skipped, or run without a full verdict (implementation-defined,
    /// shape-checked, rejected without a kind).
    pub(crate) fn column(self) -> usize {
        match self.row() {
            row if row.status == Status::Passed => 0,
            row if row.fails => 1,
            row if row.skip => 2,
            _ => 3,
        }
    }
}

/// The trials of a run per status: what the JSON report's counts (`passed`, `known_failures`,
/// ...) and the run's verdict hold.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Counts([usize; COUNT]);

impl Counts {
    /// How many of `statuses` there are of each.
    pub(crate) fn of(statuses: impl IntoIterator<Item = Status>) -> Counts {
        let mut counts = Counts::default();
        for status in statuses {
            counts.0[status as usize] += 1;
        }
        counts
    }

    /// How many trials have `status`.
    fn get(&self, status: Status) -> usize {
        self.0[status as usize]
    }

    /// Each status with its count, in the order of the variants.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (Status, usize)> + '_ {
        Status::in_order()
            .into_iter()
            .map(|status| (status, self.get(status)))
    }
}

impl Index<Status> for Counts {
    type Output = usize;

    fn index(&self, status: Status) -> &usize {
        &self.0[status as usize]
    }
}

/// The counts as the JSON report holds them: `"passed": 12, ..., "known_failures": 3, ...`.
impl Serialize for Counts {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(COUNT))?;
        for (status, n) in self.iter() {
            map.serialize_entry(status.row().count_key, &n)?;
        }
        map.end()
    }
}

/// The counts' part of the JSON report's schema: one non-negative integer per count key, all
/// of them required (what [`Counts`]'s `Serialize` writes).
impl JsonSchema for Counts {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Counts".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let properties: serde_json::Map<String, serde_json::Value> = Status::in_order()
            .into_iter()
            .map(|status| {
                let row = status.row();
                let doc = format!("How many trials have the status `{}`.", row.name);
                let schema =
                    serde_json::json!({"type": "integer", "minimum": 0, "description": doc});
                (row.count_key.to_owned(), schema)
            })
            .collect();
        let required: Vec<&str> = Status::in_order()
            .into_iter()
            .map(|status| status.row().count_key)
            .collect();
        schemars::json_schema!({"type": "object", "properties": properties, "required": required})
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each variant has one row, named as serde names the variant; the variants are numbered
    /// 0 to 8 (the index of [`Counts`]). The match names every variant, so that a new one
    /// does not compile until it is given here, and its row by the loop.
    #[test]
    fn every_status_has_one_row_of_its_name() {
        let index = |status: Status| match status {
            Status::Passed => 0,
            Status::Failed => 1,
            Status::Unsupported => 2,
            Status::Excluded => 3,
            Status::KnownFailure => 4,
            Status::ImplementationDefined => 5,
            Status::NotRun => 6,
            Status::ShapeChecked => 7,
            Status::RejectedUnclassified => 8,
        };
        let mut seen = [false; COUNT];
        for row in ROWS {
            assert_eq!(row.status as usize, index(row.status), "{row:?}");
            assert!(!seen[index(row.status)], "{:?} has two rows", row.status);
            seen[index(row.status)] = true;
            assert_eq!(
                serde_json::to_value(row.status).unwrap(),
                serde_json::json!(row.name)
            );
            assert_eq!(row.status.row(), &row);
        }
        assert!(seen.iter().all(|s| *s));
    }

    /// The counts are written under the JSON report's keys, in the order of the variants.
    #[test]
    fn the_counts_are_written_under_the_report_keys() {
        let counts = Counts::of([Status::KnownFailure, Status::Passed, Status::KnownFailure]);
        assert_eq!(counts[Status::KnownFailure], 2);
        assert_eq!(
            serde_json::to_string(&counts).unwrap(),
            concat!(
                r#"{"passed":1,"failed":0,"unsupported":0,"excluded":0,"known_failures":2,"#,
                r#""implementation_defined":0,"not_run":0,"shape_checked":0,"rejected_unclassified":0}"#
            )
        );
    }
}
