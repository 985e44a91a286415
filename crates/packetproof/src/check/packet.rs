//! The packet checks that need more than the packet: `packet::regenerates`
//! (the golden packet is what its request compiles to now) and
//! `packet::branch-isolation` (only the resolved branch rendered).

use super::needles::Needles;
use super::Checked;
use crate::branch::{EvidenceMode, Neighbours};
use crate::corpus::Case;
use crate::diff::{field_changes, DIFFED_TEXTS};
use crate::packet::PROMPT_TEXTS;
use crate::report::{walk, Finding, Findings, JsonPath, Location, Trail};
use crate::Invocation;
use crate::{compile, fsutil, PacketCheck, Result};
use serde_json::{Map, Value};
use std::sync::{Arc, Mutex};

/// A golden file that differs from what the tools produce now: both documents
/// whole, for grouping the same change across cases (the findings say what changed).
#[derive(Debug)]
pub(crate) struct Mismatch {
    pub(crate) golden_value: Value,
    pub(crate) produced_value: Value,
}

impl Mismatch {
    fn between(golden: &Value, produced: &Value) -> Mismatch {
        Mismatch { golden_value: golden.clone(), produced_value: produced.clone() }
    }
}

/// The `cause` of a `packet::regenerates` finding whose producer, the suite's
/// `[exporter]`, failed: the check could not run, so `verify` exits 2 after its
/// report, as `bless` does.
pub const EXPORTER_FAILED: &str = "exporter-failed";

/// Recompile the request and compare with the packet byte for byte (as pretty JSON).
pub(crate) fn regenerates(case: &Case, packet: &Value, config: &Invocation) -> Result<Checked> {
    regenerates_from(case, packet, &crate::corpus::produce(case, config), config)
}

/// [`regenerates`], given what `case`'s request makes now (`corpus::produce`).
pub(crate) fn regenerates_from(
    case: &Case,
    packet: &Value,
    produced: &Result<Value>,
    config: &Invocation,
) -> Result<Checked> {
    let produced = match produced {
        Ok(produced) => produced,
        Err(e @ crate::Error::Exporter { .. }) => {
            let message = format!("could not run: {e}");
            let finding = Finding::new(PacketCheck::Regenerates, Location::root(), message).with_cause(EXPORTER_FAILED);
            return Ok(vec![finding].into());
        }
        Err(e) => {
            return Ok(vec![Finding::new(
                PacketCheck::Regenerates,
                Location::root(),
                format!("the request no longer compiles: {e}"),
            )]
            .into())
        }
    };
    if crate::numbers::same(produced, packet) {
        return agent_view_regenerates(case, packet, config);
    }
    let changed: Vec<String> = field_changes(packet, produced, &DIFFED_TEXTS).into_iter().map(|c| c.path).collect();
    let texts: Vec<&str> = DIFFED_TEXTS.into_iter().filter(|k| !same_member(packet, produced, k)).collect();
    let changed = texts.iter().map(|t| format!("$.{t}")).chain(changed).collect::<Vec<_>>().join(", ");
    let message = format!(
        "the golden packet differs from the recompiled request (changed: {changed}); {}",
        next_step(case, produced, config)
    );
    Ok(Checked {
        findings: vec![Finding::new(PacketCheck::Regenerates, Location::root(), message)],
        mismatch: Some(Mismatch::between(packet, produced)),
    })
}

/// `packet::regenerates` for a packet and a request read by a command (no
/// fixture): the packet is what packetproof's compiler makes of the request.
pub(crate) fn compiles_to(request: &Value, file: &str, packet: &Value, config: &Invocation) -> Checked {
    let message = match compile::compile(request, config, file) {
        Ok(produced) if crate::numbers::same(&produced, packet) => return Checked::default(),
        Ok(_) => "the packet differs from what the request compiles to now".to_owned(),
        Err(e) => format!("the request no longer compiles: {e}"),
    };
    vec![Finding::new(PacketCheck::Regenerates, Location::root(), message)].into()
}

/// Whether `key` holds the same value (numbers by value) in both, or is absent from both.
fn same_member(a: &Value, b: &Value, key: &str) -> bool {
    match (a.get(key), b.get(key)) {
        (Some(x), Some(y)) => crate::numbers::same(x, y),
        (x, y) => x.is_none() && y.is_none(),
    }
}

