//! What a run is configured by: flags and `OPSPEC_*` variables, one parser for the `runner`
//! binary and the `cargo test` harness (`tests/conformance.rs`).
//!
//! Every setting has a flag and a variable of one meaning; the flag wins, and an empty variable
//! counts as unset. A value that is not usable (a timeout of `inf`, a budget of `1e9`) is an
//! error naming the flag or the variable, never ignored.
//!
//! Relative paths, in flags and variables alike, are resolved against one base folder: the
//! folder `runner` is started from, and the repository root for the `cargo test` harness
//! (cargo starts test binaries in `runner/`, while `OPSPEC_SPECS=target/opspec-fuzz cargo test`
//! is typed at the root). Backend commands always run from the repository root
//! ([`crate::backend::process`]).

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::backend::interface::Engine;
use opspec::tensor::Limits;

use crate::backend::checkout::Checkout;
use crate::judge::partition::Partition;
use crate::reports::report::{self, Writer};

/// The root of the checkout a run reads ([`Checkout::discover`]): the one the runner is started
/// in, else the one it was built from.
pub fn repository_root() -> PathBuf {
    Checkout::discover().root
}

/// The default per-case timeout of a backend.
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
/// The shortest default deadline of a backend's hello: an engine may load for longer than it
/// may take for one case.
pub(crate) const DEFAULT_HELLO_TIMEOUT: Duration = Duration::from_secs(60);

/// The deadline of a backend's hello when `--hello-timeout` is not given: twice the case
/// timeout, and at least [`DEFAULT_HELLO_TIMEOUT`].
pub(crate) fn default_hello_timeout(timeout: Duration) -> Duration {
    DEFAULT_HELLO_TIMEOUT
        .max(timeout.saturating_mul(2))
        .min(Duration::from_secs_f64(MAX_TIMEOUT_SECONDS))
}

/// The shortest timeout accepted, in seconds: below it no backend could answer.
pub(crate) const MIN_TIMEOUT_SECONDS: f64 = 0.001;
/// The longest timeout accepted, in seconds (a day): beyond it a hung backend is never noticed.
pub(crate) const MAX_TIMEOUT_SECONDS: f64 = 86_400.0;

/// Why a flag's or variable's value is not usable.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ValueError {
    #[error("not a number of seconds")]
    NotSeconds,
    #[error("a timeout is from {MIN_TIMEOUT_SECONDS} to {MAX_TIMEOUT_SECONDS} seconds")]
    TimeoutOutOfRange,
    #[error("not a whole number from 1 to {}", u64::MAX)]
    NotACount,
    #[error("names no folder")]
    NoPath,
    #[error("not an engine: expected `plain` or `fast`")]
    NotAnEngine,
    #[error("not a number of processes from 1 to {MAX_JOBS}")]
    NotJobs,
    #[error("not a number of cases from 1 to {MAX_BATCH}")]
    NotABatch,
    #[error("not a partition: expected K/N with 1 <= K <= N, such as 2/3")]
    NotAPartition,
    #[error("over the largest element budget this machine's memory allows, {bound} ({BYTES_PER_BUDGETED_ELEMENT} bytes an element, for a case's input, output and one copy of 8-byte elements, of {memory} bytes of memory)")]
    BudgetOverMemory { bound: u64, memory: u64 },
}

/// The memory an element of the budget may take: an 8-byte input, its output and one copy.
pub(crate) const BYTES_PER_BUDGETED_ELEMENT: u64 = 24;

/// The machine's memory in bytes (`MemTotal` of /proc/meminfo), when it can be read.
fn machine_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// An element budget given by flag or variable, refused up front when the tensors it allows
/// could not fit this machine's memory (a run would abort on an allocation instead).
pub(crate) fn check_budget(budget: u64, memory: Option<u64>) -> Result<u64, ValueError> {
    // Without /proc/meminfo, assume 64 GiB.
    let memory = memory.unwrap_or(64 << 30);
    let bound = memory / BYTES_PER_BUDGETED_ELEMENT;
    if budget > bound {
        return Err(ValueError::BudgetOverMemory { bound, memory });
    }
    Ok(budget)
}

/// A configuration that cannot be used.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    #[error("invalid value {value:?} for {variable}: {problem}")]
    Variable {
        variable: &'static str,
        value: String,
        problem: ValueError,
    },
    #[error("invalid value {value:?} for {flag}: {problem}")]
    Flag {
        flag: &'static str,
        value: String,
        problem: ValueError,
    },
    #[error("{variable} is not valid UTF-8")]
    NotUnicode { variable: &'static str },
    #[error("cannot find the current folder: {0}")]
    NoCurrentDir(String),
    /// Two settings that cannot go together.
    #[error("{0}")]
    Conflict(String),
}

/// Seconds a backend may take for one case: finite, from `MIN_TIMEOUT_SECONDS` to
/// `MAX_TIMEOUT_SECONDS`.
pub fn parse_timeout(text: &str) -> Result<Duration, ValueError> {
    let seconds: f64 = text.trim().parse().map_err(|_| ValueError::NotSeconds)?;
    if !(MIN_TIMEOUT_SECONDS..=MAX_TIMEOUT_SECONDS).contains(&seconds) {
        // NaN and the infinities land here too.
        return Err(ValueError::TimeoutOutOfRange);
    }
    Ok(Duration::from_secs_f64(seconds))
}

/// A positive whole number (an element budget, a count): digits only, no exponent or sign.
pub fn parse_count(text: &str) -> Result<u64, ValueError> {
    let text = text.trim();
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(ValueError::NotACount);
    }
    match text.parse::<u64>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(ValueError::NotACount),
    }
}

/// The most copies of a backend a run starts (`--jobs`).
pub(crate) const MAX_JOBS: usize = 256;

/// A number of backend processes, from 1 to [`MAX_JOBS`].
pub(crate) fn parse_jobs(text: &str) -> Result<usize, ValueError> {
    match parse_count(text) {
        Ok(n) if n as usize <= MAX_JOBS => Ok(n as usize),
        _ => Err(ValueError::NotJobs),
    }
}

