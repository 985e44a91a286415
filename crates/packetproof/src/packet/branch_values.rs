//! resolvedBranch's values held to the packet's agent: its agent id, each field's value
//! set (`packet::contract`), the values packetproof's compiler knows (the rules that
//! render need them), and the built-in names a suite renamed.

use super::describe;
use crate::profile::Profile;
use crate::report::{Finding, JsonPath, PacketCheck};
use crate::Invocation;
use serde_json::{Map, Value};

pub(super) fn resolved_branch(packet: &Map<String, Value>, profile: &Profile, fail: &mut impl FnMut(JsonPath, String)) {
    let Some(branch) = packet.get("resolvedBranch").and_then(Value::as_object) else { return };
    let agent = branch.get("agentId");
    // The block builder's branch always names its agent; a custom profile's may.
    let named = agent.is_some() || profile.is_block_builder();
    let known = agent.and_then(Value::as_str).is_some_and(|a| profile.agent_ids.iter().any(|id| id == a));
    if named && !(known && agent == packet.get("agentId")) {
        let own = |id: &str| profile.agent_ids.iter().any(|a| a == id);
        let expected = match packet.get("agentId").and_then(Value::as_str) {
            Some(id) if !profile.is_block_builder() || own(id) => format!("{id:?}"),
            _ if profile.is_block_builder() && profile.agent_ids.len() == 1 => format!("{:?}", profile.agent_ids[0]),
            _ => format!("one of {:?}", profile.agent_ids),
        };
        fail(
            JsonPath::field("resolvedBranch").key("agentId"),
            format!("expected {expected} (the packet's agentId), found {}", describe(agent)),
        );
    }
    for field in &profile.branch {
        let path = JsonPath::field("resolvedBranch").key(&field.name);
        let value = branch.get(&field.name);
        match (&field.values, value) {
            (None, Some(Value::Bool(_))) => {}
            (None, other) => fail(path, format!("expected a boolean, found {}", describe(other))),
            (Some(values), Some(Value::String(s))) if values.contains(s) => {}
            (Some(values), other) => fail(path, format!("expected one of {values:?}, found {}", describe(other))),
        }
    }
    if !profile.is_block_builder() {
        for key in branch.keys().filter(|k| *k != "agentId" && !profile.branch.iter().any(|f| &f.name == *k)) {
            fail(
                JsonPath::field("resolvedBranch").key(key),
                "a branch field the suite's contract profile does not declare (harness.toml [contract.branch])".into(),
            );
        }
    }
}

/// Whether every value of the packet's resolvedBranch is one packetproof's compiler
/// knows: `Err` naming a value the suite added to a block-builder value set.
pub(crate) fn builtin_branch_values(packet: &Map<String, Value>, config: &Invocation) -> Result<(), String> {
    let Some(branch) = packet.get("resolvedBranch").and_then(Value::as_object) else { return Ok(()) };
    let agent = config.settings().agent(packet);
    for (field, value) in branch {
        if let Some(value) = value.as_str().filter(|v| agent.is_extension(field, v)) {
            return Err(format!(
                "resolvedBranch.{field} is {value:?}, a value the suite added (harness.toml contract.branch): \
                 packetproof's compiler and templates do not know it, so the suite's exporter is its renderer"
            ));
        }
    }
    Ok(())
}

/// The built-in branch values `packet` names under their old names although the suite
/// renamed them (`[contract.renamed]`): a golden packet blessed before keeps them, a
/// packet `bless` writes new may not.
pub(crate) fn retired_values(packet: &Value, config: &Invocation) -> Vec<Finding> {
    let Some(map) = packet.as_object() else { return Vec::new() };
    let agent = config.settings().agent(map);
    let branch = map.get("resolvedBranch").and_then(Value::as_object).into_iter().flatten();
    branch
        .filter_map(|(field, value)| {
            let old = value.as_str()?;
            let new = agent.spelled(field, old);
            (new != old).then(|| {
                Finding::new(
                    PacketCheck::Contract,
                    JsonPath::field("resolvedBranch").key(field),
                    format!(
                        "{old:?} is renamed {new:?} (harness.toml contract.renamed): packets blessed before keep it, \
                         a new one names the value {new:?}"
                    ),
                )
            })
        })
        .collect()
}