/// What to do: re-bless, unless `bless` would refuse what the request makes now (a model
/// outside the agent's list, a budget past its limit): then that, first.
fn next_step(case: &Case, produced: &Value, config: &Invocation) -> String {
    let refused = produced.as_object().map(|p| crate::packet::contract(p, config)).unwrap_or_default();
    match refused.first() {
        Some(finding) if !case.has_own_packet() => format!(
            "bless would refuse what the request makes now ([{}] {}: {}): change the request or the settings, \
             then re-bless",
            finding.check, finding.path, finding.message
        ),
        _ => rebless_hint(case),
    }
}

fn rebless_hint(case: &Case) -> String {
    if case.has_own_packet() {
        return "this negative case checks a packet of its own (expect.toml [packet] derives it from its base case), which is never blessed".into();
    }
    format!("re-bless with {}", crate::corpus::bless_hint(&case.golden_dir, &case.name))
}

/// The golden agent-request.json (when the case has golden files) is the agent view of the packet.
fn agent_view_regenerates(case: &Case, packet: &Value, config: &Invocation) -> Result<Checked> {
    let file = case.golden_agent_request();
    if case.has_own_packet() {
        return Ok(Checked::default());
    }
    if !file.is_file() {
        // Blessing writes both files; a packet without its agent view is a deleted file.
        let message =
            format!("{} is missing (bless writes it beside the packet); {}", file.display(), rebless_hint(case));
        return Ok(
            vec![Finding::new(PacketCheck::Regenerates, Location::named(file.display().to_string()), message)].into()
        );
    }
    let stored = fsutil::read_json(&file, config.settings().limits.max_file_bytes)?;
    let Some(map) = packet.as_object() else { return Ok(Checked::default()) };
    let produced = crate::provider::agent_request(map);
    if crate::numbers::same(&stored, &produced) {
        return Ok(Checked::default());
    }
    let message = format!("{} is not the agent view of the golden packet; {}", file.display(), rebless_hint(case));
    Ok(Checked {
        findings: vec![Finding::new(PacketCheck::Regenerates, Location::named(file.display().to_string()), message)],
        mismatch: Some(Mismatch::between(&stored, &produced)),
    })
}

/// Only the resolved branch renders: the branch recorded is the one the request
/// resolves to, renderInput holds only that branch's parts, and no text from the
/// regions the branch excluded occurs in the prompts or renderInput. The lines of
/// this suite's unrendered templates are looked for only in a packet its
/// promptVersions show those templates rendered: another exporter's prompts are
/// judged by the request's excluded material alone.
pub(crate) fn branch_isolation(
    packet: &Map<String, Value>,
    request: &Value,
    config: &Invocation,
    file: &str,
) -> Vec<Finding> {
    Isolation::of(request, config, file).check(packet, config)
}

/// What `packet::branch-isolation` derives from a request: its compiled packet and
/// its excluded texts. Derived once, it checks any number of packets (the mutation
/// self-test checks dozens against one request).
pub(crate) struct Isolation {
    expected: std::result::Result<Value, String>,
    excluded: Vec<(String, String)>,
    excluded_needles: Needles,
    /// The unrendered template lines of the last promptPaths asked about (a
    /// damaged copy of a packet mostly names the templates the packet does).
    unrendered: Mutex<Option<(Value, Arc<Unrendered>)>>,
}

/// The literal lines of the templates a packet did not render, to look for.
struct Unrendered {
    lines: Vec<(String, String)>,
    needles: Needles,
}

impl Isolation {
    pub(crate) fn of(request: &Value, config: &Invocation, file: &str) -> Isolation {
        Isolation::compiled(request, compile::compile(request, config, file).map_err(|e| e.to_string()), config)
    }

    /// [`Isolation::of`], given what `compile::compile` makes of `request`.
    pub(crate) fn compiled(
        request: &Value,
        expected: std::result::Result<Value, String>,
        config: &Invocation,
    ) -> Isolation {
        let mut excluded = compile::excluded_text(request, config);
        // An asset example's generator prompt is under the asset-prompt policy, as in
        // `packet::forbidden-material`: with `warn` that check notes it, and it is not a
        // finding here either.
        if config.asset_example_prompts() == crate::config::Policy::Warn {
            let keys = &config.settings().packet.asset_prompt_keys;
            excluded.retain(|(origin, _)| !keys.iter().any(|key| origin.ends_with(key.as_str())));
        }
        let excluded_needles = Needles::new(excluded.iter().map(|(_, needle)| needle.as_str()));
        Isolation { expected, excluded, excluded_needles, unrendered: Mutex::new(None) }
    }

