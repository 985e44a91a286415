//! Digests as the contract spells them: `sha256:` + 64 lowercase hex characters.
//! `exactInputHash` and `checksum` are computed over canonical JSON (see `canonical`);
//! file checksums are over raw bytes.

pub(crate) mod forensics;
pub(crate) mod incremental;

use crate::canonical::{self, Sink};
#[cfg(test)]
use serde_json::json;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

pub(crate) const PREFIX: &str = "sha256:";

/// `sha256:<hex>` of raw bytes.
pub fn sha256(bytes: &[u8]) -> String {
    hex_digest(&Sha256::digest(bytes))
}

/// `sha256:<hex>` of a regular file's bytes, read in pieces: a compiled exporter may be
/// larger than any document packetproof parses, and hashing it holds one piece in memory at a time.
pub(crate) fn sha256_of_file(path: &std::path::Path) -> crate::Result<String> {
    let mut file = crate::fsutil::open_regular(path)?;
    let mut hasher = Sha256::new();
    std::io::copy(&mut file, &mut hasher).map_err(|e| crate::Error::io(path, e))?;
    Ok(hex_digest(&hasher.finalize()))
}

fn hex_digest(hash: &[u8]) -> String {
    let mut text = String::with_capacity(PREFIX.len() + 64);
    text.push_str(PREFIX);
    const HEX: &[u8; 16] = b"0123456789abcdef";
    for &byte in hash {
        text.push(HEX[usize::from(byte >> 4)] as char);
        text.push(HEX[usize::from(byte & 0xF)] as char);
    }
    text
}

