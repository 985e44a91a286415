//! `corpus::branch-coverage`'s one reading of a corpus: what its golden packets fail
//! to cover, per agent. The check words each gap as a finding and the HTML report
//! marks the same gaps in its matrix, so the two never give different answers.

use crate::profile::Profile;
use crate::Config;
use serde_json::Value;
use std::fmt;

/// The block builder's main dimensions, paired with each other and the provider.
const MAIN: [&str; 4] = ["evidenceMode", "neighbours", "insertionMode", "sourceScope"];

/// One thing the corpus fails to cover, of one agent (named when the suite has several).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Gap {
    agent: Option<String>,
    missing: Missing,
}

#[derive(Debug, Clone, PartialEq)]
enum Missing {
    /// A value of a resolvedBranch field that no packet has.
    Value { field: String, value: Value },
    /// Two values of two dimensions (the provider first, when it is one) no packet has together.
    Pair { a: (String, String), b: (String, String) },
}

impl Gap {
    /// Whether this gap is the matrix cell of `agent`'s `field` = `value` for `provider`:
    /// the value never seen, or never seen with the provider.
    pub(crate) fn is_cell(&self, agent: &str, field: &str, value: &Value, provider: &str) -> bool {
        if self.agent.as_deref().is_some_and(|a| a != agent) {
            return false;
        }
        match &self.missing {
            Missing::Value { field: f, value: v } => f == field && v == value,
            Missing::Pair { a, b } => {
                a.0 == "provider" && a.1 == provider && b.0 == field && value.as_str() == Some(b.1.as_str())
            }
        }
    }
}

impl fmt::Display for Gap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(agent) = &self.agent {
            write!(f, "agent {agent}: ")?;
        }
        match &self.missing {
            Missing::Value { field, value } => write!(f, "{field}={value}"),
            Missing::Pair { a, b } => write!(f, "{}={} with {}={}", a.0, a.1, b.0, b.1),
        }
    }
}

/// What a corpus fails to cover: every value of every resolvedBranch field of each
/// agent, and every pair of values of its main dimensions (the providers it calls and,
/// for the block builder, evidenceMode, neighbours, insertionMode and sourceScope; for
/// a custom profile, every field with a value set). Each agent is held to its own
/// packets' rows (`rows` are [`super::branch_row`]s).
pub(crate) fn coverage_gaps(rows: &[Value], config: &Config) -> Vec<Gap> {
    let mut gaps = Vec::new();
    for agent in config.agents.all() {
        let own: Vec<&Value> = rows.iter().filter(|r| std::ptr::eq(config.agents.of_value(r), agent)).collect();
        let name = config.agents.several().then(|| agent.name.clone());
        let missing = agent_gaps(&own, agent, config);
        gaps.extend(missing.into_iter().map(|missing| Gap { agent: name.clone(), missing }));
    }
    gaps
}

fn agent_gaps(rows: &[&Value], agent: &Profile, config: &Config) -> Vec<Missing> {
    // A renamed value is covered by meaning: a packet naming it either way covers the
    // built-in value, and a gap names it as new packets do ([contract.renamed]).
    let rows: Vec<std::borrow::Cow<Value>> = rows.iter().map(|row| agent.builtin_branch(row)).collect();
    let rows: Vec<&Value> = rows.iter().map(AsRef::as_ref).collect();
    let mut missing = Vec::new();
    let meanings = |field: &str, values: &[String]| -> Vec<String> {
        values.iter().filter(|v| agent.builtin_value(field, v) == v.as_str()).cloned().collect()
    };
    for field in &agent.branch {
        let values: Vec<Value> = match &field.values {
            Some(values) => meanings(&field.name, values).iter().map(|v| Value::from(v.as_str())).collect(),
            None => vec![Value::Bool(false), Value::Bool(true)],
        };
        let name = field.name.as_str();
        let unseen = values.into_iter().filter(|v| !rows.iter().any(|r| &r[name] == v));
        let spelled = |value: Value| match value.as_str() {
            Some(text) => Value::from(agent.spelled(name, text)),
            None => value,
        };
        missing.extend(unseen.map(|value| Missing::Value { field: name.to_owned(), value: spelled(value) }));
    }
    // The providers the agent calls: those listing one of its models (every provider when it names none).
    let providers = config
        .providers
        .iter()
        .filter(|(_, p)| agent.models.as_ref().is_none_or(|models| p.models.iter().any(|m| models.contains(m))));
    let mut dims: Vec<(&str, Vec<&str>)> = vec![("provider", providers.map(|(name, _)| name.as_str()).collect())];
    for field in agent.branch.iter().filter(|f| !agent.is_block_builder() || MAIN.contains(&f.name.as_str())) {
        if let Some(values) = &field.values {
            let builtin = values.iter().filter(|v| agent.builtin_value(&field.name, v) == v.as_str());
            dims.push((field.name.as_str(), builtin.map(String::as_str).collect()));
        }
    }
    for (i, (a, xs)) in dims.iter().enumerate() {
        for (b, ys) in &dims[i + 1..] {
            for x in xs {
                for y in ys {
                    if !rows.iter().any(|r| r[a] == *x && r[b] == *y) {
                        let pair = |n: &str, v: &str| (n.to_owned(), agent.spelled(n, v).to_owned());
                        missing.push(Missing::Pair { a: pair(a, x), b: pair(b, y) });
                    }
                }
            }
        }
    }
    missing
}
