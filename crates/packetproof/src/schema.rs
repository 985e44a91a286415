//! The runtime output schema. The Builder's block-screen schema is
//! upstream: it is vendored byte for byte at `paths.builder_schema` (see
//! `references/builder/PROVENANCE.md`), pinned by its sha256 in harness.toml, and
//! the snapshot `references/block-screen-output-schema.json` is generated from it
//! mechanically. Generation parses the upstream strictly, checks its shape
//! (`{name, description, schema}`) and prints it again as 2-space JSON; the result
//! must be the upstream bytes, so the snapshot is a byte-parity copy whose parity
//! is proven, not assumed.

use crate::report::{Finding, Location};
use crate::Invocation;
use crate::JsonPath;
use crate::{canonical, digest, fsutil, Error, Result};
use serde_json::Value;

/// The check name reported when the snapshot or the vendored upstream drifts.
pub(crate) const CHECK: crate::CorpusCheck = crate::CorpusCheck::SnapshotParity;
/// The snapshot's members, in the upstream's order.
const MEMBERS: [&str; 3] = ["name", "description", "schema"];

/// The vendored upstream, parsed strictly and shaped `{name, description, schema}`.
fn builder_value(config: &Invocation) -> Result<(String, Vec<u8>, Value)> {
    let (file, bytes) = config.builder_schema_bytes()?;
    let value = canonical::parse(&bytes).map_err(|e| e.in_file(file.clone()))?;
    let members: Vec<&str> = value.as_object().map(|m| m.keys().map(String::as_str).collect()).unwrap_or_default();
    if members != MEMBERS {
        return Err(Error::shape(
            file,
            JsonPath::root(),
            format!("an object with exactly the members {MEMBERS:?}, in that order"),
        ));
    }
    for key in ["name", "description"] {
        if value[key].as_str().is_none_or(|s| s.trim().is_empty()) {
            return Err(Error::shape(file, JsonPath::field(key), "a non-blank string"));
        }
    }
    if !value["schema"].is_object() {
        return Err(Error::shape(file, JsonPath::field("schema"), "a JSON Schema object"));
    }
    Ok((file, bytes.into_owned(), value))
}

/// The snapshot bytes the vendored upstream produces: 2-space JSON and a final
/// newline, byte-identical with the upstream (an error otherwise).
pub(crate) fn generate(config: &Invocation) -> Result<String> {
    let (file, bytes, value) = builder_value(config)?;
    let text = canonical::to_pretty(&value);
    if text.as_bytes() != bytes.as_slice() {
        let line = first_difference(&String::from_utf8_lossy(&bytes), &text);
        return Err(Error::shape(
            file,
            JsonPath::root(),
            format!("2-space JSON with a final newline (printing it again differs at line {line}), so that the snapshot can be byte-identical"),
        ));
    }
    Ok(text)
}

/// Whether parity applies: only when the suite names a Builder schema of its own
/// (`paths.builder_schema`). Otherwise the schema snapshot is the suite's own file
/// and nothing upstream generates it (`Err(why not)`).
pub(crate) fn parity_applies(config: &Invocation) -> std::result::Result<(), String> {
    match (&config.settings().paths.builder_schema, config.settings().is_suite()) {
        (Some(_), _) | (None, false) => Ok(()),
        (None, true) => Err(format!(
            "{} names no Builder schema (paths.builder_schema): the schema snapshot is the suite's own file, \
             pinned by {}",
            config.settings().file_name(),
            crate::lock::FILE_NAME
        )),
    }
}

