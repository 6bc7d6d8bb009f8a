//! An external backend: a pool of processes of one command, each speaking the JSON Lines
//! protocol (docs/protocol.md) through `crate::backend::child`: this module is the protocol's side,
//! the replies and what they mean, and the pool; what a hello declares is
//! `crate::backend::hello`.
//!
//! `--jobs N` starts N copies of the command (no more than there are cases to send); each
//! answers its own hello, within the hello's own deadline (`--hello-timeout`; every copy must
//! declare the same capabilities) and gets one case at a time, handed out as copies free up. A
//! copy that fails its first hello (exits, or answers too late) is stopped and started again
//! when a case needs it, as a copy that crashes; the run stops only when no copy starts.
//! One copy is a worker: a worker that exits, closes its output, stops reading its input, does
//! not answer within the timeout, answers with a line longer than the case's limit
//! (`reply_line_limit`) or answers out of step (bad JSON, another case's id) fails that case;
//! it is then stopped and started again for its next case, so one bad case never hides the
//! others, and the other workers go on meanwhile. After [`MAX_FAILED_STARTS`] failed starts in
//! a row a worker is not started again; once no worker is left the remaining cases are not run.
//!
//! A reply is blamed on the case it answers: a second reply to a case, read with the first or
//! before the next request, or arriving while the worker works on the next case, fails that
//! case, not the next one (which is sent again to a fresh start). A second reply that comes
//! after the case was judged is a late fault ([`Backend::finish`]): the run fails that trial.
//!
//! With more than one worker, each stderr line in the backend log is prefixed `[worker K] `.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use opspec::tensor::Limits;
use opspec::{DType, ErrorKind};
use opspec_spec::bytes::byte_len;
use opspec_spec::{Case, Expectation};

use crate::backend::child::{Log, Session, Trouble};
pub use crate::backend::child::{BACKEND_LOG_LIMIT, MIN_REPLY_LINE_LIMIT};
use crate::backend::dump::RequestDump;
use crate::backend::facts::Facts;
use crate::backend::hello::{Capabilities, HelloRefusal};
use crate::backend::interface::{
    Backend, BackendError, BuiltOutput, Exclusion, LateFault, Outcome,
};
use crate::backend::protocol::{
    batch_request, hello_request, reply_id, run_request, Reply, MAX_BATCH, PROTOCOL_VERSION,
};

/// Failed starts of a worker in a row (hello not answered, answered wrongly, or the process
/// gone) after which it is not started again.
pub const MAX_FAILED_STARTS: u32 = 3;

/// The longest reply line the runner reads for `case`: twice the base64 size of the outputs
/// the case expects, and at least [`MIN_REPLY_LINE_LIMIT`]. A correct reply is about the size
/// of the expected outputs in base64, so the limit never fails a right answer, and the memory
/// a reply takes is bounded by the case itself. Cases whose expected outputs are not known
/// (errors, round trips) get the minimum.
pub(crate) fn reply_line_limit(case: &Case) -> usize {
    let expected: usize = match &case.expect {
        Expectation::Outputs(outputs) => outputs
            .iter()
            .map(|t| byte_len(t.dtype, t.shape.iter().product()))
            .sum(),
        Expectation::Error { .. } => 0,
    };
    MIN_REPLY_LINE_LIMIT.max(expected.div_ceil(3).saturating_mul(8))
}

/// The deadlines of a backend process: of its hello, and of each case.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Timeouts {
    /// Writing a case's request and reading its reply.
    pub(crate) case: Duration,
    /// Starting the process and reading its hello: an engine may load for longer than a
    /// case takes (`--hello-timeout`).
    pub(crate) hello: Duration,
}

/// A backend run as a pool of processes (one by default).
pub struct ProcessBackend {
    command: String,
    /// The folder each process starts in: relative paths in the command are relative to it.
    dir: PathBuf,
    timeout: Duration,
    hello_timeout: Duration,
    /// The run's bounds of every tensor: the outputs read stay within them, and the backend
    /// gets them in its environment (`OPSPEC_MAX_ELEMENTS`).
    limits: Limits,
    log: Arc<Mutex<Log>>,
    capabilities: Capabilities,
    workers: Vec<Mutex<Worker>>,
    pool: Mutex<Pool>,
    /// Signalled when a worker is free again or given up, or the run is halted.
    freed: Condvar,
    /// Set by [`Backend::halt`]: no case is sent any more, and exchanges in flight end.
    halted: AtomicBool,
    /// Faults found after their trial was judged ([`Backend::finish`]).
    late: Mutex<Vec<LateFault>>,
    /// The most cases sent in one request: the hello's `batch`, capped by `--batch`.
    batch: usize,
    /// The run's batches, once the run said which cases it sends ([`Backend::plan`]).
    batches: OnceLock<Batches>,
    /// Where every request is also written (`--dump-requests`), batches as batches.
    dump: Option<Arc<RequestDump>>,
}

/// A case's answer with the composed paths its reply names, or why there is none.
type Answer = Result<(Outcome, Vec<String>), BackendError>;

/// How a pool is started besides its command, deadlines and log.
#[derive(Clone, Default)]
pub(crate) struct PoolOptions {
    /// Copies of the backend (at least one).
    pub(crate) jobs: usize,
    /// The run's bounds of every tensor.
    pub(crate) limits: Limits,
    /// The folder each process starts in.
    pub(crate) dir: PathBuf,
    /// `--batch`: the most cases one request holds, whatever the hello declares.
    pub(crate) batch_cap: Option<usize>,
    /// `--dump-requests`: every request line is also written there.
    pub(crate) dump: Option<Arc<RequestDump>>,
}

