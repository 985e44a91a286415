//! The tests share one temporary project and one finished run (`tests/support`): a
//! test module's own `Project` or `Output` would drift from them (another way to run the
//! binary, another environment). This rule finds such a declaration anywhere in the
//! tests, inside functions and inline modules included.

use super::rules::Tree;
use syn::visit::Visit;

/// The one file that declares the shared types.
pub const SHARED: &str = "tests/support/mod.rs";

/// Names only [`SHARED`] may declare.
const SHARED_TYPES: [&str; 2] = ["Project", "Output"];

/// Every struct, enum, union or type alias named like a shared type outside [`SHARED`].
pub fn one_project_and_output(tree: &Tree) -> Vec<String> {
    let mut found = Vec::new();
    for file in tree.files.iter().filter(|f| f.path.starts_with("tests/") && f.path != SHARED) {
        match syn::parse_file(&file.text) {
            Ok(parsed) => {
                let mut declared = Declared::default();
                declared.visit_file(&parsed);
                found.extend(declared.names.into_iter().map(|(kind, name)| {
                    format!("{}: {kind} {name} is declared again (use {SHARED}'s, extended)", file.path)
                }));
            }
            Err(e) => found.push(format!("{}: does not parse: {e}", file.path)),
        }
    }
    found
}

/// The shared types' names a file declares, with what it declares them as.
#[derive(Default)]
struct Declared {
    names: Vec<(&'static str, String)>,
}

impl Declared {
    fn note(&mut self, kind: &'static str, ident: &syn::Ident) {
        if SHARED_TYPES.iter().any(|name| ident == name) {
            self.names.push((kind, ident.to_string()));
        }
    }
}

impl<'ast> Visit<'ast> for Declared {
    fn visit_item_struct(&mut self, item: &'ast syn::ItemStruct) {
        self.note("struct", &item.ident);
        syn::visit::visit_item_struct(self, item);
    }

    fn visit_item_enum(&mut self, item: &'ast syn::ItemEnum) {
        self.note("enum", &item.ident);
        syn::visit::visit_item_enum(self, item);
    }

    fn visit_item_union(&mut self, item: &'ast syn::ItemUnion) {
        self.note("union", &item.ident);
        syn::visit::visit_item_union(self, item);
    }

    fn visit_item_type(&mut self, item: &'ast syn::ItemType) {
        self.note("type", &item.ident);
        syn::visit::visit_item_type(self, item);
    }
}
