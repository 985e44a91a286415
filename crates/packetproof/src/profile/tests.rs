//! Unit tests of the profiles: the block builder's, a custom one, and the table of their keys.

use super::shape::{BlockBuilder, Custom, SHAPE_KEYS};
use super::*;

fn resolve(toml_text: &str) -> std::result::Result<Profile, String> {
    let raw: RawContract = toml::from_str(toml_text).map_err(|e| e.to_string())?;
    Profile::resolve("contract", raw, &["a".to_owned()])
}

#[test]
fn the_default_is_the_block_builder_and_a_suite_extends_its_value_sets() {
    let profile = resolve("").unwrap();
    assert!(profile.is_block_builder());
    assert_eq!(profile.values_of("insertionMode").unwrap(), ["staged", "immediate"]);
    let profile = resolve("[branch]\ninsertionMode = [\"replace\"]").unwrap();
    assert_eq!(profile.values_of("insertionMode").unwrap(), ["staged", "immediate", "replace"]);
    assert!(profile.is_extension("insertionMode", "replace"));
    assert!(!profile.is_extension("insertionMode", "staged"));
}

#[test]
fn the_block_builder_takes_added_prompt_modes_task_types_and_packet_fields() {
    let profile = resolve(
        "prompt_modes = [\"library-refresh\"]\ntask_types = [\"block-refresh\"]\npacket_fields = [\"temperature\"]",
    )
    .unwrap();
    assert!(profile.is_block_builder());
    assert_eq!(profile.prompt_modes, ["library-adapt", "library-refresh"]);
    assert_eq!(profile.task_types, ["block-update", "block-refresh"]);
    assert!(profile.is_extension("promptMode", "library-refresh"));
    assert!(!profile.is_extension("promptMode", "library-adapt"));
    assert!(profile.allows_field("temperature") && profile.allows_field("checksum"));
    assert!(!profile.allows_field("topP"));
    let narrowed = resolve("models = [\"gpt-5-mini\"]").unwrap();
    assert!(narrowed.model_problem("gpt-5-mini").is_none());
    assert!(narrowed.model_problem("gpt-5").unwrap().contains("not one agent \"contract\" is declared with"));
}

#[test]
fn the_block_builder_refuses_what_it_fixes_and_fields_it_lacks() {
    for (text, says) in [
        ("agent_ids = []", "contract.agent_ids: expected a non-empty list"),
        ("[templates]\nstyle = \"mustache\"\nsystem = [\"s\"]\nuser = [\"u\"]", "a block-builder agent names its own"),
        ("[templates]\nstyle = \"jinja\"\nsystem = [\"s\", \"t\"]\nuser = [\"u\"]", "one `system` and one `user`"),
        ("prompt_modes = [\"library-adapt\"]", "already declared"),
        ("packet_fields = [\"checksum\"]", "already a contract field"),
        ("models = []", "contract.models: expected a non-empty list"),
        ("[branch]\ntone = [\"x\"]", "not a block-builder branch field"),
        ("[branch]\nhasTargetTheme = [\"x\"]", "expected a list of values to add"),
        ("[branch]\ninsertionMode = [\"staged\"]", "already a built-in value"),
    ] {
        let err = resolve(text).unwrap_err();
        assert!(err.contains(says), "{text}: {err}");
    }
}

/// `[contract]` text giving `key` (a value each profile's parse reads).
fn example(key: &str) -> &'static str {
    match key {
        "agent_ids" => "agent_ids = [\"a\"]\n",
        "task_types" => "task_types = [\"t\"]\n",
        "prompt_modes" => "prompt_modes = [\"m\"]\n",
        "output" => "output = \"text\"\n",
        "schema" => "schema = \"s.json\"\n",
        "render_input_keys" => "render_input_keys = [\"q\"]\n",
        "branch" => "[branch]\ninsertionMode = [\"replace\"]\n",
        "templates" => "[templates]\nstyle = \"jinja\"\nsystem = [\"s\"]\nuser = [\"u\"]\n",
        other => panic!("give the new [contract] key {other:?} an example here"),
    }
}

