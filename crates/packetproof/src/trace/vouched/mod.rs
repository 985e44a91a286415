//! `trace --gate`: the verdict on a call, held to what the gate vouched for. A layer
//! over [`super::verdict`], which matches calls to packets: a matched call counts
//! only when the gate statement names its packet's bytes (else it is unvouched, with
//! why), and a call no packet has may still conform to the templates the gate
//! vouched for (its literal text theirs, values of their slots' shapes in their slots,
//! each value scanned for forbidden material), sent with settings the agent's vouched
//! packets allow.

mod slots;

use super::genai::Message;
use super::join::Evidence;
use super::packets::{Packets, Sample};
use super::verdict::{Filled, Used, Verdict};
use crate::attest::vouch::Gate;
use crate::compile::prompts::{SYSTEM_TEMPLATE, USER_TEMPLATE};
use crate::digest;
use crate::profile::{Profile, Style};
use crate::template::{format, jinja, mustache, Matcher, Piece, Rendering, Template, Trim};
use crate::Invocation;
use slots::Contracts;
use std::collections::{BTreeMap, BTreeSet};

/// A gate statement, and the templates it vouches for, ready to match calls.
pub struct Vouching {
    gate: Gate,
    /// Per agent of the suite: its templates, or why its calls cannot conform to any.
    templates: Vec<Result<Templates, String>>,
    /// The forbidden keys as written JSON keys, searched in every slot value.
    forbidden_keys: Option<regex::Regex>,
}

/// The templates a system prompt or a user message may render.
struct Role {
    /// Each slot held to its shape.
    shaped: Matcher,
    /// Any text in every slot: which slot is outside its shape, when only `shaped` refuses.
    free: Matcher,
    /// The templates' names, as messages give them.
    names: String,
}

struct Templates {
    system: Role,
    user: Role,
    contracts: Contracts,
    /// The (model, max tokens) of each of the agent's packets the gate vouched for.
    vouched: Vec<(String, u64)>,
    /// Each vouched template's version: the sha256 of its bytes, as promptVersions records it.
    versions: BTreeMap<String, String>,
    /// The root templates no call can conform to, each with why (its reader refused
    /// it, or the gate does not vouch for it); the others still match calls.
    refused: Vec<String>,
    /// The agent's own models, when it declares them.
    models: Option<Vec<String>>,
}

impl Vouching {
    /// The templates are the suite's (its prompts folder, else the built-in ones), each
    /// counted only when the gate lists its bytes among its materials.
    pub fn new(gate: Gate, config: &Invocation, packets: &Packets) -> Vouching {
        let templates = config.agents.all().iter().map(|agent| templates(&gate, agent, config, packets)).collect();
        Vouching { gate, templates, forbidden_keys: slots::key_finder(config) }
    }

