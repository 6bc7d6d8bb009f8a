//! The one YAML reader of spec, catalogue and sweep files: a serde deserializer that pulls
//! libyaml's events one at a time (through `libyaml-safer`, a safe port of libyaml, the parser
//! serde_yaml_ng wraps) and hands each to the visitor as it comes. Nothing of the document is
//! held but the event being read, so a data list streams straight into its typed buffer
//! (`super::value::TensorData`) and the memory a file takes is what its values take.
//!
//! Values mean what serde_yaml_ng makes of them (the scalar rules below are its rules: `0x10`
//! is 16, `010`, `yes` and bare `nan` are strings, `.nan` and `.inf` are floats), so a file
//! reads the same whichever of the two reads it; `load.rs`'s differential test holds the two
//! to that over mutated copies of every spec. Where the two differ it is on purpose, for bounds:
//! local tags (`!x`) are refused with their line; anchored values are kept (as events) for
//! their aliases, and anchors and aliases together are bounded by `MAX_ALIASED` events and
//! `MAX_ALIASED_BYTES` bytes of scalars (the YAML bomb's tool: many aliases of one small
//! value, or a few of one large value); nesting stops at `MAX_DEPTH` levels, data lists at
//! their own lower bound, before the rest of the file is read.

use std::fmt;
use std::io::BufRead;

use libyaml_safer::{EventData, Mark, Parser, ScalarStyle};
use serde::de::{self, DeserializeSeed, Expected, IgnoredAny, Unexpected, Visitor};

/// The deepest nesting of collections read, as serde_yaml_ng allows.
pub(crate) const MAX_DEPTH: usize = 128;

const TAG_NULL: &str = "tag:yaml.org,2002:null";
const TAG_BOOL: &str = "tag:yaml.org,2002:bool";
const TAG_INT: &str = "tag:yaml.org,2002:int";
const TAG_FLOAT: &str = "tag:yaml.org,2002:float";
const CORE_TAGS: &str = "tag:yaml.org,2002:";

/// Why a document was not read.
#[derive(Debug)]
pub struct Error {
    message: String,
    /// Where: 1-based line and column.
    at: Option<(u64, u64)>,
    /// The field's path as serde_yaml_ng writes it (`cases[0].inputs`), `.` at the root.
    path: Option<String>,
    /// The text is not YAML (libyaml refused it, or it could not be read).
    syntax: bool,
}

impl Error {
    fn new(message: impl Into<String>) -> Error {
        Error {
            message: message.into(),
            at: None,
            path: None,
            syntax: false,
        }
    }

    fn at(message: impl Into<String>, mark: Mark) -> Error {
        let mut error = Error::new(message);
        error.at = Some((mark.line + 1, mark.column + 1));
        error
    }

    fn libyaml(error: libyaml_safer::Error) -> Error {
        // libyaml-safer writes "<Kind> error: line L column C: <problem>"; serde_yaml_ng wrote
        // "<problem> at line L column C". Keep the latter's order: messages quote it.
        let text = error.to_string();
        let text = text
            .split_once(" error: ")
            .map_or(text.as_str(), |(_, rest)| rest);
        let message = match (error.problem_mark(), text.split_once(": ")) {
            (Some(mark), Some((_, problem))) => format!(
                "{problem} at line {} column {}",
                mark.line + 1,
                mark.column + 1
            ),
            _ => text.to_owned(),
        };
        Error {
            message,
            at: error.problem_mark().map(|m| (m.line + 1, m.column + 1)),
            path: None,
            syntax: true,
        }
    }

    /// The path of the field the problem is in, as serde_path_to_error writes it (`.` for
    /// the whole document).
    pub fn field(&self) -> String {
        self.path.clone().unwrap_or_else(|| ".".to_owned())
    }

    /// The problem without its field's path, for a message that names the field apart.
    pub fn without_path(&self) -> String {
        match self.at {
            Some((line, column)) if !self.syntax => {
                format!("{} at line {line} column {column}", self.message)
            }
            _ => self.message.clone(),
        }
    }

    /// Text that is not UTF-8: the whole file is refused as a syntax error, with `message`.
    pub(crate) fn encoding(message: impl Into<String>) -> Error {
        Error {
            syntax: true,
            ..Error::new(message)
        }
    }