pub(crate) use crate::backend::protocol::MAX_BATCH;

/// A batch size cap, from 1 to [`MAX_BATCH`].
pub(crate) fn parse_batch(text: &str) -> Result<usize, ValueError> {
    match parse_count(text) {
        Ok(n) if n as usize <= MAX_BATCH => Ok(n as usize),
        _ => Err(ValueError::NotABatch),
    }
}

/// `K/N` ([`Partition`]).
pub(crate) fn parse_partition(text: &str) -> Result<Partition, ValueError> {
    Partition::parse(text).map_err(|_| ValueError::NotAPartition)
}

/// A backend's command line: not blank (`--backend ''` would start a shell that exits at
/// once).
pub(crate) fn parse_command(text: &str) -> Result<String, String> {
    if text.trim().is_empty() {
        return Err(
            "names no command: give the backend's command line, or leave --backend out for the built-in reference"
                .into(),
        );
    }
    Ok(text.to_owned())
}

/// `plain` or `fast` ([`Engine`]).
pub fn parse_engine(text: &str) -> Result<Engine, ValueError> {
    text.parse().map_err(|_| ValueError::NotAnEngine)
}

/// Folders separated as `PATH` is (`:` on Unix); empty entries are dropped.
pub fn parse_paths(text: &str) -> Result<PathList, ValueError> {
    split_paths(OsStr::new(text))
}

fn split_paths(text: &OsStr) -> Result<PathList, ValueError> {
    let paths: Vec<PathBuf> = std::env::split_paths(text)
        .filter(|p| !p.as_os_str().is_empty())
        .collect();
    if paths.is_empty() {
        return Err(ValueError::NoPath);
    }
    Ok(PathList(paths))
}

/// A `:`-separated list of folders.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathList(pub Vec<PathBuf>);

/// The report files of a run, by the flag of their format (`--report-json`, `--junit`): one flag,
/// one variable and one help line per entry of `report::FORMATS`, made from it, so that a new
/// format is one line there.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReportFiles(BTreeMap<&'static str, PathBuf>);

impl ReportFiles {
    /// The files with `path` for the format whose flag is `flag` (`--report-json`).
    #[cfg(test)]
    fn with(mut self, flag: &str, path: PathBuf) -> ReportFiles {
        let format = (report::FORMATS.iter())
            .find(|format| format.flag == flag)
            .unwrap_or_else(|| panic!("no report format has the flag {flag}"));
        self.0.insert(format.flag, path);
        self
    }

