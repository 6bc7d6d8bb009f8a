//! The child-process mechanics of a backend: a command started in a process group of its own,
//! one line sent and one read back within a timeout, its stderr copied to a log, and every
//! process it started stopped and reaped. What the lines mean is the protocol's business
//! (`process.rs`); this module imports nothing else of the runner.
//!
//! Each start is `sh -c` in a process group of its own (`exec` for a plain command, so that
//! no shell sits between the runner and the program), so that stopping it reaches every
//! process it started: TERM to the group, [`TERM_GRACE`], KILL to the group, then the shell is
//! reaped. A process that leaves the group (`setsid`) is reached too: the runner is the
//! subreaper of its descendants (`PR_SET_CHILD_SUBREAPER`), so an orphan is adopted by the
//! runner rather than by init, and every process of a start carries [`SESSION_VARIABLE`] in its
//! environment; the processes of a start, found by their parents or by that variable, are
//! signalled with the group and reaped. One thread does the whole exchange with `poll(2)`: the
//! request is written, the reply read and stderr copied without blocking, so the timeout covers
//! writing as well as reading, and the shell's exit is noticed while waiting even when a child
//! of the backend still holds its stdout.
//!
//! The started process gets a parent-death signal (`PR_SET_PDEATHSIG`, KILL): a runner that
//! is killed outright leaves no backend behind. The kernel sends it when the *thread* that
//! started the process ends, so every start is made by one thread that lasts as long as the
//! runner. The signal does not pass to the backend's own children, so a guard process, started
//! with the first backend, kills what carries [`SESSION_VARIABLE`] once the runner is gone
//! (`start_guard`). The starts not yet stopped are listed, so that a runner stopped by a signal can
//! stop them all ([`kill_every_start`]).

use std::collections::{BTreeMap, BTreeSet};
use std::fs::{File, OpenOptions};
use std::io::{ErrorKind as IoErrorKind, Read, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex, Once, OnceLock};
use std::time::{Duration, Instant};

/// The smallest reply line limit of a case, in bytes (64 MiB): a case's own limit
/// (`process::reply_line_limit`) is never below it.
pub const MIN_REPLY_LINE_LIMIT: usize = 64 << 20;

/// Bytes of the backend's stderr kept in the log per run (16 MiB); the rest is dropped, with a
/// note in the log. The log is emptied when the run starts.
pub const BACKEND_LOG_LIMIT: u64 = 16 << 20;

/// Time a backend's processes have to end after TERM before they are killed.
pub(crate) const TERM_GRACE: Duration = Duration::from_millis(500);

/// The environment variable every process of a backend start inherits: the runner's process id
/// and the start's number, so that a process that left the start's process group is still known
/// as one of its own.
pub(crate) const SESSION_VARIABLE: &str = "OPSPEC_BACKEND_SESSION";

/// How often the shell's exit is checked while waiting for a reply.
const POLL_INTERVAL: Duration = Duration::from_millis(20);

/// Reads of stdout (64 KiB each) between two checks of the reply line's length.
const STDOUT_READS: usize = 16;

/// How much of a start's stderr a failure quotes: its last lines, from its last bytes.
const STDERR_TAIL_LINES: usize = 5;
const STDERR_TAIL_BYTES: usize = 4096;

/// A partial stderr line of a prefixed session is written out at this length (a line that
/// never ends must not grow without bound).
const PARTIAL_LINE_LIMIT: usize = 4096;

/// How long the processes of a stopped start have to disappear and be reaped.
const REAP_WAIT: Duration = Duration::from_secs(2);

/// The backend log of a run: emptied when the run starts, capped at [`BACKEND_LOG_LIMIT`].
pub(crate) struct Log {
    path: PathBuf,
    file: Option<File>,
    written: u64,
    cut: bool,
}

impl Log {
    pub(crate) fn create(path: &Path) -> Result<Log, String> {
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

    /// Where the log is.
    /// Writes a line of the runner's own into the log.
    pub(crate) fn note(&mut self, text: &str) {
        self.write(text.as_bytes());
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
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
pub(crate) enum Trouble {
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
    /// The run was stopped (`--fail-fast`) while waiting.
    Halted,
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

/// Makes this process the subreaper of its descendants: a process whose parent ends is adopted
/// by the runner instead of init, so that it can be found, stopped and reaped with its start.
/// Also starts the guard ([`start_guard`]).
fn become_subreaper() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // SAFETY: prctl with integer arguments only. Where it fails (not Linux, an old kernel)
        // the session variable still finds the processes that left the group.
        unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };
        start_guard();
    });
}

