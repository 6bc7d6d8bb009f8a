//! Errors an operator raises for a case it rejects, each with a stable kind.
//!
//! The kinds are the contract with spec files and backends: `docs/protocol.md` lists them with
//! the rule each one enforces. A kind's name never changes once published.

use std::fmt;

/// Declares [`ErrorKind`] from one list of `Variant => "wire_name"` pairs, so that the variants,
/// [`ErrorKind::ALL`] and the names cannot drift apart. The schema (`schema/*.schema.json`) and
/// the catalogue check take the names from `ALL`; a test checks the table of docs/protocol.md.
macro_rules! error_kinds {
    ($($(#[$doc:meta])* $variant:ident => $name:literal,)*) => {
        /// The stable kind of an operator error.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[non_exhaustive]
        pub enum ErrorKind {
            $($(#[$doc])* $variant,)*
        }

        impl ErrorKind {
            /// Every kind, in the order docs/protocol.md lists them.
            pub const ALL: &'static [ErrorKind] = &[$(ErrorKind::$variant,)*];

            /// The kind's wire name, as spec files, catalogues and backends write it.
            pub fn name(self) -> &'static str {
                match self {
                    $(ErrorKind::$variant => $name,)*
                }
            }
        }
    };
}

error_kinds! {
    UnsupportedDtype => "unsupported_dtype",
    TooLarge => "too_large",
    InvalidInput => "invalid_input",
    InvalidPermutation => "invalid_permutation",
    InvalidReshape => "invalid_reshape",
    VolumeMismatch => "volume_mismatch",
    IndeterminateWildcard => "indeterminate_wildcard",
    RankMismatch => "rank_mismatch",
    InvalidAxes => "invalid_axes",
    InvalidSize => "invalid_size",
    InvalidStride => "invalid_stride",
    InvalidOffset => "invalid_offset",
    OutOfBounds => "out_of_bounds",
    EmptyDimension => "empty_dimension",
    FillNotAllowed => "fill_not_allowed",
    InvalidFill => "invalid_fill",
    InvalidRank => "invalid_rank",
    InvalidChannelAxis => "invalid_channel_axis",
    InvalidWeights => "invalid_weights",
    InvalidChannels => "invalid_channels",
    InvalidBuffer => "invalid_buffer",
}

impl ErrorKind {
    pub fn from_name(name: &str) -> Option<ErrorKind> {
        ErrorKind::ALL
            .iter()
            .copied()
            .find(|kind| kind.name() == name)
    }

    /// Every name, comma-separated (for messages that list the known kinds).
    pub fn names() -> String {
        ErrorKind::ALL
            .iter()
            .map(|kind| kind.name())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An operator's rejection of a case.
///
/// `clause` names the rule the case breaks, as the clause catalogue lists it
/// (`specs/<op>.clauses.yaml`, `specs/common.clauses.yaml`); a case that expects the error names
/// the same clause. The kind is the wire contract; the clause and the message are for people.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{kind}: {message} (clause {clause})")]
pub struct OpError {
    pub kind: ErrorKind,
    pub clause: &'static str,
    pub message: String,
}

impl OpError {
    pub fn new(kind: ErrorKind, clause: &'static str, message: impl Into<String>) -> OpError {
        OpError {
            kind,
            clause,
            message: message.into(),
        }
    }

    /// The message with the clause it enforces, as the reference reports it.
    pub fn detail(&self) -> String {
        format!("{} (clause {})", self.message, self.clause)
    }
}

/// Shorthand for an `Err(OpError)`.
pub(crate) fn fail<T>(
    kind: ErrorKind,
    clause: &'static str,
    message: impl Into<String>,
) -> Result<T, OpError> {
    Err(OpError::new(kind, clause, message))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kind_names_are_unique_and_round_trip() {
        let mut names: Vec<_> = ErrorKind::ALL.iter().map(|k| k.name()).collect();
        for &kind in ErrorKind::ALL {
            assert_eq!(ErrorKind::from_name(kind.name()), Some(kind));
        }
        names.sort();
        names.dedup();
        assert_eq!(names.len(), ErrorKind::ALL.len());
    }

    /// docs/protocol.md's "Error kinds" table lists every kind once, in `ALL`'s order.
    #[test]
    fn the_protocol_documents_every_kind() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/protocol.md");
        let text = std::fs::read_to_string(path).unwrap();
        let section = text
            .split("\n## Error kinds")
            .nth(1)
            .expect("an Error kinds section");
        let section = section.split("\n#").next().unwrap();
        let documented: Vec<&str> = section
            .lines()
            .filter_map(|line| line.strip_prefix("| `"))
            .filter_map(|rest| rest.split('`').next())
            .collect();
        let names: Vec<&str> = ErrorKind::ALL.iter().map(|kind| kind.name()).collect();
        assert_eq!(
            documented, names,
            "docs/protocol.md \"Error kinds\" and ErrorKind::ALL differ"
        );
    }
}
