//! Strict JSON input (I-JSON, RFC 7493) and canonical output (JCS, RFC 8785).
//!
//! Parsing is serde_json's tokenizer plus a value visitor of our own, because
//! serde_json's `Value` silently keeps the last of two duplicate keys. Output is
//! hand-written because it must be byte-identical with a Node canonicalizer
//! (`Array.prototype.sort` on keys, i.e. UTF-16 code-unit order, and
//! `JSON.stringify` scalars); numbers go through `ryu-js`, which implements
//! ECMAScript Number::toString.

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::map::Entry;
use serde_json::ser::PrettyFormatter;
use serde_json::{Map, Number, Value};
use std::cmp::Ordering;
use std::fmt;

/// The deepest nesting of arrays and objects accepted. This is serde_json's own
/// recursion limit (128 levels refuse), stated here so it is documented and tested.
pub const MAX_DEPTH: usize = 127;

/// A refusal of the strict parser, positioned at 1-based line and column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    pub line: usize,
    pub column: usize,
    pub message: String,
    pub refusal: Refusal,
}

/// What kind of input a [`ParseError`] refuses: callers that treat some refusals
/// differently (a duplicate key hides a value; past the depth nothing is read) ask
/// this, never the message's words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// Not JSON, or JSON that I-JSON excludes (a lone surrogate, a number out of range, …).
    Syntax,
    /// An object names a key twice.
    DuplicateKey,
    /// Nesting deeper than [`MAX_DEPTH`].
    TooDeep,
}

/// The start of the visitor's own message for a duplicate key (see [`clearer`]).
const DUPLICATE_KEY: &str = "duplicate object key";

/// The refusal of a key an object names twice.
pub(crate) fn duplicate_key(key: &str) -> String {
    format!("{DUPLICATE_KEY} {key:?}")
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.column, self.message)
    }
}

/// Parse bytes as strict I-JSON: UTF-8 without a byte-order mark, no duplicate
/// keys, no lone surrogates, no non-finite or out-of-range numbers, nothing after
/// the value, at most [`MAX_DEPTH`] levels of nesting.
pub fn parse(bytes: &[u8]) -> Result<Value, ParseError> {
    parse_with(bytes, StrictValue)
}

/// [`parse`]'s checks and refusals, building what `seed` builds (`otlp::value` builds
/// values that borrow their strings): one strict parse, whatever is built.
pub(crate) fn parse_with<'de, S: DeserializeSeed<'de>>(bytes: &'de [u8], seed: S) -> Result<S::Value, ParseError> {
    if bytes.starts_with(b"\xEF\xBB\xBF") {
        let message = "byte-order mark is not allowed".into();
        return Err(ParseError { line: 1, column: 1, message, refusal: Refusal::Syntax });
    }
    let text = std::str::from_utf8(bytes).map_err(|e| {
        let (line, column) = position_of(bytes, e.valid_up_to());
        ParseError { line, column, message: "invalid UTF-8".into(), refusal: Refusal::Syntax }
    })?;
    let mut de = serde_json::Deserializer::from_str(text);
    let value = seed.deserialize(&mut de).and_then(|v| de.end().map(|()| v));
    // serde_json reports column 0 when nothing of the line was read yet (an empty
    // file, end of input right after a newline); positions here are 1-based.
    value.map_err(|e| {
        let (line, column) = (e.line().max(1), e.column().max(1));
        let (refusal, message) = clearer(e);
        ParseError { line, column, message, refusal }
    })
}

/// The refusal's kind and its message: serde_json's messages for surrogates describe
/// its tokenizer, not the input.
fn clearer(e: serde_json::Error) -> (Refusal, String) {
    let raw = e.to_string();
    let message = raw.split(" at line ").next().unwrap_or(&raw);
    let syntax = |text: &str| (Refusal::Syntax, text.to_owned());
    match message {
        "unexpected end of hex escape" | "lone leading surrogate in hex escape" => {
            syntax("lone surrogate in \\u escape (a string must be valid Unicode)")
        }
        "number out of range" => syntax("number out of range of a double (I-JSON)"),
        "recursion limit exceeded" => (Refusal::TooDeep, format!("nesting deeper than {MAX_DEPTH} levels")),
        "trailing characters" => syntax("trailing data after the JSON value"),
        "expected value" => syntax("expected a JSON value (NaN, Infinity and comments are not JSON)"),
        duplicate if duplicate.starts_with(DUPLICATE_KEY) => (Refusal::DuplicateKey, duplicate.to_owned()),
        other => syntax(other),
    }
}

