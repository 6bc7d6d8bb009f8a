//! Which implementation of the layout loops and of Scale's element loop an evaluation uses.
//!
//! Both engines give the same bits: [`Engine::Plain`] is the reference (one element at a time,
//! in row-major order: `layout::gather_reference`, `layout::scatter_reference`,
//! `ops::scale::run_reference`, Shuffle's three stages one after the other), and
//! [`Engine::Fast`] the kernels of [`crate::kernels`], Scale's typed loops and Shuffle's
//! one-pass composition, tested against the plain path. The choice is an argument
//! ([`crate::ops::evaluate_with`]), never read from the environment by this crate: the runner
//! maps its `--engine` flag / `OPSPEC_ENGINE` variable onto it.

use std::fmt;
use std::str::FromStr;

/// The implementation an evaluation runs on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Engine {
    /// The plain reference loops alone.
    Plain,
    /// The fast kernels (the default).
    #[default]
    Fast,
}

impl Engine {
    pub const ALL: [Engine; 2] = [Engine::Plain, Engine::Fast];

    pub fn name(self) -> &'static str {
        match self {
            Engine::Plain => "plain",
            Engine::Fast => "fast",
        }
    }

    pub fn is_plain(self) -> bool {
        self == Engine::Plain
    }
}

impl fmt::Display for Engine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An engine name other than `plain` or `fast`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown engine `{0}`: expected `plain` or `fast`")]
pub struct UnknownEngine(pub String);

impl FromStr for Engine {
    type Err = UnknownEngine;

    fn from_str(text: &str) -> Result<Engine, UnknownEngine> {
        Engine::ALL
            .into_iter()
            .find(|engine| engine.name() == text.trim())
            .ok_or_else(|| UnknownEngine(text.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_names_are_errors() {
        for engine in Engine::ALL {
            assert_eq!(engine.name().parse(), Ok(engine));
        }
        assert_eq!(Engine::default(), Engine::Fast);
        assert_eq!(
            "kernels".parse::<Engine>(),
            Err(UnknownEngine("kernels".into()))
        );
    }

    /// The engine is chosen by the caller: no source file of this crate reads a variable
    /// (`var`, `var_os` or `vars` of `std::env`).
    #[test]
    fn the_library_reads_no_environment_variable() {
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut readers = Vec::new();
        let mut folders = vec![src];
        while let Some(folder) = folders.pop() {
            for entry in std::fs::read_dir(&folder).expect("src/ is readable") {
                let path = entry.expect("a folder entry").path();
                if path.is_dir() {
                    folders.push(path);
                } else if path.extension().is_some_and(|e| e == "rs") {
                    let text = std::fs::read_to_string(&path).expect("a source file");
                    for (n, line) in text.lines().enumerate() {
                        // Split so that this line does not name what it looks for.
                        if line.contains(concat!("env::", "var")) {
                            readers.push(format!("{}:{}: {}", path.display(), n + 1, line.trim()));
                        }
                    }
                }
            }
        }
        assert!(
            readers.is_empty(),
            "the library reads environment variables:\n{}",
            readers.join("\n")
        );
    }
}
