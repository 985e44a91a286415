//! Unit tests of the settings: defaults, overlays, unknown keys.

use super::*;

#[test]
fn unknown_setting_is_a_loud_error() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(Path::new(crate::PROJECT_ROOT).join(FILE_NAME)).unwrap();
    let text = text.replace("[taint]\n", "[taint]\nmin_lenght = 3\n");
    let err = Config::from_toml(dir.path(), Some(Path::new("harness.toml")), &text, None).unwrap_err().to_string();
    assert!(err.contains("unknown field `min_lenght`"), "{err}");
}

#[test]
fn the_retired_wire_allowed_settings_say_where_settings_went() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(Path::new(crate::PROJECT_ROOT).join(FILE_NAME)).unwrap();
    let text = format!("{text}\n[wire.allowed_settings]\nopenai-chat = [\"temperature\"]\n");
    let err = Config::from_toml(dir.path(), Some(Path::new("harness.toml")), &text, None).unwrap_err().to_string();
    assert!(err.contains("wire.allowed_settings: retired") && err.contains("`call` member"), "{err}");
}

#[test]
fn the_first_configured_pattern_that_matches_is_named() {
    let patterns = ["(?i)b+", "^a", "c$", "(x)|(y)"].map(String::from).to_vec();
    let forbidden = Forbidden::new(Vec::new(), Vec::new(), patterns).unwrap();
    let named = |text: &str| forbidden.matching_pattern(text);
    assert_eq!(named("aB"), Some("(?i)b+"), "case-insensitive only in its own group, and first wins");
    assert_eq!(named("ab"), Some("(?i)b+"));
    assert_eq!(named("az"), Some("^a"));
    assert_eq!(named("zzc"), Some("c$"));
    assert_eq!(named("zy"), Some("(x)|(y)"));
    assert_eq!(named("A"), None, "(?i) of the first pattern must not leak into ^a");
    assert_eq!(named("ca"), None, "anchors stay anchored inside the alternation");
    assert_eq!(named(""), None);
    let none = Forbidden::new(Vec::new(), Vec::new(), Vec::new()).unwrap();
    assert_eq!(none.matching_pattern("anything"), None, "no patterns match nothing");
    assert!(Forbidden::new(Vec::new(), Vec::new(), vec!["a)|(b".into()]).is_err(), "a pattern cannot escape its group");
}

#[test]
fn bad_pattern_is_a_loud_error() {
    let text = std::fs::read_to_string(Path::new(crate::PROJECT_ROOT).join(FILE_NAME)).unwrap();
    let text = text.replace("value_patterns = [", "value_patterns = [ '(unclosed',");
    let err = Config::from_toml(Path::new("."), Some(Path::new("harness.toml")), &text, None).unwrap_err().to_string();
    assert!(err.contains("forbidden.value_patterns"), "{err}");
}

/// With no file, the built-in settings are the project's own, resources included.
#[test]
fn built_in_settings_are_the_projects() {
    let dir = tempfile::tempdir().unwrap();
    let builtin = Config::builtin(dir.path(), None).unwrap();
    let project = Config::load(Path::new(crate::PROJECT_ROOT), None).unwrap();
    assert_eq!(builtin.file, None);
    assert_eq!(builtin.google_suffix, project.google_suffix);
    assert_eq!(builtin.forbidden.keys, project.forbidden.keys);
    assert_eq!(builtin.providers.keys().collect::<Vec<_>>(), project.providers.keys().collect::<Vec<_>>());
    let (builtin_run, project_run) =
        (crate::Invocation::from(builtin.clone()), crate::Invocation::from(project.clone()));
    assert_eq!(builtin_run.snapshot_bytes().unwrap().1, project_run.snapshot_bytes().unwrap().1);
    assert_eq!(builtin_run.builder_schema_bytes().unwrap().1, project_run.builder_schema_bytes().unwrap().1);
    assert_eq!(builtin.walk_prompt_templates(), project.walk_prompt_templates());
    assert_eq!(builtin.paths.fixtures, dir.path().join("fixtures"));
    let refusal = builtin.require_suite("bless").unwrap_err().to_string();
    assert!(refusal.contains(&dir.path().join(FILE_NAME).display().to_string()), "{refusal}");
    assert!(project.require_suite("bless").is_ok());
}

