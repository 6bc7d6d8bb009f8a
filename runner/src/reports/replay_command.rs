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

/// What a replay command starts with so that the backend behaves as in the run: for each
/// environment variable its hello names ([`crate::backend::facts::Facts::env`]), `NAME=value`
/// when it was set, `env -u NAME` when it was not (so that the replaying shell's own value
/// does not count). Empty when the hello names none; else ends with a space.
pub(crate) fn env_prefix(env: &std::collections::BTreeMap<String, Option<String>>) -> String {
    let unset: Vec<String> = (env.iter())
        .filter(|(_, value)| value.is_none())
        .map(|(name, _)| format!("-u {}", shell_quote(name)))
        .collect();
    let set: Vec<String> = (env.iter())
        .filter_map(|(name, value)| Some(format!("{name}={}", shell_quote(value.as_ref()?))))
        .collect();
    let mut prefix = String::new();
    if !unset.is_empty() {
        prefix = format!("env {} ", unset.join(" "));
    }
    for pair in set {
        prefix.push_str(&pair);
        prefix.push(' ');
    }
    prefix
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

    #[test]
    fn the_environment_the_hello_names_is_set_or_unset() {
        let env = |pairs: &[(&str, Option<&str>)]| {
            (pairs.iter())
                .map(|(n, v)| (n.to_string(), v.map(str::to_owned)))
                .collect()
        };
        assert_eq!(env_prefix(&env(&[])), "");
        assert_eq!(env_prefix(&env(&[("BUG_PAD", Some("1"))])), "BUG_PAD=1 ");
        assert_eq!(
            env_prefix(&env(&[("A", None), ("B", Some("x y")), ("C", Some(""))])),
            "env -u A B='x y' C='' "
        );
    }
}
