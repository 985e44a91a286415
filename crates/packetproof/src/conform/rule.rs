//! `packet::template-conformance`: a packet's systemPrompt and effectiveUserMessage are
//! a rendering of its agent's templates, judged as `trace --gate` judges a production
//! call: the suite's templates, each undeclared slot's shape taken from the suite's
//! golden packets (what `test --attest` vouches for), every slot in its contract and
//! free of forbidden material. A golden packet production would refuse fails here.

use super::{AgentTemplates, Conformance, Part};
use crate::profile::Profile;
use crate::report::{Finding, JsonPath, PacketCheck};
use crate::{fsutil, Invocation};
use serde_json::{Map, Value};

const CHECK: PacketCheck = PacketCheck::TemplateConformance;

/// Every agent's templates, read once for the invocation, with the golden texts.
pub(crate) struct Judges {
    /// Per agent, in `config.agents.all()` order: its templates, or why none can be read.
    agents: Vec<Result<AgentTemplates, String>>,
    /// Each golden packet's (agentId, systemPrompt, effectiveUserMessage).
    golden: Vec<(String, String, String)>,
}

/// Whether the rule applies to a packet: its agent declares templates, or is the block
/// builder and the packet's promptVersions are this suite's templates (a packet of the
/// reference's own prompts, or another exporter's, is none of these templates' renderings
/// to judge: `packet::renders-from-input` says the same).
pub(crate) fn applies(packet: &Map<String, Value>, config: &Invocation) -> Result<(), String> {
    let agent = config.settings().agents.of(packet);
    if agent.is_block_builder() {
        return crate::check::renders_from_input::applies(packet, config);
    }
    // A packet is judged by the suite's templates whatever versions its promptVersions
    // name: a golden packet that named others would otherwise escape the gate.
    super::roots(agent, config).map(drop)
}

/// The findings on a packet. A slot whose shape is taken from the golden packets is
/// also shaped by the packet's own value (a packet `bless` is about to write, or one
/// `verify` is given, counts among the texts its shapes come from, as it will once
/// golden); a declared shape, the literal text and forbidden material are not relaxed.
pub(crate) fn check(packet: &Map<String, Value>, config: &Invocation) -> Vec<Finding> {
    let judges = config.cache(|| Judges::new(config));
    let agent = config.settings().agents.of(packet);
    let index = config.settings().agents.all().iter().position(|a| a.name == agent.name).unwrap_or(0);
    let templates = match &judges.agents[index] {
        Ok(templates) => templates,
        Err(why) => return vec![Finding::new(CHECK, JsonPath::field("promptVersions"), why.clone())],
    };
    let text = |key: &str| packet.get(key).and_then(Value::as_str).unwrap_or_default();
    let texts = (text("systemPrompt"), text("effectiveUserMessage"));
    let verdict = match templates.judge(texts, config) {
        Err(refusal) if refusal.by_inferred_shape => match judges.with_texts(agent, texts, config) {
            Ok(own) => own.judge(texts, config),
            Err(_) => Err(refusal),
        },
        verdict => verdict,
    };
    match verdict {
        Ok(Conformance::Conforms { .. }) => Vec::new(),
        Ok(Conformance::Undecided(why)) => vec![Finding::new(CHECK, JsonPath::field("systemPrompt"), why)],
        Err(refusal) => {
            let field = match refusal.part {
                Part::System => "systemPrompt",
                Part::User => "effectiveUserMessage",
            };
            let message = format!("production would refuse this packet: {}", refusal.why);
            vec![Finding::new(CHECK, JsonPath::field(field), message)]
        }
    }
}

impl Judges {
    fn new(config: &Invocation) -> Judges {
        let golden = golden_texts(config);
        let agents = config.settings().agents.all().iter().map(|agent| read(agent, config, &golden, None)).collect();
        Judges { agents, golden }
    }

    /// `agent`'s templates with `texts` among the golden ones.
    fn with_texts(&self, agent: &Profile, texts: (&str, &str), config: &Invocation) -> Result<AgentTemplates, String> {
        read(agent, config, &self.golden, Some(texts))
    }
}

/// `agent`'s templates, its undeclared slots shaped by its golden texts (and `own`).
fn read(
    agent: &Profile,
    config: &Invocation,
    golden: &[(String, String, String)],
    own: Option<(&str, &str)>,
) -> Result<AgentTemplates, String> {
    let mut reviewed: Vec<(&str, &str)> = golden
        .iter()
        .filter(|(id, ..)| config.settings().agents.with_id(id).is_some_and(|a| a.name == agent.name))
        .map(|(_, system, user)| (system.as_str(), user.as_str()))
        .collect();
    reviewed.extend(own);
    let missing =
        |root: &str| super::roots::why_missing(config, root, format!("{root} is no template under paths.prompts"));
    let templates = AgentTemplates::new(agent, config, &super::suite_files(config), &reviewed, (&missing, &|_| true))?;
    match templates.refused.as_slice() {
        [] => Ok(templates),
        refused => Err(format!("template conformance cannot follow {}", refused.join("; "))),
    }
}

/// The (agentId, systemPrompt, effectiveUserMessage) of every golden packet of the
/// suite's positive fixtures (a negative fixture's packet is broken on purpose); none
/// outside a suite. A golden packet that cannot be read counts for nothing here: the
/// other rules fail it.
fn golden_texts(config: &Invocation) -> Vec<(String, String, String)> {
    if !config.settings().is_suite() {
        return Vec::new();
    }
    let Ok(cases) = crate::corpus::cases(config) else { return Vec::new() };
    let mut texts = Vec::new();
    for case in cases.iter().filter(|c| c.expect.is_none()) {
        let Ok(packet) = fsutil::read_json(&case.golden_packet(), config.settings().limits.max_file_bytes) else {
            continue;
        };
        let text = |key: &str| packet.get(key).and_then(Value::as_str).unwrap_or_default().to_owned();
        texts.push((text("agentId"), text("systemPrompt"), text("effectiveUserMessage")));
    }
    texts
}