    /// The text is not YAML (as opposed to YAML that does not fit the spec's structure).
    pub fn is_syntax(&self) -> bool {
        self.syntax
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.syntax {
            return f.write_str(&self.message);
        }
        if let Some(path) = self.path.as_deref().filter(|p| *p != ".") {
            write!(f, "{path}: ")?;
        }
        f.write_str(&self.message)?;
        if let Some((line, column)) = self.at {
            write!(f, " at line {line} column {column}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Error {}

impl de::Error for Error {
    fn custom<T: fmt::Display>(msg: T) -> Error {
        Error::new(msg.to_string())
    }
}

type Result<T, E = Error> = std::result::Result<T, E>;

/// Reads the one YAML document `text` holds into `T`, with the bounds above; the error names
/// the field (its path) and the line.
pub fn from_str<T: de::DeserializeOwned>(text: &str) -> Result<T> {
    // In 64 KiB pieces: libyaml-safer takes in all the bytes its reader hands it at once, as
    // 4-byte chars (a whole text handed over would cost 4 × its bytes).
    let reader = std::io::BufReader::with_capacity(1 << 16, text.as_bytes());
    let mut deserializer = Deserializer::new(reader)?;
    let value = T::deserialize(&mut deserializer)?;
    deserializer.end()?;
    Ok(value)
}

/// One event, as the deserializer needs it.
#[derive(Clone)]
enum Event {
    Scalar {
        value: String,
        style: ScalarStyle,
        tag: Option<String>,
    },
    SequenceStart,
    SequenceEnd,
    MappingStart,
    MappingEnd,
    /// An empty document.
    Void,
}

/// A step of the path to the value being read.
enum Step {
    Index(usize),
    Key(String),
    Unknown,
}

/// A streaming deserializer over one document.
pub(crate) struct Deserializer<R> {
    parser: Parser<R>,
    peeked: Option<(Event, Mark)>,
    depth: usize,
    path: Vec<Step>,
    /// The events of each anchored node read so far, by anchor, for its aliases.
    anchors: std::collections::HashMap<String, Vec<(Event, Mark)>>,
    /// The anchored nodes being read: anchor, open collections.
    recording: Vec<(String, usize)>,
    /// An alias's events still to hand out.
    replay: std::collections::VecDeque<(Event, Mark)>,
    /// Events recorded for anchors plus events replayed for aliases, against [`MAX_ALIASED`].
    aliased: usize,
    /// The bytes of those events' scalars, against [`MAX_ALIASED_BYTES`].
    aliased_bytes: usize,
}

/// The most bytes of scalars anchors may hold and aliases replay in one file (64 MiB): a 64 KiB
/// scalar aliased 60,000 times is few events but 3.9 GB.
pub(crate) const MAX_ALIASED_BYTES: usize = 64 << 20;

/// The bytes an event stands for: its scalar's text and tag.
fn event_bytes(event: &Event) -> usize {
    match event {
        Event::Scalar { value, tag, .. } => value.len() + tag.as_ref().map_or(0, String::len),
        _ => 0,
    }
}

/// The error of anchors and aliases past [`MAX_ALIASED`] events or [`MAX_ALIASED_BYTES`].
fn too_much_aliased(events: usize, bytes: usize, mark: Mark) -> Option<Error> {
    let what = if events > MAX_ALIASED {
        format!("{MAX_ALIASED} YAML events")
    } else if bytes > MAX_ALIASED_BYTES {
        format!("{MAX_ALIASED_BYTES} bytes")
    } else {
        return None;
    };
    let message = format!(
        "anchored values and their aliases come to more than {what}: write large data to an .npy file, or repeat less"
    );
    Some(Error::at(message, mark))
}

/// The error of collections nested past [`MAX_DEPTH`] levels.
fn too_deep(mark: Mark) -> Error {
    let message = format!("recursion limit exceeded: collections nest at most {MAX_DEPTH} levels");
    Error::at(message, mark)
}

/// The error of a second document in a file.
const ONE_DOCUMENT: &str =
    "a spec, catalogue or sweep file is one YAML document; this one holds more (`---`)";

/// The most events anchors may hold and aliases replay in one file: aliases let a few lines
/// stand for an exponential number of values (the "billion laughs"); spec files alias a tensor
/// or two.
pub(crate) const MAX_ALIASED: usize = 1 << 20;

impl<R: BufRead> Deserializer<R> {
    pub(crate) fn new(input: R) -> Result<Deserializer<R>> {
        let mut parser = Parser::new();
        parser.set_input(input);
        let mut deserializer = Deserializer {
            parser,
            peeked: None,
            depth: 0,
            path: Vec::new(),
            anchors: Default::default(),
            recording: Vec::new(),
            replay: Default::default(),
            aliased: 0,
            aliased_bytes: 0,
        };
        // The stream's and the document's start; an empty stream is an empty document.
        loop {
            let event = deserializer.parser.parse().map_err(Error::libyaml)?;
            match event.data {
                EventData::StreamStart { .. } => continue,
                EventData::DocumentStart { .. } => break,
                EventData::StreamEnd => {
                    deserializer.peeked = Some((Event::Void, event.start_mark));
                    break;
                }
                _ => return Err(Error::at("not a YAML stream", event.start_mark)),
            }
        }
        Ok(deserializer)
    }

    /// After the value: the document must end, and be the only one.
    pub(crate) fn end(&mut self) -> Result<()> {
        if let Some((Event::Void, _)) = self.peeked {
            return Ok(());
        }
        loop {
            let event = self.parser.parse().map_err(Error::libyaml)?;
            match event.data {
                EventData::DocumentEnd { .. } => continue,
                EventData::StreamEnd => return Ok(()),
                EventData::DocumentStart { .. } => {
                    let mut error = Error::at(ONE_DOCUMENT, event.start_mark);
                    error.syntax = true;
                    return Err(error);
                }
                _ => {
                    return Err(Error::at(
                        "expected the end of the document",
                        event.start_mark,
                    ))
                }
            }
        }
    }

    fn pull(&mut self) -> Result<(Event, Mark)> {
        let (event, mark, anchor) = match self.replay.pop_front() {
            Some((event, mark)) => (event, mark, None),
            None => self.parse()?,
        };
        if !self.recording.is_empty() {
            self.aliased += self.recording.len();
            self.aliased_bytes = (self.aliased_bytes)
                .saturating_add(self.recording.len().saturating_mul(event_bytes(&event)));
            if let Some(error) = too_much_aliased(self.aliased, self.aliased_bytes, mark) {
                return Err(error);
            }
            let opens = matches!(event, Event::SequenceStart | Event::MappingStart);
            let closes = matches!(event, Event::SequenceEnd | Event::MappingEnd);
            let mut done = Vec::new();
            for (index, (name, open)) in self.recording.iter_mut().enumerate() {
                self.anchors
                    .get_mut(name.as_str())
                    .expect("recording")
                    .push((event.clone(), mark));
                if opens {
                    *open += 1;
                } else if closes {
                    *open -= 1;
                }
                if *open == 0 {
                    done.push(index);
                }
            }
            for index in done.into_iter().rev() {
                self.recording.remove(index);
            }
        }
        if let Some(anchor) = anchor {
            let opens = matches!(event, Event::SequenceStart | Event::MappingStart);
            self.anchors
                .insert(anchor.clone(), vec![(event.clone(), mark)]);
            if opens {
                self.recording.push((anchor, 1));
            }
        }
        Ok((event, mark))
    }

    /// The parser's next event, with its anchor; an alias is replaced by its anchor's events.
    fn parse(&mut self) -> Result<(Event, Mark, Option<String>)> {
        let event = self.parser.parse().map_err(Error::libyaml)?;
        let mark = event.start_mark;
        let local_tag = |tag: &Option<String>| match tag {
            Some(tag) if !tag.starts_with(CORE_TAGS) => Err(Error::at(
                format!("the YAML tag `{tag}` is not read in spec files: remove it"),
                mark,
            )),
            _ => Ok(()),
        };
        let (event, anchor) = match event.data {
            EventData::Scalar {
                value,
                style,
                tag,
                anchor,
                ..
            } => {
                local_tag(&tag)?;
                (Event::Scalar { value, style, tag }, anchor)
            }
            EventData::SequenceStart { tag, anchor, .. } => {
                local_tag(&tag)?;
                (Event::SequenceStart, anchor)
            }
            EventData::SequenceEnd => (Event::SequenceEnd, None),
            EventData::MappingStart { tag, anchor, .. } => {
                local_tag(&tag)?;
                (Event::MappingStart, anchor)
            }
            EventData::MappingEnd => (Event::MappingEnd, None),
            EventData::Alias { anchor } => {
                let complete = !self.recording.iter().any(|(name, _)| *name == anchor);
                let events = match self.anchors.get(&anchor) {
                    Some(events) if complete => events,
                    _ => {
                        let mut error = Error::at(
                            format!(
                                "unknown anchor at line {} column {}",
                                mark.line + 1,
                                mark.column + 1
                            ),
                            mark,
                        );
                        // As libyaml's own: the text is not a YAML document.
                        error.syntax = true;
                        return Err(error);
                    }
                };
                self.aliased += events.len();
                let bytes: usize = events.iter().map(|(event, _)| event_bytes(event)).sum();
                self.aliased_bytes = self.aliased_bytes.saturating_add(bytes);
                if let Some(error) = too_much_aliased(self.aliased, self.aliased_bytes, mark) {
                    return Err(error);
                }
                self.replay.extend(events.iter().cloned());
                let (event, mark) = self.replay.pop_front().expect("an anchor has events");
                return Ok((event, mark, None));
            }
            EventData::DocumentEnd { .. } | EventData::StreamEnd => (Event::Void, None),
            _ => return Err(Error::at("unexpected YAML event", mark)),
        };
        Ok((event, mark, anchor))
    }

    fn peek(&mut self) -> Result<(&Event, Mark)> {
        if self.peeked.is_none() {
            self.peeked = Some(self.pull()?);
        }
        let (event, mark) = self.peeked.as_ref().expect("just filled");
        Ok((event, *mark))
    }

    fn next(&mut self) -> Result<(Event, Mark)> {
        match self.peeked.take() {
            Some((Event::Void, mark)) => {
                // An empty document stays empty for whoever reads next.
                self.peeked = Some((Event::Void, mark));
                Ok((Event::Void, mark))
            }
            Some(peeked) => Ok(peeked),
            None => self.pull(),
        }
    }

    fn path(&self) -> String {
        let mut out = String::new();
        for step in &self.path {
            match step {
                Step::Index(i) => out.push_str(&format!("[{i}]")),
                Step::Key(key) => {
                    if !out.is_empty() {
                        out.push('.');
                    }
                    out.push_str(key);
                }
                Step::Unknown => {
                    if !out.is_empty() {
                        out.push('.');
                    }
                    out.push('?');
                }
            }
        }
        if out.is_empty() {
            out.push('.');
        }
        out
    }

    /// Gives an error raised without a place the place of the value it was raised for.
    fn fix(&self, mut error: Error, mark: Mark) -> Error {
        if error.at.is_none() && !error.syntax {
            error.at = Some((mark.line + 1, mark.column + 1));
            error.path = Some(self.path());
        }
        error
    }

    fn enter(&mut self, mark: Mark) -> Result<()> {
        if self.depth >= MAX_DEPTH {
            return Err(too_deep(mark));
        }
        self.depth += 1;
        Ok(())
    }

    fn visit_sequence<'de, V: Visitor<'de>>(&mut self, visitor: V, mark: Mark) -> Result<V::Value> {
        self.enter(mark)?;
        let mut seq = SeqAccess { de: self, len: 0 };
        let value = visitor.visit_seq(&mut seq);
        let len = seq.len;
        self.depth -= 1;
        let value = value?;
        let mut rest = SeqAccess { de: self, len };
        while de::SeqAccess::next_element::<IgnoredAny>(&mut rest)?.is_some() {}
        let total = rest.len;
        match self.next()? {
            (Event::SequenceEnd, _) => {}
            (_, mark) => return Err(Error::at("expected the end of a sequence", mark)),
        }
        if total != len {
            return Err(de::Error::invalid_length(
                total,
                &ExpectedCount(len, "sequence of"),
            ));
        }
        Ok(value)
    }

    fn visit_mapping<'de, V: Visitor<'de>>(&mut self, visitor: V, mark: Mark) -> Result<V::Value> {
        self.enter(mark)?;
        let steps = self.path.len();
        let mut map = MapAccess { de: self, len: 0 };
        let value = visitor.visit_map(&mut map);
        let len = map.len;
        self.depth -= 1;
        // A key whose value was never read (the visitor refused the entry) leaves its step.
        self.path.truncate(steps);
        let value = value?;
        let mut rest = MapAccess { de: self, len };
        while de::MapAccess::next_entry::<IgnoredAny, IgnoredAny>(&mut rest)?.is_some() {}
        let total = rest.len;
        match self.next()? {
            (Event::MappingEnd, _) => {}
            (_, mark) => return Err(Error::at("expected the end of a mapping", mark)),
        }
        if total != len {
            return Err(de::Error::invalid_length(
                total,
                &ExpectedCount(len, "map containing"),
            ));
        }
        Ok(value)
    }

    /// Skips one value, however deep, without recursion.
    fn ignore(&mut self) -> Result<()> {
        let mut open = 0usize;
        loop {
            let (event, mark) = self.next()?;
            match event {
                Event::SequenceStart | Event::MappingStart => {
                    if self.depth + open >= MAX_DEPTH {
                        return Err(too_deep(mark));
                    }
                    open += 1
                }
                Event::SequenceEnd | Event::MappingEnd => open = open.saturating_sub(1),
                Event::Scalar { .. } | Event::Void => {}
            }
            if open == 0 {
                return Ok(());
            }
        }
    }
}

struct ExpectedCount(usize, &'static str);

impl Expected for ExpectedCount {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        let noun = if self.1 == "sequence of" {
            "element"
        } else {
            "entry"
        };
        let plural = match (self.0, noun) {
            (1, _) => noun.to_owned(),
            (_, "entry") => "entries".to_owned(),
            _ => format!("{noun}s"),
        };
        write!(f, "{} {} {plural}", self.1, self.0)
    }
}

struct SeqAccess<'a, R> {
    de: &'a mut Deserializer<R>,
    len: usize,
}

impl<'de, R: BufRead> de::SeqAccess<'de> for SeqAccess<'_, R> {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>> {
        match self.de.peek()?.0 {
            Event::SequenceEnd | Event::Void => Ok(None),
            _ => {
                self.de.path.push(Step::Index(self.len));
                self.len += 1;
                let value = seed.deserialize(&mut *self.de);
                self.de.path.pop();
                value.map(Some)
            }
        }
    }
}

struct MapAccess<'a, R> {
    de: &'a mut Deserializer<R>,
    len: usize,
}

