//! A negative case's packet, derived from another case's golden packet by a few
//! declared edits (`[packet]` in expect.toml) instead of committed as a hand-broken
//! copy: it follows every re-bless of its base, so a template edit never leaves a
//! negative case stale (`PACKETPROOF_BLESS=1 cargo test` stays the one fix).
//!
//! ```toml
//! [packet]
//! from = "google-staged-both-selected"   # the case whose golden packet is the base
//! seal = "both"                          # both hashes recomputed (default); "checksum"; "none"
//! [[packet.edit]]
//! path = "/resolvedBranch/neighbours"    # a JSON pointer (RFC 6901)
//! set = "none"                           # or copy = "/other/pointer", or append = "text"
//! ```

use crate::{digest, fsutil, Config, Error, Result};
use serde_json::Value;
use std::path::Path;

/// expect.toml `[packet]`.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Derivation {
    /// The case whose golden packet the edits start from.
    pub(crate) from: String,
    #[serde(default)]
    seal: Seal,
    edit: Vec<Edit>,
}

/// Which hashes are recomputed after the edits (a hash break keeps its broken value).
#[derive(Debug, Clone, Copy, Default, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
enum Seal {
    #[default]
    Both,
    Checksum,
    None,
}

/// One edit: at `path`, exactly one of `set` (a value), `copy` (the value at another
/// pointer) or `append` (text added to a string).
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Edit {
    path: String,
    set: Option<toml::Value>,
    copy: Option<String>,
    append: Option<String>,
}

impl Derivation {
    /// The base golden packet with the edits applied and sealed. `expect` names the
    /// declaring file in errors.
    pub(crate) fn derive(&self, config: &Config, expect: &Path) -> Result<Value> {
        let shown = expect.display().to_string();
        let problem = |message: String| Error::Config { file: shown.clone(), message };
        let base = config.paths.golden.join(&self.from).join(super::PACKET_FILE);
        let mut packet = fsutil::read_json(&base, config.limits.max_file_bytes)?;
        if self.edit.is_empty() {
            return Err(problem(
                "packet.edit: expected at least one edit (else the base case is checked twice)".into(),
            ));
        }
        for (i, edit) in self.edit.iter().enumerate() {
            let value = match (&edit.set, &edit.copy, &edit.append) {
                (Some(value), None, None) => serde_json::to_value(value).map_err(|e| problem(e.to_string()))?,
                (None, Some(from), None) => packet
                    .pointer(from)
                    .cloned()
                    .ok_or_else(|| problem(format!("packet.edit[{i}].copy: {from} is not in {}", base.display())))?,
                (None, None, Some(text)) => match packet.pointer(&edit.path) {
                    Some(Value::String(old)) => Value::String(format!("{old}{text}")),
                    _ => return Err(problem(format!("packet.edit[{i}].append: {} is not a string", edit.path))),
                },
                _ => return Err(problem(format!("packet.edit[{i}]: expected exactly one of set, copy or append"))),
            };
            put(&mut packet, &edit.path, value).map_err(|why| problem(format!("packet.edit[{i}].path: {why}")))?;
        }
        let map = packet.as_object_mut().ok_or_else(|| problem(format!("{} is not an object", base.display())))?;
        match self.seal {
            Seal::Both => digest::seal(map),
            Seal::Checksum => {
                let checksum = digest::packet_checksum(map);
                map.insert("checksum".into(), checksum.into());
            }
            Seal::None => {}
        }
        Ok(packet)
    }
}

/// Set the value at a JSON pointer, creating a missing last object member or
/// appending at an array's length. Hand-written: serde_json reads pointers but
/// has no way to write a value that is not there yet.
fn put(root: &mut Value, pointer: &str, value: Value) -> std::result::Result<(), String> {
    let Some(rest) = pointer.strip_prefix('/') else { return Err(format!("{pointer:?} is not a JSON pointer")) };
    let tokens: Vec<String> = rest.split('/').map(|t| t.replace("~1", "/").replace("~0", "~")).collect();
    let (last, parents) = tokens.split_last().ok_or("an empty pointer")?;
    let mut at = root;
    for token in parents {
        at = match at {
            Value::Object(map) => map.get_mut(token),
            Value::Array(items) => token.parse::<usize>().ok().and_then(|i| items.get_mut(i)),
            _ => None,
        }
        .ok_or_else(|| format!("{pointer}: nothing at {token:?}"))?;
    }
    match at {
        Value::Object(map) => {
            map.insert(last.clone(), value);
        }
        Value::Array(items) => match last.parse::<usize>() {
            Ok(i) if i < items.len() => items[i] = value,
            Ok(i) if i == items.len() => items.push(value),
            _ => return Err(format!("{pointer}: {last:?} is not an index of that array")),
        },
        _ => return Err(format!("{pointer}: the parent is not an object or array")),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn put_sets_creates_and_appends_but_never_invents_parents() {
        let mut v = json!({"a": {"b": [1]}});
        put(&mut v, "/a/b/0", json!(2)).unwrap();
        put(&mut v, "/a/b/1", json!(3)).unwrap();
        put(&mut v, "/a/c~1d", json!("x")).unwrap();
        assert_eq!(v, json!({"a": {"b": [2, 3], "c/d": "x"}}));
        assert!(put(&mut v, "/a/b/5", json!(0)).is_err());
        assert!(put(&mut v, "/missing/x", json!(0)).is_err());
        assert!(put(&mut v, "a", json!(0)).is_err());
    }

    #[test]
    fn a_bad_derivation_is_an_error_naming_expect_toml_and_the_edit() {
        let config = Config::load(Path::new(crate::PROJECT_ROOT), None).unwrap();
        let expect = Path::new("fixtures/x/expect.toml");
        let parse = |text: &str| -> Derivation { toml::from_str(text).unwrap() };
        let two_ops =
            parse("from = \"google-staged-both-selected\"\n[[edit]]\npath = \"/a\"\nset = 1\ncopy = \"/b\"\n");
        let err = two_ops.derive(&config, expect).unwrap_err().to_string();
        assert!(
            err.contains("fixtures/x/expect.toml") && err.contains("packet.edit[0]: expected exactly one"),
            "{err}"
        );
        let missing = parse("from = \"google-staged-both-selected\"\n[[edit]]\npath = \"/a\"\ncopy = \"/nowhere\"\n");
        assert!(missing.derive(&config, expect).unwrap_err().to_string().contains("/nowhere is not in"));
        let no_base = parse("from = \"no-such-case\"\n[[edit]]\npath = \"/a\"\nset = 1\n");
        assert!(no_base.derive(&config, expect).unwrap_err().to_string().contains("no-such-case"));
        let sealed = parse("from = \"google-staged-both-selected\"\n[[edit]]\npath = \"/maxTokens\"\nset = 7\n");
        let packet = sealed.derive(&config, expect).unwrap();
        let map = packet.as_object().unwrap();
        assert_eq!(packet["maxTokens"], json!(7));
        assert_eq!(map["checksum"], json!(digest::packet_checksum(map)), "sealed after the edit");
    }
}