    /// [`unrendered_lines`] of `packet`, from the last call when it lists the same templates.
    fn unrendered(&self, packet: &Map<String, Value>, config: &Invocation) -> Arc<Unrendered> {
        let paths = packet.get("promptPaths").cloned().unwrap_or(Value::Null);
        let mut last = self.unrendered.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, unrendered)) = last.as_ref().filter(|(seen, _)| *seen == paths) {
            return Arc::clone(unrendered);
        }
        let lines = unrendered_lines(packet, config);
        let needles = Needles::new(lines.iter().map(|(_, line)| line.as_str()));
        let unrendered = Arc::new(Unrendered { lines, needles });
        *last = Some((paths, Arc::clone(&unrendered)));
        unrendered
    }

    pub(crate) fn check(&self, packet: &Map<String, Value>, config: &Invocation) -> Vec<Finding> {
        let mut out = Findings::new(PacketCheck::BranchIsolation);
        let mut fail = |path: JsonPath, message: String| out.fail(path, message);
        // Renamed values read as the built-in ones they name, on both sides ([contract.renamed]).
        let agent = config.settings().agent(packet);
        let recorded = packet.get("resolvedBranch").unwrap_or(&Value::Null);
        let branch = agent.builtin_branch(recorded);
        match &self.expected {
            Ok(expected) => {
                let spelled = expected.get("resolvedBranch").unwrap_or(&Value::Null);
                let derived = agent.builtin_branch(spelled);
                for (field, value) in derived.as_object().into_iter().flatten() {
                    // The packet's own agent: packet::contract holds resolvedBranch.agentId to it.
                    if field == "agentId" || branch.get(field) == Some(value) {
                        continue;
                    }
                    fail(
                        JsonPath::field("resolvedBranch").key(field),
                        format!(
                            "the request resolves to {}, the packet records {}",
                            spelled.get(field).unwrap_or(value),
                            recorded.get(field).map_or("nothing".into(), Value::to_string)
                        ),
                    );
                }
                same_evidence(packet, expected, &mut fail);
            }
            Err(e) => {
                fail(JsonPath::root(), format!("the request does not compile, so its branch cannot be derived: {e}"))
            }
        }
        let input = packet.get("renderInput").unwrap_or(&Value::Null);
        for (path, present, expected) in render_input_parts(input, &branch) {
            if present != expected {
                let verb = if expected {
                    "missing although the branch resolves it"
                } else {
                    "present although the branch excludes it"
                };
                fail(path, verb.into());
            }
        }
        out.extend(excluded_text_findings(packet, &self.excluded, &self.excluded_needles));
        if crate::check::renders_from_input::applies(packet, config).is_ok() {
            out.extend(unrendered_partial_findings(packet, &self.unrendered(packet, config)));
        }
        out.into_vec()
    }
}

/// renderInput holds exactly the evidence items the request resolves to (by kind
/// and id, whatever their text: a short or numeric item escapes text matching)
/// and records the mode that was requested.
fn same_evidence(packet: &Map<String, Value>, expected: &Value, fail: &mut impl FnMut(JsonPath, String)) {
    let (input, expected) = (packet.get("renderInput"), expected.get("renderInput"));
    let identities = |input: Option<&Value>| -> Vec<String> {
        let items = input.and_then(|i| i.pointer("/evidence/items")).and_then(Value::as_array);
        let id = |item: &Value, key: &str| item.get(key).and_then(Value::as_str).unwrap_or("?").to_owned();
        items.into_iter().flatten().map(|item| format!("@{}[{}]", id(item, "kind"), id(item, "id"))).collect()
    };
    let (found, wanted) = (identities(input), identities(expected));
    for item in found.iter().filter(|item| !wanted.contains(item)) {
        fail(
            JsonPath::field("renderInput").key("evidence").key("items"),
            format!("holds {item}, which the resolved branch does not select"),
        );
    }
    for item in wanted.iter().filter(|item| !found.contains(item)) {
        fail(
            JsonPath::field("renderInput").key("evidence").key("items"),
            format!("lacks {item}, which the resolved branch selects"),
        );
    }
    let requested = |input: Option<&Value>| input.and_then(|i| i.pointer("/evidence/requestedMode")).cloned();
    if requested(input) != requested(expected) {
        fail(
            JsonPath::field("renderInput").key("evidence").key("requestedMode"),
            format!("expected the requested mode {:?}", requested(expected)),
        );
    }
}