impl<'de, R: BufRead> de::MapAccess<'de> for MapAccess<'_, R> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>> {
        let key = match self.de.peek()?.0 {
            Event::MappingEnd | Event::Void => return Ok(None),
            Event::Scalar { value, .. } => Step::Key(value.clone()),
            _ => Step::Unknown,
        };
        self.len += 1;
        // The key's path is the entry's (an unknown field is named by it) and stays for the
        // value; popped after the value.
        self.de.path.push(key);
        let value = seed.deserialize(&mut *self.de);
        if value.is_err() {
            self.de.path.pop();
        }
        value.map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value> {
        let value = seed.deserialize(&mut *self.de);
        self.de.path.pop();
        value
    }
}

/// The scalar rules of serde_yaml_ng (its `visit_scalar`), for a value of any type.
fn visit_scalar<'de, V: Visitor<'de>>(
    visitor: V,
    value: &str,
    style: ScalarStyle,
    tag: Option<&str>,
) -> Result<V::Value> {
    if let Some(tag) = tag {
        if tag == TAG_BOOL {
            return match parse_bool(value) {
                Some(v) => visitor.visit_bool(v),
                None => Err(de::Error::invalid_value(
                    Unexpected::Str(value),
                    &"a boolean",
                )),
            };
        } else if tag == TAG_INT {
            return match visit_int(visitor, value) {
                Ok(result) => result,
                Err(_) => Err(de::Error::invalid_value(
                    Unexpected::Str(value),
                    &"an integer",
                )),
            };
        } else if tag == TAG_FLOAT {
            return match parse_f64(value) {
                Some(v) => visitor.visit_f64(v),
                None => Err(de::Error::invalid_value(Unexpected::Str(value), &"a float")),
            };
        } else if tag == TAG_NULL {
            return match parse_null(value) {
                Some(()) => visitor.visit_unit(),
                None => Err(de::Error::invalid_value(Unexpected::Str(value), &"null")),
            };
        }
    } else if style == ScalarStyle::Plain {
        return visit_untagged_scalar(visitor, value);
    }
    visitor.visit_str(value)
}

