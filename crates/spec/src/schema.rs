//! The JSON Schema of the spec format, derived from the types the loader reads.
//!
//! One schema per op, `schema/<op>.schema.json`, in which `attrs` is that op's attribute type,
//! `inputs` and `expected` name the op's inputs and output, and `clauses` lists the op's clause
//! ids; and `schema/clauses.schema.json` for the clause catalogue files. They are draft-07 (the
//! version the YAML language server understands), with the types' doc comments as descriptions,
//! so an editor validates, completes and explains a spec file while it is typed. Every spec file
//! names its schema on its first line:
//!
//! ```yaml
//! # yaml-language-server: $schema=../../schema/slice.schema.json
//! ```
//!
//! The committed files are checked against these functions by `crates/spec/tests/schema.rs`
//! (`OPSPEC_BLESS=1 cargo test -p opspec-spec --test schema` rewrites them).

use schemars::generate::SchemaSettings;
use schemars::SchemaGenerator;
use serde_json::{json, Map, Value};

use super::clauses::{Catalogue, CatalogueFile};
use super::ops::entry;
use opspec::ops::Op;

/// The folder of the schemas, relative to the repository root.
pub const SCHEMA_DIR: &str = "schema";

/// The file name of the catalogue schema.
pub const CATALOGUE_SCHEMA: &str = "clauses.schema.json";

/// The file name of `op`'s schema.
pub fn schema_file(op: Op) -> String {
    format!("{}.schema.json", op.name())
}

/// The modeline that starts every spec file of `op` (`specs/<op>/<file>.yaml`).
pub fn modeline(op: Op) -> String {
    format!(
        "# yaml-language-server: $schema=../../{SCHEMA_DIR}/{}",
        schema_file(op)
    )
}

/// The modeline that starts every catalogue file (`specs/<op>.clauses.yaml`).
pub fn catalogue_modeline() -> String {
    format!("# yaml-language-server: $schema=../{SCHEMA_DIR}/{CATALOGUE_SCHEMA}")
}

/// Every schema file, as (file name, contents), with the clause ids of `catalogue`, and the op
/// vocabulary ([`super::vocabulary`]).
pub fn schema_files(catalogue: &Catalogue) -> Vec<(String, String)> {
    let mut files: Vec<(String, String)> = Op::ALL
        .into_iter()
        .map(|op| (schema_file(op), render(&op_schema(op, catalogue))))
        .collect();
    files.push((CATALOGUE_SCHEMA.to_owned(), render(&catalogue_schema())));
    files.push((
        super::vocabulary::VOCABULARY_FILE.to_owned(),
        render(&super::vocabulary::vocabulary()),
    ));
    files
}

/// Pretty JSON with keys sorted at every level, and a final newline.
pub fn render(value: &Value) -> String {
    let mut text = serde_json::to_string_pretty(&sorted(value)).expect("a schema is plain JSON");
    text.push('\n');
    text
}

