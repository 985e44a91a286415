//! `packet::renders-from-input`: a packet whose promptVersions are this project's
//! templates must be those templates rendered over its own renderInput and
//! resolvedBranch, byte for byte. No compile request is needed, so a run
//! directory's packet (or any packet) is proven to be the prompts of its own
//! evidence, not only to carry consistent hashes. A packet made from other
//! templates cannot be re-rendered: the check does not apply, and says which templates differ.

use crate::report::{Finding, JsonPath, PacketCheck};
use crate::Invocation;
use crate::{compile, digest};
use serde_json::{Map, Value};
use std::path::{Component, Path};

const CHECK: PacketCheck = PacketCheck::RendersFromInput;

/// Whether the packet can be re-rendered here: `Err(why not)` when its promptVersions
/// are not the sha256 of this suite's templates (another exporter's prompts).
pub(crate) fn applies(packet: &Map<String, Value>, config: &Invocation) -> Result<(), String> {
    let differing = differing_templates(packet, config);
    if differing.is_empty() {
        return Ok(());
    }
    Err(format!("the packet's promptVersions are not this suite's templates ({})", differing.join("; ")))
}

/// The findings on a packet that [`applies`] to.
pub(crate) fn check(packet: &Map<String, Value>, config: &Invocation) -> Vec<Finding> {
    let (input, branch) = inputs(packet);
    let agent = config.settings().agent(packet);
    verdict(packet, &compile::render_prompts(config, agent, input, branch).map_err(|e| e.to_string()))
}

/// [`check`] on damaged copies of one packet: the prompts are rendered again only
/// when a copy's renderInput or resolvedBranch is not the last one's (most damage
/// leaves both as they were, and rendering is most of the check).
#[derive(Default)]
pub(crate) struct Renders {
    last: Option<(Value, Value, std::result::Result<compile::prompts::Rendered, String>)>,
}

impl Renders {
    pub(crate) fn check(&mut self, packet: &Map<String, Value>, config: &Invocation) -> Vec<Finding> {
        let (input, branch) = inputs(packet);
        // In key order too: the templates read objects in order.
        let same = crate::digest::incremental::identical;
        let seen = self.last.as_ref().is_some_and(|(i, b, _)| same(i, input) && same(b, branch));
        if !seen {
            let rendered = compile::render_prompts(config, config.settings().agent(packet), input, branch)
                .map_err(|e| e.to_string());
            self.last = Some((input.clone(), branch.clone(), rendered));
        }
        let (_, _, rendered) = self.last.as_ref().expect("rendered above");
        verdict(packet, rendered)
    }
}

fn inputs(packet: &Map<String, Value>) -> (&Value, &Value) {
    (packet.get("renderInput").unwrap_or(&Value::Null), packet.get("resolvedBranch").unwrap_or(&Value::Null))
}

/// The findings on `packet`, given what its templates render over its own inputs.
fn verdict(
    packet: &Map<String, Value>,
    rendered: &std::result::Result<compile::prompts::Rendered, String>,
) -> Vec<Finding> {
    let mut verdict = Vec::new();
    let rendered = match rendered {
        Ok(rendered) => rendered,
        Err(e) => {
            verdict.push(Finding::new(
                CHECK,
                JsonPath::field("renderInput"),
                format!("the templates do not render over the packet's own renderInput and resolvedBranch: {e}"),
            ));
            return verdict;
        }
    };
    let listed = paths(packet);
    if rendered.paths != listed {
        verdict.push(Finding::new(
            CHECK,
            JsonPath::field("promptPaths"),
            format!(
                "rendering over the packet's renderInput and resolvedBranch uses the templates {:?}, the packet lists {listed:?}",
                rendered.paths
            ),
        ));
    }
    for (key, text) in [("systemPrompt", &rendered.system), ("userMessage", &rendered.user)] {
        let stored = packet.get(key).and_then(Value::as_str).unwrap_or_default();
        if stored != text {
            verdict.push(Finding::new(CHECK, JsonPath::field(key), first_difference(stored, text)));
        }
    }
    verdict
}

fn paths(packet: &Map<String, Value>) -> Vec<String> {
    let listed = packet.get("promptPaths").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    listed.iter().map(|p| p.as_str().unwrap_or_default().to_owned()).collect()
}

/// Each template the packet names whose version is not the sha256 of the
/// project's file of that name (or that the project does not have).
pub(crate) fn differing_templates(packet: &Map<String, Value>, config: &Invocation) -> Vec<String> {
    let versions = packet.get("promptVersions").and_then(Value::as_object);
    let mut out = Vec::new();
    let listed = paths(packet);
    if listed.is_empty() {
        out.push("promptPaths lists none".to_owned());
    }
    for name in &listed {
        let stored = versions.and_then(|v| v.get(name)).and_then(Value::as_str).unwrap_or("(no version)");
        let relative = Path::new(name);
        let inside = relative.components().all(|c| matches!(c, Component::Normal(_)));
        let bytes = inside.then(|| config.prompt_template(name)).flatten();
        match bytes.map(|b| digest::sha256(&b)) {
            Some(ours) if ours == stored => {}
            Some(ours) => out.push(format!("{name}: packet {stored}, project {ours}")),
            None => out.push(format!("{name}: not a template of this project")),
        }
    }
    out
}

