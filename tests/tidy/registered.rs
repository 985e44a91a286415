//! The command line's tests run under their own harness (`harness = false`): a test
//! is a function that a `trials![…]` list (or a `trial(name, test)` call) registers,
//! and a function that nothing registers never runs, silently. This rule finds them.

use super::rules::Tree;
use proc_macro2::{Delimiter, TokenStream, TokenTree};
use std::collections::BTreeSet;

/// The test binary whose files this rule reads.
pub const CLI_TESTS: &str = "tests/cli/";

/// Every test function of [`CLI_TESTS`] is registered: a function of the file's top
/// level (or of an inline module) that takes nothing and returns nothing is a test
/// unless the file calls it (a helper), and a test is registered when the file names
/// it as a value (`trials![name]`, `trial(label, name)`). `#[test]` does nothing in
/// a binary without libtest's harness, so it is a finding too.
pub fn every_test_is_registered(tree: &Tree) -> Vec<String> {
    let mut found = Vec::new();
    for file in tree.files.iter().filter(|f| f.path.starts_with(CLI_TESTS)) {
        let parsed = syn::parse_file(&file.text).map_err(|e| e.to_string());
        let tokens = file.text.parse::<TokenStream>().map_err(|e| e.to_string());
        let (parsed, tokens) = match (parsed, tokens) {
            (Ok(parsed), Ok(tokens)) => (parsed, tokens),
            (Err(e), _) | (_, Err(e)) => {
                found.push(format!("{}: does not parse: {e}", file.path));
                continue;
            }
        };
        let mut uses = Uses::default();
        uses.read(tokens);
        for function in candidates(&parsed.items) {
            let name = function.sig.ident.to_string();
            if function.attrs.iter().any(|a| a.path().is_ident("test")) {
                found.push(format!("{}: fn {name} is a #[test], which this harness never runs", file.path));
            } else if !uses.values.contains(&name) && !uses.calls.contains(&name) {
                found.push(format!("{}: fn {name} is in no trials![…] list: it never runs", file.path));
            }
        }
    }
    found
}

/// Functions that look like tests: no parameters, no generics, no return type.
fn candidates(items: &[syn::Item]) -> Vec<&syn::ItemFn> {
    let mut out = Vec::new();
    for item in items {
        match item {
            syn::Item::Fn(f)
                if f.sig.inputs.is_empty()
                    && f.sig.generics.params.is_empty()
                    && matches!(f.sig.output, syn::ReturnType::Default)
                    && f.sig.ident != "main" =>
            {
                out.push(f)
            }
            syn::Item::Mod(syn::ItemMod { content: Some((_, items)), .. }) => out.extend(candidates(items)),
            _ => {}
        }
    }
    out
}

/// The identifiers a file names as values (not followed by arguments) and those it
/// calls (`name(…)`), macro arguments included; a definition (`fn name`) is neither.
#[derive(Default)]
struct Uses {
    values: BTreeSet<String>,
    calls: BTreeSet<String>,
}

impl Uses {
    fn read(&mut self, tokens: TokenStream) {
        let trees: Vec<TokenTree> = tokens.into_iter().collect();
        for (i, tree) in trees.iter().enumerate() {
            match tree {
                TokenTree::Group(g) => self.read(g.stream()),
                TokenTree::Ident(ident) => {
                    let defined = i > 0 && matches!(&trees[i - 1], TokenTree::Ident(f) if f == "fn");
                    let called = matches!(trees.get(i + 1), Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Parenthesis);
                    let set = if called { &mut self.calls } else { &mut self.values };
                    if !defined {
                        set.insert(ident.to_string());
                    }
                }
                _ => {}
            }
        }
    }
}