/// What the guard runs: it waits for the end of its input, a pipe only the runner writes to,
/// which comes when the runner ends however it ends (SIGKILL too); then it kills (KILL) every
/// process whose environment holds the runner's [`SESSION_VARIABLE`] prefix (`$1`), again until
/// none is found (a process may fork meanwhile), at most 20 rounds.
const GUARD_SCRIPT: &str = r#"cat >/dev/null
rounds=0
while [ $rounds -lt 20 ]; do
  found=$(grep -lzs -e "^OPSPEC_BACKEND_SESSION=$1\." /proc/[0-9]*/environ 2>/dev/null)
  [ -z "$found" ] && exit 0
  for file in $found; do
    pid=${file#/proc/}
    kill -9 "${pid%/environ}" 2>/dev/null
  done
  rounds=$((rounds + 1))
done"#;

/// Starts the guard: a small `sh` in a process group of its own (so that a Ctrl-C to the
/// runner's group does not end it first), without the runner's session variable, reading a pipe
/// whose other end only the runner holds (it is never written, nor closed before the runner
/// exits). A runner killed outright takes its backends with it by their parent-death signal,
/// but not their descendants: the guard kills those that are left, found by
/// [`SESSION_VARIABLE`] ([`GUARD_SCRIPT`]). After a runner that ended normally it finds none.
fn start_guard() {
    static GUARD: OnceLock<ChildStdin> = OnceLock::new();
    let mut guard = Command::new("sh");
    guard
        .arg("-c")
        .arg(GUARD_SCRIPT)
        .arg("opspec-guard")
        .arg(std::process::id().to_string())
        .current_dir("/")
        .process_group(0)
        .env_remove(SESSION_VARIABLE)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    match guard.spawn() {
        Ok(mut child) => {
            if let Some(input) = child.stdin.take() {
                let _ = GUARD.set(input);
            }
        }
        Err(e) => eprintln!(
            "warning: cannot start the guard that stops backend processes left if the runner is killed: {e}"
        ),
    }
}

/// Each process's parent and whether it is a zombie, from `/proc`.
fn process_table() -> BTreeMap<i32, (i32, bool)> {
    let mut table = BTreeMap::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return table;
    };
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<i32>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // `pid (comm) state ppid ...`: the command may hold spaces and parentheses.
        let Some((_, fields)) = stat.rsplit_once(')') else {
            continue;
        };
        let fields: Vec<&str> = fields.split_whitespace().collect();
        if let (Some(state), Some(Ok(ppid))) = (fields.first(), fields.get(1).map(|p| p.parse())) {
            table.insert(pid, (ppid, *state == "Z"));
        }
    }
    table
}

/// Whether `pid` is a live process (not a zombie).
fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit_once(')')
            .and_then(|(_, fields)| fields.split_whitespace().next())
            .is_some_and(|state| state != "Z")
    })
}

/// Whether the environment `pid` started with holds `entry` (`NAME=value`).
fn has_environment(pid: i32, entry: &[u8]) -> bool {
    std::fs::read(format!("/proc/{pid}/environ"))
        .is_ok_and(|environ| environ.split(|&b| b == 0).any(|e| e == entry))
}

/// Reaps `pids` once they have ended, waiting at most [`REAP_WAIT`]: those that are (or become,
/// when their parent ends) children of this process, as the subreaper. A pid that is not a
/// child of this process and no longer exists is done.
fn reap(pids: &BTreeSet<i32>) {
    let deadline = Instant::now() + REAP_WAIT;
    let mut left: Vec<i32> = pids.iter().copied().collect();
    while !left.is_empty() {
        left.retain(|&pid| {
            let mut status = 0;
            // SAFETY: waitpid on one pid with WNOHANG; `status` is valid for writes.
            match unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) } {
                0 => true,
                -1 => std::path::Path::new(&format!("/proc/{pid}")).exists(),
                _ => false,
            }
        });
        if Instant::now() >= deadline {
            return;
        }
        if !left.is_empty() {
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

/// The starts not yet stopped: the process group of each, with its [`SESSION_VARIABLE`]
/// value.
static LIVE: Mutex<BTreeMap<i32, String>> = Mutex::new(BTreeMap::new());

fn live() -> std::sync::MutexGuard<'static, BTreeMap<i32, String>> {
    LIVE.lock().unwrap_or_else(|p| p.into_inner())
}