    /// Why calls cannot conform to a template here, or to some of them, if so.
    pub fn templates_unavailable(&self) -> Option<String> {
        let why: Vec<String> = self
            .templates
            .iter()
            .filter_map(|t| match t {
                Err(why) => Some(why.clone()),
                Ok(t) if !t.refused.is_empty() => Some(t.refused.join("; ")),
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
    let mut files = BTreeMap::new();
    let mut versions = BTreeMap::new();
    for (name, bytes) in config.walk_prompt_templates() {
        if !gate.vouches_material(&bytes) {
            continue;
        }
        versions.insert(name.clone(), digest::sha256(&bytes));
        if let Ok(text) = String::from_utf8(bytes) {
            files.insert(name, text);
        }
    }
    let (style, trim, system, user) = roots(agent, config)?;
    let mut refused = Vec::new();
    let unvouched =
        |root: &str| format!("{root} is not among the templates the gate statement {} vouches for", gate.file);
    // Every root is a branch labelled by its name, so a rendering names the templates it used.
    let system_template =
        Template { pieces: vec![Piece::Branch(read_roots(style, trim, &system, &files, unvouched, &mut refused))] };
    let user_template =
        Template { pieces: vec![Piece::Branch(read_roots(style, trim, &user, &files, unvouched, &mut refused))] };
    let mut names = BTreeSet::new();
    slots::slot_names(&system_template, &mut names);
    slots::slot_names(&user_template, &mut names);
    let samples: Vec<&Sample> = packets
        .samples()
        .iter()
        .filter(|p| config.agents.with_id(&p.agent_id).is_some_and(|a| a.name == agent.name))
        .filter(|p| gate.packet_digest(&p.sha256, &p.exact_input_hash).is_ok())
        .collect();
    let free = (system_template.matcher(trim)?, user_template.matcher(trim)?);
    let observed = observed(&free, &samples, config);
    let contracts = Contracts::new(agent, &names, &observed, config, &setting(agent, config))?;
    let shape_of = |name: &str| contracts.pattern(name);
    let system_shaped = system_template.shaped_matcher(trim, &shape_of)?;
    let user_shaped = user_template.shaped_matcher(trim, &shape_of)?;
    Ok(Templates {
        system: Role { shaped: system_shaped, free: free.0, names: system.join(" or ") },
        user: Role { shaped: user_shaped, free: free.1, names: user.join(" or ") },
        contracts,
        vouched: samples.iter().map(|p| (p.model.clone(), p.max_tokens)).collect(),
        versions,
        refused,
        models: agent.models.clone(),
    })
}

/// The values the vouched packets fill each slot with (every time a loop fills it).
fn observed(free: &(Matcher, Matcher), samples: &[&Sample], config: &Invocation) -> BTreeMap<String, Vec<String>> {
    let mut observed: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for sample in samples {
        let user = user_rendering(&free.1, &sample.user, config);
        for found in [free.0.matches(&sample.system).ok().flatten(), user.ok().flatten()].into_iter().flatten() {
            for (name, value) in found.slots {
                observed.entry(name).or_default().push(value);
            }
        }
    }
    observed
}

/// How `user` renders the user templates: as sent, or (a Google text-JSON packet's
/// user message) less the suite's suffix.
fn user_rendering(
    matcher: &Matcher,
    user: &str,
    config: &Invocation,
) -> Result<Option<Rendering>, crate::template::Unsplit> {
    if let Some(found) = matcher.matches(user)? {
        return Ok(Some(found));
    }
    match less_google_suffix(user, config) {
        Some(without) => matcher.matches(without),
        None => Ok(None),
    }
}

/// A Google text-JSON packet's user message ends with the suite's suffix: the user
/// message less it, when it ends with it (the templates render the message without).
fn less_google_suffix<'a>(user: &'a str, config: &crate::Config) -> Option<&'a str> {
    let suffix = config.google_suffix.as_str();
    user.strip_suffix(suffix).filter(|_| !suffix.is_empty())
}

/// The settings table an agent is declared in, as messages name it.
fn setting(agent: &Profile, config: &Invocation) -> String {
    if config.agents.several() {
        format!("agents.{}", agent.name)
    } else {
        "contract".into()
    }
}

/// The root templates read, each labelled by its name; a root that cannot be read (not
/// in `files`: `missing` says why) is left out, with why in `refused`: it stops no other.
fn read_roots(
    style: Style,
    trim: Trim,
    roots: &[String],
    files: &BTreeMap<String, String>,
    missing: impl Fn(&str) -> String,
    refused: &mut Vec<String>,
) -> Vec<(String, Template)> {
    let mut bodies = Vec::new();
    for root in roots {
        let Some(text) = files.get(root) else {
            refused.push(missing(root));
            continue;
        };
        // Too large to match alone is refused alone.
        match read(style, root, text, files).and_then(|t| t.matcher(trim).map(|_| t)) {
            Ok(template) => bodies.push((root.clone(), template)),
            Err(why) => refused.push(format!("the template {root}: {why}")),
        }
    }
    bodies
}

/// `test --attest`: every root template the suite's calls may render, read as `trace
/// --gate` reads them, so that no gate is signed over a template conformance cannot
/// follow; the error names each one and why.
pub fn templates_followed(config: &Invocation) -> crate::Result<()> {
    let mut refused = Vec::new();
    for agent in config.agents.all() {
        if let Ok(roots) = roots(agent, config) {
            refused.extend(roots_refused(config, agent, roots));
        }
    }
    if refused.is_empty() {
        return Ok(());
    }
    Err(crate::Error::Config {
        file: config.file_name(),
        message: format!(
            "the gate would vouch for templates that template conformance cannot follow: {} (docs/gating-any-agent.md, \
             template styles)",
            refused.join("; ")
        ),
    })
}

/// The root templates of one agent that its reader refuses, and the slots it declares
/// that none of them has, each with why.
fn roots_refused(
    config: &Invocation,
    agent: &Profile,
    (style, trim, system, user): (Style, Trim, Vec<String>, Vec<String>),
) -> Vec<String> {
    let files: BTreeMap<String, String> = config
        .walk_prompt_templates()
        .into_iter()
        .filter_map(|(name, bytes)| Some((name, String::from_utf8(bytes).ok()?)))
        .collect();
    let mut refused = Vec::new();
    let missing = |root: &str| format!("{root} is no UTF-8 template under paths.prompts");
    let read = read_roots(style, trim, &[system, user].concat(), &files, missing, &mut refused);
    let templates: Vec<&Template> = read.iter().map(|(_, t)| t).collect();
    refused.extend(slots::undeclared(agent, &templates, &setting(agent, config)));
    refused
}

/// The template `root` (whose text is `text`) in `style`, read among `files`, or why
/// it cannot be followed.
fn read(style: Style, root: &str, text: &str, files: &BTreeMap<String, String>) -> Result<Template, String> {
    let strip = |why: String| why.strip_prefix(&format!("{root}: ")).map(str::to_owned).unwrap_or(why);
    match style {
        Style::Jinja => jinja::read(root, files).map_err(strip),
        Style::Format => format::read(text),
        Style::Mustache => mustache::read(root, files).map_err(strip),
    }
}

/// The style, what the app does to a rendering, and the templates a call's system
/// prompt and user message render: the block builder's two minijinja roots (its
/// compiler trims each rendering's end), or what a custom profile declares.
fn roots(agent: &Profile, config: &Invocation) -> Result<(Style, Trim, Vec<String>, Vec<String>), String> {
    if agent.is_block_builder() {
        return Ok((Style::Jinja, Trim::TrimEnd, vec![SYSTEM_TEMPLATE.to_owned()], vec![USER_TEMPLATE.to_owned()]));
    }
    let setting = format!("{}.templates", setting(agent, config));
    match &agent.templates {
        Some(t) => Ok((t.style, t.rendering, t.system.clone(), t.user.clone())),
        None => Err(format!("agent {:?} declares no templates ([{setting}])", agent.name)),
    }
}

/// The verdict on `call` once held to the gate.
pub(crate) fn verdict(
    verdict: Verdict,
    evidence: &Evidence,
    packets: &Packets,
    vouching: &Vouching,
    config: &Invocation,
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
        Verdict::Unreviewed { reason } => match conforms(evidence, vouching, config) {
            Ok(verdict) => verdict,
            Err(why) => Verdict::Unreviewed { reason: format!("{reason}; {why}") },
        },
        other => other,
    }
}