/// The batches of a run (docs/protocol.md, "Batches"): the cases the run sends, in the order
/// it sends them, cut into runs of at most the batch size. Nothing but that order decides a
/// case's batch. The first trial of a batch to run sends it; the others take their answers.
struct Batches {
    /// The batch of each case, by its id.
    of: HashMap<String, usize>,
    state: Mutex<Vec<BatchState>>,
    /// Signalled when a batch has its answers.
    answered: Condvar,
}

/// Where a batch is.
enum BatchState {
    /// Not sent yet: its cases.
    Waiting(Vec<Case>),
    /// A trial is sending it.
    Sending,
    /// Sent: the answers its trials have not taken yet.
    Answered(HashMap<String, Answer>),
}

/// Puts a batch's answers in place however its sending ends: a panic leaves it answered with
/// nothing, so that its other trials send their cases alone instead of waiting for ever.
struct Sending<'a> {
    batches: &'a Batches,
    index: usize,
    answers: HashMap<String, Answer>,
}

impl Drop for Sending<'_> {
    fn drop(&mut self) {
        let mut state = (self.batches.state.lock()).unwrap_or_else(|p| p.into_inner());
        state[self.index] = BatchState::Answered(std::mem::take(&mut self.answers));
        self.batches.answered.notify_all();
    }
}
/// A worker's process could not be (re)started: the error of the case that needed it, and,
/// when the worker is given up for good, why.
struct RestartFailure {
    error: BackendError,
    given_up: Option<String>,
}

/// One copy of the backend: its running session, if any, and the record of its starts.
struct Worker {
    /// What its stderr lines get in front of them in the log, when there are several workers.
    prefix: Option<String>,
    session: Option<Session>,
    failed_starts: u32,
    /// The cases the session answered last (one request's): a later reply carrying one of
    /// their ids is blamed on that case.
    answered: Vec<String>,
}

/// Which workers are free, and how many are still started when needed.
struct Pool {
    /// Free workers, the next one last.
    idle: Vec<usize>,
    /// Workers not given up.
    live: usize,
    /// Why the last worker given up was.
    given_up: Option<String>,
    /// Per worker: cases waiting for that worker in particular ([`ProcessBackend::acquire`]).
    awaited: Vec<usize>,
    /// Per worker: given up for good.
    gone: Vec<bool>,
}

impl Pool {
    /// Takes a free worker for a case that prefers `preferred`: that one when it is free, else
    /// one that no waiting case prefers (any, when `preferred` is given up or `avoid`ed).
    /// Workers in `avoid` (they could not start for this case) are not taken.
    fn take(&mut self, preferred: usize, avoid: &[usize]) -> Option<usize> {
        let any = self.gone[preferred] || avoid.contains(&preferred);
        let at = (self.idle.iter().position(|&w| w == preferred && !any)).or_else(|| {
            (self.idle.iter()).rposition(|&w| !avoid.contains(&w) && (any || self.awaited[w] == 0))
        })?;
        Some(self.idle.remove(at))
    }
}

/// The worker a case goes to when it is free: the same for every case of the same op and input
/// dtypes and shapes, so that an engine that compiles a program per shape (XLA, a TensorRT
/// builder) compiles it once per run rather than once per copy.
pub(crate) fn preferred_worker(case: &Case, jobs: usize) -> usize {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    case.op.name().hash(&mut hasher);
    for input in &case.invocation.inputs {
        input
            .as_ref()
            .map(|t| (t.dtype.name(), &t.shape))
            .hash(&mut hasher);
    }
    (hasher.finish() % jobs.max(1) as u64) as usize
}

/// Why a backend process could not be started; the message names the command.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StartError {
    /// The backend log cannot be opened.
    #[error("{0}")]
    Log(String),
    /// The process cannot be spawned.
    #[error("{0}")]
    Spawn(String),
    /// It did not answer the hello, or answered something else.
    #[error("{0}")]
    Handshake(String),
    /// It speaks another protocol version.
    #[error("backend speaks protocol {backend}, the runner {runner}")]
    Protocol { backend: u64, runner: u64 },
    /// Its hello declares an op, dtype, target or attribute value the runner does not know.
    #[error("{0}")]
    Hello(String),
}

/// How a reply line fails to be an answer to the case it was read for.
pub(crate) struct Misreply {
    pub(crate) message: String,
    /// The stream is out of step: the process must be restarted.
    out_of_step: bool,
    /// The id the reply carries, when it carries another case's.
    id: Option<String>,
}

impl Misreply {
    fn in_step(message: String) -> Misreply {
        Misreply {
            message,
            out_of_step: false,
            id: None,
        }
    }
}

impl ProcessBackend {
    /// Starts one process of the backend and reads its hello, both within `timeout`. The log
    /// file is emptied first: it holds this run's stderr only.
    pub fn start(
        command: &str,
        timeout: Duration,
        log: PathBuf,
    ) -> Result<ProcessBackend, StartError> {
        let timeouts = Timeouts {
            case: timeout,
            hello: timeout,
        };
        let options = PoolOptions {
            jobs: 1,
            limits: Limits::DEFAULT,
            dir: crate::backend::checkout::Checkout::discover().backend_dir(),
            ..PoolOptions::default()
        };
        Self::start_pool(command, timeouts, log, options)
    }

