//! `runner export --cases DIR`: the cases of a run as files a harness in any language reads
//! without this project, for an engine that cannot run a protocol process (a device with no
//! pipe to a host). The layout, and the backend `runner judge DIR` reads the harness's answers
//! through, are [`crate::backend::offline`]'s; docs/protocol.md, "Offline cases", has both.

use std::path::Path;
use std::process::ExitCode;

use libtest_mimic::Arguments;

use crate::backend::offline::{self, LeftOut, ROUND_TRIP};
use crate::run::config::Config;
use crate::run::harness::Harness;

/// `runner export --cases DIR [run options] [FILTER]`: exit code 2 when the cases cannot be
/// loaded, none is selected, or DIR is not new or empty or cannot be written.
pub fn export_main(dir: &Path, args: Arguments, config: Config) -> ExitCode {
    match export(dir, &args, config) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

fn export(dir: &Path, args: &Arguments, config: Config) -> Result<(), String> {
    if let Some(command) = config.backend.as_ref() {
        return Err(format!(
            "export --cases writes the cases for a harness to answer; it runs no backend (leave out `{command}`, given by --backend or OPSPEC_BACKEND)"
        ));
    }
    let root = config.checkout.root.clone();
    let harness = Harness::open(args, config).map_err(|e| e.to_string())?;
    let (cases, round_trips) = harness.single_requests(args);
    if cases.is_empty() {
        return Err(match &args.filter {
            Some(filter) => format!("the filter {filter:?} selects no case"),
            None => "no case to export (are the spec folders empty?)".into(),
        });
    }
    let left_out: Vec<LeftOut> = (round_trips.into_iter())
        .map(|id| LeftOut {
            id,
            why: ROUND_TRIP.to_owned(),
        })
        .collect();
    let suite = crate::reports::wpt::git_revision(Some(&root))
        .unwrap_or_else(|| "unknown (not a git checkout)".to_owned());
    let written = offline::write(dir, &cases, left_out, &suite)?;
    println!(
        "wrote {} cases into {} ({} bytes), listed in {}",
        written.cases,
        dir.display(),
        written.bytes,
        dir.join(offline::INDEX).display()
    );
    if written.left_out > 0 {
        println!(
            "left out: {} round trips (each sends a second request built from the first's output); `runner judge` counts them excluded",
            written.left_out
        );
    }
    let problems = harness.problem_trials();
    if problems > 0 {
        println!("not cases: {problems} problems of the spec and sweep files, which fail in the judge as in a live run");
    }
    println!(
        "the harness writes its hello into {} and each answer into {}/answers/<key>.json; then: runner judge {}",
        dir.join(offline::HELLO).display(),
        dir.display(),
        dir.display()
    );
    Ok(())
}