fn parse_null(scalar: &str) -> Option<()> {
    matches!(scalar, "null" | "Null" | "NULL" | "~").then_some(())
}

fn parse_bool(scalar: &str) -> Option<bool> {
    match scalar {
        "true" | "True" | "TRUE" => Some(true),
        "false" | "False" | "FALSE" => Some(false),
        _ => None,
    }
}

type FromStrRadix<T> = fn(&str, u32) -> Result<T, std::num::ParseIntError>;

fn radix_prefixed<T>(unsigned: &str, from_str_radix: FromStrRadix<T>) -> Option<Option<T>> {
    for (prefix, radix) in [("0x", 16), ("0o", 8), ("0b", 2)] {
        if let Some(rest) = unsigned.strip_prefix(prefix) {
            if rest.starts_with(['+', '-']) {
                return Some(None);
            }
            if let Ok(int) = from_str_radix(rest, radix) {
                return Some(Some(int));
            }
        }
    }
    None
}

fn negative_radix_prefixed<T>(scalar: &str, from_str_radix: FromStrRadix<T>) -> Option<T> {
    for (prefix, radix) in [("-0x", 16), ("-0o", 8), ("-0b", 2)] {
        if let Some(rest) = scalar.strip_prefix(prefix) {
            if let Ok(int) = from_str_radix(&format!("-{rest}"), radix) {
                return Some(int);
            }
        }
    }
    None
}

