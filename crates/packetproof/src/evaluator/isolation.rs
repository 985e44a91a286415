//! Stage `asset-isolation`: the answer carries semantic asset intents
//! only, never render snapshots, generated media or provider-ready prompts. The reference
//! rejects the keys `aiAssets` and `previewScreens` and any key containing `generatedUrl`,
//! `storagePath` or `providerPrompt` (any case). packetproof also rejects, on purpose (the
//! contract's asset boundary, harness.toml `[forbidden]`), every configured forbidden key
//! (`imagePrompt`, `signedUrl`, `expectedAnswer`, …) and string values that are generated
//! media URLs, storage URIs or database paths.

use super::{Failures, ASSET_ISOLATION};
use crate::packet;
use crate::report::{walk, Trail};
use crate::Invocation;
use serde_json::Value;

const EXACT: [&str; 2] = ["aiAssets", "previewScreens"];
const CONTAINED: [&str; 3] = ["generatedurl", "storagepath", "providerprompt"];

fn reference_forbids(key: &str) -> bool {
    let lower = key.to_ascii_lowercase();
    EXACT.contains(&key) || CONTAINED.iter().any(|part| lower.contains(part))
}

pub(crate) fn check(output: &Value, config: &Invocation, out: &mut Failures) {
    let mut flagged = Vec::new();
    let mut visit = |key: &str, trail: &Trail| {
        if reference_forbids(key) && !config.settings().forbidden.is_forbidden_key(key) {
            flagged.push(format!("{}: forbidden key (render-only, generated or storage material)", trail.render()));
        }
    };
    // The reference's key rules, root included.
    if let Value::Object(map) = output {
        for key in map.keys() {
            let mut trail = Trail::new(crate::report::JsonPath::root());
            trail.push_key(key);
            visit(key, &trail);
        }
    }
    walk(output, &mut Trail::new(crate::report::JsonPath::root()), &mut |v, _, trail| {
        if let Value::Object(map) = v {
            for key in map.keys() {
                let mut trail = trail.clone();
                trail.push_key(key);
                visit(key, &trail);
            }
        }
    });
    // packetproof's wider rules: configured keys (exact, any case) and value patterns.
    let mut findings = Vec::new();
    packet::scan(
        output,
        crate::report::JsonPath::root(),
        &config.settings().forbidden,
        crate::PacketCheck::ForbiddenMaterial,
        &mut findings,
    );
    flagged.extend(
        findings
            .into_iter()
            .map(|f| format!("{}: {} (output must carry semantic asset intents only)", f.path, f.message)),
    );
    for message in flagged {
        out.fail(ASSET_ISOLATION, message);
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::{judge_stages, packet, valid_output};
    use serde_json::json;

    #[test]
    fn reference_keys_fail_in_any_case_and_at_any_depth() {
        for key in ["aiAssets", "heroGENERATEDurl", "x_storagePath", "providerPromptText"] {
            let mut out = valid_output();
            out["result"]["onboardingStrategySequence"][0]["screens"][0]["aiMeta"][key] = json!("x");
            let stages = judge_stages(&out, &packet());
            assert_eq!(stages.first(), Some(&"asset-isolation"), "{key}: {stages:?}");
        }
    }

    #[test]
    fn configured_keys_and_media_urls_fail_too() {
        let mut out = valid_output();
        out["result"]["onboardingStrategySequence"][0]["screens"][0]["aiMeta"]["assetIntents"][0]["imagePrompt"] =
            json!("a cat");
        assert_eq!(judge_stages(&out, &packet()).first(), Some(&"asset-isolation"));
        let mut out = valid_output();
        out["result"]["onboardingStrategySequence"][0]["screens"][0]["content"]["copy"]["subtitle"] =
            json!("https://cdn.example.com/hero.png");
        assert_eq!(judge_stages(&out, &packet()), ["asset-isolation"]);
    }
}
