//! A provider's settings (harness.toml `[providers.<name>]`): the models the project
//! compiles for, each model's maximum output tokens, and text-JSON mode.

use serde::Deserialize;
use std::collections::BTreeMap;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Provider {
    pub models: Vec<String>,
    /// Each model's maximum output tokens (from the provider's model documentation): a
    /// packet asking for more is one the provider would reject. Optional per model; a
    /// model without one is noted, not checked.
    #[serde(default)]
    pub(crate) max_output_tokens: BTreeMap<String, u64>,
    #[serde(default)]
    pub(crate) text_json: bool,
}

/// How a provider's packets carry the output contract: decided once, from
/// harness.toml's `text_json`, and matched on wherever the shape matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OutputMode {
    /// `outputSchema` in the packet, userMessage sent unchanged.
    Schema,
    /// Text-JSON (Google): no `outputSchema`, the exact suffix appended to userMessage.
    TextJson,
    /// Plain text (a contract profile with `output = "text"`): no `outputSchema`, no
    /// suffix, whatever the provider.
    Text,
}

impl Provider {
    pub(crate) fn output_mode(&self) -> OutputMode {
        if self.text_json {
            OutputMode::TextJson
        } else {
            OutputMode::Schema
        }
    }

    /// A limit for a model the provider does not list (a typo would check nothing), or of zero.
    pub(super) fn limit_problem(&self) -> Option<String> {
        self.max_output_tokens.iter().find_map(|(model, limit)| {
            if !self.models.contains(model) {
                Some(format!("{model:?} is not in models {:?}", self.models))
            } else {
                (*limit == 0).then(|| format!("{model:?}: expected at least 1"))
            }
        })
    }

    /// Why `max_tokens` is past `model`'s output limit, if it is (`provider` names the setting).
    pub(super) fn output_limit_problem(&self, provider: &str, model: &str, max_tokens: f64) -> Option<String> {
        let limit = *self.max_output_tokens.get(model)?;
        (max_tokens > limit as f64).then(|| {
            format!(
                "maxTokens {max_tokens} exceeds model {model:?}'s output limit of {limit} tokens \
                 (harness.toml providers.{provider}.max_output_tokens): the provider would reject the request"
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::config::{Config, FILE_NAME};
    use std::path::Path;

    #[test]
    fn output_limits_name_listed_models_and_a_plain_models_list_still_loads() {
        let dir = tempfile::tempdir().unwrap();
        let text = std::fs::read_to_string(Path::new(crate::PROJECT_ROOT).join(FILE_NAME)).unwrap();
        let root = Path::new(crate::PROJECT_ROOT);
        let load = |text: &str| Config::from_toml(root, Some(Path::new("harness.toml")), text, None);
        let typo = text.replace("\"claude-opus-4-1\" = 32000", "\"claude-opus-41\" = 32000");
        let err = load(&typo).unwrap_err().to_string();
        assert!(err.contains("providers.anthropic.max_output_tokens: \"claude-opus-41\" is not in models"), "{err}");
        let zero = text.replace("\"claude-opus-4-1\" = 32000", "\"claude-opus-4-1\" = 0");
        assert!(load(&zero).unwrap_err().to_string().contains("expected at least 1"));
        let config = load(&text).unwrap();
        assert_eq!(config.output_limit_problem("anthropic", "claude-opus-4-1", 32000.0), None);
        let past = config.output_limit_problem("anthropic", "claude-opus-4-1", 64000.0).unwrap();
        assert!(
            past.starts_with("maxTokens 64000 exceeds model \"claude-opus-4-1\"'s output limit of 32000"),
            "{past}"
        );
        let plain = "[providers.openai]\nmodels = [\"m\"]\n";
        let config = Config::from_toml(dir.path(), Some(Path::new("harness.toml")), plain, None).unwrap();
        assert_eq!(config.has_output_limit("openai", "m"), Some(false));
        assert_eq!(config.output_limit_problem("openai", "m", 1e7), None);
    }

    #[test]
    fn output_mode_is_decided_per_configured_provider_and_unknown_is_none() {
        use crate::config::OutputMode;
        let config = Config::load(Path::new(crate::PROJECT_ROOT), None).unwrap();
        let agent = &config.agents.all()[0];
        assert_eq!(config.output_mode_of(agent, "google"), Some(OutputMode::TextJson));
        assert_eq!(config.output_mode_of(agent, "openai"), Some(OutputMode::Schema));
        assert_eq!(config.output_mode_of(agent, "anthropic"), Some(OutputMode::Schema));
        assert_eq!(config.output_mode_of(agent, "mistral"), None);
    }
}
