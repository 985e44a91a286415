//! No cache of the library lives in a `static`: what one run works out is kept in its
//! invocation's context (`Invocation::cache`), keyed by content, bounded and dropped
//! with the run. A static whose type holds state between calls (a lock, a once-cell,
//! a map) is a finding unless [`ALLOWED`] lists it with why: a constant built once, or
//! process state that is no cache. Found on the tokens, at every depth (function
//! bodies, `thread_local!`), so a static inside a function is seen too.

use super::resolve;
use super::rules::Tree;
use proc_macro2::{Spacing, TokenStream, TokenTree};

/// Types whose static would keep state from one call to the next.
const STATEFUL: [&str; 9] =
    ["Mutex", "RwLock", "OnceLock", "LazyLock", "OnceCell", "Lazy", "RefCell", "HashMap", "BTreeMap"];

/// The statics of the library that hold such a type and are no cache: (file, name, why).
pub const ALLOWED: [(&str, &str, &str); 6] = [
    ("crates/packetproof/src/canonical.rs", "ROOT", "a constant: the root collator, from compiled-in data"),
    ("crates/packetproof/src/evaluator/variables.rs", "RE", "a constant: a regex compiled from a literal"),
    ("crates/packetproof/src/evaluator/evidence.rs", "RE", "a constant: a regex compiled from a literal"),
    ("crates/packetproof/src/evaluator/copy.rs", "FAMILIES", "constants: regexes compiled from literals"),
    (
        "crates/packetproof/src/fsutil/scratch.rs",
        "ROOTS",
        "no cache: the scratch folders alive in the process, removed before it ends",
    ),
    (
        "crates/packetproof/src/process.rs",
        "SPAWNING",
        "no cache: held so that starting a program and looking for its pipes' holders never overlap",
    ),
];

/// Every static of the library's sources whose type holds state, outside [`ALLOWED`].
pub fn no_cache_in_a_static(tree: &Tree) -> Vec<String> {
    let mut found = Vec::new();
    for file in tree.files.iter().filter(|f| f.path.starts_with(resolve::LIB_SRC)) {
        match file.text.parse::<TokenStream>() {
            Ok(tokens) => statics(tokens, &mut |name, ty| {
                let stateful = STATEFUL.iter().any(|s| ty.split(|c: char| !c.is_alphanumeric()).any(|w| w == *s));
                let allowed = ALLOWED.iter().any(|(path, allowed, _)| *path == file.path && *allowed == name);
                if stateful && !allowed {
                    found.push(format!(
                        "{}: static {name}: {ty} keeps state between calls: keep a cache in the run's context \
                         (Invocation::cache); a constant or state that is no cache goes in statics::ALLOWED with why",
                        file.path
                    ));
                }
            }),
            Err(e) => found.push(format!("{}: {e}", file.path)),
        }
    }
    found
}

/// Calls `each(name, type)` for every `static NAME: TYPE` in `tokens`, at any depth.
fn statics(tokens: TokenStream, each: &mut dyn FnMut(&str, &str)) {
    let tokens: Vec<TokenTree> = tokens.into_iter().collect();
    for (at, token) in tokens.iter().enumerate() {
        match token {
            TokenTree::Group(group) => statics(group.stream(), each),
            TokenTree::Ident(ident) if ident == "static" => {
                // `'static` is a lifetime: a joint quote, then the word.
                let lifetime = at > 0
                    && matches!(&tokens[at - 1], TokenTree::Punct(p) if p.as_char() == '\'' && p.spacing() == Spacing::Joint);
                let mut rest = tokens[at + 1..].iter().peekable();
                if lifetime {
                    continue;
                }
                rest.next_if(|t| matches!(t, TokenTree::Ident(i) if i == "mut"));
                let (Some(TokenTree::Ident(name)), Some(TokenTree::Punct(colon))) = (rest.next(), rest.next()) else {
                    continue;
                };
                if colon.as_char() != ':' {
                    continue;
                }
                let ty: TokenStream = rest
                    .take_while(|t| !matches!(t, TokenTree::Punct(p) if p.as_char() == '=' || p.as_char() == ';'))
                    .cloned()
                    .collect();
                each(&name.to_string(), &ty.to_string());
            }
            _ => {}
        }
    }
}
