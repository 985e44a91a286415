//! Sealing many edited copies of one packet (the mutation self-test seals dozens
//! per fixture). Canonical JSON writes a packet's members sorted by key, so the
//! checksum's bytes are its members one after the other: each member of the
//! original is written once, the hash state before each is kept, and an edited
//! copy is hashed from its first changed member on, writing only the members
//! that changed. The result is the digest `digest::seal` computes, byte for byte.

use super::{exact_input_hash, HashingSink, EXACT_INPUT_FIELDS};
use crate::canonical::{self, Sink};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

/// One member of the original packet, in canonical order.
struct Member<'a> {
    key: &'a str,
    value: &'a Value,
    /// `"key":value`, canonical.
    bytes: Vec<u8>,
    /// The hash state after every member before this one (not the separator before it).
    before: Sha256,
}

/// The original packet's members and hashes, to seal edited copies of it.
pub(crate) struct Sealer<'a> {
    original: &'a Map<String, Value>,
    members: Vec<Member<'a>>,
    /// The hash state after every member.
    after: Sha256,
    /// `exactInputHash` of the original, recomputed (not the one it stores).
    exact_input_hash: String,
}

impl<'a> Sealer<'a> {
    pub(crate) fn new(original: &'a Map<String, Value>) -> Self {
        let mut hasher = Sha256::new();
        hasher.update(b"{");
        let mut members = Vec::with_capacity(original.len());
        for (i, (key, value)) in sorted(original).into_iter().enumerate() {
            let before = hasher.clone();
            if i > 0 {
                hasher.update(b",");
            }
            let bytes = member_bytes(key, value);
            hasher.update(&bytes);
            members.push(Member { key, value, bytes, before });
        }
        Sealer { original, members, after: hasher, exact_input_hash: exact_input_hash(original) }
    }

    /// Set `exactInputHash` and then `checksum` of `packet`, an edited copy of the
    /// original, as `digest::seal` does.
    pub(crate) fn seal(&self, packet: &mut Map<String, Value>) {
        let hash = self.exact_input_hash(packet);
        packet.insert("exactInputHash".into(), hash.into());
        let checksum = self.checksum(packet);
        packet.insert("checksum".into(), checksum.into());
    }

    /// `digest::exact_input_hash` of `packet`: the original's when none of the
    /// fields it covers changed.
    pub(crate) fn exact_input_hash(&self, packet: &Map<String, Value>) -> String {
        let unchanged = EXACT_INPUT_FIELDS.iter().all(|key| same_option(packet.get(*key), self.original.get(*key)));
        match unchanged {
            true => self.exact_input_hash.clone(),
            false => exact_input_hash(packet),
        }
    }

    /// `digest::packet_checksum` of `packet`, hashed from its first member that is
    /// not the original's.
    pub(crate) fn checksum(&self, packet: &Map<String, Value>) -> String {
        let edited = sorted(packet);
        let first_change = edited
            .iter()
            .zip(&self.members)
            .position(|((key, value), member)| *key != member.key || !same(value, member.value))
            .unwrap_or(edited.len().min(self.members.len()));
        let mut sink = HashingSink::new();
        sink.hasher = match self.members.get(first_change) {
            Some(member) => member.before.clone(),
            None => self.after.clone(),
        };
        for (i, (key, value)) in edited.iter().enumerate().skip(first_change) {
            if i > 0 {
                sink.put(b",");
            }
            match self.unchanged(key, value) {
                Some(bytes) => sink.put(bytes),
                None => {
                    canonical::write_string(&mut sink, key);
                    sink.put(b":");
                    canonical::write(&mut sink, value);
                }
            }
        }
        sink.put(b"}");
        sink.finish()
    }

    /// The original's bytes of the member `key`, when it has that value there.
    fn unchanged(&self, key: &str, value: &Value) -> Option<&[u8]> {
        let i = self.members.binary_search_by(|m| canonical::utf16_order(m.key, key)).ok()?;
        let member = &self.members[i];
        same(value, member.value).then_some(member.bytes.as_slice())
    }
}

/// The members the checksum covers (all but `checksum`), in canonical order.
fn sorted(map: &Map<String, Value>) -> Vec<(&str, &Value)> {
    let mut members: Vec<(&str, &Value)> =
        map.iter().map(|(k, v)| (k.as_str(), v)).filter(|(k, _)| *k != "checksum").collect();
    members.sort_unstable_by(|a, b| canonical::utf16_order(a.0, b.0));
    members
}