/// (path, present in renderInput, required by the branch) for each branch-dependent part.
fn render_input_parts(input: &Value, branch: &Value) -> Vec<(JsonPath, bool, bool)> {
    let text = |key: &str| branch.get(key).and_then(Value::as_str).unwrap_or("");
    let flag = |key: &str| branch.get(key).and_then(Value::as_bool).unwrap_or(false);
    // An unknown value is packet::contract's finding; here it requires no neighbour.
    let neighbours = Neighbours::parse(text("neighbours")).ok();
    let evidence = EvidenceMode::parse(text("evidenceMode")).ok();
    let items = input.pointer("/evidence/items").and_then(Value::as_array).map_or(0, Vec::len);
    // An optional part written as null is absent, as the reference and packet::branch-consistency read it.
    let given = |pointer: &str| input.pointer(pointer).is_some_and(|v| !v.is_null());
    vec![
        (
            JsonPath::field("renderInput").key("target").key("predecessor"),
            given("/target/predecessor"),
            neighbours.is_some_and(Neighbours::has_predecessor),
        ),
        (
            JsonPath::field("renderInput").key("target").key("successor"),
            given("/target/successor"),
            neighbours.is_some_and(Neighbours::has_successor),
        ),
        (
            JsonPath::field("renderInput").key("target").key("themeSummary"),
            given("/target/themeSummary"),
            flag("hasTargetTheme"),
        ),
        (
            JsonPath::field("renderInput").key("operatorInstruction"),
            // As the reference and packet::branch-consistency read it: a blank
            // instruction is no instruction.
            given("/operatorInstruction") && input["operatorInstruction"].as_str().is_none_or(|s| !s.trim().is_empty()),
            flag("operatorInstructionPresent"),
        ),
        (
            JsonPath::field("renderInput").key("evidence").key("items"),
            items > 0,
            evidence != Some(EvidenceMode::NoEvidence),
        ),
        (
            JsonPath::field("renderInput").key("evidence").key("mode"),
            input.pointer("/evidence/mode").and_then(Value::as_str) == Some(text("evidenceMode")),
            true,
        ),
    ]
}

/// No line of a prompt template that was not rendered (the partials of the branch
/// values that did not resolve) occurs in the prompt texts.
fn unrendered_partial_findings(packet: &Map<String, Value>, unrendered: &Unrendered) -> Vec<Finding> {
    let found: Vec<Vec<bool>> = PROMPT_TEXTS
        .iter()
        .map(|key| match packet.get(*key).and_then(Value::as_str) {
            Some(text) => unrendered.needles.found_in(text),
            None => vec![false; unrendered.lines.len()],
        })
        .collect();
    let mut out = Vec::new();
    for (i, (name, line)) in unrendered.lines.iter().enumerate() {
        for (key, found) in PROMPT_TEXTS.iter().zip(&found) {
            if found[i] {
                out.push(Finding::new(
                    PacketCheck::BranchIsolation,
                    JsonPath::field(key),
                    format!("contains text of {name}, a template of a branch that did not resolve: {line:?}"),
                ));
            }
        }
    }
    out
}

/// (template, line) for the literal lines of the templates a packet did not
/// render. Lines with template syntax, short lines and lines that a rendered
/// template also has are left out: they prove nothing.
pub(crate) fn unrendered_lines(packet: &Map<String, Value>, config: &Invocation) -> Vec<(String, String)> {
    let rendered: Vec<&str> =
        packet.get("promptPaths").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
    let templates: Vec<(String, String)> = config
        .prompt_templates()
        .into_iter()
        .filter_map(|(name, bytes)| Some((name, String::from_utf8(bytes).ok()?)))
        .collect();
    let rendered_text: String =
        templates.iter().filter(|(name, _)| rendered.contains(&name.as_str())).map(|(_, text)| text.as_str()).collect();
    let mut out = Vec::new();
    for (name, text) in templates.iter().filter(|(name, _)| !rendered.contains(&name.as_str())) {
        for line in text.lines().map(str::trim) {
            let literal = line.len() >= config.settings().taint.min_length
                && !["{{", "{%", "{#"].iter().any(|syntax| line.contains(syntax))
                && !rendered_text.contains(line);
            if literal {
                out.push((name.clone(), line.to_owned()));
            }
        }
    }
    out
}

