//! The clause catalogue: every rule of every op, with a stable id and its source.
//!
//! One file per op beside the spec folders, `<specs>/<op>.clauses.yaml`, plus
//! `<specs>/common.clauses.yaml` for the rules every op shares (the loader of cases reads only the
//! op folders, so these files are never taken for cases). Ids read `<op>.<topic>.<rule>`, as in
//! StableHLO's spec; cases name the clauses they exercise (`clauses: [...]`) and every error the
//! interpreter raises names its clause ([`opspec::error::OpError::clause`]). `runner coverage`
//! reports the clauses no case names.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::Deserialize;

use super::load::parse_yaml;
use opspec::error::ErrorKind;
use opspec::ops::Op;

/// The catalogue files' scopes: `common`, then the ops of [`Op::ALL`].
pub const SCOPES: [&str; Op::ALL.len() + 1] = {
    let mut scopes = ["common"; Op::ALL.len() + 1];
    let mut i = 0;
    while i < Op::ALL.len() {
        scopes[i + 1] = Op::ALL[i].name();
        i += 1;
    }
    scopes
};

/// How the rule is known, as docs/semantics.md marks it. The status of a clause decides how
/// every case citing it is marked: a case citing an `inferred` clause is `inferred: true`, one
/// citing an `implementation_defined` clause is `implementation_defined: true`, and no other case
/// carries either mark ([`Catalogue::expected_marks`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Stated by the vendor's documentation or header comments.
    Doc,
    /// Observed output of the real product: printed in a vendor-maintained log, or the
    /// TensorRT-RTX builder's answer, reproducible with `runner/backends/tensorrt_rtx/`.
    Obs,
    /// Read from the vendor's open-source implementation.
    Impl,
    /// The reference's reading where the sources are silent or ambiguous; every backend is held
    /// to it.
    Inferred,
    /// The vendor leaves the result open, or its products differ: the expected value is the
    /// reference's reading, which binds only the reference (another backend that differs is
    /// reported as skipped with the difference).
    ImplementationDefined,
    /// A convention of this suite, not a vendor rule (spec format, element budget, ...).
    Suite,
}

impl Status {
    pub fn name(self) -> &'static str {
        match self {
            Status::Doc => "doc",
            Status::Obs => "obs",
            Status::Impl => "impl",
            Status::Inferred => "inferred",
            Status::ImplementationDefined => "implementation_defined",
            Status::Suite => "suite",
        }
    }
}

/// A catalogue file: `<specs>/<op>.clauses.yaml`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "opspec clause catalogue")]
pub(crate) struct CatalogueFile {
    /// The op whose rules the file lists (`common` for the rules every op shares); the file is
    /// named after it.
    op: String,
    /// The rules, one clause each.
    clauses: Vec<ClauseDef>,
}

/// One rule.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ClauseDef {
    /// `<op>.<topic>.<rule>`, lower case, words joined by `-`; stable once published, since
    /// cases and error messages cite it.
    #[schemars(regex(pattern = r"^[a-z_]+(\.[a-z0-9]+(-[a-z0-9]+)*)+$"))]
    id: String,
    /// The rule in one line.
    rule: String,
    /// The document and clause the rule comes from (e.g. "NvInfer.h 10.16 ISliceLayer kREFLECT
    /// comment; docs/semantics.md §2.2").
    source: String,
    /// How the rule is known, as docs/semantics.md marks it.
    status: Status,
    /// The error kind raised when a case breaks the rule (error clauses only).
    #[serde(default)]
    #[schemars(schema_with = "super::form::error_kind_schema")]
    error: Option<String>,
    /// Why no spec case can exercise this clause (e.g. the spec loader already rejects what it
    /// guards). Such a clause is listed by `runner coverage` instead of failing it.
    #[serde(default)]
    no_case: Option<String>,
}

/// One rule of the catalogue.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Clause {
    pub id: String,
    /// `common` or an op name.
    pub scope: String,
    pub rule: String,
    pub source: String,
    pub status: Status,
    pub error: Option<ErrorKind>,
    pub no_case: Option<String>,
    pub path: PathBuf,
}

/// The marks of a case that qualify its expected result (see [`Status`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Marks {
    pub inferred: bool,
    pub implementation_defined: bool,
}

impl Marks {
    /// The marks a case carries.
    pub fn of(case: &crate::Case) -> Marks {
        Marks {
            inferred: case.inferred,
            implementation_defined: case.implementation_defined,
        }
    }
}

