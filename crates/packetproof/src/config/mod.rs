//! Settings: every path and policy, in one place. Unknown settings are errors.
//!
//! The binary carries the project's own settings (`builtin::HARNESS_TOML`, its
//! `[paths]` dropped), so every command that needs no corpus works in any folder. A
//! `harness.toml` (named by `--config FILE`, else in `PACKETPROOF_ROOT`, else found in
//! the current directory or a parent) overrides them table by table: a table it
//! names is merged key by key into the built-in one, except `providers`, which it
//! replaces whole (a suite compiles only for the models it lists). A resource path
//! it does not name (`prompts`, `builder_schema`, `schema_snapshot`, `google_suffix`)
//! is the built-in copy of the project's file.

mod resources;
pub(crate) use resources::plain_template_name;

use crate::{builtin, Error, Result};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

mod merge;
mod tables;
pub use tables::Canonical;
pub(crate) use tables::{Checks, SuiteSettings};
mod provider;
use merge::{builtin_table, overlay, OwnSettings};
pub(crate) use provider::{OutputMode, Provider};
mod suite;
pub use suite::{Evaluator, PromptVersions, Release};
mod agents;
pub(crate) use crate::forbidden::Forbidden;
use crate::forbidden::RawForbidden;
pub use agents::Agents;
pub(crate) mod exporter_files;
pub(crate) mod glob;

pub(crate) const FILE_NAME: &str = "harness.toml";

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    #[serde(default)]
    paths: Paths,
    providers: BTreeMap<String, Provider>,
    forbidden: RawForbidden,
    schema: SchemaPin,
    taint: Taint,
    limits: Limits,
    #[serde(default)]
    corpus: CorpusSettings,
    exporter: Option<Exporter>,
    evaluator: Option<Evaluator>,
    #[serde(default)]
    release: Release,
    #[serde(default)]
    wire: Wire,
    #[serde(default)]
    packet: PacketRules,
    #[serde(default)]
    checks: Checks,
    #[serde(default)]
    canonical: Canonical,
    contract: Option<crate::profile::RawContract>,
    #[serde(default)]
    agents: BTreeMap<String, crate::profile::RawContract>,
    #[serde(default)]
    suite: SuiteSettings,
}

/// Where the suite's files are. `None`: the built-in copy of the project's file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Paths {
    #[serde(default = "default_fixtures")]
    pub(crate) fixtures: PathBuf,
    #[serde(default = "default_golden")]
    pub(crate) golden: PathBuf,
    pub prompts: Option<PathBuf>,
    /// The Builder schema, vendored byte for byte (the upstream the snapshot is generated from).
    pub(crate) builder_schema: Option<PathBuf>,
    pub schema_snapshot: Option<PathBuf>,
    pub(crate) google_suffix: Option<PathBuf>,
}

fn default_fixtures() -> PathBuf {
    PathBuf::from("fixtures")
}

fn default_golden() -> PathBuf {
    PathBuf::from("golden")
}

impl Default for Paths {
    fn default() -> Self {
        Paths {
            fixtures: default_fixtures(),
            golden: default_golden(),
            prompts: None,
            builder_schema: None,
            schema_snapshot: None,
            google_suffix: None,
        }
    }
}

/// Packet rules beyond the contract's wording (harness.toml `[packet]`; the
/// section may be left out, and then these defaults hold).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PacketRules {
    /// renderInput's top-level keys: a closed set. The default is the union of the
    /// reference exporter's shape and this project's (today the two agree).
    #[serde(default = "default_render_input_keys")]
    pub(crate) render_input_keys: Vec<String>,
    /// Keys of an asset example that hold a generator prompt.
    #[serde(default = "default_asset_prompt_keys")]
    pub(crate) asset_prompt_keys: Vec<String>,
    /// What a generator prompt in an asset example is: a failure, or a note.
    #[serde(default)]
    pub asset_example_prompts: Policy,
}