    /// Starts `jobs` processes of the backend at once (at least one),
    /// each answering its own hello; they must all declare the same capabilities. A copy that
    /// fails its hello is started again when a case needs it; `Err` when none answers, or a
    /// hello is wrong in what it says. `limits` bound the tensors of the run (the backend's
    /// environment says them).
    pub(crate) fn start_pool(
        command: &str,
        timeouts: Timeouts,
        log: PathBuf,
        options: PoolOptions,
    ) -> Result<ProcessBackend, StartError> {
        let PoolOptions {
            jobs,
            limits,
            dir,
            batch_cap,
            dump,
        } = options;
        let Timeouts {
            case: timeout,
            hello: hello_timeout,
        } = timeouts;
        let jobs = jobs.max(1);
        let log = Arc::new(Mutex::new(Log::create(&log).map_err(StartError::Log)?));
        let prefixes: Vec<Option<String>> = (1..=jobs)
            .map(|k| (jobs > 1).then(|| format!("[worker {k}] ")))
            .collect();
        let started: Vec<Result<(Session, Capabilities), StartError>> = if jobs == 1 {
            vec![Self::handshake(
                command,
                &dir,
                hello_timeout,
                &log,
                None,
                limits,
            )]
        } else {
            std::thread::scope(|scope| {
                let handles: Vec<_> = prefixes
                    .iter()
                    .map(|prefix| {
                        let (log, dir) = (&log, &dir);
                        scope.spawn(move || {
                            Self::handshake(
                                command,
                                dir,
                                hello_timeout,
                                log,
                                prefix.clone(),
                                limits,
                            )
                        })
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                    .collect()
            })
        };
        let mut sessions = Vec::with_capacity(jobs);
        let mut capabilities: Option<Capabilities> = None;
        let mut first_failure = None;
        for (k, result) in started.into_iter().enumerate() {
            // On an error the sessions started so far are dropped, which stops them.
            let (session, declared) = match result {
                Ok(started) => started,
                // A copy that did not answer (its session is stopped) is started again when
                // a case needs it. A hello that says something wrong is wrong for every copy.
                Err(e @ (StartError::Spawn(_) | StartError::Handshake(_))) if jobs > 1 => {
                    eprintln!(
                        "warning: copy {} of {jobs} failed its hello; it is started again when a case needs it: {e}",
                        k + 1
                    );
                    first_failure.get_or_insert(e);
                    sessions.push(None);
                    continue;
                }
                Err(e) => return Err(e),
            };
            match &capabilities {
                None => capabilities = Some(declared),
                Some(first) if *first != declared => {
                    return Err(StartError::Handshake(format!(
                        "copy {} of backend `{command}` declared other capabilities in its hello than copy 1: every copy must declare the same",
                        k + 1
                    )))
                }
                Some(_) => {}
            }
            sessions.push(Some(session));
        }
        let Some(capabilities) = capabilities else {
            return Err(first_failure.expect("a copy failed when none answered"));
        };
        let workers = sessions
            .into_iter()
            .zip(prefixes)
            .map(|(session, prefix)| {
                Mutex::new(Worker {
                    prefix,
                    failed_starts: u32::from(session.is_none()),
                    session,
                    answered: Vec::new(),
                })
            })
            .collect();
        let batch = capabilities
            .batch
            .min(batch_cap.unwrap_or(MAX_BATCH))
            .max(1);
        Ok(ProcessBackend {
            batch,
            batches: OnceLock::new(),
            dump,
            command: command.to_owned(),
            dir,
            timeout,
            hello_timeout,
            limits,
            log,
            capabilities,
            workers,
            pool: Mutex::new(Pool {
                idle: (0..jobs).rev().collect(),
                live: jobs,
                given_up: None,
                awaited: vec![0; jobs],
                gone: vec![false; jobs],
            }),
            freed: Condvar::new(),
            halted: AtomicBool::new(false),
            late: Mutex::default(),
        })
    }

    fn handshake(
        command: &str,
        dir: &Path,
        timeout: Duration,
        log: &Arc<Mutex<Log>>,
        prefix: Option<String>,
        limits: Limits,
    ) -> Result<(Session, Capabilities), StartError> {
        // Relative paths in the command are relative to the checkout the run reads, wherever
        // cargo runs the test binary from; outside any checkout, to the current folder.
        // The budget a backend process checks tensors against, when it is not the default.
        let environment: Vec<(&str, String)> = (limits != Limits::DEFAULT)
            .then(|| ("OPSPEC_MAX_ELEMENTS", limits.max_elements.to_string()))
            .into_iter()
            .collect();
        let mut session =
            Session::start(command, dir, &environment, log, prefix).map_err(StartError::Spawn)?;
        let reply = session
            // Not cut short by a halt (`--fail-fast`), only by a signal that stops the runner.
            .exchange(
                &hello_request(),
                timeout,
                MIN_REPLY_LINE_LIMIT,
                &crate::backend::interrupt::REQUESTED,
            )
            .map_err(|trouble| {
                StartError::Handshake(format!(
                    "backend `{command}` failed the handshake: {}",
                    session.fail(trouble)
                ))
            })?;
        if let Some(extra) = session.leftover() {
            return Err(StartError::Handshake(session.fail_with(format!(
                "backend `{command}` wrote more than its hello to stdout: {extra:.200}"
            ))));
        }
        let refusal = match serde_json::from_str::<Reply>(&reply).map(Capabilities::from_reply) {
            Ok(Ok(capabilities)) => return Ok((session, capabilities)),
            Ok(Err(refusal)) => refusal,
            Err(_) => HelloRefusal::NotHello,
        };
        match refusal {
            HelloRefusal::Protocol(protocol) => {
                session.kill();
                Err(StartError::Protocol {
                    backend: protocol,
                    runner: PROTOCOL_VERSION,
                })
            }
            HelloRefusal::Declares(what) => {
                session.kill();
                Err(StartError::Hello(format!(
                    "the hello of backend `{command}` {what}"
                )))
            }
            HelloRefusal::NotHello => Err(StartError::Handshake(session.fail_with(format!(
                "backend `{command}` answered the hello with {}: {reply:.200?}",
                crate::backend::hello::bad_hello(&reply)
            )))),
        }
    }

    /// Turns a reply line into an outcome, or says why it is none.
    pub(crate) fn interpret(
        id: &str,
        line: &str,
        build_only: bool,
        limits: Limits,
        catalogue: &BTreeMap<String, String>,
    ) -> Result<(Outcome, Vec<String>), Misreply> {
        let reply: Reply = serde_json::from_str(line).map_err(|e| Misreply {
            message: format!("the backend's reply is not a valid message ({e}): {line:.200}"),
            out_of_step: true,
            id: None,
        })?;
        if reply.id() != Some(id) {
            let answered = match reply.id() {
                Some(other) => format!("answered case {other:?}"),
                None => "answered with a message that names no case".to_owned(),
            };
            return Err(Misreply {
                message: format!("the backend {answered} to case {id:?}: {line:.200}"),
                out_of_step: true,
                id: reply.id().map(str::to_owned),
            });
        }
        let composed = match &reply {
            Reply::Ok { composed, .. } | Reply::Built { composed, .. } => composed.clone(),
            _ => Vec::new(),
        };
        if let Some(unknown) = composed.iter().find(|key| !catalogue.contains_key(*key)) {
            return Err(Misreply::in_step(format!(
                "the backend's reply names the composed path {unknown:?}, which the `composed` of its hello does not list (it lists {:?})",
                catalogue.keys().collect::<Vec<_>>()
            )));
        }
        let outcome = match reply {
            Reply::Ok { outputs, .. } => {
                let mut tensors = Vec::with_capacity(outputs.len());
                for (position, output) in outputs.iter().enumerate() {
                    tensors.push(
                        output
                            .decode(limits)
                            .map_err(|e| Misreply::in_step(format!("output {position}: {e}")))?,
                    );
                }
                Outcome::Outputs(tensors)
            }
            // Only a backend that declared it may answer without values: a `built` answer
            // from any other would otherwise be judged on shapes alone.
            Reply::Built { .. } if !build_only => {
                return Err(Misreply {
                    message: format!(
                        "the backend answered `built` to case {id:?}, but its hello does not declare `build_only`: {line:.200}"
                    ),
                    out_of_step: true,
                    id: None,
                })
            }
            Reply::Built { outputs, .. } => {
                let mut built = Vec::with_capacity(outputs.len());
                for (position, output) in outputs.into_iter().enumerate() {
                    let dtype = DType::from_name(&output.dtype).ok_or_else(|| {
                        Misreply::in_step(format!(
                            "output {position}: unknown dtype {:?}",
                            output.dtype
                        ))
                    })?;
                    built.push(BuiltOutput {
                        dtype,
                        shape: output.shape,
                        format: output.format,
                    });
                }
                Outcome::Built(built)
            }
            Reply::Error { kind, message, .. } => Outcome::Rejected {
                kind: match kind {
                    None => None,
                    Some(name) => Some(ErrorKind::from_name(&name).ok_or_else(|| {
                        Misreply::in_step(format!(
                            "the backend reported an unknown error kind {name:?}: {}",
                            message.as_deref().unwrap_or("")
                        ))
                    })?),
                },
                message: message.unwrap_or_default(),
            },
            Reply::Unsupported { reason, .. } => {
                Outcome::Unsupported(reason.unwrap_or_else(|| "unsupported by the backend".into()))
            }
            Reply::Hello { .. } => unreachable!("a hello has no id"),
        };
        Ok((outcome, composed))
    }

    /// A free worker, waiting for one; `NotRun` when none is left or the run was halted.
    ///
    /// The `preferred` worker when it is free; otherwise a free worker that no waiting case
    /// prefers. So no worker stays idle while a case waits, and cases of one shape mostly meet
    /// the copy that has already compiled it.
    ///
    /// `avoid` lists the workers that could not start for this case: it is taken by another
    /// one. When every worker left is in it, it is emptied: those are tried again (each
    /// failed start counts towards [`MAX_FAILED_STARTS`], so this ends).
    fn acquire(&self, preferred: usize, avoid: &mut Vec<usize>) -> Result<usize, BackendError> {
        let mut pool = self.pool.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            if self.halted.load(Ordering::Relaxed) {
                return Err(BackendError::NotRun("the run was stopped".into()));
            }
            if (0..pool.gone.len()).all(|w| pool.gone[w] || avoid.contains(&w)) {
                avoid.clear();
            }
            if let Some(index) = pool.take(preferred, avoid) {
                return Ok(index);
            }
            if pool.live == 0 {
                return Err(BackendError::NotRun(
                    pool.given_up.clone().unwrap_or_default(),
                ));
            }
            let waits_for =
                (!pool.gone[preferred] && !avoid.contains(&preferred)).then_some(preferred);
            if let Some(w) = waits_for {
                pool.awaited[w] += 1;
            }
            pool = self.freed.wait(pool).unwrap_or_else(|p| p.into_inner());
            if let Some(w) = waits_for {
                pool.awaited[w] -= 1;
            }
        }
    }

    /// Gives a worker back to the pool, or takes it out for good when it was `given_up`.
    fn release(&self, index: usize, given_up: Option<String>) {
        let mut pool = self.pool.lock().unwrap_or_else(|p| p.into_inner());
        match given_up {
            Some(reason) => {
                pool.live -= 1;
                pool.given_up = Some(reason);
                pool.gone[index] = true;
                // Waiters must learn that no worker may be left.
                self.freed.notify_all();
            }
            None => {
                pool.idle.push(index);
                // The case waiting for this worker in particular must hear of it.
                self.freed.notify_all();
            }
        }
    }

    /// Records that `trial` got a second reply, after it was judged.
    fn late_fault(&self, trial: String, message: String) {
        self.late
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(LateFault { trial, message });
    }

    /// The failure of a case whose session was stopped, with where its stderr is.
    fn restarted(&self, failure: String) -> BackendError {
        let log = self.log.lock().unwrap_or_else(|p| p.into_inner());
        BackendError::Broken(format!(
            "{failure}\nthe backend was stopped and will be restarted (its stderr is in {})",
            log.path().display()
        ))
    }

    /// Starts the worker's process when it has none.
    fn ensure_started(&self, worker: &mut Worker) -> Result<(), RestartFailure> {
        if worker.session.is_some() {
            return Ok(());
        }
        match Self::handshake(
            &self.command,
            &self.dir,
            self.hello_timeout,
            &self.log,
            worker.prefix.clone(),
            self.limits,
        ) {
            Ok((session, _)) => {
                worker.session = Some(session);
                worker.failed_starts = 0;
                worker.answered.clear();
                Ok(())
            }
            Err(e) => {
                worker.failed_starts += 1;
                if worker.failed_starts < MAX_FAILED_STARTS {
                    return Err(RestartFailure {
                        error: BackendError::Broken(format!("could not restart the backend: {e}")),
                        given_up: None,
                    });
                }
                Err(RestartFailure {
                    error: BackendError::Broken(format!(
                        "could not restart the backend: {e}; that is {MAX_FAILED_STARTS} failed starts in a row: it is not started again and the remaining cases are not run"
                    )),
                    given_up: Some(format!(
                        "the backend failed to start {MAX_FAILED_STARTS} times in a row and is not started again (last: {e})"
                    )),
                })
            }
        }
    }

    /// Runs one case on `worker`; the second value says why the worker is given up, if it is.
    /// `Err` when the worker's process could not be started before the case was sent: the
    /// engine never saw the case, so it is not failed but given to another worker.
    fn run_on(
        &self,
        worker: &mut Worker,
        id: &str,
        request: &str,
        limit: usize,
    ) -> Result<(Answer, Option<String>), RestartFailure> {
        // The case is sent again once to a fresh start when the first attempt only found a
        // second reply to an earlier case.
        for attempt in 0..2 {
            self.ensure_started(worker)?;
            let session = worker.session.as_mut().expect("started above");
            if let Some(extra) = session.leftover() {
                // Output that came after the last reply and before this request.
                let failure = session.fail_with(format!(
                    "the backend sent more than one reply to this case (or wrote more to stdout after its reply): {extra:.200}"
                ));
                worker.session = None;
                match blamed(&mut worker.answered, &extra) {
                    Some(previous) if attempt == 0 => {
                        self.late_fault(previous, failure);
                        continue;
                    }
                    _ => return Ok((Err(self.restarted(failure)), None)),
                }
            }
            let failure = match session.exchange(request, self.timeout, limit, &self.halted) {
                Ok(line) => {
                    match Self::interpret(
                        id,
                        &line,
                        self.capabilities.build_only,
                        self.limits,
                        &self.capabilities.composed,
                    ) {
                        Ok(outcome) => {
                            worker.answered = vec![id.to_owned()];
                            // Anything already behind the reply is more from this case.
                            match session.leftover() {
                            None => return Ok((Ok(outcome), None)),
                            Some(extra) => session.fail_with(format!(
                                "the backend sent more than one reply to this case: after {line:.200}\nit sent {extra:.200}"
                            )),
                        }
                        }
                        Err(misreply) if !misreply.out_of_step => {
                            worker.answered = vec![id.to_owned()];
                            return Ok((Err(BackendError::Broken(misreply.message)), None));
                        }
                        Err(misreply) => {
                            let repeated = (misreply.id.as_ref())
                                .is_some_and(|id| worker.answered.contains(id));
                            let message = session.fail_with(misreply.message);
                            worker.session = None;
                            if repeated && attempt == 0 {
                                let previous = misreply.id.expect("compared above");
                                worker.answered.clear();
                                self.late_fault(
                                previous,
                                format!(
                                    "the backend sent more than one reply to this case: the second came while it worked on case {id:?}: {line:.200}"
                                ),
                            );
                                continue;
                            }
                            message
                        }
                    }
                }
                Err(Trouble::Halted) => {
                    session.stop(None);
                    worker.session = None;
                    return Ok((
                        Err(BackendError::NotRun("the run was stopped".into())),
                        None,
                    ));
                }
                Err(trouble) => session.fail(trouble),
            };
            worker.session = None;
            return Ok((Err(self.restarted(failure)), None));
        }
        unreachable!("the second attempt returns")
    }

    /// Ends every worker's process (the protocol's end: stdin closed, the per-case timeout to
    /// exit, then the process group and the rest of the start stopped), all at once. A reply
    /// to its last case that a worker wrote after it is a late fault.
    fn end_all(&self) {
        let mut workers: Vec<MutexGuard<'_, Worker>> = self
            .workers
            .iter()
            .map(|w| w.lock().unwrap_or_else(|p| p.into_inner()))
            .collect();
        // Every copy is told at once, so that their exits overlap.
        for worker in workers.iter_mut() {
            if let Some(session) = &mut worker.session {
                session.close_input();
            }
        }
        // One grace for all: the copies exit side by side, not one after another.
        let deadline = Instant::now() + self.timeout;
        for worker in workers.iter_mut() {
            if let Some(mut session) = worker.session.take() {
                let extra = session.end(deadline.saturating_duration_since(Instant::now()));
                let previous = extra
                    .as_ref()
                    .and_then(|extra| blamed(&mut worker.answered, extra));
                if let (Some(extra), Some(previous)) = (extra, previous) {
                    self.late_fault(
                        previous,
                        format!(
                            "the backend sent more than one reply to this case (or wrote more to stdout after its reply): {extra:.200}"
                        ),
                    );
                }
            }
        }
    }
}

/// The case of the last request that stray output `extra` is blamed on: the one whose id it
/// carries, else the last answered; taken out of `answered`.
fn blamed(answered: &mut Vec<String>, extra: &str) -> Option<String> {
    let first_line = extra.lines().next().unwrap_or_default();
    let named = reply_id(first_line).and_then(|id| answered.iter().position(|a| *a == id));
    let at = named.or_else(|| answered.len().checked_sub(1))?;
    let previous = answered.remove(at);
    answered.clear();
    Some(previous)
}

impl ProcessBackend {
    /// Sends `case` alone: on its preferred worker when free, else any free one.
    fn run_single(&self, case: &Case) -> Answer {
        let id = case.trial_name();
        let request = run_request(&id, &case.invocation);
        self.dumped(&request)?;
        let preferred = preferred_worker(case, self.workers.len());
        // The workers that could not start for this case: it is not sent to them again while
        // another is left.
        let mut avoid = Vec::new();
        loop {
            let index = self.acquire(preferred, &mut avoid)?;
            let mut worker = self.workers[index]
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            let ran = self.run_on(&mut worker, &id, &request, reply_line_limit(case));
            drop(worker);
            match ran {
                Ok((result, given_up)) => {
                    self.release(index, given_up);
                    return result;
                }
                Err(RestartFailure { error, given_up }) => {
                    self.release(index, given_up);
                    if self.workers.len() > 1 {
                        eprintln!(
                            "warning: copy {} of {} could not start, so case {id} goes to another: {error}",
                            index + 1,
                            self.workers.len()
                        );
                    }
                    avoid.push(index);
                }
            }
        }
    }

