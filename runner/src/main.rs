//! `runner`: the conformance suite as a command, for people validating an implementation.
//!
//! ```text
//! runner [run options] [libtest options] [FILTER]
//! runner --serve [--target dla]
//!                      serve the reference interpreter over the backend protocol
//! runner coverage [--specs DIRS] [--clauses]
//!                      clauses and documented combinations no case reaches, and spec lint
//! runner replay TRIAL [run options]
//!                      run one trial, printing the request, the reply and the verdict
//! runner report A.json B.json ... --html FILE [--show-undeclared]
//!                      the JSON reports of several runs (engines) on one HTML page
//! runner merge A.json B.json ... --out FILE
//!                      the JSON reports of the parts of one run (--partition) as one
//! runner diff OLD.json NEW.json
//!                      the trials that newly fail, newly pass, appeared or disappeared
//! runner update-expectations REPORT.json FILE [--out OUT]
//!                      a known-failures file rewritten from a run's report
//! runner expectations FILE [--facts REPORT.json] [--json]
//!                      every entry of a known-failures file as the runner reads it, and whether
//!                      its condition holds on a run's facts
//! runner export --wpt REPORT.json --out FILE [--revision REV]
//!                      a JSON report as a web-platform-tests report (wptreport), for wpt.fyi
//! runner export --cases DIR [run options] [FILTER]
//!                      the cases as files a harness in any language answers offline
//! runner judge DIR [run options] [libtest options] [FILTER]
//!                      the run those answers make: statuses, known failures, reports
//! runner --version     the runner's version and the suite's revision
//! ```
//! `runner --help` lists every flag. The run options ([`opspec_runner::run::config::Options`])
//! override the `OPSPEC_*` variables of the same meaning; the rest are libtest's (a name
//! filter, `--exact`, `--list`, `--ignored`, `--test-threads`, ...). Relative paths are
//! relative to the folder `runner` is started from.

use std::path::PathBuf;
use std::process::ExitCode;

use opspec_runner::backend::checkout::Checkout;

use clap::{CommandFactory, Parser, Subcommand};
use libtest_mimic::Arguments;
use opspec_runner::reports::replay_command;
use opspec_runner::run::config::{parse_command_line, parse_paths, Options, PathList};
use opspec_runner::run::replay;
use opspec_runner::serve;
use opspec_runner::{main_with, Config};

