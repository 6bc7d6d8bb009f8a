//! A backend that misbehaves on purpose, to test the runner: it serves the reference
//! interpreter, except that it exits on the case named by `--crash`, never answers the one
//! named by `--hang`, and flips a bit of the output of the one named by `--lie`.

use std::time::Duration;

use opspec::tensor::Buffer;
use opspec_runner::serve::serve;

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let named = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1).cloned())
            .unwrap_or_default()
    };
    let (crash, hang, lie) = (named("--crash"), named("--hang"), named("--lie"));
    let stdin = std::io::stdin().lock();
    let stdout = std::io::stdout().lock();
    serve(stdin, stdout, "faulty", &[], |id, invocation| {
        if id == crash {
            eprintln!("faulty backend: crashing on {id}");
            std::process::exit(3);
        }
        if id == hang {
            eprintln!("faulty backend: hanging on {id}");
            std::thread::sleep(Duration::from_secs(3600));
        }
        let mut outputs = opspec::ops::evaluate(invocation)?;
        if id == lie {
            if let Some(output) = outputs.first_mut() {
                match &mut output.buffer {
                    Buffer::W8(v) if !v.is_empty() => v[0] ^= 1,
                    Buffer::W16(v) if !v.is_empty() => v[0] ^= 1,
                    Buffer::W32(v) if !v.is_empty() => v[0] ^= 1,
                    Buffer::W64(v) if !v.is_empty() => v[0] ^= 1,
                    _ => {}
                }
            }
        }
        Ok(outputs)
    })
}