    /// Writes a request line to the dump, when the run keeps one.
    fn dumped(&self, request: &str) -> Result<(), BackendError> {
        match &self.dump {
            Some(dump) => dump.write_line(request),
            None => Ok(()),
        }
    }

    /// The answer to the case `id` of batch `index`: the batch is sent by the first of its
    /// trials to ask, and the others wait for it. `None` when the batch holds no answer for
    /// the case (it was taken already, or the sending failed as a whole): the case is then
    /// sent alone.
    fn batched(&self, batches: &Batches, index: usize, id: &str) -> Option<Answer> {
        let mut state = batches.state.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            match &mut state[index] {
                BatchState::Answered(answers) => return answers.remove(id),
                BatchState::Sending => {
                    state = batches
                        .answered
                        .wait(state)
                        .unwrap_or_else(|p| p.into_inner());
                }
                BatchState::Waiting(_) => break,
            }
        }
        let BatchState::Waiting(cases) = std::mem::replace(&mut state[index], BatchState::Sending)
        else {
            unreachable!("matched above")
        };
        drop(state);
        let mut sending = Sending {
            batches,
            index,
            answers: HashMap::new(),
        };
        sending.answers = self.send_batch(cases);
        let answer = sending.answers.remove(id);
        drop(sending);
        answer
    }

