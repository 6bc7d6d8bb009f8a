//! The JSON Schemas of the spec format (`schema/*.schema.json`): they are what the Rust types
//! say, every spec file carries the modeline naming its schema and passes it, and a misspelled
//! field is flagged with its path, as the YAML language server flags it in an editor.
//!
//! Regenerate the committed schemas after changing a spec type or a catalogue:
//! `OPSPEC_BLESS=1 cargo test -p opspec-spec --test schema` (refused when `CI` is set).

use std::path::{Path, PathBuf};

use opspec::ops::Op;
use opspec_spec::clauses::{catalogue_path, Catalogue, SCOPES};
use opspec_spec::schema::{
    catalogue_modeline, modeline, schema_file, schema_files, CATALOGUE_SCHEMA, SCHEMA_DIR,
};
use opspec_spec::yaml_to_json;
use serde_json::Value;

fn root() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

fn specs() -> PathBuf {
    root().join("specs")
}

fn catalogue() -> Catalogue {
    let (catalogue, errors) = Catalogue::load(&[specs()]);
    assert!(errors.is_empty(), "{errors:?}");
    catalogue
}

fn validator(file: &str) -> jsonschema::Validator {
    let path = root().join(SCHEMA_DIR).join(file);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let schema: Value = serde_json::from_str(&text).unwrap();
    jsonschema::draft7::new(&schema).unwrap_or_else(|e| panic!("{file} is not a schema: {e}"))
}

/// The problems the validator finds, as `<instance path>: <message>`.
fn problems(validator: &jsonschema::Validator, text: &str) -> Vec<String> {
    let instance = yaml_to_json(text).unwrap();
    validator
        .iter_errors(&instance)
        .map(|e| format!("{}: {e}", e.instance_path))
        .collect()
}

fn yaml_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml" || e == "yml"))
        .collect();
    files.sort();
    files
}

#[test]
fn committed_schemas_are_fresh() {
    let dir = root().join(SCHEMA_DIR);
    let bless = std::env::var_os("OPSPEC_BLESS").is_some_and(|v| v == "1");
    let in_ci = std::env::var_os("CI").is_some_and(|v| !v.is_empty());
    assert!(
        !(bless && in_ci),
        "OPSPEC_BLESS=1 with CI set: CI checks the committed schemas and never rewrites them"
    );
    let mut stale = Vec::new();
    for (name, generated) in schema_files(&catalogue()) {
        let path = dir.join(&name);
        if std::fs::read_to_string(&path).ok().as_deref() == Some(generated.as_str()) {
            continue;
        }
        if bless {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&path, generated).unwrap();
        } else {
            stale.push(name);
        }
    }
    assert!(
        stale.is_empty(),
        "{SCHEMA_DIR}/{} differ from what the spec types and catalogues generate; regenerate them with\n    OPSPEC_BLESS=1 cargo test -p opspec-spec --test schema\nand commit the result",
        stale.join(", ")
    );
}

#[test]
fn every_spec_file_names_and_passes_its_schema() {
    let mut checked = 0;
    for op in Op::ALL {
        let validator = validator(&schema_file(op));
        for path in yaml_files(&specs().join(op.name())) {
            let text = std::fs::read_to_string(&path).unwrap();
            assert_eq!(
                text.lines().next(),
                Some(modeline(op).as_str()),
                "{}: the first line names the schema",
                path.display()
            );
            let found = problems(&validator, &text);
            assert!(
                found.is_empty(),
                "{}:\n{}",
                path.display(),
                found.join("\n")
            );
            checked += 1;
        }
    }
    assert!(checked >= 30, "only {checked} spec files");
}

#[test]
fn every_catalogue_names_and_passes_its_schema() {
    let validator = validator(CATALOGUE_SCHEMA);
    for scope in SCOPES {
        let path = catalogue_path(&specs(), scope);
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(
            text.lines().next(),
            Some(catalogue_modeline().as_str()),
            "{}",
            path.display()
        );
        let found = problems(&validator, &text);
        assert!(
            found.is_empty(),
            "{}:\n{}",
            path.display(),
            found.join("\n")
        );
    }
}

const SLICE_SPEC: &str = r#"# yaml-language-server: $schema=../../schema/slice.schema.json
cases:
  - name: seed_slice
    source: "seed 004, example 'Slice'"
    clauses: [slice.coordinates.formula, slice.strict.in-bounds]
    dtypes: [float32, int8]
    attrs: {start: [0, 0], size: [2, 2], stride: [1, 1]}
    inputs:
      input: {shape: [3, 3], data: [[0, 1, 2], [3, 4, 5], [6, 7, 8]]}
    expected:
      output: {shape: [2, 2], data: [[0, 1], [3, 4]]}
  - name: fill_nan
    source: "seed 004 FILL"
    clauses: [slice.fill.value]
    attrs: {start: [-1], size: [3], mode: fill}
    inputs:
      input: {dtype: float16, shape: [2], data: [.nan, "0x7e01"]}
      fill: {dtype: float16, shape: [], data: -.inf}
    expected:
      output: {dtype: float16, shape: [3], data: [-.inf, .nan, "0x7e01"]}
"#;

#[test]
fn a_misspelled_field_is_flagged_with_its_path() {
    let validator = validator(&schema_file(Op::Slice));
    assert_eq!(problems(&validator, SLICE_SPEC), Vec::<String>::new());
    for (from, to, path, needle) in [
        // An attribute: `strat` for `start`.
        (
            "{start: [0, 0]",
            "{strat: [0, 0]",
            "/cases/0/attrs",
            "'strat' was unexpected",
        ),
        // A case field, an input name, a mode, a dtype, a bit pattern, an unknown clause id.
        (
            "    source:",
            "    sorce:",
            "/cases/0",
            "'sorce' was unexpected",
        ),
        (
            "      input: {shape",
            "      inputs: {shape",
            "/cases/0/inputs",
            "'inputs' was unexpected",
        ),
        ("mode: fill", "mode: fil", "/cases/1/attrs/mode", "\"fil\""),
        (
            "[float32, int8]",
            "[float31, int8]",
            "/cases/0/dtypes/0",
            "\"float31\"",
        ),
        (
            "\"0x7e01\"]}\n      fill",
            "\"7e01\"]}\n      fill",
            "/cases/1/inputs/input/data",
            "\"7e01\"",
        ),
        (
            "[slice.coordinates.formula",
            "[slice.coordinate.formula",
            "/cases/0/clauses/0",
            "\"slice.coordinate.formula\"",
        ),
    ] {
        assert!(SLICE_SPEC.contains(from), "{from:?}");
        let found = problems(&validator, &SLICE_SPEC.replacen(from, to, 1));
        assert!(
            found
                .iter()
                .any(|p| p.starts_with(&format!("{path}: ")) && p.contains(needle)),
            "{from:?} -> {to:?}: {found:?}"
        );
    }
}