/// How a rule that other exporters break on purpose is reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, strum::IntoStaticStr)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum Policy {
    /// A note: the packet still holds (packets made by another exporter).
    Warn,
    /// A finding: the packet fails (the packets this project compiles).
    #[default]
    Fail,
}

impl Policy {
    pub(crate) fn name(self) -> &'static str {
        self.into()
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
pub(crate) struct SchemaPin {
    /// `None`: the suite names a Builder schema of its own and pins none here (its
    /// digest is then pinned in the lock file that `bless` writes).
    pub(crate) builder_sha256: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Taint {
    pub(crate) min_length: usize,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    pub max_file_bytes: u64,
}

/// `[corpus]`: what the corpus-wide checks require.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct CorpusSettings {
    /// `corpus::branch-coverage`: every branch value, and every pair of the main
    /// dimensions, has a golden packet. A new, small suite turns it off until it
    /// grows (the check is then reported as ignored, never as passed).
    #[serde(default = "yes")]
    pub(crate) require_branch_coverage: bool,
}

fn yes() -> bool {
    true
}

impl Default for CorpusSettings {
    fn default() -> Self {
        CorpusSettings { require_branch_coverage: true }
    }
}

/// `[exporter]`: an external program that makes the packets instead of the
/// built-in compiler (`bless`, `packet::regenerates`, `release-check`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Exporter {
    /// The program and its arguments; `{request}` is replaced by the request file's
    /// path. Run in the suite's directory; prints one packet on stdout.
    pub(crate) command: Vec<String>,
    /// Seconds before the exporter is killed and the fixture fails.
    #[serde(default = "default_timeout")]
    pub(crate) timeout_seconds: u64,
    /// The files its packets depend on (its own code, the app's, templates, inputs):
    /// paths or globs from the suite's directory, anywhere in its git repository
    /// (`exporter_files`). A change to one explains the golden changes it causes.
    #[serde(default)]
    pub(crate) files: Vec<String>,
    /// For prompts kept as code (constants, template literals, f-strings): a program and
    /// its arguments that prints the text of each template the app renders, as a JSON
    /// object `{"NAME": "TEXT", …}`, each named as the agents' template lists name it
    /// under `paths.prompts`. `bless` keeps each text there as the template's copy, and
    /// `corpus::lock` fails while a copy is not what the app reports.
    #[serde(default)]
    pub(crate) templates: Vec<String>,
    /// `files` resolved when the settings load.
    #[serde(skip)]
    pub(crate) resolved: exporter_files::Resolved,
}

fn default_timeout() -> u64 {
    60
}

/// `[wire]`: nothing any more. Its `allowed_settings` let a setting outside the packet
/// through with any value; a setting a call sends is reviewed material now (the packet's
/// `call` member), and the key is refused with where the settings went.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Wire {
    allowed_settings: Option<toml::Value>,
}

/// Why `[wire.allowed_settings]` is refused.
const ALLOWED_SETTINGS_RETIRED: &str = "wire.allowed_settings: retired. A setting a call sends (temperature, \
    tools, …) is reviewed material: the packet's `call` member carries it, bound by the checksum, and a call is \
    held to it (docs/packet-format.md); an agent that varies a setting per call declares its values under \
    [agents.NAME.call]. Delete the table";

/// What a command line puts in place of a setting of the file, as the settings load.
#[derive(Debug, Clone, Copy, Default)]
pub struct Overrides<'a> {
    /// `--google-suffix-file`: the Google suffix expected in packets made elsewhere.
    pub google_suffix: Option<&'a Path>,
    /// `prepare --schema`: the schema snapshot to pin (as given, not under the suite's root).
    pub schema_snapshot: Option<&'a Path>,
}

