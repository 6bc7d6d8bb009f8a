//! An external backend: one process per run, JSON Lines over its stdin/stdout
//! (docs/protocol.md), its stderr copied to a log file.
//!
//! Cases are sent one at a time. A backend that exits, closes its output, stops reading its
//! input, does not answer within the timeout, answers with a line longer than the case's limit
//! ([`reply_line_limit`]) or answers out of step (bad JSON, another case's id) fails that case;
//! it is then stopped and started again for the next case, so one bad case never hides the
//! others. After [`MAX_FAILED_STARTS`] failed starts in a row it is not started again: the
//! remaining cases are not run.
//!
//! Each start is `sh -c` in a process group of its own (`exec` for a plain command, so that
//! no shell sits between the runner and the program), so that stopping it reaches every
//! process it started: TERM to the group, [`TERM_GRACE`], KILL to the group, then the shell is
//! reaped (a process that leaves the group with `setsid` escapes this). One thread does the
//! whole exchange with `poll(2)`: the request is written, the reply read and stderr copied
//! without blocking, so the timeout covers writing as well as reading, and the shell's exit is
//! noticed while waiting even when a child of the backend still holds its stdout.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::{File, OpenOptions};
use std::io::{ErrorKind as IoErrorKind, Read, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use opspec::image::byte_len;
use opspec::spec::{Case, Expectation, TARGETS};
use opspec::{DType, ErrorKind, Op};

use crate::attributes::{declarable, declarable_names};
use crate::backend::{trial_dtypes, Backend, BackendError, BuiltOutput, Exclusion, Outcome};
use crate::protocol::{hello_request, run_request, Reply, PROTOCOL_VERSION};
use crate::verdict::dtype_declaration;

/// The smallest reply line limit of a case, in bytes (64 MiB); see [`reply_line_limit`].
pub const MIN_REPLY_LINE_LIMIT: usize = 64 << 20;

/// Failed starts in a row (hello not answered, answered wrongly, or the process gone) after
/// which the backend is not started again and the remaining cases are not run.
pub const MAX_FAILED_STARTS: u32 = 3;

/// Bytes of the backend's stderr kept in the log per run (16 MiB); the rest is dropped, with a
/// note in the log. The log is emptied when the run starts.
pub const BACKEND_LOG_LIMIT: u64 = 16 << 20;

/// Time a backend's processes have to end after TERM before they are killed.
pub const TERM_GRACE: Duration = Duration::from_millis(500);

/// How often the shell's exit is checked while waiting for a reply.
const POLL_INTERVAL: Duration = Duration::from_millis(20);

/// Reads of stdout (64 KiB each) between two checks of the reply line's length.
const STDOUT_READS: usize = 16;

/// How much of a start's stderr a failure quotes: its last lines, from its last bytes.
const STDERR_TAIL_LINES: usize = 5;
const STDERR_TAIL_BYTES: usize = 4096;

/// The longest reply line the runner reads for `case`: twice the base64 size of the outputs
/// the case expects, and at least [`MIN_REPLY_LINE_LIMIT`]. A correct reply is about the size
/// of the expected outputs in base64, so the limit never fails a right answer, and the memory
/// a reply takes is bounded by the case itself. Cases whose expected outputs are not known
/// (errors, round trips) get the minimum.
pub fn reply_line_limit(case: &Case) -> usize {
    let expected: usize = match &case.expect {
        Expectation::Outputs(outputs) => outputs
            .iter()
            .map(|t| byte_len(t.dtype, t.shape.iter().product()))
            .sum(),
        Expectation::Error { .. } => 0,
    };
    MIN_REPLY_LINE_LIMIT.max(expected.div_ceil(3).saturating_mul(8))
}

/// What the backend said it can do in its hello.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Capabilities {
    pub name: String,
    pub ops: BTreeSet<String>,
    /// Per op, the dtypes it supports; an op absent here supports every dtype.
    pub dtypes: BTreeMap<String, BTreeSet<String>>,
    pub targets: BTreeSet<String>,
    /// Per op, per declarable attribute ([`crate::attributes`]), the values it implements; an
    /// attribute absent here takes every value.
    pub attributes: BTreeMap<Op, BTreeMap<&'static str, BTreeSet<String>>>,
    /// The hello's `build_only`: the backend answers `built`, never `ok`.
    pub build_only: bool,
}

