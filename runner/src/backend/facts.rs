//! What a verdict may depend on besides the case: the engine and its version, and the machine
//! it ran on. The hello gives the engine's (`engine`, `platform`); the runner reads the rest of
//! the machine itself (`/proc/cpuinfo` on Linux). Known-failure entries carry conditions on
//! these facts (`Condition`), and every report records them.
//!
//! ```text
//! engine == openvino and version >= 2026.4 and cpu_vendor == AuthenticAMD
//! cpu_flags lacks amx_tile or os != linux
//! ```
//! A condition is tests joined by `and` (binding tighter) and `or`. A test is
//! `<fact> <op> <value>` with `==`, `!=`, `<`, `<=`, `>`, `>=` on the string facts (the
//! ordering ones on `version` only, compared as versions: `compare_versions`), or
//! `<fact> has <value>` / `<fact> lacks <value>` on the list facts. A value with spaces is
//! written in double quotes. A test of a fact the run does not know is false, and the report
//! says so (`Evaluation::unknown`).
//!
//! The hello may also name the environment variables that change what the backend does
//! (`"env": ["BUG_PAD"]`): their values are facts too (`env.BUG_PAD == 1`), and every replay
//! command the run prints sets them (`Facts::env`).

use std::cmp::Ordering;
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The facts of one run.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Facts {
    /// The engine's name, as its hello gives it (`openvino`, `onnxruntime`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) engine: Option<String>,
    /// The engine's version (`2026.4.1`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) version: Option<String>,
    /// `linux`, `macos`, `windows` (Rust's `std::env::consts::OS`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) os: Option<String>,
    /// `x86_64`, `aarch64`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) arch: Option<String>,
    /// `GenuineIntel`, `AuthenticAMD` (the CPUID vendor string).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) cpu_vendor: Option<String>,
    /// The CPU's model name (`AMD EPYC`, `Intel(R) Xeon(R) Processor`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) cpu_model: Option<String>,
    /// The CPU's ISA flags as the OS lists them (`avx512f`, `amx_tile`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) cpu_flags: Vec<String>,
    /// The capabilities the engine itself reports for the device it runs on (OpenVINO's
    /// `OPTIMIZATION_CAPABILITIES`: `BF16`, `FP16`, ...).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) engine_flags: Vec<String>,
    /// The environment variables the hello names as changing the backend's behaviour, with
    /// their values in the run (`None`: unset).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) env: BTreeMap<String, Option<String>>,
}

/// The most environment variables a hello may name.
pub(crate) const ENV_LIMIT: usize = 64;

/// The hello's `env`: the environment variables that change what the backend does. As a list
/// of names, their values are the runner's own environment's, which the backend inherits; as
/// an object of names and values (a harness that ran the cases elsewhere, docs/protocol.md
/// "Offline cases"), the values given.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(try_from = "RawEnv")]
pub(crate) enum EnvDeclaration {
    Names(Vec<String>),
    Values(BTreeMap<String, String>),
}

impl Default for EnvDeclaration {
    fn default() -> EnvDeclaration {
        EnvDeclaration::Names(Vec::new())
    }
}

#[derive(Deserialize)]
#[serde(
    untagged,
    expecting = "a list of environment variable names, or an object of names and their values"
)]
enum RawEnv {
    Names(Vec<String>),
    Values(BTreeMap<String, String>),
}

impl TryFrom<RawEnv> for EnvDeclaration {
    type Error = String;

    fn try_from(raw: RawEnv) -> Result<EnvDeclaration, String> {
        let names: Vec<&String> = match &raw {
            RawEnv::Names(names) => names.iter().collect(),
            RawEnv::Values(values) => values.keys().collect(),
        };
        if names.len() > ENV_LIMIT {
            return Err(format!(
                "{} environment variables, more than {ENV_LIMIT}",
                names.len()
            ));
        }
        if let Some(bad) = names.iter().find(|name| !is_variable_name(name)) {
            return Err(format!(
                "{:?} is not an environment variable name (letters, digits and `_`, not starting with a digit, at most 64 bytes)",
                printable(bad)
            ));
        }
        Ok(match raw {
            RawEnv::Names(names) => EnvDeclaration::Names(names),
            RawEnv::Values(values) => EnvDeclaration::Values(values),
        })
    }
}

/// A name a shell takes before a command as `NAME=value`: ASCII letters, digits and `_`, not
/// starting with a digit, at most 64 bytes.
pub(crate) fn is_variable_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// The hello's `engine` object.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(expecting = "an object {\"name\": string, \"version\": string}")]
pub(crate) struct EngineId {
    pub(crate) name: String,
    #[serde(default)]
    pub(crate) version: Option<String>,
}

