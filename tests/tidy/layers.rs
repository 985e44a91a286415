//! The layer map, read from docs/architecture.md's "Where things are" table: the one place it
//! is written. Each row whose first cell is not empty starts a layer; every library
//! path in a row's last cell puts its top-level module (`crates/packetproof/src/run/format.rs`
//! is `run`) in that layer, and a path of the command line's crate (`src/…`) puts `cli` there. Layers are listed bottom up: a module may use its own
//! layer and the ones above it in the table.

/// The layers, bottom up, each with its name and top-level modules.
#[derive(Debug, Clone)]
pub struct Layers(pub Vec<(String, Vec<String>)>);

impl Layers {
    /// The table of `readme`; an error when the section or its table is missing, or
    /// a module is placed in two layers.
    pub fn from_readme(readme: &str) -> Result<Layers, String> {
        let section = readme
            .split("\n## ")
            .find(|s| s.starts_with("Where things are"))
            .ok_or("docs/architecture.md has no \"## Where things are\" section")?;
        let mut layers: Vec<(String, Vec<String>)> = Vec::new();
        for row in section.lines().filter(|l| l.starts_with('|')) {
            let cells: Vec<&str> = row.trim_matches('|').split('|').map(str::trim).collect();
            if cells.len() < 3 || cells[0] == "layer" || cells[0].starts_with("---") {
                continue;
            }
            if !cells[0].is_empty() {
                layers.push((cells[0].to_owned(), Vec::new()));
            }
            let (_, modules) = layers.last_mut().ok_or("the first row of the table names no layer")?;
            for module in cells[cells.len() - 1].split('`').skip(1).step_by(2).filter_map(top_module) {
                if !modules.contains(&module) {
                    modules.push(module);
                }
            }
        }
        layers.retain(|(_, modules)| !modules.is_empty());
        if layers.is_empty() {
            return Err("docs/architecture.md's \"Where things are\" table lists no module".into());
        }
        let layers = Layers(layers);
        for (name, modules) in &layers.0 {
            for module in modules {
                let owner = layers.layer_of(module).map(|i| layers.0[i].0.as_str());
                if owner != Some(name) {
                    return Err(format!("docs/architecture.md puts {module} in two layers: {owner:?} and {name:?}"));
                }
            }
        }
        Ok(layers)
    }

    /// The index (bottom up) of the layer holding `module`.
    pub fn layer_of(&self, module: &str) -> Option<usize> {
        self.0.iter().position(|(_, modules)| modules.iter().any(|m| m == module))
    }

    pub fn name(&self, layer: usize) -> &str {
        &self.0[layer].0
    }
}

/// The library's `run/format.rs` → `run`, its `fsutil/` → `fsutil`; the command
/// line's crate (`src/…`) → `cli`; anything else → nothing.
fn top_module(path: &str) -> Option<String> {
    if path.starts_with(super::resolve::CLI_SRC) {
        return Some("cli".to_owned());
    }
    let rest = path.strip_prefix(super::resolve::LIB_SRC)?;
    let top = rest.split('/').next()?;
    let top = top.strip_suffix(".rs").unwrap_or(top);
    (!top.is_empty()).then(|| top.to_owned())
}
