//! Hash forensics: when a stored `exactInputHash` or `checksum` does not match,
//! recompute it the ways exporters are known to get it wrong and name the one
//! that reproduces the stored value. Runs only on a mismatch, so its cost (one
//! serialisation per candidate) never touches a passing packet.
//!
//! The serialiser here is hand-written because each candidate is a deliberate
//! departure from RFC 8785 (another key order, indentation, another number
//! format) that no JSON crate offers as an option; scalars still go through the
//! canonical writer, so only the departure under test differs.

use crate::canonical;
use serde_json::{Map, Number, Value};

/// A way of computing a hash wrongly that reproduces the stored value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Cause {
    /// A stable name for machines (`--format json`).
    pub(crate) id: &'static str,
    /// What the exporter did, for the message: "the stored hash is what `explanation` gives".
    pub(crate) explanation: String,
}

/// What the hash material may be besides the packet itself.
pub(crate) struct Context<'a> {
    /// The text-JSON suffix the project expects on Google packets.
    pub(crate) suffix: &'a str,
    /// The runtime output schema (for "including the runtime outputSchema although the packet has none").
    pub(crate) schema: Option<&'a Value>,
}

/// The known mistakes behind a stored `exactInputHash`.
pub(crate) fn exact_input_hash(packet: &Map<String, Value>, stored: &str, context: &Context) -> Option<Cause> {
    let effective = text(packet, "effectiveUserMessage");
    let user = text(packet, "userMessage");
    let mut tries: Vec<(&'static str, String, Vec<u8>)> = Vec::new();
    let mut material = |id, explanation: &str, user_content: Option<String>, schema: Schema, style: Style| {
        let value = hash_material(packet, user_content.or_else(|| effective.clone()), schema);
        tries.push((id, explanation.to_owned(), style.write(&value)));
    };
    let canonical_style = Style::CANONICAL;
    material(
        "locale-compare-key-order",
        "a localeCompare key order (JavaScript) instead of UTF-16 code units",
        None,
        Schema::AsIs,
        Style { order: Order::Locale, ..canonical_style },
    );
    material(
        "user-message-hashed",
        "hashing userMessage instead of effectiveUserMessage (for a Google packet: no text-JSON suffix)",
        user.clone(),
        Schema::AsIs,
        canonical_style,
    );
    material(
        "output-schema-null",
        "including outputSchema as null although the packet has none",
        None,
        Schema::Null,
        canonical_style,
    );
    if let Some(schema) = context.schema {
        material(
            "output-schema-included-when-absent",
            "including the runtime outputSchema although the packet has none",
            None,
            Schema::Given(schema),
            canonical_style,
        );
    }
    material(
        "output-schema-left-out",
        "leaving outputSchema out although the packet carries one",
        None,
        Schema::Absent,
        canonical_style,
    );
    material(
        "pretty-printed-json",
        "pretty-printed JSON (2-space indentation) instead of canonical JSON",
        None,
        Schema::AsIs,
        Style { indent: true, ..canonical_style },
    );
    material(
        "unsorted-keys",
        "unsorted keys (insertion order)",
        None,
        Schema::AsIs,
        Style { order: Order::AsIs, ..canonical_style },
    );
    material(
        "unsorted-pretty-printed-json",
        "pretty-printed JSON with unsorted keys",
        None,
        Schema::AsIs,
        Style { order: Order::AsIs, indent: true, ..canonical_style },
    );
    if let (Some(effective), Some(user)) = (&effective, &user) {
        let suffix = context.suffix;
        let variants = [
            (
                "suffix-trailing-newline",
                "a Google suffix with a trailing newline (effectiveUserMessage + \"\\n\")",
                format!("{effective}\n"),
            ),
            (
                "suffix-without-trailing-newline",
                "a Google suffix without its trailing newline",
                effective.strip_suffix('\n').unwrap_or(effective).to_owned(),
            ),
            (
                "different-google-suffix",
                "a different Google suffix: the project's text-JSON suffix, not the one in effectiveUserMessage",
                format!("{user}{suffix}"),
            ),
            (
                "different-google-suffix-trailing-newline",
                "a different Google suffix: the project's text-JSON suffix and a trailing newline",
                format!("{user}{suffix}\n"),
            ),
            (
                "different-google-suffix-no-trailing-newline",
                "a different Google suffix: the project's text-JSON suffix without its trailing newline",
                format!("{user}{}", suffix.trim_end()),
            ),
        ];
        for (id, explanation, content) in variants.into_iter().filter(|(_, _, c)| c != effective) {
            material(id, explanation, Some(content), Schema::AsIs, canonical_style);
        }
    }
    material(
        "numbers-printed-as-floats",
        "printing every number as a float (64000.0, as Python does)",
        None,
        Schema::AsIs,
        Style { numbers: Numbers::Floats, ..canonical_style },
    );
    material(
        "numbers-printed-shortest",
        "printing numbers without ECMAScript formatting (1.0 for one)",
        None,
        Schema::AsIs,
        Style { numbers: Numbers::Display, ..canonical_style },
    );
    first_match(stored, tries)
}

/// The known mistakes behind a stored `checksum`.
pub(crate) fn checksum(packet: &Map<String, Value>, stored: &str) -> Option<Cause> {
    let without = |keys: &[&str]| -> Value {
        Value::Object(
            packet.iter().filter(|(k, _)| !keys.contains(&k.as_str())).map(|(k, v)| (k.clone(), v.clone())).collect(),
        )
    };
    let rest = without(&["checksum"]);
    let canonical_style = Style::CANONICAL;
    let mut tries: Vec<(&'static str, String, Vec<u8>)> = Vec::new();
    let mut add = |id, explanation: &str, bytes: Vec<u8>| tries.push((id, explanation.to_owned(), bytes));
    add(
        "locale-compare-key-order",
        "a localeCompare key order (JavaScript) instead of UTF-16 code units",
        Style { order: Order::Locale, ..canonical_style }.write(&rest),
    );
    for (id, placeholder) in
        [("checksum-field-included-empty", Value::from("")), ("checksum-field-included-null", Value::Null)]
    {
        let mut with = rest.clone();
        with["checksum"] = placeholder.clone();
        add(id, &format!("including the checksum field (as {placeholder})"), canonical::to_vec(&with));
    }
    add(
        "checksum-without-exact-input-hash",
        "leaving exactInputHash out of the checksum",
        canonical::to_vec(&without(&["checksum", "exactInputHash"])),
    );
    add(
        "pretty-printed-json",
        "pretty-printed JSON (2-space indentation) instead of canonical JSON",
        Style { indent: true, ..canonical_style }.write(&rest),
    );
    add(
        "unsorted-keys",
        "unsorted keys (insertion order)",
        Style { order: Order::AsIs, ..canonical_style }.write(&rest),
    );
    add(
        "unsorted-pretty-printed-json",
        "pretty-printed JSON with unsorted keys",
        Style { order: Order::AsIs, indent: true, ..canonical_style }.write(&rest),
    );
    add(
        "numbers-printed-as-floats",
        "printing every number as a float (64000.0, as Python does)",
        Style { numbers: Numbers::Floats, ..canonical_style }.write(&rest),
    );
    add(
        "numbers-printed-shortest",
        "printing numbers without ECMAScript formatting (1.0 for one)",
        Style { numbers: Numbers::Display, ..canonical_style }.write(&rest),
    );
    first_match(stored, tries)
}

fn first_match(stored: &str, tries: Vec<(&'static str, String, Vec<u8>)>) -> Option<Cause> {
    tries
        .into_iter()
        .find(|(_, _, bytes)| super::sha256(bytes) == stored)
        .map(|(id, explanation, _)| Cause { id, explanation })
}

fn text(packet: &Map<String, Value>, key: &str) -> Option<String> {
    packet.get(key).and_then(Value::as_str).map(str::to_owned)
}

enum Schema<'a> {
    AsIs,
    Null,
    Absent,
    Given(&'a Value),
}

/// The seed's hash material, in the seed's key order (what an unsorted
/// serialiser writes), with the user content and outputSchema as given.
fn hash_material(packet: &Map<String, Value>, user: Option<String>, schema: Schema) -> Value {
    let mut material = Map::new();
    for key in ["attempt", "provider", "model", "maxTokens"] {
        if let Some(value) = packet.get(key) {
            material.insert(key.to_owned(), value.clone());
        }
    }
    let message = |role: &str, content: Option<Value>| {
        let mut m = Map::new();
        m.insert("role".into(), Value::from(role));
        if let Some(content) = content {
            m.insert("content".into(), content);
        }
        Value::Object(m)
    };
    let system = message("system", packet.get("systemPrompt").cloned());
    material.insert("messages".into(), Value::Array(vec![system, message("user", user.map(Value::from))]));
    let schema = match schema {
        Schema::AsIs => packet.get("outputSchema").cloned(),
        Schema::Null => Some(Value::Null),
        Schema::Absent => None,
        Schema::Given(schema) => Some(schema.clone()),
    };
    if let Some(schema) = schema {
        material.insert("outputSchema".into(), schema);
    }
    Value::Object(material)
}

#[derive(Clone, Copy)]
enum Order {
    Utf16,
    Locale,
    AsIs,
}

#[derive(Clone, Copy)]
enum Numbers {
    /// ECMAScript Number::toString, as canonical JSON prints them.
    Es,
    /// serde_json's own printing (Rust's, Python's): `1.0` for a float one.
    Display,
    /// Every number as a float: `64000.0`.
    Floats,
}

#[derive(Clone, Copy)]
struct Style {
    order: Order,
    indent: bool,
    numbers: Numbers,
}

impl Style {
    const CANONICAL: Style = Style { order: Order::Utf16, indent: false, numbers: Numbers::Es };

    fn write(self, value: &Value) -> Vec<u8> {
        let mut out = Vec::with_capacity(64 * 1024);
        self.value(&mut out, value, 0);
        out
    }

    fn value(self, out: &mut Vec<u8>, value: &Value, depth: usize) {
        match value {
            Value::Number(n) => self.number(out, n),
            Value::Array(items) if !items.is_empty() => {
                out.push(b'[');
                for (i, item) in items.iter().enumerate() {
                    self.separator(out, i, depth + 1);
                    self.value(out, item, depth + 1);
                }
                self.close(out, b']', depth);
            }
            Value::Object(map) if !map.is_empty() => {
                let mut entries: Vec<(&String, &Value)> = map.iter().collect();
                match self.order {
                    Order::Utf16 => entries.sort_by(|a, b| canonical::utf16_order(a.0, b.0)),
                    Order::Locale => entries.sort_by(|a, b| canonical::node_locale_order(a.0, b.0)),
                    Order::AsIs => {}
                }
                out.push(b'{');
                for (i, (key, item)) in entries.into_iter().enumerate() {
                    self.separator(out, i, depth + 1);
                    canonical::write_string(out, key);
                    out.extend_from_slice(if self.indent { b": " } else { b":" });
                    self.value(out, item, depth + 1);
                }
                self.close(out, b'}', depth);
            }
            other => canonical::write(out, other),
        }
    }

    fn number(self, out: &mut Vec<u8>, n: &Number) {
        match self.numbers {
            Numbers::Es => canonical::write(out, &Value::Number(n.clone())),
            Numbers::Display => out.extend_from_slice(n.to_string().as_bytes()),
            Numbers::Floats => match n.as_f64() {
                Some(f) if f.fract() == 0.0 && f.abs() < 1e16 => out.extend_from_slice(format!("{f:.1}").as_bytes()),
                _ => out.extend_from_slice(n.to_string().as_bytes()),
            },
        }
    }

    /// A comma between members, and in pretty output a newline and indentation.
    fn separator(self, out: &mut Vec<u8>, i: usize, depth: usize) {
        if i > 0 {
            out.push(b',');
        }
        if self.indent {
            out.push(b'\n');
            out.extend(std::iter::repeat_n(b' ', 2 * depth));
        }
    }

    fn close(self, out: &mut Vec<u8>, bracket: u8, depth: usize) {
        if self.indent {
            out.push(b'\n');
            out.extend(std::iter::repeat_n(b' ', 2 * depth));
        }
        out.push(bracket);
    }
}