/// A partial harness.toml overrides key by key; `providers` is replaced whole.
#[test]
fn a_partial_file_overrides_the_built_in_settings() {
    let text = "[limits]\nmax_file_bytes = 10\n[providers.openai]\nmodels = [\"m\"]\n[exporter]\ncommand = [\"x\"]\n";
    let config = Config::from_toml(Path::new("/s"), Some(Path::new("/s/harness.toml")), text, None).unwrap();
    assert_eq!(config.limits.max_file_bytes, 10);
    assert_eq!(config.providers.keys().collect::<Vec<_>>(), ["openai"]);
    assert_eq!(config.taint.min_length, 12, "an unnamed table keeps the built-in value");
    assert!(config.corpus.require_branch_coverage);
    assert_eq!(config.exporter.as_ref().map(|e| e.timeout_seconds), Some(60));
    assert_eq!(config.paths.golden, Path::new("/s/golden"));
    let empty = Config::from_toml(Path::new("/s"), None, "[exporter]\ncommand = []\n", None).unwrap_err();
    assert!(empty.to_string().contains("exporter.command"), "{empty}");
}

/// Restating a provider's models keeps the built-in limits of the models it keeps; its
/// own entries win, and a model it adds has none (noted, not checked).
#[test]
fn restated_models_keep_their_built_in_output_limits() {
    let dir = tempfile::tempdir().unwrap();
    let load = |text: &str| Config::from_toml(dir.path(), Some(Path::new("harness.toml")), text, None).unwrap();
    let config = load("[providers.anthropic]\nmodels = [\"claude-opus-4-1\", \"claude-next\"]\n");
    assert!(config.output_limit_problem("anthropic", "claude-opus-4-1", 64000.0).is_some());
    assert_eq!(config.has_output_limit("anthropic", "claude-next"), Some(false));
    assert_eq!(config.has_output_limit("anthropic", "claude-sonnet-4-5"), Some(false));
    assert!(!config.providers.contains_key("openai"), "a suite compiles only for the providers it lists");
    let own = load(
        "[providers.anthropic]\nmodels = [\"claude-opus-4-1\"]\nmax_output_tokens = { \"claude-opus-4-1\" = 100 }\n",
    );
    assert!(own.output_limit_problem("anthropic", "claude-opus-4-1", 101.0).is_some());
}

/// A suite adds its own forbidden keys and patterns to the built-in lists without
/// restating them, and names the reference's own suffix file instead of a copy.
#[test]
fn a_suite_adds_to_the_built_in_lists_and_names_a_value_once() {
    let dir = tempfile::tempdir().unwrap();
    let reference = dir.path().join("reference");
    std::fs::create_dir_all(&reference).unwrap();
    std::fs::write(reference.join("google-suffix.txt"), "\n\nAnswer with the JSON object only.").unwrap();
    let suite = dir.path().join("suite");
    std::fs::create_dir_all(&suite).unwrap();
    let text = "[paths]\ngoogle_suffix = \"../reference/google-suffix.txt\"\n\n[forbidden]\n\
                extra_keys = [\"internalNotes\", \"previewScreens\"]\nextra_blueprint_keys = [\"renderedAt\"]\n\
                extra_value_patterns = ['''\\binternal\\.example\\.com\\b''']\n";
    let config = Config::from_toml(&suite, Some(&suite.join(FILE_NAME)), text, None).unwrap();
    let builtin = Config::builtin(dir.path(), None).unwrap();
    let (keys, builtin_keys) = (&config.forbidden.keys, &builtin.forbidden.keys);
    assert_eq!(keys.len(), builtin_keys.len() + 1, "previewScreens is built in: added once");
    assert!(keys.starts_with(builtin_keys) && keys.last().unwrap() == "internalNotes", "{keys:?}");
    assert!(config.forbidden.is_forbidden_key("InternalNotes") && config.forbidden.is_forbidden_key("posterUrl"));
    assert_eq!(config.forbidden.blueprint_keys.len(), builtin.forbidden.blueprint_keys.len() + 1);
    assert!(config.forbidden.matching_pattern("see https://internal.example.com/x").is_some());
    assert!(config.forbidden.matching_pattern("gs://bucket/a.png").is_some(), "the built-in patterns still hold");
    assert_eq!(config.google_suffix, "\n\nAnswer with the JSON object only.");
    let bad = "[forbidden]\nextra_value_patterns = ['(unclosed']\n";
    let err = Config::from_toml(&suite, None, bad, None).unwrap_err().to_string();
    assert!(err.contains("forbidden.extra_value_patterns"), "{err}");
}