fn sorted(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let mut out = Map::new();
            for key in keys {
                out.insert(key.clone(), sorted(&map[key]));
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

fn generator() -> SchemaGenerator {
    SchemaSettings::draft07().into_generator()
}

/// The schema of a spec file of `op`.
pub fn op_schema(op: Op, catalogue: &Catalogue) -> Value {
    let mut root = Value::from(entry(op).schema_root(generator()));
    drop_null(&mut root);
    root["title"] = json!(format!("opspec {op} spec file"));
    root["description"] = json!(format!(
        "Cases of `{op}` ({}): specs/{op}/<file>.yaml. The format is in CONTRIBUTING.md, the attributes in docs/protocol.md, the rules in specs/{op}.clauses.yaml.",
        entry(op).documented_by
    ));
    // The parts the Rust types leave open: the op's input and output names and its clause ids.
    let case = &mut root["definitions"]["Case"]["properties"];
    let tensor = json!({"$ref": "#/definitions/Tensor"});
    let inputs: Map<String, Value> = op
        .inputs()
        .iter()
        .map(|&name| {
            (
                name.to_owned(),
                json!({"description": input_doc(op, name), "allOf": [tensor]}),
            )
        })
        .collect();
    restrict_map(&mut case["inputs"], inputs, "input");
    let mut outputs = Map::new();
    outputs.insert(
        "output".into(),
        json!({"description": format!("{op}'s one output"), "allOf": [tensor]}),
    );
    restrict_map(&mut case["expected"], outputs, "output");
    let ids: Vec<&str> = catalogue
        .iter()
        .filter(|c| (c.scope == op.name() || c.scope == "common") && c.no_case.is_none())
        .map(|c| c.id.as_str())
        .collect();
    case["clauses"]["items"] = json!({"type": "string", "enum": ids});
    case["clauses"]["uniqueItems"] = json!(true);
    root
}

/// An optional field is written or left out, never `null`: `anyOf: [X, null]` becomes X and
/// `type: [T, "null"]` becomes T, so that a validator reports what is wrong inside X (an
/// unknown attribute) rather than "not valid under any of the schemas".
fn drop_null(value: &mut Value) {
    match value {
        Value::Object(map) => {
            let null = json!({"type": "null"});
            if let Some(Value::Array(options)) = map.get("anyOf") {
                if options.len() == 2 && options[1] == null {
                    let kept = options[0].clone();
                    map.remove("anyOf");
                    if kept.get("$ref").is_some() {
                        map.insert("allOf".into(), json!([kept]));
                    } else if let Value::Object(kept) = kept {
                        for (key, value) in kept {
                            map.entry(key).or_insert(value);
                        }
                    }
                }
            }
            if let Some(Value::Array(types)) = map.get("type") {
                let types: Vec<Value> = types.iter().filter(|t| *t != "null").cloned().collect();
                map.insert(
                    "type".into(),
                    match types.len() {
                        1 => types[0].clone(),
                        _ => Value::Array(types),
                    },
                );
            }
            map.values_mut().for_each(drop_null);
        }
        Value::Array(items) => items.iter_mut().for_each(drop_null),
        _ => {}
    }
}

/// Replaces a map schema's open `additionalProperties` by named properties.
fn restrict_map(schema: &mut Value, properties: Map<String, Value>, required: &str) {
    schema["properties"] = Value::Object(properties);
    schema["additionalProperties"] = json!(false);
    schema["required"] = json!([required]);
}

/// The schema of a clause catalogue file.
pub fn catalogue_schema() -> Value {
    let mut root = Value::from(generator().into_root_schema_for::<CatalogueFile>());
    drop_null(&mut root);
    root["description"] = json!(
        "The rules of one op (specs/<op>.clauses.yaml), one clause each; cases name the clauses they exercise."
    );
    root["properties"]["op"]["enum"] = json!(super::clauses::SCOPES);
    root
}

fn input_doc(op: Op, name: &str) -> &'static str {
    if name == "input" {
        return "Input 0, the data tensor (required).";
    }
    (entry(op).input_docs.iter())
        .find(|(input, _)| *input == name)
        .map_or("An input of the op.", |(_, doc)| doc)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn op_schemas_type_attrs_inputs_and_clauses() {
        let (catalogue, _) = Catalogue::load(&[std::path::PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../.."
        ))
        .join("specs")]);
        let schema = op_schema(Op::Slice, &catalogue);
        assert_eq!(schema["$schema"], "http://json-schema.org/draft-07/schema#");
        let attrs = &schema["definitions"]["SliceAttrs"];
        assert_eq!(attrs["additionalProperties"], false);
        assert!(attrs["properties"]["mode"].is_object());
        let case = &schema["definitions"]["Case"];
        assert_eq!(case["additionalProperties"], false);
        let inputs = &case["properties"]["inputs"]["properties"];
        assert!(inputs["fill"].is_object() && inputs["axes"].is_object());
        let ids = case["properties"]["clauses"]["items"]["enum"]
            .as_array()
            .unwrap();
        assert!(ids.contains(&json!("slice.reflect.single-element")));
        assert!(ids.contains(&json!("common.budget.too-large")));
        assert!(!ids.contains(&json!("shuffle.reshape.volume")));
        // A tensor's data is values or an .npy file's name.
        let tensor_data = &schema["definitions"]["Tensor"]["properties"]["data"]["anyOf"];
        assert_eq!(tensor_data[0], json!({"$ref": "#/definitions/Data"}));
        assert_eq!(tensor_data[1]["pattern"], "\\.npy$");
        // Data is recursive: a list of Data.
        let data = &schema["definitions"]["Data"]["anyOf"];
        assert!(data
            .as_array()
            .unwrap()
            .contains(&json!({"type": "array", "items": {"$ref": "#/definitions/Data"}})));
    }
}
