//! opspec-spec: the suite's side of opspec. The spec files (the declarative cases) and their
//! loading into typed [`Case`]s, the clause catalogues, the JSON Schemas of the format, the
//! comparison of outputs with a case's expectation ([`compare`]), and the bytes of tensors as
//! the wire protocol, npy files and goldens hold them ([`bytes`], [`npy`], [`source`]). The
//! reference interpreter (crate `opspec`) knows nothing of any of it.
//!
//! Layout: `<spec dir>/<op>/<file>.yaml`; the folder names the op. Each case becomes one trial
//! per dtype it lists, named `<op>::<file>::<case>[::<dtype>]`. The format is documented in
//! CONTRIBUTING.md. Every problem is reported as a [`SpecError`] naming the file, the case and
//! the field; a structural problem voids its file, a value problem only its case.

#![forbid(unsafe_code)]

pub mod bytes;
pub mod clauses;
pub mod compare;
mod form;
mod load;
pub mod npy;
pub mod ops;
pub mod schema;
pub mod source;
pub mod value;
pub mod vocabulary;
pub mod yaml;

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

pub use load::{
    load_dirs, load_file, op_files, parse_attrs, yaml_to_json, Loaded, OpFile, YamlToJsonError,
};

use crate::compare::Tolerance;
use opspec::dtype::DType;
use opspec::error::ErrorKind;
use opspec::ops::{Attrs, Invocation, Op};
use opspec::tensor::Tensor;

/// What a case expects.
#[derive(Clone, Debug, PartialEq)]
pub enum Expectation {
    /// These outputs, in position order.
    Outputs(Vec<Tensor>),
    /// A rejection of this kind, whose message contains `message` when given.
    Error {
        kind: ErrorKind,
        message: Option<String>,
    },
}

/// One trial: a case with its dtype chosen.
#[derive(Clone, Debug, PartialEq)]
pub struct Case {
    pub op: Op,
    /// The file's stem, the middle part of the trial name.
    pub file: String,
    pub path: PathBuf,
    pub name: String,
    /// The entry of the case's `dtypes` this trial runs, if the case lists dtypes.
    pub dtype: Option<DType>,
    pub source: String,
    /// The clause ids (from `specs/<op>.clauses.yaml`) the case exercises.
    pub clauses: Vec<String>,
    /// The expected result rests on a point the reference marks \[inferred\].
    pub inferred: bool,
    pub note: Option<String>,
    pub invocation: Invocation,
    pub expect: Expectation,
    /// The case's own tolerance (`tolerance: {ulp: N}` / `{abs: N}`); Scale only. `None`
    /// takes the default for the output dtype ([`crate::compare::default_tolerance`]).
    pub tolerance: Option<Tolerance>,
    /// Targets on which the case is known not to run, with the documented reason
    /// (`unsupported_on: {dla: "custom power values are not supported on DLA"}`). A backend that
    /// declares one of these targets gets the case skipped with the reason.
    pub unsupported_on: BTreeMap<String, String>,
    /// The expected result is the reference's reading of behaviour the vendor leaves
    /// undocumented (e.g. a negative base with a non-integer power): another implementation may
    /// legitimately differ.
    pub implementation_defined: bool,
    /// Where the expected values come from: the documents, or a recorded run of the vendor's
    /// implementation (`evidence: recorded`).
    pub evidence: Evidence,
}

/// The provenance of a case's expected values (the `evidence` field of a spec case).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Evidence {
    /// Worked out from the documents the case cites (the default).
    #[default]
    Documented,
    /// Printed by a run of the vendor's implementation whose log the case's `source` names.
    Recorded,
}

impl Evidence {
    pub const ALL: [Evidence; 2] = [Evidence::Documented, Evidence::Recorded];

    /// The name a spec file uses.
    pub fn name(self) -> &'static str {
        match self {
            Evidence::Documented => "documented",
            Evidence::Recorded => "recorded",
        }
    }

    pub fn from_name(name: &str) -> Option<Evidence> {
        Self::ALL.into_iter().find(|e| e.name() == name)
    }

    /// The known names, comma-separated, for messages.
    pub fn names() -> String {
        Self::ALL.map(Evidence::name).join(", ")
    }
}

impl fmt::Display for Evidence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Case {
    pub fn trial_name(&self) -> String {
        trial_name(self.op.name(), &self.file, &self.name, self.dtype)
    }

    /// The first of `targets` the case is restricted on, with the reason.
    pub fn unsupported_reason<S: AsRef<str>>(&self, targets: &[S]) -> Option<(&str, &str)> {
        targets.iter().find_map(|target| {
            self.unsupported_on
                .get_key_value(target.as_ref())
                .map(|(target, reason)| (target.as_str(), reason.as_str()))
        })
    }
}

