//! Known failures of a backend, declared in one file per backend.
//!
//! ```text
//! # Known failures of my-backend. One per line: `<trial name>: <reason>`;
//! # a name ending in `*` matches every trial that starts with the rest.
//! slice::reflect::reflect_single_element::float16: kernel reads index 1 when d = 1
//! shuffle::dtypes::*: int4 is not implemented yet
//! ```
//! A known failure that fails is reported as ignored with its reason; one that passes is a
//! failure ("stale": remove the entry); an entry that matches no case is a failure too.

use std::path::Path;

/// One declared known failure.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub pattern: String,
    pub reason: String,
    pub line: usize,
}

impl Entry {
    pub fn matches(&self, trial: &str) -> bool {
        match self.pattern.strip_suffix('*') {
            Some(prefix) => trial.starts_with(prefix),
            None => trial == self.pattern,
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Expectations {
    pub entries: Vec<Entry>,
}

impl Expectations {
    pub fn load(path: &Path) -> Result<Expectations, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read expectations file {}: {e}", path.display()))?;
        Self::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    pub fn parse(text: &str) -> Result<Expectations, String> {
        let mut entries = Vec::new();
        for (index, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            // Trial names contain `::`, so the separator is the first `: ` (colon, space).
            let (pattern, reason) = line
                .split_once(": ")
                .filter(|(pattern, reason)| !pattern.is_empty() && !reason.trim().is_empty())
                .ok_or_else(|| format!("line {}: expected `<trial name>: <reason>`", index + 1))?;
            entries.push(Entry {
                pattern: pattern.trim().to_owned(),
                reason: reason.trim().to_owned(),
                line: index + 1,
            });
        }
        Ok(Expectations { entries })
    }

    /// The first entry that matches a trial.
    pub fn lookup(&self, trial: &str) -> Option<&Entry> {
        self.entries.iter().find(|entry| entry.matches(trial))
    }

    /// Entries that match none of `trials`.
    pub fn unmatched<'a>(&'a self, trials: &[String]) -> Vec<&'a Entry> {
        self.entries
            .iter()
            .filter(|entry| !trials.iter().any(|trial| entry.matches(trial)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_exact_and_prefix_entries() {
        let e = Expectations::parse(
            "# comment\n\nslice::a::b::float16: off by one\nshuffle::dtypes::*: no int4\n",
        )
        .unwrap();
        assert_eq!(e.entries.len(), 2);
        assert_eq!(
            e.lookup("slice::a::b::float16").unwrap().reason,
            "off by one"
        );
        assert!(e.lookup("slice::a::b::float32").is_none());
        assert_eq!(e.lookup("shuffle::dtypes::x::int4").unwrap().line, 4);
        let trials = vec!["slice::a::b::float16".to_owned()];
        assert_eq!(e.unmatched(&trials)[0].pattern, "shuffle::dtypes::*");
    }

    #[test]
    fn malformed_lines_are_named() {
        assert_eq!(
            Expectations::parse("slice::a::b").unwrap_err(),
            "line 1: expected `<trial name>: <reason>`"
        );
    }
}