/// Where two texts part: the line number and both lines.
fn first_difference(stored: &str, rendered: &str) -> String {
    let (mut a, mut b) = (stored.split('\n'), rendered.split('\n'));
    for line in 1.. {
        match (a.next(), b.next()) {
            (Some(x), Some(y)) if x == y => continue,
            (x, y) => {
                return format!(
                    "is not the templates rendered over the packet's own renderInput and resolvedBranch: \
                     line {line} is {} in the packet, {} rendered",
                    shown(x),
                    shown(y)
                )
            }
        }
    }
    unreachable!("the texts differ, so some line does")
}

fn shown(line: Option<&str>) -> String {
    match line {
        None => "missing".into(),
        Some(text) if text.chars().count() > 120 => format!("{:?}…", text.chars().take(120).collect::<String>()),
        Some(text) => format!("{text:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> crate::Invocation {
        crate::Invocation::from(crate::Config::load(Path::new(crate::PROJECT_ROOT), None).unwrap())
    }

    /// A corpus case's packet as the templates compile it now (never the golden
    /// file, which only the conformance gate may depend on being current).
    fn golden(config: &Invocation) -> Map<String, Value> {
        let case = crate::corpus::cases(config).unwrap().into_iter().find(|c| c.name == "google-staged-both-selected");
        match crate::compile::compile(&case.unwrap().request, config, "test").unwrap() {
            Value::Object(map) => map,
            _ => unreachable!(),
        }
    }

    #[test]
    fn a_golden_packet_renders_from_its_own_input() {
        let config = config();
        let packet = golden(&config);
        assert_eq!(applies(&packet, &config), Ok(()));
        let verdict = check(&packet, &config);
        assert!(verdict.is_empty(), "{verdict:?}");
    }

    #[test]
    fn evidence_edited_in_render_input_no_longer_renders_the_prompt() {
        let config = config();
        let mut packet = golden(&config);
        let item = packet["renderInput"]["evidence"]["items"][0]["value"].clone();
        packet["renderInput"]["evidence"]["items"][0]["value"] = serde_json::json!({"edited": item});
        let verdict = check(&packet, &config);
        assert_eq!(verdict.len(), 1, "{verdict:?}");
        assert_eq!(verdict[0].path, JsonPath::field("userMessage").into());
        assert!(verdict[0].message.contains("is not the templates rendered over"), "{verdict:?}");
    }

    /// Damaged copies judged through one memo get `check`'s verdicts, whatever was
    /// damaged, and a key moved in renderInput is rendered again.
    #[test]
    fn a_memo_of_the_last_render_changes_no_verdict() {
        let config = config();
        let golden = golden(&config);
        let mut damaged = vec![golden.clone()];
        let mut edit = |f: &dyn Fn(&mut Map<String, Value>)| {
            let mut packet = golden.clone();
            f(&mut packet);
            damaged.push(packet);
        };
        edit(&|p| p["userMessage"] = Value::from("edited"));
        edit(&|p| p["resolvedBranch"]["hasTargetTheme"] = Value::Bool(false));
        edit(&|p| p["renderInput"]["evidence"]["items"][0]["value"] = Value::from("edited"));
        edit(&|p| {
            let input = p["renderInput"].as_object_mut().unwrap();
            let key = input.keys().next().unwrap().clone();
            let value = input.shift_remove(&key).unwrap();
            input.insert(key, value);
        });
        let mut renders = Renders::default();
        for packet in damaged.iter().chain(damaged.iter().rev()) {
            assert_eq!(renders.check(packet, &config), check(packet, &config));
        }
    }

    #[test]
    fn a_branch_that_renders_other_templates_is_named() {
        let config = config();
        let mut packet = golden(&config);
        packet["resolvedBranch"]["hasTargetTheme"] = Value::Bool(false);
        let verdict = check(&packet, &config);
        let paths: Vec<String> = verdict.iter().map(|f| f.path.to_string()).collect();
        assert_eq!(paths, ["$.promptPaths", "$.userMessage"], "{verdict:?}");
    }

    #[test]
    fn foreign_templates_are_named_not_rendered() {
        let config = config();
        let mut packet = golden(&config);
        packet["promptVersions"]["user.md.j2"] = Value::from("local:user.md.j2");
        packet["promptPaths"].as_array_mut().unwrap().push(Value::from("../outside.md"));
        let note = applies(&packet, &config).unwrap_err();
        assert!(note.contains("user.md.j2: packet local:user.md.j2, project sha256:"), "{note}");
        assert!(note.contains("../outside.md: not a template of this project"), "{note}");
    }
}
