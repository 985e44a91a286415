//! The resource files (prompt templates, schema files) as first read, for a run
//! that checks thousands of packets against them (the conformance gate): each is
//! read once, and the whole run sees one version of them. Without it, an invocation
//! reads them as they are on disk now. Read through the invocation only: the settings'
//! own readers say `_on_disk` in their names, so no call reads the disk where the run's
//! first read was meant. Kept by path, one entry per resource file of the suite.

use super::Invocation;
use crate::config::plain_template_name;
use crate::Result;
use std::borrow::Cow;
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

impl Invocation {
    /// Under [`Invocation::reading_once`], the templates as first read.
    pub(crate) fn read_prompts(&self) -> Option<&Templates> {
        let once = self.reads.as_deref()?;
        Some(once.prompts.get_or_init(|| Arc::new(self.settings().walk_prompt_templates())))
    }

    /// The parsed schema snapshot: parsed by `parse` once under
    /// [`Invocation::reading_once`] (and shared, not copied), else every time.
    pub(crate) fn snapshot_value(
        &self,
        parse: impl FnOnce() -> Result<serde_json::Value>,
    ) -> Result<Arc<serde_json::Value>> {
        let Some(once) = self.reads.as_deref() else { return parse().map(Arc::new) };
        if let Some(value) = once.snapshot.get() {
            return Ok(Arc::clone(value));
        }
        let value = Arc::new(parse()?);
        Ok(Arc::clone(once.snapshot.get_or_init(|| value)))
    }

    /// The bytes of the template `name` (relative to the prompts folder), if there is one.
    pub(crate) fn prompt_template(&self, name: &str) -> Option<Vec<u8>> {
        if !plain_template_name(name) {
            return None;
        }
        if let Some(found) = self.read_prompts().and_then(|all| all.iter().find(|(n, _)| n == name)) {
            return Some(found.1.clone());
        }
        self.settings().prompt_template_on_disk(name)
    }

    /// The prompt templates, `(name relative to the prompts folder, bytes)`, sorted by name.
    pub(crate) fn prompt_templates(&self) -> Vec<(String, Vec<u8>)> {
        match self.read_prompts() {
            Some(all) => all.to_vec(),
            None => self.settings().walk_prompt_templates(),
        }
    }

    /// The schema snapshot packets carry: its bytes, and the name to report them under.
    pub fn snapshot_bytes(&self) -> Result<(String, Cow<'static, [u8]>)> {
        self.settings().snapshot_resource().bytes(|file| self.read_resource(file))
    }

    /// The vendored Builder schema: its bytes, and the name to report them under.
    pub fn builder_schema_bytes(&self) -> Result<(String, Cow<'static, [u8]>)> {
        self.settings().builder_schema_resource().bytes(|file| self.read_resource(file))
    }

    /// The schema file `agent`'s packets carry: its own schema file, else the suite's snapshot.
    pub fn schema_bytes_of(&self, agent: &crate::profile::Profile) -> Result<(String, Cow<'static, [u8]>)> {
        self.settings().schema_resource_of(agent).bytes(|file| self.read_resource(file))
    }

    /// A resource file's bytes (from the first read, under [`Invocation::reading_once`]).
    fn read_resource(&self, file: &Path) -> Result<Vec<u8>> {
        let Some(once) = self.reads.as_deref() else { return self.settings().read_resource_on_disk(file) };
        let files = || once.files.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(bytes) = files().get(file).cloned() {
            return Ok(bytes);
        }
        let bytes = self.settings().read_resource_on_disk(file)?;
        files().insert(file.to_path_buf(), bytes.clone());
        Ok(bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Config;

    /// Read once, a template edited afterwards is not seen; without it, it is.
    #[test]
    fn templates_are_read_once_only_when_asked() {
        let dir = tempfile::tempdir().unwrap();
        crate::init::init(dir.path(), crate::bless::GoldenWrites::OnCommand, None).unwrap();
        let invocation = Invocation::from(Config::load(dir.path(), None).unwrap());
        let once = invocation.reading_once();
        let system = dir.path().join("references/prompts/system.md.j2");
        let before = once.prompt_template("system.md.j2").unwrap();
        let snapshot = once.snapshot_bytes().unwrap().1.into_owned();
        std::fs::write(&system, "edited").unwrap();
        std::fs::write(dir.path().join("references/block-screen-output-schema.json"), "{}").unwrap();
        assert_eq!(once.prompt_template("system.md.j2").unwrap(), before);
        assert!(once.prompt_templates().iter().any(|(name, bytes)| name == "system.md.j2" && *bytes == before));
        assert_eq!(once.snapshot_bytes().unwrap().1.into_owned(), snapshot);
        assert_eq!(invocation.prompt_template("system.md.j2").unwrap(), b"edited");
        assert_eq!(&*invocation.snapshot_bytes().unwrap().1, b"{}");
    }
}
