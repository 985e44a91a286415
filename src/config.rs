//! `harness.toml`: every path and policy, in one place. Unknown settings are errors.

use crate::{Error, Result};
use regex::RegexSet;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub const FILE_NAME: &str = "harness.toml";

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    paths: Paths,
    providers: BTreeMap<String, Provider>,
    forbidden: RawForbidden,
    schema: SchemaPin,
    taint: Taint,
    limits: Limits,
    #[serde(default)]
    wire: Wire,
    #[serde(default)]
    packet: PacketRules,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Paths {
    pub fixtures: PathBuf,
    pub golden: PathBuf,
    pub prompts: PathBuf,
    /// The Builder schema, vendored byte for byte (the upstream the snapshot is generated from).
    pub builder_schema: PathBuf,
    pub schema_snapshot: PathBuf,
    pub google_suffix: PathBuf,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Provider {
    pub models: Vec<String>,
    #[serde(default)]
    pub text_json: bool,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawForbidden {
    keys: Vec<String>,
    blueprint_keys: Vec<String>,
    value_patterns: Vec<String>,
}

/// Packet rules beyond the contract's wording (harness.toml `[packet]`; the
/// section may be left out, and then these defaults hold).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PacketRules {
    /// renderInput's top-level keys: a closed set. The default is the union of the
    /// reference exporter's shape and this project's (today the two agree).
    #[serde(default = "default_render_input_keys")]
    pub render_input_keys: Vec<String>,
    /// Keys of an asset example that hold a generator prompt.
    #[serde(default = "default_asset_prompt_keys")]
    pub asset_prompt_keys: Vec<String>,
    /// What a generator prompt in an asset example is: a failure, or a note.
    #[serde(default)]
    pub asset_example_prompts: Policy,
}

/// How a rule that other exporters break on purpose is reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Policy {
    /// A note: the packet still holds (packets made by another exporter).
    Warn,
    /// A finding: the packet fails (the packets this project compiles).
    #[default]
    Fail,
}

impl Policy {
    pub const fn name(self) -> &'static str {
        match self {
            Policy::Warn => "warn",
            Policy::Fail => "fail",
        }
    }
}

fn default_render_input_keys() -> Vec<String> {
    ["promptMode", "sourceExample", "target", "evidence", "variableMappings", "operatorInstruction"]
        .map(String::from)
        .to_vec()
}

fn default_asset_prompt_keys() -> Vec<String> {
    ["promptTemplate", "negativePrompt"].map(String::from).to_vec()
}

impl Default for PacketRules {
    fn default() -> Self {
        PacketRules {
            render_input_keys: default_render_input_keys(),
            asset_prompt_keys: default_asset_prompt_keys(),
            asset_example_prompts: Policy::default(),
        }
    }
}

/// The vendored Builder schema is pinned by the sha256 of its bytes, so a hand
/// edit of the upstream copy cannot regenerate a snapshot that still "matches".
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SchemaPin {
    pub builder_sha256: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Taint {
    pub min_length: usize,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    pub max_file_bytes: u64,
}

/// `[wire]`: request settings outside the packet that a captured provider request
/// may carry, per API, as dotted paths from the body root (`temperature`,
/// `generationConfig.temperature`). Anything else outside the packet is a finding.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Wire {
    #[serde(default)]
    pub allowed_settings: AllowedSettings,
}

/// One list per API; an unknown API name is an error like any unknown setting.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AllowedSettings {
    #[serde(default)]
    pub anthropic: Vec<String>,
    #[serde(default, rename = "openai-chat")]
    pub openai_chat: Vec<String>,
    #[serde(default, rename = "openai-responses")]
    pub openai_responses: Vec<String>,
    #[serde(default)]
    pub gemini: Vec<String>,
}

/// Forbidden packet material: keys anywhere, and patterns in string values.
#[derive(Debug, Clone)]
pub struct Forbidden {
    pub keys: Vec<String>,
    /// Keys refused inside a compile input's source blueprint only, exact case
    /// (the reference's blueprint scan): generated media and provider records.
    pub blueprint_keys: Vec<String>,
    pub patterns: Vec<String>,
    pub(crate) set: RegexSet,
}

/// The loaded settings. Paths are resolved against the directory of harness.toml.
#[derive(Debug, Clone)]
pub struct Config {
    pub root: PathBuf,
    pub paths: Paths,
    pub providers: BTreeMap<String, Provider>,
    pub forbidden: Forbidden,
    pub schema: SchemaPin,
    pub taint: Taint,
    pub limits: Limits,
    pub wire: Wire,
    pub packet: PacketRules,
    /// The exact Google text-JSON suffix expected in packets.
    pub google_suffix: String,
}