    /// Each format not given a file by its flag given the one its variable names, if any.
    fn or_variables(mut self, variable: impl Fn(&'static str) -> Option<PathBuf>) -> ReportFiles {
        for format in &report::FORMATS {
            if !self.0.contains_key(format.flag) {
                if let Some(path) = variable(format.variable) {
                    self.0.insert(format.flag, path);
                }
            }
        }
        self
    }

    fn absolute(self, absolute: impl Fn(PathBuf) -> PathBuf) -> ReportFiles {
        ReportFiles(
            self.0
                .into_iter()
                .map(|(flag, path)| (flag, absolute(path)))
                .collect(),
        )
    }
}

/// A flag's name without its `--`, as clap takes it.
fn long(flag: &'static str) -> &'static str {
    flag.trim_start_matches("--")
}

impl clap::FromArgMatches for ReportFiles {
    fn from_arg_matches(matches: &clap::ArgMatches) -> Result<ReportFiles, clap::Error> {
        let mut files = ReportFiles::default();
        files.update_from_arg_matches(matches)?;
        Ok(files)
    }

    fn update_from_arg_matches(&mut self, matches: &clap::ArgMatches) -> Result<(), clap::Error> {
        for format in &report::FORMATS {
            if let Some(path) = matches.get_one::<PathBuf>(long(format.flag)) {
                self.0.insert(format.flag, path.clone());
            }
        }
        Ok(())
    }
}

impl clap::Args for ReportFiles {
    fn augment_args(command: clap::Command) -> clap::Command {
        report::FORMATS.iter().fold(command, |command, format| {
            command.arg(
                clap::Arg::new(long(format.flag))
                    .long(long(format.flag))
                    .value_name("FILE")
                    .value_parser(clap::value_parser!(PathBuf))
                    .help(format!("{} [env: {}]", format.help, format.variable)),
            )
        })
    }

    fn augment_args_for_update(command: clap::Command) -> clap::Command {
        ReportFiles::augment_args(command)
    }
}

/// The flags of a run; each falls back to its variable (named in its help).
#[derive(clap::Args, Clone, Debug, Default, PartialEq)]
#[command(next_help_heading = "Run options (each overrides its OPSPEC_* variable)")]
pub struct Options {
    /// Command line of a backend process, run by `sh -c` from the repository root (default: the
    /// built-in reference) [env: OPSPEC_BACKEND]
    #[arg(long, value_name = "CMD", value_parser = parse_command)]
    pub backend: Option<String>,
    /// Judge the answers an offline harness wrote into DIR, the folder `runner export --cases
    /// DIR` wrote (docs/protocol.md, "Offline cases"), instead of running a backend; `runner
    /// judge DIR` is the same [env: OPSPEC_ANSWERS]
    #[arg(long, value_name = "DIR", conflicts_with = "backend")]
    pub answers: Option<PathBuf>,
    /// Spec folders, `:`-separated, laid out as `<op>/<file>.yaml` (default: the repository's
    /// specs/). Giving them leaves out the repository's sweeps unless --sweeps is given
    /// [env: OPSPEC_SPECS]
    #[arg(long, value_name = "DIRS", value_parser = parse_paths)]
    pub specs: Option<PathList>,
    /// Sweep folders of generated cases, `:`-separated (default: the repository's sweeps/, none
    /// when --specs is given) [env: OPSPEC_SWEEPS]
    #[arg(long, value_name = "DIRS", value_parser = parse_paths)]
    pub sweeps: Option<PathList>,
    /// The golden folder of those sweeps (default: golden/ beside the first sweep folder)
    /// [env: OPSPEC_GOLDEN]
    #[arg(long, value_name = "DIR")]
    pub golden: Option<PathBuf>,
    /// Write missing, stale and unused goldens from the reference; refused when CI is set
    /// [env: OPSPEC_BLESS=1]
    #[arg(long)]
    pub bless: bool,
    /// Accept a run in which nothing passed, or in which the backend answered `unsupported` to
    /// more than the documented share of the trials sent to it (docs/protocol.md)
    /// [env: OPSPEC_ALLOW_SKIPS=1]
    #[arg(long)]
    pub allow_skips: bool,
    /// Seconds a backend may take for one case, from 0.001 to 86400 (default 10)
    /// [env: OPSPEC_TIMEOUT]
    #[arg(long, value_name = "SECS", value_parser = parse_timeout, allow_hyphen_values = true)]
    pub timeout: Option<Duration>,
    /// Seconds a backend process may take to answer its hello, from 0.001 to 86400 (default:
    /// twice --timeout, at least 60) [env: OPSPEC_HELLO_TIMEOUT]
    #[arg(long, value_name = "SECS", value_parser = parse_timeout, allow_hyphen_values = true)]
    pub hello_timeout: Option<Duration>,
    /// Known-failures file of the backend [env: OPSPEC_EXPECTATIONS]
    #[arg(long, value_name = "FILE")]
    pub expectations: Option<PathBuf>,
    /// The report files (`--report-json FILE`, `--junit FILE`, ...: `report::FORMATS`).
    #[command(flatten)]
    pub report_files: ReportFiles,
    /// Where the backend's stderr goes, emptied at each run and kept to 16 MiB (default:
    /// target/opspec-backend.log)
    /// [env: OPSPEC_BACKEND_LOG]
    #[arg(long, value_name = "FILE")]
    pub backend_log: Option<PathBuf>,
    /// Write every run request sent to the backend there, one JSON line each, exactly as sent
    /// [env: OPSPEC_DUMP_REQUESTS]
    #[arg(long, value_name = "FILE")]
    pub dump_requests: Option<PathBuf>,
    /// The element budget of any tensor (default 268435456, 2^28); also passed on to the
    /// backend as OPSPEC_MAX_ELEMENTS [env: OPSPEC_MAX_ELEMENTS]
    #[arg(long, value_name = "N", value_parser = parse_count, allow_hyphen_values = true)]
    pub max_elements: Option<u64>,
    /// The reference's engine: `fast` (the default) or `plain`, the element-by-element loops
    /// alone; both give the same bits [env: OPSPEC_ENGINE]
    #[arg(long, value_name = "ENGINE", value_parser = parse_engine)]
    pub engine: Option<Engine>,
    /// Stop at the first failing trial: the trials not started yet are not sent and are
    /// reported not run, and the run fails [env: OPSPEC_FAIL_FAST=1]
    #[arg(long)]
    pub fail_fast: bool,
    /// Run N copies of the backend process at once, each sent one case at a time (default 1);
    /// libtest's --test-threads is raised to N unless given [env: OPSPEC_JOBS]
    #[arg(long, value_name = "N", value_parser = parse_jobs, allow_hyphen_values = true)]
    pub jobs: Option<usize>,
    /// Send at most N cases in one request to a backend whose hello declares `batch`
    /// (default: as many as it declares); `--batch 1` sends every case alone. Batching never
    /// changes a verdict [env: OPSPEC_BATCH]
    #[arg(long, value_name = "N", value_parser = parse_batch, allow_hyphen_values = true)]
    pub batch: Option<usize>,
    /// Run only the K-th of N disjoint parts of the selected trials, chosen by a hash of each
    /// trial's name; `runner merge` joins the parts' JSON reports. Bazel's TEST_TOTAL_SHARDS and
    /// TEST_SHARD_INDEX select the part too [env: OPSPEC_PARTITION]
    #[arg(long, value_name = "K/N", value_parser = parse_partition)]
    pub partition: Option<Partition>,
    /// Fail the run when a case that expects an error was rejected without an error kind
    /// (status `rejected_unclassified`), which is otherwise counted apart and no pass
    /// [env: OPSPEC_REQUIRE_ERROR_KINDS=1]
    #[arg(long)]
    pub require_error_kinds: bool,
    /// Print each trial the backend's hello excludes, as an ignored trial (by default they
    /// are only counted, per declaration, in the summary) [env: OPSPEC_LIST_EXCLUDED=1]
    #[arg(long)]
    pub list_excluded: bool,
}

/// Parses the command line into `T`, a clap parser that flattens libtest-mimic's `Arguments`,
/// with clap's own help layout (libtest-mimic's would replace it).
pub fn parse_command_line<T: clap::Parser>() -> T {
    let command = T::command().help_template(
        "{before-help}{about-with-newline}\n{usage-heading} {usage}\n\n{all-args}{after-help}",
    );
    T::from_arg_matches(&command.get_matches()).unwrap_or_else(|e| e.exit())
}

/// Everything a run is configured by, with every path resolved.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    pub specs: Vec<PathBuf>,
    /// Whether `specs` was given (by flag or variable) rather than the repository's.
    pub private_specs: bool,
    /// Empty: no generated trials.
    pub sweeps: Vec<PathBuf>,
    pub golden: Option<PathBuf>,
    pub bless: bool,
    /// Accept a run with nothing passed or with more unasked skips than the documented share.
    pub allow_skips: bool,
    pub backend: Option<String>,
    /// The folder of an offline harness's answers (`--answers`, `runner judge`), judged in
    /// place of a backend.
    pub answers: Option<PathBuf>,
    pub timeout: Duration,
    /// The deadline of each backend process's hello.
    pub hello_timeout: Duration,
    pub expectations: Option<PathBuf>,
    /// The report files to write, by format.
    pub report_files: ReportFiles,
    pub backend_log: PathBuf,
    pub dump_requests: Option<PathBuf>,
    pub max_elements: u64,
    /// The engine the reference evaluates on.
    pub engine: Engine,
    /// Stop sending trials after the first failure.
    pub fail_fast: bool,
    /// Copies of the backend process run at once.
    pub jobs: usize,
    /// The most cases sent in one request (`--batch`); `None`: as many as the hello declares.
    pub batch: Option<usize>,
    /// The part of the trials to run, if not all.
    pub partition: Option<Partition>,
    /// Bazel's `TEST_SHARD_STATUS_FILE`, touched to say the run shards.
    pub shard_status_file: Option<PathBuf>,
    /// A rejection without an error kind fails the run.
    pub require_error_kinds: bool,
    /// Each trial the hello excludes is a libtest trial, printed as ignored.
    pub list_excluded: bool,
    /// The checkout the run reads: its `specs/`, `sweeps/`, `golden/` and catalogues, the
    /// folder its backend starts in.
    pub checkout: Checkout,
    /// How the runner was started, as replay lines spell it: the `runner` binary's own path
    /// when it runs (set by its `main`), else `crate::reports::replay_command::CARGO_RUNNER`.
    pub program: String,
}

impl Config {
    /// The bounds of every tensor of the run: the reference's, the loaders', the wire's, and
    /// (through its environment) the backend's.
    pub fn limits(&self) -> Limits {
        Limits {
            max_elements: self.max_elements,
        }
    }
}

impl Config {
    /// The configuration of the `cargo test` harness without flags: the variables, relative
    /// paths against the repository root.
    pub fn from_env() -> Result<Config, ConfigError> {
        Options::default().resolve(&repository_root())
    }