/// An agent's own forbidden lists replace the suite's for its packets alone (a list it
/// gives), or add to them (`extra_*`); the other agents keep the suite's.
#[test]
fn an_agent_narrows_or_extends_the_forbidden_lists_for_itself() {
    let dir = tempfile::tempdir().unwrap();
    let agent = |name: &str, id: &str, forbidden: &str| {
        format!(
            "[agents.{name}]\nprofile = \"custom\"\nagent_ids = [\"{id}\"]\ntask_types = [\"t\"]\n\
             prompt_modes = [\"m\"]\noutput = \"text\"\nrender_input_keys = [\"a\"]\n{forbidden}\n"
        )
    };
    let text = agent("logo", "logo", "[agents.logo.forbidden]\nvalue_patterns = ['''gs://\\S+''']\nkeys = []\n")
        + &agent("plain", "plain", "")
        + &agent("more", "more", "[agents.more.forbidden]\nextra_keys = [\"brandLogo\"]\n");
    let config = Config::from_toml(dir.path(), None, &text, None).unwrap();
    let of = |name: &str| config.forbidden_of(config.agents.all().iter().find(|a| a.name == name).unwrap());
    let url = "https://cdn.example.com/logo.png";
    assert_eq!(of("logo").matching_pattern(url), None);
    assert!(of("logo").matching_pattern("gs://bucket").is_some());
    assert!(!of("logo").is_forbidden_key("posterUrl") && of("logo").written_keys().is_none());
    assert!(of("plain").matching_pattern(url).is_some() && of("plain").is_forbidden_key("posterUrl"));
    assert!(of("more").is_forbidden_key("brandLogo") && of("more").is_forbidden_key("posterUrl"));
    assert!(of("more").matching_pattern(url).is_some());
    let bad = agent("x", "x", "[agents.x.forbidden]\nvalue_patterns = ['(unclosed']\n");
    let err = Config::from_toml(dir.path(), None, &bad, None).unwrap_err().to_string();
    assert!(err.contains("agents.x.forbidden.value_patterns"), "{err}");
}

/// A packet naming a renamed value by its old name is one `bless` may not write new.
#[test]
fn a_retired_branch_value_is_named_in_a_new_packet() {
    let dir = tempfile::tempdir().unwrap();
    let text = "[contract.renamed.insertionMode]\n\"staged-review\" = \"staged\"\n";
    let config = crate::Invocation::from(Config::from_toml(dir.path(), None, text, None).unwrap());
    let packet = |mode: &str| serde_json::json!({"agentId": "updateBlockFromLibrary", "resolvedBranch": {"insertionMode": mode}});
    let found = crate::packet::retired_values(&packet("staged"), &config);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].message.contains("\"staged\" is renamed \"staged-review\""), "{}", found[0].message);
    assert!(crate::packet::retired_values(&packet("staged-review"), &config).is_empty());
    assert!(crate::packet::retired_values(&packet("immediate"), &config).is_empty());
}