/// Each key the table says the block builder fixes is refused when given, each one a
/// custom profile requires is refused when missing (with the table's message), and
/// the others are accepted.
#[test]
fn the_shape_table_drives_each_profile_parse() {
    let required = SHAPE_KEYS.iter().filter(|k| matches!(k.custom, Custom::Required(_)));
    let full: String = std::iter::once("profile = \"custom\"\n").chain(required.map(|k| example(k.key))).collect();
    assert!(resolve(&full).is_ok(), "{full}");
    for shape in &SHAPE_KEYS {
        let given = resolve(example(shape.key));
        match shape.block_builder {
            BlockBuilder::Fixes(_) => {
                let says = format!("contract.{}: the block-builder profile fixes it", shape.key);
                assert!(given.unwrap_err().contains(&says), "{}", shape.key);
            }
            BlockBuilder::Extends(_) | BlockBuilder::Own(_) => {
                assert!(given.is_ok(), "{}: {:?}", shape.key, given.err())
            }
        }
        if let Custom::Required(what) = shape.custom {
            let err = resolve(&full.replace(example(shape.key), "")).unwrap_err();
            assert_eq!(err, format!("contract.{}: a custom profile declares it: {what}", shape.key));
        }
    }
}

/// The rows of docs/gating-any-agent.md's table, from [`SHAPE_KEYS`].
fn docs_table() -> String {
    let mut rows = vec!["| `profile` | `\"block-builder\"` (default) | `\"custom\"` |".to_owned()];
    for shape in &SHAPE_KEYS {
        let key = match shape.key {
            "branch" | "templates" => format!("`[contract.{}]`", shape.key),
            key => format!("`{key}`"),
        };
        let block = match shape.block_builder {
            BlockBuilder::Fixes(what) => format!("fixed: {what}"),
            BlockBuilder::Extends(what) => format!("adds {what}"),
            BlockBuilder::Own(what) => what.to_owned(),
        };
        let custom = match shape.custom {
            Custom::Required(what) => format!("required: {what}"),
            Custom::Optional(what) => what.to_owned(),
        };
        rows.push(format!("| {key} | {block} | {custom} |"));
    }
    rows.join("\n")
}

/// What is wrong with `doc`'s table of the profiles' keys, if anything.
fn docs_problem(doc: &str) -> Option<String> {
    let table = docs_table();
    (!doc.contains(&table)).then(|| format!("its table \"What a profile declares\" must end:\n{table}"))
}

#[test]
fn the_docs_table_is_the_shape_table() {
    let file = std::path::Path::new(crate::PROJECT_ROOT).join("docs/gating-any-agent.md");
    let doc = std::fs::read_to_string(&file).unwrap();
    assert_eq!(docs_problem(&doc), None, "{}", file.display());
    // A row that says other than the table is caught.
    let drifted = doc.replace("| `task_types` | adds", "| `task_types` | fixed:");
    assert!(docs_problem(&drifted).is_some(), "a drifted row must be caught");
}

#[test]
fn a_custom_profile_declares_every_part() {
    let full = "profile = \"custom\"\nagent_ids = [\"a\"]\ntask_types = [\"t\"]\nprompt_modes = [\"m\"]\n\
                output = \"text\"\nrender_input_keys = [\"q\"]\n[branch]\ntone = [\"formal\"]\nurgent = \"boolean\"";
    let profile = resolve(full).unwrap();
    assert_eq!(profile.output, Output::Text);
    assert_eq!(profile.values_of("tone").unwrap(), ["formal"]);
    assert!(profile.branch.iter().any(|f| f.name == "urgent" && f.values.is_none()));
    for (drop, says) in [
        ("agent_ids = [\"a\"]\n", "contract.agent_ids: a custom profile declares it"),
        ("output = \"text\"\n", "contract.output"),
        ("render_input_keys = [\"q\"]\n", "contract.render_input_keys"),
    ] {
        let err = resolve(&full.replace(drop, "")).unwrap_err();
        assert!(err.contains(says), "{drop}: {err}");
    }
    let err = resolve(&full.replace("\"boolean\"", "\"bool\"")).unwrap_err();
    assert!(err.contains("expected a list of values or \"boolean\""), "{err}");
}

#[test]
fn an_agent_answering_in_a_schema_names_its_own_schema_file() {
    let agent = "profile = \"custom\"\nagent_ids = [\"a\"]\ntask_types = [\"t\"]\nprompt_modes = [\"m\"]\n\
                 render_input_keys = [\"q\"]\nschema = \"schemas/a.json\"\n";
    let profile = resolve(&format!("{agent}output = \"schema\"")).unwrap();
    assert_eq!(profile.schema.as_deref(), Some(std::path::Path::new("schemas/a.json")));
    let err = resolve(&format!("{agent}output = \"text\"")).unwrap_err();
    assert!(err.contains("contract.schema: the agent answers in plain text"), "{err}");
    let err = resolve("schema = \"s.json\"").unwrap_err();
    assert!(err.contains("contract.schema: the block-builder profile fixes it"), "{err}");
}

