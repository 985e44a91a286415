//! Every path the crate's sources name, resolved to what it means. The sources are
//! parsed with `syn`; `use` declarations (aliases, `use crate as pp`, `extern crate
//! self as pp`, `super::*` globs), `crate`, `self`, `super` chains, child modules
//! and the crate root's re-exports are followed, so `super::super::verify::run` and
//! `pp::verify::run` both name `crate::verify::run`. Paths inside macro calls
//! (`writeln!(io::stdout(), …)`) are read from their tokens.
//!
//! Not a compiler: a name is resolved through the module's own `use` declarations
//! and its child modules, and anything else counts as external. That is enough for
//! the architecture rules, which ask only which module or which `std` item a path
//! names.

use proc_macro2::{TokenStream, TokenTree};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use syn::visit::{self, Visit};

/// The library's name, as the command line's crate writes it.
const CRATE_NAME: &str = "packetproof";

/// Where the library's sources are.
pub const LIB_SRC: &str = "crates/packetproof/src/";

/// Where the command line's crate (the workspace's root package) keeps its sources.
pub const CLI_SRC: &str = "src/";

/// One `.rs` file of the tree, its path relative to the tree's root (`src/run/mod.rs`).
pub struct SourceFile {
    pub path: String,
    pub text: String,
}

/// What a path names: an item of this crate (by its path from the crate root), or
/// something outside it (`std::process::Command`, as written after its aliases).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    Crate(Vec<String>),
    External(Vec<String>),
}

/// A path named somewhere in the sources.
#[derive(Debug, Clone)]
pub struct Reference {
    pub file: String,
    /// The item it sits in (`fn run`, `use`, `impl Verify`), for the message.
    pub item: String,
    /// The module that names it, from the crate root (`["run", "evaluate"]`).
    pub module: Vec<String>,
    /// The path as written.
    pub written: String,
    pub target: Target,
    /// Whether it is the name of a called macro (`println!`).
    pub is_macro: bool,
    /// Inside a `#[cfg(test)]` or `#[test]` item.
    pub in_test: bool,
}

impl Reference {
    /// `src/run/evaluate.rs (fn run): super::super::verify::run`.
    pub fn at(&self) -> String {
        format!("{} ({}): {}", self.file, self.item, self.written)
    }
}

/// The module path of a source file: the library's `run/mod.rs` is `run`, its
/// `lib.rs` the crate root; the command line's `src/main.rs` is called `main`, and
/// its `src/print.rs` `main::print` (its own crate, whose root is `main`).
pub fn module_of_file(path: &str) -> Option<Vec<String>> {
    let (rest, cli) = match path.strip_prefix(LIB_SRC) {
        Some(rest) => (rest, false),
        None => (path.strip_prefix(CLI_SRC)?, true),
    };
    let mut parts: Vec<String> = rest.strip_suffix(".rs")?.split('/').map(str::to_owned).collect();
    if parts.last().is_some_and(|last| last == "mod") {
        parts.pop();
    }
    Some(match (cli, parts.as_slice()) {
        (false, [lib]) if lib == "lib" => Vec::new(),
        (true, [main]) if main == "main" => parts,
        (true, _) => ["main".to_owned()].into_iter().chain(parts).collect(),
        (false, _) => parts,
    })
}

/// Whether `path` is a source file of either crate (not a test or a benchmark).
pub fn is_source(path: &str) -> bool {
    path.starts_with(LIB_SRC) || path.starts_with(CLI_SRC)
}

#[derive(Debug, Default)]
struct Scope {
    module: Vec<String>,
    /// `crate` here: the library's root, or `main` in the binary.
    crate_root: Vec<String>,
    /// Names brought in by `use`, with the path they stand for (as written).
    uses: BTreeMap<String, Vec<String>>,
    /// Paths of `use …::*`.
    globs: Vec<Vec<String>>,
    children: BTreeSet<String>,
}