fn position_of(bytes: &[u8], offset: usize) -> (usize, usize) {
    let before = &bytes[..offset];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let line_start = before.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let column = String::from_utf8_lossy(&before[line_start..]).chars().count() + 1;
    (line, column)
}

/// Builds a `Value` like serde_json's own visitor, but refuses duplicate keys.
struct StrictValue;

impl<'de> DeserializeSeed<'de> for StrictValue {
    type Value = Value;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for StrictValue {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        Number::from_f64(v).map(Value::Number).ok_or_else(|| E::custom("number is not finite"))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(item) = seq.next_element_seed(StrictValue)? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            // One hash per key: the entry both finds a duplicate and is the slot to fill.
            match object.entry(key) {
                Entry::Occupied(entry) => return Err(de::Error::custom(duplicate_key(entry.key()))),
                Entry::Vacant(entry) => entry.insert(map.next_value_seed(StrictValue)?),
            };
        }
        Ok(Value::Object(object))
    }
}

/// Where canonical bytes go: a growing buffer (`Vec<u8>`), or straight into a
/// hash (`digest`'s hashing sink), so a checksum never holds the canonical copy.
pub trait Sink {
    fn put(&mut self, bytes: &[u8]);
}

impl Sink for Vec<u8> {
    #[inline(always)]
    fn put(&mut self, bytes: &[u8]) {
        self.extend_from_slice(bytes);
    }
}

/// The canonical (RFC 8785) bytes of a value.
pub fn to_vec(value: &Value) -> Vec<u8> {
    let mut out = Vec::with_capacity(256);
    write(&mut out, value);
    out
}

/// Append the canonical bytes of `value` to `out`.
pub(crate) fn write<S: Sink + ?Sized>(out: &mut S, value: &Value) {
    write_value(out, value, &mut Vec::new());
}

/// Append the canonical bytes of an object, leaving out the member named `skip`
/// (the packet checksum covers "the packet except the checksum field").
pub fn write_object<S: Sink + ?Sized>(out: &mut S, map: &Map<String, Value>, skip: Option<&str>) {
    write_members(out, map, skip, &mut Vec::new());
}

/// Members waiting to be written, sorted: each object sorts its members at the
/// top of this one stack and pops them when done, so writing a document allocates
/// once instead of once per object (that was a fifth of the writer's time).
type Pending<'a> = Vec<(&'a str, &'a Value)>;

fn write_value<'a, S: Sink + ?Sized>(out: &mut S, value: &'a Value, pending: &mut Pending<'a>) {
    match value {
        Value::Null => out.put(b"null"),
        Value::Bool(true) => out.put(b"true"),
        Value::Bool(false) => out.put(b"false"),
        Value::Number(n) => write_number(out, n),
        Value::String(s) => write_string(out, s),
        Value::Array(items) => {
            out.put(b"[");
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.put(b",");
                }
                write_value(out, item, pending);
            }
            out.put(b"]");
        }
        Value::Object(map) => write_members(out, map, None, pending),
    }
}

fn write_members<'a, S: Sink + ?Sized>(
    out: &mut S,
    map: &'a Map<String, Value>,
    skip: Option<&str>,
    pending: &mut Pending<'a>,
) {
    let base = pending.len();
    pending.extend(map.iter().map(|(k, v)| (k.as_str(), v)).filter(|(k, _)| Some(*k) != skip));
    pending[base..].sort_unstable_by(|a, b| utf16_order(a.0, b.0));
    out.put(b"{");
    for i in base..pending.len() {
        let (key, value) = pending[i];
        if i > base {
            out.put(b",");
        }
        write_string(out, key);
        out.put(b":");
        write_value(out, value, pending);
    }
    out.put(b"}");
    pending.truncate(base);
}

/// RFC 8785 §3.2.3: keys compare as arrays of UTF-16 code units, which is also
/// what JavaScript's default sort does. UTF-8 bytes compare in code-point order,
/// which agrees with UTF-16 order except between U+E000..U+FFFF (lead bytes EE, EF)
/// and supplementary characters (lead bytes F0..F4, surrogates D800.. in UTF-16).
/// So the bytes are compared, and only a first difference between such lead bytes
/// is reversed. (Before that difference both strings are equal, so the differing
/// bytes are either both lead bytes or both continuation bytes of one-length characters.)
pub fn utf16_order(a: &str, b: &str) -> Ordering {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let Some(i) = a.iter().zip(b).position(|(x, y)| x != y) else {
        return a.len().cmp(&b.len());
    };
    let (x, y) = (a[i], b[i]);
    let bmp_high = |byte: u8| matches!(byte, 0xEE | 0xEF);
    if (x >= 0xF0 && bmp_high(y)) || (y >= 0xF0 && bmp_high(x)) {
        y.cmp(&x)
    } else {
        x.cmp(&y)
    }
}

