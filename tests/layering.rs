//! The modules depend on each other one way: the ops (dtypes, tensors, errors, the operators'
//! plans and reference paths) know nothing of the spec files that describe cases. How a value
//! is read from a spec file (`crate::spec`) is the spec side's business, even when the value is
//! an op's attribute (Scale's coefficients).

use std::path::Path;

#[test]
fn ops_do_not_use_the_spec_module() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/ops");
    let mut offenders = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&path).unwrap();
            for (number, line) in text.lines().enumerate() {
                if line.contains("crate::spec") || line.contains("super::spec") {
                    offenders.push(format!(
                        "{}:{}: {}",
                        path.display(),
                        number + 1,
                        line.trim()
                    ));
                }
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "src/ops uses the spec module:\n{}",
        offenders.join("\n")
    );
}