/// The hello's `platform` object: facts of the machine as the engine sees them, which take the
/// place of the runner's own reading.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(
    expecting = "an object {\"os\", \"arch\", \"cpu_vendor\", \"cpu_model\": strings, \"cpu_flags\", \"engine_flags\": lists of strings}"
)]
pub(crate) struct Platform {
    #[serde(default)]
    pub(crate) os: Option<String>,
    #[serde(default)]
    pub(crate) arch: Option<String>,
    #[serde(default)]
    pub(crate) cpu_vendor: Option<String>,
    #[serde(default)]
    pub(crate) cpu_model: Option<String>,
    #[serde(default)]
    pub(crate) cpu_flags: Option<Vec<String>>,
    #[serde(default)]
    pub(crate) engine_flags: Option<Vec<String>>,
}

impl Facts {
    /// This machine, as the runner reads it; no engine.
    pub(crate) fn host() -> Facts {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let mut facts = Facts::from_cpuinfo(&cpuinfo);
        facts.os = Some(std::env::consts::OS.to_owned());
        facts.arch = Some(std::env::consts::ARCH.to_owned());
        facts
    }

    /// The CPU facts of the first processor in a `/proc/cpuinfo` text.
    pub(crate) fn from_cpuinfo(text: &str) -> Facts {
        let mut facts = Facts::default();
        let first = text.split("\n\n").next().unwrap_or_default();
        for line in first.lines() {
            let Some((key, value)) = line.split_once(':') else {
                continue;
            };
            let value = value.trim();
            match key.trim() {
                "vendor_id" => facts.cpu_vendor = Some(value.to_owned()),
                "model name" => facts.cpu_model = Some(value.to_owned()),
                // x86 lists `flags`, Arm `Features`.
                "flags" | "Features" => {
                    facts.cpu_flags = value.split_whitespace().map(str::to_owned).collect();
                    facts.cpu_flags.sort();
                }
                _ => {}
            }
        }
        facts
    }

    /// These facts with the engine and the platform a hello gives, [`Facts::bounded`].
    pub(crate) fn with_hello(
        mut self,
        engine: Option<&EngineId>,
        platform: Option<&Platform>,
    ) -> Facts {
        if let Some(engine) = engine {
            self.engine = Some(engine.name.clone());
            self.version = engine.version.clone();
        }
        if let Some(p) = platform {
            let replace = |fact: &mut Option<String>, given: &Option<String>| {
                if given.is_some() {
                    fact.clone_from(given);
                }
            };
            replace(&mut self.os, &p.os);
            replace(&mut self.arch, &p.arch);
            replace(&mut self.cpu_vendor, &p.cpu_vendor);
            replace(&mut self.cpu_model, &p.cpu_model);
            if let Some(flags) = &p.cpu_flags {
                self.cpu_flags.clone_from(flags);
            }
            if let Some(flags) = &p.engine_flags {
                self.engine_flags.clone_from(flags);
            }
        }
        self.bounded()
    }

    /// These facts with the environment variables `declared` names, each with its value:
    /// the one given, or for a list of names the one `read` gives (the runner's environment).
    pub(crate) fn with_env(
        mut self,
        declared: &EnvDeclaration,
        read: impl Fn(&str) -> Option<String>,
    ) -> Facts {
        self.env = match declared {
            EnvDeclaration::Names(names) => (names.iter())
                .map(|name| (name.clone(), read(name)))
                .collect(),
            EnvDeclaration::Values(values) => (values.iter())
                .map(|(name, value)| (name.clone(), Some(value.clone())))
                .collect(),
        };
        // Only the values are new: the rest is bounded already, and cut once.
        for value in self.env.values_mut().flatten() {
            cut(value, FACT_LIMIT);
        }
        self
    }

    /// These facts within [`FACT_LIMIT`] and [`FLAG_LIMIT`]: a longer string is cut (at a
    /// character, marked `… (N bytes)`), a longer list keeps its first flags and a last entry
    /// `… (N more)`, and a longer flag is cut as a string is.
    pub(crate) fn bounded(mut self) -> Facts {
        for fact in [
            &mut self.engine,
            &mut self.version,
            &mut self.os,
            &mut self.arch,
            &mut self.cpu_vendor,
            &mut self.cpu_model,
        ]
        .into_iter()
        .flatten()
        {
            cut(fact, FACT_LIMIT);
        }
        for value in self.env.values_mut().flatten() {
            cut(value, FACT_LIMIT);
        }
        for list in [&mut self.cpu_flags, &mut self.engine_flags] {
            if list.len() > FLAG_LIMIT {
                let more = list.len() - FLAG_LIMIT;
                list.truncate(FLAG_LIMIT);
                list.push(format!("… ({more} more)"));
            }
            for flag in list.iter_mut() {
                cut(flag, FLAG_LENGTH);
            }
        }
        self
    }