/// Runs the opspec conformance suite against the built-in reference or a backend process.
#[derive(Parser, Debug)]
#[command(
    name = "runner",
    args_conflicts_with_subcommands = true,
    disable_version_flag = true,
    after_help = "Every run option falls back to the OPSPEC_* variable named in its help; an \
                  empty variable counts as unset. Relative paths are relative to the current \
                  folder. README.md and docs/protocol.md have the details."
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// Serve the reference interpreter over the backend protocol on stdin/stdout, instead of
    /// running the suite
    #[arg(long)]
    serve: bool,
    /// Print the runner's version and the revision of the suite (the checkout it reads), then
    /// exit
    #[arg(long)]
    version: bool,
    /// With --serve: a target to declare in the hello (its restricted cases are skipped);
    /// repeatable
    #[arg(long, value_name = "TARGET", requires = "serve", value_parser = parse_target)]
    target: Vec<String>,
    #[command(flatten)]
    options: Options,
    #[command(flatten, next_help_heading = "Test selection and output (libtest's)")]
    test: Arguments,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Clauses and documented combinations no case reaches, and spec lint (exit 1 on any)
    Coverage {
        /// Spec folders, `:`-separated (default: the repository's specs/) [env: OPSPEC_SPECS]
        #[arg(long, value_name = "DIRS", value_parser = parse_paths)]
        specs: Option<PathList>,
        /// Also list every clause with the number of cases that name it
        #[arg(long)]
        clauses: bool,
    },
    /// Runs one trial and prints the request, the reply and the verdict
    Replay {
        /// The trial's full name, as a failure report or `runner --list` gives it
        trial: String,
        #[command(flatten)]
        options: Box<Options>,
    },
    /// Writes the JSON reports of several runs (`--report-json`) as one self-contained HTML page:
    /// an op × dtype × engine matrix, each cell leading to its trials
    Report {
        /// JSON reports written by `runner --report-json`, one column each
        #[arg(value_name = "REPORT", required = true)]
        reports: Vec<PathBuf>,
        /// Where to write the page
        #[arg(long, value_name = "FILE", required = true)]
        html: PathBuf,
        /// Also list the excluded trials: of ops an engine's hello does not declare, and of a
        /// dtype, attribute value or target it excludes (by default they are only counted)
        #[arg(long)]
        show_undeclared: bool,
    },
    /// Joins the JSON reports of the parts of one run (`--partition K/N`) into one report equal
    /// to the whole run's; refuses parts that overlap, are missing, or come from another run
    /// (exit 2)
    Merge {
        /// The parts' JSON reports (`runner --partition K/N --report-json`)
        #[arg(value_name = "REPORT", required = true)]
        parts: Vec<PathBuf>,
        /// Where to write the merged report
        #[arg(long, value_name = "FILE", required = true)]
        out: PathBuf,
    },
    /// Lists the trials that newly fail, newly pass, appeared or disappeared between two JSON
    /// reports; exit 1 on a regression (a trial that passed and no longer does, or a trial that
    /// newly fails), 2 when a report cannot be read
    Diff {
        /// The earlier report (`runner --report-json`)
        old: PathBuf,
        /// The later report
        new: PathBuf,
    },
    /// Rewrites a known-failures file from the JSON report of a run made with it: entries keep
    /// their class, reason and condition; stale ones go; each new failure becomes an entry of
    /// class `untriaged`, which fails later runs until a person triages it. FILE must be the
    /// file the run read, unchanged since (exit 2 otherwise, nothing written)
    #[command(name = "update-expectations")]
    UpdateExpectations {
        /// The whole run's report (`runner --expectations FILE --report-json REPORT`)
        report: PathBuf,
        /// The known-failures file the run used, as it was then (a new path, when the run had
        /// none)
        file: PathBuf,
        /// Write the new file here instead of replacing FILE (not the report)
        #[arg(long, value_name = "OUT")]
        out: Option<PathBuf>,
    },
    /// Lists every entry of a known-failures file as the runner reads it (line, selector,
    /// clause, class, reason, condition) and, given a run's JSON report, whether each condition
    /// holds on that run's facts; exit 2 when the file is malformed or a file cannot be read.
    /// Scripts read known failures through this, never by parsing the file again
    Expectations {
        /// The known-failures file (`--expectations`)
        file: PathBuf,
        /// A JSON report (`runner --report-json`) whose facts (engine, version, OS, CPU) the
        /// conditions are evaluated on; without it a condition is listed, not evaluated
        #[arg(long, value_name = "REPORT")]
        facts: Option<PathBuf>,
        /// Print JSON: `file`, `fingerprint` (as a report made with the file records it,
        /// `run.expectations`), `facts`, and `entries`, each with `held` when evaluated
        #[arg(long)]
        json: bool,
    },
    /// `--wpt`: writes a JSON report in the form of a web-platform-tests run (wptreport, what
    /// wpt.fyi's results receiver takes): a result per trial, `/opspec/<trial name>` with `::`
    /// as `/` (README.md, "Results others can read"). `--cases`: writes the cases of the
    /// selected trials as files a harness in any language answers without this project, for
    /// `runner judge` (docs/protocol.md, "Offline cases")
    Export {
        /// The JSON report (`runner --report-json`) to write as a wptreport
        #[arg(
            long,
            value_name = "REPORT",
            required_unless_present = "cases",
            conflicts_with = "cases",
            requires = "out"
        )]
        wpt: Option<PathBuf>,
        /// Where to write the wptreport
        #[arg(long, value_name = "FILE", requires = "wpt")]
        out: Option<PathBuf>,
        /// The suite's git revision the run was made at (default: `git rev-parse HEAD` here,
        /// with `-dirty` when a tracked file is modified)
        #[arg(long, value_name = "REV", requires = "wpt")]
        revision: Option<String>,
        /// Write every selected trial that sends one request (spec and sweep cases; round
        /// trips send two and are left out, listed) into DIR, new or empty: DIR/index.json
        /// and the tensors' bytes, no expected result
        #[arg(long, value_name = "DIR")]
        cases: Option<PathBuf>,
        #[command(flatten)]
        options: Box<Options>,
        #[command(
            flatten,
            next_help_heading = "Test selection (libtest's), with --cases"
        )]
        test: Box<Arguments>,
    },
    /// Judges the answers a harness wrote into a folder of `runner export --cases`
    /// (DIR/answers/): the statuses, known failures, reports and exit code a live run makes
    /// (docs/protocol.md, "Offline cases"); the same as a run with --answers DIR
    Judge {
        /// The folder `runner export --cases DIR` wrote, with the harness's answers
        dir: PathBuf,
        #[command(flatten)]
        options: Box<Options>,
        #[command(flatten, next_help_heading = "Test selection and output (libtest's)")]
        test: Box<Arguments>,
    },
}

/// The runner as it was started (its first argument), for replay lines.
fn program() -> String {
    let started = std::env::args().next().unwrap_or_else(|| "runner".into());
    replay_command::shell_quote(&started)
}