/// Every path named in `files`, resolved. A file that does not parse is an error naming it.
pub fn references(files: &[SourceFile]) -> Result<Vec<Reference>, String> {
    let mut collector = Collector::default();
    for file in files {
        let Some(module) = module_of_file(&file.path) else { continue };
        let ast = syn::parse_file(&file.text).map_err(|e| format!("{}: does not parse: {e}", file.path))?;
        let crate_root = if module.first().is_some_and(|m| m == "main") { vec!["main".to_owned()] } else { Vec::new() };
        collector.file = file.path.clone();
        collector.item = "file".into();
        collector.enter(module, crate_root);
        collector.visit_file(&ast);
        collector.stack.pop();
    }
    let scopes: HashMap<Vec<String>, Scope> = collector.scopes.into_iter().map(|s| (s.module.clone(), s)).collect();
    let resolver = Resolver { scopes: &scopes };
    let test_modules = collector.test_modules;
    Ok(collector
        .raw
        .into_iter()
        .map(|raw| {
            let in_test = raw.in_test || test_modules.iter().any(|t| raw.module.starts_with(t));
            let target = resolver.resolve(&raw.module, &raw.segments, 0);
            Reference {
                file: raw.file,
                item: raw.item,
                written: raw.segments.join("::"),
                module: raw.module,
                target,
                is_macro: raw.is_macro,
                in_test,
            }
        })
        .collect())
}

struct Raw {
    file: String,
    item: String,
    module: Vec<String>,
    segments: Vec<String>,
    is_macro: bool,
    in_test: bool,
}

#[derive(Default)]
struct Collector {
    file: String,
    item: String,
    scopes: Vec<Scope>,
    /// Indices into `scopes` of the modules being visited.
    stack: Vec<usize>,
    tests: usize,
    /// Modules declared under `#[cfg(test)]` in their own file (`mod testkit;`).
    test_modules: Vec<Vec<String>>,
    raw: Vec<Raw>,
}

impl Collector {
    fn enter(&mut self, module: Vec<String>, crate_root: Vec<String>) {
        let at = match self.scopes.iter().position(|s| s.module == module) {
            Some(at) => at,
            None => {
                self.scopes.push(Scope { module, crate_root, ..Scope::default() });
                self.scopes.len() - 1
            }
        };
        self.stack.push(at);
    }

    fn scope_mut(&mut self) -> &mut Scope {
        let at = *self.stack.last().expect("inside a module");
        &mut self.scopes[at]
    }

    fn record(&mut self, segments: Vec<String>, is_macro: bool) {
        if segments.is_empty() {
            return;
        }
        let module = self.scope_mut().module.clone();
        self.raw.push(Raw {
            file: self.file.clone(),
            item: self.item.clone(),
            module,
            segments,
            is_macro,
            in_test: self.tests > 0,
        });
    }

    /// `a::b::{c as d, e::*}` as (name, path) pairs and glob paths; each path is recorded.
    fn use_tree(&mut self, prefix: &[String], tree: &syn::UseTree) {
        let joined = |name: &str| [prefix, &[name.to_owned()]].concat();
        match tree {
            syn::UseTree::Path(p) => self.use_tree(&joined(&p.ident.to_string()), &p.tree),
            syn::UseTree::Name(n) => {
                let name = n.ident.to_string();
                // `use a::b::{self}` brings `b`.
                let (alias, path) = if name == "self" && !prefix.is_empty() {
                    (prefix.last().cloned().unwrap_or_default(), prefix.to_vec())
                } else {
                    (name.clone(), joined(&name))
                };
                self.scope_mut().uses.insert(alias, path.clone());
                self.record(path, false);
            }
            syn::UseTree::Rename(r) => {
                let path = joined(&r.ident.to_string());
                self.scope_mut().uses.insert(r.rename.to_string(), path.clone());
                self.record(path, false);
            }
            syn::UseTree::Glob(_) => {
                self.scope_mut().globs.push(prefix.to_vec());
                self.record(prefix.to_vec(), false);
            }
            syn::UseTree::Group(g) => g.items.iter().for_each(|item| self.use_tree(prefix, item)),
        }
    }