    /// What answers the run's cases, as its report records it (`run.backend_command`): the
    /// backend's command, `answers <DIR>` for an offline harness's answers, empty for the
    /// reference.
    pub(crate) fn backend_label(&self) -> String {
        match (&self.backend, &self.answers) {
            (Some(command), _) => command.clone(),
            (None, Some(answers)) => format!("answers {}", answers.display()),
            (None, None) => String::new(),
        }
    }

    /// The spec and sweep folders a run reads, for its summary.
    pub(crate) fn folders(&self) -> String {
        let list = |paths: &[PathBuf]| {
            paths
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut text = format!("spec folders: {}\nsweep folders: ", list(&self.specs));
        if self.sweeps.is_empty() {
            text.push_str("none");
            if self.private_specs {
                text.push_str(" (spec folders were given without --sweeps / OPSPEC_SWEEPS)");
            }
        } else {
            text.push_str(&list(&self.sweeps));
            if let Some(golden) = &self.golden {
                let _ = write!(text, " (goldens in {})", golden.display());
            }
        }
        text
    }
}

impl Config {
    /// The flags `runner replay` needs to run a trial as this run did: those whose value is
    /// not the default, with resolved paths; each starts with a space.
    pub(crate) fn replay_flags(&self) -> String {
        use crate::reports::replay_command::shell_quote;
        let default = Options::default()
            .resolve_in(&self.checkout.root, self.checkout.clone(), |_| None)
            .expect("the defaults are valid");
        let joined = |paths: &[PathBuf]| {
            std::env::join_paths(paths)
                .map(|p| p.to_string_lossy().into_owned())
                .unwrap_or_default()
        };
        let mut flags = Vec::new();
        if let Some(backend) = &self.backend {
            flags.push(("--backend", backend.clone()));
        }
        if let Some(answers) = &self.answers {
            flags.push(("--answers", answers.display().to_string()));
        }
        if self.private_specs {
            flags.push(("--specs", joined(&self.specs)));
        }
        if self.sweeps != default.sweeps && !self.sweeps.is_empty() {
            flags.push(("--sweeps", joined(&self.sweeps)));
        }
        if let Some(golden) = &self.golden {
            flags.push(("--golden", golden.display().to_string()));
        }
        if self.timeout != default.timeout {
            flags.push(("--timeout", self.timeout.as_secs_f64().to_string()));
        }
        if self.hello_timeout != default_hello_timeout(self.timeout) {
            flags.push((
                "--hello-timeout",
                self.hello_timeout.as_secs_f64().to_string(),
            ));
        }
        if self.max_elements != default.max_elements {
            flags.push(("--max-elements", self.max_elements.to_string()));
        }
        if self.engine != default.engine {
            flags.push(("--engine", self.engine.to_string()));
        }
        flags
            .iter()
            .map(|(flag, value)| format!(" {flag} {}", shell_quote(value)))
            .collect()
    }
}

impl Options {
    /// Fills every unset flag from its variable and resolves relative paths against `base`.
    pub fn resolve(self, base: &Path) -> Result<Config, ConfigError> {
        self.resolve_with(base, |name| std::env::var_os(name))
    }

    /// [`Options::resolve`] with relative paths against the current folder (the `runner`
    /// binary).
    pub fn resolve_here(self) -> Result<Config, ConfigError> {
        let here = std::env::current_dir().map_err(|e| ConfigError::NoCurrentDir(e.to_string()))?;
        self.resolve(&here)
    }

    /// [`Options::resolve`] with the variables `var` gives, reading the checkout the runner is
    /// started in ([`Checkout::discover`]).
    pub fn resolve_with(
        self,
        base: &Path,
        var: impl Fn(&str) -> Option<OsString>,
    ) -> Result<Config, ConfigError> {
        let checkout = Checkout::discover();
        checkout.warn_if_outside();
        self.resolve_in(base, checkout, var)
    }