fn write_number<S: Sink + ?Sized>(out: &mut S, n: &Number) {
    // An integer past 2^53 becomes the nearest double, as in JavaScript.
    let double = n.as_f64().unwrap_or(0.0);
    let mut buffer = ryu_js::Buffer::new();
    out.put(buffer.format(double).as_bytes());
}

/// What each byte becomes inside a canonical string: 0 stays as is, `u` is written
/// as `\u00xx`, anything else is the letter after a backslash (JSON.stringify's escapes).
static ESCAPE: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut b = 0;
    while b < 0x20 {
        table[b] = b'u';
        b += 1;
    }
    table[0x08] = b'b';
    table[0x09] = b't';
    table[0x0A] = b'n';
    table[0x0C] = b'f';
    table[0x0D] = b'r';
    table[b'"' as usize] = b'"';
    table[b'\\' as usize] = b'\\';
    table
};

/// The high bit of each of the 8 bytes that needs escaping (below 0x20, `"` or `\`).
/// Bytes above the first flagged one may be flagged wrongly (a borrow runs upward),
/// but the lowest flag is always exact, which is all [`next_escape`] uses.
#[inline]
fn escape_mask(chunk: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let zero_bytes = |v: u64| v.wrapping_sub(ONES) & !v & HIGHS;
    (chunk.wrapping_sub(ONES * 0x20) & !chunk & HIGHS)
        | zero_bytes(chunk ^ (ONES * b'"' as u64))
        | zero_bytes(chunk ^ (ONES * b'\\' as u64))
}

/// The index of the first byte at or after `from` that needs escaping, eight bytes
/// at a time: most text has nothing to escape for dozens of bytes.
#[inline]
fn next_escape(bytes: &[u8], from: usize) -> Option<usize> {
    let rest = &bytes[from..];
    let mut chunks = rest.chunks_exact(8);
    let mut at = from;
    for chunk in chunks.by_ref() {
        let mask = escape_mask(u64::from_le_bytes([
            chunk[0], chunk[1], chunk[2], chunk[3], chunk[4], chunk[5], chunk[6], chunk[7],
        ]));
        if mask != 0 {
            return Some(at + (mask.trailing_zeros() / 8) as usize);
        }
        at += 8;
    }
    chunks.remainder().iter().position(|&b| ESCAPE[b as usize] != 0).map(|i| at + i)
}

/// A string as `JSON.stringify` writes it: runs of plain bytes are copied whole.
pub(crate) fn write_string<S: Sink + ?Sized>(out: &mut S, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let bytes = s.as_bytes();
    out.put(b"\"");
    let mut start = 0;
    while let Some(at) = next_escape(bytes, start) {
        out.put(&bytes[start..at]);
        let b = bytes[at];
        match ESCAPE[b as usize] {
            b'u' => out.put(&[b'\\', b'u', b'0', b'0', HEX[(b >> 4) as usize], HEX[(b & 0xF) as usize]]),
            letter => out.put(&[b'\\', letter]),
        }
        start = at + 1;
    }
    out.put(&bytes[start..]);
    out.put(b"\"");
}

/// Whether a JSON number is held exactly by an IEEE double (I-JSON §2.2): an
/// integer must lie within ±2^53.
pub(crate) fn is_exact_double(n: &Number) -> bool {
    const LIMIT: u64 = 1 << 53;
    match (n.as_u64(), n.as_i64(), n.as_f64()) {
        (Some(u), _, _) => u <= LIMIT,
        (None, Some(i), _) => i.unsigned_abs() <= LIMIT,
        // An integer literal past the u64/i64 range arrives already rounded to a
        // double, so its lost digits cannot be seen: hold it to the same ±2^53 rule.
        (None, None, Some(f)) => !(f.fract() == 0.0 && f.abs() > LIMIT as f64),
        _ => true,
    }
}

/// 2-space pretty JSON with a final newline, keeping key order: the format of
/// every file the tools write for people to read (golden packets, run files).
pub fn to_pretty(value: &Value) -> String {
    let mut bytes = Vec::new();
    let mut serializer = serde_json::Serializer::with_formatter(&mut bytes, JsPretty(PrettyFormatter::new()));
    serde::Serialize::serialize(value, &mut serializer).expect("a Value always serializes");
    let mut text = String::from_utf8(bytes).expect("serde_json writes UTF-8");
    text.push('\n');
    text
}