#[test]
fn templates_declare_what_the_app_does_to_a_rendering() {
    let full = "profile = \"custom\"\nagent_ids = [\"a\"]\ntask_types = [\"t\"]\nprompt_modes = [\"m\"]\n\
                output = \"text\"\nrender_input_keys = [\"q\"]\n[templates]\nstyle = \"mustache\"\n\
                system = [\"s\"]\nuser = [\"u\"]\n";
    let rendering = |line: &str| resolve(&format!("{full}{line}")).map(|p| p.templates.unwrap().rendering);
    assert_eq!(rendering("").unwrap(), crate::template::Trim::AsRendered);
    for (value, trim) in [
        ("as-rendered", crate::template::Trim::AsRendered),
        ("strip-trailing-newlines", crate::template::Trim::StripTrailingNewlines),
        ("trim-end", crate::template::Trim::TrimEnd),
        ("trim", crate::template::Trim::Both),
    ] {
        assert_eq!(rendering(&format!("rendering = \"{value}\"")).unwrap(), trim);
    }
    let err = rendering("rendering = \"strip\"").unwrap_err();
    assert!(err.contains("unknown variant") && err.contains("trim-end"), "{err}");
    let err = rendering("trim = true").unwrap_err();
    assert!(err.contains("unknown field"), "{err}");
}

/// `[contract.renamed]`: a new name for a built-in value reads as that value; the
/// built-in name stays in the set (packets blessed before), and a rename that names no
/// built-in value, or a custom profile's, is refused.
#[test]
fn a_renamed_built_in_value_reads_as_the_built_in_one() {
    let profile = resolve("[renamed.insertionMode]\n\"staged-review\" = \"staged\"\n").unwrap();
    assert_eq!(profile.builtin_value("insertionMode", "staged-review"), "staged");
    assert_eq!(profile.spelled("insertionMode", "staged"), "staged-review");
    assert_eq!(profile.spelled("insertionMode", "immediate"), "immediate");
    let values = profile.values_of("insertionMode").unwrap();
    assert!(values.contains(&"staged".to_owned()) && values.contains(&"staged-review".to_owned()));
    assert!(!profile.is_extension("insertionMode", "staged-review"), "a renamed value keeps every rule running");
    let branch = serde_json::json!({"insertionMode": "staged-review", "sourceScope": "project"});
    let builtin = serde_json::json!({"insertionMode": "staged", "sourceScope": "project"});
    assert_eq!(*profile.builtin_branch(&branch), builtin);
    assert_eq!(*profile.spelled_branch(std::borrow::Cow::Borrowed(&builtin)), branch);
    for (text, says) in [
        ("[renamed.insertionMode]\n\"later\" = \"deferred\"\n", "\"deferred\" is not a built-in value"),
        ("[renamed.hasTargetTheme]\n\"yes\" = \"true\"\n", "not a block-builder branch field with a value set"),
        ("[renamed.insertionMode]\n\"immediate\" = \"staged\"\n", "already a value"),
        ("profile = \"custom\"\n[renamed.insertionMode]\n\"a\" = \"staged\"\n", "contract.renamed: a custom profile"),
    ] {
        let err = resolve(text).unwrap_err();
        assert!(err.contains(says), "{text}: {err}");
    }
}

/// The shape table (and with it docs/gating-any-agent.md) names every template style, and
/// each name reads back as its style: a new style is one variant, and forgetting its name
/// in the table fails here.
#[test]
fn every_template_style_is_named_once_everywhere() {
    let templates = SHAPE_KEYS.iter().find(|k| k.key == "templates").unwrap();
    let Custom::Optional(text) = templates.custom else { panic!("templates is optional for a custom profile") };
    for name in Style::NAMES {
        assert!(text.contains(&format!("`{name}`")), "the templates row names the style {name:?}: {text}");
        assert_eq!(Style::from_name(name).map(Style::name), Some(*name));
        let parsed: Style = toml::Value::String((*name).to_owned()).try_into().unwrap();
        assert_eq!(parsed.name(), *name, "serde's name is strum's");
    }
}