fn parse_unsigned_int<T>(scalar: &str, from_str_radix: FromStrRadix<T>) -> Option<T> {
    let unpositive = scalar.strip_prefix('+').unwrap_or(scalar);
    if let Some(found) = radix_prefixed(unpositive, from_str_radix) {
        return found;
    }
    if unpositive.starts_with(['+', '-']) || digits_but_not_number(scalar) {
        return None;
    }
    from_str_radix(unpositive, 10).ok()
}

fn parse_signed_int<T>(scalar: &str, from_str_radix: FromStrRadix<T>) -> Option<T> {
    let unpositive = match scalar.strip_prefix('+') {
        Some(rest) if rest.starts_with(['+', '-']) => return None,
        Some(rest) => rest,
        None => scalar,
    };
    if let Some(found) = radix_prefixed(unpositive, from_str_radix) {
        return found;
    }
    if let Some(int) = negative_radix_prefixed(scalar, from_str_radix) {
        return Some(int);
    }
    if digits_but_not_number(scalar) {
        return None;
    }
    from_str_radix(unpositive, 10).ok()
}

fn parse_negative_int<T>(scalar: &str, from_str_radix: FromStrRadix<T>) -> Option<T> {
    if let Some(int) = negative_radix_prefixed(scalar, from_str_radix) {
        return Some(int);
    }
    if digits_but_not_number(scalar) {
        return None;
    }
    from_str_radix(scalar, 10).ok()
}