/// The loaded settings. Paths are resolved against the directory of harness.toml
/// (for the built-in settings: the current directory).
#[derive(Debug, Clone)]
pub struct Config {
    pub(crate) root: PathBuf,
    /// The harness.toml these settings came from; `None`: the built-in settings.
    pub(crate) file: Option<PathBuf>,
    /// `sha256:` of the settings text read: what a gate statement binds.
    pub(crate) settings_sha256: String,
    pub paths: Paths,
    pub providers: BTreeMap<String, Provider>,
    pub(crate) forbidden: Forbidden,
    pub(crate) schema: SchemaPin,
    pub(crate) taint: Taint,
    pub limits: Limits,
    pub(crate) corpus: CorpusSettings,
    pub exporter: Option<Exporter>,
    pub(crate) release: Release,
    pub packet: PacketRules,
    pub(crate) checks: Checks,
    pub canonical: Canonical,
    /// The suite's agents, each with its contract profile (the block builder's, or
    /// its own) and evaluator; a packet is judged by its agent's ([`Agents::of`]).
    pub agents: Agents,
    pub(crate) suite: SuiteSettings,
    /// The exact Google text-JSON suffix expected in packets.
    pub google_suffix: String,
}

impl Config {
    /// Load `root/harness.toml` (which must exist), and the Google suffix it names
    /// unless `suffix_override` (the global `--google-suffix-file`) is given.
    pub fn load(root: &Path, suffix_override: Option<&Path>) -> Result<Config> {
        Config::from_file(&root.join(FILE_NAME), suffix_override)
    }

