//! Large inline data, read without the YAML parser.
//!
//! serde_yaml_ng reads a whole document into a list of events before deserializing any of it,
//! each scalar an event of its own with its text on the heap: a spec file with millions of
//! values took about 14 times its size in memory, and most of its loading time went to the
//! YAML scanner and the allocator (BENCHMARKS.md, *Loading spec data*). So before the parser
//! sees a spec file, [`lift`] takes out every `data:` value that is a flow sequence of plain
//! numbers (`data: [[0.5, -1], [.nan, 3e-2]]`) and puts a placeholder string in its place,
//! keeping the text's line breaks so that the parser's line numbers stay true. The tensor is
//! then built from the original text ([`Lifted::tensor`]), one value at a time, by the same
//! conversion rules ([`super::value::to_bits`]).
//!
//! What is taken out is exactly what the YAML parser would read the same way: nested `[...]`
//! lists, rectangular, of plain scalars that are integers, decimals, `.nan`/`.inf`/`-.inf` and
//! `true`/`false` in the spellings serde_yaml_ng resolves them from (YAML 1.2 core schema, its
//! `de.rs`); anything else in a list (a quoted bit pattern, a comment, an anchor on the list, an
//! integer past 64 bits) leaves that list to the parser. A placeholder that does not end up as
//! a tensor's data, or an error that mentions one, makes the loader read the file again without
//! lifting ([`super::load::load_file`]), so lifting never changes what a file means.

use std::ops::Range;

use super::value::{to_bits, DataNode};
use crate::dtype::DType;
use crate::tensor::{Buffer, Tensor};

/// Starts every placeholder; no spec text contains it (a text that does is not lifted).
pub(super) const MARK: char = '\u{1}';

/// A spec text with its large data lists taken out.
pub(super) struct Lifted {
    /// The text the YAML parser reads.
    pub(super) text: String,
    spans: Vec<Span>,
}

/// One list taken out: where it is in the original text, and its dims.
struct Span {
    range: Range<usize>,
    dims: Vec<usize>,
}

/// `text` with every liftable `data: [...]` replaced by a placeholder, or `None` when there is
/// nothing to lift.
pub(super) fn lift(text: &str) -> Option<Lifted> {
    if text.contains(MARK) || text.contains("\\x01") {
        return None;
    }
    let bytes = text.as_bytes();
    let mut spans = Vec::new();
    let mut out = String::new();
    let mut copied = 0;
    for (at, _) in text.match_indices("data:") {
        if at < copied || (at > 0 && !matches!(bytes[at - 1], b' ' | b'\t' | b'{' | b',')) {
            continue;
        }
        let mut start = at + "data:".len();
        while matches!(bytes.get(start), Some(b' ' | b'\t')) {
            start += 1;
        }
        if bytes.get(start) != Some(&b'[') || start == at + "data:".len() {
            continue;
        }
        let Some((end, dims)) = scan(bytes, start) else {
            continue;
        };
        out.push_str(&text[copied..start]);
        out.push_str(&format!("\"\\x01data {}\"", spans.len()));
        // The line breaks, and the indentation that follows each, keep lines where they were.
        let mut line_start = false;
        for &b in &bytes[start..end] {
            match b {
                b'\n' | b'\r' => {
                    out.push(b as char);
                    line_start = true;
                }
                b' ' | b'\t' if line_start => out.push(b as char),
                _ => line_start = false,
            }
        }
        spans.push(Span {
            range: start..end,
            dims,
        });
        copied = end;
    }
    if spans.is_empty() {
        return None;
    }
    out.push_str(&text[copied..]);
    Some(Lifted { text: out, spans })
}

impl Lifted {
    /// The span a placeholder string stands for.
    pub(super) fn index(&self, placeholder: &str) -> Option<usize> {
        let index = placeholder.strip_prefix(MARK)?.strip_prefix("data ")?;
        index.parse().ok().filter(|&i| i < self.spans.len())
    }