/// A problem in a catalogue file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CatalogueError {
    pub path: PathBuf,
    pub clause: Option<String>,
    pub field: Option<String>,
    pub message: String,
}

impl fmt::Display for CatalogueError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.path.display())?;
        if let Some(clause) = &self.clause {
            write!(f, ": clause `{clause}`")?;
        }
        if let Some(field) = &self.field {
            write!(f, ": field `{field}`")?;
        }
        write!(f, ": {}", self.message)
    }
}

/// Every clause of a set of spec folders, by id.
#[derive(Clone, Debug, Default)]
pub struct Catalogue {
    clauses: BTreeMap<String, Clause>,
    /// The ids in the order the catalogue files list them (common first, then each op's).
    order: Vec<String>,
}

/// The catalogue file of `scope` in `dir`.
pub fn catalogue_path(dir: &Path, scope: &str) -> PathBuf {
    dir.join(format!("{scope}.clauses.yaml"))
}

impl Catalogue {
    /// Reads `<dir>/<scope>.clauses.yaml` for every scope in every folder that has it. A scope
    /// that no folder catalogues is an error, and so is an id defined twice.
    pub fn load(dirs: &[PathBuf]) -> (Catalogue, Vec<CatalogueError>) {
        let mut catalogue = Catalogue::default();
        let mut errors = Vec::new();
        for scope in SCOPES {
            let paths: Vec<PathBuf> = dirs
                .iter()
                .map(|dir| catalogue_path(dir, scope))
                .filter(|path| path.is_file())
                .collect();
            if paths.is_empty() {
                errors.push(CatalogueError {
                    path: dirs
                        .first()
                        .map(|dir| catalogue_path(dir, scope))
                        .unwrap_or_default(),
                    clause: None,
                    field: None,
                    message: format!("no clause catalogue for `{scope}`"),
                });
            }
            for path in paths {
                match read_file(scope, &path) {
                    Ok(clauses) => {
                        for clause in clauses {
                            if let Some(first) = catalogue.clauses.get(&clause.id) {
                                errors.push(CatalogueError {
                                    path: path.clone(),
                                    clause: Some(clause.id.clone()),
                                    field: Some("id".into()),
                                    message: format!("also defined in {}", first.path.display()),
                                });
                            } else {
                                catalogue.order.push(clause.id.clone());
                                catalogue.clauses.insert(clause.id.clone(), clause);
                            }
                        }
                    }
                    Err(mut problems) => errors.append(&mut problems),
                }
            }
        }
        (catalogue, errors)
    }

    /// The catalogue for the cases of `dirs`: the built-in catalogues of `builtin` (this
    /// repository's `specs/`), with the clauses of the folders' own catalogue files added. A
    /// folder need not catalogue the built-in ops; a clause it lists that `builtin` also lists
    /// must state the same rule (a copy of `specs/`), and then counts as the folder's. When
    /// `builtin` is among `dirs`, this is [`Catalogue::load`].
    pub fn load_over(builtin: &Path, dirs: &[PathBuf]) -> (Catalogue, Vec<CatalogueError>) {
        let same = |a: &Path, b: &Path| match (a.canonicalize(), b.canonicalize()) {
            (Ok(a), Ok(b)) => a == b,
            _ => a == b,
        };
        if dirs.iter().any(|dir| same(dir, builtin)) {
            return Catalogue::load(dirs);
        }
        let (mut catalogue, mut errors) = Catalogue::load(&[builtin.to_path_buf()]);
        for scope in SCOPES {
            for path in dirs
                .iter()
                .map(|dir| catalogue_path(dir, scope))
                .filter(|path| path.is_file())
            {
                let clauses = match read_file(scope, &path) {
                    Ok(clauses) => clauses,
                    Err(mut problems) => {
                        errors.append(&mut problems);
                        continue;
                    }
                };
                for clause in clauses {
                    let problem = match catalogue.clauses.get(&clause.id) {
                        None => None,
                        Some(first) if first.path.starts_with(builtin) => {
                            let copy = Clause {
                                path: first.path.clone(),
                                ..clause.clone()
                            };
                            let message = format!(
                                "redefines the built-in clause of {} (give a rule of your own a new id)",
                                first.path.display()
                            );
                            (copy != *first).then_some(message)
                        }
                        Some(first) => Some(format!("also defined in {}", first.path.display())),
                    };
                    match problem {
                        Some(message) => errors.push(CatalogueError {
                            path: path.clone(),
                            clause: Some(clause.id.clone()),
                            field: Some("id".into()),
                            message,
                        }),
                        None => {
                            catalogue.order.push(clause.id.clone());
                            catalogue.clauses.insert(clause.id.clone(), clause);
                        }
                    }
                }
            }
        }
        (catalogue, errors)
    }