    /// Load the settings file `file`; its directory is the suite's root.
    pub(crate) fn from_file(file: &Path, suffix_override: Option<&Path>) -> Result<Config> {
        let text = crate::fsutil::read_to_string(file, crate::fsutil::DEFAULT_MAX_BYTES)?;
        // An absolute root: an exporter runs in it, and its paths must not depend on where that is.
        let file = &std::path::absolute(file).map_err(|e| Error::io(file, e))?;
        let root = match file.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
            _ => PathBuf::from("."),
        };
        Config::from_toml(&root, Some(file), &text, suffix_override)
    }

    /// The built-in settings alone, with `root` (for fixtures and golden files) as the suite's root.
    pub(crate) fn builtin(root: &Path, suffix_override: Option<&Path>) -> Result<Config> {
        Config::from_toml(root, None, "", suffix_override)
    }

    /// The settings of the current directory: `--config FILE` (`explicit`), else
    /// `PACKETPROOF_ROOT`'s harness.toml, else the nearest one in the current
    /// directory or a parent, else the built-in settings.
    pub fn discover(explicit: Option<&Path>, suffix_override: Option<&Path>) -> Result<Config> {
        if let Some(file) = explicit {
            return Config::from_file(file, suffix_override);
        }
        if let Some(root) = &crate::env::Env::current()?.root {
            let file = root.join(FILE_NAME);
            if !file.is_file() {
                return Err(Error::Config {
                    file: file.display().to_string(),
                    message: format!("does not exist, and {} names {}", crate::env::ROOT, root.display()),
                });
            }
            return Config::from_file(&file, suffix_override);
        }
        let cwd = std::env::current_dir().map_err(|e| Error::io(".", e))?;
        match cwd.ancestors().find(|dir| dir.join(FILE_NAME).is_file()) {
            Some(dir) => Config::load(dir, suffix_override),
            None => Config::builtin(&cwd, suffix_override),
        }
    }

    /// [`Config::discover`], with what the command line puts in place of the file's settings.
    pub fn discover_with(explicit: Option<&Path>, overrides: Overrides) -> Result<Config> {
        let mut config = Config::discover(explicit, overrides.google_suffix)?;
        if let Some(file) = overrides.schema_snapshot {
            config.paths.schema_snapshot = Some(file.to_path_buf());
        }
        Ok(config)
    }

    /// Whether these settings are a suite's (a harness.toml was read), not the built-in ones alone.
    pub(crate) fn is_suite(&self) -> bool {
        self.file.is_some()
    }

    /// Commands that run a corpus (bless, test, release-check) need a harness.toml;
    /// the refusal says which file was looked for.
    pub fn require_suite(&self, command: &str) -> Result<&Path> {
        self.file.as_deref().ok_or_else(|| Error::Config {
            file: self.root.join(FILE_NAME).display().to_string(),
            message: format!(
                "{command} needs a conformance suite, but there is no {FILE_NAME} here or in any parent \
                     directory; create one with `packetproof init`, or name it with --config FILE or {}",
                crate::env::ROOT
            ),
        })
    }

    pub(crate) fn from_toml(root: &Path, file: Option<&Path>, text: &str, suffix: Option<&Path>) -> Result<Config> {
        let shown = file.map_or_else(|| "<built-in settings>".to_owned(), |f| f.display().to_string());
        let config_error = |message: String| Error::Config { file: shown.clone(), message };
        let user: toml::Table =
            toml::from_str(text).map_err(|e| config_error(crate::report::parse_error_of(text, &e.to_string())))?;
        let own = OwnSettings::of(&user);
        let mut merged = builtin_table();
        overlay(&mut merged, user);
        let raw: Raw =
            toml::Value::Table(merged).try_into().map_err(|e: toml::de::Error| config_error(e.to_string()))?;
        if raw.wire.allowed_settings.is_some() {
            return Err(config_error(ALLOWED_SETTINGS_RETIRED.into()));
        }
        let forbidden = Forbidden::from_settings(raw.forbidden).map_err(config_error)?;
        if raw.providers.is_empty() {
            return Err(config_error("providers: at least one provider is required".into()));
        }
        for (name, provider) in &raw.providers {
            if let Some(message) = provider.limit_problem() {
                return Err(config_error(format!("providers.{name}.max_output_tokens: {message}")));
            }
        }
        if let Some(exporter) = &raw.exporter {
            if exporter.command.first().is_none_or(|program| program.trim().is_empty()) {
                return Err(config_error("exporter.command: expected the program and its arguments".into()));
            }
            if exporter.timeout_seconds == 0 {
                return Err(config_error("exporter.timeout_seconds: expected at least 1".into()));
            }
        }
        if raw.suite.name.as_ref().is_some_and(|name| name.trim().is_empty()) {
            return Err(config_error("suite.name: expected a name that is not blank".into()));
        }
        suite::check_evaluator(raw.evaluator.as_ref()).map_err(config_error)?;
        for (name, reason) in &raw.checks.skip {
            if crate::Check::from_name(name).is_none() {
                return Err(config_error(format!(
                    "checks.skip: {name:?} is not a check (checks: {})",
                    crate::Check::names().join(", ")
                )));
            }
            if reason.trim().is_empty() {
                return Err(config_error(format!("checks.skip.{name:?}: give the reason the check is off")));
            }
            if let Some(Err(why)) = crate::Check::from_name(name).map(crate::Check::skippable) {
                return Err(config_error(format!("checks.skip: {name:?} can never be skipped: {why}")));
            }
        }
        let custom = |c: &crate::profile::RawContract| c.kind() == crate::profile::Kind::Custom;
        let every_agent_custom = match &raw.contract {
            Some(contract) => custom(contract),
            None => !raw.agents.is_empty() && raw.agents.values().all(custom),
        };
        if own.render_input_keys && every_agent_custom {
            return Err(config_error(
                "packet.render_input_keys: the block-builder profile's setting; a custom profile declares \
                 contract.render_input_keys"
                    .into(),
            ));
        }
        let mut agents = Agents::resolve(
            raw.contract,
            raw.agents,
            &raw.packet.render_input_keys,
            raw.evaluator.as_ref(),
            &raw.providers,
            &forbidden,
        )
        .map_err(&config_error)?;
        agents.root_schemas(root).map_err(&config_error)?;
        let mut schema = raw.schema;
        if own.builder_schema && !own.builder_pin {
            schema.builder_sha256 = None;
        }
        let mut paths = raw.paths;
        paths.fixtures = root.join(&paths.fixtures);
        paths.golden = root.join(&paths.golden);
        for path in
            [&mut paths.prompts, &mut paths.builder_schema, &mut paths.schema_snapshot, &mut paths.google_suffix]
                .into_iter()
                .flatten()
        {
            *path = root.join(&*path);
        }
        // Bounded and regular-only like every read: `/dev/zero` or a FIFO is refused, not consumed.
        let google_suffix = match suffix.or(paths.google_suffix.as_deref()) {
            Some(file) => crate::fsutil::read_to_string(file, raw.limits.max_file_bytes)?,
            None => builtin::GOOGLE_SUFFIX.to_owned(),
        };
        Ok(Config {
            root: root.to_path_buf(),
            file: file.map(Path::to_path_buf),
            settings_sha256: crate::digest::sha256(text.as_bytes()),
            paths,
            providers: raw.providers,
            forbidden,
            schema,
            taint: raw.taint,
            limits: raw.limits,
            corpus: raw.corpus,
            exporter: exporter_files::resolve(root, raw.exporter).map_err(config_error)?,
            release: raw.release,
            packet: raw.packet,
            checks: raw.checks,
            canonical: raw.canonical,
            agents,
            suite: raw.suite,
            google_suffix,
        })
    }

    /// The suite's name in a gate statement: `[suite] name`, else the name of its folder.
    pub(crate) fn suite_name(&self) -> String {
        match &self.suite.name {
            Some(name) => name.clone(),
            None => self
                .root
                .file_name()
                .map_or_else(|| self.root.display().to_string(), |n| n.to_string_lossy().into_owned()),
        }
    }

    /// The settings file's name as a message shows it.
    pub(crate) fn file_name(&self) -> String {
        self.file.as_ref().map_or_else(|| "the built-in settings".to_owned(), |f| f.display().to_string())
    }

    /// Why `max_tokens` is past the output limit harness.toml gives `model` of `provider`, if it is.
    pub(crate) fn output_limit_problem(&self, provider: &str, model: &str, max_tokens: f64) -> Option<String> {
        self.providers.get(provider)?.output_limit_problem(provider, model, max_tokens)
    }

    /// Whether harness.toml gives `model` of `provider` an output limit (`None`: unknown provider).
    pub(crate) fn has_output_limit(&self, provider: &str, model: &str) -> Option<bool> {
        self.providers.get(provider).map(|p| p.max_output_tokens.contains_key(model))
    }

    /// The agent that judges `packet` (see [`Agents::of`]).
    pub fn agent(&self, packet: &serde_json::Map<String, serde_json::Value>) -> &crate::profile::Profile {
        self.agents.of(packet)
    }

    /// The forbidden material `agent`'s packets and calls are scanned for: its own
    /// lists when it declares them, else the suite's `[forbidden]`.
    pub(crate) fn forbidden_of<'a>(&'a self, agent: &'a crate::profile::Profile) -> &'a Forbidden {
        agent.forbidden.as_ref().unwrap_or(&self.forbidden)
    }

    /// How `packet` (for its provider) carries the output contract (`None`: harness.toml
    /// does not name the provider, so it has no shape; each caller says what follows).
    pub(crate) fn output_mode(&self, packet: &serde_json::Map<String, serde_json::Value>) -> Option<OutputMode> {
        let provider = packet.get("provider").and_then(serde_json::Value::as_str).unwrap_or_default();
        self.output_mode_of(self.agent(packet), provider)
    }

    /// How `agent`'s packets for `provider` carry the output contract.
    pub(crate) fn output_mode_of(&self, agent: &crate::profile::Profile, provider: &str) -> Option<OutputMode> {
        let provider = self.providers.get(provider)?;
        Some(match agent.output {
            crate::profile::Output::Text => OutputMode::Text,
            crate::profile::Output::Schema => provider.output_mode(),
        })
    }
}

#[cfg(test)]
mod tests;
