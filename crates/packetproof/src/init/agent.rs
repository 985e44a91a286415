//! `packetproof init --agent NAME`: the smallest suite that gates one agent of an app:
//! harness.toml with `[agents.NAME]`, a system and a user template in the app's
//! template style, the agent's schema file when it answers in one, one fixture, and
//! an exporter skeleton in the app's language (JavaScript in a Node project, Python
//! otherwise) that renders the templates into a packet for the provider and model given. Nothing is blessed:
//! the exporter is the team's program, to adapt first; `packetproof bless` then
//! writes the golden files and `packetproof test` passes.

use super::project::Project;
use crate::profile::{Output, Style};
use crate::{Error, Result};

/// What `init --agent` is asked for.
#[derive(Debug, Clone)]
pub struct AgentRequest {
    /// The agent's name: its `[agents.NAME]` table, its agent id and its file names.
    pub name: String,
    pub style: Style,
    pub output: Output,
    /// The provider of the agent's call (default: anthropic).
    pub provider: Option<String>,
    /// Its model (default: the provider's first in the built-in settings).
    pub model: Option<String>,
}

const DEFAULT_PROVIDER: &str = "anthropic";

/// The output limit of the skeleton's call.
const MAX_TOKENS: u32 = 1024;

impl AgentRequest {
    fn provider(&self) -> &str {
        self.provider.as_deref().unwrap_or(DEFAULT_PROVIDER)
    }

    /// The model: the one given, else the provider's first built-in one.
    fn model(&self) -> Result<String> {
        if let Some(model) = &self.model {
            return Ok(model.clone());
        }
        let settings: toml::Value = toml::from_str(crate::builtin::HARNESS_TOML)
            .map_err(|e| Error::Usage(format!("built-in settings: {e}")))?;
        let first = settings
            .get("providers")
            .and_then(|p| p.get(self.provider()))
            .and_then(|p| p.get("models"))
            .and_then(|m| m.as_array())
            .and_then(|m| m.first())
            .and_then(toml::Value::as_str);
        first.map(str::to_owned).ok_or_else(|| {
            Error::Usage(format!(
                "--provider {}: packetproof knows no model of it; name the agent's with --model",
                self.provider()
            ))
        })
    }
}

/// The agent's name, provider and model before anything is written: each is a TOML key
/// or string, a file name or an agent id.
pub(crate) fn check(request: &AgentRequest) -> Result<()> {
    check_name(&request.name)?;
    let provider = request.provider();
    let mut chars = provider.chars();
    let key = chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_');
    if !key {
        return Err(Error::Usage(format!(
            "--provider {provider:?}: expected a lowercase name such as anthropic, openai or google (it names the \
             [providers.NAME] table)"
        )));
    }
    let model = request.model()?;
    if model.is_empty() || model.chars().any(|c| c.is_control() || c == '"' || c == '\\') {
        return Err(Error::Usage(format!("--model {model:?}: expected a model name such as claude-sonnet-4-5")));
    }
    Ok(())
}

/// An agent's name is a TOML bare key, a file name and an agent id at once.
pub(crate) fn check_name(name: &str) -> Result<()> {
    let mut chars = name.chars();
    let starts = chars.next().is_some_and(|c| c.is_ascii_alphabetic());
    if starts && name.len() <= 64 && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
        return Ok(());
    }
    Err(Error::Usage(format!(
        "--agent {name:?}: expected a letter, then up to 63 letters, digits, '_' or '-' (it names the \
         [agents.NAME] table, the agent id and the agent's files)"
    )))
}

/// The exporter's language: the app's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Language {
    JavaScript,
    Python,
}

impl Language {
    fn of(project: &Project) -> Language {
        if project.is_node() {
            Language::JavaScript
        } else {
            Language::Python
        }
    }

    fn file(self) -> &'static str {
        match self {
            Language::JavaScript => "export.js",
            Language::Python => "export.py",
        }
    }

    fn program(self) -> &'static str {
        match self {
            Language::JavaScript => "node",
            Language::Python => "python3",
        }
    }
}

fn extension(style: Style) -> &'static str {
    match style {
        Style::Jinja => "j2",
        Style::Mustache => "mustache",
        Style::Format => "txt",
    }
}

fn style_name(style: Style) -> &'static str {
    match style {
        Style::Jinja => "jinja",
        Style::Mustache => "mustache",
        Style::Format => "format",
    }
}