fn parse_f64(scalar: &str) -> Option<f64> {
    let unpositive = match scalar.strip_prefix('+') {
        Some(rest) if rest.starts_with(['+', '-']) => return None,
        Some(rest) => rest,
        None => scalar,
    };
    if let ".inf" | ".Inf" | ".INF" = unpositive {
        return Some(f64::INFINITY);
    }
    if let "-.inf" | "-.Inf" | "-.INF" = scalar {
        return Some(f64::NEG_INFINITY);
    }
    if let ".nan" | ".NaN" | ".NAN" = scalar {
        return Some(f64::NAN.copysign(1.0));
    }
    unpositive.parse::<f64>().ok().filter(|f| f.is_finite())
}

/// Leading zeros followed by digits make a string (YAML 1.2).
fn digits_but_not_number(scalar: &str) -> bool {
    let scalar = scalar.strip_prefix(['-', '+']).unwrap_or(scalar);
    scalar.len() > 1 && scalar.starts_with('0') && scalar[1..].bytes().all(|b| b.is_ascii_digit())
}

fn visit_int<'de, V: Visitor<'de>>(visitor: V, v: &str) -> Result<Result<V::Value>, V> {
    if let Some(int) = parse_unsigned_int(v, u64::from_str_radix) {
        return Ok(visitor.visit_u64(int));
    }
    if let Some(int) = parse_negative_int(v, i64::from_str_radix) {
        return Ok(visitor.visit_i64(int));
    }
    if let Some(int) = parse_unsigned_int(v, u128::from_str_radix) {
        return Ok(visitor.visit_u128(int));
    }
    if let Some(int) = parse_negative_int(v, i128::from_str_radix) {
        return Ok(visitor.visit_i128(int));
    }
    Err(visitor)
}

fn visit_untagged_scalar<'de, V: Visitor<'de>>(visitor: V, v: &str) -> Result<V::Value> {
    // A decimal with a point or an exponent (the common data value) is no null, boolean or
    // integer in any radix: straight to the float rules, as the full sequence would end.
    let bytes = v.as_bytes();
    if bytes.iter().any(|b| matches!(b, b'.' | b'e' | b'E'))
        && bytes
            .iter()
            .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'))
    {
        return match parse_f64(v) {
            Some(float) => visitor.visit_f64(float),
            None => visitor.visit_str(v),
        };
    }
    if v.is_empty() || parse_null(v).is_some() {
        return visitor.visit_unit();
    }
    if let Some(boolean) = parse_bool(v) {
        return visitor.visit_bool(boolean);
    }
    let visitor = match visit_int(visitor, v) {
        Ok(result) => return result,
        Err(visitor) => visitor,
    };
    if !digits_but_not_number(v) {
        if let Some(float) = parse_f64(v) {
            return visitor.visit_f64(float);
        }
    }
    visitor.visit_str(v)
}

/// A plain scalar, or one tagged `expected` in literal style, reads as that type.
fn plain_or_tagged(expected: &str, style: ScalarStyle, tag: Option<&str>) -> bool {
    match (style, tag) {
        (ScalarStyle::Plain, _) => true,
        (ScalarStyle::Literal, Some(tag)) => tag == expected,
        _ => false,
    }
}