/// A name in a hello that the suite does not know: a typo there would silently skip cases.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum HelloProblem {
    /// `field` is `ops` or `dtypes` (a key of it).
    #[error("unknown op {name:?} in `{field}` (known: {})", known(Op::ALL.map(Op::name)))]
    UnknownOp { name: String, field: &'static str },
    #[error("unknown dtype {name:?} in `dtypes.{op}` (known: {})", known(DType::ALL.map(DType::name)))]
    UnknownDtype { name: String, op: String },
    #[error("unknown target {name:?} in `targets` (known: {})", known(TARGETS))]
    UnknownTarget { name: String },
    #[error("unknown attribute {name:?} in `attributes.{op}` (known: {})", declarable_names(*op).join(", "))]
    UnknownAttribute { name: String, op: Op },
    #[error("unknown value {name:?} in `attributes.{op}.{attribute}` (known: {})", (declarable(*op, attribute).expect("a declarable attribute").values)().join(", "))]
    UnknownValue {
        name: String,
        op: Op,
        attribute: &'static str,
    },
}

fn known<const N: usize>(names: [&str; N]) -> String {
    names.join(", ")
}

/// Every unknown name of a hello.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
pub struct HelloError(pub Vec<HelloProblem>);

impl Capabilities {
    /// The capabilities of a hello, or every name in it that the suite does not know.
    pub fn from_hello(
        name: String,
        ops: Vec<String>,
        dtypes: BTreeMap<String, Vec<String>>,
        targets: Vec<String>,
        attributes: BTreeMap<String, BTreeMap<String, Vec<String>>>,
    ) -> Result<Capabilities, HelloError> {
        let mut problems = Vec::new();
        let unknown_op = |name: &String, field| {
            Op::from_name(name)
                .is_none()
                .then(|| HelloProblem::UnknownOp {
                    name: name.clone(),
                    field,
                })
        };
        problems.extend(ops.iter().filter_map(|op| unknown_op(op, "ops")));
        for (op, list) in &dtypes {
            problems.extend(unknown_op(op, "dtypes"));
            problems.extend(
                list.iter()
                    .filter(|d| DType::from_name(d).is_none())
                    .map(|d| HelloProblem::UnknownDtype {
                        name: d.clone(),
                        op: op.clone(),
                    }),
            );
        }
        problems.extend(
            targets
                .iter()
                .filter(|t| !TARGETS.contains(&t.as_str()))
                .map(|t| HelloProblem::UnknownTarget { name: t.clone() }),
        );
        let mut declared = BTreeMap::new();
        for (op_name, lists) in attributes {
            let Some(op) = Op::from_name(&op_name) else {
                problems.extend(unknown_op(&op_name, "attributes"));
                continue;
            };
            let per_op: &mut BTreeMap<_, _> = declared.entry(op).or_default();
            for (name, values) in lists {
                let Some(attribute) = declarable(op, &name) else {
                    problems.push(HelloProblem::UnknownAttribute { name, op });
                    continue;
                };
                let known = (attribute.values)();
                problems.extend(values.iter().filter(|v| !known.contains(v)).map(|v| {
                    HelloProblem::UnknownValue {
                        name: v.clone(),
                        op,
                        attribute: attribute.name,
                    }
                }));
                per_op.insert(attribute.name, values.into_iter().collect::<BTreeSet<_>>());
            }
        }
        if !problems.is_empty() {
            return Err(HelloError(problems));
        }
        Ok(Capabilities {
            name,
            ops: ops.into_iter().collect(),
            dtypes: dtypes
                .into_iter()
                .map(|(op, list)| (op, list.into_iter().collect()))
                .collect(),
            targets: targets.into_iter().collect(),
            attributes: declared,
            build_only: false,
        })
    }
}

/// The backend log of a run: emptied when the run starts, capped at [`BACKEND_LOG_LIMIT`].
struct Log {
    path: PathBuf,
    file: Option<File>,
    written: u64,
    cut: bool,
}

