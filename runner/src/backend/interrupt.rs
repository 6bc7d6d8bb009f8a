//! A run stopped by a signal: SIGINT (Ctrl-C), SIGTERM or SIGHUP.
//!
//! On the first such signal the run stops as `--fail-fast` stops it: no case is sent any more,
//! the exchanges in flight end, every trial not run is recorded as such, every backend process
//! is stopped as at the end of a run (its process group and every process of its start,
//! `crate::backend::child`), and the reports are written with what the run has, marked interrupted.
//! The runner then exits with 128 + the signal's number (130 for SIGINT, 143 for SIGTERM, 129
//! for SIGHUP). Should the run not have ended [`GRACE`] after the signal, or should a second
//! signal come, every backend process is killed at once and the runner exits with that code.
//!
//! A backend process also gets a parent-death signal (`crate::backend::child`): a runner killed with
//! SIGKILL, which nothing can catch, leaves none behind either.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Mutex, Once};
use std::time::Duration;

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

/// How long the run has to end by itself after the signal before it is ended.
pub(crate) const GRACE: Duration = Duration::from_secs(20);

/// The signal that stopped the run, 0 while none came.
static SIGNAL: AtomicI32 = AtomicI32::new(0);

/// Set once a signal came: whatever waits on a backend stops waiting.
pub(crate) static REQUESTED: AtomicBool = AtomicBool::new(false);

/// What to do when a signal comes: halting each backend of the run.
type Halt = Box<dyn Fn() + Send>;
static HALTS: Mutex<Vec<Halt>> = Mutex::new(Vec::new());

/// Catches SIGINT, SIGTERM and SIGHUP for the rest of the process (once; later calls do
/// nothing). `Err` when the handlers cannot be installed.
pub(crate) fn install() -> Result<(), String> {
    static ONCE: Once = Once::new();
    let mut result = Ok(());
    ONCE.call_once(|| {
        result = Signals::new([SIGINT, SIGTERM, SIGHUP])
            .and_then(|mut signals| {
                std::thread::Builder::new()
                    .name("signals".into())
                    .spawn(move || {
                        for signal in signals.forever() {
                            on_signal(signal);
                        }
                    })
                    .map(drop)
            })
            .map_err(|e| format!("cannot catch SIGINT, SIGTERM and SIGHUP: {e}"));
    });
    result
}

/// `halt` is called when a signal comes (at once, when one already came).
pub(crate) fn on_signal_call(halt: impl Fn() + Send + 'static) {
    let mut halts = HALTS.lock().unwrap_or_else(|p| p.into_inner());
    if signal().is_some() {
        halt();
    }
    halts.push(Box::new(halt));
}

/// The signal that stopped the run, if one came.
pub(crate) fn signal() -> Option<i32> {
    match SIGNAL.load(Ordering::SeqCst) {
        0 => None,
        signal => Some(signal),
    }
}

/// The name of one of the signals caught.
pub(crate) fn name(signal: i32) -> &'static str {
    match signal {
        SIGINT => "SIGINT",
        SIGTERM => "SIGTERM",
        SIGHUP => "SIGHUP",
        _ => "a signal",
    }
}

/// The exit code of a run stopped by `signal`: 128 + its number, as a shell reports it.
pub(crate) fn exit_code(signal: i32) -> u8 {
    u8::try_from(128 + signal).unwrap_or(255)
}

fn on_signal(signal: i32) {
    if let Err(first) = SIGNAL.compare_exchange(0, signal, Ordering::SeqCst, Ordering::SeqCst) {
        eprintln!(
            "\n{} again: stopping every backend process now",
            name(signal)
        );
        end_now(first);
    }
    REQUESTED.store(true, Ordering::SeqCst);
    eprintln!(
        "\n{}: the run stops; stopping the backends and writing the reports with what the run has ({} again stops at once)",
        name(signal),
        name(signal)
    );
    for halt in HALTS.lock().unwrap_or_else(|p| p.into_inner()).iter() {
        halt();
    }
    let _ = std::thread::Builder::new()
        .name("signal-grace".into())
        .spawn(move || {
            std::thread::sleep(GRACE);
            eprintln!(
                "the run did not end within {} s of {}: stopping every backend process now",
                GRACE.as_secs(),
                name(signal)
            );
            end_now(signal);
        });
}

/// Kills every backend process and exits with the code of `signal`.
fn end_now(signal: i32) -> ! {
    crate::backend::child::kill_every_start();
    std::process::exit(i32::from(exit_code(signal)))
}