    /// One line for a console or a page: `openvino 2026.4.1, linux x86_64, AuthenticAMD AMD
    /// EPYC`, its control characters escaped ([`printable`]).
    pub(crate) fn line(&self) -> String {
        let join = |parts: [&Option<String>; 2]| {
            let words: Vec<&str> = parts.iter().filter_map(|p| p.as_deref()).collect();
            words.join(" ")
        };
        let line = [
            join([&self.engine, &self.version]),
            join([&self.os, &self.arch]),
            join([&self.cpu_vendor, &self.cpu_model]),
        ]
        .into_iter()
        .chain((!self.env.is_empty()).then(|| {
            let pairs: Vec<String> = (self.env.iter())
                .map(|(name, value)| match value {
                    Some(value) => format!("{name}={value}"),
                    None => format!("{name} unset"),
                })
                .collect();
            format!("env {}", pairs.join(" "))
        }))
        .filter(|part| !part.is_empty())
        .collect::<Vec<_>>()
        .join(", ");
        printable(&line).into_owned()
    }

    fn string(&self, fact: Fact) -> Option<&str> {
        match fact {
            Fact::Env => None,
            Fact::Engine => self.engine.as_deref(),
            Fact::Version => self.version.as_deref(),
            Fact::Os => self.os.as_deref(),
            Fact::Arch => self.arch.as_deref(),
            Fact::CpuVendor => self.cpu_vendor.as_deref(),
            Fact::CpuModel => self.cpu_model.as_deref(),
            Fact::CpuFlags | Fact::EngineFlags => None,
        }
    }

    fn list(&self, fact: Fact) -> Option<&[String]> {
        let list = match fact {
            Fact::CpuFlags => &self.cpu_flags,
            Fact::EngineFlags => &self.engine_flags,
            _ => return None,
        };
        (!list.is_empty()).then_some(list.as_slice())
    }

    /// The facts as `name: value` pairs, lists joined by spaces, an environment variable as
    /// `env.NAME` (JUnit properties).
    pub(crate) fn pairs(&self) -> BTreeMap<String, String> {
        let mut pairs = BTreeMap::new();
        for fact in Fact::ALL {
            let value = match fact.is_list() {
                true => self.list(fact).map(|l| l.join(" ")),
                false => self.string(fact).map(str::to_owned),
            };
            if let Some(value) = value {
                pairs.insert(fact.name().to_owned(), value);
            }
        }
        for (name, value) in &self.env {
            if let Some(value) = value {
                pairs.insert(format!("env.{name}"), value.clone());
            }
        }
        pairs
    }
}

/// `text` cut to `limit` bytes (at a character), marked `… (N bytes)`, when it is longer.
fn cut(text: &mut String, limit: usize) {
    if text.len() > limit {
        let mut end = limit;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let total = text.len();
        text.truncate(end);
        text.push_str(&format!("… ({total} bytes)"));
    }
}

/// The longest string fact a report holds (engine, version, OS, architecture, CPU vendor and
/// model), in bytes: real ones are under 100; a hello's longer one is cut ([`Facts::bounded`]).
pub(crate) const FACT_LIMIT: usize = 256;

/// The most flags a report holds per list (`cpu_flags`, `engine_flags`): a CPU lists about 200.
pub(crate) const FLAG_LIMIT: usize = 1024;

/// The longest flag a report holds, in bytes.
pub(crate) const FLAG_LENGTH: usize = 64;

/// `text` for a terminal: control characters (C0, DEL, C1: ESC, BEL, NUL, a newline) and the
/// bidirectional overrides written as escapes (`\u{1b}`, `\n`), so that text a backend sent
/// cannot move the cursor, ring, clear or reorder the console. Everything else as it is.
pub(crate) fn printable(text: &str) -> std::borrow::Cow<'_, str> {
    let special =
        |c: char| c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
    if !text.chars().any(special) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut shown = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if special(c) {
            shown.extend(c.escape_debug());
        } else {
            shown.push(c);
        }
    }
    std::borrow::Cow::Owned(shown)
}

/// A fact a condition can test.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fact {
    Engine,
    Version,
    Os,
    Arch,
    CpuVendor,
    CpuModel,
    CpuFlags,
    EngineFlags,
    /// `env.NAME`: an environment variable the hello names (the name is the test's).
    Env,
}

impl Fact {
    pub(crate) const ALL: [Fact; 8] = [
        Fact::Engine,
        Fact::Version,
        Fact::Os,
        Fact::Arch,
        Fact::CpuVendor,
        Fact::CpuModel,
        Fact::CpuFlags,
        Fact::EngineFlags,
    ];

