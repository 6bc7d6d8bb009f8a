//! What a run's records become: JSON, JUnit, HTML, diffs, merges, exports; never runs a case.

pub mod diff;
pub mod html;
pub mod merge;
pub(crate) mod output;
pub mod replay_command;
pub(crate) mod report;
// Checked by its test against the committed schema/report.schema.json; no run needs it.
#[cfg(test)]
mod schema;
pub mod update;
pub mod wpt;
