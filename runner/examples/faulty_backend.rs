//! A backend that misbehaves on purpose, to test the runner: it serves the reference
//! interpreter, except that it exits on the case named by `--crash`, never answers the one
//! named by `--hang`, and flips a bit of the output of the one named by `--lie`.
//!
//! `--flip-sign ID` flips the sign bit of that case's first output element instead (a
//! difference no tolerance absorbs). Hello and reply variants: `--hello JSON` answers the hello with that line instead;
//! `--unsupported PREFIX` replies `unsupported` to every case whose id starts with PREFIX (`""`
//! for all); `--reject-dtypes D1,D2` rejects every case with data (input or fill) of one of those dtypes as
//! `unsupported_dtype`, as an engine without them does.

use std::io::{BufRead, Write};
use std::time::Duration;

use opspec::tensor::Buffer;
use opspec::{ErrorKind, OpError, Tensor};
use opspec_runner::serve::serve;

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let given = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1).cloned())
    };
    let named = |flag: &str| given(flag).unwrap_or_default();
    let (crash, hang, lie) = (named("--crash"), named("--hang"), named("--lie"));
    let flip_sign = named("--flip-sign");
    let (hello, unsupported, reject) = (
        given("--hello"),
        given("--unsupported"),
        given("--reject-dtypes").unwrap_or_default(),
    );
    let mut stdout = std::io::stdout().lock();
    for line in std::io::stdin().lock().lines() {
        let line = line?;
        let request: serde_json::Value = serde_json::from_str(&line).unwrap_or_default();
        let id = request["id"].as_str().unwrap_or_default();
        if let (Some(hello), "hello") = (&hello, request["type"].as_str().unwrap_or_default()) {
            writeln!(stdout, "{hello}")?;
            stdout.flush()?;
            continue;
        }
        let run = request["type"] == "run";
        if let Some(prefix) = unsupported.as_deref().filter(|p| run && id.starts_with(p)) {
            let reply = serde_json::json!({"type": "unsupported", "id": id, "reason": format!("faulty backend: nothing starting with {prefix:?}")});
            writeln!(stdout, "{reply}")?;
            stdout.flush()?;
            continue;
        }
        // One request at a time through the reference's server.
        serve(
            line.as_bytes(),
            &mut stdout,
            "faulty",
            &[],
            |id, invocation| {
                if id == crash {
                    eprintln!("faulty backend: crashing on {id}");
                    std::process::exit(3);
                }
                if id == hang {
                    eprintln!("faulty backend: hanging on {id}");
                    std::thread::sleep(Duration::from_secs(3600));
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
                let mut outputs = opspec::ops::evaluate(invocation)?;
                if let Some(output) = outputs.first_mut() {
                    if id == lie {
                        xor_first(output, [1, 1, 1, 1]);
                    }
                    if id == flip_sign {
                        xor_first(output, [0x80, 0x8000, 0x8000_0000, 1 << 63]);
                    }
                }
                Ok(outputs)
            },
        )?;
    }
    Ok(())
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