/// A template slot for the renderInput key `key`, in `style` (mustache's triple braces:
/// the value as it is, never HTML-escaped).
fn slot(style: Style, key: &str) -> String {
    match style {
        Style::Jinja => format!("{{{{ {key} }}}}"),
        Style::Mustache => format!("{{{{{{{key}}}}}}}"),
        Style::Format => format!("{{{key}}}"),
    }
}

/// Every file of the suite, `(path relative to the suite, text)`.
pub(crate) fn files(request: &AgentRequest, project: &Project) -> Result<Vec<(String, String)>> {
    let name = &request.name;
    let language = Language::of(project);
    let model = request.model()?;
    let ext = extension(request.style);
    let (system, user) = (format!("{name}.system.{ext}"), format!("{name}.user.{ext}"));
    let schema = (request.output == Output::Schema).then(|| format!("schemas/{name}.json"));
    let answer = match request.output {
        Output::Schema => format!("Answer with the submit_{} tool.", name.replace('-', "_")),
        Output::Text => "Answer in plain text.".to_owned(),
    };
    let mut out = vec![
        ("harness.toml".to_owned(), settings(request, &model, language, &system, &user, schema.as_deref())),
        (".gitattributes".to_owned(), GITATTRIBUTES.to_owned()),
        (
            format!("prompts/{system}"),
            format!("You answer questions about {}. {answer}\n", slot(request.style, "product")),
        ),
        (format!("prompts/{user}"), format!("{}\n", slot(request.style, "question"))),
        ("fixtures/example/request.json".to_owned(), REQUEST.to_owned()),
        (language.file().to_owned(), exporter(request, &model, language, &system, &user, schema.as_deref())),
    ];
    if let Some(schema) = schema {
        out.push((schema, schema_file(name)));
    }
    Ok(out)
}

