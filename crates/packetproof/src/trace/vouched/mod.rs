//! `trace --gate`: the verdict on a call, held to what the gate vouched for. A layer
//! over [`super::verdict`], which matches calls to packets: a matched call counts
//! only when the gate statement names its packet's bytes (else it is unvouched, with
//! why), and a call no packet has may still conform to the templates the gate
//! vouched for, judged by the one judge every packet is judged by at the gate
//! (`crate::conform`: its literal text theirs, values of their slots' shapes in their
//! slots, each value scanned for forbidden material), sent with settings the agent's
//! vouched packets allow.

use super::genai::Message;
use super::join::Evidence;
use super::packets::{Packets, Sample};
use super::settings::{held, Expected, Required};
use super::verdict::{budget_missing, Missing, Verdict};
use crate::attest::vouch::Gate;
use crate::conform::{AgentTemplates, Conformance};
use crate::profile::Profile;
use crate::Invocation;

/// A gate statement, and the templates it vouches for, ready to match calls.
pub struct Vouching {
    gate: Gate,
    /// Per agent of the suite: its templates, or why its calls cannot conform to any.
    templates: Vec<Result<Templates, String>>,
}

/// What one vouched packet sends besides its texts: its model, budget, call and output
/// format (as `packets::Sample` reads them).
struct Vouched {
    model: String,
    max_tokens: u64,
    call: crate::call::Call,
    output: serde_json::Value,
}

/// One agent's vouched templates, and the settings its vouched packets allow.
struct Templates {
    /// The agent's name, as its settings give it.
    agent: String,
    judge: AgentTemplates,
    /// What each of the agent's packets the gate vouched for sends besides its texts.
    vouched: Vec<Vouched>,
    /// The values the agent declares for call fields.
    declared: std::collections::BTreeMap<String, crate::profile::Declared>,
    /// The agent's own models, when it declares them.
    models: Option<Vec<String>>,
    /// The agent's own budgets, when it declares them.
    budget: Option<crate::profile::Budget>,
}

impl Vouching {
    /// The templates are the suite's (its prompts folder, else the built-in ones), each
    /// counted only when the gate lists its bytes among its materials.
    pub fn new(gate: Gate, config: &Invocation, packets: &Packets) -> Vouching {
        let templates =
            config.settings().agents.all().iter().map(|agent| templates(&gate, agent, config, packets)).collect();
        Vouching { gate, templates }
    }

    /// Why calls cannot conform to a template here, or to some of them, if so.
    pub fn templates_unavailable(&self) -> Option<String> {
        let why: Vec<String> = self
            .templates
            .iter()
            .filter_map(|t| match t {
                Err(why) => Some(why.clone()),
                Ok(t) if !t.judge.refused.is_empty() => Some(t.judge.refused.join("; ")),
                Ok(_) => None,
            })
            .collect();
        (!why.is_empty()).then(|| why.join("; "))
    }

    /// Whether no agent's templates can be matched at all.
    fn no_templates(&self) -> Option<String> {
        let why: Vec<&str> =
            self.templates.iter().map(|t| t.as_ref().err().map(String::as_str)).collect::<Option<_>>()?;
        Some(why.join("; "))
    }
}

fn templates(gate: &Gate, agent: &Profile, config: &Invocation, packets: &Packets) -> Result<Templates, String> {
    if let Some(why) = gate.refused() {
        return Err(format!("the gate statement {}: {why}", gate.file));
    }
    let files: crate::conform::Files =
        crate::conform::suite_files(config).into_iter().filter(|(_, bytes)| gate.vouches_material(bytes)).collect();
    let samples: Vec<&Sample> = packets
        .samples()
        .iter()
        .filter(|p| config.settings().agents.with_id(&p.agent_id).is_some_and(|a| a.name == agent.name))
        .filter(|p| gate.packet_digest(&p.sha256, &p.exact_input_hash).is_ok())
        .collect();
    let reviewed: Vec<(&str, &str)> = samples.iter().map(|p| (p.system.as_str(), p.user.as_str())).collect();
    let unvouched =
        |root: &str| format!("{root} is not among the templates the gate statement {} vouches for", gate.file);
    Ok(Templates {
        agent: agent.name.clone(),
        judge: AgentTemplates::new(
            agent,
            config,
            &files,
            &reviewed,
            (&unvouched, &|bytes| gate.vouches_material(bytes)),
        )?
        .called("the vouched "),
        vouched: samples
            .iter()
            .map(|p| Vouched {
                model: p.model.clone(),
                max_tokens: p.max_tokens,
                call: p.call.clone(),
                output: p.output.clone(),
            })
            .collect(),
        declared: agent.call.clone(),
        models: agent.models.clone(),
        budget: agent.max_tokens.clone(),
    })
}

