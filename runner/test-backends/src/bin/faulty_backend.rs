//! A backend that misbehaves on purpose, to test the runner: it serves the reference
//! interpreter, except for what its flags ask.
//!
//! | flag | misbehaviour |
//! |---|---|
//! | `--crash ID` | exits with status 3 on case ID |
//! | `--hang ID` | never answers case ID |
//! | `--lie ID` | flips a bit of the output of case ID |
//! | `--endless ID` | answers case ID with a line that never ends |
//! | `--close-output ID` | closes its stdout on case ID, then hangs |
//! | `--deaf` | answers the hello, then never reads its input again |
//! | `--hang-hello` | never answers the hello |
//! | `--starts FILE --exit-before-hello K,..` | counts its starts in FILE; starts number K, .. exit (status 4) before the hello |
//! | `--starts FILE --slow-hello K,.. --slow-hello-ms MS` | counts its starts in FILE; starts number K, .. sleep MS milliseconds before the hello |
//! | `--starts FILE --hang-hello-after N` | counts its starts in FILE; from start N + 1 on, never answers the hello |
//! | `--flood BYTES` | first writes BYTES to stderr |
//! | `--ignore-eof` | stays alive (sleeping) once its input ends |
//! | `--child` | first starts a copy of itself that sleeps, holding the same stdin/stdout/stderr |
//! | `--setsid-child` | first starts a copy of itself that sleeps in a session of its own (`setsid`), out of the backend's process group |
//! | `--ignore-term` | the `--child` and `--setsid-child` copies ignore SIGTERM |
//! | `--twice ID` | answers case ID twice, both lines in one write |
//! | `--twice-late ID` | answers case ID, and again when the next request comes (before answering that one) or its input ends |
//! | `--sleep-ms MS` | sleeps MS milliseconds before answering each case (a slow engine) |
//! | `--marker TEXT` | ignored; passed on to the `--child`, to find both in `/proc` |
//! | `--idle` | sleeps (what the `--child` copy does) |
//! | `--flip-sign ID` | flips the sign bit of the first output element of case ID (no tolerance absorbs it) |
//! | `--hello JSON` | answers the hello with that line |
//! | `--unsupported PREFIX` | answers `unsupported` to every case whose id starts with PREFIX (`""`: all) |
//! | `--reject-dtypes D1,D2` | rejects every case with data (input or fill) of those dtypes as `unsupported_dtype`, as an engine without them does |
//! | `--built` | answers `built` (each output's dtype and shape, no data) where it would answer `ok`, as a build-only backend does; the hello says so only if `--hello` does |
//! | `--kindless` | leaves the `kind` out of every `error` reply |
//! | `--compose KEY@PREFIX` | names the composed path KEY in every `ok` reply to a case whose id starts with PREFIX (the hello declares it only if `--hello` does) |
//! | `--batch N` | declares `batch: N` in its hello and answers a `batch` request case by case, each reply as it is made (every flag above applies to each case as to a single one; `--sleep-ms` sleeps once per request, as a compiler builds one program per batch) |
//! | `--batch-reverse` | answers a batch's cases last first |
//! | `--batch-drop ID` | gives no reply to case ID when it comes in a batch (alone, it is answered) |
//! | `--env-lie VAR@ID` | flips a bit of the output of case ID when the environment variable VAR is `1`; its hello names VAR in `env` (unless `--hello` is given) |
//!
//! Every sleep is an hour: the runner must end these processes itself.

use std::io::{BufRead, Write};
use std::time::Duration;

use opspec::tensor::Buffer;
use opspec::{ErrorKind, OpError, Tensor};
use opspec_runner::serve;