/// Names of attributes that a case also gives as inputs: a case gives each value one way
/// only (the spec and sweep loaders refuse it otherwise). An input that stands for an
/// attribute has the attribute's name (Shuffle's `reshape_dims`, Slice's `start`, ...).
pub fn given_twice(attrs: &Attrs, inputs: &[Option<Tensor>]) -> Vec<&'static str> {
    let names = attrs.op().inputs();
    let given: Vec<&'static str> = (names.iter().zip(inputs).skip(1))
        .filter(|(_, input)| input.is_some())
        .map(|(&name, _)| name)
        .collect();
    if given.is_empty() {
        return given;
    }
    // The attributes' wire form leaves absent attributes out.
    let written = serde_json::to_value(attrs).expect("attributes always serialize");
    given
        .into_iter()
        .filter(|name| written.get(name).is_some())
        .collect()
}

/// A dtype's name with its indefinite article, as messages read it aloud: "an int32", "an
/// fp8", "a uint8", "a float16".
pub(crate) fn with_article(dtype: DType) -> String {
    let article = match dtype {
        DType::Int4 | DType::Int8 | DType::Int32 | DType::Int64 | DType::Fp8 => "an",
        _ => "a",
    };
    format!("{article} {}", dtype.name())
}

/// The targets a case may name in `unsupported_on` (a backend declares its own in the
/// handshake, see docs/protocol.md).
pub const TARGETS: [&str; 1] = ["dla"];

/// `<op>::<file>::<case>[::<dtype>]`.
pub fn trial_name(op: &str, file: &str, case: &str, dtype: Option<DType>) -> String {
    match dtype {
        Some(dtype) => format!("{op}::{file}::{case}::{dtype}"),
        None => format!("{op}::{file}::{case}"),
    }
}

/// What kind of problem a [`SpecError`] is. The names ([`SpecErrorKind::name`]) are stable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SpecErrorKind {
    /// A file or folder that cannot be read (permissions, a dangling link, ...).
    Unreadable,
    /// An entry that is not where, or not what, a spec folder holds: an unknown op folder, a
    /// file that is not `.yaml`, a folder inside an op folder, files outside op folders.
    Layout,
    /// Text that is not YAML; the whole file is dropped.
    Syntax,
    /// YAML that does not have the format's structure (an unknown or missing field, a value of
    /// the wrong type); the whole file is dropped.
    Structure,
    /// A case (or sweep entry) that breaks a rule of the format (an unknown attribute, a value
    /// out of its dtype's range, data that does not fit the shape, ...); that case is dropped.
    Case,
    /// A name defined twice (a case in a file, a trial or a sweep across folders).
    Duplicate,
}

impl SpecErrorKind {
    pub const ALL: [SpecErrorKind; 6] = [
        SpecErrorKind::Unreadable,
        SpecErrorKind::Layout,
        SpecErrorKind::Syntax,
        SpecErrorKind::Structure,
        SpecErrorKind::Case,
        SpecErrorKind::Duplicate,
    ];

    pub fn name(self) -> &'static str {
        match self {
            SpecErrorKind::Unreadable => "unreadable",
            SpecErrorKind::Layout => "layout",
            SpecErrorKind::Syntax => "syntax",
            SpecErrorKind::Structure => "structure",
            SpecErrorKind::Case => "case",
            SpecErrorKind::Duplicate => "duplicate",
        }
    }
}

impl fmt::Display for SpecErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What kind of problem voids a case ([`CaseProblem::kind`]). The names
/// ([`CaseProblemKind::name`]) are stable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CaseProblemKind {
    /// A field the case needs is absent or empty: its source, `expected` or `error`, the
    /// `input` tensor, a tensor's dtype.
    Missing,
    /// A name the format does not know: an error kind, an input or output, a target, a dtype.
    Unknown,
    /// A value the format does not accept: a case name's characters, a tolerance that is no
    /// whole number, an empty reason.
    Invalid,
    /// Fields that exclude each other: `expected` and `error`, a tolerance where none applies,
    /// a value given both as an attribute and as an input, a dtype listed twice.
    Conflict,
    /// Attributes that are not the op's (an unknown attribute, a value of the wrong type).
    Attrs,
    /// A tensor that cannot be built: a negative dim, a shape over the element budget, data
    /// that does not fit its shape or dtype, an `.npy` file that does not match.
    Tensor,
}

impl CaseProblemKind {
    pub const ALL: [CaseProblemKind; 6] = [
        CaseProblemKind::Missing,
        CaseProblemKind::Unknown,
        CaseProblemKind::Invalid,
        CaseProblemKind::Conflict,
        CaseProblemKind::Attrs,
        CaseProblemKind::Tensor,
    ];