/// serde_json's pretty layout (JSON.stringify's with an indent of 2) with numbers
/// written as JavaScript writes them: `64000.0` and `6.4e4` are `64000`, an integer
/// past 2^53 is the nearest double. Node writes run files with JSON.stringify;
/// serde_json's own `64000.0` would make the same value other bytes. Hand-written:
/// serde_json formats floats with ryu's Rust spelling, and no crate offers a JS one.
struct JsPretty<'a>(PrettyFormatter<'a>);

/// The largest integer a double holds exactly.
const SAFE: u64 = (1 << 53) - 1;

impl JsPretty<'_> {
    fn js<W: ?Sized + std::io::Write>(writer: &mut W, double: f64) -> std::io::Result<()> {
        writer.write_all(ryu_js::Buffer::new().format(double).as_bytes())
    }
}

macro_rules! delegate {
    ($($method:ident($($arg:ident: $ty:ty),*)),* $(,)?) => {$(
        fn $method<W: ?Sized + std::io::Write>(&mut self, writer: &mut W $(, $arg: $ty)*) -> std::io::Result<()> {
            self.0.$method(writer $(, $arg)*)
        }
    )*};
}

impl serde_json::ser::Formatter for JsPretty<'_> {
    delegate!(
        begin_array(),
        end_array(),
        begin_array_value(first: bool),
        end_array_value(),
        begin_object(),
        end_object(),
        begin_object_key(first: bool),
        end_object_key(),
        begin_object_value(),
        end_object_value(),
    );

    fn write_f64<W: ?Sized + std::io::Write>(&mut self, writer: &mut W, value: f64) -> std::io::Result<()> {
        Self::js(writer, value)
    }

    fn write_u64<W: ?Sized + std::io::Write>(&mut self, writer: &mut W, value: u64) -> std::io::Result<()> {
        match value <= SAFE {
            true => write!(writer, "{value}"),
            false => Self::js(writer, value as f64),
        }
    }

    fn write_i64<W: ?Sized + std::io::Write>(&mut self, writer: &mut W, value: i64) -> std::io::Result<()> {
        match value.unsigned_abs() <= SAFE {
            true => write!(writer, "{value}"),
            false => Self::js(writer, value as f64),
        }
    }
}

/// The Node tools sort keys with `localeCompare`, which is ICU collation (root
/// order, tertiary strength: punctuation, then digits, then letters ignoring case,
/// lowercase first on a tie), not code units. ICU4X's root collator gives that order
/// for every key; equal keys keep their order, as JavaScript's stable sort does.
pub fn node_locale_order(a: &str, b: &str) -> Ordering {
    if let Some(order) = alphanumeric_order(a, b) {
        return order;
    }
    static ROOT: std::sync::OnceLock<icu_collator::CollatorBorrowed<'static>> = std::sync::OnceLock::new();
    let collator = ROOT.get_or_init(|| {
        icu_collator::Collator::try_new(Default::default(), Default::default())
            .expect("the root collation data is compiled in")
    });
    collator.compare(a, b)
}

