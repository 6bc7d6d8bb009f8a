//! docs/protocol.md states every dtype rule of the clause catalogues: each clause whose id is
//! `<op>.dtype.<rule>` is named on the page (its "Dtypes" table), and the worked DLA_HWC4 row
//! width is there.

use std::path::Path;

use opspec_spec::clauses::Catalogue;

#[test]
fn the_protocol_page_states_every_dtype_rule_of_the_catalogues() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let page = std::fs::read_to_string(root.join("docs/protocol.md")).unwrap();
    let (catalogue, errors) = Catalogue::load(&[root.join("specs")]);
    assert!(errors.is_empty(), "{errors:?}");
    let rules: Vec<&str> = (catalogue.iter())
        .map(|c| c.id.as_str())
        .filter(|id| id.split('.').nth(1) == Some("dtype"))
        .collect();
    assert!(rules.len() >= 10, "{rules:?}");
    let missing: Vec<&&str> = rules
        .iter()
        .filter(|id| !page.contains(&format!("`{id}`")))
        .collect();
    assert!(
        missing.is_empty(),
        "docs/protocol.md does not state the dtype rules {missing:?}"
    );
    assert!(page.contains("as_strided` | float16 and int64 only"));
    assert!(page.contains("The packed buffer keeps the logical dtype"));
    assert!(page.contains("`K/(C'·e) = 64/(4·1) = 16`"));
}