/// Kills (KILL) every process of every start not yet stopped: its process group and the
/// processes carrying its [`SESSION_VARIABLE`], without waiting; for a runner about to exit.
pub(crate) fn kill_every_start() {
    let live = live();
    let table = process_table();
    for (&pgid, token) in live.iter() {
        // SAFETY: kill(2) of a process group this runner started and has not reaped.
        unsafe { libc::kill(-pgid, libc::SIGKILL) };
        let entry = format!("{SESSION_VARIABLE}={token}").into_bytes();
        for &pid in table.keys() {
            if has_environment(pid, &entry) {
                // SAFETY: kill(2) of one process of that start.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
        }
    }
}

/// Spawns `command` on a thread that lasts as long as the process: the parent-death signal set
/// in the child follows the thread that forked it, not the process.
fn spawn_lasting(command: Command) -> std::io::Result<Child> {
    type Request = (Command, mpsc::Sender<std::io::Result<Child>>);
    static SPAWNER: OnceLock<Mutex<mpsc::Sender<Request>>> = OnceLock::new();
    let gone = || std::io::Error::other("the thread that starts backends is gone");
    let spawner = SPAWNER.get_or_init(|| {
        let (requests, received) = mpsc::channel::<Request>();
        let started = std::thread::Builder::new()
            .name("backend-starts".into())
            .spawn(move || {
                for (mut command, reply) in received {
                    let _ = reply.send(command.spawn());
                }
            });
        if let Err(e) = started {
            eprintln!("warning: cannot start a thread for backend starts: {e}");
        }
        Mutex::new(requests)
    });
    let (reply, answer) = mpsc::channel();
    spawner
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .send((command, reply))
        .map_err(|_| gone())?;
    answer.recv().map_err(|_| gone())?
}

/// A running backend: the shell started for the command, leader of its own process group.
pub(crate) struct Session {
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
    /// What each stderr line gets in front of it in the log (a worker's number), if anything.
    prefix: Option<String>,
    /// A stderr line not yet complete, when lines are prefixed.
    partial: Vec<u8>,
    /// The value of [`SESSION_VARIABLE`] in this start's processes.
    token: String,
    stopped: bool,
}

impl Session {
    /// Starts `command` in `dir` (relative paths in it are relative to that folder), with
    /// `environment` added to the runner's; its stderr goes to `log`, each line behind
    /// `prefix` when given.
    pub(crate) fn start(
        command: &str,
        dir: &Path,
        environment: &[(&str, String)],
        log: &Arc<Mutex<Log>>,
        prefix: Option<String>,
    ) -> Result<Session, String> {
        static STARTS: AtomicU64 = AtomicU64::new(0);
        become_subreaper();
        let token = format!(
            "{}.{}",
            std::process::id(),
            STARTS.fetch_add(1, Ordering::Relaxed)
        );
        let mut shell = Command::new("sh");
        shell
            .arg("-c")
            .arg(shell_line(command))
            .current_dir(dir)
            .process_group(0)
            .env(SESSION_VARIABLE, &token)
            .envs(environment.iter().map(|(name, value)| (name, value)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let runner = std::process::id() as libc::pid_t;
        // SAFETY: between fork and exec only async-signal-safe calls: prctl and getppid, and
        // an error built from a number.
        unsafe {
            shell.pre_exec(move || {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                // The runner ended before the signal was set: nobody is there to stop it.
                if libc::getppid() != runner {
                    return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
                }
                Ok(())
            });
        }
        let mut child =
            spawn_lasting(shell).map_err(|e| format!("cannot start backend `{command}`: {e}"))?;
        let stdin = child.stdin.take().expect("piped");
        let stdout = child.stdout.take().expect("piped");
        let stderr = child.stderr.take().expect("piped");
        let pid = child.id() as i32;
        live().insert(pid, token.clone());
        let mut session = Session {
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
            prefix,
            partial: Vec::new(),
            token,
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
            .log_bytes(format!("[runner] started `{command}` (process group {pid})\n").as_bytes());
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

    /// Writes `bytes` of stderr to the log: as they come, or whole lines behind the prefix (so
    /// that the lines of several workers never mix).
    fn log_bytes(&mut self, bytes: &[u8]) {
        let Some(prefix) = self.prefix.as_deref() else {
            self.lock_log().write(bytes);
            return;
        };
        self.partial.extend_from_slice(bytes);
        let mut lines = Vec::new();
        while let Some(at) = self.partial.iter().position(|&b| b == b'\n') {
            lines.extend_from_slice(prefix.as_bytes());
            lines.extend(self.partial.drain(..=at));
        }
        if self.partial.len() >= PARTIAL_LINE_LIMIT {
            lines.extend_from_slice(prefix.as_bytes());
            lines.append(&mut self.partial);
            lines.push(b'\n');
        }
        if !lines.is_empty() {
            self.lock_log().write(&lines);
        }
    }

    /// Writes out the last stderr line, when it did not end.
    fn flush_partial(&mut self) {
        if !self.partial.is_empty() {
            let line = std::mem::take(&mut self.partial);
            self.log_bytes(&line);
            self.log_bytes(b"\n");
        }
    }

    fn take_stderr(&mut self, bytes: &[u8]) {
        self.log_bytes(bytes);
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
    ///
    /// `halt` ends the wait early ([`Trouble::Halted`]).
    pub(crate) fn exchange(
        &mut self,
        line: &str,
        timeout: Duration,
        limit: usize,
        halt: &AtomicBool,
    ) -> Result<String, Trouble> {
        let request = format!("{line}\n").into_bytes();
        self.converse(&request, Instant::now() + timeout, timeout, limit, halt)
    }

    /// Sends one line and waits for one line back, as [`Session::exchange`], by `deadline`
    /// (a batch's, which `timeout` says).
    pub(crate) fn exchange_by(
        &mut self,
        line: &str,
        deadline: Instant,
        timeout: Duration,
        limit: usize,
        halt: &AtomicBool,
    ) -> Result<String, Trouble> {
        let request = format!("{line}\n").into_bytes();
        self.converse(&request, deadline, timeout, limit, halt)
    }

    /// Waits for the next line of a reply already asked for (the second and later replies to
    /// a batch), at most `limit` bytes long, until `deadline`; `timeout` is what a failure
    /// says the deadline was.
    pub(crate) fn next_reply(
        &mut self,
        deadline: Instant,
        timeout: Duration,
        limit: usize,
        halt: &AtomicBool,
    ) -> Result<String, Trouble> {
        self.converse(&[], deadline, timeout, limit, halt)
    }

    /// Writes `request` (may be empty) and reads one line back, both by `deadline`.
    fn converse(
        &mut self,
        request: &[u8],
        deadline: Instant,
        timeout: Duration,
        limit: usize,
        halt: &AtomicBool,
    ) -> Result<String, Trouble> {
        let mut written = 0;
        let mut scanned = 0;
        loop {
            if let Some(reply) = self.next_line(&mut scanned, limit)? {
                return Ok(reply);
            }
            if halt.load(Ordering::Relaxed) {
                return Err(Trouble::Halted);
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
    pub(crate) fn fail(&mut self, trouble: Trouble) -> String {
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
            Trouble::Halted => "the run was stopped while the backend worked on this case".into(),
        };
        format!("{what}{}", self.stderr_tail())
    }

    /// Stops the session with a garbage reply `message`: the message with the end of stderr.
    pub(crate) fn fail_with(&mut self, message: String) -> String {
        self.stop(None);
        format!("{message}{}", self.stderr_tail())
    }

    /// What the backend wrote to stdout beyond the replies read so far (a reply to a case
    /// already answered, or anything else), read without waiting; taken out of the stream.
    pub(crate) fn leftover(&mut self) -> Option<String> {
        if self.drain(false).is_err() {
            self.stdout_open = false;
        }
        if self.pending.is_empty() {
            return None;
        }
        let text = String::from_utf8_lossy(&self.pending).trim_end().to_owned();
        self.pending.clear();
        Some(text)
    }

    /// Ends the backend as the protocol's end asks: closes its stdin and gives it `grace` to
    /// exit, reading what it still writes to stdout (at most 64 KiB of it), then stops it.
    /// Gives what it wrote to stdout after its last reply, if anything.
    pub(crate) fn end(&mut self, grace: Duration) -> Option<String> {
        self.stdin = None;
        let deadline = Instant::now() + grace;
        while !self.exited() && Instant::now() < deadline {
            self.wait_for_io(false, POLL_INTERVAL.min(deadline - Instant::now()));
            if self.drain(self.pending.len() >= 1 << 16).is_err() {
                self.stdout_open = false;
            }
        }
        let leftover = self.leftover();
        self.stop(None);
        leftover
    }

    /// Closes the backend's stdin: the protocol's end.
    pub(crate) fn close_input(&mut self) {
        self.stdin = None;
    }

    /// The live processes of this start other than the shell: its descendants by parent, and
    /// those carrying its [`SESSION_VARIABLE`] (a process that left for a session of its own
    /// and whose parent ended, adopted by the runner), with their descendants.
    fn members(&self) -> BTreeSet<i32> {
        let table = process_table();
        let entry = format!("{SESSION_VARIABLE}={}", self.token).into_bytes();
        let mut children: BTreeMap<i32, Vec<i32>> = BTreeMap::new();
        for (&pid, &(ppid, _)) in &table {
            children.entry(ppid).or_default().push(pid);
        }
        let mut roots = vec![self.pid];
        roots.extend(
            table
                .iter()
                .filter(|(&pid, &(_, zombie))| {
                    pid != self.pid && !zombie && has_environment(pid, &entry)
                })
                .map(|(&pid, _)| pid),
        );
        let mut found = BTreeSet::new();
        while let Some(pid) = roots.pop() {
            for &child in children.get(&pid).into_iter().flatten() {
                if found.insert(child) {
                    roots.push(child);
                }
            }
            if pid != self.pid {
                found.insert(pid);
            }
        }
        found.remove(&self.pid);
        found
    }

    /// Stops the backend: closes its stdin, gives it `end_grace` to exit by itself (as the
    /// protocol's end asks), then TERM to its process group and every other process of the start
    /// ([`Session::members`]), [`TERM_GRACE`], KILL, and reaps the shell and those processes.
    /// Gives the shell's exit status when it had exited by itself.
    pub(crate) fn stop(&mut self, end_grace: Option<Duration>) -> Option<ExitStatus> {
        if self.stopped {
            return None;
        }
        self.stopped = true;
        self.stdin = None;
        if let Some(grace) = end_grace {
            self.pump_until(grace, |session| session.exited());
        }
        let exited = self.exited();
        let mut members = self.members();
        if group_alive(self.pid) || members.iter().any(|&pid| alive(pid)) {
            self.signal(libc::SIGTERM, &members);
            self.pump_until(TERM_GRACE, |session| {
                !group_alive(session.pid) && !members.iter().any(|&pid| alive(pid))
            });
            // Whatever was started meanwhile goes too.
            members.extend(self.members());
            self.signal(libc::SIGKILL, &members);
        }
        let _ = self.drain(true);
        self.flush_partial();
        let status = self.child.wait().ok();
        reap(&members);
        live().remove(&self.pid);
        if exited {
            status
        } else {
            None
        }
    }

    fn signal(&self, signal: libc::c_int, members: &BTreeSet<i32>) {
        // SAFETY: kill(2) with a negative pid signals the process group `self.pid` leads; the
        // shell is not reaped yet, so that group id is still ours. The members were found
        // among the start's processes just before; they are not reaped before this either.
        unsafe { libc::kill(-self.pid, signal) };
        for &pid in members {
            // SAFETY: as above, one process.
            unsafe { libc::kill(pid, signal) };
        }
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
    pub(crate) fn kill(mut self) {
        self.stop(None);
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.stop(None);
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
}
