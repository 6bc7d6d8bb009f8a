//! An external backend: one process per run, JSON Lines over its stdin/stdout
//! (docs/protocol.md), its stderr appended to a log file.
//!
//! Cases are sent one at a time. A backend that exits, does not answer within the timeout, or
//! answers out of step (bad JSON, another case's id) fails that case; it is then killed and
//! started again for the next case, so one bad case never hides the others.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::OpenOptions;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::Mutex;
use std::thread;
use std::time::Duration;

use opspec::spec::{Case, Expectation, TARGETS};
use opspec::{DType, ErrorKind, Op};

use crate::backend::{trial_dtypes, Backend, Outcome};
use crate::protocol::{hello_request, run_request, Reply, PROTOCOL_VERSION};

/// What the backend said it can do in its hello.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Capabilities {
    pub name: String,
    pub ops: BTreeSet<String>,
    /// Per op, the dtypes it supports; an op absent here supports every dtype.
    pub dtypes: BTreeMap<String, BTreeSet<String>>,
    pub targets: BTreeSet<String>,
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
        })
    }
}

/// A running backend process.
struct Session {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<std::io::Result<String>>,
}

impl Session {
    fn start(command: &str, log: &PathBuf) -> Result<Session, String> {
        // Relative paths in the command are relative to the repository root, wherever cargo
        // runs the test binary from.
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
        let log_file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .map_err(|e| format!("cannot open backend log {}: {e}", log.display()))?;
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(command)
            .current_dir(&root)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(log_file))
            .spawn()
            .map_err(|e| format!("cannot start backend `{command}`: {e}"))?;
        let stdin = child.stdin.take().expect("piped");
        let stdout = child.stdout.take().expect("piped");
        let (sender, lines) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        Ok(Session {
            child,
            stdin,
            lines,
        })
    }

    /// Sends one line and waits for one line back.
    fn exchange(&mut self, line: &str, timeout: Duration) -> Result<String, String> {
        writeln!(self.stdin, "{line}")
            .and_then(|()| self.stdin.flush())
            .map_err(|e| format!("cannot write to the backend ({e}); {}", self.status()))?;
        match self.lines.recv_timeout(timeout) {
            Ok(Ok(reply)) => Ok(reply),
            Ok(Err(e)) => Err(format!("cannot read from the backend: {e}")),
            Err(RecvTimeoutError::Timeout) => Err(format!(
                "the backend did not answer within {} s (hung?)",
                timeout.as_secs_f64()
            )),
            Err(RecvTimeoutError::Disconnected) => Err(format!(
                "the backend closed its output without answering: {}",
                self.status()
            )),
        }
    }

    fn status(&mut self) -> String {
        // Give a crashing process a moment to be reaped so its status is known.
        for _ in 0..50 {
            if let Ok(Some(status)) = self.child.try_wait() {
                return format!("it exited ({status})");
            }
            thread::sleep(Duration::from_millis(10));
        }
        "it is still running".into()
    }

    fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A backend run as a process.
pub struct ProcessBackend {
    command: String,
    timeout: Duration,
    log: PathBuf,
    capabilities: Capabilities,
    session: Mutex<Option<Session>>,
}

impl ProcessBackend {
    /// Starts the backend and reads its hello.
    pub fn start(command: &str, timeout: Duration, log: PathBuf) -> Result<ProcessBackend, String> {
        let (session, capabilities) = Self::handshake(command, timeout, &log)?;
        Ok(ProcessBackend {
            command: command.to_owned(),
            timeout,
            log,
            capabilities,
            session: Mutex::new(Some(session)),
        })
    }

    pub fn capabilities(&self) -> &Capabilities {
        &self.capabilities
    }

    fn handshake(
        command: &str,
        timeout: Duration,
        log: &PathBuf,
    ) -> Result<(Session, Capabilities), String> {
        let mut session = Session::start(command, log)?;
        let reply = session
            .exchange(&hello_request(), timeout)
            .map_err(|e| format!("backend `{command}` failed the handshake: {e}"))?;
        match serde_json::from_str::<Reply>(&reply) {
            Ok(Reply::Hello {
                protocol,
                name,
                ops,
                dtypes,
                targets,
            }) if protocol == PROTOCOL_VERSION => {
                match Capabilities::from_hello(name, ops, dtypes.unwrap_or_default(), targets) {
                    Ok(capabilities) => Ok((session, capabilities)),
                    Err(e) => {
                        session.kill();
                        Err(format!("the hello of backend `{command}` names {e}"))
                    }
                }
            }
            Ok(Reply::Hello { protocol, .. }) => {
                session.kill();
                Err(format!(
                    "backend speaks protocol {protocol}, the runner {PROTOCOL_VERSION}"
                ))
            }
            _ => {
                session.kill();
                Err(format!(
                    "backend `{command}` answered the hello with {reply:?}"
                ))
            }
        }
    }

    /// Turns a reply line into an outcome, or says why it is garbage. The flag says whether
    /// the stream is out of step (and the process must be restarted).
    fn interpret(id: &str, line: &str) -> Result<Outcome, (String, bool)> {
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

    fn supports(&self, case: &Case) -> Result<(), String> {
        let op = case.op.name();
        if !self.capabilities.ops.contains(op) {
            return Err(format!(
                "{} does not implement {op}",
                self.capabilities.name
            ));
        }
        let targets: Vec<&String> = self.capabilities.targets.iter().collect();
        if let Some((target, reason)) = case.unsupported_reason(&targets) {
            return Err(format!("restricted on {target}: {reason}"));
        }
        let excluded = self.excluded_dtypes(case);
        // An error case is sent anyway: the backend must still reject what it cannot run.
        if !excluded.is_empty() && matches!(case.expect, Expectation::Outputs(_)) {
            let names: Vec<&str> = excluded.iter().map(|d| d.name()).collect();
            return Err(format!(
                "{} does not support {op} in {}",
                self.capabilities.name,
                names.join(", ")
            ));
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

    fn run(&self, case: &Case) -> Result<Outcome, String> {
        let id = case.trial_name();
        let request = run_request(&id, &case.invocation);
        let mut slot = self
            .session
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if slot.is_none() {
            let (session, _) = Self::handshake(&self.command, self.timeout, &self.log)
                .map_err(|e| format!("could not restart the backend: {e}"))?;
            *slot = Some(session);
        }
        let session = slot.as_mut().expect("started above");
        let failure = match session.exchange(&request, self.timeout) {
            Ok(line) => match Self::interpret(&id, &line) {
                Ok(outcome) => return Ok(outcome),
                Err((message, false)) => return Err(message),
                Err((message, true)) => message,
            },
            Err(message) => message,
        };
        if let Some(session) = slot.take() {
            session.kill();
        }
        Err(format!(
            "{failure}; the backend was stopped and will be restarted (its stderr is in {})",
            self.log.display()
        ))
    }
}

impl Drop for ProcessBackend {
    fn drop(&mut self) {
        let slot = self
            .session
            .get_mut()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(Session {
            mut child, stdin, ..
        }) = slot.take()
        {
            // Closing stdin is the protocol's "end"; a backend that ignores it is killed.
            drop(stdin);
            for _ in 0..100 {
                if let Ok(Some(_)) = child.try_wait() {
                    return;
                }
                thread::sleep(Duration::from_millis(10));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}
