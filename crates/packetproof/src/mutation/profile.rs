//! Damage to what a custom contract profile declares: its agent ids, its branch
//! fields and values, its renderInput keys, and its plain-text output. A branch
//! value the profile allows is caught only because the suite's exporter makes
//! another packet (`packet::regenerates`); one it does not declare, by
//! `packet::contract` on its own.

use super::Edit;
use crate::config::OutputMode;
use crate::{Config, PacketCheck};
use serde_json::{json, Map, Value};

pub(super) fn mutations(
    golden: &Map<String, Value>,
    config: &Config,
    add: &mut impl FnMut(String, PacketCheck, bool, Edit),
) {
    let profile = config.agent(golden);
    add(
        "agentId set to one the profile does not declare".into(),
        PacketCheck::Contract,
        true,
        Box::new(|p| {
            p.insert("agentId".into(), json!("an-undeclared-agent"));
        }),
    );
    for field in &profile.branch {
        let name = field.name.clone();
        let current = golden.get("resolvedBranch").and_then(|b| b.get(&name)).cloned().unwrap_or(Value::Null);
        let other = match &field.values {
            Some(values) => values.iter().find(|v| current != **v).map(|v| Value::from(v.as_str())),
            None => Some(Value::Bool(!current.as_bool().unwrap_or(false))),
        };
        if let Some(other) = other {
            let (field_name, value) = (name.clone(), other.clone());
            add(
                format!("resolvedBranch.{name} set to {other}"),
                PacketCheck::Regenerates,
                true,
                Box::new(move |p| set_branch(p, &field_name, value.clone())),
            );
        }
        let field_name = name.clone();
        add(
            format!("resolvedBranch.{name} set to a value the profile does not declare"),
            PacketCheck::Contract,
            true,
            Box::new(move |p| set_branch(p, &field_name, json!("an undeclared value"))),
        );
    }
    add(
        "a renderInput key the profile does not declare added".into(),
        PacketCheck::Contract,
        true,
        Box::new(|p| {
            if let Some(Value::Object(input)) = p.get_mut("renderInput") {
                input.insert("undeclaredByTheProfile".into(), json!("x"));
            }
        }),
    );
    if config.output_mode(golden) == Some(OutputMode::Text) {
        add(
            "outputSchema added to a plain-text packet".into(),
            PacketCheck::ProviderShape,
            true,
            Box::new(|p| {
                p.insert("outputSchema".into(), json!({"name": "answer", "schema": {"type": "object"}}));
            }),
        );
    }
}

fn set_branch(packet: &mut Map<String, Value>, field: &str, value: Value) {
    if let Some(Value::Object(branch)) = packet.get_mut("resolvedBranch") {
        branch.insert(field.to_owned(), value);
    }
}
