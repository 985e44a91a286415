//! Templates where apps keep them: a string at a key path inside a YAML, JSON or TOML
//! file of the app (`config/default.yaml#agent.templates.system_template`), read as the
//! app's own loader reads it (YAML's folded and literal blocks, TOML's multi-line
//! strings, JSON's escapes), so the template is the text the app renders.

use serde_json::Value;

/// A template named `FILE#KEY.PATH`: the file and the key path (`None`: a plain file
/// under `paths.prompts`).
pub fn reference(name: &str) -> Option<(&str, &str)> {
    let (file, path) = name.split_once('#')?;
    (!file.is_empty() && !path.is_empty()).then_some((file, path))
}

/// The string at `key_path` (keys joined by `.`, a number indexing a list) in `bytes`,
/// the file `file` read by its extension (`.yaml`/`.yml`, `.json`, `.toml`); an error
/// names the file, the path and what was found instead.
pub fn text_at(file: &str, bytes: &[u8], key_path: &str) -> Result<String, String> {
    let document = parse(file, bytes)?;
    let mut at = &document;
    let mut walked = Vec::new();
    for key in key_path.split('.') {
        walked.push(key);
        let next = match at {
            Value::Object(map) => map.get(key),
            Value::Array(items) => key.parse::<usize>().ok().and_then(|i| items.get(i)),
            _ => None,
        };
        at = next.ok_or_else(|| format!("{file}: no {} (at {})", walked.join("."), kind(at)))?;
    }
    match at {
        Value::String(text) => Ok(text.clone()),
        other => Err(format!("{file}: {key_path} is {}, expected a string (the template's text)", kind(other))),
    }
}

fn parse(file: &str, bytes: &[u8]) -> Result<Value, String> {
    let text = std::str::from_utf8(bytes).map_err(|e| format!("{file}: not UTF-8 ({e})"))?;
    let extension = file.rsplit_once('.').map(|(_, ext)| ext.to_ascii_lowercase()).unwrap_or_default();
    match extension.as_str() {
        "yaml" | "yml" => serde_yaml_ng::from_str(text).map_err(|e| format!("{file}: not YAML: {e}")),
        "json" => crate::canonical::parse(bytes).map_err(|e| format!("{file}: {e}")),
        "toml" => toml::from_str(text).map_err(|e| format!("{file}: not TOML: {e}")),
        _ => Err(format!("{file}: a template at a key path is read from a .yaml, .yml, .json or .toml file")),
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Object(_) => "a table",
        Value::Array(_) => "a list",
        Value::String(_) => "a string",
        Value::Number(_) => "a number",
        Value::Bool(_) => "a boolean",
        Value::Null => "null",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_template_is_read_at_its_key_path_as_the_app_reads_it() {
        let yaml = b"agent:\n  templates:\n    system_template: |\n      You are a helpful assistant.\n      Work in {{cwd}}.\n    steps: [\"a\", \"b\"]\n";
        let text = text_at("config/default.yaml", yaml, "agent.templates.system_template").unwrap();
        assert_eq!(text, "You are a helpful assistant.\nWork in {{cwd}}.\n");
        assert_eq!(text_at("c.yaml", yaml, "agent.templates.steps.1").unwrap(), "b");
        let toml = b"[prompts]\nuser = \"\"\"\nHello {name}\n\"\"\"\n";
        assert_eq!(text_at("p.toml", toml, "prompts.user").unwrap(), "Hello {name}\n");
        let json = br#"{"prompts": {"system": "Line one\nLine \"two\""}}"#;
        assert_eq!(text_at("p.json", json, "prompts.system").unwrap(), "Line one\nLine \"two\"");
        assert_eq!(reference("config/default.yaml#agent.system"), Some(("config/default.yaml", "agent.system")));
        assert_eq!(reference("chooser/system.j2"), None);
    }

    #[test]
    fn a_missing_key_or_a_value_that_is_no_string_is_named() {
        let yaml = b"agent:\n  templates:\n    count: 3\n";
        let missing = text_at("c.yaml", yaml, "agent.prompts.system").unwrap_err();
        assert_eq!(missing, "c.yaml: no agent.prompts (at a table)");
        let number = text_at("c.yaml", yaml, "agent.templates.count").unwrap_err();
        assert!(number.contains("is a number, expected a string"), "{number}");
        assert!(text_at("c.ini", b"x", "a").unwrap_err().contains(".yaml, .yml, .json or .toml"));
        assert!(text_at("c.yaml", b"a: [", "a").unwrap_err().starts_with("c.yaml: not YAML"));
    }
}