    /// Paths (`a::b::c`, `$crate::x`) and macro calls (`name!`) in a macro's tokens.
    fn tokens(&mut self, tokens: TokenStream) {
        let trees: Vec<TokenTree> = tokens.into_iter().collect();
        let mut i = 0;
        while i < trees.len() {
            match &trees[i] {
                TokenTree::Group(group) => self.tokens(group.stream()),
                TokenTree::Ident(ident) => {
                    let mut segments = vec![ident.to_string()];
                    while let (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b)), Some(TokenTree::Ident(next))) =
                        (trees.get(i + 1), trees.get(i + 2), trees.get(i + 3))
                    {
                        if a.as_char() != ':' || b.as_char() != ':' {
                            break;
                        }
                        segments.push(next.to_string());
                        i += 3;
                    }
                    let is_macro = matches!(trees.get(i + 1), Some(TokenTree::Punct(p)) if p.as_char() == '!');
                    if segments.len() > 1 || is_macro {
                        self.record(segments, is_macro);
                    }
                }
                _ => {}
            }
            i += 1;
        }
    }
}

fn names(path: &syn::Path) -> Vec<String> {
    path.segments.iter().map(|s| s.ident.to_string()).collect()
}

/// `#[cfg(test)]` (also `cfg(all(test, …))`, never `cfg(not(test))`) or `#[test]`.
fn is_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|attr| {
        if attr.path().is_ident("test") {
            return true;
        }
        let tokens = match &attr.meta {
            syn::Meta::List(list) if attr.path().is_ident("cfg") => list.tokens.to_string(),
            _ => return false,
        };
        tokens.split(|c: char| !c.is_alphanumeric() && c != '_').any(|w| w == "test") && !tokens.contains("not")
    })
}

fn describe(item: &syn::Item) -> (String, &[syn::Attribute]) {
    use syn::Item;
    match item {
        Item::Fn(f) => (format!("fn {}", f.sig.ident), &f.attrs),
        Item::Impl(i) => ("impl".into(), &i.attrs),
        Item::Mod(m) => (format!("mod {}", m.ident), &m.attrs),
        Item::Use(u) => ("use".into(), &u.attrs),
        Item::Struct(s) => (format!("struct {}", s.ident), &s.attrs),
        Item::Enum(e) => (format!("enum {}", e.ident), &e.attrs),
        Item::Const(c) => (format!("const {}", c.ident), &c.attrs),
        Item::Static(s) => (format!("static {}", s.ident), &s.attrs),
        Item::Trait(t) => (format!("trait {}", t.ident), &t.attrs),
        Item::Type(t) => (format!("type {}", t.ident), &t.attrs),
        Item::Macro(m) => ("macro".into(), &m.attrs),
        Item::ExternCrate(e) => ("extern crate".into(), &e.attrs),
        _ => ("item".into(), &[]),
    }
}

impl<'ast> Visit<'ast> for Collector {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        let (name, attrs) = describe(item);
        let test = is_test(attrs);
        let outer = std::mem::replace(&mut self.item, name);
        self.tests += usize::from(test);
        match item {
            syn::Item::Mod(m) => {
                let child = m.ident.to_string();
                self.scope_mut().children.insert(child.clone());
                if self.tests > 0 && m.content.is_none() {
                    let module = [self.scope_mut().module.clone(), vec![child.clone()]].concat();
                    self.test_modules.push(module);
                }
                if let Some((_, items)) = &m.content {
                    let module = [self.scope_mut().module.clone(), vec![child]].concat();
                    let crate_root = self.scope_mut().crate_root.clone();
                    self.enter(module, crate_root);
                    items.iter().for_each(|item| self.visit_item(item));
                    self.stack.pop();
                }
            }
            syn::Item::Use(u) => {
                let prefix = if u.leading_colon.is_some() { vec!["::".to_owned()] } else { Vec::new() };
                self.use_tree(&prefix, &u.tree);
            }
            syn::Item::ExternCrate(e) => {
                let alias = e.rename.as_ref().map(|(_, ident)| ident).unwrap_or(&e.ident).to_string();
                let name = e.ident.to_string();
                let path = if name == "self" { vec!["crate".to_owned()] } else { vec!["::".to_owned(), name] };
                self.scope_mut().uses.insert(alias, path);
            }
            _ => visit::visit_item(self, item),
        }
        self.tests -= usize::from(test);
        self.item = outer;
    }

    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        let test = is_test(&f.attrs);
        let outer = std::mem::replace(&mut self.item, format!("fn {}", f.sig.ident));
        self.tests += usize::from(test);
        visit::visit_impl_item_fn(self, f);
        self.tests -= usize::from(test);
        self.item = outer;
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        let mut segments = names(path);
        if path.leading_colon.is_some() {
            segments.insert(0, "::".into());
        }
        self.record(segments, false);
        visit::visit_path(self, path);
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        self.record(names(&mac.path), true);
        self.tokens(mac.tokens.clone());
    }

    fn visit_attribute(&mut self, _: &'ast syn::Attribute) {
        // Attributes name derive macros and lints, not modules.
    }
}