    pub(super) fn len(&self) -> usize {
        self.spans.len()
    }

    /// The tensor of span `index` of `original` as `dtype` and `shape`. An error is
    /// (the position under `data`, the message), as for data the parser read; `None` when the
    /// list's nesting does not match `shape` (the parser's reading of it says how). A scalar
    /// [`scalar`] does not read (lifting checks only their letters) gives an error whose
    /// message holds [`MARK`], so that the file is read again without lifting.
    pub(super) fn tensor(
        &self,
        original: &str,
        index: usize,
        dtype: DType,
        shape: Vec<usize>,
    ) -> Option<Result<Tensor, (String, String)>> {
        let span = &self.spans[index];
        if span.dims != shape {
            return None;
        }
        let mut error = None;
        let values = tokens(&original[span.range.clone()])
            .enumerate()
            .map_while(|(i, token)| {
                let Some(node) = scalar(token) else {
                    error = Some((i, format!("{MARK}{token:?} is left to the YAML parser")));
                    return None;
                };
                match to_bits(&node, dtype) {
                    Ok(bits) => Some(bits),
                    Err(message) => {
                        error = Some((i, message.to_string()));
                        None
                    }
                }
            });
        let buffer = Buffer::from_bits(dtype.width(), values);
        Some(match error {
            Some((i, message)) => {
                let position: String = Tensor::unravel(&shape, i)
                    .iter()
                    .map(|i| format!("[{i}]"))
                    .collect();
                Err((format!("data{position}"), message))
            }
            None => Ok(Tensor {
                dtype,
                shape,
                buffer,
            }),
        })
    }

    /// The text of span `index`, for the parser to read when [`Lifted::tensor`] gives `None`.
    pub(super) fn source<'a>(&self, original: &'a str, index: usize) -> &'a str {
        &original[self.spans[index].range.clone()]
    }
}

/// The scalars of a scanned list, in order.
fn tokens(list: &str) -> impl Iterator<Item = &str> {
    let bytes = list.as_bytes();
    let mut at = 0;
    std::iter::from_fn(move || {
        while at < bytes.len() && is_delimiter(bytes[at]) {
            at += 1;
        }
        let start = at;
        while at < bytes.len() && !is_delimiter(bytes[at]) {
            at += 1;
        }
        // Delimiters are ASCII, so both ends are character boundaries.
        (at > start).then(|| &list[start..at])
    })
}

fn is_delimiter(b: u8) -> bool {
    matches!(b, b'[' | b']' | b',' | b' ' | b'\t' | b'\r' | b'\n')
}

/// The letters of the scalars [`scalar`] reads: lifting checks a token against these and
/// [`SPECIALS`] only, and [`scalar`] reads it when the tensor is built.
fn is_number_byte(b: u8) -> bool {
    b.is_ascii_digit() || matches!(b, b'+' | b'-' | b'.' | b'e' | b'E')
}

const SPECIALS: [&str; 15] = [
    "true", "True", "TRUE", "false", "False", "FALSE", ".nan", ".NaN", ".NAN", ".inf", ".Inf",
    ".INF", "+.inf", "+.Inf", "+.INF",
];