    pub(crate) fn name(self) -> &'static str {
        match self {
            Fact::Engine => "engine",
            Fact::Version => "version",
            Fact::Os => "os",
            Fact::Arch => "arch",
            Fact::CpuVendor => "cpu_vendor",
            Fact::CpuModel => "cpu_model",
            Fact::CpuFlags => "cpu_flags",
            Fact::EngineFlags => "engine_flags",
            Fact::Env => "env.NAME",
        }
    }

    fn is_list(self) -> bool {
        matches!(self, Fact::CpuFlags | Fact::EngineFlags)
    }

    fn parse(word: &str) -> Option<Fact> {
        Fact::ALL.into_iter().find(|f| f.name() == word)
    }
}

/// How a test compares its fact with its value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Relation {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Has,
    Lacks,
}

impl Relation {
    const ALL: [(&'static str, Relation); 8] = [
        ("==", Relation::Eq),
        ("!=", Relation::Ne),
        ("<", Relation::Lt),
        ("<=", Relation::Le),
        (">", Relation::Gt),
        (">=", Relation::Ge),
        ("has", Relation::Has),
        ("lacks", Relation::Lacks),
    ];

    fn name(self) -> &'static str {
        Relation::ALL
            .iter()
            .find(|(_, r)| *r == self)
            .expect("listed")
            .0
    }

    fn is_ordering(self) -> bool {
        matches!(
            self,
            Relation::Lt | Relation::Le | Relation::Gt | Relation::Ge
        )
    }
}

/// One `<fact> <relation> <value>`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Test {
    pub(crate) fact: Fact,
    /// The variable of an `env.NAME` fact.
    pub(crate) variable: Option<String>,
    pub(crate) relation: Relation,
    pub(crate) value: String,
}

/// Tests in disjunctive form: any group of which every test holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Condition {
    pub(crate) any_of: Vec<Vec<Test>>,
    /// As written, for reports.
    pub(crate) text: String,
}

/// A condition that cannot be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("condition `{text}`: {problem}")]
pub(crate) struct ConditionError {
    pub(crate) text: String,
    pub(crate) problem: String,
}

/// What a condition came to on a run's facts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Evaluation {
    pub(crate) holds: bool,
    /// The facts it tests that the run does not know (each such test is false).
    pub(crate) unknown: Vec<String>,
}

/// The words of a condition; a double-quoted value is one word.
fn words(text: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
        } else if c == '"' {
            chars.next();
            let word: String = chars.by_ref().take_while(|&c| c != '"').collect();
            words.push(word);
        } else {
            let mut word = String::new();
            while let Some(&c) = chars.peek() {
                if c.is_whitespace() {
                    break;
                }
                word.push(c);
                chars.next();
            }
            words.push(word);
        }
    }
    match text.matches('"').count() % 2 {
        0 => Ok(words),
        _ => Err("a double quote is not closed".into()),
    }
}

impl Condition {
    pub(crate) fn parse(text: &str) -> Result<Condition, ConditionError> {
        let error = |problem: String| ConditionError {
            text: text.to_owned(),
            problem,
        };
        let words = words(text).map_err(error)?;
        if words.is_empty() {
            return Err(error("it is empty".into()));
        }
        let mut any_of = vec![Vec::new()];
        let mut rest = words.as_slice();
        loop {
            let [fact, relation, value, tail @ ..] = rest else {
                return Err(error(format!(
                    "expected `<fact> <relation> <value>`, got `{}`",
                    rest.join(" ")
                )));
            };
            let variable = fact.strip_prefix("env.").map(str::to_owned);
            if let Some(name) = variable.as_deref().filter(|n| !is_variable_name(n)) {
                return Err(error(format!(
                    "`{name}` is not an environment variable name (letters, digits and `_`)"
                )));
            }
            let fact = match variable {
                Some(_) => Fact::Env,
                None => Fact::parse(fact).ok_or_else(|| {
                    let known: Vec<&str> = Fact::ALL.iter().map(|f| f.name()).collect();
                    error(format!(
                        "unknown fact `{fact}` (one of {}, env.NAME)",
                        known.join(", ")
                    ))
                })?,
            };
            let relation = (Relation::ALL.iter())
                .find(|(name, _)| name == relation)
                .map(|(_, r)| *r)
                .ok_or_else(|| {
                    error(format!(
                        "unknown relation `{relation}` (one of ==, !=, <, <=, >, >=, has, lacks)"
                    ))
                })?;
            let list_relation = matches!(relation, Relation::Has | Relation::Lacks);
            if fact.is_list() != list_relation {
                return Err(error(match fact.is_list() {
                    true => format!("`{}` is a list: test it with has or lacks", fact.name()),
                    false => format!("`{}` is not a list: has and lacks test lists", fact.name()),
                }));
            }
            if relation.is_ordering() && fact != Fact::Version {
                return Err(error(format!(
                    "`{}` orders `version` only, not `{}`",
                    relation.name(),
                    fact.name()
                )));
            }
            any_of.last_mut().expect("one group").push(Test {
                fact,
                variable,
                relation,
                value: value.clone(),
            });
            match tail {
                [] => break,
                [joint, after @ ..] if joint == "and" => rest = after,
                [joint, after @ ..] if joint == "or" => {
                    any_of.push(Vec::new());
                    rest = after;
                }
                [other, ..] => {
                    return Err(error(format!("expected `and` or `or`, got `{other}`")));
                }
            }
        }
        Ok(Condition {
            any_of,
            text: text.to_owned(),
        })
    }