    /// [`Options::resolve_with`] reading `checkout`.
    fn resolve_in(
        self,
        base: &Path,
        checkout: Checkout,
        var: impl Fn(&str) -> Option<OsString>,
    ) -> Result<Config, ConfigError> {
        let var = |name: &str| var(name).filter(|v| !v.is_empty());
        let text = |name: &'static str| -> Result<Option<String>, ConfigError> {
            var(name)
                .map(|v| {
                    v.into_string()
                        .map_err(|_| ConfigError::NotUnicode { variable: name })
                })
                .transpose()
        };
        let parsed = |name: &'static str, value: Option<String>, problem: ValueError| {
            ConfigError::Variable {
                variable: name,
                value: value.unwrap_or_default(),
                problem,
            }
        };
        let number = |name: &'static str| -> Result<Option<u64>, ConfigError> {
            text(name)?
                .map(|v| parse_count(&v).map_err(|e| parsed(name, Some(v), e)))
                .transpose()
        };
        let paths = |name: &'static str| -> Result<Option<Vec<PathBuf>>, ConfigError> {
            var(name)
                .map(|v| {
                    split_paths(&v)
                        .map(|list| list.0)
                        .map_err(|e| parsed(name, Some(v.to_string_lossy().into_owned()), e))
                })
                .transpose()
        };
        let path = |name: &'static str| var(name).map(PathBuf::from);
        let absolute = |path: PathBuf| {
            if path.is_absolute() {
                path
            } else {
                base.join(path)
            }
        };
        let all = |paths: Vec<PathBuf>| paths.into_iter().map(absolute).collect::<Vec<_>>();

        let root = checkout.root.clone();
        let specs = match self.specs {
            Some(list) => Some(list.0),
            None => paths("OPSPEC_SPECS")?,
        };
        let private_specs = specs.is_some();
        let sweeps = match self.sweeps {
            Some(list) => all(list.0),
            None => match paths("OPSPEC_SWEEPS")? {
                Some(list) => all(list),
                // Private spec folders are run without the repository's sweeps.
                None if private_specs => Vec::new(),
                None => vec![root.join("sweeps")],
            },
        };
        let timeout = match self.timeout {
            Some(timeout) => timeout,
            None => match text("OPSPEC_TIMEOUT")? {
                Some(v) => parse_timeout(&v).map_err(|e| parsed("OPSPEC_TIMEOUT", Some(v), e))?,
                None => DEFAULT_TIMEOUT,
            },
        };
        let hello_timeout = match self.hello_timeout {
            Some(timeout) => timeout,
            None => match text("OPSPEC_HELLO_TIMEOUT")? {
                Some(v) => {
                    parse_timeout(&v).map_err(|e| parsed("OPSPEC_HELLO_TIMEOUT", Some(v), e))?
                }
                None => default_hello_timeout(timeout),
            },
        };
        let jobs = match self.jobs {
            Some(jobs) => jobs,
            None => match text("OPSPEC_JOBS")? {
                Some(v) => parse_jobs(&v).map_err(|e| parsed("OPSPEC_JOBS", Some(v), e))?,
                None => 1,
            },
        };
        let batch = match self.batch {
            Some(batch) => Some(batch),
            None => match text("OPSPEC_BATCH")? {
                Some(v) => Some(parse_batch(&v).map_err(|e| parsed("OPSPEC_BATCH", Some(v), e))?),
                None => None,
            },
        };
        let bazel = match (text("TEST_SHARD_INDEX")?, text("TEST_TOTAL_SHARDS")?) {
            (Some(index), Some(total)) => {
                Some(Partition::from_bazel(&index, &total).map_err(|_| {
                    parsed(
                        "TEST_SHARD_INDEX",
                        Some(format!("{index} (of TEST_TOTAL_SHARDS={total})")),
                        ValueError::NotAPartition,
                    )
                })?)
            }
            _ => None,
        };
        let partition = match self.partition {
            Some(partition) => Some(partition),
            None => match text("OPSPEC_PARTITION")? {
                Some(v) => {
                    Some(parse_partition(&v).map_err(|e| parsed("OPSPEC_PARTITION", Some(v), e))?)
                }
                None => bazel,
            },
        };
        let bless = self.bless || env_flag(var("OPSPEC_BLESS"));
        if bless && partition.is_some() {
            return Err(ConfigError::Conflict(
                "--bless writes the goldens of every trial: it cannot run on a partition (--partition, OPSPEC_PARTITION or Bazel's sharding)".into(),
            ));
        }
        let backend = match self.backend {
            Some(command) => Some(command),
            None => text("OPSPEC_BACKEND")?,
        };
        let answers = self
            .answers
            .or_else(|| path("OPSPEC_ANSWERS"))
            .map(absolute);
        if let (Some(answers), Some(command)) = (&answers, &backend) {
            return Err(ConfigError::Conflict(format!(
                "the answers of {} (--answers, OPSPEC_ANSWERS or `runner judge`) take the place of a backend: leave out the backend `{command}` (--backend or OPSPEC_BACKEND)",
                answers.display()
            )));
        }
        Ok(Config {
            jobs,
            batch,
            partition,
            shard_status_file: path("TEST_SHARD_STATUS_FILE").map(absolute),
            specs: match specs {
                Some(list) => all(list),
                None => vec![root.join("specs")],
            },
            private_specs,
            sweeps,
            golden: self.golden.or_else(|| path("OPSPEC_GOLDEN")).map(absolute),
            bless,
            allow_skips: self.allow_skips || env_flag(var("OPSPEC_ALLOW_SKIPS")),
            fail_fast: self.fail_fast || env_flag(var("OPSPEC_FAIL_FAST")),
            require_error_kinds: self.require_error_kinds
                || env_flag(var("OPSPEC_REQUIRE_ERROR_KINDS")),
            program: crate::reports::replay_command::CARGO_RUNNER.to_owned(),
            list_excluded: self.list_excluded || env_flag(var("OPSPEC_LIST_EXCLUDED")),
            backend: backend.clone(),
            answers,
            timeout,
            hello_timeout,
            expectations: self
                .expectations
                .or_else(|| path("OPSPEC_EXPECTATIONS"))
                .map(absolute),
            report_files: self.report_files.or_variables(path).absolute(absolute),
            backend_log: self
                .backend_log
                .or_else(|| path("OPSPEC_BACKEND_LOG"))
                .map(absolute)
                .unwrap_or_else(|| {
                    let folder = checkout.log_folder();
                    match backend {
                        // Only a run that starts a backend claims the shared log.
                        Some(_) => default_backend_log(&folder),
                        None => folder.join("opspec-backend.log"),
                    }
                }),
            dump_requests: self
                .dump_requests
                .or_else(|| path("OPSPEC_DUMP_REQUESTS"))
                .map(absolute),
            max_elements: match self.max_elements {
                Some(n) => check_budget(n, machine_memory()).map_err(|e| ConfigError::Flag {
                    flag: "--max-elements",
                    value: n.to_string(),
                    problem: e,
                })?,
                None => match number("OPSPEC_MAX_ELEMENTS")? {
                    Some(n) => check_budget(n, machine_memory())
                        .map_err(|e| parsed("OPSPEC_MAX_ELEMENTS", Some(n.to_string()), e))?,
                    None => Limits::DEFAULT.max_elements,
                },
            },
            engine: match self.engine {
                Some(engine) => engine,
                None => match text("OPSPEC_ENGINE")? {
                    Some(v) => parse_engine(&v).map_err(|e| parsed("OPSPEC_ENGINE", Some(v), e))?,
                    None => Engine::default(),
                },
            },
            checkout,
        })
    }
}