impl Templates {
    /// The vouched packets for `model`; for a model none of them names, all of them.
    fn for_model(&self, model: &str) -> Vec<&Vouched> {
        let named: Vec<&Vouched> = self.vouched.iter().filter(|v| v.model == model).collect();
        if named.is_empty() {
            self.vouched.iter().collect()
        } else {
            named
        }
    }
}

/// `test --attest`: no gate is signed over a template conformance cannot follow.
pub fn templates_followed(config: &Invocation) -> crate::Result<()> {
    crate::conform::templates_followed(config)
}

/// The verdict on `call` once held to the gate.
pub(crate) fn verdict(
    verdict: Verdict,
    evidence: &Evidence,
    packets: &Packets,
    vouching: &Vouching,
    config: &Invocation,
    require: Required,
    notes: &mut Vec<String>,
) -> Verdict {
    match verdict {
        Verdict::Matched { packet } => {
            let Some(reviewed) = packets.reviewed(&packet) else {
                return Verdict::Unvouched { packet, reason: "the packet was not read".to_owned() };
            };
            match vouching.gate.packet_digest(&reviewed.sha256, &reviewed.exact_input_hash) {
                Ok(_) => Verdict::Matched { packet },
                Err(reason) => Verdict::Unvouched { packet, reason },
            }
        }
        Verdict::Unreviewed { reason } => match conforms(evidence, vouching, config, require, notes) {
            Ok(verdict) => verdict,
            Err(why) => Verdict::Unreviewed { reason: format!("{reason}; {why}") },
        },
        other => other,
    }
}

/// The call as a rendering of one agent's vouched templates, or why it is none of any.
fn conforms(
    evidence: &Evidence,
    vouching: &Vouching,
    config: &Invocation,
    require: Required,
    notes: &mut Vec<String>,
) -> Result<Verdict, String> {
    if let Some(why) = vouching.no_templates() {
        return Err(format!("no template conformance: {why}"));
    }
    let (system, user) = request_texts(evidence)?;
    let mut why_not = Vec::new();
    for templates in vouching.templates.iter().flatten() {
        match templates.judge.judge((&system, &user), config) {
            Ok(Conformance::Undecided(reason)) => return Ok(Verdict::NotJudgeable { reason }),
            Ok(Conformance::Conforms { templates: used, slots }) => {
                settings_vouched(templates, evidence, require, notes)?;
                call_vouched(templates, evidence, require, notes)?;
                return Ok(Verdict::Conforms { templates: used, slots });
            }
            Err(refusal) => why_not.push((templates.agent.as_str(), refusal.why)),
        }
    }
    Err(rendering_of_none(&why_not))
}

/// Why a call renders no agent's templates, as one sentence: one agent's reason as it is,
/// several each after its agent's name.
fn rendering_of_none(why_not: &[(&str, String)]) -> String {
    match why_not {
        [(_, why)] => why.clone(),
        several => {
            let each: Vec<String> = several.iter().map(|(agent, why)| format!("as agent {agent}, {why}")).collect();
            format!("it renders no agent's vouched templates: {}", each.join("; "))
        }
    }
}