/// [`node_locale_order`] without the collator, for the common keys: when both are
/// ASCII letters and digits, the primary level (digits, then letters ignoring case, a
/// prefix first) is the byte order of the lowercased keys, and it decides unless the
/// keys differ only in case. `None` for any other pair. A collation costs about as
/// much as hashing a kilobyte, and `verify` collates every neighbouring pair of keys
/// of every object of every packet (`packet::key_order_notes`).
fn alphanumeric_order(a: &str, b: &str) -> Option<Ordering> {
    let plain = |s: &str| s.bytes().all(|c| c.is_ascii_alphanumeric());
    if !plain(a) || !plain(b) {
        return None;
    }
    let lower = |c: u8| c.to_ascii_lowercase();
    match a.bytes().map(lower).cmp(b.bytes().map(lower)) {
        Ordering::Equal => None,
        order => Some(order),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The collator's shortcut agrees with the collator wherever it answers: every pair
    /// of short keys over letters of both cases and digits, and keys a packet holds.
    #[test]
    fn alphanumeric_keys_collate_as_the_collator_does() {
        let alphabet = ["a", "b", "z", "A", "B", "Z", "0", "9"];
        let mut keys: Vec<String> = vec![String::new()];
        for _ in 0..2 {
            let longer: Vec<String> =
                keys.iter().flat_map(|k| alphabet.iter().map(move |c| format!("{k}{c}"))).collect();
            keys.extend(longer);
        }
        keys.sort();
        keys.dedup();
        keys.extend(
            ["packetVersion", "packetversion", "exactInputHash", "exactinputhash2", "Zeta", "alpha", "a1", "aB"]
                .map(String::from),
        );
        let root = icu_collator::Collator::try_new(Default::default(), Default::default()).unwrap();
        let mut answered = 0;
        for a in &keys {
            for b in &keys {
                if let Some(order) = alphanumeric_order(a, b) {
                    assert_eq!(order, root.compare(a, b), "{a:?} against {b:?}");
                    answered += 1;
                }
            }
        }
        assert!(answered > keys.len() * keys.len() / 2, "the shortcut answers most pairs: {answered}");
    }

    /// Pretty output writes numbers as JSON.stringify does: a whole double without
    /// `.0`, an exponent spelled out, an integer past 2^53 as its nearest double.
    #[test]
    fn pretty_numbers_are_javascripts() {
        let cases = [
            ("[6.4e4]", "[\n  64000\n]\n"),
            ("[64000.0, 0.5, -0.0, 1e21]", "[\n  64000,\n  0.5,\n  0,\n  1e+21\n]\n"),
            ("[9007199254740993, -9007199254740993, 7]", "[\n  9007199254740992,\n  -9007199254740992,\n  7\n]\n"),
            ("{\"a\": {\"b\": []}}", "{\n  \"a\": {\n    \"b\": []\n  }\n}\n"),
        ];
        for (input, expected) in cases {
            assert_eq!(to_pretty(&parse(input.as_bytes()).unwrap()), expected, "{input}");
        }
    }

    /// Callers decide by the kind, so a message reworded here cannot change a verdict.
    #[test]
    fn each_refusal_says_its_kind() {
        let kind = |text: &str| parse(text.as_bytes()).unwrap_err().refusal;
        assert_eq!(kind(r#"{"a": 1, "a": 2}"#), Refusal::DuplicateKey);
        assert_eq!(kind(&format!("{}{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1))), Refusal::TooDeep);
        assert_eq!(parse(format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH)).as_bytes()).map(drop), Ok(()));
        for syntax in ["[1,]", "{\"duplicate object key\": 1} x", "\u{feff}[]", "[1e400]", "NaN"] {
            assert_eq!(kind(syntax), Refusal::Syntax, "{syntax}");
        }
    }

    #[test]
    fn positions_are_one_based_even_at_the_start_of_a_line() {
        let at = |bytes: &[u8]| parse(bytes).map(drop).map_err(|e| (e.line, e.column)).unwrap_err();
        assert_eq!(at(b""), (1, 1));
        assert_eq!(at(b"[1,\n"), (2, 1));
        assert_eq!(at(b"  \n\n"), (3, 1));
    }

    #[test]
    fn every_escapable_byte_is_escaped_at_every_position() {
        let plain = "abcdefghijklmnopqrstuvwé";
        for b in (0u8..0x20).chain([b'"', b'\\']) {
            let expected_escape = match b {
                b'"' => "\\\"".to_owned(),
                b'\\' => "\\\\".to_owned(),
                0x08 => "\\b".to_owned(),
                0x09 => "\\t".to_owned(),
                0x0A => "\\n".to_owned(),
                0x0C => "\\f".to_owned(),
                0x0D => "\\r".to_owned(),
                _ => format!("\\u{:04x}", b),
            };
            for at in 0..=plain.len() - 2 {
                let (head, tail) = plain.split_at(at);
                let text = format!("{head}{}{tail}", b as char);
                let mut out = Vec::new();
                write_string(&mut out, &text);
                assert_eq!(
                    String::from_utf8(out).unwrap(),
                    format!("\"{head}{expected_escape}{tail}\""),
                    "byte {b:#04x} at {at}"
                );
            }
        }
        let mut out = Vec::new();
        write_string(&mut out, "/\u{7f}\u{2028}\u{2029}é😀 plain text longer than eight bytes");
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "\"/\u{7f}\u{2028}\u{2029}é😀 plain text longer than eight bytes\""
        );
    }

    #[test]
    fn integers_past_two_to_the_53_are_inexact_whatever_their_size() {
        let exact = |text: &str| is_exact_double(parse(text.as_bytes()).unwrap().as_number().unwrap());
        for ok in ["0", "-0", "9007199254740992", "-9007199254740992", "0.5", "1e-7", "5e-324"] {
            assert!(exact(ok), "{ok}");
        }
        for inexact in [
            "9007199254740993",
            "-9007199254740993",
            "18446744073709551615",
            "-9223372036854775809",
            "123456789012345678901234567890",
        ] {
            assert!(!exact(inexact), "{inexact}");
        }
    }
}