fn main() -> ExitCode {
    let cli: Cli = parse_command_line();
    if cli.version {
        println!("{}", version());
        return ExitCode::SUCCESS;
    }
    match cli.command {
        Some(Command::Coverage { specs, clauses }) => {
            let options = Options {
                specs,
                ..Options::default()
            };
            match options.resolve_here() {
                Ok(config) => opspec_runner::tools::coverage::main(&config, clauses),
                Err(e) => fail(&e.to_string()),
            }
        }
        Some(Command::Replay { trial, options }) => match options.resolve_here() {
            Ok(config) => replay::main(
                &trial,
                Config {
                    program: program(),
                    ..config
                },
            ),
            Err(e) => fail(&e.to_string()),
        },
        Some(Command::Report {
            reports,
            html,
            show_undeclared,
        }) => opspec_runner::reports::html::main(
            &reports,
            &html,
            opspec_runner::reports::html::PageOptions { show_undeclared },
        ),
        Some(Command::Diff { old, new }) => opspec_runner::reports::diff::main(&old, &new),
        Some(Command::Export {
            wpt,
            out,
            revision,
            cases,
            options,
            test,
        }) => match (wpt, out, cases) {
            (Some(wpt), Some(out), _) => {
                opspec_runner::reports::wpt::main(&wpt, &out, revision.as_deref())
            }
            (_, _, Some(dir)) => match options.resolve_here() {
                Ok(config) => opspec_runner::run::offline::export_main(&dir, *test, config),
                Err(e) => fail(&e.to_string()),
            },
            _ => fail("export needs --wpt REPORT --out FILE, or --cases DIR"),
        },
        Some(Command::Judge { dir, options, test }) => {
            if options.answers.is_some() {
                return fail("judge DIR names the answers' folder: leave out --answers");
            }
            let options = Options {
                answers: Some(dir),
                ..*options
            };
            match options.resolve_here() {
                Ok(config) => main_with(
                    *test,
                    Config {
                        program: program(),
                        ..config
                    },
                ),
                Err(e) => fail(&e.to_string()),
            }
        }
        Some(Command::Merge { parts, out }) => opspec_runner::reports::merge::main(&parts, &out),
        Some(Command::UpdateExpectations { report, file, out }) => {
            let checkout = Checkout::discover();
            checkout.warn_if_outside();
            let specs = checkout.root.join("specs");
            opspec_runner::reports::update::main(&report, &file, out.as_deref(), &specs)
        }
        Some(Command::Expectations { file, facts, json }) => {
            let checkout = Checkout::discover();
            checkout.warn_if_outside();
            let specs = checkout.root.join("specs");
            opspec_runner::tools::expectations::list_main(&file, facts.as_deref(), json, &specs)
        }
        None if cli.serve => serve_reference(&cli.target, cli.options),
        None => match mistyped_subcommand(&cli.test) {
            Some(message) => fail(&message),
            None => run(cli),
        },
    }
}

/// The run of the suite that `cli` asks for.
fn run(cli: Cli) -> ExitCode {
    match cli.options.resolve_here() {
        Ok(config) => main_with(
            cli.test,
            Config {
                program: program(),
                ..config
            },
        ),
        Err(e) => fail(&e.to_string()),
    }
}

/// Why a first argument close to a subcommand's name (`dif`, `mrege`, `reprot`) is refused
/// rather than run as a name filter; none for a filter given with `--exact`, after `--` or
/// after an option, or far from every subcommand.
fn mistyped_subcommand(test: &Arguments) -> Option<String> {
    let filter = test.filter.as_deref()?;
    if test.exact || std::env::args().nth(1).as_deref() != Some(filter) {
        return None;
    }
    let command = Cli::command();
    let names = command.get_subcommands().map(|c| c.get_name());
    let hint = opspec_spec::did_you_mean(filter, names);
    (!hint.is_empty()).then(|| {
        format!(
            "`{filter}` is no subcommand{hint}; to run the trials whose names hold `{filter}`, give it after `--` (`runner -- {filter}`) or with --exact"
        )
    })
}

/// `runner --serve`: the reference interpreter as a backend.
fn serve_reference(targets: &[String], options: Options) -> ExitCode {
    let (engine, limits) = match options.resolve_here() {
        Ok(config) => (config.engine, config.limits()),
        Err(e) => return fail(&e.to_string()),
    };
    let stdin = std::io::stdin().lock();
    let stdout = std::io::stdout().lock();
    match serve(
        stdin,
        stdout,
        "opspec-reference",
        targets,
        limits,
        |_, invocation| engine.evaluate(invocation, limits),
    ) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// A target a spec case can be restricted on (`unsupported_on`); anything else would be
/// declared in the hello and then refused by the runner.
fn parse_target(text: &str) -> Result<String, String> {
    if opspec_spec::TARGETS.contains(&text) {
        Ok(text.to_owned())
    } else {
        Err(format!(
            "unknown target (known: {})",
            opspec_spec::TARGETS.join(", ")
        ))
    }
}

/// `runner <version>` and `suite <revision> (<checkout>)`: the git revision of the checkout the
/// runner reads its specs and sweeps from (`git describe --always --dirty`), or why there is none.
fn version() -> String {
    let checkout = Checkout::discover();
    checkout.warn_if_outside();
    let root = checkout.root;
    let revision = std::process::Command::new("git")
        .arg("-C")
        .arg(&root)
        .args(["describe", "--always", "--dirty", "--abbrev=12"])
        .output()
        .ok()
        .filter(|output| output.status.success())
        .map(|output| String::from_utf8_lossy(&output.stdout).trim().to_owned())
        .filter(|revision| !revision.is_empty())
        .unwrap_or_else(|| "unknown (not a git checkout)".to_owned());
    format!(
        "runner {}\nsuite {revision} ({})",
        env!("CARGO_PKG_VERSION"),
        root.display()
    )
}

fn fail(message: &str) -> ExitCode {
    eprintln!("error: {message}");
    ExitCode::from(2)
}