/// A conforming call's model and max tokens are what the gate vouched: the agent's
/// `models` (else its vouched packets' models), and a budget the agent declares
/// (`max_tokens`), else one its vouched packets carry for that model (for a model none
/// of them names, one they carry for any). The texts alone never vouch for a call sent
/// to another model or with another budget; a budget that is no whole number is none.
fn settings_vouched(
    templates: &Templates,
    evidence: &Evidence,
    require: Required,
    notes: &mut Vec<String>,
) -> Result<(), String> {
    let Some(model) = evidence.model.iter().find_map(|said| said.value.as_str()) else {
        return Err("it renders the vouched templates, but the call records no model (gen_ai.request.model) to hold \
                    to the vouched ones"
            .to_owned());
    };
    let allowed: Vec<&str> = match &templates.models {
        Some(models) => models.iter().map(String::as_str).collect(),
        None => templates.vouched.iter().map(|v| v.model.as_str()).collect(),
    };
    if !allowed.contains(&model) {
        let mut shown = allowed.clone();
        shown.sort_unstable();
        shown.dedup();
        return Err(format!(
            "it renders the vouched templates, but its model {model:?} is none the gate vouched ({shown:?})"
        ));
    }
    // A call whose telemetry records no budget is judged without one (the
    // instrumentation may not record it, and a note says so); a request body that sends
    // none, or a required budget unrecorded, is refused.
    let for_model = templates.for_model(model);
    match budget_missing(evidence, require) {
        Some(Missing::Sent) if templates.vouched.iter().any(|v| v.call.omits_max_tokens()) => {}
        Some(Missing::Sent) => {
            return Err("it renders the vouched templates, but it sends no max tokens, where the vouched packets \
                        send a budget"
                .to_owned())
        }
        Some(Missing::Required) => {
            return Err("it renders the vouched templates, but it records no max tokens (required)".to_owned())
        }
        Some(Missing::Unrecorded) => {
            notes.push("the call records no max tokens: its budget is not held to the vouched ones".to_owned())
        }
        None => {}
    }
    let Some(said) = evidence.max_tokens.first() else { return Ok(()) };
    let Some(tokens) = crate::trace::verdict::whole(&said.value) else {
        return Err(format!(
            "it renders the vouched templates, but its max tokens {} is not a number (a whole number of tokens)",
            crate::report::excerpt(&said.value.to_string())
        ));
    };
    if let Some(budget) = &templates.budget {
        return match budget.allows(tokens) {
            true => Ok(()),
            false => Err(format!(
                "it renders the vouched templates, but its max tokens {tokens} are none of the agent's max_tokens ({})",
                budget.describe()
            )),
        };
    }
    let mut vouched: Vec<u64> = for_model.iter().map(|v| v.max_tokens).collect();
    vouched.sort_unstable();
    vouched.dedup();
    match vouched.contains(&tokens) {
        true => Ok(()),
        false => Err(format!(
            "it renders the vouched templates, but its max tokens {tokens} are none the gate vouched for model \
             {model:?} ({vouched:?}; an app that sets the budget per call declares max_tokens)"
        )),
    }
}

/// A conforming call's other fields are what the agent's vouched packets for its model
/// send (for a model none of them names, what any sends), or values the agent declares.
fn call_vouched(
    templates: &Templates,
    evidence: &Evidence,
    require: Required,
    notes: &mut Vec<String>,
) -> Result<(), String> {
    let model = evidence.model.iter().find_map(|said| said.value.as_str()).unwrap_or_default();
    let expected = Expected {
        reviewed: templates.for_model(model).into_iter().map(|v| (&v.call, &v.output)).collect(),
        declared: Some(&templates.declared),
        whose: "the vouched packets",
    };
    let (differences, unjudged) = held(evidence.rest.as_deref(), &expected, require);
    notes.extend(unjudged);
    match differences.is_empty() {
        true => Ok(()),
        false => Err(format!("it renders the vouched templates, but {}", differences.join("; "))),
    }
}

/// The whole system and user texts of a call sent as [system, user], from the first
/// readable source of its messages (the verdict already held every source to agree).
fn request_texts(evidence: &Evidence) -> Result<(String, String), String> {
    let whole = |m: &Message| m.text.whole.as_deref().map(str::to_owned);
    let messages = evidence.content.iter().find_map(|(_, m)| m.as_ref().ok()).ok_or("no message content")?;
    let system_only = evidence.system_only.iter().find_map(|(_, m)| m.as_ref().ok());
    let (system, rest): (Option<&Message>, &[Message]) = match messages.split_first() {
        Some((first, rest)) if first.role == "system" => (Some(first), rest),
        _ => (system_only, messages.as_slice()),
    };
    let [user] = rest else { return Err("not one user message after the system text".to_owned()) };
    if user.role != "user" {
        return Err("not one user message after the system text".to_owned());
    }
    let system = system.and_then(whole).ok_or("no system text")?;
    Ok((system, whole(user).ok_or("no user text")?))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Round 6: two agents' reasons were joined as "…; nor the system prompt is no rendering of …".
    #[test]
    fn several_agents_reasons_read_as_one_sentence() {
        let one = [("reviser", "the system prompt is no rendering of the vouched system.md.j2".to_owned())];
        assert_eq!(rendering_of_none(&one), one[0].1);
        let two =
            [one[0].clone(), ("builder", "the user message is no rendering of the vouched user.md.j2".to_owned())];
        let sentence = rendering_of_none(&two);
        assert_eq!(
            sentence,
            "it renders no agent's vouched templates: as agent reviser, the system prompt is no rendering of the \
             vouched system.md.j2; as agent builder, the user message is no rendering of the vouched user.md.j2"
        );
        assert!(!sentence.contains("nor"), "{sentence}");
    }
}