fn sleep_an_hour() -> ! {
    std::thread::sleep(Duration::from_secs(3600));
    std::process::exit(0)
}

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let given = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1).cloned())
    };
    let named = |flag: &str| given(flag).unwrap_or_default();
    let flag = |flag: &str| args.iter().any(|a| a == flag);
    if flag("--idle") {
        if flag("--ignore-term") {
            // SAFETY: sets SIGTERM's disposition; nothing else runs yet.
            unsafe { libc::signal(libc::SIGTERM, libc::SIG_IGN) };
        }
        sleep_an_hour();
    }
    if flag("--child") {
        let mut child = std::process::Command::new(std::env::current_exe()?);
        child.arg("--idle");
        if flag("--ignore-term") {
            child.arg("--ignore-term");
        }
        if flag("--marker") {
            child.args(["--marker", &named("--marker")]);
        }
        child.spawn()?;
    }
    if flag("--setsid-child") {
        use std::os::unix::process::CommandExt;
        let mut child = std::process::Command::new(std::env::current_exe()?);
        child.arg("--idle");
        if flag("--ignore-term") {
            child.arg("--ignore-term");
        }
        if flag("--marker") {
            child.args(["--marker", &named("--marker")]);
        }
        // SAFETY: setsid is async-signal-safe; the closure touches nothing else.
        unsafe {
            child.pre_exec(|| {
                libc::setsid();
                Ok(())
            });
        }
        child.spawn()?;
    }
    if let Ok(bytes) = named("--flood").parse::<usize>() {
        let line = [b'e'; 1023]
            .iter()
            .chain(b"\n")
            .copied()
            .collect::<Vec<u8>>();
        let mut stderr = std::io::stderr().lock();
        for _ in 0..bytes.div_ceil(line.len()) {
            stderr.write_all(&line)?;
        }
    }
    let starts = named("--starts");
    if !starts.is_empty() {
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&starts)?;
        // Copies started at once must each get their own number: counting and appending are
        // one step under an exclusive lock (released when the file is closed).
        use std::os::fd::AsRawFd;
        // SAFETY: flock on a descriptor this process holds open.
        unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) };
        let count = std::fs::read_to_string(&starts)?.lines().count() + 1;
        writeln!(file, "started")?;
        drop(file);
        let limit: usize = named("--hang-hello-after").parse().unwrap_or(usize::MAX);
        if count > limit {
            eprintln!("faulty backend: start {count}, hanging on the hello");
            sleep_an_hour();
        }
        let listed = |flag: &str| named(flag).split(',').any(|k| k == count.to_string());
        if listed("--exit-before-hello") {
            eprintln!("faulty backend: start {count}, exiting before the hello");
            std::process::exit(4);
        }
        if listed("--slow-hello") {
            let ms = named("--slow-hello-ms").parse().unwrap_or(0);
            eprintln!("faulty backend: start {count}, {ms} ms before the hello");
            std::thread::sleep(Duration::from_millis(ms));
        }
    }
    if flag("--hang-hello") {
        eprintln!("faulty backend: hanging on the hello");
        sleep_an_hour();
    }
    let (crash, hang, mut lie) = (named("--crash"), named("--hang"), named("--lie"));
    // A misbehaviour only some environments show, as an engine's version switch does.
    let env_lie = named("--env-lie");
    let env_var = env_lie.split_once('@').map(|(var, id)| {
        if std::env::var(var).as_deref() == Ok("1") {
            lie = id.to_owned();
        }
        var.to_owned()
    });
    let (endless, close_output) = (named("--endless"), named("--close-output"));
    let mut stdin = std::io::stdin().lock();
    let stdout = std::io::stdout().lock();
    if flag("--deaf") {
        let mut hello = String::new();
        stdin.read_line(&mut hello)?;
        serve(
            hello.as_bytes(),
            stdout,
            "faulty",
            &[],
            opspec::tensor::Limits::DEFAULT,
            |_, _| unreachable!(),
        )?;
        eprintln!("faulty backend: no longer reading");
        sleep_an_hour();
    }
    let (flip_sign, reject) = (named("--flip-sign"), named("--reject-dtypes"));
    let (hello, unsupported) = (given("--hello"), given("--unsupported"));
    let (twice, twice_late) = (named("--twice"), named("--twice-late"));
    let sleep = Duration::from_millis(named("--sleep-ms").parse().unwrap_or(0));
    let mut stdout = stdout;
    let batch: Option<u64> = given("--batch").and_then(|n| n.parse().ok());
    let batch_drop = named("--batch-drop");
    // The reply to repeat when the next request comes (`--twice-late`).
    let mut late: Option<Vec<u8>> = None;
    for line in stdin.lines() {
        let line = line?;
        if let Some(reply) = late.take() {
            stdout.write_all(&reply)?;
            stdout.flush()?;
        }
        let request: serde_json::Value = serde_json::from_str(&line).unwrap_or_default();
        if matches!(request["type"].as_str(), Some("run" | "batch")) && !sleep.is_zero() {
            std::thread::sleep(sleep);
        }
        // A batch: each case as a request of its own, in the order asked.
        let lines = match (request["type"].as_str(), request["cases"].as_array()) {
            (Some("batch"), Some(cases)) => {
                let mut cases: Vec<&serde_json::Value> = cases
                    .iter()
                    .filter(|c| batch_drop.is_empty() || c["id"] != batch_drop.as_str())
                    .collect();
                if flag("--batch-reverse") {
                    cases.reverse();
                }
                cases.iter().map(|c| c.to_string()).collect()
            }
            (Some("hello"), _) if (batch.is_some() || env_var.is_some()) && hello.is_none() => {
                let mut reply = Vec::new();
                serve(
                    line.as_bytes(),
                    &mut reply,
                    "faulty",
                    &[],
                    opspec::tensor::Limits::DEFAULT,
                    |_, _| unreachable!(),
                )?;
                let mut hello: serde_json::Value =
                    serde_json::from_slice(&reply).unwrap_or_default();
                if batch.is_some() {
                    hello["batch"] = batch.into();
                }
                if let Some(var) = &env_var {
                    hello["env"] = serde_json::json!([var]);
                }
                writeln!(stdout, "{hello}")?;
                stdout.flush()?;
                continue;
            }
            _ => vec![line],
        };
        for line in lines {
            let request: serde_json::Value = serde_json::from_str(&line).unwrap_or_default();
            let id = request["id"].as_str().unwrap_or_default();
            if !id.is_empty() && (id == twice || id == twice_late) {
                let mut reply = Vec::new();
                serve(
                    line.as_bytes(),
                    &mut reply,
                    "faulty",
                    &[],
                    opspec::tensor::Limits::DEFAULT,
                    |_, invocation| {
                        opspec::ops::evaluate(invocation, opspec::tensor::Limits::DEFAULT)
                    },
                )?;
                let mut written = reply.clone();
                if id == twice {
                    written.extend_from_slice(&reply);
                } else {
                    late = Some(reply);
                }
                stdout.write_all(&written)?;
                stdout.flush()?;
                continue;
            }
            let reply = match (&hello, &unsupported, request["type"].as_str()) {
            (Some(hello), _, Some("hello")) => Some(hello.clone()),
            (_, Some(prefix), Some("run")) if id.starts_with(prefix.as_str()) => Some(
                serde_json::json!({"type": "unsupported", "id": id, "reason": format!("faulty backend: nothing starting with {prefix:?}")})
                    .to_string(),
            ),
            _ => None,
        };
            if let Some(reply) = reply {
                writeln!(stdout, "{reply}")?;
                stdout.flush()?;
                continue;
            }
            // One request at a time through the reference's server.
            let mut answer = Vec::new();
            serve(
                line.as_bytes(),
                &mut answer,
                "faulty",
                &[],
                opspec::tensor::Limits::DEFAULT,
                |id, invocation| {
                    misbehave(
                        id,
                        invocation,
                        (&crash, &hang, &lie),
                        (&endless, &close_output),
                        &flip_sign,
                        &reject,
                    )
                },
            )?;
            let answer = rewrite(&answer, flag("--built"), flag("--kindless"));
            stdout.write_all(&compose(answer, id, &named("--compose")))?;
            stdout.flush()?;
        }
    }
    if let Some(reply) = late.take() {
        stdout.write_all(&reply)?;
        stdout.flush()?;
    }
    if flag("--ignore-eof") {
        eprintln!("faulty backend: input ended, staying alive");
        sleep_an_hour();
    }
    Ok(())
}