    /// Sends `cases` as one batch request and gives every case's answer. A case the batch
    /// left unanswered (the backend crashed, hung, answered out of step, or twice) is sent
    /// again alone to a fresh start, so that its answer never depends on its batch.
    fn send_batch(&self, cases: Vec<Case>) -> HashMap<String, Answer> {
        let mut answers = HashMap::new();
        let mut left = cases;
        match self.acquire(
            preferred_worker(&left[0], self.workers.len()),
            &mut Vec::new(),
        ) {
            Err(error) => {
                for case in left.drain(..) {
                    answers.insert(case.trial_name(), Err(error.clone()));
                }
            }
            Ok(index) => {
                let mut worker = self.workers[index]
                    .lock()
                    .unwrap_or_else(|p| p.into_inner());
                let given_up = self.batch_on(&mut worker, &mut left, &mut answers);
                drop(worker);
                self.release(index, given_up);
            }
        }
        for case in left {
            let answer = self.run_single(&case);
            answers.insert(case.trial_name(), answer);
        }
        answers
    }

    /// Sends the cases `left` as one request on `worker`, putting each case answered cleanly
    /// into `answers` and leaving in `left` those to send again alone; gives why the worker
    /// is given up, if it is.
    fn batch_on(
        &self,
        worker: &mut Worker,
        left: &mut Vec<Case>,
        answers: &mut HashMap<String, Answer>,
    ) -> Option<String> {
        // A copy that cannot start fails no case: the cases go alone, to whichever copy starts.
        if let Err(RestartFailure { given_up, .. }) = self.ensure_started(worker) {
            return given_up;
        }
        let session = worker.session.as_mut().expect("started above");
        if let Some(extra) = session.leftover() {
            // Output after the last reply and before this request: more from an earlier case,
            // which fails after its verdict; the batch's cases go alone to fresh starts.
            let failure = session.fail_with(format!(
                "the backend sent more than one reply to this case (or wrote more to stdout after its reply): {extra:.200}"
            ));
            worker.session = None;
            if let Some(previous) = blamed(&mut worker.answered, &extra) {
                self.late_fault(previous, failure);
            }
            return None;
        }
        let ids: Vec<String> = left.iter().map(Case::trial_name).collect();
        let runs: Vec<String> = (left.iter().zip(&ids))
            .map(|(case, id)| run_request(id, &case.invocation))
            .collect();
        let request = batch_request(runs.iter().map(String::as_str));
        drop(runs);
        if let Err(error) = self.dumped(&request) {
            for id in &ids {
                answers.insert(id.clone(), Err(error.clone()));
            }
            left.clear();
            return None;
        }
        let limits: Vec<usize> = left.iter().map(reply_line_limit).collect();
        let longest = limits.iter().copied().max().unwrap_or(MIN_REPLY_LINE_LIMIT);
        // The batch's deadline is the case timeout once per case it holds.
        let timeout = self.timeout.saturating_mul(ids.len() as u32);
        let deadline = Instant::now() + timeout;
        let mut pending: HashMap<&str, usize> = ids
            .iter()
            .enumerate()
            .map(|(i, id)| (id.as_str(), i))
            .collect();
        let mut again: Vec<usize> = Vec::new();
        let mut in_step = true;
        let mut first = true;
        while !pending.is_empty() {
            let read = match first {
                true => session.exchange_by(&request, deadline, timeout, longest, &self.halted),
                false => session.next_reply(deadline, timeout, longest, &self.halted),
            };
            first = false;
            let line = match read {
                Ok(line) => line,
                Err(Trouble::Halted) => {
                    for id in pending.keys() {
                        let stopped = BackendError::NotRun("the run was stopped".into());
                        answers.insert((*id).to_owned(), Err(stopped));
                    }
                    pending.clear();
                    in_step = false;
                    break;
                }
                Err(trouble) => {
                    let failure = session.fail(trouble);
                    self.note_batch_fault(ids.len(), &failure);
                    in_step = false;
                    break;
                }
            };
            let found = reply_id(&line).and_then(|id| pending.remove_entry(id.as_str()));
            let Some((id, at)) = found else {
                // Another case's id, one answered already, or no id: out of step. A second
                // reply takes back the first, and the case is judged alone.
                if let Some(id) = reply_id(&line) {
                    if let Some(at) = ids.iter().position(|i| *i == id) {
                        answers.remove(&id);
                        again.push(at);
                    }
                }
                let failure = session.fail_with(format!(
                    "the backend answered a batch out of step: {line:.200}"
                ));
                self.note_batch_fault(ids.len(), &failure);
                in_step = false;
                break;
            };
            if line.len() > limits[at] {
                // Too long for its own case: alone, the case meets its own limit.
                again.push(at);
                let failure = session.fail_with(format!(
                    "a reply longer than its case's limit, to case {id:?}"
                ));
                self.note_batch_fault(ids.len(), &failure);
                in_step = false;
                break;
            }
            match Self::interpret(
                id,
                &line,
                self.capabilities.build_only,
                self.limits,
                &self.capabilities.composed,
            ) {
                Ok(outcome) => {
                    answers.insert(id.to_owned(), Ok(outcome));
                }
                Err(misreply) if !misreply.out_of_step => {
                    answers.insert(id.to_owned(), Err(BackendError::Broken(misreply.message)));
                }
                Err(misreply) => {
                    again.push(at);
                    let failure = session.fail_with(misreply.message);
                    self.note_batch_fault(ids.len(), &failure);
                    in_step = false;
                    break;
                }
            }
        }
        if in_step {
            if let Some(extra) = session.leftover() {
                // More after the last reply: the case it names, else every case, is judged alone.
                let named = reply_id(extra.lines().next().unwrap_or_default())
                    .and_then(|id| ids.iter().position(|i| *i == id));
                match named {
                    Some(at) => again.push(at),
                    None => again.extend(0..ids.len()),
                }
                let failure = session.fail_with(format!(
                    "the backend wrote more than a reply per case of a batch: {extra:.200}"
                ));
                self.note_batch_fault(ids.len(), &failure);
                in_step = false;
            }
        }
        if in_step {
            worker.answered = ids.clone();
        } else {
            worker.session = None;
            worker.answered.clear();
        }
        again.extend(pending.values().copied());
        for &at in &again {
            answers.remove(&ids[at]);
        }
        let mut resend = vec![false; ids.len()];
        for at in again {
            resend[at] = true;
        }
        let cases = std::mem::take(left);
        *left = (cases.into_iter().zip(resend))
            .filter_map(|(case, again)| again.then_some(case))
            .collect();
        None
    }

