//! Differential fuzzing: random valid and invalid cases of every op
//! ([`opspec_generate::random`]) run on a backend and on the reference; a disagreement is
//! shrunk ([`opspec_generate::shrink`]) and written as a ready-to-add spec YAML case.
//!
//! A disagreement is one of [`Disagreement`]: different outputs, a rejection where the
//! reference computes (or the reverse), a different error kind, or a backend that breaks the
//! protocol. Shrinking keeps a candidate only if it disagrees in the same way. The written case
//! takes its expected values from the reference, and says so in its comment, source and note:
//! check them against the documents before moving the case into `specs/`.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::backend::interface::Engine;
use opspec::ops::{Attrs, Invocation, Op};
use opspec::tensor::Limits;
use opspec_generate::golden::expectation_of;
use opspec_generate::new_case;
use opspec_generate::random::random_case;
use opspec_generate::rng::Rng;
use opspec_generate::shrink::shrink;
use opspec_generate::yaml::{to_yaml, Floats};
use opspec_spec::{load_file, Case, Expectation};

use crate::backend::interface::Backend;
use crate::judge::status::Status;
use crate::run::send::send_and_judge;

/// How long a run goes on.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Budget {
    Cases(u64),
    Seconds(f64),
}

/// The default budget: enough to find a mode-specific off-by-one in a few seconds.
pub const DEFAULT_CASES: u64 = 20_000;

#[derive(Clone, Debug)]
pub struct FuzzOptions {
    pub seed: u64,
    pub budget: Budget,
    pub ops: Vec<Op>,
    /// Where disagreements are written, as `<out>/<op>/fuzz_seed<seed>_case<n>.yaml`.
    pub out: PathBuf,
    /// Stop after this many disagreements.
    pub max_failures: usize,
    /// Candidates tried while shrinking one disagreement.
    pub shrink_budget: usize,
    /// Count a different error kind as a disagreement. Off by default: a random invalid case
    /// often breaks two rules at once, and which one an implementation reports first is not
    /// specified; such cases are counted in [`FuzzReport::kind_differences`] instead.
    pub strict_kinds: bool,
    /// The reference's engine, which computes every case's expected result.
    pub engine: Engine,
}

impl Default for FuzzOptions {
    fn default() -> FuzzOptions {
        FuzzOptions {
            seed: 1,
            budget: Budget::Cases(DEFAULT_CASES),
            ops: Op::ALL.to_vec(),
            out: PathBuf::from("target/opspec-fuzz"),
            max_failures: 1,
            shrink_budget: 2_000,
            strict_kinds: false,
            engine: Engine::default(),
        }
    }
}

pub use crate::judge::verdict::Disagreement;

/// One disagreement, shrunk and written.
#[derive(Clone, Debug)]
pub struct Finding {
    /// The index of the case in the run (with the seed, it regenerates the case).
    pub index: u64,
    pub op: Op,
    pub disagreement: Disagreement,
    pub shrink_tries: usize,
    /// The failure report of the shrunk case.
    pub report: String,
    pub path: PathBuf,
}

/// What a run did.
#[derive(Clone, Debug, Default)]
pub struct FuzzReport {
    pub cases: u64,
    /// Cases the reference computed.
    pub computed: u64,
    /// Cases the reference rejected.
    pub rejected: u64,
    /// Cases the backend does not support.
    pub unsupported: u64,
    /// Cases both rejected with different error kinds (disagreements with `strict_kinds`).
    pub kind_differences: u64,
    pub seconds: f64,
    pub findings: Vec<Finding>,
}

impl FuzzReport {
    pub fn per_second(&self) -> f64 {
        self.cases as f64 / self.seconds.max(1e-9)
    }
}

/// The case (named for the run) that `invocation` is, expecting the reference's result.
pub(crate) fn fuzz_case(seed: u64, index: u64, invocation: Invocation, engine: Engine) -> Case {
    let op = invocation.op();
    let dtype = invocation.inputs[0].as_ref().map(|t| t.dtype);
    let mut case = new_case(
        op,
        "fuzz",
        Path::new("opspec-fuzz"),
        &format!("fuzz_seed{seed}_case{index}"),
        dtype,
    );
    case.source = format!("opspec-fuzz seed {seed}");
    // A power meeting a negative base, or 0 meeting NaN or ±inf, is implementation-defined
    // (docs/semantics.md §3.5), as are non-integer and non-finite powers, whose bases the
    // shrinker may turn negative.
    case.implementation_defined = !crate::tools::coverage::power_dependencies(&invocation)
        .is_empty()
        || matches!(&invocation.attrs, Attrs::Scale(a)
            if a.power.0.iter().any(|&b| { let p = f32::from_bits(b); p.fract() != 0.0 || !p.is_finite() }));
    case.expect = expectation_of(&engine.evaluate(&invocation, Limits::DEFAULT));
    case.invocation = invocation;
    case
}

/// Runs `case` on `backend`: `Ok(None)` agreement, `Ok(Some(..))` a disagreement and its
/// report, `Err(reason)` unsupported by the backend.
pub(crate) fn check(
    backend: &dyn Backend,
    case: &Case,
) -> Result<Option<(Disagreement, String)>, String> {
    let sent = send_and_judge(backend, case);
    if matches!(sent.verdict.status, Status::Excluded | Status::Unsupported) {
        return Err(sent.verdict.message);
    }
    let Some(class) = sent.disagreement else {
        return Ok(None);
    };
    // No known failures apply to a random case, and it has no replay command.
    let verdict = sent.verdict;
    // A backend that breaks disagrees whatever the case; a rejection without a kind cannot be
    // told from one for another rule.
    let disagrees = class == Disagreement::Broken
        || matches!(
            verdict.status,
            Status::Failed | Status::RejectedUnclassified
        );
    Ok(disagrees.then_some((class, verdict.message)))
}