impl Log {
    fn create(path: &Path) -> Result<Log, String> {
        let file = OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(true)
            .open(path)
            .map_err(|e| format!("cannot open backend log {}: {e}", path.display()))?;
        Ok(Log {
            path: path.to_owned(),
            file: Some(file),
            written: 0,
            cut: false,
        })
    }

    fn write(&mut self, bytes: &[u8]) {
        let room = BACKEND_LOG_LIMIT.saturating_sub(self.written) as usize;
        let kept = &bytes[..bytes.len().min(room)];
        if let Some(file) = &mut self.file {
            // A log that cannot be written must not stop the run: it is given up.
            if file.write_all(kept).is_err() {
                self.file = None;
            }
        }
        self.written += kept.len() as u64;
        if kept.len() < bytes.len() && !self.cut {
            self.cut = true;
            if let Some(file) = &mut self.file {
                let _ = writeln!(
                    file,
                    "\n[runner] the backend wrote more than {BACKEND_LOG_LIMIT} bytes to stderr in this run; the rest is discarded"
                );
            }
        }
    }
}

/// Why an exchange with the backend failed.
#[derive(Debug)]
enum Trouble {
    /// The shell exited (the backend ended, or the command failed).
    Exited,
    /// End of file on its stdout while it still runs.
    ClosedOutput,
    /// Its stdin is closed: it stopped reading.
    ClosedInput,
    /// The request was not all read within the timeout.
    Unread(Duration),
    /// No reply within the timeout.
    Silent(Duration),
    /// A reply line past the limit.
    TooLong(usize),
    Io(String),
}

/// The text of a command that is one program with plain words: run by `exec`, so that the
/// program itself is the process watched (no shell waiting in between holding its stdout).
fn shell_line(command: &str) -> String {
    let plain = command
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == ' ' || c == '\t' || "_-./:,+@%=~".contains(c));
    let first = command.split_whitespace().next().unwrap_or("");
    if plain && !first.is_empty() && !first.contains('=') {
        format!("exec {command}")
    } else {
        command.to_owned()
    }
}

fn set_nonblocking(fd: RawFd) -> std::io::Result<()> {
    // SAFETY: fcntl on a file descriptor this process owns, with integer arguments only.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    // SAFETY: as above.
    if flags < 0 || unsafe { libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Whether any process of group `pgid` is alive (zombies aside). Where `/proc` cannot be read
/// the group is taken as alive, so the caller waits out its grace and sends KILL.
fn group_alive(pgid: i32) -> bool {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return true;
    };
    entries.flatten().any(|entry| {
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            return false;
        };
        // `pid (comm) state ppid pgrp ...`: the command may hold spaces and parentheses.
        let Some((_, fields)) = stat.rsplit_once(')') else {
            return false;
        };
        let fields: Vec<&str> = fields.split_whitespace().collect();
        fields.len() > 2 && fields[0] != "Z" && fields[2] == pgid.to_string()
    })
}

/// A running backend: the shell started for the command, leader of its own process group.
struct Session {
    child: Child,
    pid: i32,
    stdin: Option<ChildStdin>,
    stdout: ChildStdout,
    stderr: ChildStderr,
    stdout_open: bool,
    stderr_open: bool,
    /// Bytes of stdout read past the last complete line.
    pending: Vec<u8>,
    /// The last bytes of this start's stderr.
    tail: Vec<u8>,
    log: Arc<Mutex<Log>>,
    stopped: bool,
}

impl Session {
    fn start(command: &str, log: &Arc<Mutex<Log>>) -> Result<Session, String> {
        // Relative paths in the command are relative to the repository root, wherever cargo
        // runs the test binary from.
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(shell_line(command))
            .current_dir(&root)
            .process_group(0)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start backend `{command}`: {e}"))?;
        let stdin = child.stdin.take().expect("piped");
        let stdout = child.stdout.take().expect("piped");
        let stderr = child.stderr.take().expect("piped");
        let pid = child.id() as i32;
        let session = Session {
            child,
            pid,
            stdin: Some(stdin),
            stdout,
            stderr,
            stdout_open: true,
            stderr_open: true,
            pending: Vec::new(),
            tail: Vec::new(),
            log: Arc::clone(log),
            stopped: false,
        };
        let fds = [
            session.stdin.as_ref().expect("just set").as_raw_fd(),
            session.stdout.as_raw_fd(),
            session.stderr.as_raw_fd(),
        ];
        for fd in fds {
            // On error the session is dropped, which stops the process group.
            set_nonblocking(fd).map_err(|e| format!("cannot set up backend `{command}`: {e}"))?;
        }
        session
            .lock_log()
            .write(format!("[runner] started `{command}` (process group {pid})\n").as_bytes());
        Ok(session)
    }

