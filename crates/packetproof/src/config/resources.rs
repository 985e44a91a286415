//! The settings' resource files (prompt templates, schema files) as they are on disk
//! now, or built in. An [`Invocation`](crate::Invocation) that reads them once goes
//! through the same [`Resource`]s.

use super::Config;
use crate::{builtin, Result};
use std::borrow::Cow;
use std::path::{Component, Path};

/// A schema file the settings name, or the built-in copy of the project's.
pub(crate) enum Resource<'a> {
    File(&'a Path),
    Builtin { name: &'static str, text: &'static str },
}

impl Resource<'_> {
    /// Its bytes (`read` reads a file), and the name to report them under.
    pub(crate) fn bytes(&self, read: impl FnOnce(&Path) -> Result<Vec<u8>>) -> Result<(String, Cow<'static, [u8]>)> {
        match self {
            Resource::File(file) => Ok((file.display().to_string(), Cow::Owned(read(file)?))),
            Resource::Builtin { name, text } => Ok((format!("<built-in {name}>"), Cow::Borrowed(text.as_bytes()))),
        }
    }
}

impl Config {
    /// The schema snapshot packets carry.
    pub(crate) fn snapshot_resource(&self) -> Resource<'_> {
        match &self.paths.schema_snapshot {
            Some(file) => Resource::File(file),
            None => Resource::Builtin { name: builtin::SNAPSHOT_PATH, text: builtin::SCHEMA_SNAPSHOT },
        }
    }

    /// The vendored Builder schema.
    pub(crate) fn builder_schema_resource(&self) -> Resource<'_> {
        match &self.paths.builder_schema {
            Some(file) => Resource::File(file),
            None => Resource::Builtin { name: builtin::BUILDER_PATH, text: builtin::BUILDER_SCHEMA },
        }
    }

    /// The schema file `agent`'s packets carry: the agent's own (`schema`), else the
    /// suite's schema snapshot.
    pub(crate) fn schema_resource_of<'a>(&'a self, agent: &'a crate::profile::Profile) -> Resource<'a> {
        agent.schema.as_deref().map_or_else(|| self.snapshot_resource(), Resource::File)
    }

    /// A resource file's bytes, bounded by `limits.max_file_bytes`.
    pub(crate) fn read_resource_on_disk(&self, file: &Path) -> Result<Vec<u8>> {
        crate::fsutil::read_bytes(file, self.limits.max_file_bytes)
    }

    /// The name the schema snapshot is reported under (without reading it).
    pub fn snapshot_name(&self) -> String {
        match &self.paths.schema_snapshot {
            Some(file) => file.display().to_string(),
            None => format!("<built-in {}>", builtin::SNAPSHOT_PATH),
        }
    }

    /// The bytes of the template `name` (relative to the prompts folder) as it is on disk
    /// now (or built in), if there is one. Commands read templates through
    /// [`Invocation::prompt_template`](crate::Invocation::prompt_template), which decides.
    pub(crate) fn prompt_template_on_disk(&self, name: &str) -> Option<Vec<u8>> {
        if !plain_template_name(name) {
            return None;
        }
        match &self.paths.prompts {
            Some(root) => crate::fsutil::read_bytes(&root.join(name), self.limits.max_file_bytes).ok(),
            None => builtin::prompt(name).map(|text| text.as_bytes().to_vec()),
        }
    }

    /// The prompt templates as they are on disk now (or built in),
    /// `(name relative to the prompts folder, bytes)`, sorted by name.
    pub(crate) fn walk_prompt_templates(&self) -> Vec<(String, Vec<u8>)> {
        let Some(root) = &self.paths.prompts else {
            return builtin::PROMPTS
                .iter()
                .map(|(name, text)| ((*name).to_owned(), text.as_bytes().to_vec()))
                .collect();
        };
        walkdir::WalkDir::new(root)
            .sort_by_file_name()
            .into_iter()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_type().is_file())
            .filter_map(|e| {
                let name = e.path().strip_prefix(root).ok()?.to_string_lossy().replace('\\', "/");
                Some((name, crate::fsutil::read_bytes(e.path(), self.limits.max_file_bytes).ok()?))
            })
            .collect()
    }
}

/// `name` comes from packets (promptVersions keys): only plain relative components are
/// looked up, so `../` or an absolute path never reads outside the prompts folder.
pub(crate) fn plain_template_name(name: &str) -> bool {
    !name.is_empty() && Path::new(name).components().all(|c| matches!(c, Component::Normal(_)))
}