/// The default backend log, `<target>/opspec-backend.log`, unless another run that is still
/// going uses it: then `opspec-backend.<pid>.log`, so that concurrent runs never write one log.
/// The run using the default log says so in `opspec-backend.log.pid`.
pub(crate) fn default_backend_log(target: &Path) -> PathBuf {
    let shared = target.join("opspec-backend.log");
    let owner = target.join("opspec-backend.log.pid");
    let me = std::process::id();
    let alive = |pid: u32| pid == me || Path::new(&format!("/proc/{pid}")).exists();
    let held = std::fs::read_to_string(&owner)
        .ok()
        .and_then(|text| text.trim().parse::<u32>().ok())
        .is_some_and(|pid| pid != me && alive(pid));
    if held {
        return target.join(format!("opspec-backend.{me}.log"));
    }
    if std::fs::create_dir_all(target).is_ok() {
        let _ = std::fs::write(&owner, me.to_string());
    }
    shared
}

impl Config {
    /// The reference of the run: its engine, within the run's limits.
    pub(crate) fn reference(&self) -> crate::backend::interface::Reference {
        crate::backend::interface::Reference {
            engine: self.engine,
            limits: self.limits(),
        }
    }

    /// The report files the run writes ([`report::FORMATS`]): each one's flag, path and
    /// writer.
    pub(crate) fn report_files(&self) -> impl Iterator<Item = (&'static str, &Path, Writer)> {
        report::FORMATS.iter().filter_map(|format| {
            let path = self.report_files.0.get(format.flag)?;
            Some((format.flag, path.as_path(), format.write))
        })
    }

    /// `Err` when an output of the run (`--report-json`, `--junit`, `--backend-log`,
    /// `--dump-requests`, libtest's `--logfile`) names a file the run reads or another output
    /// ([`crate::reports::output::check_outputs`]); checked before anything runs.
    pub(crate) fn check_outputs(&self, logfile: Option<&Path>) -> Result<(), String> {
        let mut outputs: Vec<(&str, &Path)> = (self.report_files())
            .map(|(flag, path, _)| (flag, path))
            .collect();
        if self.backend.is_some() {
            outputs.push(("--backend-log", &self.backend_log));
        }
        if let Some(path) = &self.dump_requests {
            outputs.push(("--dump-requests", path));
        }
        if let Some(path) = logfile {
            outputs.push(("--logfile", path));
        }
        let mut inputs = crate::reports::output::Inputs::default();
        if let Some(path) = &self.expectations {
            inputs.files.push(("--expectations", path));
        }
        for folder in &self.specs {
            inputs.folders.push(("--specs", folder));
        }
        for folder in &self.sweeps {
            inputs.folders.push(("--sweeps", folder));
        }
        if let Some(folder) = &self.golden {
            inputs.folders.push(("--golden", folder));
        }
        crate::reports::output::check_outputs(&outputs, &inputs)
    }
}

/// `Err` for libtest options a run cannot honour: `--test-threads 0` (no thread would run a
/// trial) and a `--logfile` that names no file or a file in a folder that does not exist.
pub(crate) fn check_arguments(
    test_threads: Option<usize>,
    logfile: Option<&str>,
) -> Result<(), String> {
    if test_threads == Some(0) {
        return Err(
            "--test-threads 0 runs no trial: give 1 or more (or leave it out for one per core)"
                .into(),
        );
    }
    if let Some(logfile) = logfile {
        if logfile.trim().is_empty() {
            return Err("--logfile names no file: give a path, or leave it out".into());
        }
        let path = Path::new(logfile);
        let folder = match path.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent,
            _ => Path::new("."),
        };
        if !folder.is_dir() {
            return Err(format!(
                "--logfile {logfile}: the folder {} does not exist; create it first",
                folder.display()
            ));
        }
    }
    Ok(())
}

/// Whether a variable's value is set to something other than `0` or `false`.
pub(crate) fn env_flag(value: Option<OsString>) -> bool {
    value.is_some_and(|v| {
        let v = v.to_string_lossy().trim().to_ascii_lowercase();
        !v.is_empty() && v != "0" && v != "false"
    })
}

