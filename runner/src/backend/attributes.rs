//! The attribute values a backend can declare in its hello (`attributes`, docs/protocol.md,
//! "Messages"): per op, per attribute, the values it implements. A case that uses a value
//! the backend does not list is not sent; it is reported as excluded by that declaration.
//!
//! Only attributes that pick a behaviour from a fixed set can be declared: Slice's and
//! Scale's `mode`, Reformat's formats and DLA generation. Reformat's `format` stands for both
//! `from` and `to`, since an engine implements a layout whichever side of the conversion it
//! is on.

use opspec::ops::{reformat, scale, slice, Attrs, Op};
use serde::Serialize;

/// An attribute a hello may declare values for.
pub(crate) struct Declarable {
    pub(crate) op: Op,
    /// The name in the hello: the attribute's own, or `format` for Reformat's `from` and `to`.
    pub(crate) name: &'static str,
    /// Every value, in the wire's spelling.
    pub(crate) values: fn() -> Vec<String>,
    /// The values a case uses (defaults included).
    pub(crate) used: fn(&Attrs) -> Vec<String>,
}

/// The wire name of an enum value (its serde spelling, as in spec files and requests).
pub(crate) fn wire<T: Serialize>(value: T) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(name)) => name,
        other => unreachable!("attribute values serialize as strings, not {other:?}"),
    }
}

pub(crate) const DECLARABLE: [Declarable; 4] = [
    Declarable {
        op: Op::Slice,
        name: "mode",
        values: || slice::Mode::ALL.map(wire).to_vec(),
        used: |attrs| match attrs {
            Attrs::Slice(a) => vec![wire(a.mode.unwrap_or_default())],
            _ => Vec::new(),
        },
    },
    Declarable {
        op: Op::Scale,
        name: "mode",
        values: || scale::Mode::ALL.map(wire).to_vec(),
        used: |attrs| match attrs {
            Attrs::Scale(a) => vec![wire(a.mode)],
            _ => Vec::new(),
        },
    },
    Declarable {
        op: Op::Reformat,
        name: "format",
        values: || reformat::Format::ALL.map(|f| f.name().to_owned()).to_vec(),
        used: |attrs| match attrs {
            Attrs::Reformat(a) => vec![a.from.name().to_owned(), a.to.name().to_owned()],
            _ => Vec::new(),
        },
    },
    Declarable {
        op: Op::Reformat,
        name: "dla",
        values: || reformat::Dla::ALL.map(wire).to_vec(),
        used: |attrs| match attrs {
            Attrs::Reformat(a) => vec![wire(a.dla.unwrap_or_default())],
            _ => Vec::new(),
        },
    },
];

/// The declarable attribute `name` of `op`.
pub(crate) fn declarable(op: Op, name: &str) -> Option<&'static Declarable> {
    DECLARABLE.iter().find(|d| d.op == op && d.name == name)
}

/// The names of the declarable attributes of `op`, for error messages.
pub(crate) fn declarable_names(op: Op) -> Vec<&'static str> {
    DECLARABLE
        .iter()
        .filter(|d| d.op == op)
        .map(|d| d.name)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_spelled_as_on_the_wire() {
        let slice = declarable(Op::Slice, "mode").unwrap();
        assert_eq!(
            (slice.values)(),
            ["strict_bounds", "wrap", "clamp", "fill", "reflect"]
        );
        // An absent mode is the default, strict_bounds.
        assert_eq!(
            (slice.used)(&Attrs::Slice(slice::Attrs::default())),
            ["strict_bounds"]
        );
        let format = declarable(Op::Reformat, "format").unwrap();
        assert!((format.values)().contains(&"DLA_HWC4".to_owned()));
        assert_eq!(
            (declarable(Op::Reformat, "dla").unwrap().values)(),
            ["orin", "xavier"]
        );
        assert_eq!(
            (declarable(Op::Scale, "mode").unwrap().values)(),
            ["uniform", "channel", "elementwise"]
        );
        assert!(declarable(Op::Shuffle, "mode").is_none());
        assert_eq!(declarable_names(Op::Reformat), ["format", "dla"]);
    }
}