    pub fn get(&self, id: &str) -> Option<&Clause> {
        self.clauses.get(id)
    }

    pub fn contains(&self, id: &str) -> bool {
        self.clauses.contains_key(id)
    }

    /// Where `id` stands in the catalogue files (common's first, then each op's, each file in
    /// its own order); `None` for an id it does not have.
    pub fn position(&self, id: &str) -> Option<usize> {
        self.order.iter().position(|known| known == id)
    }

    /// All clauses, ordered by id.
    pub fn iter(&self) -> impl Iterator<Item = &Clause> {
        self.clauses.values()
    }

    /// The clauses of one scope (`common` or an op name), ordered by id.
    pub fn scope<'a>(&'a self, scope: &'a str) -> impl Iterator<Item = &'a Clause> + 'a {
        self.clauses.values().filter(move |c| c.scope == scope)
    }

    /// Whether a case of `op` may name `id`: a clause of its own op, or a common one.
    pub fn applies_to(&self, id: &str, op: Op) -> bool {
        self.get(id)
            .is_some_and(|c| c.scope == op.name() || c.scope == "common")
    }

    /// The marks a case citing `clauses` must carry: `inferred` when one of them is
    /// [`Status::Inferred`], `implementation_defined` when one is
    /// [`Status::ImplementationDefined`]. Unknown ids count for nothing (the coverage lint
    /// reports them).
    pub fn expected_marks<S: AsRef<str>>(&self, clauses: &[S]) -> Marks {
        let has = |status: Status| {
            clauses
                .iter()
                .any(|id| self.get(id.as_ref()).is_some_and(|c| c.status == status))
        };
        Marks {
            inferred: has(Status::Inferred),
            implementation_defined: has(Status::ImplementationDefined),
        }
    }

    /// How a case's marks disagree with the statuses of the clauses it cites, one line per
    /// mark; empty when they agree.
    pub fn mark_disagreements<S: AsRef<str>>(&self, clauses: &[S], marks: Marks) -> Vec<String> {
        let expected = self.expected_marks(clauses);
        let citing = |status: Status| {
            clauses
                .iter()
                .map(AsRef::as_ref)
                .filter(|id| self.get(id).is_some_and(|c| c.status == status))
                .map(|id| format!("`{id}`"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut found = Vec::new();
        for (field, status, has, wants) in [
            (
                "inferred",
                Status::Inferred,
                marks.inferred,
                expected.inferred,
            ),
            (
                "implementation_defined",
                Status::ImplementationDefined,
                marks.implementation_defined,
                expected.implementation_defined,
            ),
        ] {
            if wants && !has {
                found.push(format!(
                    "cites {} ({}) but is not marked `{field}: true`",
                    citing(status),
                    status.name()
                ));
            } else if has && !wants {
                found.push(format!(
                    "is marked `{field}: true` but cites no clause whose status is {}",
                    status.name()
                ));
            }
        }
        found
    }

    pub fn len(&self) -> usize {
        self.clauses.len()
    }

    pub fn is_empty(&self) -> bool {
        self.clauses.is_empty()
    }
}

/// Whether `id` is spelled as a clause id of `scope`: `<scope>.<word>[.<word>...]`, words of
/// `a-z0-9` joined by `-`.
pub fn is_clause_id(id: &str, scope: &str) -> bool {
    let Some(rest) = id
        .strip_prefix(scope)
        .and_then(|rest| rest.strip_prefix('.'))
    else {
        return false;
    };
    rest.split('.').all(|word| {
        !word.is_empty()
            && word.split('-').all(|part| {
                !part.is_empty()
                    && part
                        .chars()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
            })
    })
}

fn read_file(scope: &str, path: &Path) -> Result<Vec<Clause>, Vec<CatalogueError>> {
    let error = |clause: Option<&str>, field: &str, message: String| CatalogueError {
        path: path.to_path_buf(),
        clause: clause.map(str::to_owned),
        field: (!field.is_empty()).then(|| field.to_owned()),
        message,
    };
    let text = std::fs::read_to_string(path)
        .map_err(|e| vec![error(None, "", format!("cannot read: {e}"))])?;
    let file: CatalogueFile =
        parse_yaml(&text).map_err(|(field, message)| vec![error(None, &field, message)])?;
    let mut problems = Vec::new();
    if file.op != scope {
        problems.push(error(
            None,
            "op",
            format!("the file of `{scope}` says op `{}`", file.op),
        ));
    }
    let mut clauses = Vec::with_capacity(file.clauses.len());
    let mut seen = BTreeMap::new();
    for (index, def) in file.clauses.into_iter().enumerate() {
        let id = def.id.as_str();
        let mut problem = |field: &str, message: String| {
            problems.push(error(
                Some(id),
                &format!("clauses[{index}].{field}"),
                message,
            ))
        };
        if !is_clause_id(id, scope) {
            let message = format!(
                "a clause id of `{scope}` reads `{scope}.<topic>.<rule>`: words of a-z0-9 joined by `-`, separated by `.`"
            );
            problem("id", message);
        }
        if seen.insert(id.to_owned(), index).is_some() {
            problem("id", "listed twice in this file".into());
        }
        for (field, text) in [("rule", &def.rule), ("source", &def.source)] {
            if text.trim().is_empty() || text.contains('\n') {
                problem(field, format!("`{field}` is one non-empty line"));
            }
        }
        let kind = match &def.error {
            None => None,
            Some(name) => match ErrorKind::from_name(name) {
                Some(kind) => Some(kind),
                None => {
                    problem(
                        "error",
                        format!(
                            "unknown error kind `{name}` (known: {})",
                            ErrorKind::names()
                        ),
                    );
                    None
                }
            },
        };
        if def
            .no_case
            .as_ref()
            .is_some_and(|why| why.trim().is_empty())
        {
            problem("no_case", "say why no case can exercise the clause".into());
        }
        clauses.push(Clause {
            id: def.id,
            scope: scope.to_owned(),
            rule: def.rule,
            source: def.source,
            status: def.status,
            error: kind,
            no_case: def.no_case,
            path: path.to_path_buf(),
        });
    }
    if problems.is_empty() {
        Ok(clauses)
    } else {
        Err(problems)
    }
}

/// Why a clause id a case cites is refused.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ClauseIdProblem {
    /// No clause catalogue has the id (a typo such as `slice.wrap.modulus`); `suggestion` is
    /// ` (did you mean ...?)` or empty.
    Unknown { id: String, suggestion: String },
    /// The id is a clause of another op than the case's.
    OtherOp { id: String, op: Op },
}

impl fmt::Display for ClauseIdProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClauseIdProblem::Unknown { id, suggestion } => {
                write!(
                    f,
                    "unknown clause id `{id}` (no clause catalogue has it){suggestion}"
                )
            }
            ClauseIdProblem::OtherOp { id, op } => {
                write!(f, "clause id `{id}` is a clause of another op, not of {op}")
            }
        }
    }
}

