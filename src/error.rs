//! Errors an operator raises for a case it rejects, each with a stable kind.
//!
//! The kinds are the contract with spec files and backends: `docs/protocol.md` lists them with
//! the rule each one enforces. A kind's name never changes once published.

use std::fmt;

/// The stable kind of an operator error.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ErrorKind {
    UnsupportedDtype,
    TooLarge,
    InvalidInput,
    InvalidPermutation,
    InvalidReshape,
    VolumeMismatch,
    IndeterminateWildcard,
    RankMismatch,
    InvalidAxes,
    InvalidSize,
    InvalidStride,
    InvalidOffset,
    OutOfBounds,
    EmptyDimension,
    FillNotAllowed,
    InvalidFill,
    InvalidRank,
    InvalidChannelAxis,
    InvalidWeights,
    InvalidChannels,
    InvalidBuffer,
}

impl ErrorKind {
    pub const ALL: [ErrorKind; 21] = [
        ErrorKind::UnsupportedDtype,
        ErrorKind::TooLarge,
        ErrorKind::InvalidInput,
        ErrorKind::InvalidPermutation,
        ErrorKind::InvalidReshape,
        ErrorKind::VolumeMismatch,
        ErrorKind::IndeterminateWildcard,
        ErrorKind::RankMismatch,
        ErrorKind::InvalidAxes,
        ErrorKind::InvalidSize,
        ErrorKind::InvalidStride,
        ErrorKind::InvalidOffset,
        ErrorKind::OutOfBounds,
        ErrorKind::EmptyDimension,
        ErrorKind::FillNotAllowed,
        ErrorKind::InvalidFill,
        ErrorKind::InvalidRank,
        ErrorKind::InvalidChannelAxis,
        ErrorKind::InvalidWeights,
        ErrorKind::InvalidChannels,
        ErrorKind::InvalidBuffer,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::UnsupportedDtype => "unsupported_dtype",
            ErrorKind::TooLarge => "too_large",
            ErrorKind::InvalidInput => "invalid_input",
            ErrorKind::InvalidPermutation => "invalid_permutation",
            ErrorKind::InvalidReshape => "invalid_reshape",
            ErrorKind::VolumeMismatch => "volume_mismatch",
            ErrorKind::IndeterminateWildcard => "indeterminate_wildcard",
            ErrorKind::RankMismatch => "rank_mismatch",
            ErrorKind::InvalidAxes => "invalid_axes",
            ErrorKind::InvalidSize => "invalid_size",
            ErrorKind::InvalidStride => "invalid_stride",
            ErrorKind::InvalidOffset => "invalid_offset",
            ErrorKind::OutOfBounds => "out_of_bounds",
            ErrorKind::EmptyDimension => "empty_dimension",
            ErrorKind::FillNotAllowed => "fill_not_allowed",
            ErrorKind::InvalidFill => "invalid_fill",
            ErrorKind::InvalidRank => "invalid_rank",
            ErrorKind::InvalidChannelAxis => "invalid_channel_axis",
            ErrorKind::InvalidWeights => "invalid_weights",
            ErrorKind::InvalidChannels => "invalid_channels",
            ErrorKind::InvalidBuffer => "invalid_buffer",
        }
    }

    pub fn from_name(name: &str) -> Option<ErrorKind> {
        ErrorKind::ALL.into_iter().find(|kind| kind.name() == name)
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
pub fn fail<T>(
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
        for kind in ErrorKind::ALL {
            assert_eq!(ErrorKind::from_name(kind.name()), Some(kind));
        }
        names.sort();
        names.dedup();
        assert_eq!(names.len(), ErrorKind::ALL.len());
    }
}