/// The end of the flow sequence starting at `start` and its dims, when it is a rectangular
/// nest of lists of plain scalars that [`scalar`] reads.
fn scan(bytes: &[u8], start: usize) -> Option<(usize, Vec<usize>)> {
    let mut dims: Vec<Option<usize>> = Vec::new();
    // Per open list: its entries so far, and whether a value (not a comma) came last.
    let mut open: Vec<(usize, bool)> = Vec::new();
    // The depth of the lists that hold scalars.
    let mut leaf: Option<usize> = None;
    let mut i = start;
    loop {
        let b = *bytes.get(i)?;
        match b {
            b' ' | b'\t' | b'\r' | b'\n' => i += 1,
            b'[' => {
                if open.last().is_some_and(|&(_, value)| value)
                    || leaf.is_some_and(|l| l < open.len() + 1)
                {
                    return None;
                }
                open.push((0, false));
                if dims.len() < open.len() {
                    dims.push(None);
                }
                i += 1;
            }
            b']' => {
                let (count, value) = open.pop()?;
                if count > 0 && !value {
                    return None; // a trailing comma: left to the parser
                }
                let depth = open.len();
                match dims[depth] {
                    None => dims[depth] = Some(count),
                    Some(n) if n != count => return None,
                    Some(_) => {}
                }
                i += 1;
                match open.last_mut() {
                    Some(parent) => {
                        parent.0 += 1;
                        parent.1 = true;
                    }
                    None => break,
                }
            }
            b',' => {
                let last = open.last_mut()?;
                if !last.1 {
                    return None;
                }
                last.1 = false;
                i += 1;
            }
            _ => {
                let depth = open.len();
                let last = open.last_mut()?;
                if last.1 || leaf.is_some_and(|l| l != depth) {
                    return None;
                }
                let mut end = i;
                while end < bytes.len() && !is_delimiter(bytes[end]) {
                    end += 1;
                }
                let token = &bytes[i..end];
                if !token.iter().all(|&b| is_number_byte(b))
                    && !SPECIALS
                        .iter()
                        .chain(&["-.inf", "-.Inf", "-.INF"])
                        .any(|s| s.as_bytes() == token)
                {
                    return None;
                }
                leaf = Some(depth);
                last.0 += 1;
                last.1 = true;
                i = end;
            }
        }
    }
    let dims: Option<Vec<usize>> = dims.into_iter().collect();
    let dims = dims?;
    if leaf.is_some_and(|l| l != dims.len()) {
        return None;
    }
    Some((i, dims))
}

/// A plain scalar as serde_yaml_ng resolves it (`visit_untagged_scalar` in its `de.rs`), for
/// the spellings lifting accepts; `None` for anything else.
fn scalar(token: &str) -> Option<DataNode> {
    if token.bytes().all(is_number_byte) {
        return number(token);
    }
    match token {
        "true" | "True" | "TRUE" => Some(DataNode::Bool(true)),
        "false" | "False" | "FALSE" => Some(DataNode::Bool(false)),
        ".nan" | ".NaN" | ".NAN" => Some(DataNode::Float(f64::NAN.copysign(1.0))),
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => {
            Some(DataNode::Float(f64::INFINITY))
        }
        "-.inf" | "-.Inf" | "-.INF" => Some(DataNode::Float(f64::NEG_INFINITY)),
        _ => None,
    }
}