    fn lock_log(&self) -> std::sync::MutexGuard<'_, Log> {
        self.log.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether the shell has exited, without reaping it (so that its pid, the group's id,
    /// cannot be reused before the group is stopped).
    fn exited(&self) -> bool {
        // SAFETY: an all-zero siginfo_t is a valid value of this plain C struct.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: waitid on our own child with WNOWAIT | WNOHANG: it neither blocks nor reaps;
        // `info` is valid for writes.
        let result = unsafe {
            libc::waitid(
                libc::P_PID,
                self.pid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
            )
        };
        // SAFETY: si_pid is set by a successful waitid (0 when the child has not changed state).
        result == 0 && unsafe { info.si_pid() } != 0
    }

    fn take_stderr(&mut self, bytes: &[u8]) {
        self.lock_log().write(bytes);
        self.tail.extend_from_slice(bytes);
        if self.tail.len() > 2 * STDERR_TAIL_BYTES {
            self.tail.drain(..self.tail.len() - STDERR_TAIL_BYTES);
        }
    }

    /// Reads what stdout and stderr have for us now, without blocking. Stdout is kept in
    /// `pending` unless `discard`.
    fn drain(&mut self, discard: bool) -> Result<(), String> {
        let mut buffer = [0u8; 1 << 16];
        while self.stderr_open {
            match self.stderr.read(&mut buffer) {
                Ok(0) => self.stderr_open = false,
                Ok(n) => self.take_stderr(&buffer[..n]),
                Err(e) if e.kind() == IoErrorKind::WouldBlock => break,
                Err(e) if e.kind() == IoErrorKind::Interrupted => {}
                Err(_) => self.stderr_open = false,
            }
        }
        // At most STDOUT_READS reads of stdout per call, so that the caller checks the line
        // limit every megabyte.
        for _ in 0..STDOUT_READS {
            if !self.stdout_open {
                break;
            }
            match self.stdout.read(&mut buffer) {
                Ok(0) => self.stdout_open = false,
                Ok(n) if !discard => self.pending.extend_from_slice(&buffer[..n]),
                Ok(_) => {}
                Err(e) if e.kind() == IoErrorKind::WouldBlock => break,
                Err(e) if e.kind() == IoErrorKind::Interrupted => {}
                Err(e) => return Err(format!("cannot read from the backend: {e}")),
            }
        }
        Ok(())
    }

    /// Waits until stdout or stderr has data, stdin (when `writing`) has room, or `wait`
    /// passes.
    fn wait_for_io(&self, writing: bool, wait: Duration) {
        let mut fds = Vec::with_capacity(3);
        if writing {
            if let Some(stdin) = &self.stdin {
                fds.push(libc::pollfd {
                    fd: stdin.as_raw_fd(),
                    events: libc::POLLOUT,
                    revents: 0,
                });
            }
        }
        for (open, fd) in [
            (self.stdout_open, self.stdout.as_raw_fd()),
            (self.stderr_open, self.stderr.as_raw_fd()),
        ] {
            if open {
                fds.push(libc::pollfd {
                    fd,
                    events: libc::POLLIN,
                    revents: 0,
                });
            }
        }
        let millis = wait.as_millis().clamp(1, i32::MAX as u128) as i32;
        // SAFETY: `fds` is a valid array of `fds.len()` pollfd structs; poll only writes their
        // `revents`. An error (EINTR) just ends the wait early.
        unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, millis) };
    }

    /// The next complete line of `pending`, or the trouble of a line past `limit`.
    fn next_line(&mut self, scanned: &mut usize, limit: usize) -> Result<Option<String>, Trouble> {
        if let Some(at) = self.pending[*scanned..].iter().position(|&b| b == b'\n') {
            let end = *scanned + at;
            if end > limit {
                return Err(Trouble::TooLong(limit));
            }
            let line = String::from_utf8_lossy(&self.pending[..end]).into_owned();
            self.pending.drain(..=end);
            *scanned = 0;
            return Ok(Some(line));
        }
        *scanned = self.pending.len();
        if self.pending.len() > limit {
            return Err(Trouble::TooLong(limit));
        }
        Ok(None)
    }

    /// Sends one line and waits for one line back, at most `limit` bytes long. The timeout
    /// covers both the writing and the reading.
    fn exchange(&mut self, line: &str, timeout: Duration, limit: usize) -> Result<String, Trouble> {
        let deadline = Instant::now() + timeout;
        let request = format!("{line}\n").into_bytes();
        let mut written = 0;
        let mut scanned = 0;
        loop {
            if let Some(reply) = self.next_line(&mut scanned, limit)? {
                return Ok(reply);
            }
            if !self.stdout_open {
                // A process that crashes closes its stdout just before it exits: give its exit
                // a moment to show, to say which of the two happened.
                let grace = Instant::now() + Duration::from_millis(200);
                while !self.exited() && Instant::now() < grace {
                    std::thread::sleep(Duration::from_millis(5));
                }
                let _ = self.drain(true);
                return Err(if self.exited() {
                    Trouble::Exited
                } else {
                    Trouble::ClosedOutput
                });
            }
            if self.exited() {
                // Whatever it wrote before exiting is in the pipe: read it before judging (a
                // child that still holds stdout may keep it open, so stop when nothing comes).
                loop {
                    let before = self.pending.len();
                    self.drain(false).map_err(Trouble::Io)?;
                    if let Some(reply) = self.next_line(&mut scanned, limit)? {
                        return Ok(reply);
                    }
                    if self.pending.len() == before {
                        return Err(Trouble::Exited);
                    }
                }
            }
            if written < request.len() {
                let stdin = self.stdin.as_mut().expect("open during a session");
                match stdin.write(&request[written..]) {
                    Ok(n) => written += n,
                    Err(e) if e.kind() == IoErrorKind::WouldBlock => {}
                    Err(e) if e.kind() == IoErrorKind::Interrupted => {}
                    Err(e) if e.kind() == IoErrorKind::BrokenPipe => {
                        return Err(Trouble::ClosedInput)
                    }
                    Err(e) => return Err(Trouble::Io(format!("cannot write to the backend: {e}"))),
                }
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(if written < request.len() {
                    Trouble::Unread(timeout)
                } else {
                    Trouble::Silent(timeout)
                });
            }
            self.wait_for_io(written < request.len(), POLL_INTERVAL.min(deadline - now));
            self.drain(false).map_err(Trouble::Io)?;
        }
    }

    /// The last lines of this start's stderr, indented, or nothing.
    fn stderr_tail(&self) -> String {
        let text = String::from_utf8_lossy(&self.tail);
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        if lines.is_empty() {
            return String::new();
        }
        let shown: Vec<String> = lines[lines.len().saturating_sub(STDERR_TAIL_LINES)..]
            .iter()
            .map(|l| format!("\n    {}", l.chars().take(300).collect::<String>()))
            .collect();
        format!("; its stderr ended with:{}", shown.concat())
    }

    /// Stops the session after `trouble` and says what happened, with the exit status when
    /// the backend ended by itself and the end of its stderr.
    fn fail(&mut self, trouble: Trouble) -> String {
        let exit = self.stop(None);
        let exited = |status: &Option<ExitStatus>| match status {
            Some(status) => format!("it exited ({status})"),
            None => "it was still running".to_owned(),
        };
        let what = match trouble {
            Trouble::Exited => match exit {
                Some(status) => format!("the backend exited ({status}) without answering"),
                None => "the backend exited without answering".to_owned(),
            },
            Trouble::ClosedOutput => format!(
                "the backend closed its output without answering ({})",
                exited(&exit)
            ),
            Trouble::ClosedInput => format!(
                "the backend closed its input before reading the whole request ({})",
                exited(&exit)
            ),
            Trouble::Unread(timeout) => format!(
                "the backend did not read the request within {} s (it stopped reading its input)",
                timeout.as_secs_f64()
            ),
            Trouble::Silent(timeout) => format!(
                "the backend did not answer within {} s (hung?)",
                timeout.as_secs_f64()
            ),
            Trouble::TooLong(limit) => format!(
                "the backend's reply line is longer than {limit} bytes, the limit for this case \
                 (twice its expected outputs in base64, at least {MIN_REPLY_LINE_LIMIT})"
            ),
            Trouble::Io(message) => message,
        };
        format!("{what}{}", self.stderr_tail())
    }

    /// Stops the session with a garbage reply `message`: the message with the end of stderr.
    fn fail_with(&mut self, message: String) -> String {
        self.stop(None);
        format!("{message}{}", self.stderr_tail())
    }

    /// Stops the backend: closes its stdin, gives it `end_grace` to exit by itself (as the
    /// protocol's end asks), then TERM to its process group, [`TERM_GRACE`], KILL, and reaps
    /// the shell. Gives the shell's exit status when it had exited by itself.
    fn stop(&mut self, end_grace: Option<Duration>) -> Option<ExitStatus> {
        if self.stopped {
            return None;
        }
        self.stopped = true;
        self.stdin = None;
        if let Some(grace) = end_grace {
            self.pump_until(grace, |session| session.exited());
        }
        let exited = self.exited();
        if group_alive(self.pid) {
            self.signal(libc::SIGTERM);
            self.pump_until(TERM_GRACE, |session| !group_alive(session.pid));
            self.signal(libc::SIGKILL);
        }
        let _ = self.drain(true);
        let status = self.child.wait().ok();
        if exited {
            status
        } else {
            None
        }
    }

    fn signal(&self, signal: libc::c_int) {
        // SAFETY: kill(2) with a negative pid signals the process group `self.pid` leads; the
        // shell is not reaped yet, so that group id is still ours.
        unsafe { libc::kill(-self.pid, signal) };
    }

    /// Drains stdout (discarded) and stderr until `done` or `wait` passes, so that a backend
    /// blocked on a full pipe can go on to exit.
    fn pump_until(&mut self, wait: Duration, done: impl Fn(&Session) -> bool) {
        let deadline = Instant::now() + wait;
        while !done(self) {
            let now = Instant::now();
            if now >= deadline {
                return;
            }
            self.wait_for_io(false, POLL_INTERVAL.min(deadline - now));
            if self.drain(true).is_err() {
                self.stdout_open = false;
            }
        }
    }

    /// Stops the backend at once.
    fn kill(mut self) {
        self.stop(None);
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.stop(None);
    }
}