impl Config {
    /// Load `harness.toml` from `root`, and the Google suffix it names unless
    /// `suffix_override` (the global `--google-suffix-file`) is given.
    pub fn load(root: &Path, suffix_override: Option<&Path>) -> Result<Config> {
        let file = root.join(FILE_NAME);
        let text = crate::fsutil::read_to_string(&file, crate::fsutil::DEFAULT_MAX_BYTES)?;
        Config::from_toml(root, &file.display().to_string(), &text, suffix_override)
    }

    pub(crate) fn from_toml(root: &Path, file: &str, text: &str, suffix_override: Option<&Path>) -> Result<Config> {
        let config_error = |message: String| Error::Config { file: file.to_owned(), message };
        let raw: Raw = toml::from_str(text).map_err(|e| config_error(e.to_string()))?;
        let set = RegexSet::new(&raw.forbidden.value_patterns)
            .map_err(|e| config_error(format!("forbidden.value_patterns: {e}")))?;
        if raw.providers.is_empty() {
            return Err(config_error("providers: at least one provider is required".into()));
        }
        let mut paths = raw.paths;
        for path in [
            &mut paths.fixtures,
            &mut paths.golden,
            &mut paths.prompts,
            &mut paths.builder_schema,
            &mut paths.schema_snapshot,
            &mut paths.google_suffix,
        ] {
            *path = root.join(&*path);
        }
        let suffix_file = suffix_override.map(Path::to_path_buf).unwrap_or_else(|| paths.google_suffix.clone());
        // Bounded and regular-only like every read: `/dev/zero` or a FIFO is refused, not consumed.
        let google_suffix = crate::fsutil::read_to_string(&suffix_file, raw.limits.max_file_bytes)?;
        Ok(Config {
            root: root.to_path_buf(),
            paths,
            providers: raw.providers,
            forbidden: Forbidden {
                keys: raw.forbidden.keys,
                blueprint_keys: raw.forbidden.blueprint_keys,
                patterns: raw.forbidden.value_patterns,
                set,
            },
            schema: raw.schema,
            taint: raw.taint,
            limits: raw.limits,
            wire: raw.wire,
            packet: raw.packet,
            google_suffix,
        })
    }

    /// Whether packets for `provider` use text-JSON mode (no outputSchema, suffix appended).
    pub fn is_text_json(&self, provider: &str) -> bool {
        self.providers.get(provider).is_some_and(|p| p.text_json)
    }

    /// The directory holding harness.toml: `PACKETPROOF_ROOT`, else the nearest
    /// ancestor of the current directory that has one.
    pub fn find_root() -> Result<PathBuf> {
        if let Some(root) = &crate::env::Env::current()?.root {
            return Ok(root.clone());
        }
        let cwd = std::env::current_dir().map_err(|e| Error::io(".", e))?;
        cwd.ancestors()
            .find(|dir| dir.join(FILE_NAME).is_file())
            .map(Path::to_path_buf)
            .ok_or_else(|| Error::Usage(format!("no {FILE_NAME} in {} or any parent directory", cwd.display())))
    }
}

impl Forbidden {
    /// The first configured pattern that matches `text`, if any.
    pub fn matching_pattern(&self, text: &str) -> Option<&str> {
        self.set.matches(text).iter().next().map(|i| self.patterns[i].as_str())
    }

    /// Case-insensitive: `PreviewScreens` is the same render-only snapshot.
    pub fn is_forbidden_key(&self, key: &str) -> bool {
        self.keys.iter().any(|k| k.eq_ignore_ascii_case(key))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_setting_is_a_loud_error() {
        let dir = tempfile::tempdir().unwrap();
        let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(FILE_NAME)).unwrap();
        let text = text.replace("[taint]\n", "[taint]\nmin_lenght = 3\n");
        let err = Config::from_toml(dir.path(), "harness.toml", &text, None).unwrap_err().to_string();
        assert!(err.contains("unknown field `min_lenght`"), "{err}");
    }

    #[test]
    fn an_unknown_api_in_wire_allowed_settings_is_a_loud_error() {
        let dir = tempfile::tempdir().unwrap();
        let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(FILE_NAME)).unwrap();
        let text = text.replace("[wire.allowed_settings]\n", "[wire.allowed_settings]\nopenai-chats = []\n");
        let err = Config::from_toml(dir.path(), "harness.toml", &text, None).unwrap_err().to_string();
        assert!(err.contains("unknown field `openai-chats`"), "{err}");
    }

    #[test]
    fn bad_pattern_is_a_loud_error() {
        let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(FILE_NAME)).unwrap();
        let text = text.replace("value_patterns = [", "value_patterns = [ '(unclosed',");
        let err = Config::from_toml(Path::new("."), "harness.toml", &text, None).unwrap_err().to_string();
        assert!(err.contains("forbidden.value_patterns"), "{err}");
    }
}