/// No string of an excluded request region occurs in any prompt text or renderInput string.
fn excluded_text_findings(
    packet: &Map<String, Value>,
    excluded: &[(String, String)],
    needles: &Needles,
) -> Vec<Finding> {
    let mut out = Vec::new();
    let mut look = |text: &str, path: &dyn Fn() -> JsonPath| {
        for ((origin, needle), found) in excluded.iter().zip(needles.found_in(text)) {
            if found {
                out.push(Finding::new(
                    PacketCheck::BranchIsolation,
                    path(),
                    format!("contains excluded text from request {origin}: {needle:?}"),
                ));
            }
        }
    };
    for key in PROMPT_TEXTS {
        if let Some(text) = packet.get(key).and_then(Value::as_str) {
            look(text, &|| JsonPath::field(key));
        }
    }
    if let Some(input) = packet.get("renderInput") {
        let mut trail = Trail::new(JsonPath::field("renderInput"));
        walk(input, &mut trail, &mut |value, _, trail| {
            if let Some(text) = value.as_str() {
                look(text, &|| trail.path());
            }
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// The project's settings and its corpus case `name`.
    fn project_case(name: &str) -> (crate::Invocation, Case) {
        let config = crate::Invocation::from(crate::Config::load(Path::new(crate::PROJECT_ROOT), None).unwrap());
        let case = crate::corpus::cases(&config).unwrap().into_iter().find(|c| c.name == name).unwrap();
        (config, case)
    }

    /// An unselected item with no long text escapes text matching; its identity does not.
    #[test]
    fn branch_isolation_names_an_unselected_item_whatever_its_text() {
        let (config, case) = project_case("google-staged-both-selected");
        let short = serde_json::json!({"kind": "rating", "id": "r9", "accessible": true, "value": {"stars": 1}});
        let mut request = case.request.clone();
        request["evidence"]["availableItems"].as_array_mut().unwrap().push(short.clone());
        let mut packet = compile::compile(&request, &config, "test").unwrap();
        assert!(branch_isolation(packet.as_object().unwrap(), &request, &config, "test").is_empty());
        packet["renderInput"]["evidence"]["items"].as_array_mut().unwrap().push(short);
        let findings = branch_isolation(packet.as_object().unwrap(), &request, &config, "test");
        assert_eq!(findings.len(), 1, "{findings:?}");
        assert!(
            findings[0].message.contains("holds @rating[r9], which the resolved branch does not select"),
            "{}",
            findings[0]
        );
    }

    /// A golden packet that writes `1.0` for `1` (an exporter's doubles, a formatter)
    /// holds the same values: it regenerates, as bless calls it unchanged.
    #[test]
    fn a_golden_packet_regenerates_whatever_its_numbers_spelling() {
        let (config, mut case) = project_case("anthropic-staged-alone-default");
        let produced = compile::compile(&case.request, &config, "test").unwrap();
        // A golden folder of the test's own, blessed from the packet compiled now (the
        // repository's is the conformance gate's to check).
        let golden = tempfile::tempdir().unwrap();
        case.golden_dir = golden.path().to_owned();
        let agent_view = crate::provider::agent_request(produced.as_object().unwrap());
        std::fs::write(case.golden_agent_request(), crate::canonical::to_pretty(&agent_view)).unwrap();
        let spelled = crate::canonical::to_pretty(&produced)
            .replace("\"attempt\": 1,", "\"attempt\": 1.0,")
            .replace("\"packetVersion\": 1,", "\"packetVersion\": 1e0,");
        let spelled = crate::canonical::parse(spelled.as_bytes()).unwrap();
        assert_ne!(spelled, produced, "the spelling must reach the parsed value");
        let checked = regenerates(&case, &spelled, &config).unwrap();
        assert!(checked.findings.is_empty(), "{:?}", checked.findings);
        let request = case.request.clone();
        assert!(compiles_to(&request, "test", &spelled, &config).findings.is_empty());
    }

    /// As the reference reads it: an empty instruction is no instruction, so a packet
    /// that records it absent holds; a non-blank one under "absent" does not.
    #[test]
    fn a_blank_operator_instruction_is_no_instruction() {
        let (config, case) = project_case("google-staged-both-selected");
        let mut request = case.request.clone();
        request.as_object_mut().unwrap().remove("operatorInstruction");
        let mut packet = compile::compile(&request, &config, "test").unwrap();
        assert_eq!(packet["resolvedBranch"]["operatorInstructionPresent"], false);
        let isolation = |packet: &Value| branch_isolation(packet.as_object().unwrap(), &request, &config, "test");
        packet["renderInput"]["operatorInstruction"] = "".into();
        assert!(isolation(&packet).is_empty(), "{:?}", isolation(&packet));
        packet["renderInput"]["operatorInstruction"] = "  ".into();
        assert!(isolation(&packet).is_empty(), "{:?}", isolation(&packet));
        // Written as null, it is absent (validate and bless read it alike).
        packet["renderInput"]["operatorInstruction"] = Value::Null;
        assert!(isolation(&packet).is_empty(), "{:?}", isolation(&packet));
        packet["renderInput"]["operatorInstruction"] = "Use the brand voice.".into();
        let findings = isolation(&packet);
        assert!(findings.iter().any(|f| f.message == "present although the branch excludes it"), "{findings:?}");
    }
}
