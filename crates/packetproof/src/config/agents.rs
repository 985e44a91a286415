//! The suite's agents: `[contract]` (one agent, the default: the block builder) or
//! `[agents.NAME]` tables, each a contract profile of its own. A packet is judged by
//! the agent whose `agent_ids` name its agentId; one agent id belongs to one agent.

use crate::profile::{Profile, RawContract};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// Every agent of the suite, in name order; never empty.
#[derive(Debug, Clone)]
pub struct Agents(Vec<Profile>);

/// The name `[contract]`'s single agent goes by.
pub(crate) const CONTRACT: &str = "contract";

impl Agents {
    /// Resolve `[contract]` or `[agents.*]` (not both); `evaluator` is the suite's
    /// `[evaluator]`, the default of every agent that declares none of its own.
    pub(super) fn resolve(
        contract: Option<RawContract>,
        agents: BTreeMap<String, RawContract>,
        block_render_input_keys: &[String],
        evaluator: Option<&super::Evaluator>,
        providers: &BTreeMap<String, super::Provider>,
        forbidden: &super::Forbidden,
    ) -> Result<Agents, String> {
        let declared = contract.is_some() || !agents.is_empty();
        let raw: Vec<(String, RawContract)> = match (contract, agents.is_empty()) {
            (Some(_), false) => {
                return Err("contract: a suite declares one agent in [contract] or several in [agents.NAME], \
                            not both"
                    .into())
            }
            (contract, true) => vec![(CONTRACT.to_owned(), contract.unwrap_or_default())],
            (None, false) => agents.into_iter().collect(),
        };
        let mut list = Vec::new();
        for (name, mut raw) in raw {
            if name.trim().is_empty() {
                return Err("agents: an agent's name is blank".into());
            }
            let setting = if name == CONTRACT { "contract.".to_owned() } else { format!("agents.{name}.") };
            let reword = |message: String| message.replacen("contract.", &setting, 1);
            let own = raw.take_forbidden().map(|table| forbidden.under(table)).transpose();
            let own = own.map_err(|m| format!("{setting}{m}"))?;
            let mut profile = Profile::resolve(&name, raw, block_render_input_keys).map_err(reword)?;
            profile.forbidden = own;
            super::suite::check_evaluator(profile.evaluator.as_ref()).map_err(|m| format!("{setting}{m}"))?;
            if let Some(model) =
                profile.models.iter().flatten().find(|m| !providers.values().any(|p| p.models.contains(m)))
            {
                return Err(format!("{setting}models: {model:?} is in no provider's models (providers.*.models)"));
            }
            profile.declared = declared;
            if profile.evaluator.is_none() {
                profile.evaluator = evaluator.cloned();
            }
            list.push(profile);
        }
        for (i, agent) in list.iter().enumerate() {
            for id in &agent.agent_ids {
                if let Some(other) = list[..i].iter().find(|a| a.agent_ids.contains(id)) {
                    return Err(format!(
                        "agents.{}: agent id {id:?} is agent {:?}'s already (a packet's agentId names one agent)",
                        agent.name, other.name
                    ));
                }
            }
        }
        Ok(Agents(list))
    }

    /// Each agent's own schema file, made a path from the suite's folder `root`; one that
    /// is not a file is a settings error naming the setting.
    pub(super) fn root_schemas(&mut self, root: &std::path::Path) -> Result<(), String> {
        for agent in &mut self.0 {
            let Some(schema) = agent.schema.as_mut() else { continue };
            *schema = root.join(&*schema);
            if !schema.is_file() {
                let setting =
                    if agent.name == CONTRACT { "contract".to_owned() } else { format!("agents.{}", agent.name) };
                return Err(format!("{setting}.schema: {} is not a file", schema.display()));
            }
        }
        Ok(())
    }

    /// Every agent.
    pub fn all(&self) -> &[Profile] {
        &self.0
    }

    /// The agent that judges `packet`: the one whose agent ids name its agentId, else
    /// (a packet of no declared agent, which `packet::contract` fails) the first.
    pub fn of(&self, packet: &Map<String, Value>) -> &Profile {
        let id = packet.get("agentId").and_then(Value::as_str);
        id.and_then(|id| self.with_id(id)).unwrap_or(&self.0[0])
    }

    /// [`Agents::of`] for a packet that may not be an object.
    pub fn of_value(&self, packet: &Value) -> &Profile {
        match packet.as_object() {
            Some(map) => self.of(map),
            None => &self.0[0],
        }
    }

    /// The agent whose agent ids include `id`.
    pub fn with_id(&self, id: &str) -> Option<&Profile> {
        self.0.iter().find(|a| a.agent_ids.iter().any(|known| known == id))
    }

    /// Whether the suite has several agents (a packet's agentId chooses among them).
    pub fn several(&self) -> bool {
        self.0.len() > 1
    }

    /// Every agent id of every agent, for messages.
    pub(crate) fn ids(&self) -> Vec<&str> {
        self.0.iter().flat_map(|a| a.agent_ids.iter().map(String::as_str)).collect()
    }

    /// The agent packetproof's own compiler makes packets for: the suite's block
    /// builder (the first agent when the suite has none, whose contract then refuses them).
    pub(crate) fn block_builder(&self) -> &Profile {
        self.0.iter().find(|a| a.is_block_builder()).unwrap_or(&self.0[0])
    }
}