/// A backend run as a process.
pub struct ProcessBackend {
    command: String,
    timeout: Duration,
    log: Arc<Mutex<Log>>,
    capabilities: Capabilities,
    state: Mutex<State>,
}

/// The running session, if any, and the record of failed starts.
struct State {
    session: Option<Session>,
    failed_starts: u32,
    /// Why the backend is no longer started, once it is not.
    given_up: Option<String>,
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

impl ProcessBackend {
    /// Starts the backend and reads its hello. The log file is emptied first: it holds this
    /// run's stderr only.
    pub fn start(
        command: &str,
        timeout: Duration,
        log: PathBuf,
    ) -> Result<ProcessBackend, StartError> {
        let log = Arc::new(Mutex::new(Log::create(&log).map_err(StartError::Log)?));
        let (session, capabilities) = Self::handshake(command, timeout, &log)?;
        Ok(ProcessBackend {
            command: command.to_owned(),
            timeout,
            log,
            capabilities,
            state: Mutex::new(State {
                session: Some(session),
                failed_starts: 0,
                given_up: None,
            }),
        })
    }

    pub fn capabilities(&self) -> &Capabilities {
        &self.capabilities
    }

    fn handshake(
        command: &str,
        timeout: Duration,
        log: &Arc<Mutex<Log>>,
    ) -> Result<(Session, Capabilities), StartError> {
        let mut session = Session::start(command, log).map_err(StartError::Spawn)?;
        let reply = session
            .exchange(&hello_request(), timeout, MIN_REPLY_LINE_LIMIT)
            .map_err(|trouble| {
                StartError::Handshake(format!(
                    "backend `{command}` failed the handshake: {}",
                    session.fail(trouble)
                ))
            })?;
        match serde_json::from_str::<Reply>(&reply) {
            Ok(Reply::Hello {
                protocol,
                name,
                ops,
                dtypes,
                targets,
                attributes,
                build_only,
            }) if protocol == PROTOCOL_VERSION => {
                match Capabilities::from_hello(
                    name,
                    ops,
                    dtypes.unwrap_or_default(),
                    targets,
                    attributes,
                ) {
                    Ok(capabilities) => Ok((
                        session,
                        Capabilities {
                            build_only,
                            ..capabilities
                        },
                    )),
                    Err(e) => {
                        session.kill();
                        Err(StartError::Hello(format!(
                            "the hello of backend `{command}` names {e}"
                        )))
                    }
                }
            }
            Ok(Reply::Hello { protocol, .. }) => {
                session.kill();
                Err(StartError::Protocol {
                    backend: protocol,
                    runner: PROTOCOL_VERSION,
                })
            }
            _ => Err(StartError::Handshake(session.fail_with(format!(
                "backend `{command}` answered the hello with {reply:?}"
            )))),
        }
    }