    /// Notes in the backend log why a batch was cut short (its unanswered cases are sent again
    /// alone, and each of those gets its own verdict).
    fn note_batch_fault(&self, cases: usize, failure: &str) {
        let mut log = self.log.lock().unwrap_or_else(|p| p.into_inner());
        log.note(&format!(
            "[runner] a batch of {cases} cases was cut short; its unanswered cases are sent again alone: {failure}\n"
        ));
    }
}

impl Backend for ProcessBackend {
    fn name(&self) -> String {
        self.capabilities.name.clone()
    }

    fn facts(&self) -> Facts {
        self.capabilities.facts(Facts::host())
    }

    fn composed(&self) -> BTreeMap<String, String> {
        self.capabilities.composed.clone()
    }

    fn build_only(&self) -> bool {
        self.capabilities.build_only
    }

    fn supports(&self, case: &Case) -> Result<(), Exclusion> {
        self.capabilities.supports(case)
    }

    fn excluded_dtypes(&self, case: &Case) -> Vec<DType> {
        self.capabilities.excluded_dtypes(case)
    }

    fn batch(&self) -> usize {
        self.batch
    }

    fn plan(&self, cases: Vec<Case>) {
        if self.batch < 2 || self.batches.get().is_some() {
            return;
        }
        let mut of = HashMap::new();
        let mut groups: Vec<Vec<Case>> = Vec::new();
        for case in cases {
            if of.contains_key(&case.trial_name()) {
                continue;
            }
            if groups.last().map_or(true, |g| g.len() >= self.batch) {
                groups.push(Vec::with_capacity(self.batch));
            }
            of.insert(case.trial_name(), groups.len() - 1);
            groups.last_mut().expect("pushed above").push(case);
        }
        let state = groups.into_iter().map(BatchState::Waiting).collect();
        let _ = self.batches.set(Batches {
            of,
            state: Mutex::new(state),
            answered: Condvar::new(),
        });
    }

