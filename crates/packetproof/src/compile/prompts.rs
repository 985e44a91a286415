//! Prompt rendering with minijinja in strict mode: an undefined
//! variable is an error, never an empty string. `user.md.j2` includes one partial
//! per resolved branch value (`branches/<field>/<value>.md.j2`), so a branch that
//! did not resolve is never loaded, never rendered and never listed.
//!
//! The loader records every template it hands to the engine, with its bytes:
//! `promptPaths` is that record (render order) and `promptVersions` hashes those
//! exact bytes, so the list cannot drift from what was actually rendered.

use crate::Invocation;
use crate::{canonical, digest, Error, Result};
use minijinja::Environment;
use serde_json::{json, Map, Value};
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex};

pub use crate::profile::{SYSTEM_TEMPLATE, USER_TEMPLATE};

pub(crate) struct Rendered {
    pub(crate) system: String,
    pub(crate) user: String,
    pub(crate) paths: Vec<String>,
    pub(crate) versions: Map<String, Value>,
}

type Loaded = Arc<Mutex<Vec<(String, Vec<u8>)>>>;

/// `agent`'s entry templates ([`crate::profile::Profile::entries`]) rendered over `input`
/// and `branch`.
pub(crate) fn render(
    config: &Invocation,
    agent: &crate::profile::Profile,
    input: &Value,
    branch: &Value,
    schema_name: &str,
) -> Result<Rendered> {
    let root = config.settings().paths.prompts.clone();
    let loaded: Loaded = Arc::default();
    let read = config.read_prompts().cloned();
    let env = environment(root.clone(), read, loaded.clone());
    let root = root.unwrap_or_else(|| PathBuf::from(format!("<built-in {}>", crate::builtin::PROMPTS_PATH)));
    let context = context(input, branch, schema_name);
    let render = |name: &str| -> Result<String> {
        let text =
            env.get_template(name).and_then(|t| t.render(&context)).map_err(|e| template_error(&root, name, &e))?;
        // Messages end where their text ends: the Google suffix is appended verbatim.
        Ok(text.trim_end().to_owned())
    };
    let (system, user) = agent.entries();
    let system = render(system)?;
    let user = render(user)?;
    let loaded = std::mem::take(&mut *loaded.lock().unwrap_or_else(|e| e.into_inner()));
    let versions = loaded.iter().map(|(name, bytes)| (name.clone(), json!(digest::sha256(bytes)))).collect();
    Ok(Rendered { system, user, paths: loaded.into_iter().map(|(name, _)| name).collect(), versions })
}

/// `root`: the prompts folder; `None`: the built-in templates. `read`: the
/// templates as already read (`Invocation::reading_once`).
fn environment(
    root: Option<PathBuf>,
    read: Option<crate::invocation::Templates>,
    loaded: Loaded,
) -> Environment<'static> {
    // The settings the jinja reader reads templates by (`trace --gate` matches calls with it).
    let mut env = crate::template::jinja::environment();
    env.set_loader(move |name| {
        if let Some((_, bytes)) = read.iter().flat_map(|all| all.iter()).find(|(n, _)| n == name) {
            if let Ok(text) = String::from_utf8(bytes.clone()) {
                loaded.lock().unwrap_or_else(|e| e.into_inner()).push((name.to_owned(), bytes.clone()));
                return Ok(Some(text));
            }
        }
        let Some(root) = &root else {
            let text = crate::builtin::prompt(name);
            if let Some(text) = text {
                loaded.lock().unwrap_or_else(|e| e.into_inner()).push((name.to_owned(), text.as_bytes().to_vec()));
            }
            return Ok(text.map(str::to_owned));
        };
        let Some(path) = template_path(root, name) else {
            return Err(minijinja::Error::new(
                minijinja::ErrorKind::InvalidOperation,
                format!("template name {name:?} leaves {}", root.display()),
            ));
        };
        let bytes = match crate::fsutil::read_optional(&path, crate::fsutil::DEFAULT_MAX_BYTES) {
            Ok(Some(bytes)) => bytes,
            Ok(None) => return Ok(None),
            Err(e) => {
                return Err(minijinja::Error::new(
                    minijinja::ErrorKind::InvalidOperation,
                    format!("{}: {e}", path.display()),
                ))
            }
        };
        let text = String::from_utf8(bytes.clone()).map_err(|_| {
            minijinja::Error::new(minijinja::ErrorKind::InvalidOperation, format!("{}: not UTF-8", path.display()))
        })?;
        loaded.lock().unwrap_or_else(|e| e.into_inner()).push((name.to_owned(), bytes));
        Ok(Some(text))
    });
    env
}

/// Template names are paths relative to the prompts folder, without `..`.
fn template_path(root: &Path, name: &str) -> Option<PathBuf> {
    let relative = Path::new(name);
    relative.components().all(|c| matches!(c, Component::Normal(_))).then(|| root.join(relative))
}

