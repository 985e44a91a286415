//! Forbidden material in renderInput that a key list cannot catch (part of
//! `packet::forbidden-material`):
//! - a render-only screen snapshot under any key, recognised by its shape (an
//!   object with `id`, `screenType` and a `content` object): the blueprint's own
//!   `screens` are the one place screens may be;
//! - asset examples carrying generator prompts (`packet.asset_prompt_keys`): the
//!   contract allows asset examples only as compact pattern references. The
//!   reference exporter's own sample carries them, so the policy
//!   (`packet.asset_example_prompts`) makes them findings or notes.

use crate::config::Policy;
use crate::report::{Finding, JsonPath, PacketCheck};
use crate::Invocation;
use serde_json::Value;

/// Where screens belong: `$.renderInput.sourceExample.blueprint.screens[i]`.
const SCREENS_HOME: [&str; 3] = ["sourceExample", "blueprint", "screens"];

/// The failures in `input` (renderInput).
pub(crate) fn findings(input: &Value, config: &Invocation) -> Vec<Finding> {
    let mut out = Vec::new();
    let mut path = Vec::new();
    scan(input, &mut path, &mut out);
    if config.asset_example_prompts() == Policy::Fail {
        out.extend(
            asset_prompts(input, config)
                .into_iter()
                .map(|(at, message)| Finding::new(PacketCheck::ForbiddenMaterial, at, message)),
        );
    }
    out
}

/// The notes for `input` (renderInput): asset-example prompts under the warn policy.
pub(crate) fn warnings(input: &Value, config: &Invocation) -> Vec<String> {
    if config.asset_example_prompts() == Policy::Fail {
        return Vec::new();
    }
    asset_prompts(input, config).into_iter().map(|(at, message)| format!("{at}: {message}")).collect()
}

/// A JSON path step below renderInput.
#[derive(Clone, Copy)]
enum Step<'a> {
    Key(&'a str),
    Index(usize),
}

fn render(path: &[Step]) -> JsonPath {
    path.iter().fold(JsonPath::field("renderInput"), |at, step| match step {
        Step::Key(key) => at.key(key),
        Step::Index(i) => at.index(*i),
    })
}

/// Whether `path` is one of the blueprint's own screens.
fn at_home(path: &[Step]) -> bool {
    path.len() == SCREENS_HOME.len() + 1
        && path.iter().zip(SCREENS_HOME).all(|(step, key)| matches!(step, Step::Key(k) if *k == key))
        && matches!(path[SCREENS_HOME.len()], Step::Index(_))
}

fn is_screen(value: &Value) -> bool {
    let Some(map) = value.as_object() else { return false };
    map.get("id").is_some_and(Value::is_string)
        && map.get("screenType").is_some_and(Value::is_string)
        && map.get("content").is_some_and(Value::is_object)
}

/// Screen snapshots, depth first; a reported snapshot is not searched again for
/// the screens inside it. (Forbidden keys are `packet::scan`'s, from harness.toml.)
fn scan<'a>(value: &'a Value, path: &mut Vec<Step<'a>>, out: &mut Vec<Finding>) {
    let key = match path.last() {
        Some(Step::Key(key)) => format!("under key {key:?}"),
        _ => "in an array".to_owned(),
    };
    match value {
        Value::Array(items) if !items.is_empty() && items.iter().all(is_screen) && !is_home_array(path) => {
            out.push(Finding::new(
                PacketCheck::ForbiddenMaterial,
                render(path),
                format!(
                    "a full render-only screen snapshot ({} screen(s) {key}); screens belong only in \
                     renderInput.sourceExample.blueprint.screens",
                    items.len()
                ),
            ));
            return;
        }
        Value::Object(_) if is_screen(value) && !at_home(path) && !path.is_empty() => {
            out.push(Finding::new(
                PacketCheck::ForbiddenMaterial,
                render(path),
                format!("a render-only screen snapshot {key}; screens belong only in renderInput.sourceExample.blueprint.screens"),
            ));
            return;
        }
        _ => {}
    }
    match value {
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                path.push(Step::Index(i));
                scan(item, path, out);
                path.pop();
            }
        }
        Value::Object(map) => {
            for (key, item) in map {
                path.push(Step::Key(key));
                scan(item, path, out);
                path.pop();
            }
        }
        _ => {}
    }
}

fn is_home_array(path: &[Step]) -> bool {
    path.len() == SCREENS_HOME.len()
        && path.iter().zip(SCREENS_HOME).all(|(step, key)| matches!(step, Step::Key(k) if *k == key))
}

