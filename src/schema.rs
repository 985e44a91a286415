//! The runtime output schema: a readable source under
//! `references/runtime/` (a main file plus shared definition files joined by
//! local `$ref`s) and the snapshot `references/block-screen-output-schema.json`
//! generated from it mechanically. Providers do not all resolve `$ref`, so the
//! snapshot has every reference inlined; authored key order is kept and every
//! `$comment` (authoring notes) is dropped.

use crate::report::{child, index, Finding};
use crate::{canonical, fsutil, Config, Error, Result};
use serde_json::{Map, Value};
use std::path::{Component, Path, PathBuf};

/// The main source file, inside `paths.runtime_schema_source`.
pub const SOURCE_MAIN: &str = "block-screen-output.json";
/// The check name reported when the snapshot differs from its source.
pub const CHECK: &str = crate::Check::SchemaSnapshotParity.name();

/// The snapshot bytes the source produces: 2-space JSON and a final newline.
pub fn generate(config: &Config) -> Result<String> {
    let main = config.paths.runtime_schema_source.join(SOURCE_MAIN);
    let mut inliner = Inliner { stack: Vec::new() };
    let value = inliner.inline(&load(&main, config)?, &main, "$", config)?;
    Ok(canonical::to_pretty(&value))
}

/// Regenerate and compare bytes with the snapshot on disk. Every difference is a
/// finding (naming the first differing line); an unreadable source is an error.
pub fn check(config: &Config) -> Result<Vec<Finding>> {
    let expected = generate(config)?;
    let path = &config.paths.schema_snapshot;
    let file = path.display().to_string();
    let stale = |message: String| Ok(vec![Finding::new(CHECK, file.clone(), message)]);
    let actual = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return stale("snapshot is missing; run `packetproof schema --write`".into())
        }
        Err(e) => return Err(Error::io(path, e)),
    };
    if actual == expected.as_bytes() {
        return Ok(Vec::new());
    }
    let actual = String::from_utf8_lossy(&actual);
    let line = first_difference(&actual, &expected);
    stale(format!(
        "snapshot differs from what {} generates (first difference at line {line}); \
         it is never edited by hand: change the source and run `packetproof schema --write`",
        config.paths.runtime_schema_source.display()
    ))
}

/// Write the snapshot atomically; returns whether its bytes changed.
pub fn write(config: &Config) -> Result<bool> {
    let text = generate(config)?;
    let path = &config.paths.schema_snapshot;
    if std::fs::read(path).is_ok_and(|old| old == text.as_bytes()) {
        return Ok(false);
    }
    fsutil::write_atomic(path, text.as_bytes())?;
    Ok(true)
}

/// The snapshot as a JSON value (`{name, description, schema}`): the runtime
/// `outputSchema` of non-Google packets.
pub fn snapshot(config: &Config) -> Result<Value> {
    fsutil::read_json(&config.paths.schema_snapshot, config.limits.max_file_bytes)
}

fn first_difference(a: &str, b: &str) -> usize {
    let mut lines = a.lines().zip(b.lines());
    lines.position(|(x, y)| x != y).unwrap_or_else(|| a.lines().count().min(b.lines().count())) + 1
}

fn load(path: &Path, config: &Config) -> Result<Value> {
    fsutil::read_json(path, config.limits.max_file_bytes)
}

/// Inlines local `$ref`s depth first; `stack` holds the references being
/// expanded so that a cycle is an error instead of endless recursion.
struct Inliner {
    stack: Vec<String>,
}

impl Inliner {
    fn inline(&mut self, value: &Value, file: &Path, path: &str, config: &Config) -> Result<Value> {
        match value {
            Value::Object(map) if map.contains_key("$ref") => self.expand(map, file, path, config),
            Value::Object(map) => {
                let mut out = Map::new();
                for (key, item) in map.iter().filter(|(k, _)| k.as_str() != "$comment") {
                    out.insert(key.clone(), self.inline(item, file, &child(path, key), config)?);
                }
                Ok(Value::Object(out))
            }
            Value::Array(items) => {
                let inlined =
                    items.iter().enumerate().map(|(i, item)| self.inline(item, file, &index(path, i), config));
                Ok(Value::Array(inlined.collect::<Result<_>>()?))
            }
            other => Ok(other.clone()),
        }
    }

    fn expand(&mut self, map: &Map<String, Value>, file: &Path, path: &str, config: &Config) -> Result<Value> {
        let at = child(path, "$ref");
        let shape = |expected: &str| Error::shape(file.display(), at.clone(), expected);
        if map.keys().any(|k| k != "$ref" && k != "$comment") {
            return Err(shape("`$ref` alone in its object (siblings would be silently dropped)"));
        }
        let reference = map["$ref"].as_str().ok_or_else(|| shape("a string"))?;
        let (target_file, pointer) = resolve(file, reference).ok_or_else(|| {
            shape("a local reference `#/<pointer>` or `<relative file inside the source folder>#/<pointer>`")
        })?;
        let key = format!("{}#{pointer}", target_file.display());
        if self.stack.contains(&key) {
            return Err(shape(&format!("no reference cycle; {reference:?} refers back to itself")));
        }
        let document = load(&target_file, config)?;
        let target =
            document.pointer(pointer).ok_or_else(|| shape(&format!("{reference:?} to name an existing definition")))?;
        self.stack.push(key);
        let inlined = self.inline(target, &target_file, &format!("{}#{pointer}", target_file.display()), config);
        self.stack.pop();
        inlined
    }
}