/// The call as a rendering of one agent's vouched templates, or why it is none of any.
fn conforms(evidence: &Evidence, vouching: &Vouching, config: &Invocation) -> Result<Verdict, String> {
    if let Some(why) = vouching.no_templates() {
        return Err(format!("no template conformance: {why}"));
    }
    let (system, user) = request_texts(evidence)?;
    let mut why_not = Vec::new();
    for templates in vouching.templates.iter().flatten() {
        match conforms_to(templates, (&system, &user), vouching, config) {
            Ok(verdict @ Verdict::NotJudgeable { .. }) => return Ok(verdict),
            Ok(verdict) => return settings_vouched(templates, evidence, config).map(|()| verdict),
            Err(why) => why_not.push(why),
        }
    }
    Err(why_not.join("; nor "))
}

/// How a text renders one role's templates with each slot in its shape, else why not
/// (naming the slot outside its shape when only its shape stops it); `Ok(Err(_))`: it
/// was not decided within the per-call bound.
fn rendering(
    role: &Role,
    text: &str,
    what: &str,
    contracts: &Contracts,
    refused: &str,
) -> Result<Result<Rendering, String>, String> {
    match role.shaped.matches(text) {
        Ok(Some(found)) => return Ok(Ok(found)),
        Err(unsplit) => return Ok(Err(format!("the {what} was not matched: {unsplit}"))),
        Ok(None) => {}
    }
    let free = role.free.matches(text).ok().flatten();
    let template = |found: &Rendering| found.branches.first().cloned().unwrap_or_default();
    let outside = free.as_ref().and_then(|found| {
        found.slots.iter().find_map(|(name, value)| {
            let why = contracts.outside_shape(name, value)?;
            Some(format!(
                "the {what} renders the vouched {}, but the value of {{{{ {name} }}}} in {} is outside its shape: {why}",
                role.names,
                template(found)
            ))
        })
    });
    Err(outside.unwrap_or_else(|| match what {
        "system prompt" => format!("the system prompt is no rendering of the vouched {}{refused}", role.names),
        _ => format!(
            "the user message is no rendering of the vouched {} (its literal text differs, or a branch it takes \
             is not vouched){refused}",
            role.names
        ),
    }))
}