fn member_bytes(key: &str, value: &Value) -> Vec<u8> {
    let mut bytes = Vec::new();
    canonical::write_string(&mut bytes, key);
    bytes.put(b":");
    canonical::write(&mut bytes, value);
    bytes
}

fn same_option(a: Option<&Value>, b: Option<&Value>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => same(a, b),
        (None, None) => true,
        _ => false,
    }
}

/// `a == b`, fast for an edited copy: objects whose keys come in the same order
/// (a clone keeps the order) are compared member by member, with no key lookups.
pub(crate) fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            if x.len() != y.len() {
                return false;
            }
            for ((kx, vx), (ky, vy)) in x.iter().zip(y) {
                if kx != ky {
                    // Another order: compare as maps.
                    return x == y;
                }
                if !same(vx, vy) {
                    return false;
                }
            }
            true
        }
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b)),
        _ => a == b,
    }
}

/// Equal values with their object keys in the same order: what a reader that
/// walks objects in order (a template rendering them) cannot tell apart.
pub(crate) fn identical(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|((kx, vx), (ky, vy))| kx == ky && identical(vx, vy))
        }
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(a, b)| identical(a, b)),
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn packet() -> Map<String, Value> {
        let value = json!({
            "packetVersion": 1, "agentId": "a", "taskType": "t", "promptMode": "p", "attempt": 1,
            "provider": "openai", "model": "gpt-5", "maxTokens": 100,
            "promptPaths": ["system.md.j2"], "promptVersions": {"system.md.j2": "sha256:00"},
            "systemPrompt": "You are a system.", "userMessage": "Hello", "effectiveUserMessage": "Hello",
            "renderInput": {"deep": {"er": ["x", {"é": 1.5, "\u{e000}": 2, "\u{1f600}": 3}]}},
            "resolvedBranch": {"mode": "x"},
            "outputSchema": {"name": "n", "schema": {"type": "object"}},
            "exactInputHash": "sha256:stale", "checksum": "sha256:stale"
        });
        value.as_object().unwrap().clone()
    }

    fn sealed_both_ways(edit: impl Fn(&mut Map<String, Value>)) {
        let original = packet();
        let sealer = Sealer::new(&original);
        let mut edited = original.clone();
        edit(&mut edited);
        let mut expected = edited.clone();
        crate::digest::seal(&mut expected);
        sealer.seal(&mut edited);
        assert_eq!(edited, expected);
    }

    /// Whatever an edit changes, adds or removes, the seal is `digest::seal`'s.
    #[test]
    fn an_edited_copy_is_sealed_as_the_whole_packet_would_be() {
        sealed_both_ways(|_| {});
        for key in packet().keys() {
            sealed_both_ways(|p| p[key] = json!("changed"));
            sealed_both_ways(|p| {
                p.remove(key);
            });
        }
        sealed_both_ways(|p| p["renderInput"]["deep"]["er"][1]["é"] = json!(2));
        sealed_both_ways(|p| {
            p.insert("aaa".into(), json!(1));
            p.insert("zzz".into(), json!(2));
            p.insert("\u{1f600}".into(), json!(3));
        });
        // Another key order in a nested object is the same value.
        sealed_both_ways(|p| p["outputSchema"] = json!({"schema": {"type": "object"}, "name": "n"}));
    }

    #[test]
    fn same_is_value_equality() {
        let a = json!({"x": [1, {"y": 2, "z": 3}], "w": null});
        assert!(same(&a, &a.clone()));
        assert!(same(&a, &json!({"w": null, "x": [1, {"z": 3, "y": 2}]})));
        assert!(!same(&a, &json!({"x": [1, {"y": 2, "z": 4}], "w": null})));
        assert!(!same(&a, &json!({"x": [1, {"y": 2}], "w": null})));
        assert!(!same(&a, &json!({"x": [1, {"y": 2, "z": 3}], "v": null})));
        assert!(identical(&a, &a.clone()));
        assert!(!identical(&a, &json!({"w": null, "x": [1, {"y": 2, "z": 3}]})));
        assert!(!identical(&a, &json!({"x": [1, {"z": 3, "y": 2}], "w": null})));
    }
}
