//! The app's exporter again, in Rust: the same packet as `app/export_packet.py`,
//! byte for byte, so the suite's tests run where Python is absent (and the two
//! exporters check each other). `cargo test` builds it; the tests name it in
//! harness.toml `[exporter]` in place of the Python one.

use packetproof::{canonical, digest};
use serde_json::{json, Map, Value};
use std::path::{Path, PathBuf};

/// The keys of a request that reach the templates (and the packet's renderInput).
const INPUT_KEYS: [&str; 4] = ["customerName", "question", "previousAnswer", "tone"];

fn main() {
    let request_file = std::env::args().nth(1).expect("usage: rust_exporter REQUEST.json");
    match export(Path::new(&request_file)) {
        Ok(packet) => print!("{}", canonical::to_pretty(&Value::Object(packet))),
        Err(message) => {
            eprintln!("rust_exporter: {message}");
            std::process::exit(2);
        }
    }
}

fn export(request_file: &Path) -> Result<Map<String, Value>, String> {
    let bytes = std::fs::read(request_file).map_err(|e| format!("{}: {e}", request_file.display()))?;
    let request = canonical::parse(&bytes).map_err(|e| format!("{}: {e}", request_file.display()))?;
    let prompts = prompts_folder();
    let values: Map<String, Value> =
        INPUT_KEYS.iter().filter_map(|key| Some(((*key).to_owned(), request.get(*key)?.clone()))).collect();
    let follow_up = values.contains_key("previousAnswer");
    let user_template = if follow_up { "followup.txt" } else { "reply.txt" };
    let paths = ["system.txt", user_template];
    let mut versions = Map::new();
    let mut texts = Vec::new();
    for path in paths {
        let bytes = std::fs::read(prompts.join(path)).map_err(|e| format!("{path}: {e}"))?;
        versions.insert(path.to_owned(), json!(digest::sha256(&bytes)));
        let text = String::from_utf8(bytes).map_err(|e| format!("{path}: {e}"))?;
        texts.push(str_format(&text, &values).map_err(|e| format!("{path}: {e}"))?);
    }
    let field = |key: &str| request.get(key).cloned().ok_or(format!("the request has no {key}"));
    let mut packet = Map::new();
    for (key, value) in [
        ("packetVersion", json!(1)),
        ("agentId", json!("support-reply")),
        ("taskType", json!("support-reply")),
        ("promptMode", json!("chat")),
        ("attempt", json!(1)),
        ("provider", field("provider")?),
        ("model", field("model")?),
        ("maxTokens", field("maxTokens")?),
        ("promptPaths", json!(paths)),
        ("promptVersions", Value::Object(versions)),
        ("systemPrompt", json!(texts[0])),
        ("userMessage", json!(texts[1])),
        ("effectiveUserMessage", json!(texts[1])),
        ("renderInput", Value::Object(values.clone())),
        ("resolvedBranch", json!({"agentId": "support-reply", "tone": field("tone")?, "followUp": follow_up})),
    ] {
        packet.insert(key.to_owned(), value);
    }
    digest::seal(&mut packet);
    Ok(packet)
}

/// The templates beside the suite: `app/prompts` under the working directory (the
/// suite's folder, where packetproof runs an exporter).
fn prompts_folder() -> PathBuf {
    PathBuf::from("app").join("prompts")
}

/// Python's `str.format` for the templates' subset: `{name}` is the value's text,
/// `{{` and `}}` are braces. Anything else in braces is an error, as in Python.
fn str_format(template: &str, values: &Map<String, Value>) -> Result<String, String> {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(i) = rest.find(['{', '}']) {
        out.push_str(&rest[..i]);
        let tail = &rest[i..];
        if tail.starts_with("{{") || tail.starts_with("}}") {
            out.push_str(&tail[..1]);
            rest = &tail[2..];
            continue;
        }
        let end = tail.find('}').filter(|_| tail.starts_with('{')).ok_or("a single '}' in the template")?;
        let name = &tail[1..end];
        match values.get(name) {
            Some(Value::String(text)) => out.push_str(text),
            Some(other) => out.push_str(&other.to_string()),
            None => return Err(format!("no value for {{{name}}}")),
        }
        rest = &tail[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}
