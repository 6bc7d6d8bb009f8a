//! What each trial of a run is ([`TrialKind`]), planned from the loaded suite and the options
//! alone ([`plan`]) before any backend is asked; `--list` shows each trial's kind.

use std::sync::Arc;

use opspec_generate::golden::{GoldenStore, Unused};
use opspec_generate::GeneratedCase;
use opspec_spec::Case;

use crate::judge::expectations::{Expectations, TrialClauses};
use crate::run::generated::GeneratedTrials;

/// A problem of a spec or sweep file, as the failing trial that reports it.
pub(crate) struct SpecProblem {
    pub(crate) trial: String,
    /// The op folder (possibly an unknown op's name).
    pub(crate) op: String,
    pub(crate) message: String,
}

/// The six kinds of trial a run makes.
pub(crate) enum TrialKind {
    /// A spec case, sent to the backend and judged.
    Case(Box<Case>),
    /// A sweep case, judged against its golden.
    Generated {
        case: Arc<GeneratedCase>,
        store: Arc<GoldenStore>,
    },
    /// The round trip of a sweep case (its `metamorphic` first step, then the inverse).
    RoundTrip {
        case: Arc<GeneratedCase>,
        store: Arc<GoldenStore>,
    },
    /// A spec or sweep file the run cannot use; fails.
    SpecProblem { op: String, message: String },
    /// An expectations entry that matches no trial; fails.
    StaleExpectation { message: String },
    /// A golden no sweep case uses; fails, or is removed when blessing.
    UnusedGolden {
        unused: Unused,
        store: Arc<GoldenStore>,
    },
}

impl TrialKind {
    /// The kind as libtest shows it, `[case] slice::...` (names never clash with a trial
    /// name's parts, which are joined by `::`).
    pub(crate) fn label(&self) -> &'static str {
        match self {
            TrialKind::Case(_) => "case",
            TrialKind::Generated { .. } => "generated",
            TrialKind::RoundTrip { .. } => "round-trip",
            TrialKind::SpecProblem { .. } => "spec-problem",
            TrialKind::StaleExpectation { .. } => "stale-expectation",
            TrialKind::UnusedGolden { .. } => "unused-golden",
        }
    }
}

/// A trial of the run to be: its name and kind.
pub(crate) struct PlannedTrial {
    pub(crate) name: String,
    pub(crate) kind: TrialKind,
}

/// The trials of a run, in this order: one failing trial per spec problem, the generated
/// trials (per sweep case, its trial and its round trip's; then one per unused golden), one
/// per expectations entry that matches none of the trials `cited` (when given), and one per
/// spec case (`cases` move into them).
pub(crate) fn plan(
    spec_problems: impl Iterator<Item = SpecProblem>,
    generated: Option<&GeneratedTrials>,
    expectations: &Expectations,
    cited: Option<&[TrialClauses]>,
    cases: Vec<Case>,
) -> Vec<PlannedTrial> {
    let mut planned: Vec<PlannedTrial> = spec_problems
        .map(|p| PlannedTrial {
            name: p.trial,
            kind: TrialKind::SpecProblem {
                op: p.op,
                message: p.message,
            },
        })
        .collect();
    if let Some(generated) = generated {
        let store = generated.store();
        for case in generated.cases() {
            let case = Arc::new(case.clone());
            planned.push(PlannedTrial {
                name: case.case.trial_name(),
                kind: TrialKind::Generated {
                    case: Arc::clone(&case),
                    store: Arc::clone(store),
                },
            });
            if let Some(first) = &case.metamorphic {
                planned.push(PlannedTrial {
                    name: first.trial_name(),
                    kind: TrialKind::RoundTrip {
                        case: Arc::clone(&case),
                        store: Arc::clone(store),
                    },
                });
            }
        }
        planned.extend(generated.unused().iter().map(|unused| PlannedTrial {
            name: format!("golden::unused::{}", unused.name),
            kind: TrialKind::UnusedGolden {
                unused: unused.clone(),
                store: Arc::clone(store),
            },
        }));
    }
    if let Some(cited) = cited {
        planned.extend(
            expectations
                .unmatched(cited)
                .into_iter()
                .map(|entry| PlannedTrial {
                    name: format!("expectations::line_{}", entry.line()),
                    kind: TrialKind::StaleExpectation {
                        message: format!(
                            "stale expectation: line {} (`{}`) matches no case; remove it",
                            entry.line(),
                            entry.selector()
                        ),
                    },
                }),
        );
    }
    planned.extend(cases.into_iter().map(|case| PlannedTrial {
        name: case.trial_name(),
        kind: TrialKind::Case(Box::new(case)),
    }));
    planned
}
