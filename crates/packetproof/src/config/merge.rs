//! The suite's harness.toml over the built-in settings: which table wins, and what
//! the suite said itself before the defaults filled it in.

use crate::builtin;

/// The built-in settings as a table: the project's harness.toml without `[paths]`.
pub(super) fn builtin_table() -> toml::Table {
    let mut table: toml::Table = toml::from_str(builtin::HARNESS_TOML).expect("the project's harness.toml parses");
    table.remove("paths");
    table
}

/// What the suite's own harness.toml says, before the built-in settings fill it in.
pub(super) struct OwnSettings {
    pub(super) render_input_keys: bool,
    pub(super) builder_schema: bool,
    pub(super) builder_pin: bool,
}

impl OwnSettings {
    pub(super) fn of(user: &toml::Table) -> OwnSettings {
        let has = |table: &str, key: &str| user.get(table).and_then(|t| t.get(key)).is_some();
        OwnSettings {
            render_input_keys: has("packet", "render_input_keys"),
            builder_schema: has("paths", "builder_schema"),
            builder_pin: has("schema", "builder_sha256"),
        }
    }
}

/// Merge `user` into `base`: tables key by key, everything else replaced. A
/// provider is replaced whole (a suite compiles only for the models it lists), but
/// keeps the built-in output limits of the models it keeps unless it gives its own.
pub(super) fn overlay(base: &mut toml::Table, user: toml::Table) {
    for (key, value) in user {
        match (base.get_mut(&key), value) {
            (Some(toml::Value::Table(inner)), toml::Value::Table(value)) if key == "providers" => {
                keep_builtin_limits(inner, value)
            }
            (Some(toml::Value::Table(inner)), toml::Value::Table(value)) => overlay(inner, value),
            (_, value) => {
                base.insert(key, value);
            }
        }
    }
}

/// `providers`: the suite's list replaces the built-in one; each provider it restates
/// inherits the built-in `max_output_tokens` of the models it still lists (its own
/// entries win).
fn keep_builtin_limits(base: &mut toml::Table, user: toml::Table) {
    let builtin = std::mem::take(base);
    for (name, provider) in user {
        let mut provider = provider;
        let inherited = builtin.get(&name).and_then(|p| p.get("max_output_tokens")).and_then(toml::Value::as_table);
        if let (toml::Value::Table(table), Some(inherited)) = (&mut provider, inherited) {
            let models: Vec<String> = table
                .get("models")
                .and_then(toml::Value::as_array)
                .map(|m| m.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect())
                .unwrap_or_default();
            let limits = table.entry("max_output_tokens").or_insert_with(|| toml::Value::Table(toml::Table::new()));
            if let toml::Value::Table(limits) = limits {
                for (model, limit) in inherited.iter().filter(|(m, _)| models.contains(m)) {
                    limits.entry(model.clone()).or_insert_with(|| limit.clone());
                }
            }
        }
        base.insert(name, provider);
    }
}
