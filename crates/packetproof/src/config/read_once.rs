//! The resource files (prompt templates, schema files) as first read, for a run
//! that checks thousands of packets against them (the conformance gate): each is
//! read once, and the whole run sees one version of them. Also the walk that reads
//! the templates folder.

use super::Config;
use crate::{builtin, Result};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

/// Prompt templates as read: `(name relative to the prompts folder, bytes)`, by name.
pub(crate) type Templates = Arc<Vec<(String, Vec<u8>)>>;

#[derive(Debug, Default)]
pub(super) struct ReadOnce {
    prompts: OnceLock<Templates>,
    files: Mutex<HashMap<PathBuf, Vec<u8>>>,
    snapshot: OnceLock<Arc<serde_json::Value>>,
}

impl Config {
    /// These settings, reading each template and schema file once from now on.
    pub(crate) fn reading_once(mut self) -> Config {
        self.read_once = Some(Arc::default());
        self
    }

    /// Under [`Config::reading_once`], the templates as first read.
    pub(crate) fn read_prompts(&self) -> Option<&Templates> {
        let once = self.read_once.as_deref()?;
        Some(once.prompts.get_or_init(|| Arc::new(self.walk_prompt_templates())))
    }

    /// The parsed schema snapshot: parsed by `parse` once under
    /// [`Config::reading_once`] (and shared, not copied), else every time.
    pub(crate) fn snapshot_value(
        &self,
        parse: impl FnOnce() -> Result<serde_json::Value>,
    ) -> Result<Arc<serde_json::Value>> {
        let Some(once) = self.read_once.as_deref() else { return parse().map(Arc::new) };
        if let Some(value) = once.snapshot.get() {
            return Ok(Arc::clone(value));
        }
        let value = Arc::new(parse()?);
        Ok(Arc::clone(once.snapshot.get_or_init(|| value)))
    }

    /// The prompt templates as they are on disk now (or built in), sorted by name.
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

    /// The schema file `agent`'s packets carry (its bytes, and the name to report them
    /// under): the agent's own (`schema`), else the suite's schema snapshot.
    pub fn schema_bytes_of(
        &self,
        agent: &crate::profile::Profile,
    ) -> Result<(String, std::borrow::Cow<'static, [u8]>)> {
        match &agent.schema {
            Some(file) => Ok((file.display().to_string(), std::borrow::Cow::Owned(self.read_resource(file)?))),
            None => self.snapshot_bytes(),
        }
    }

    /// A resource file's bytes (from the first read, under [`Config::reading_once`]).
    pub(super) fn read_resource(&self, file: &Path) -> Result<Vec<u8>> {
        let files = |once: &ReadOnce| once.files.lock().unwrap_or_else(|e| e.into_inner()).get(file).cloned();
        if let Some(bytes) = self.read_once.as_deref().and_then(files) {
            return Ok(bytes);
        }
        let bytes = crate::fsutil::read_bytes(file, self.limits.max_file_bytes)?;
        if let Some(once) = &self.read_once {
            once.files.lock().unwrap_or_else(|e| e.into_inner()).insert(file.to_path_buf(), bytes.clone());
        }
        Ok(bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Read once, a template edited afterwards is not seen; without it, it is.
    #[test]
    fn templates_are_read_once_only_when_asked() {
        let dir = tempfile::tempdir().unwrap();
        crate::init::init(dir.path(), crate::bless::GoldenWrites::OnCommand, None).unwrap();
        let config = Config::load(dir.path(), None).unwrap();
        let once = config.clone().reading_once();
        let system = dir.path().join("references/prompts/system.md.j2");
        let before = once.prompt_template("system.md.j2").unwrap();
        let snapshot = once.snapshot_bytes().unwrap().1.into_owned();
        std::fs::write(&system, "edited").unwrap();
        std::fs::write(dir.path().join("references/block-screen-output-schema.json"), "{}").unwrap();
        assert_eq!(once.prompt_template("system.md.j2").unwrap(), before);
        assert!(once.prompt_templates().iter().any(|(name, bytes)| name == "system.md.j2" && *bytes == before));
        assert_eq!(once.snapshot_bytes().unwrap().1.into_owned(), snapshot);
        assert_eq!(config.prompt_template("system.md.j2").unwrap(), b"edited");
        assert_eq!(&*config.snapshot_bytes().unwrap().1, b"{}");
    }
}