    /// Turns a reply line into an outcome, or says why it is garbage. The flag says whether
    /// the stream is out of step (and the process must be restarted).
    fn interpret(id: &str, line: &str, build_only: bool) -> Result<Outcome, (String, bool)> {
        let reply: Reply = serde_json::from_str(line).map_err(|e| {
            (
                format!("the backend's reply is not a valid message ({e}): {line:.200}"),
                true,
            )
        })?;
        if reply.id() != Some(id) {
            return Err((
                format!(
                    "the backend answered {:?} to case {id:?}: {line:.200}",
                    reply.id()
                ),
                true,
            ));
        }
        Ok(match reply {
            Reply::Ok { outputs, .. } => {
                let mut tensors = Vec::with_capacity(outputs.len());
                for (position, output) in outputs.iter().enumerate() {
                    tensors.push(
                        output
                            .decode()
                            .map_err(|e| (format!("output {position}: {e}"), false))?,
                    );
                }
                Outcome::Outputs(tensors)
            }
            // Only a backend that declared it may answer without values: a `built` answer
            // from any other would otherwise be judged on shapes alone.
            Reply::Built { .. } if !build_only => {
                return Err((
                    format!(
                        "the backend answered `built` to case {id:?}, but its hello does not declare `build_only`: {line:.200}"
                    ),
                    true,
                ))
            }
            Reply::Built { outputs, .. } => {
                let mut built = Vec::with_capacity(outputs.len());
                for (position, output) in outputs.into_iter().enumerate() {
                    let dtype = DType::from_name(&output.dtype).ok_or_else(|| {
                        (
                            format!("output {position}: unknown dtype {:?}", output.dtype),
                            false,
                        )
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
                        (
                            format!(
                                "the backend reported an unknown error kind {name:?}: {}",
                                message.as_deref().unwrap_or("")
                            ),
                            false,
                        )
                    })?),
                },
                message: message.unwrap_or_default(),
            },
            Reply::Unsupported { reason, .. } => {
                Outcome::Unsupported(reason.unwrap_or_else(|| "unsupported by the backend".into()))
            }
            Reply::Hello { .. } => unreachable!("a hello has no id"),
        })
    }
}

