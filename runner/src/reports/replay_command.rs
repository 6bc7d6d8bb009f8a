//! How the command that replays one trial is spelled in failure reports and on the page:
//! the runner as a run was started, `replay`, the trial as one shell word, and the run's flags
//! that differ from the defaults (`crate::run::config::Config::replay_flags`).

/// How the runner is invoked in replay lines when it is not known how it was started (the
/// `cargo test` harness, a library caller): from the checkout, through cargo.
pub(crate) const CARGO_RUNNER: &str = "cargo run -q -p opspec-runner --bin runner --";

/// The command that replays `trial`: `program` (the runner as the run was started,
/// [`crate::run::config::Config::program`]), `replay`, the trial and the run's flags.
pub(crate) fn command(program: &str, trial: &str, flags: &str) -> String {
    format!("{program} replay {}{flags}", shell_quote(trial))
}

/// `text` as one shell word.
pub fn shell_quote(text: &str) -> String {
    let plain = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-./:=@%+,".contains(c));
    if plain {
        text.to_owned()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_word_with_shell_characters_is_quoted_once() {
        assert_eq!(shell_quote("slice::wrap::a::int8"), "slice::wrap::a::int8");
        assert_eq!(shell_quote("it's here"), r"'it'\''s here'");
        assert_eq!(shell_quote(""), "''");
        assert_eq!(
            command("runner", "a b", " --backend x"),
            "runner replay 'a b' --backend x"
        );
    }
}