    pub fn name(self) -> &'static str {
        match self {
            CaseProblemKind::Missing => "missing",
            CaseProblemKind::Unknown => "unknown",
            CaseProblemKind::Invalid => "invalid",
            CaseProblemKind::Conflict => "conflict",
            CaseProblemKind::Attrs => "attrs",
            CaseProblemKind::Tensor => "tensor",
        }
    }
}

impl fmt::Display for CaseProblemKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A problem that voids one case (or one sweep entry): its kind, the field it is in
/// (`attrs.start`, `inputs.input.shape`) and what is wrong. A loader reports it as a
/// [`SpecError`] of kind [`SpecErrorKind::Case`], which adds the file and the case.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CaseProblem {
    pub kind: CaseProblemKind,
    pub field: String,
    pub message: String,
}

impl CaseProblem {
    pub fn new(
        kind: CaseProblemKind,
        field: impl Into<String>,
        message: impl Into<String>,
    ) -> CaseProblem {
        CaseProblem {
            kind,
            field: field.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for CaseProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "field `{}`: {}", self.field, self.message)
    }
}

impl std::error::Error for CaseProblem {}

/// The multi-index of flat position `flat` in a tensor of `shape` (row-major): how messages
/// name an element (a data list's entry, a mismatched output element).
///
/// ```
/// use opspec_spec::unravel;
/// assert_eq!(unravel(&[2, 3, 4], 23), vec![1, 2, 3]);
/// assert_eq!(unravel(&[2, 3, 4], 4), vec![0, 1, 0]);
/// assert_eq!(unravel(&[5], 3), vec![3]);
/// assert_eq!(unravel(&[], 0), Vec::<usize>::new());
/// // An empty axis leaves the position to the others.
/// assert_eq!(unravel(&[0, 3], 2), vec![0, 2]);
/// ```
pub fn unravel(shape: &[usize], mut flat: usize) -> Vec<usize> {
    let mut index = vec![0; shape.len()];
    for axis in (0..shape.len()).rev() {
        if shape[axis] > 0 {
            index[axis] = flat % shape[axis];
            flat /= shape[axis];
        }
    }
    index
}

/// A problem in a spec (or sweep) file, located as precisely as it can be. `Display` names the
/// file, the case and the field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpecError {
    pub kind: SpecErrorKind,
    pub path: PathBuf,
    /// The op folder (may be an unknown op's name).
    pub op: String,
    pub file: String,
    pub case: Option<String>,
    pub field: Option<String>,
    pub message: String,
}

impl SpecError {
    /// The name of the failing trial that reports this problem.
    /// `<op>::<file>::<case>`, or `<op>::<file>` for a problem with the whole file (or
    /// `<op>::<folder>` for an unknown op's folder).
    pub fn trial_name(&self) -> String {
        match &self.case {
            Some(case) => trial_name(&self.op, &self.file, case, None),
            None => format!("{}::{}", self.op, self.file),
        }
    }
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.path.display())?;
        if let Some(case) = &self.case {
            write!(f, ": case `{case}`")?;
        }
        if let Some(field) = &self.field {
            write!(f, ": field `{field}`")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for SpecError {}

/// ` (did you mean `x`?)` when one of `known` is within a few edits of `word` (a typo such as
/// `slice.wrap.modulus` or `shufle`), the nearest first found; empty otherwise.
pub fn did_you_mean<'a>(word: &str, known: impl IntoIterator<Item = &'a str>) -> String {
    let limit = (word.chars().count() / 4).clamp(1, 3);
    let mut best: Option<(usize, &str)> = None;
    for candidate in known {
        let distance = edit_distance(word, candidate);
        let nearer = match best {
            None => true,
            Some((d, _)) => distance < d,
        };
        if distance <= limit && nearer {
            best = Some((distance, candidate));
        }
    }
    best.map_or_else(String::new, |(_, c)| format!(" (did you mean `{c}`?)"))
}

/// The edit distance of `a` and `b` by characters: insertions, deletions, substitutions and
/// swaps of two neighbours (`slcie` is one edit from `slice`).
fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut d = vec![vec![0; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = best;
        }
    }
    d[a.len()][b.len()]
}

#[cfg(test)]
mod did_you_mean_tests {
    use super::did_you_mean;

    #[test]
    fn a_near_name_is_suggested_and_a_far_one_is_not() {
        let ids = ["slice.wrap.modulo", "slice.clamp.clamp"];
        assert_eq!(
            did_you_mean("slice.wrap.modulus", ids),
            " (did you mean `slice.wrap.modulo`?)"
        );
        assert_eq!(
            did_you_mean("shufle", ["shuffle", "slice"]),
            " (did you mean `shuffle`?)"
        );
        assert_eq!(
            did_you_mean("slcie", ["shuffle", "slice"]),
            " (did you mean `slice`?)"
        );
        assert_eq!(did_you_mean("transpose", ["shuffle", "slice"]), "");
    }
}