fn template_error(root: &Path, name: &str, error: &minijinja::Error) -> Error {
    let mut message = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(inner) = source {
        message.push_str(&format!(": {inner}"));
        source = inner.source();
    }
    Error::Config {
        file: root.join(name).display().to_string(),
        message: format!("prompt template failed to render: {message}"),
    }
}

/// What templates see: the branch, a few scalars, and JSON blocks rendered here
/// (2-space, authored key order) so templates never re-serialize values. Optional
/// parts are present only when their branch resolved; under strict mode a partial
/// that touched an absent part would fail loudly.
fn context(input: &Value, branch: &Value, schema_name: &str) -> minijinja::Value {
    let pretty = |pointer: &str| input.pointer(pointer).map(|v| canonical::to_pretty(v).trim_end().to_owned());
    let text = |pointer: &str| input.pointer(pointer).cloned().unwrap_or(Value::Null);
    let mut blocks = Map::new();
    for (name, pointer) in [
        ("blueprint", "/sourceExample/blueprint"),
        ("strategy", "/target/strategy"),
        ("contract", "/target/blockContract"),
        ("variables", "/target/strategyVariables"),
        ("sequence", "/target/sequence"),
        ("predecessor", "/target/predecessor"),
        ("successor", "/target/successor"),
        ("theme", "/target/themeSummary"),
        ("mappings", "/variableMappings"),
    ] {
        if let Some(block) = pretty(pointer) {
            blocks.insert(name.into(), json!(block));
        }
    }
    let items: Vec<Value> = super::branch::array(input, "/evidence/items")
        .iter()
        .map(|item| json!({"kind": item["kind"], "id": item["id"], "value": String::from_utf8_lossy(&canonical::to_vec(&item["value"]))}))
        .collect();
    let patterns: Vec<Value> = super::branch::array(input, "/sourceExample/blueprint/assetExamples")
        .iter()
        .map(|p| json!(String::from_utf8_lossy(&canonical::to_vec(p))))
        .collect();
    let mut view = json!({
        "schemaName": schema_name,
        "branch": branch,
        "source": {"name": text("/sourceExample/name"), "exampleId": text("/sourceExample/exampleId"), "checksum": text("/sourceExample/checksum")},
        "target": {"blockId": text("/target/blockId"), "blockName": text("/target/blockName"), "blockType": text("/target/blockType")},
        "evidence": {"requestedMode": text("/evidence/requestedMode"), "items": items},
        "patterns": patterns,
        "json": blocks,
    });
    if let Some(instruction) = input.get("operatorInstruction") {
        view["operatorInstruction"] = instruction.clone();
    }
    minijinja::Value::from_serialize(&view)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config_with_prompts(files: &[(&str, &str)]) -> (tempfile::TempDir, crate::Invocation) {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in files {
            let path = dir.path().join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        let mut config = crate::Config::load(Path::new(crate::PROJECT_ROOT), None).unwrap();
        config.paths.prompts = Some(dir.path().to_path_buf());
        (dir, config.into())
    }

    #[test]
    fn undefined_variables_are_errors() {
        let (_dir, config) = config_with_prompts(&[(SYSTEM_TEMPLATE, "role"), (USER_TEMPLATE, "{{ branch.nope }}")]);
        let err = render(&config, config.settings().agents.block_builder(), &json!({}), &json!({}), "s")
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("user.md.j2") && err.contains("undefined"), "{err}");
    }

    #[test]
    fn only_rendered_templates_are_listed() {
        let (_dir, config) = config_with_prompts(&[
            (SYSTEM_TEMPLATE, "role\n"),
            (USER_TEMPLATE, "{% if branch.x %}{% include 'a.md.j2' %}{% else %}{% include 'b.md.j2' %}{% endif %}\n"),
            ("a.md.j2", "A\n"),
            ("b.md.j2", "B\n"),
        ]);
        let rendered =
            render(&config, config.settings().agents.block_builder(), &json!({}), &json!({"x": false}), "s").unwrap();
        assert_eq!(rendered.user, "B");
        assert_eq!(rendered.paths, [SYSTEM_TEMPLATE, USER_TEMPLATE, "b.md.j2"]);
        assert_eq!(rendered.versions["b.md.j2"], json!(digest::sha256(b"B\n")));
    }

    #[test]
    fn template_names_cannot_leave_the_prompts_folder() {
        let (_dir, config) =
            config_with_prompts(&[(SYSTEM_TEMPLATE, "x"), (USER_TEMPLATE, "{% include '../harness.toml' %}")]);
        let err = render(&config, config.settings().agents.block_builder(), &json!({}), &json!({}), "s")
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("leaves"), "{err}");
    }
}