impl Backend for ProcessBackend {
    fn name(&self) -> String {
        self.capabilities.name.clone()
    }

    fn build_only(&self) -> bool {
        self.capabilities.build_only
    }

    fn supports(&self, case: &Case) -> Result<(), Exclusion> {
        let op = case.op.name();
        let backend = &self.capabilities.name;
        if !self.capabilities.ops.contains(op) {
            return Err(Exclusion {
                by: format!("op {op}"),
                reason: format!("{backend} does not implement {op}"),
            });
        }
        let targets: Vec<&String> = self.capabilities.targets.iter().collect();
        if let Some((target, reason)) = case.unsupported_reason(&targets) {
            return Err(Exclusion {
                by: format!("target {target}"),
                reason: format!("restricted on {target}: {reason}"),
            });
        }
        // Every case using an undeclared value is left out, error cases too: the value names
        // a behaviour the backend does not have, so it could not tell which rule it breaks.
        for (attribute, values) in self
            .capabilities
            .attributes
            .get(&case.op)
            .into_iter()
            .flatten()
        {
            let declarable = declarable(case.op, attribute).expect("validated in the hello");
            if let Some(value) = (declarable.used)(&case.invocation.attrs)
                .into_iter()
                .find(|v| !values.contains(v))
            {
                return Err(Exclusion {
                    by: format!("{op} {attribute}={value}"),
                    reason: format!("{backend} does not support {op} with {attribute} {value}"),
                });
            }
        }
        let excluded = self.excluded_dtypes(case);
        // An error case is sent anyway: the backend must still reject what it cannot run.
        if !excluded.is_empty() && matches!(case.expect, Expectation::Outputs(_)) {
            let names: Vec<&str> = excluded.iter().map(|d| d.name()).collect();
            return Err(Exclusion {
                by: dtype_declaration(case, &excluded),
                reason: format!("{backend} does not support {op} in {}", names.join(", ")),
            });
        }
        Ok(())
    }