/// A token of digits, signs, points and exponents, as serde_yaml_ng resolves it.
fn number(token: &str) -> Option<DataNode> {
    let unsigned = token.strip_prefix(['-', '+']).unwrap_or(token);
    let digits = !unsigned.is_empty() && unsigned.bytes().all(|b| b.is_ascii_digit());
    if digits && unsigned.len() > 1 && unsigned.starts_with('0') {
        return None; // leading zeros: a string to YAML 1.2
    }
    if digits {
        return if token.starts_with('-') {
            token.parse::<i64>().ok().map(|v| DataNode::Int(v as i128))
        } else {
            unsigned
                .parse::<u64>()
                .ok()
                .map(|v| DataNode::Int(v as i128))
        };
    }
    let rest = token.strip_prefix('+').unwrap_or(token);
    if token.starts_with('+') && rest.starts_with(['+', '-']) {
        return None;
    }
    rest.parse::<f64>()
        .ok()
        .filter(|v| v.is_finite())
        .map(DataNode::Float)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalars_read_as_the_yaml_parser_reads_them() {
        let tokens = [
            "0",
            "7",
            "-0",
            "+5",
            "-5",
            "18446744073709551615",
            "-9223372036854775808",
            "0.5",
            "-0.0",
            ".5",
            "5.",
            "1e5",
            "1E-3",
            "+.5",
            "+1.5",
            "00.5",
            "0e5",
            ".nan",
            ".NaN",
            ".inf",
            "+.inf",
            "-.INF",
            "true",
            "False",
            "TRUE",
        ];
        for token in tokens {
            let parsed: DataNode = serde_yaml::from_str(token).unwrap();
            let lifted = scalar(token).unwrap_or_else(|| panic!("{token} not lifted"));
            match (&parsed, &lifted) {
                (DataNode::Float(a), DataNode::Float(b)) => {
                    assert_eq!(a.to_bits(), b.to_bits(), "{token}")
                }
                _ => assert_eq!(parsed, lifted, "{token}"),
            }
        }
        // Left to the parser: strings to YAML, integers past 64 bits, other spellings.
        for token in [
            "007",
            "-01",
            "+-5",
            "--5",
            "1e400",
            "e5",
            ".",
            "-",
            "1_000",
            "0x10",
            "NaN",
            "nan",
            "inf",
            "null",
            "~",
            "36893488147419103232",
            "-9223372036854775809",
            "1:2",
        ] {
            assert_eq!(scalar(token), None, "{token}");
        }
    }

    fn lifted(text: &str) -> Option<Lifted> {
        lift(text)
    }

    #[test]
    fn only_rectangular_plain_lists_after_data_are_lifted() {
        let dims = |list: &str| {
            let text = format!("data: {list}\n");
            lifted(&text).map(|l| l.spans[0].dims.clone())
        };
        assert_eq!(dims("[1, 2, 3]"), Some(vec![3]));
        assert_eq!(dims("[[1, 2], [3, 4], [5, 6]]"), Some(vec![3, 2]));
        assert_eq!(dims("[]"), Some(vec![0]));
        assert_eq!(dims("[[], []]"), Some(vec![2, 0]));
        assert_eq!(dims("[[1,\n   2],\n  [3, 4]]"), Some(vec![2, 2]));
        for list in [
            "[[1, 2], [3]]",      // ragged
            "[1, [2]]",           // mixed
            "[[1], [[2]]]",       // mixed deeper
            "[1, 2,]",            // trailing comma
            "[1 2]",              // one scalar "1 2" to YAML
            "[\"0x7e01\"]",       // quoted
            "[1, # comment\n 2]", // a comment
            "[1, 2",              // unclosed
            "[,]",                // empty entry
            "[{a: 1}]",           // a mapping
        ] {
            assert_eq!(dims(list), None, "{list}");
        }
        assert!(lifted("data: &d [1, 2]\n").is_none(), "an anchored list");
        assert!(lifted("metadata: [1, 2]\n").is_none());
        assert!(lifted("note: \"\\x01\"\ndata: [1]\n").is_none());
    }

    #[test]
    fn placeholders_keep_the_lines_and_stand_for_the_list() {
        let text = "a: {shape: [2, 2], data: [[1, 2],\n      [3, 4]]}\nb: 1\n";
        let l = lifted(text).unwrap();
        assert_eq!(
            l.text,
            "a: {shape: [2, 2], data: \"\\x01data 0\"\n      }\nb: 1\n"
        );
        let value: serde_yaml::Value = serde_yaml::from_str(&l.text).unwrap();
        let placeholder = value["a"]["data"].as_str().unwrap();
        assert_eq!(l.index(placeholder), Some(0));
        let tensor = l.tensor(text, 0, DType::Int8, vec![2, 2]).unwrap().unwrap();
        assert_eq!(
            tensor,
            Tensor::from_bits(DType::Int8, vec![2, 2], vec![1, 2, 3, 4])
        );
        assert!(l.tensor(text, 0, DType::Int8, vec![4]).is_none());
        let e = l
            .tensor(text, 0, DType::Bool, vec![2, 2])
            .unwrap()
            .unwrap_err();
        assert_eq!(e.0, "data[0][1]");
        assert_eq!(l.source(text, 0), "[[1, 2],\n      [3, 4]]");
    }
}