const GITATTRIBUTES: &str = "\
# Keep these byte for byte on every checkout: their digests are what the suite proves.
golden/** -text
fixtures/** -text
prompts/** -text
schemas/** -text
packetproof.lock -text
";

/// The example fixture: the exporter's own input (what the app passes the call).
const REQUEST: &str = r#"{
  "input": {
    "product": "Acme Boards",
    "question": "How do I export a board as a PDF?"
  }
}
"#;

fn settings(
    request: &AgentRequest,
    model: &str,
    language: Language,
    system: &str,
    user: &str,
    schema: Option<&str>,
) -> String {
    let name = &request.name;
    let output = match request.output {
        Output::Schema => "schema",
        Output::Text => "text",
    };
    let schema_line = schema
        .map(|s| format!("# The JSON schema the agent answers in: its packets' outputSchema.\nschema = \"{s}\"\n"));
    let files: Vec<String> =
        [Some(language.file()), schema].into_iter().flatten().map(|f| format!("\"{f}\"")).collect();
    format!(
        r#"# packetproof's suite for the app's agent {name:?} (written by `packetproof init --agent`).
# A packet is judged by the agent its agentId names (docs/gating-any-agent.md); another
# agent of the app is another [agents.NAME] table.

[paths]
fixtures = "fixtures"
golden = "golden"
# The agent's templates. Once the exporter renders the app's own, point this at their
# folder (such as "../src/prompts") and remove prompts/.
prompts = "prompts"

[agents.{name}]
profile = "custom"
agent_ids = ["{name}"]
task_types = ["{name}"]
prompt_modes = ["default"]
output = "{output}"
{schema}render_input_keys = ["product", "question"]
models = ["{model}"]

# The resolvedBranch fields the agent's prompt depends on, each with its values or "boolean":
# [agents.{name}.branch]
# tone = ["formal", "casual"]

[agents.{name}.templates]
style = "{style}"
system = ["{system}"]
user = ["{user}"]

[providers.{provider}]
models = ["{model}"]

# The program that makes the agent's packets: one fixture's request.json in, one packet
# out. `files` are what its packets depend on, from this folder, anywhere in the
# repository (globs work): add the app's code it reads (such as "../src/calls.js"), so
# that release-check explains a model or max-tokens change there.
[exporter]
command = ["{program}", "{file}", "{{request}}"]
timeout_seconds = 30
files = [{files}]
"#,
        schema = schema_line.unwrap_or_default(),
        style = style_name(request.style),
        provider = request.provider(),
        program = language.program(),
        file = language.file(),
        files = files.join(", "),
    )
}

fn schema_file(name: &str) -> String {
    let tool = format!("submit_{}", name.replace('-', "_"));
    let value = serde_json::json!({
        "name": tool,
        "description": format!("The answer of the {name} agent."),
        "schema": {
            "type": "object",
            "additionalProperties": false,
            "required": ["answer"],
            "properties": { "answer": { "type": "string", "minLength": 1 } }
        }
    });
    crate::canonical::to_pretty(&value)
}

/// The exporter skeleton's settings block, then its body for the language.
fn exporter(
    request: &AgentRequest,
    model: &str,
    language: Language,
    system: &str,
    user: &str,
    schema: Option<&str>,
) -> String {
    let quoted = |text: &str| serde_json::Value::from(text).to_string();
    let schema = schema.map_or_else(
        || match language {
            Language::JavaScript => "null".to_owned(),
            Language::Python => "None".to_owned(),
        },
        quoted,
    );
    let body = match language {
        Language::JavaScript => super::skeletons::JAVASCRIPT,
        Language::Python => super::skeletons::PYTHON,
    };
    body.replace("{agent}", &quoted(&request.name))
        .replace("{provider}", &quoted(request.provider()))
        .replace("{model}", &quoted(model))
        .replace("{max_tokens}", &MAX_TOKENS.to_string())
        .replace("{system}", &quoted(system))
        .replace("{user}", &quoted(user))
        .replace("{schema}", &schema)
        .replace("{style}", &quoted(style_name(request.style)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_are_no_bare_key_or_file_name_are_refused() {
        for bad in ["", "1st", "a b", "a.b", "a/b", "ä"] {
            assert!(check_name(bad).is_err(), "{bad:?}");
        }
        for good in ["answer", "pr-label", "release_notes2"] {
            check_name(good).unwrap();
        }
    }

    #[test]
    fn each_style_writes_its_own_slots() {
        assert_eq!(slot(Style::Jinja, "q"), "{{ q }}");
        assert_eq!(slot(Style::Mustache, "q"), "{{{q}}}");
        assert_eq!(slot(Style::Format, "q"), "{q}");
    }

    #[test]
    fn the_settings_load_as_one_agent() {
        for output in [Output::Text, Output::Schema] {
            let request =
                AgentRequest { name: "answer".into(), style: Style::Format, output, provider: None, model: None };
            let dir = tempfile::tempdir().unwrap();
            for (path, text) in files(&request, &Project::Other).unwrap() {
                let file = dir.path().join(path);
                std::fs::create_dir_all(file.parent().unwrap()).unwrap();
                std::fs::write(file, text).unwrap();
            }
            let config = crate::Config::load(dir.path(), None).unwrap();
            let agents = config.agents.all();
            assert_eq!((agents.len(), agents[0].name.as_str(), agents[0].output), (1, "answer", output));
            assert_eq!(agents[0].schema.is_some(), output == Output::Schema);
            assert!(dir.path().join("export.py").is_file());
        }
    }

    #[test]
    fn a_node_project_gets_a_javascript_exporter_for_the_call_given() {
        let node = Project::Node { dir: "/app".into(), locked: false };
        let request = AgentRequest {
            name: "answer".into(),
            style: Style::Mustache,
            output: Output::Text,
            provider: Some("openai".into()),
            model: None,
        };
        check(&request).unwrap();
        let files = files(&request, &node).unwrap();
        let text = |name: &str| files.iter().find(|(n, _)| n == name).map(|(_, t)| t.as_str()).unwrap_or("");
        assert!(text("export.js").contains("provider: \"openai\",\n  model: \"gpt-5\","), "{}", text("export.js"));
        assert!(text("harness.toml").contains("[providers.openai]\nmodels = [\"gpt-5\"]"), "{}", text("harness.toml"));
        assert!(text("harness.toml").contains("command = [\"node\", \"export.js\""), "{}", text("harness.toml"));
        assert_eq!(text("export.py"), "");
        let chosen = AgentRequest { provider: Some("mistral".into()), model: Some("mistral-large".into()), ..request };
        check(&chosen).unwrap();
        let files = super::files(&chosen, &Project::Other).unwrap();
        assert!(files.iter().any(|(n, t)| n == "export.py" && t.contains("\"model\": \"mistral-large\"")));
        let unknown = AgentRequest { model: None, ..chosen.clone() };
        assert!(check(&unknown).unwrap_err().to_string().contains("name the agent's with --model"));
        let bad = AgentRequest { provider: Some("Open AI".into()), ..chosen };
        assert!(check(&bad).unwrap_err().to_string().contains("--provider \"Open AI\""));
    }
}