/// (path, message) for each generator prompt in an asset example, wherever an
/// `assetExamples` array sits in renderInput.
fn asset_prompts(input: &Value, config: &Invocation) -> Vec<(JsonPath, String)> {
    let mut out = Vec::new();
    let mut trail = crate::report::Trail::new(JsonPath::field("renderInput"));
    let policy = config.asset_example_prompts();
    crate::report::walk(input, &mut trail, &mut |value, key, trail| {
        if key != Some("assetExamples") {
            return;
        }
        let base = trail.path();
        for (i, example) in value.as_array().into_iter().flatten().enumerate() {
            let Some(example) = example.as_object() else { continue };
            for prompt in example.keys().filter(|k| config.settings().packet.asset_prompt_keys.contains(k)) {
                out.push((
                    base.clone().index(i).key(prompt),
                    format!(
                        "asset example carries a generator prompt ({prompt:?}); asset examples may appear only as \
                         compact pattern references (harness.toml packet.asset_example_prompts = {policy:?})",
                        policy = policy.name()
                    ),
                ));
            }
        }
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The project's settings under the command's asset-prompt `policy`.
    fn config(policy: Policy) -> crate::Invocation {
        let config = crate::Config::load(std::path::Path::new(crate::PROJECT_ROOT), None).unwrap();
        let policy = crate::CommandPolicy { asset_example_prompts: Some(policy), ..Default::default() };
        crate::Invocation::new(config, policy)
    }

    fn screen(id: &str) -> Value {
        json!({"id": id, "name": "n", "screenType": "HeroContent", "content": {"copy": {"title": "t"}}, "position": {"x": 0, "y": 0}})
    }

    fn input() -> Value {
        json!({"sourceExample": {"blueprint": {"screens": [screen("a"), screen("b")], "assetExamples": [{"screenId": "a", "slotKey": "hero"}]}}})
    }

    fn found(input: &Value, policy: Policy) -> Vec<String> {
        findings(input, &config(policy)).into_iter().map(|f| format!("{}: {}", f.path, f.message)).collect()
    }

    #[test]
    fn the_blueprint_screens_are_allowed() {
        assert_eq!(found(&input(), Policy::Fail), Vec::<String>::new());
    }

    #[test]
    fn a_screen_snapshot_under_any_key_is_recognised_by_shape() {
        let mut value = input();
        value["target"] = json!({"frames": [screen("a"), screen("b")]});
        let found = found(&value, Policy::Fail);
        assert_eq!(found.len(), 1, "{found:#?}");
        assert!(
            found[0].starts_with(
                "$.renderInput.target.frames: a full render-only screen snapshot (2 screen(s) under key \"frames\")"
            ),
            "{found:#?}"
        );
        let mut value = input();
        value["sourceExample"]["blueprint"]["screens"][1]["cached"] = screen("c");
        let found = super::tests::found(&value, Policy::Fail);
        assert_eq!(found.len(), 1, "{found:#?}");
        assert!(
            found[0]
                .starts_with("$.renderInput.sourceExample.blueprint.screens[1].cached: a render-only screen snapshot"),
            "{found:#?}"
        );
    }

    #[test]
    fn poster_urls_reference_images_and_provider_responses_are_forbidden_in_render_input() {
        for key in ["posterUrl", "referenceImages", "providerResponse"] {
            let mut value = input();
            value["sourceExample"]["blueprint"]["screens"][0]["content"][key] = json!("x");
            let packet = json!({"renderInput": value});
            let found: Vec<String> =
                crate::packet::forbidden_material(packet.as_object().unwrap(), &config(Policy::Fail))
                    .into_iter()
                    .map(|f| format!("{}: {}", f.path, f.message))
                    .collect();
            assert_eq!(found.len(), 1, "{key}: {found:#?}");
            assert!(found[0].contains(&format!("forbidden key {key:?}")), "{found:#?}");
        }
    }

    #[test]
    fn asset_example_prompts_follow_the_policy() {
        let mut value = input();
        value["sourceExample"]["blueprint"]["assetExamples"][0]["promptTemplate"] = json!("calm illustration");
        value["sourceExample"]["blueprint"]["assetExamples"][0]["negativePrompt"] = json!("no logos");
        let failed = found(&value, Policy::Fail);
        assert_eq!(failed.len(), 2, "{failed:#?}");
        assert!(failed[0].starts_with("$.renderInput.sourceExample.blueprint.assetExamples[0].promptTemplate: asset example carries a generator prompt"), "{failed:#?}");
        assert!(found(&value, Policy::Warn).is_empty());
        let notes = warnings(&value, &config(Policy::Warn));
        assert_eq!(notes.len(), 2, "{notes:#?}");
        assert!(notes[1].contains("\"negativePrompt\"") && notes[1].contains("= \"warn\""), "{notes:#?}");
        assert!(warnings(&value, &config(Policy::Fail)).is_empty());
    }
}