/// The reference server's reply lines with `ok` turned into `built` and the error kinds left
/// out, as asked.
fn rewrite(answer: &[u8], built: bool, kindless: bool) -> Vec<u8> {
    if !built && !kindless {
        return answer.to_vec();
    }
    let mut out = Vec::new();
    for line in answer.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        let mut reply: serde_json::Value = serde_json::from_slice(line).unwrap_or_default();
        match reply["type"].as_str() {
            Some("ok") if built => {
                reply["type"] = "built".into();
                for output in reply["outputs"].as_array_mut().into_iter().flatten() {
                    if let Some(fields) = output.as_object_mut() {
                        fields.remove("data");
                    }
                }
            }
            Some("error") if kindless => {
                if let Some(fields) = reply.as_object_mut() {
                    fields.remove("kind");
                }
            }
            _ => {}
        }
        out.extend(reply.to_string().bytes());
        out.push(b'\n');
    }
    out
}

/// The reply line `answer` to case `id`, naming the composed path KEY when `compose` is
/// `KEY@PREFIX` and the id starts with PREFIX.
fn compose(answer: Vec<u8>, id: &str, compose: &str) -> Vec<u8> {
    let Some((key, prefix)) = compose.split_once('@') else {
        return answer;
    };
    let mut reply: serde_json::Value = serde_json::from_slice(&answer).unwrap_or_default();
    if !id.starts_with(prefix) || reply["type"] != "ok" {
        return answer;
    }
    reply["composed"] = serde_json::json!([key]);
    format!("{reply}\n").into_bytes()
}

