//! Faults injected into a bless, for the tests of an interrupted one (`OPSPEC_BLESS_FAULT`):
//! the steps a fault can stop at, and the store's hook that fails or pauses there. Both the
//! store's writes (`store.rs`) and the switch (`bless.rs`) reach the hook; it depends on
//! neither.

use std::path::PathBuf;
use std::sync::atomic::Ordering;

use super::GoldenStore;

impl GoldenStore {
    /// A blessing store that fails or pauses at the step `fault` names (`golden`, `manifest`,
    /// `switch`, `link`, `rename`, `cleanup`, or `pause:<step>:<marker file>`): for the tests
    /// of an interrupted bless, which the runner passes it through `OPSPEC_BLESS_FAULT`.
    pub fn with_fault(mut self, fault: Option<&str>) -> GoldenStore {
        if self.bless {
            self.injected = fault.and_then(injected_fault);
        }
        self
    }

    /// The fault injected at `step` (`OPSPEC_BLESS_FAULT`), if any: an error, or a pause until
    /// the process is killed (after creating the marker file the test waits for).
    pub(super) fn fault(&self, step: Step) -> std::io::Result<()> {
        let Some((at, action)) = &self.injected else {
            return Ok(());
        };
        // Once: the first time the step is reached.
        if *at != step || self.steps.fetch_add(1, Ordering::Relaxed) > 0 {
            return Ok(());
        }
        match action {
            FaultAction::Fail => Err(std::io::Error::other(format!(
                "fault injected at {step:?} (OPSPEC_BLESS_FAULT)"
            ))),
            FaultAction::Pause(marker) => {
                let _ = std::fs::write(marker, std::process::id().to_string());
                loop {
                    std::thread::sleep(std::time::Duration::from_millis(50));
                }
            }
        }
    }
}

/// The steps of a bless a fault can be injected at (`OPSPEC_BLESS_FAULT=<step>` to fail there,
/// `pause:<step>:<marker file>` to stop there until killed): writing a golden, writing the
/// switching manifest, the switch, linking the usual names, the final manifest, the cleanup.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Step {
    Golden,
    Manifest,
    Switch,
    Link,
    Rename,
    Cleanup,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum FaultAction {
    Fail,
    Pause(PathBuf),
}

/// The fault `text` (the runner's `OPSPEC_BLESS_FAULT`) asks for: a hook for the tests of
/// interrupted blesses.
fn injected_fault(text: &str) -> Option<(Step, FaultAction)> {
    let (action, step) = match text.strip_prefix("pause:") {
        Some(rest) => {
            let (step, marker) = rest.split_once(':')?;
            (FaultAction::Pause(PathBuf::from(marker)), step.to_owned())
        }
        None => (FaultAction::Fail, text.to_owned()),
    };
    let step = match step.as_str() {
        "golden" => Step::Golden,
        "manifest" => Step::Manifest,
        "switch" => Step::Switch,
        "link" => Step::Link,
        "rename" => Step::Rename,
        "cleanup" => Step::Cleanup,
        _ => return None,
    };
    Some((step, action))
}
