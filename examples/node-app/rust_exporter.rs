//! The app's exporter again, in Rust: the same packet as `llm/gate/export.js`, byte for
//! byte, so the suite's tests run where Node.js is absent (and the two exporters check
//! each other). `cargo test` builds it; the tests name it in harness.toml `[exporter]`
//! in place of the Node one. The call settings are read from the app's own
//! `src/calls.js` (its object literal, the same lines the Node exporter `require`s).

use packetproof::{canonical, digest};
use serde_json::{json, Map, Value};
use std::path::{Path, PathBuf};

fn main() {
    let request_file = std::env::args().nth(1).expect("usage: node_app_exporter REQUEST.json");
    match export(Path::new(&request_file)) {
        Ok(packet) => print!("{}", canonical::to_pretty(&Value::Object(packet))),
        Err(message) => {
            eprintln!("node_app_exporter: {message}");
            std::process::exit(2);
        }
    }
}

fn export(request_file: &Path) -> Result<Map<String, Value>, String> {
    let read = |path: &Path| std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()));
    let request = canonical::parse(&read(request_file)?).map_err(|e| format!("{}: {e}", request_file.display()))?;
    let app = PathBuf::from("..").join("..").join("src");
    let calls = String::from_utf8(read(&app.join("calls.js"))?).map_err(|e| e.to_string())?;
    let name = request["call"].as_str().ok_or("the request has no call")?;
    let call = |key: &str| setting(&calls, name, key);
    let input = request["input"].as_object().ok_or("the request has no input")?;
    let mut branch = Map::new();
    branch.insert("agentId".into(), json!(call("agentId")?));
    branch.extend(request["branch"].as_object().cloned().unwrap_or_default());
    // `(branch) => (branch.hasBreaking ? 'a' : 'b')`: the first name when the branch field is true.
    let user = call("user")?;
    let user = match user.split('\'').collect::<Vec<_>>()[..] {
        [_, yes, _, no, _] => {
            let field = user.split("branch.").nth(1).and_then(|f| f.split(' ').next()).unwrap_or_default();
            if branch.get(field) == Some(&Value::Bool(true)) { yes } else { no }.to_owned()
        }
        _ => user,
    };
    let paths = [call("system")?, user];
    let (mut versions, mut texts) = (Map::new(), Vec::new());
    for path in &paths {
        let bytes = read(&app.join("prompts").join(path))?;
        versions.insert(path.clone(), json!(digest::sha256(&bytes)));
        let text = String::from_utf8(bytes).map_err(|e| format!("{path}: {e}"))?;
        texts.push(render(&text, input).map_err(|e| format!("{path}: {e}"))?);
    }
    let number = |key: &str| call(key).and_then(|n| n.parse::<u64>().map_err(|e| format!("{key}: {e}")));
    let mut packet = Map::new();
    for (key, value) in [
        ("packetVersion", json!(1)),
        ("agentId", json!(call("agentId")?)),
        ("taskType", json!(call("taskType")?)),
        ("promptMode", json!(call("promptMode")?)),
        ("attempt", json!(1)),
        ("provider", json!(call("provider")?)),
        ("model", json!(call("model")?)),
        ("maxTokens", json!(number("maxTokens")?)),
        ("promptPaths", json!(paths)),
        ("promptVersions", Value::Object(versions)),
        ("systemPrompt", json!(texts[0])),
        ("userMessage", json!(texts[1])),
        ("effectiveUserMessage", json!(texts[1])),
        ("renderInput", Value::Object(input.clone())),
        ("resolvedBranch", Value::Object(branch)),
    ] {
        packet.insert(key.to_owned(), value);
    }
    if call("agentId")? == "release-notes" {
        let file = Path::new("schemas").join("release-notes.json");
        let schema = canonical::parse(&read(&file)?).map_err(|e| format!("{}: {e}", file.display()))?;
        packet.insert("outputSchema".into(), schema);
    }
    digest::seal(&mut packet);
    Ok(packet)
}

/// `key: 'value'` (or a number, or `key: () => 'value'`) in the `name: { … }` entry of calls.js.
fn setting(calls: &str, name: &str, key: &str) -> Result<String, String> {
    let entry = calls.split(&format!("\n  {name}: {{")).nth(1).ok_or(format!("calls.js has no call {name}"))?;
    let entry = entry.split("\n  },").next().unwrap_or(entry);
    let line = entry
        .lines()
        .map(str::trim)
        .find_map(|l| l.strip_prefix(&format!("{key}: ")))
        .ok_or(format!("calls.js: {name} has no {key}"))?;
    let value = line.trim_end_matches(',').trim_start_matches("() => ");
    Ok(value.trim_matches('\'').to_owned())
}

/// The templates' subset of mustache: `{{{name}}}` is the value's text, unescaped.
fn render(template: &str, input: &Map<String, Value>) -> Result<String, String> {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(i) = rest.find("{{{") {
        out.push_str(&rest[..i]);
        let end = rest[i..].find("}}}").ok_or("an unclosed {{{")? + i;
        let name = rest[i + 3..end].trim();
        match input.get(name) {
            Some(Value::String(text)) => out.push_str(text),
            Some(other) => out.push_str(&other.to_string()),
            None => return Err(format!("no value for {{{{{{{name}}}}}}}")),
        }
        rest = &rest[end + 3..];
    }
    out.push_str(rest);
    Ok(out)
}