    fn excluded_dtypes(&self, case: &Case) -> Vec<DType> {
        match self.capabilities.dtypes.get(case.op.name()) {
            Some(listed) => trial_dtypes(case)
                .into_iter()
                .filter(|d| !listed.contains(d.name()))
                .collect(),
            None => Vec::new(),
        }
    }

    fn run(&self, case: &Case) -> Result<Outcome, BackendError> {
        let id = case.trial_name();
        let request = run_request(&id, &case.invocation);
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(reason) = &state.given_up {
            return Err(BackendError::NotRun(reason.clone()));
        }
        if state.session.is_none() {
            match Self::handshake(&self.command, self.timeout, &self.log) {
                Ok((session, _)) => {
                    state.session = Some(session);
                    state.failed_starts = 0;
                }
                Err(e) => {
                    state.failed_starts += 1;
                    if state.failed_starts < MAX_FAILED_STARTS {
                        return Err(BackendError::Broken(format!(
                            "could not restart the backend: {e}"
                        )));
                    }
                    state.given_up = Some(format!(
                        "the backend failed to start {MAX_FAILED_STARTS} times in a row and is not started again (last: {e})"
                    ));
                    return Err(BackendError::Broken(format!(
                        "could not restart the backend: {e}; that is {MAX_FAILED_STARTS} failed starts in a row: it is not started again and the remaining cases are not run"
                    )));
                }
            }
        }
        let session = state.session.as_mut().expect("started above");
        let failure = match session.exchange(&request, self.timeout, reply_line_limit(case)) {
            Ok(line) => match Self::interpret(&id, &line, self.capabilities.build_only) {
                Ok(outcome) => return Ok(outcome),
                Err((message, false)) => return Err(BackendError::Broken(message)),
                Err((message, true)) => session.fail_with(message),
            },
            Err(trouble) => session.fail(trouble),
        };
        state.session = None;
        let log = self.log.lock().unwrap_or_else(|p| p.into_inner());
        Err(BackendError::Broken(format!(
            "{failure}\nthe backend was stopped and will be restarted (its stderr is in {})",
            log.path.display()
        )))
    }
}

impl Drop for ProcessBackend {
    fn drop(&mut self) {
        let state = self.state.get_mut().unwrap_or_else(|p| p.into_inner());
        if let Some(mut session) = state.session.take() {
            // Closing stdin is the protocol's "end": the backend has the per-case timeout to
            // exit, then its process group is stopped, children included.
            session.stop(Some(self.timeout));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_plain_command_is_run_by_exec() {
        assert_eq!(
            shell_line("python3 runner/backends/numpy/backend.py --x=1"),
            "exec python3 runner/backends/numpy/backend.py --x=1"
        );
        for compound in [
            "cd x && ./backend",
            "FOO=1 ./backend",
            "./backend 2>err.log",
            "read h; echo hi",
            "./backend 'quoted arg'",
            "",
        ] {
            assert_eq!(shell_line(compound), compound);
        }
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