/// Split a reference into the file it names (relative to `file`) and a JSON
/// pointer. Remote URLs, absolute paths and `..` are refused: the source must be
/// self-contained so that generation never touches the network or other folders.
fn resolve<'a>(file: &Path, reference: &'a str) -> Option<(PathBuf, &'a str)> {
    let (name, pointer) = reference.split_once('#')?;
    if !(pointer.is_empty() || pointer.starts_with('/')) || name.contains(':') {
        return None;
    }
    if name.is_empty() {
        return Some((file.to_path_buf(), pointer));
    }
    let relative = Path::new(name);
    if !relative.components().all(|c| matches!(c, Component::Normal(_))) {
        return None;
    }
    Some((file.parent()?.join(relative), pointer))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project() -> Config {
        Config::load(Path::new(env!("CARGO_MANIFEST_DIR")), None).unwrap()
    }

    fn validator(config: &Config) -> jsonschema::Validator {
        let snapshot = snapshot(config).unwrap();
        jsonschema::validator_for(&snapshot["schema"]).unwrap()
    }

    #[test]
    fn committed_snapshot_matches_its_source() {
        assert_eq!(check(&project()).unwrap(), Vec::new());
    }

    #[test]
    fn snapshot_has_no_refs_or_comments_left() {
        let text = generate(&project()).unwrap();
        assert!(!text.contains("\"$ref\"") && !text.contains("\"$comment\""));
        let value: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(value.as_object().unwrap().keys().collect::<Vec<_>>(), ["name", "description", "schema"]);
    }

    #[test]
    fn accepts_the_interop_agent_output() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/interop/agent-output.json");
        let Ok(bytes) = std::fs::read(&path) else {
            eprintln!("skipped: {} is absent", path.display());
            return;
        };
        let output = canonical::parse(&bytes).unwrap();
        let validator = validator(&project());
        let errors: Vec<String> =
            validator.iter_errors(&output).map(|e| format!("{} at {}", e, e.instance_path)).collect();
        assert!(errors.is_empty(), "{errors:#?}");
    }

    /// A minimal valid output, then one break per case; each must be rejected.
    #[test]
    fn rejects_outputs_that_break_the_contract() {
        let valid = serde_json::json!({"result": {"onboardingStrategySequence": [{
            "id": "b", "name": "B", "blockType": "motivation", "firstScreenId": "s1", "description": "d",
            "instructions": [{"level": "mustHave", "text": "x"}, {"level": "should", "text": "y"}],
            "blockContract": {"inputVariables": [], "outputAssignment": []},
            "dataUsage": {"items": []},
            "screens": [{"id": "s1", "screenType": "HeroContent", "content": {"copy": {"title": "t"}},
                "aiMeta": {"blockRole": "r", "dataMapping": [], "motivationSpec": {"class": "neutral", "valence": "growth"},
                    "assetIntents": [{"slotRole": "hero", "designFunction": "trust", "visualJob": "v", "supportsContentPath": "content.copy.title"}]}}]
        }]}});
        let validator = validator(&project());
        assert!(validator.is_valid(&valid));
        type Break = fn(&mut Value);
        let breaks: [(&str, Break); 8] = [
            ("no result envelope", |v| *v = v["result"].clone()),
            ("extra key next to result", |v| v["extra"] = Value::Null),
            ("no screens", |v| {
                drop(v["result"]["onboardingStrategySequence"][0].as_object_mut().unwrap().remove("screens"))
            }),
            ("unknown block key", |v| {
                v["result"]["onboardingStrategySequence"][0]["previewScreens"] = serde_json::json!([])
            }),
            ("two blocks", |v| {
                let block = v["result"]["onboardingStrategySequence"][0].clone();
                v["result"]["onboardingStrategySequence"].as_array_mut().unwrap().push(block);
            }),
            ("prompt inside an asset intent", |v| {
                v["result"]["onboardingStrategySequence"][0]["screens"][0]["aiMeta"]["assetIntents"][0]["imagePrompt"] =
                    "x".into()
            }),
            ("unknown screen type", |v| {
                v["result"]["onboardingStrategySequence"][0]["screens"][0]["screenType"] = "Video".into()
            }),
            ("one instruction", |v| {
                drop(v["result"]["onboardingStrategySequence"][0]["instructions"].as_array_mut().unwrap().pop())
            }),
        ];
        for (name, break_it) in breaks {
            let mut broken = valid.clone();
            break_it(&mut broken);
            assert!(!validator.is_valid(&broken), "accepted an output with {name}");
        }
    }

    #[test]
    fn refuses_remote_and_escaping_refs() {
        let file = Path::new("/x/runtime/main.json");
        assert!(resolve(file, "https://example.com/s.json#/a").is_none());
        assert!(resolve(file, "../outside.json#/a").is_none());
        assert!(resolve(file, "/etc/s.json#/a").is_none());
        assert!(resolve(file, "defs/a.json#a").is_none());
        assert_eq!(resolve(file, "#/a").unwrap(), (file.to_path_buf(), "/a"));
        assert_eq!(resolve(file, "defs/a.json#/b").unwrap(), (PathBuf::from("/x/runtime/defs/a.json"), "/b"));
    }
}