/// The generator of case `index` of a run with `seed`.
fn case_rng(seed: u64, index: u64) -> Rng {
    let mut rng = Rng::new(seed ^ index.wrapping_mul(0xd1b5_4a32_d192_ed03));
    rng.next_u64();
    rng
}

/// Runs the fuzzer. `progress(cases_done)` is called now and then (for a progress bar).
pub fn fuzz(
    backend: &dyn Backend,
    options: &FuzzOptions,
    mut progress: impl FnMut(u64),
) -> Result<FuzzReport, String> {
    let started = Instant::now();
    let deadline = match options.budget {
        Budget::Seconds(s) => Some(started + Duration::from_secs_f64(s.max(0.0))),
        Budget::Cases(_) => None,
    };
    let mut report = FuzzReport::default();
    let mut index: u64 = 0;
    loop {
        match options.budget {
            Budget::Cases(n) if index >= n => break,
            Budget::Seconds(_) if index % 64 == 0 && Instant::now() >= deadline.expect("set") => {
                break
            }
            _ => {}
        }
        let invocation = random_case(&mut case_rng(options.seed, index), &options.ops);
        let case = fuzz_case(options.seed, index, invocation, options.engine);
        report.cases += 1;
        match &case.expect {
            Expectation::Outputs(_) => report.computed += 1,
            Expectation::Error { .. } => report.rejected += 1,
        }
        match check(backend, &case) {
            Err(_) => report.unsupported += 1,
            Ok(None) => {}
            Ok(Some((Disagreement::Kind, _))) if !options.strict_kinds => {
                report.kind_differences += 1
            }
            Ok(Some((class, _))) => {
                let finding = minimize(backend, options, index, case, class)?;
                report.findings.push(finding);
                if report.findings.len() >= options.max_failures {
                    index += 1;
                    break;
                }
            }
        }
        index += 1;
        if index % 256 == 0 {
            progress(index);
        }
    }
    progress(index);
    report.seconds = started.elapsed().as_secs_f64();
    Ok(report)
}

/// Shrinks a disagreement, writes it, and checks the written file.
fn minimize(
    backend: &dyn Backend,
    options: &FuzzOptions,
    index: u64,
    case: Case,
    class: Disagreement,
) -> Result<Finding, String> {
    let seed = options.seed;
    let (shrunk, tries) = shrink(
        case.invocation.clone(),
        options.shrink_budget,
        |candidate| {
            let candidate = fuzz_case(seed, index, candidate.clone(), options.engine);
            matches!(check(backend, &candidate), Ok(Some((c, _))) if c == class)
        },
    );
    let mut found = fuzz_case(seed, index, shrunk.clone(), options.engine);
    let report = match check(backend, &found) {
        Ok(Some((_, report))) => report,
        _ => return Err("the shrunk case no longer disagrees (a flaky backend?)".into()),
    };
    let dir = options.out.join(found.op.name());
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let path = dir.join(format!("{}.yaml", found.name));
    found.path = path.clone();
    // The first line after the case header of the report.
    let header_fields = ["case:", "source:", "inputs:", "attrs:", "compare:", "note:"];
    let first_line = report
        .lines()
        .filter(|l| !header_fields.iter().any(|h| l.starts_with(h)))
        .take(2)
        .map(str::trim)
        .collect::<Vec<_>>()
        .join(" ");
    found.source = format!(
        "opspec-fuzz seed {seed} (case {index}, shrunk); expected values from the reference interpreter"
    );
    found.note = Some(format!(
        "found by differential fuzzing against `{}`: {}. The expected result is the reference's, not worked out by hand: check it against the documents before moving this case into specs/.",
        backend.name(),
        class.describe()
    ));
    let header = vec![
        format!(
            "Written by opspec-fuzz (seed {seed}, case {index}): the backend `{}` disagreed with the reference ({}).",
            backend.name(),
            class.describe()
        ),
        "The expected values are the REFERENCE INTERPRETER's output, not worked out by hand from the documents:".into(),
        format!(
            "check them before adding this case to specs/{}/ (see CONTRIBUTING.md). Run it: OPSPEC_SPECS={} cargo test",
            found.op,
            options.out.display()
        ),
        format!("Backend report: {}", first_line.trim()),
    ];
    let mut written_exactly = false;
    for floats in [Floats::Decimal, Floats::Bits] {
        let text = to_yaml(&found, &header, floats);
        std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        let (cases, errors) = load_file(found.op, &path, Limits::DEFAULT);
        if errors.is_empty()
            && cases.len() == 1
            && cases[0].invocation == found.invocation
            && cases[0].expect == found.expect
        {
            written_exactly = true;
            break;
        }
    }
    if !written_exactly {
        return Err(format!(
            "{} does not load back to the case it was written from (a bug in the YAML writer)",
            path.display()
        ));
    }
    Ok(Finding {
        index,
        op: found.op,
        disagreement: class,
        shrink_tries: tries,
        report,
        path,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::interface::Reference;

    #[test]
    fn the_reference_agrees_with_itself() {
        // Written to only on a disagreement; removed when dropped either way.
        let scratch = tempfile::tempdir().unwrap();
        let options = FuzzOptions {
            budget: Budget::Cases(3_000),
            out: scratch.path().join("out"),
            ..FuzzOptions::default()
        };
        let report = fuzz(&Reference::default(), &options, |_| {}).unwrap();
        assert_eq!(report.cases, 3_000);
        assert!(report.findings.is_empty());
        assert!(report.computed > report.rejected && report.rejected > 0);
    }
}