/// Prove parity: the vendored upstream still has the pinned bytes, and the
/// snapshot is the same JSON as the upstream (parsed, so a checkout that turned
/// line endings into CRLF holds the same schema). Each drift is a finding; an
/// unreadable or malformed upstream is an error.
pub fn check(config: &Invocation) -> Result<Vec<Finding>> {
    let mut findings = pin_findings(config)?;
    let (builder_file, _, expected) = builder_value(config)?;
    let actual = match &config.settings().paths.schema_snapshot {
        Some(path) => match fsutil::read_optional(path, config.settings().limits.max_file_bytes)? {
            Some(bytes) => bytes,
            None => {
                let file = path.display().to_string();
                findings.push(Finding::new(
                    CHECK,
                    Location::named(file),
                    "snapshot is missing; `packetproof schema --write` generates it from the Builder schema",
                ));
                return Ok(findings);
            }
        },
        None => config.snapshot_bytes()?.1.into_owned(),
    };
    let file = config.snapshot_bytes().map_or_else(|_| String::new(), |(file, _)| file);
    let actual_value = canonical::parse(&actual).map_err(|e| e.in_file(file.clone()))?;
    if !crate::numbers::same(&actual_value, &expected) {
        let line = first_difference(&String::from_utf8_lossy(&actual), &canonical::to_pretty(&expected));
        findings.push(Finding::new(
            CHECK,
            Location::named(file),
            format!(
                "snapshot is not the same JSON as the Builder schema {builder_file} (first difference near line \
                 {line}): make one the other (`packetproof schema --write` regenerates an unedited snapshot, and \
                 never writes over one edited since the last bless)"
            ),
        ));
    }
    Ok(findings)
}

/// The vendored upstream against harness.toml's `schema.builder_sha256`, when it
/// pins one. A checkout with CRLF line endings holds the pin of the LF bytes.
fn pin_findings(config: &Invocation) -> Result<Vec<Finding>> {
    let Some(pinned) = &config.settings().schema.builder_sha256 else { return Ok(Vec::new()) };
    let (path, bytes) = config.builder_schema_bytes()?;
    let actual = digest::sha256(&bytes);
    if &actual == pinned || &digest::sha256(&crate::lock::without_crlf(&bytes)) == pinned {
        return Ok(Vec::new());
    }
    Ok(vec![Finding::new(
        CHECK,
        Location::named(path),
        format!(
            "the vendored Builder schema has {actual}, harness.toml pins {pinned}: it is a byte copy of upstream, \
             never edited here; replace it with the upstream file and update schema.builder_sha256 and PROVENANCE.md"
        ),
    )])
}

/// Write the snapshot atomically; returns whether its bytes changed. Refuses to
/// generate from a vendored upstream that no longer has the pinned bytes, and to
/// write over a snapshot that is not the one the lock pins (edited since the last
/// bless, or never blessed): packetproof never writes over a file a user edited.
pub fn write(config: &Invocation) -> Result<bool> {
    if let Err(why) = parity_applies(config) {
        return Err(Error::refused(
            config.settings().file_name(),
            format!("nothing generates the schema snapshot: {why}"),
        ));
    }
    if let Some(finding) = pin_findings(config)?.into_iter().next() {
        return Err(Error::refused(finding.path.to_string(), finding.message));
    }
    let text = generate(config)?;
    let Some(path) = &config.settings().paths.schema_snapshot else {
        let file =
            config.settings().file.clone().unwrap_or_else(|| config.settings().root.join(crate::config::FILE_NAME));
        return Err(Error::Config {
            file: file.display().to_string(),
            message: "names no paths.schema_snapshot, so the schema snapshot is built in and there is nothing to \
                      write; name one to write it"
                .into(),
        });
    };
    match fsutil::read_optional(path, config.settings().limits.max_file_bytes)? {
        Some(old) if old == text.as_bytes() => return Ok(false),
        Some(old) if !crate::lock::pins(config.settings(), path, &old)? => {
            return Err(Error::refused(
                path.display().to_string(),
                format!(
                    "the snapshot is not the one {} pins (edited since the last bless, or never blessed), and \
                     packetproof never writes over a file you edited: review it, then remove it and run \
                     `packetproof schema --write` again",
                    crate::lock::FILE_NAME
                ),
            ))
        }
        _ => {}
    }
    fsutil::write_atomic(path, text.as_bytes())?;
    Ok(true)
}