struct Resolver<'a> {
    scopes: &'a HashMap<Vec<String>, Scope>,
}

impl Resolver<'_> {
    /// What `segments`, written in `module`, names.
    fn resolve(&self, module: &[String], segments: &[String], depth: usize) -> Target {
        let external = || Target::External(segments.to_vec());
        let Some(scope) = self.scopes.get(module) else { return external() };
        if depth > 16 {
            return external();
        }
        let (first, rest) = (segments[0].as_str(), &segments[1..]);
        let absolute = match first {
            "::" => return Target::External(rest.to_vec()),
            "crate" => [scope.crate_root.as_slice(), rest].concat(),
            // The binary names the library by its crate name.
            CRATE_NAME => rest.to_vec(),
            "self" => [module, rest].concat(),
            "super" => {
                let ups = segments.iter().take_while(|s| *s == "super").count();
                let base = &module[..module.len().saturating_sub(ups)];
                [base, &segments[ups..]].concat()
            }
            name if scope.children.contains(name) => [module, segments].concat(),
            name => match self.imported(module, name, depth) {
                Some((from, path)) => {
                    return self.resolve(&from, &[path.as_slice(), rest].concat(), depth + 1);
                }
                None => return external(),
            },
        };
        self.through_reexports(absolute, depth)
    }

    /// The module and path a name `use`d in `module` stands for, also through `use super::*`-like globs.
    /// `depth` bounds the search: modules may glob-import each other (`use super::*` both ways).
    fn imported(&self, module: &[String], name: &str, depth: usize) -> Option<(Vec<String>, Vec<String>)> {
        let scope = self.scopes.get(module)?;
        if depth > 16 {
            return None;
        }
        if let Some(path) = scope.uses.get(name) {
            return Some((module.to_vec(), path.clone()));
        }
        for glob in &scope.globs {
            if let Target::Crate(from) = self.resolve(module, glob, depth.max(8) + 1) {
                if let Some(found) = self.scopes.get(&from) {
                    if found.children.contains(name) {
                        return Some((from.clone(), vec!["self".into(), name.into()]));
                    }
                    if found.uses.contains_key(name) && from != module {
                        return self.imported(&from, name, depth + 1);
                    }
                }
            }
        }
        None
    }

    /// `crate::Config` is `crate::config::Config` when the root says `pub use config::Config`.
    fn through_reexports(&self, absolute: Vec<String>, depth: usize) -> Target {
        for split in (0..absolute.len()).rev() {
            let (module, rest) = absolute.split_at(split);
            let Some(scope) = self.scopes.get(module) else { continue };
            if let Some(name) = rest.first().filter(|n| !scope.children.contains(*n)) {
                if let Some(path) = scope.uses.get(name) {
                    let path = [path.as_slice(), &rest[1..]].concat();
                    return self.resolve(module, &path, depth + 1);
                }
            }
            break;
        }
        Target::Crate(absolute)
    }
}