/// The reference's answer to a case, with the misbehaviour the flags ask for.
fn misbehave(
    id: &str,
    invocation: &opspec::Invocation,
    (crash, hang, lie): (&str, &str, &str),
    (endless, close_output): (&str, &str),
    flip_sign: &str,
    reject: &str,
) -> Result<Vec<Tensor>, OpError> {
    if id == crash {
        eprintln!("faulty backend: crashing on {id}");
        std::process::exit(3);
    }
    if id == hang {
        eprintln!("faulty backend: hanging on {id}");
        sleep_an_hour();
    }
    if id == endless {
        eprintln!("faulty backend: an endless line for {id}");
        let chunk = [b'x'; 1 << 16];
        let mut out = std::io::stdout();
        while out.write_all(&chunk).is_ok() {}
        std::process::exit(4);
    }
    if id == close_output {
        eprintln!("faulty backend: closing stdout on {id}");
        // SAFETY: closes this process's fd 1; nothing writes to stdout afterwards, as this
        // process only sleeps from here on.
        unsafe { libc::close(1) };
        sleep_an_hour();
    }
    // Shape tensors (start, size, ...) are checked as the reference does.
    let rejected = invocation
        .op()
        .inputs()
        .iter()
        .zip(&invocation.inputs)
        .filter(|(name, _)| ["input", "fill"].contains(name))
        .filter_map(|(_, tensor)| tensor.as_ref())
        .find(|t| reject.split(',').any(|d| d == t.dtype.name()));
    if let Some(tensor) = rejected {
        return Err(OpError::new(
            ErrorKind::UnsupportedDtype,
            "faulty.dtype",
            format!("{} is not implemented", tensor.dtype),
        ));
    }
    let mut outputs = opspec::ops::evaluate(invocation, opspec::tensor::Limits::DEFAULT)?;
    if let Some(output) = outputs.first_mut() {
        if id == lie {
            xor_first(output, [1, 1, 1, 1]);
        }
        if id == flip_sign {
            xor_first(output, [0x80, 0x8000, 0x8000_0000, 1 << 63]);
        }
    }
    Ok(outputs)
}

/// XORs the first element's bits with the mask of its word width (8, 16, 32, 64 bits).
fn xor_first(output: &mut Tensor, masks: [u64; 4]) {
    match &mut output.buffer {
        Buffer::W8(v) if !v.is_empty() => v[0] ^= masks[0] as u8,
        Buffer::W16(v) if !v.is_empty() => v[0] ^= masks[1] as u16,
        Buffer::W32(v) if !v.is_empty() => v[0] ^= masks[2] as u32,
        Buffer::W64(v) if !v.is_empty() => v[0] ^= masks[3],
        _ => {}
    }
}