    fn run(&self, case: &Case) -> Result<Outcome, BackendError> {
        self.run_noting(case).map(|(outcome, _)| outcome)
    }

    fn run_noting(&self, case: &Case) -> Answer {
        if let Some(batches) = self.batches.get() {
            let id = case.trial_name();
            if let Some(&index) = batches.of.get(&id) {
                if let Some(answer) = self.batched(batches, index, &id) {
                    return answer;
                }
            }
        }
        self.run_single(case)
    }

    fn halt(&self) {
        self.halted.store(true, Ordering::Relaxed);
        let _pool = self.pool.lock().unwrap_or_else(|p| p.into_inner());
        self.freed.notify_all();
    }

    fn finish(&self) -> Vec<LateFault> {
        self.end_all();
        std::mem::take(&mut *self.late.lock().unwrap_or_else(|p| p.into_inner()))
    }
}

impl Drop for ProcessBackend {
    fn drop(&mut self) {
        self.end_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn a_case_takes_its_preferred_worker_else_one_no_waiting_case_prefers() {
        let mut pool = Pool {
            idle: vec![2, 1, 0],
            live: 3,
            given_up: None,
            awaited: vec![0; 3],
            gone: vec![false; 3],
        };
        assert_eq!(pool.take(1, &[]), Some(1));
        pool.awaited[0] = 1;
        // Worker 0 is free but awaited by another case: this one takes 2.
        assert_eq!(pool.take(1, &[]), Some(2));
        assert_eq!(pool.take(1, &[]), None);
        pool.idle.push(1);
        pool.gone[2] = true;
        // Its preferred worker is gone for good: any free worker will do.
        assert_eq!(pool.take(2, &[]), Some(1));
        pool.idle.push(1);
        pool.awaited = vec![0, 1, 0];
        assert_eq!(pool.take(2, &[]), Some(1));
        // A worker that could not start for the case is not taken; its preference counts
        // as given up.
        pool.idle = vec![0, 1];
        pool.awaited = vec![0, 1, 0];
        assert_eq!(pool.take(1, &[1]), Some(0));
        assert_eq!(pool.take(1, &[1]), None);
    }

    #[test]
    fn cases_of_one_op_and_input_shapes_prefer_one_worker() {
        let case = |shape: Vec<usize>, first: u64| {
            let mut case =
                opspec_generate::new_case(opspec::Op::Shuffle, "f", Path::new("f"), "c", None);
            let bits = std::iter::once(first).chain(1..6).collect();
            let input = opspec::Tensor::from_bits(opspec::DType::Int8, shape, bits);
            case.invocation.inputs = vec![Some(input)];
            case
        };
        let (a, b, c) = (
            case(vec![2, 3], 0),
            case(vec![2, 3], 9),
            case(vec![3, 2], 0),
        );
        assert_eq!(preferred_worker(&a, 4), preferred_worker(&b, 4));
        // Shapes [6], [1, 6], [1, 1, 6], ...: spread over the workers.
        let workers: std::collections::BTreeSet<usize> = (0..40)
            .map(|ones| preferred_worker(&case([vec![1; ones], vec![6]].concat(), 0), 4))
            .collect();
        assert!(workers.len() > 1 && workers.iter().all(|&w| w < 4));
        assert_eq!(preferred_worker(&c, 1), 0);
    }

    #[test]
    fn the_reply_line_limit_follows_the_expected_outputs() {
        let mut case =
            opspec_generate::new_case(opspec::Op::Shuffle, "f", Path::new("f"), "c", None);
        assert_eq!(reply_line_limit(&case), MIN_REPLY_LINE_LIMIT);
        // 2^27 int64 elements: 1 GiB of data, 1.33 GiB of base64, a limit of twice that.
        let elements = 1usize << 27;
        case.expect = Expectation::Outputs(vec![opspec::Tensor {
            dtype: opspec::DType::Int64,
            shape: vec![elements],
            buffer: opspec::tensor::Buffer::W64(Vec::new()),
        }]);
        let base64 = (elements * 8).div_ceil(3) * 4;
        assert_eq!(reply_line_limit(&case), 2 * base64);
    }
}