/// Whether `text` is a well-formed digest: the prefix and exactly 64 lowercase hex digits.
pub(crate) fn is_digest(text: &str) -> bool {
    text.strip_prefix(PREFIX)
        .is_some_and(|hex| hex.len() == 64 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')))
}

/// The attempt-1 provider material that `exactInputHash` covers. Fields missing
/// from the packet are left out, as `JSON.stringify` leaves out `undefined`.
#[cfg(test)]
pub(crate) fn exact_input_material(packet: &Map<String, Value>) -> Value {
    let mut material = Map::new();
    for key in ["attempt", "provider", "model", "maxTokens"] {
        if let Some(value) = packet.get(key) {
            material.insert(key.to_owned(), value.clone());
        }
    }
    let message = |role: &str, field: &str| {
        let mut m = Map::new();
        m.insert("role".into(), json!(role));
        if let Some(content) = packet.get(field) {
            m.insert("content".into(), content.clone());
        }
        Value::Object(m)
    };
    // The hash covers the provider-facing message, never the provider-neutral userMessage.
    material
        .insert("messages".into(), json!([message("system", "systemPrompt"), message("user", "effectiveUserMessage")]));
    if let Some(schema) = packet.get("outputSchema") {
        material.insert("outputSchema".into(), schema.clone());
    }
    Value::Object(material)
}

/// The canonical bytes of the attempt-1 material `exactInputHash` covers (`exact_input_material`
/// builds it as a value, for the tests), written straight from the packet
/// (no copy of the system prompt or the schema).
pub fn exact_input_bytes(packet: &Map<String, Value>) -> Vec<u8> {
    let size = |key: &str| packet.get(key).and_then(Value::as_str).map_or(0, str::len);
    let mut out = Vec::with_capacity(256 + size("systemPrompt") + size("effectiveUserMessage"));
    write_exact_input(&mut out, packet);
    out
}

/// The packet fields `exactInputHash` covers (`write_exact_input` reads no other).
const EXACT_INPUT_FIELDS: [&str; 7] =
    ["attempt", "maxTokens", "systemPrompt", "effectiveUserMessage", "model", "outputSchema", "provider"];

fn write_exact_input<S: Sink>(out: &mut S, packet: &Map<String, Value>) {
    let mut separator = b"{";
    let mut member = |out: &mut S, key: &str| {
        out.put(separator);
        separator = b",";
        canonical::write_string(out, key);
        out.put(b":");
    };
    // Members in canonical (UTF-16) key order; a missing field is left out.
    for key in ["attempt", "maxTokens"] {
        if let Some(value) = packet.get(key) {
            member(out, key);
            canonical::write(out, value);
        }
    }
    member(out, "messages");
    for (i, (role, field)) in [("system", "systemPrompt"), ("user", "effectiveUserMessage")].into_iter().enumerate() {
        out.put(if i == 0 { b"[{" } else { b",{" });
        if let Some(content) = packet.get(field) {
            out.put(b"\"content\":");
            canonical::write(out, content);
            out.put(b",");
        }
        out.put(b"\"role\":");
        canonical::write_string(out, role);
        out.put(b"}");
    }
    out.put(b"]");
    for key in ["model", "outputSchema", "provider"] {
        if let Some(value) = packet.get(key) {
            member(out, key);
            canonical::write(out, value);
        }
    }
    out.put(b"}");
}

/// `exactInputHash` of a packet.
pub fn exact_input_hash(packet: &Map<String, Value>) -> String {
    let mut sink = HashingSink::new();
    write_exact_input(&mut sink, packet);
    sink.finish()
}

/// `checksum` of a packet: canonical JSON of the whole packet except `checksum`.
pub fn packet_checksum(packet: &Map<String, Value>) -> String {
    let mut sink = HashingSink::new();
    canonical::write_object(&mut sink, packet, Some("checksum"));
    sink.finish()
}

/// Canonical bytes hashed as they are written, through a small buffer: the canonical
/// writer emits many tiny pieces (`"`, `:`, `,`), and SHA-256 is fastest fed whole
/// kilobytes. The buffer stays in L1 cache, where a full canonical copy would not.
/// (Hand-written rather than `io::BufWriter<Sha256>`: writing to a hash cannot fail,
/// and `io::Write` would make every canonical write return a `Result` to ignore.)
struct HashingSink {
    hasher: Sha256,
    buffer: Vec<u8>,
}

impl HashingSink {
    const CAPACITY: usize = 8 * 1024;

    fn new() -> Self {
        HashingSink { hasher: Sha256::new(), buffer: Vec::with_capacity(Self::CAPACITY) }
    }

    fn finish(mut self) -> String {
        self.hasher.update(&self.buffer);
        hex_digest(&self.hasher.finalize())
    }
}

impl HashingSink {
    /// Hash what the buffer holds, and `bytes` too when they would not fit in it.
    #[cold]
    #[inline(never)]
    fn flush_and_put(&mut self, bytes: &[u8]) {
        self.hasher.update(&self.buffer);
        self.buffer.clear();
        if bytes.len() >= Self::CAPACITY {
            self.hasher.update(bytes);
        } else {
            self.buffer.extend_from_slice(bytes);
        }
    }
}

impl Sink for HashingSink {
    // Inlined into the writer, so the short constant pieces become plain stores.
    #[inline(always)]
    fn put(&mut self, bytes: &[u8]) {
        if self.buffer.len() + bytes.len() > Self::CAPACITY {
            self.flush_and_put(bytes);
        } else {
            self.buffer.extend_from_slice(bytes);
        }
    }
}

/// Set `exactInputHash` and then `checksum` from the packet's content (the order
/// matters: the checksum covers the hash).
pub fn seal(packet: &mut Map<String, Value>) {
    let hash = exact_input_hash(packet);
    packet.insert("exactInputHash".into(), hash.into());
    let checksum = packet_checksum(packet);
    packet.insert("checksum".into(), checksum.into());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digest_text_shape() {
        let d = sha256(b"abc");
        assert_eq!(d, "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        assert!(is_digest(&d));
        assert!(!is_digest(&d.to_uppercase()));
        assert!(!is_digest(&d[..70]));
        assert!(!is_digest("md5:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
    }

    #[test]
    fn checksum_ignores_only_the_checksum_field() {
        let a: Map<String, Value> = serde_json::from_str(r#"{"a":1,"checksum":"x"}"#).unwrap();
        let b: Map<String, Value> = serde_json::from_str(r#"{"a":1}"#).unwrap();
        let c: Map<String, Value> = serde_json::from_str(r#"{"a":2,"checksum":"x"}"#).unwrap();
        assert_eq!(packet_checksum(&a), packet_checksum(&b));
        assert_ne!(packet_checksum(&a), packet_checksum(&c));
    }

    #[test]
    fn exact_input_hash_uses_effective_message_and_optional_schema() {
        let base: Map<String, Value> = serde_json::from_str(
            r#"{"attempt":1,"provider":"google","model":"m","maxTokens":5,"systemPrompt":"s","userMessage":"u","effectiveUserMessage":"u!"}"#,
        )
        .unwrap();
        let material = canonical::to_vec(&exact_input_material(&base));
        assert_eq!(
            String::from_utf8(material).unwrap(),
            r#"{"attempt":1,"maxTokens":5,"messages":[{"content":"s","role":"system"},{"content":"u!","role":"user"}],"model":"m","provider":"google"}"#
        );
        let mut other = base.clone();
        other.insert("userMessage".into(), json!("changed"));
        assert_eq!(exact_input_hash(&base), exact_input_hash(&other), "userMessage is not hashed");
        other.insert("outputSchema".into(), json!({}));
        assert_ne!(exact_input_hash(&base), exact_input_hash(&other));
    }

    #[test]
    fn direct_material_bytes_equal_the_canonical_material() {
        let full: Map<String, Value> = serde_json::from_str(
            r#"{"provider":"anthropic","model":"m","maxTokens":64000,"attempt":1,"systemPrompt":"s\"\n\u0001é","effectiveUserMessage":"u","outputSchema":{"schema":{"b":1,"a":[-0.0,1e21]},"name":"n"}}"#,
        )
        .unwrap();
        let mut cases = vec![full.clone(), Map::new()];
        for key in ["attempt", "maxTokens", "systemPrompt", "effectiveUserMessage", "model", "outputSchema", "provider"]
        {
            let mut packet = full.clone();
            packet.remove(key);
            cases.push(packet);
        }
        for packet in cases {
            let expected = canonical::to_vec(&exact_input_material(&packet));
            assert_eq!(String::from_utf8(exact_input_bytes(&packet)).unwrap(), String::from_utf8(expected).unwrap());
        }
    }
}