/// The call's system and user texts as a rendering of one agent's `templates`; a
/// `NotJudgeable` verdict when they were not decided within the per-call bound.
fn conforms_to(
    templates: &Templates,
    (system, user): (&str, &str),
    vouching: &Vouching,
    config: &Invocation,
) -> Result<Verdict, String> {
    // Roots left out are named, so that a call they would have matched says why.
    let refused = match templates.refused.as_slice() {
        [] => String::new(),
        list => format!(" (not matched against: {})", list.join("; ")),
    };
    let contracts = &templates.contracts;
    let system_found = match rendering(&templates.system, system, "system prompt", contracts, &refused)? {
        Ok(found) => found,
        Err(reason) => return Ok(Verdict::NotJudgeable { reason }),
    };
    let without_suffix = less_google_suffix(user, config);
    let user_found = match rendering(&templates.user, user, "user message", contracts, &refused) {
        Err(why) => match without_suffix.map(|u| rendering(&templates.user, u, "user message", contracts, &refused)) {
            Some(Ok(found)) => found,
            _ => return Err(why),
        },
        Ok(found) => found,
    };
    let user_found = match user_found {
        Ok(found) => found,
        Err(reason) => return Ok(Verdict::NotJudgeable { reason }),
    };
    let mut templates_used = Vec::new();
    for found in [&system_found, &user_found] {
        for name in found.branches.iter().filter(|b| templates.versions.contains_key(*b)) {
            if !templates_used.iter().any(|u: &Used| &u.name == name) {
                let version = templates.versions.get(name).cloned().unwrap_or_default();
                templates_used.push(Used { name: name.clone(), version });
            }
        }
    }
    let mut slots: Vec<Filled> = Vec::new();
    for found in [&system_found, &user_found] {
        // The root's branch comes first: the template the slot values fill.
        let template = found.branches.first().map_or("", String::as_str);
        for (name, value) in &found.slots {
            let breach = contracts.breach(name, value).map(|why| format!("breaks its contract: {why}"));
            let breach = breach.or_else(|| {
                slots::forbidden(value, config, vouching.forbidden_keys.as_ref())
                    .map(|why| format!("holds forbidden material ({why})"))
            });
            if let Some(why) = breach {
                return Err(format!(
                    "it renders the vouched templates, but the value of {{{{ {name} }}}} in {template} {why}"
                ));
            }
            // Reported once a slot (the first time a loop fills it).
            if !slots.iter().any(|f| f.template == template && &f.name == name) {
                slots.push(Filled {
                    template: template.to_owned(),
                    name: name.clone(),
                    length: value.chars().count(),
                    sha256: digest::sha256(value.as_bytes()),
                });
            }
        }
    }
    Ok(Verdict::Conforms { templates: templates_used, slots })
}

/// A conforming call's model and max tokens are what the gate vouched: the agent's
/// `models` (else its vouched packets' models), and max tokens within the model's
/// output limit (else the vouched packets' largest for that model). The texts alone
/// never vouch for a call sent to another model or with another budget.
fn settings_vouched(templates: &Templates, evidence: &Evidence, config: &Invocation) -> Result<(), String> {
    let Some(model) = evidence.model.iter().find_map(|said| said.value.as_str()) else {
        return Err("it renders the vouched templates, but the call records no model (gen_ai.request.model) to hold \
                    to the vouched ones"
            .to_owned());
    };
    let allowed: Vec<&str> = match &templates.models {
        Some(models) => models.iter().map(String::as_str).collect(),
        None => templates.vouched.iter().map(|(m, _)| m.as_str()).collect(),
    };
    if !allowed.contains(&model) {
        let mut shown = allowed.clone();
        shown.sort_unstable();
        shown.dedup();
        return Err(format!(
            "it renders the vouched templates, but its model {model:?} is none the gate vouched ({shown:?})"
        ));
    }
    let Some(tokens) = evidence.max_tokens.iter().find_map(|said| said.value.as_f64()) else { return Ok(()) };
    let limit = config
        .providers
        .values()
        .find_map(|p| p.max_output_tokens.get(model).copied())
        .or_else(|| templates.vouched.iter().filter(|(m, _)| m == model).map(|(_, t)| *t).max());
    match limit {
        Some(limit) if tokens > limit as f64 => Err(format!(
            "it renders the vouched templates, but its max tokens {tokens} pass the {limit} vouched for model {model:?}"
        )),
        _ => Ok(()),
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