/// The snapshot as a JSON value (`{name, description, schema}`): the runtime
/// `outputSchema` of non-Google packets.
pub fn snapshot(config: &Invocation) -> Result<Value> {
    shared_snapshot(config).map(|snapshot| Value::clone(&snapshot))
}

/// [`snapshot`] for a reader: under [`Invocation::reading_once`](crate::Invocation::reading_once) the one parsed copy
/// (every prompt rendered names the schema, and copying it was a third of a render).
pub(crate) fn shared_snapshot(config: &Invocation) -> Result<std::sync::Arc<Value>> {
    config.snapshot_value(|| {
        let (file, bytes) = config.snapshot_bytes()?;
        canonical::parse(&bytes).map_err(|e| e.in_file(file))
    })
}

/// The schema `agent`'s packets carry as outputSchema, as a JSON value: its own schema
/// file, else the suite's [`snapshot`].
pub fn snapshot_of(config: &Invocation, agent: &crate::profile::Profile) -> Result<Value> {
    if agent.schema.is_none() {
        return snapshot(config);
    }
    let (file, bytes) = config.schema_bytes_of(agent)?;
    canonical::parse(&bytes).map_err(|e| e.in_file(file))
}

fn first_difference(a: &str, b: &str) -> usize {
    let mut lines = a.lines().zip(b.lines());
    lines.position(|(x, y)| x != y).unwrap_or_else(|| a.lines().count().min(b.lines().count())) + 1
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn project() -> crate::Invocation {
        crate::Invocation::from(crate::Config::load(Path::new(crate::PROJECT_ROOT), None).unwrap())
    }

    fn validator(config: &Invocation) -> jsonschema::Validator {
        let snapshot = snapshot(config).unwrap();
        jsonschema::validator_for(&snapshot["schema"]).unwrap()
    }

    /// A project copy whose vendored upstream holds `text` (pin unchanged).
    fn with_upstream(text: &str) -> (tempfile::TempDir, crate::Invocation) {
        with_upstream_pinned(text, None)
    }

    /// [`with_upstream`], pinning the upstream's digest `pin` when given.
    fn with_upstream_pinned(text: &str, pin: Option<String>) -> (tempfile::TempDir, crate::Invocation) {
        let dir = tempfile::tempdir().unwrap();
        let mut config = project().settings().clone();
        config.paths.builder_schema = Some(dir.path().join("upstream.json"));
        config.paths.schema_snapshot = Some(dir.path().join("snapshot.json"));
        if pin.is_some() {
            config.schema.builder_sha256 = pin;
        }
        std::fs::write(dir.path().join("upstream.json"), text).unwrap();
        (dir, config.into())
    }

    #[test]
    fn committed_snapshot_matches_the_vendored_upstream() {
        assert_eq!(check(&project()).unwrap(), Vec::new());
        let config = project();
        assert_eq!(config.snapshot_bytes().unwrap().1, config.builder_schema_bytes().unwrap().1);
    }

    #[test]
    fn an_edited_upstream_breaks_the_pin_and_write_refuses() {
        let original = String::from_utf8(project().builder_schema_bytes().unwrap().1.into_owned()).unwrap();
        let (_dir, config) = with_upstream(&original.replacen("\"mustHave\"", "\"must\"", 1));
        let findings = check(&config).unwrap();
        assert_eq!(findings.len(), 2, "{findings:#?}");
        assert!(findings[0].message.contains("harness.toml pins"), "{findings:#?}");
        assert!(findings[1].message.contains("snapshot is missing"), "{findings:#?}");
        assert!(write(&config).unwrap_err().to_string().contains("harness.toml pins"));
    }

    /// A Windows checkout (CRLF) of both files is the same schema: the pin holds on the
    /// LF bytes and parity on the parsed JSON.
    #[test]
    fn a_crlf_checkout_holds_the_pin_and_parity() {
        let original = String::from_utf8(project().builder_schema_bytes().unwrap().1.into_owned()).unwrap();
        let crlf = original.replace('\n', "\r\n");
        let (dir, config) = with_upstream(&crlf);
        std::fs::write(dir.path().join("snapshot.json"), &crlf).unwrap();
        assert_eq!(check(&config).unwrap(), Vec::new());
        let edited = crlf.replacen("\"mustHave\"", "\"must\"", 1);
        std::fs::write(dir.path().join("snapshot.json"), edited).unwrap();
        assert_eq!(check(&config).unwrap().len(), 1);
    }

    /// Parity is of values: a snapshot re-saved with `1.0` for `1` is the same schema
    /// (as a re-indented one is); another value is not.
    #[test]
    fn a_snapshot_with_the_same_values_in_other_spellings_holds_parity() {
        let original = String::from_utf8(project().builder_schema_bytes().unwrap().1.into_owned()).unwrap();
        let (dir, config) = with_upstream(&original);
        let spelled = original.replacen("\"minItems\": 1\n", "\"minItems\": 1.0\n", 1);
        assert_ne!(spelled, original);
        std::fs::write(dir.path().join("snapshot.json"), &spelled).unwrap();
        assert_eq!(check(&config).unwrap(), Vec::new());
        std::fs::write(dir.path().join("snapshot.json"), spelled.replacen("1.0\n", "2\n", 1)).unwrap();
        assert!(check(&config).unwrap()[0].message.contains("is not the same JSON"));
    }

    #[test]
    fn generation_refuses_an_upstream_it_cannot_reproduce() {
        let original = String::from_utf8(project().builder_schema_bytes().unwrap().1.into_owned()).unwrap();
        let value: Value = serde_json::from_str(&original).unwrap();
        let cases = [
            (serde_json::to_string(&value).unwrap(), "printing it again differs"),
            (original.replacen("\"name\"", "\"title\"", 1), "exactly the members"),
            (original.trim_end().to_owned(), "printing it again differs"),
        ];
        for (text, expected) in cases {
            let (_dir, config) = with_upstream_pinned(&text, Some(digest::sha256(text.as_bytes())));
            let err = generate(&config).unwrap_err().to_string();
            assert!(err.contains(expected), "{err}");
        }
    }

    fn block(v: &mut Value) -> &mut Value {
        &mut v["result"]["onboardingStrategySequence"][0]
    }

    /// A minimal valid output, then one break per case; each must be rejected.
    #[test]
    fn rejects_outputs_that_break_the_contract() {
        let valid = serde_json::json!({"result": {"onboardingStrategySequence": [{
            "id": "b", "name": "B", "blockType": "motivation", "firstScreenId": "s1", "description": "d",
            "instructions": [{"level": "mustHave", "text": "x"}, {"level": "should", "text": "y"}],
            "blockContract": {"inputVariables": [], "outputAssignment": []},
            "dataUsage": {"items": []},
            "screens": [{"id": "s1", "screenType": "HeroContent", "content": {"copy": {"title": "t"}}}]
        }]}});
        let validator = validator(&project());
        let errors: Vec<String> =
            validator.iter_errors(&valid).map(|e| format!("{e} at {}", e.instance_path)).collect();
        assert!(errors.is_empty(), "{errors:#?}");
        type Break = fn(&mut Value);
        let breaks: [(&str, Break); 5] = [
            ("no result envelope", |v| *v = v["result"].clone()),
            ("no screens", |v| drop(block(v).as_object_mut().unwrap().remove("screens"))),
            ("screen without content", |v| drop(block(v)["screens"][0].as_object_mut().unwrap().remove("content"))),
            ("unknown screen type", |v| block(v)["screens"][0]["screenType"] = "Video".into()),
            ("no instructions", |v| drop(block(v).as_object_mut().unwrap().remove("instructions"))),
        ];
        for (name, break_it) in breaks {
            let mut broken = valid.clone();
            break_it(&mut broken);
            assert!(!validator.is_valid(&broken), "accepted an output with {name}");
        }
    }
}