/// The trial an exact filter names (`--exact NAME`, as cargo nextest runs each trial), without
/// the kind libtest shows before a name (`[case] slice::f::c`, as `--list` prints it).
pub(crate) fn exact_trial(args: &libtest_mimic::Arguments) -> Option<&str> {
    match (&args.filter, args.exact) {
        (Some(name), true) => Some(
            (name.strip_prefix('['))
                .and_then(|rest| rest.split_once("] "))
                .map_or(name.as_str(), |(_, name)| name),
        ),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The checkout a configuration reads is its own, not the process's: its folders, the
    /// backend's folder and the log's all follow it.
    #[test]
    fn the_checkout_read_is_the_configurations() {
        let scratch = tempfile::tempdir().unwrap();
        let checkout = Checkout {
            root: scratch.path().to_path_buf(),
            found: true,
        };
        let config = Options::default()
            .resolve_in(scratch.path(), checkout.clone(), |_| None)
            .unwrap();
        assert_eq!(config.checkout, checkout);
        assert_eq!(config.specs, [scratch.path().join("specs")]);
        assert_eq!(config.sweeps, [scratch.path().join("sweeps")]);
        assert_eq!(config.checkout.backend_dir(), scratch.path());
        assert_eq!(
            config.backend_log,
            scratch.path().join("target").join("opspec-backend.log")
        );
        let outside = Checkout {
            found: false,
            ..checkout
        };
        assert_eq!(
            outside.log_folder(),
            crate::backend::checkout::outside_log_folder()
        );
    }

    #[test]
    fn timeouts() {
        assert_eq!(parse_timeout(" 2.5 "), Ok(Duration::from_millis(2500)));
        for bad in ["inf", "NaN", "1e300", "0", "-1", "1e-9", "86401"] {
            assert_eq!(
                parse_timeout(bad),
                Err(ValueError::TimeoutOutOfRange),
                "{bad}"
            );
        }
        assert_eq!(parse_timeout("ten"), Err(ValueError::NotSeconds));
    }

    #[test]
    fn counts() {
        assert_eq!(parse_count("268435456"), Ok(1 << 28));
        for bad in ["abc", "1e9", "-5", "+5", "0", "", "99999999999999999999999"] {
            assert_eq!(parse_count(bad), Err(ValueError::NotACount), "{bad}");
        }
    }

    #[test]
    fn flags_override_variables_and_paths_resolve_against_the_base() {
        let env = |name: &str| match name {
            "OPSPEC_SPECS" => Some(OsString::from("mine:/abs/theirs")),
            "OPSPEC_TIMEOUT" => Some(OsString::from("inf")),
            "OPSPEC_GOLDEN" => Some(OsString::new()),
            _ => None,
        };
        let base = Path::new("/base");
        let error = Options::default().resolve_with(base, env).unwrap_err();
        assert!(error.to_string().contains("OPSPEC_TIMEOUT"), "{error}");
        let options = Options {
            timeout: Some(Duration::from_secs(1)),
            ..Options::default()
        };
        let config = options.resolve_with(base, env).unwrap();
        assert_eq!(
            config.specs,
            [PathBuf::from("/base/mine"), PathBuf::from("/abs/theirs")]
        );
        assert!(config.sweeps.is_empty() && config.golden.is_none());
        assert_eq!(config.timeout, Duration::from_secs(1));
        assert!(!config.bless && !config.allow_skips);
        let switches = |name: &str| match name {
            "OPSPEC_BLESS" => Some(OsString::from("0")),
            "OPSPEC_ALLOW_SKIPS" => Some(OsString::from("1")),
            "OPSPEC_FAIL_FAST" => Some(OsString::from("true")),
            _ => None,
        };
        let config = Options::default().resolve_with(base, switches).unwrap();
        assert!(!config.bless && config.allow_skips && config.fail_fast);
        let options = Options {
            bless: true,
            ..Options::default()
        };
        assert!(options.resolve_with(base, |_| None).unwrap().bless);
    }

    /// Each report format of `report::FORMATS` is a flag of the run, in its help with its
    /// variable, and its variable names the file when the flag is not given; the flag wins.
    #[test]
    fn every_report_format_has_its_flag_and_variable() {
        #[derive(clap::Parser)]
        struct Cli {
            #[command(flatten)]
            options: Options,
        }
        let help = <Cli as clap::CommandFactory>::command()
            .render_long_help()
            .to_string();
        let base = Path::new("/base");
        for format in &report::FORMATS {
            assert!(
                help.contains(&format!("{} <FILE>", format.flag))
                    && help.contains(&format!("[env: {}]", format.variable)),
                "{} is not in the help:\n{help}",
                format.flag
            );
            let cli = <Cli as clap::Parser>::try_parse_from(["runner", format.flag, "given"]);
            let config = cli.unwrap().options.resolve_with(base, |_| None).unwrap();
            let files: Vec<_> = config.report_files().map(|(f, p, _)| (f, p)).collect();
            assert_eq!(files, [(format.flag, Path::new("/base/given"))]);
            let variable = |name: &str| (name == format.variable).then(|| "named".into());
            let config = Options::default().resolve_with(base, variable).unwrap();
            let files: Vec<_> = config.report_files().map(|(f, p, _)| (f, p)).collect();
            assert_eq!(files, [(format.flag, Path::new("/base/named"))]);
            let cli = <Cli as clap::Parser>::try_parse_from(["runner", format.flag, "given"]);
            let config = cli.unwrap().options.resolve_with(base, variable).unwrap();
            assert_eq!(
                config.report_files().map(|(_, p, _)| p).collect::<Vec<_>>(),
                [Path::new("/base/given")]
            );
        }
    }

    #[test]
    fn a_budget_the_memory_cannot_hold_is_refused_with_the_bound() {
        let memory = Some(24 << 30);
        assert_eq!(check_budget(1 << 28, memory), Ok(1 << 28));
        let error = check_budget(4_294_967_296, memory).unwrap_err();
        let bound = (24u64 << 30) / 24;
        assert_eq!(
            error,
            ValueError::BudgetOverMemory {
                bound,
                memory: 24 << 30
            }
        );
        assert!(error.to_string().contains(&bound.to_string()), "{error}");
        let options = Options {
            max_elements: Some(u64::MAX),
            ..Options::default()
        };
        let error = options
            .resolve_with(Path::new("/base"), |_| None)
            .unwrap_err();
        assert!(error.to_string().contains("--max-elements"), "{error}");
        let huge = |name: &str| {
            (name == "OPSPEC_MAX_ELEMENTS").then(|| OsString::from("18446744073709551615"))
        };
        let error = Options::default()
            .resolve_with(Path::new("/base"), huge)
            .unwrap_err();
        assert!(error.to_string().contains("OPSPEC_MAX_ELEMENTS"), "{error}");
    }

    #[test]
    fn test_threads_0_and_unusable_logfiles_are_refused() {
        assert!(check_arguments(None, None).is_ok());
        assert!(check_arguments(Some(1), Some("run.log")).is_ok());
        assert!(check_arguments(Some(0), None)
            .unwrap_err()
            .contains("--test-threads 0"));
        assert!(check_arguments(None, Some(""))
            .unwrap_err()
            .contains("names no file"));
        let error = check_arguments(None, Some("/no/such/folder/run.log")).unwrap_err();
        assert!(error.contains("/no/such/folder"), "{error}");
    }

    #[test]
    fn outputs_may_not_name_inputs() {
        let scratch = tempfile::tempdir().unwrap();
        let known = scratch.path().join("k.txt");
        let options = Options {
            expectations: Some(known.clone()),
            report_files: ReportFiles::default().with("--report-json", known.clone()),
            ..Options::default()
        };
        let config = options.resolve_with(scratch.path(), |_| None).unwrap();
        let error = config.check_outputs(None).unwrap_err();
        assert!(
            error.contains("--report-json") && error.contains("--expectations"),
            "{error}"
        );
        let options = Options {
            specs: Some(PathList(vec![scratch.path().join("specs")])),
            report_files: ReportFiles::default().with(
                "--report-json",
                scratch.path().join("specs/shuffle/basic.yaml"),
            ),
            ..Options::default()
        };
        let config = options.resolve_with(scratch.path(), |_| None).unwrap();
        assert!(config.check_outputs(None).unwrap_err().contains("--specs"));
        let config = Options::default()
            .resolve_with(scratch.path(), |_| None)
            .unwrap();
        let logfile = scratch.path().join("k.txt");
        assert!(config.check_outputs(Some(&logfile)).is_ok());
    }

    #[test]
    fn concurrent_runs_get_their_own_default_backend_log() {
        let scratch = tempfile::tempdir().unwrap();
        let target = scratch.path();
        assert_eq!(
            default_backend_log(target),
            target.join("opspec-backend.log")
        );
        // Held by a run that is still going (pid 1 is always alive): another file.
        std::fs::write(target.join("opspec-backend.log.pid"), "1").unwrap();
        let own = default_backend_log(target);
        assert_eq!(
            own,
            target.join(format!("opspec-backend.{}.log", std::process::id()))
        );
        // Held by a run that ended: taken over.
        std::fs::write(target.join("opspec-backend.log.pid"), "4294967295").unwrap();
        assert_eq!(
            default_backend_log(target),
            target.join("opspec-backend.log")
        );
    }

    #[test]
    fn jobs_and_partitions_by_flag_variable_or_bazel() {
        let base = Path::new("/base");
        let config = Options::default().resolve_with(base, |_| None).unwrap();
        assert_eq!((config.jobs, config.partition), (1, None));
        let env = |pairs: &[(&str, &str)]| {
            let pairs: Vec<(String, String)> = pairs
                .iter()
                .map(|(n, v)| (n.to_string(), v.to_string()))
                .collect();
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| n == name)
                    .map(|(_, v)| OsString::from(v))
            }
        };
        let config = Options::default()
            .resolve_with(
                base,
                env(&[("OPSPEC_JOBS", "4"), ("OPSPEC_PARTITION", "2/3")]),
            )
            .unwrap();
        assert_eq!(config.jobs, 4);
        assert_eq!(config.partition, Some(Partition { index: 2, total: 3 }));
        let bazel = env(&[
            ("TEST_TOTAL_SHARDS", "5"),
            ("TEST_SHARD_INDEX", "0"),
            ("TEST_SHARD_STATUS_FILE", "shard"),
        ]);
        let config = Options::default()
            .resolve_with(base, bazel.clone())
            .unwrap();
        assert_eq!(config.partition, Some(Partition { index: 1, total: 5 }));
        assert_eq!(config.shard_status_file, Some(PathBuf::from("/base/shard")));
        // The flag wins over Bazel's variables.
        let options = Options {
            partition: Some(Partition { index: 3, total: 4 }),
            ..Options::default()
        };
        let config = options.resolve_with(base, bazel.clone()).unwrap();
        assert_eq!(config.partition, Some(Partition { index: 3, total: 4 }));
        for (variable, value) in [
            ("OPSPEC_JOBS", "0"),
            ("OPSPEC_JOBS", "257"),
            ("OPSPEC_PARTITION", "0/3"),
        ] {
            let error = Options::default()
                .resolve_with(base, env(&[(variable, value)]))
                .unwrap_err();
            assert!(error.to_string().contains(variable), "{error}");
        }
        let bad_shard = env(&[("TEST_TOTAL_SHARDS", "2"), ("TEST_SHARD_INDEX", "2")]);
        let error = Options::default()
            .resolve_with(base, bad_shard)
            .unwrap_err();
        assert!(error.to_string().contains("TEST_SHARD_INDEX"), "{error}");
        let options = Options {
            bless: true,
            ..Options::default()
        };
        let error = options.resolve_with(base, bazel).unwrap_err();
        assert!(matches!(error, ConfigError::Conflict(_)), "{error}");
    }

    #[test]
    fn the_engine_by_flag_or_variable() {
        let base = Path::new("/base");
        let plain = |name: &str| (name == "OPSPEC_ENGINE").then(|| OsString::from("plain"));
        let config = Options::default().resolve_with(base, |_| None).unwrap();
        assert_eq!(config.engine, Engine::Fast);
        let config = Options::default().resolve_with(base, plain).unwrap();
        assert_eq!(config.engine, Engine::Plain);
        assert!(config.replay_flags().contains("--engine plain"));
        let options = Options {
            engine: Some(Engine::Fast),
            ..Options::default()
        };
        assert_eq!(
            options.resolve_with(base, plain).unwrap().engine,
            Engine::Fast
        );
        let typo = |name: &str| (name == "OPSPEC_ENGINE").then(|| OsString::from("plian"));
        let error = Options::default().resolve_with(base, typo).unwrap_err();
        assert_eq!(
            error.to_string(),
            "invalid value \"plian\" for OPSPEC_ENGINE: not an engine: expected `plain` or `fast`"
        );
    }
}
