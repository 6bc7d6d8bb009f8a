//! One source of truth for the rules: the clause catalogues (`specs/*.clauses.yaml`), the
//! semantics document (`docs/semantics.md`) and the marks of the cases agree, and no citation
//! in the repository points outside it.

use std::path::{Path, PathBuf};

use opspec::spec::clauses::{Catalogue, Marks};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn catalogue() -> Catalogue {
    let (catalogue, errors) = Catalogue::load(&[repo().join("specs")]);
    assert!(errors.is_empty(), "{errors:?}");
    catalogue
}

#[test]
fn a_mark_that_differs_from_the_clauses_is_found() {
    let catalogue = catalogue();
    let nan = ["scale.int8.quantize", "scale.int8.nan-zero"];
    let none = Marks::default();
    let both = Marks {
        inferred: true,
        implementation_defined: true,
    };
    let only_implementation = Marks {
        inferred: false,
        implementation_defined: true,
    };
    assert!(catalogue
        .mark_disagreements(&nan, only_implementation)
        .is_empty());
    let found = catalogue.mark_disagreements(&nan, none);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].contains("`scale.int8.nan-zero`") && found[0].contains("implementation_defined"),
        "{found:?}"
    );
    let found = catalogue.mark_disagreements(&nan, both);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].contains("marked `inferred: true`"), "{found:?}");
    assert!(catalogue
        .mark_disagreements(&["scale.formula"], none)
        .is_empty());
}

#[allow(dead_code)]
fn relative(path: &Path) -> String {
    path.strip_prefix(repo())
        .unwrap_or(path)
        .display()
        .to_string()
}
