//! The JSON Schema of the JSON report (`schema/report.schema.json`), derived from the types the
//! report is written from ([`crate::judge::record::JsonReport`]) as the spec schemas are from
//! the spec types: a tool that reads reports can check one before it trusts its fields.
//!
//! The schema is of what this runner writes. Its readers accept more: a report of an earlier
//! runner lacks fields that were added since, and reads as if they were empty.
//!
//! Regenerate the committed file after changing a report type:
//! `OPSPEC_BLESS=1 cargo test -p opspec-runner --lib report_schema` (refused when `CI` is set).

use serde_json::{json, Value};

use crate::judge::record::JsonReport;

/// The schema's file, under the checkout's `schema/` folder.
const REPORT_SCHEMA: &str = "report.schema.json";

/// The JSON report's schema (draft-07, as the spec schemas are).
fn report_schema() -> Value {
    let generator = schemars::generate::SchemaSettings::draft07()
        .for_serialize()
        .into_generator();
    let mut root = Value::from(generator.into_root_schema_for::<JsonReport>());
    plain_links(&mut root);
    root["title"] = json!("opspec JSON report");
    root["description"] = json!(
        "What `runner --report-json FILE` writes: the backend, its facts, the expectations entries, the counts per status, and every trial's record. docs/protocol.md, \"Reports\", says what they mean."
    );
    root
}

/// The descriptions (the types' doc comments) with their rustdoc links as plain code spans.
fn plain_links(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, value) in map.iter_mut() {
                match value {
                    Value::String(text) if key == "description" => {
                        *text = text.replace("[`", "`").replace("`]", "`");
                    }
                    _ => plain_links(value),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(plain_links),
        _ => {}
    }
}

/// The committed file's contents: [`report_schema`] with its keys sorted.
fn report_schema_text() -> String {
    opspec_spec::schema::render(&report_schema())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn committed() -> std::path::PathBuf {
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../schema")
            .join(REPORT_SCHEMA)
    }

    #[test]
    fn the_committed_report_schema_is_current() {
        let bless = std::env::var_os("OPSPEC_BLESS").is_some_and(|v| v == "1");
        let in_ci = std::env::var_os("CI").is_some_and(|v| !v.is_empty());
        assert!(
            !(bless && in_ci),
            "OPSPEC_BLESS=1 with CI set: CI checks the committed schema and never rewrites it"
        );
        let generated = report_schema_text();
        let path = committed();
        if std::fs::read_to_string(&path).ok().as_deref() == Some(generated.as_str()) {
            return;
        }
        assert!(
            !in_ci && bless,
            "schema/{REPORT_SCHEMA} is not what the report types say; regenerate it with \
             `OPSPEC_BLESS=1 cargo test -p opspec-runner --lib report_schema`"
        );
        std::fs::write(&path, generated).unwrap();
    }
}