/// The error for an event the visitor does not take.
fn invalid_type(event: &Event, expected: &dyn Expected) -> Error {
    enum Void {}
    struct Probe<'a>(&'a dyn Expected);
    impl<'de> Visitor<'de> for Probe<'_> {
        type Value = Void;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            self.0.fmt(f)
        }
    }
    match event {
        Event::Scalar { value, style, tag } => {
            match visit_scalar(Probe(expected), value, *style, tag.as_deref()) {
                Ok(void) => match void {},
                Err(error) => error,
            }
        }
        Event::SequenceStart => de::Error::invalid_type(Unexpected::Seq, expected),
        Event::MappingStart => de::Error::invalid_type(Unexpected::Map, expected),
        Event::SequenceEnd | Event::MappingEnd | Event::Void => {
            Error::new("EOF while parsing a value")
        }
    }
}

macro_rules! typed_scalar {
    ($method:ident, $tag:expr, $parse:expr, $visit:ident) => {
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
            let (event, mark) = self.next()?;
            let result = match &event {
                Event::Scalar { value, style, tag }
                    if plain_or_tagged($tag, *style, tag.as_deref()) =>
                {
                    match $parse(value.as_str()) {
                        Some(v) => visitor.$visit(v),
                        None => Err(invalid_type(&event, &visitor)),
                    }
                }
                _ => Err(invalid_type(&event, &visitor)),
            };
            result.map_err(|e| self.fix(e, mark))
        }
    };
}

impl<'de, R: BufRead> de::Deserializer<'de> for &mut Deserializer<R> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        let (event, mark) = self.next()?;
        let result = match event {
            Event::Scalar { value, style, tag } => {
                visit_scalar(visitor, &value, style, tag.as_deref())
            }
            Event::SequenceStart => self.visit_sequence(visitor, mark),
            Event::MappingStart => self.visit_mapping(visitor, mark),
            Event::Void => visitor.visit_none(),
            Event::SequenceEnd | Event::MappingEnd => Err(Error::at("unexpected end", mark)),
        };
        result.map_err(|e| self.fix(e, mark))
    }

    typed_scalar!(deserialize_bool, TAG_BOOL, parse_bool, visit_bool);
    typed_scalar!(
        deserialize_i64,
        TAG_INT,
        |v| parse_signed_int(v, i64::from_str_radix),
        visit_i64
    );
    typed_scalar!(
        deserialize_i128,
        TAG_INT,
        |v| parse_signed_int(v, i128::from_str_radix),
        visit_i128
    );
    typed_scalar!(
        deserialize_u64,
        TAG_INT,
        |v| parse_unsigned_int(v, u64::from_str_radix),
        visit_u64
    );
    typed_scalar!(
        deserialize_u128,
        TAG_INT,
        |v| parse_unsigned_int(v, u128::from_str_radix),
        visit_u128
    );
    typed_scalar!(deserialize_f64, TAG_FLOAT, parse_f64, visit_f64);

    fn deserialize_i8<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_i64(visitor)
    }
    fn deserialize_i16<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_i64(visitor)
    }
    fn deserialize_i32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_i64(visitor)
    }
    fn deserialize_u8<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_u64(visitor)
    }
    fn deserialize_u16<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_u64(visitor)
    }
    fn deserialize_u32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_u64(visitor)
    }
    fn deserialize_f32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_f64(visitor)
    }
    fn deserialize_char<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_str(visitor)
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        let (event, mark) = self.next()?;
        let result = match &event {
            Event::Scalar { value, .. } => visitor.visit_str(value),
            other => Err(invalid_type(other, &visitor)),
        };
        result.map_err(|e| self.fix(e, mark))
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_str(visitor)
    }

    fn deserialize_bytes<V: Visitor<'de>>(self, _visitor: V) -> Result<V::Value> {
        Err(Error::new("bytes are not read from YAML"))
    }

    fn deserialize_byte_buf<V: Visitor<'de>>(self, _visitor: V) -> Result<V::Value> {
        Err(Error::new("bytes are not read from YAML"))
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        let (event, mark) = self.peek()?;
        let is_some = match event {
            Event::Scalar { value, style, tag } => {
                if *style != ScalarStyle::Plain {
                    true
                } else if let Some(tag) = tag {
                    if tag == TAG_NULL {
                        if parse_null(value).is_some() {
                            false
                        } else {
                            let error = de::Error::invalid_value(Unexpected::Str(value), &"null");
                            return Err(self.fix(error, mark));
                        }
                    } else {
                        true
                    }
                } else {
                    !value.is_empty() && parse_null(value).is_none()
                }
            }
            Event::SequenceStart | Event::MappingStart => true,
            Event::SequenceEnd | Event::MappingEnd | Event::Void => false,
        };
        if is_some {
            visitor.visit_some(self)
        } else {
            if !matches!(event, Event::Void) {
                self.next()?;
            }
            visitor.visit_none()
        }
    }

    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        let (event, mark) = self.next()?;
        let result = match &event {
            Event::Scalar { value, style, tag } => {
                let is_null = *style == ScalarStyle::Plain
                    && match tag {
                        Some(tag) => tag == TAG_NULL && parse_null(value).is_some(),
                        None => value.is_empty() || parse_null(value).is_some(),
                    };
                if is_null {
                    visitor.visit_unit()
                } else {
                    Err(de::Error::invalid_value(Unexpected::Str(value), &"null"))
                }
            }
            Event::Void => visitor.visit_unit(),
            other => Err(invalid_type(other, &visitor)),
        };
        result.map_err(|e| self.fix(e, mark))
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value> {
        self.deserialize_unit(visitor)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        let (event, mark) = self.next()?;
        let result = match &event {
            Event::SequenceStart => self.visit_sequence(visitor, mark),
            Event::Scalar { value, style, .. }
                if value.is_empty() && *style == ScalarStyle::Plain =>
            {
                visitor.visit_seq(SeqAccess { de: self, len: 0 }.empty())
            }
            Event::Void => visitor.visit_seq(SeqAccess { de: self, len: 0 }.empty()),
            other => Err(invalid_type(other, &visitor)),
        };
        result.map_err(|e| self.fix(e, mark))
    }

    fn deserialize_tuple<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Result<V::Value> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        let (event, mark) = self.next()?;
        let result = match &event {
            Event::MappingStart => self.visit_mapping(visitor, mark),
            Event::Scalar { value, style, .. }
                if value.is_empty() && *style == ScalarStyle::Plain =>
            {
                visitor.visit_map(EmptyMap)
            }
            Event::Void => visitor.visit_map(EmptyMap),
            other => Err(invalid_type(other, &visitor)),
        };
        result.map_err(|e| self.fix(e, mark))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        self.deserialize_map(visitor)
    }

    /// A unit variant is its name; a variant with a value is a one-entry mapping
    /// `{Variant: value}` (serde_yaml_ng's tagged form `!Variant` is refused as a tag).
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        let (event, mark) = self.peek()?;
        let result = match event {
            Event::Scalar { .. } => visitor.visit_enum(UnitVariant { de: &mut *self }),
            Event::MappingStart => Err(de::Error::invalid_type(
                Unexpected::Map,
                &"a YAML tag starting with '!'",
            )),
            Event::SequenceStart => Err(de::Error::invalid_type(
                Unexpected::Seq,
                &"a YAML tag starting with '!'",
            )),
            _ => Err(Error::new("EOF while parsing a value")),
        };
        result.map_err(|e| self.fix(e, mark))
    }

    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_str(visitor)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.ignore()?;
        visitor.visit_unit()
    }
}