    pub(crate) fn evaluate(&self, facts: &Facts) -> Evaluation {
        let mut unknown = Vec::new();
        let mut test = |t: &Test| -> bool {
            if t.fact.is_list() {
                let Some(list) = facts.list(t.fact) else {
                    unknown.push(t.fact.name().to_owned());
                    return false;
                };
                let has = list.iter().any(|v| v == &t.value);
                return has == (t.relation == Relation::Has);
            }
            let value = match &t.variable {
                // A variable the hello names is known, set or not: unset, it equals no
                // value. One it does not name is not known.
                Some(name) => match facts.env.get(name) {
                    Some(None) => return t.relation == Relation::Ne,
                    Some(Some(value)) => Some(value.as_str()),
                    None => None,
                },
                None => facts.string(t.fact),
            };
            let Some(fact) = value else {
                unknown.push(match &t.variable {
                    Some(name) => format!("env.{name}"),
                    None => t.fact.name().to_owned(),
                });
                return false;
            };
            let order = match t.fact {
                Fact::Version => compare_versions(fact, &t.value),
                _ => fact.cmp(t.value.as_str()),
            };
            match t.relation {
                Relation::Eq => order == Ordering::Equal,
                Relation::Ne => order != Ordering::Equal,
                Relation::Lt => order == Ordering::Less,
                Relation::Le => order != Ordering::Greater,
                Relation::Gt => order == Ordering::Greater,
                Relation::Ge => order != Ordering::Less,
                Relation::Has | Relation::Lacks => unreachable!("checked at parse"),
            }
        };
        // Every test is evaluated, so that every unknown fact is named.
        let groups: Vec<bool> = (self.any_of.iter())
            .map(|group| {
                let results: Vec<bool> = group.iter().map(&mut test).collect();
                results.into_iter().all(|t| t)
            })
            .collect();
        unknown.sort_unstable();
        unknown.dedup();
        Evaluation {
            holds: groups.into_iter().any(|g| g),
            unknown,
        }
    }
}

/// A version as conditions and reports order it ([`compare_versions`]).
struct Version<'a> {
    /// The leading numbers (`1.13.1`), as digit strings.
    release: Vec<&'a str>,
    /// What follows them (`rc1` of `2.0.0-rc1` or `2.0.0rc1`, `dev2024` of `2.6.0.dev2024`),
    /// a pre-release of the release; empty for a release.
    pre: &'a str,
}