/// A case that cites clause ids no catalogue has, or of another op: its trial fails, naming
/// the file, the case and each id.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "{}: case `{case}`: {} (specs/<op>.clauses.yaml lists the ids)",
    path.display(),
    problems.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")
)]
#[non_exhaustive]
pub struct ClauseIdError {
    /// The spec file.
    pub path: PathBuf,
    /// The case's name in its file.
    pub case: String,
    /// The trial that reports it.
    pub trial: String,
    pub op: Op,
    pub problems: Vec<ClauseIdProblem>,
}

impl Catalogue {
    /// The problems of the clause ids `case` cites: ids no catalogue has, and ids of another
    /// op than the case's.
    pub fn clause_id_problems(&self, case: &crate::Case) -> Vec<ClauseIdProblem> {
        (case.clauses.iter())
            .filter_map(|id| match self.get(id) {
                None => Some(ClauseIdProblem::Unknown {
                    id: id.clone(),
                    suggestion: crate::did_you_mean(id, self.iter().map(|c| c.id.as_str())),
                }),
                Some(_) if !self.applies_to(id, case.op) => Some(ClauseIdProblem::OtherOp {
                    id: id.clone(),
                    op: case.op,
                }),
                Some(_) => None,
            })
            .collect()
    }

    /// A case that names a clause id no catalogue has (a typo such as `slice.wrap.modulus`),
    /// or one of another op, would pass unnoticed: it is taken out of `cases`, and its error,
    /// naming the file, the case and the ids, returned (its trial fails; `runner coverage`
    /// lints the same, and more).
    pub fn take_miscited(&self, cases: &mut Vec<crate::Case>) -> Vec<ClauseIdError> {
        let mut failing = Vec::new();
        cases.retain(|case| {
            let problems = self.clause_id_problems(case);
            if problems.is_empty() {
                return true;
            }
            failing.push(ClauseIdError {
                path: case.path.clone(),
                case: case.name.clone(),
                trial: case.trial_name(),
                op: case.op,
                problems,
            });
            false
        });
        failing
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo_specs() -> PathBuf {
        PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join("specs")
    }

    #[test]
    fn the_repository_catalogue_loads() {
        let (catalogue, errors) = Catalogue::load(&[repo_specs()]);
        assert!(
            errors.is_empty(),
            "{}",
            errors
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("\n")
        );
        for scope in SCOPES {
            assert!(catalogue.scope(scope).count() > 0, "{scope}");
        }
    }

    #[test]
    fn clause_ids_are_spelled_by_scope() {
        assert!(is_clause_id("slice.reflect.single-element", "slice"));
        assert!(is_clause_id("as_strided.bounds.reach", "as_strided"));
        assert!(!is_clause_id("slice.reflect.single_element", "slice"));
        assert!(!is_clause_id("slice", "slice"));
        assert!(!is_clause_id("slice..x", "slice"));
        assert!(!is_clause_id("shuffle.reflect.x", "slice"));
        assert!(!is_clause_id("slice.Reflect", "slice"));
    }

    #[test]
    fn every_clause_the_interpreter_raises_is_catalogued() {
        // Every clause id literal in the interpreter's sources must be in the catalogue with the
        // error kind it is raised with; the compiler makes every error name one (OpError::new).
        let (catalogue, _) = Catalogue::load(&[repo_specs()]);
        let sources = [
            include_str!("../../../src/ops/mod.rs"),
            include_str!("../../../src/ops/shuffle.rs"),
            include_str!("../../../src/ops/slice.rs"),
            include_str!("../../../src/ops/as_strided.rs"),
            include_str!("../../../src/ops/scale.rs"),
            include_str!("../../../src/ops/reformat.rs"),
            include_str!("../../../src/tensor.rs"),
        ];
        let mut found = 0;
        for source in sources {
            for literal in source.split('"').skip(1).step_by(2) {
                let Some(scope) = SCOPES
                    .iter()
                    .find(|scope| literal.starts_with(&format!("{scope}.")))
                else {
                    continue;
                };
                if !is_clause_id(literal, scope) {
                    continue;
                }
                found += 1;
                let Some(clause) = catalogue.get(literal) else {
                    panic!(
                        "the interpreter raises `{literal}`, which specs/{scope}.clauses.yaml does not list"
                    );
                };
                assert!(
                    clause.error.is_some(),
                    "`{literal}` is raised as an error but its catalogue entry has no `error` kind"
                );
            }
        }
        assert!(found >= 40, "only {found} clause ids found in the sources");
    }

    #[test]
    fn catalogue_problems_name_file_clause_and_field() {
        let scratch = tempfile::tempdir().unwrap();
        let dir = scratch.path().to_path_buf();
        let path = catalogue_path(&dir, "slice");
        std::fs::write(
            &path,
            "op: slice\nclauses:\n  - id: slice.Bad\n    rule: r\n    source: s\n    status: doc\n    error: nope\n",
        )
        .unwrap();
        let (catalogue, errors) = Catalogue::load(std::slice::from_ref(&dir));
        assert!(catalogue.is_empty());
        let text: Vec<String> = errors.iter().map(ToString::to_string).collect();
        assert!(
            text.iter()
                .any(|e| e.contains("clause `slice.Bad`: field `clauses[0].id`")),
            "{text:?}"
        );
        assert!(
            text.iter().any(|e| e.contains("unknown error kind `nope`")),
            "{text:?}"
        );
        assert!(
            text.iter()
                .any(|e| e.contains("no clause catalogue for `shuffle`")),
            "{text:?}"
        );
        std::fs::write(&path, "op: slice\nclauses:\n  - id: slice.a\n    rule: r\n    source: s\n    status: doc\n    colour: red\n").unwrap();
        let (_, errors) = Catalogue::load(std::slice::from_ref(&dir));
        assert!(
            errors
                .iter()
                .any(|e| e.to_string().contains("unknown field `colour`")),
            "{errors:?}"
        );
    }
}