impl<R> SeqAccess<'_, R> {
    /// An empty plain scalar read as a sequence: no elements, no events to read.
    fn empty(self) -> EmptySeq {
        EmptySeq
    }
}

struct EmptySeq;

impl<'de> de::SeqAccess<'de> for EmptySeq {
    type Error = Error;
    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, _seed: T) -> Result<Option<T::Value>> {
        Ok(None)
    }
}

struct EmptyMap;

impl<'de> de::MapAccess<'de> for EmptyMap {
    type Error = Error;
    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, _seed: K) -> Result<Option<K::Value>> {
        Ok(None)
    }
    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, _seed: V) -> Result<V::Value> {
        Err(Error::new("no value"))
    }
}

struct UnitVariant<'a, R> {
    de: &'a mut Deserializer<R>,
}

impl<'de, R: BufRead> de::EnumAccess<'de> for UnitVariant<'_, R> {
    type Error = Error;
    type Variant = Self;
    fn variant_seed<V: DeserializeSeed<'de>>(self, seed: V) -> Result<(V::Value, Self)> {
        Ok((seed.deserialize(&mut *self.de)?, self))
    }
}

impl<'de, R: BufRead> de::VariantAccess<'de> for UnitVariant<'_, R> {
    type Error = Error;
    fn unit_variant(self) -> Result<()> {
        Ok(())
    }
    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, _seed: T) -> Result<T::Value> {
        Err(de::Error::invalid_type(
            Unexpected::UnitVariant,
            &"newtype variant",
        ))
    }
    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, _visitor: V) -> Result<V::Value> {
        Err(de::Error::invalid_type(
            Unexpected::UnitVariant,
            &"tuple variant",
        ))
    }
    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        _visitor: V,
    ) -> Result<V::Value> {
        Err(de::Error::invalid_type(
            Unexpected::UnitVariant,
            &"struct variant",
        ))
    }
}