impl<'a> Version<'a> {
    fn parse(text: &'a str) -> Version<'a> {
        let text = text.trim();
        // Build metadata (`+cpu`, `+cu121`) says how it was built, not which version it is.
        let text = text.split('+').next().unwrap_or_default();
        let text = match text.strip_prefix(['v', 'V']) {
            Some(rest) if rest.starts_with(|c: char| c.is_ascii_digit()) => rest,
            _ => text,
        };
        let mut release = Vec::new();
        let mut rest = text;
        loop {
            let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
            if digits == 0 {
                break;
            }
            release.push(&rest[..digits]);
            rest = &rest[digits..];
            match rest.strip_prefix('.') {
                Some(after) if after.starts_with(|c: char| c.is_ascii_digit()) => rest = after,
                _ => break,
            }
        }
        Version {
            release,
            pre: rest.trim_start_matches(['-', '.', '_']),
        }
    }
}

/// Two strings of ASCII digits as the numbers they write, of any length: by their length
/// without leading zeros, then digit by digit.
fn compare_numbers(a: &str, b: &str) -> Ordering {
    let (a, b) = (a.trim_start_matches('0'), b.trim_start_matches('0'));
    a.len().cmp(&b.len()).then_with(|| a.cmp(b))
}

/// The identifiers of a pre-release (`rc.1` and `rc1` both give `rc`, `1`).
fn identifiers(pre: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    for part in pre.split(['.', '-', '_']).filter(|p| !p.is_empty()) {
        let mut start = 0;
        let bytes = part.as_bytes();
        for at in 1..bytes.len() {
            if bytes[at].is_ascii_digit() != bytes[at - 1].is_ascii_digit() {
                parts.push(&part[start..at]);
                start = at;
            }
        }
        parts.push(&part[start..]);
    }
    parts
}

/// Versions as versions:
/// - build metadata, from a `+`, is left out: `1.13.1+cpu == 1.13.1`;
/// - the leading numbers compare as numbers of any length, part by part, a missing part
///   counting as 0: `1.9 < 1.10`, `1.2 == 1.2.0`, `2026.4 < 2026.4.1`, and a bound `< 2027`
///   takes every 2026 release;
/// - anything after them (`-rc1`, `rc1`, `.dev2024`, `a0`) makes a pre-release, smaller than
///   the release: `2.0.0-rc1 < 2.0.0`; two pre-releases of one release compare identifier by
///   identifier (split at `.`, `-`, `_` and between digits and letters), numbers as numbers
///   and below words, a prefix below the longer: `rc2 < rc10`, `alpha < alpha.1 < beta`.
pub(crate) fn compare_versions(a: &str, b: &str) -> Ordering {
    let (a, b) = (Version::parse(a), Version::parse(b));
    let parts = a.release.len().max(b.release.len());
    for index in 0..parts {
        let x = a.release.get(index).copied().unwrap_or("0");
        let y = b.release.get(index).copied().unwrap_or("0");
        let order = compare_numbers(x, y);
        if order != Ordering::Equal {
            return order;
        }
    }
    match (a.pre.is_empty(), b.pre.is_empty()) {
        (true, true) => return Ordering::Equal,
        (true, false) => return Ordering::Greater,
        (false, true) => return Ordering::Less,
        (false, false) => {}
    }
    let (x, y) = (identifiers(a.pre), identifiers(b.pre));
    for (x, y) in x.iter().zip(&y) {
        let numeric = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
        let order = match (numeric(x), numeric(y)) {
            (true, true) => compare_numbers(x, y),
            (true, false) => Ordering::Less,
            (false, true) => Ordering::Greater,
            (false, false) => x.cmp(y),
        };
        if order != Ordering::Equal {
            return order;
        }
    }
    x.len().cmp(&y.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn amd() -> Facts {
        Facts {
            engine: Some("openvino".into()),
            version: Some("2026.4.1".into()),
            os: Some("linux".into()),
            arch: Some("x86_64".into()),
            cpu_vendor: Some("AuthenticAMD".into()),
            cpu_model: Some("AMD EPYC".into()),
            cpu_flags: vec!["avx512_bf16".into(), "avx512f".into()],
            engine_flags: vec!["BF16".into(), "FP32".into()],
            env: [
                ("BUG_PAD".to_owned(), Some("1".to_owned())),
                ("OFF".to_owned(), None),
            ]
            .into_iter()
            .collect(),
        }
    }

    fn holds(text: &str, facts: &Facts) -> bool {
        Condition::parse(text).unwrap().evaluate(facts).holds
    }

    #[test]
    fn tests_join_with_and_before_or() {
        let f = amd();
        assert!(holds("cpu_vendor == AuthenticAMD", &f));
        assert!(!holds("cpu_vendor == GenuineIntel", &f));
        assert!(holds("cpu_vendor != GenuineIntel and os == linux", &f));
        assert!(!holds("cpu_vendor == GenuineIntel and os == linux", &f));
        assert!(holds("cpu_vendor == GenuineIntel or os == linux", &f));
        // `and` binds tighter: (false and true) or true.
        assert!(holds(
            "os == windows and arch == x86_64 or cpu_model == \"AMD EPYC\"",
            &f
        ));
        assert!(holds(
            "cpu_flags has avx512_bf16 and cpu_flags lacks amx_tile",
            &f
        ));
        assert!(holds("engine_flags has BF16", &f));
        assert!(!holds("engine_flags lacks BF16", &f));
    }

    /// `env.NAME` tests a variable the hello names: set, by its value; unset, it equals no
    /// value; one the hello does not name is unknown.
    #[test]
    fn environment_variables_the_hello_names_are_facts() {
        let f = amd();
        assert!(holds("env.BUG_PAD == 1", &f));
        assert!(!holds("env.BUG_PAD != 1", &f));
        assert!(!holds("env.OFF == 1", &f));
        assert!(holds("env.OFF != 1", &f));
        let e = Condition::parse("env.OTHER == 1 or env.OFF == 1")
            .unwrap()
            .evaluate(&f);
        assert!(!e.holds);
        assert_eq!(e.unknown, ["env.OTHER"]);
        let err = |text: &str| Condition::parse(text).unwrap_err().problem;
        assert_eq!(
            err("env.BUG-PAD == 1"),
            "`BUG-PAD` is not an environment variable name (letters, digits and `_`)"
        );
        assert_eq!(
            err("env.BUG_PAD has 1"),
            "`env.NAME` is not a list: has and lacks test lists"
        );
        assert_eq!(
            err("env.BUG_PAD < 1"),
            "`<` orders `version` only, not `env.NAME`"
        );
        assert!(
            err("cpu == amd").ends_with(", env.NAME)"),
            "{}",
            err("cpu == amd")
        );
    }

    /// The hello's `env` is a list of names (values from the runner's environment) or an
    /// object of names and values; anything else is refused naming the field.
    #[test]
    fn the_hellos_environment_is_read_and_checked() {
        let names: EnvDeclaration = serde_json::from_str(r#"["BUG_PAD", "OFF"]"#).unwrap();
        let f = Facts::default().with_env(&names, |n| (n == "BUG_PAD").then(|| "1".into()));
        assert_eq!(f.env, amd().env);
        assert_eq!(f.line(), "env BUG_PAD=1 OFF unset");
        assert_eq!(f.pairs()["env.BUG_PAD"], "1");
        let values: EnvDeclaration = serde_json::from_str(r#"{"BUG_PAD": "1"}"#).unwrap();
        let f = Facts::default().with_env(&values, |_| None);
        assert_eq!(f.env["BUG_PAD"].as_deref(), Some("1"));
        for bad in [r#"["A B"]"#, r#"["1A"]"#, r#"[""]"#, r#"{"A=": "1"}"#] {
            let e = serde_json::from_str::<EnvDeclaration>(bad).unwrap_err();
            assert!(
                e.to_string()
                    .contains("is not an environment variable name"),
                "{bad}: {e}"
            );
        }
        let e = serde_json::from_str::<EnvDeclaration>("3").unwrap_err();
        assert!(
            e.to_string()
                .contains("a list of environment variable names"),
            "{e}"
        );
        let many: Vec<String> = (0..=ENV_LIMIT).map(|k| format!("V{k}")).collect();
        let e = serde_json::from_value::<EnvDeclaration>(serde_json::json!(many)).unwrap_err();
        assert!(e.to_string().contains("more than 64"), "{e}");
    }

    #[test]
    fn versions_compare_part_by_part() {
        let f = amd();
        assert!(holds("version >= 2026.4", &f));
        assert!(holds("version < 2027", &f));
        assert!(holds("version > 2026.3.10", &f));
        assert!(!holds("version < 2026.4.1", &f));
        assert!(holds("version <= 2026.4.1", &f));
        assert_eq!(compare_versions("1.9.0", "1.10.0"), Ordering::Less);
        assert_eq!(compare_versions("2026.4", "2026.4.1"), Ordering::Less);
    }

    /// Versions compare as versions: build metadata left out, pre-releases below their
    /// release, a missing part 0, numbers of any length as numbers.
    #[test]
    fn versions_compare_as_versions() {
        use Ordering::{Equal, Greater, Less};
        for (a, b, order) in [
            ("1.13.1+cpu", "1.13.1", Equal),
            ("2.5.1+cu121", "2.5.1+cpu", Equal),
            ("1.13.1+cpu", "1.13.2", Less),
            ("2.0.0-rc1", "2.0.0", Less),
            ("2.0.0rc1", "2.0.0", Less),
            ("2.6.0.dev20241112+cpu", "2.6.0", Less),
            ("2.6.0.dev20241112", "2.5.1", Greater),
            ("2.0.0-rc2", "2.0.0-rc10", Less),
            ("1.0.0-alpha", "1.0.0-alpha.1", Less),
            ("1.0.0-alpha.1", "1.0.0-beta", Less),
            ("1.0.0-rc.1", "1.0.0-rc1", Equal),
            ("1.2.0", "1.2", Equal),
            ("1.2", "1.2.0.0", Equal),
            ("1.010", "1.10", Equal),
            ("v1.2", "1.2", Equal),
            ("18446744073709551616", "18446744073709551615", Greater),
            (
                "1.99999999999999999999999",
                "1.100000000000000000000000",
                Less,
            ),
            ("1.9", "1.10", Less),
            ("2026.3.10", "2026.4", Less),
        ] {
            assert_eq!(compare_versions(a, b), order, "{a} against {b}");
            assert_eq!(compare_versions(b, a), order.reverse(), "{b} against {a}");
        }
        let torch = Facts {
            version: Some("1.13.1+cpu".into()),
            ..Facts::default()
        };
        assert!(holds("version <= 1.13.1", &torch));
        assert!(holds("version == 1.13.1", &torch));
        assert!(!holds("version < 1.13.1", &torch));
        let rc = Facts {
            version: Some("2.0.0-rc1".into()),
            ..Facts::default()
        };
        assert!(holds("version < 2.0.0", &rc));
        assert!(holds("version >= 1.99", &rc));
    }

    #[test]
    fn a_fact_the_run_lacks_makes_its_test_false_and_is_named() {
        let f = Facts {
            os: Some("linux".into()),
            ..Facts::default()
        };
        let c = Condition::parse("version >= 1.0 or cpu_flags has avx2 or os == linux").unwrap();
        let e = c.evaluate(&f);
        assert!(e.holds);
        assert_eq!(e.unknown, ["cpu_flags", "version"]);
        assert!(!holds("cpu_flags lacks amx_tile", &f));
    }

    #[test]
    fn malformed_conditions_say_what_is_wrong() {
        let err = |text: &str| Condition::parse(text).unwrap_err().problem;
        assert_eq!(err(""), "it is empty");
        assert!(err("cpu == amd").starts_with("unknown fact `cpu` (one of engine, version"));
        assert_eq!(
            err("os ~ linux"),
            "unknown relation `~` (one of ==, !=, <, <=, >, >=, has, lacks)"
        );
        assert_eq!(
            err("cpu_flags == avx2"),
            "`cpu_flags` is a list: test it with has or lacks"
        );
        assert_eq!(
            err("os has linux"),
            "`os` is not a list: has and lacks test lists"
        );
        assert_eq!(err("os < linux"), "`<` orders `version` only, not `os`");
        assert_eq!(err("os == linux but"), "expected `and` or `or`, got `but`");
        assert_eq!(
            err("os == linux and"),
            "expected `<fact> <relation> <value>`, got ``"
        );
        assert_eq!(
            err("cpu_model == \"AMD EPYC"),
            "a double quote is not closed"
        );
    }

    #[test]
    fn cpuinfo_gives_vendor_model_and_flags() {
        let text = "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC\n\
                    flags\t\t: fpu avx2 avx512f\n\nprocessor\t: 1\nvendor_id\t: Other\n";
        let f = Facts::from_cpuinfo(text);
        assert_eq!(f.cpu_vendor.as_deref(), Some("AuthenticAMD"));
        assert_eq!(f.cpu_model.as_deref(), Some("AMD EPYC"));
        assert_eq!(f.cpu_flags, ["avx2", "avx512f", "fpu"]);
    }

    #[test]
    fn the_hello_takes_the_place_of_the_runners_reading() {
        let engine = EngineId {
            name: "openvino".into(),
            version: Some("2026.4.1".into()),
        };
        let platform = Platform {
            cpu_model: Some("AMD EPYC 9R14".into()),
            engine_flags: Some(vec!["BF16".into()]),
            ..Platform::default()
        };
        let f = Facts {
            os: Some("linux".into()),
            cpu_model: Some("AMD EPYC".into()),
            ..Facts::default()
        }
        .with_hello(Some(&engine), Some(&platform));
        assert_eq!(f.line(), "openvino 2026.4.1, linux, AMD EPYC 9R14");
        assert_eq!(f.engine_flags, ["BF16"]);
        assert_eq!(f.pairs()["engine_flags"], "BF16");
    }

    /// A hello's facts are bounded in every report (a 50 MB cpu_model, a million flags), and
    /// their control characters are escaped on the console.
    #[test]
    fn a_hellos_facts_are_bounded_and_printable() {
        let engine = EngineId {
            name: "eng\u{1b}[31m\u{7}\0\nx".into(),
            version: Some("1.0".into()),
        };
        let platform = Platform {
            cpu_model: Some("é".repeat(25_000_000)),
            engine_flags: Some((0..1_000_000).map(|k| format!("F{k}")).collect()),
            cpu_flags: Some(vec!["x".repeat(100)]),
            ..Platform::default()
        };
        let f = Facts::default().with_hello(Some(&engine), Some(&platform));
        let model = f.cpu_model.as_deref().unwrap();
        assert!(model.len() < FACT_LIMIT + 32, "{}", model.len());
        assert!(model.ends_with("… (50000000 bytes)"), "{model}");
        assert_eq!(f.engine_flags.len(), FLAG_LIMIT + 1);
        assert_eq!(f.engine_flags.last().unwrap(), "… (998976 more)");
        assert_eq!(
            f.cpu_flags[0],
            format!("{}… (100 bytes)", "x".repeat(FLAG_LENGTH))
        );
        let json = serde_json::to_string(&f).unwrap();
        assert!(json.len() < 64 << 10, "{}", json.len());
        let line = f.line();
        assert!(!line.chars().any(char::is_control), "{line:?}");
        assert!(
            line.starts_with("eng\\u{1b}[31m\\u{7}\\0\\nx 1.0"),
            "{line}"
        );
        assert_eq!(printable("plain: é ✓"), "plain: é ✓");
        assert_eq!(printable("a\u{202e}b"), "a\\u{202e}b");
    }
}
