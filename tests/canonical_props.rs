//! Property tests of canonical JSON over generated values (finite doubles incl. -0,
//! integers past 2^53, strings with control and supplementary characters, nested
//! objects with random keys), plus the nesting limit measured from `MAX_DEPTH`.

use packetproof::canonical::{self, MAX_DEPTH};
use packetproof::digest;
use proptest::prelude::*;
use serde_json::{Map, Number, Value};

fn text() -> impl Strategy<Value = String> {
    let ch = prop_oneof![
        4 => any::<char>(),
        2 => proptest::char::range('\u{0}', '\u{1f}'),
        2 => proptest::char::range(' ', '~'),
        1 => Just('"'),
        1 => Just('\\'),
        1 => Just('/'),
        1 => Just('\u{7f}'),
        1 => Just('\u{2028}'),
        1 => proptest::char::range('\u{e000}', '\u{ffff}'),
        2 => proptest::char::range('\u{10000}', '\u{10ffff}'),
    ];
    proptest::collection::vec(ch, 0..10).prop_map(|chars| chars.into_iter().collect())
}

fn number() -> impl Strategy<Value = Number> {
    prop_oneof![
        any::<f64>().prop_filter_map("finite", Number::from_f64),
        Just(Number::from_f64(-0.0).unwrap()),
        (-1e6f64..1e6).prop_filter_map("finite", Number::from_f64),
        any::<i64>().prop_map(Number::from),
        any::<u64>().prop_map(Number::from),
        ((1u64 << 53) - 4..(1u64 << 53) + 64).prop_map(Number::from),
        (-1000i64..1000).prop_map(Number::from),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        number().prop_map(Value::Number),
        text().prop_map(Value::String),
    ];
    leaf.prop_recursive(5, 96, 8, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..8).prop_map(Value::Array),
            proptest::collection::vec((text(), inner), 0..8)
                .prop_map(|members| Value::Object(members.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// Same JSON value, numbers compared as the doubles JavaScript would see (so an
/// integer past 2^53 equals its rounded form, and -0 equals 0).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y)),
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

/// Every object's keys, in document order, are strictly increasing in UTF-16 code units.
fn keys_sorted(value: &Value) -> bool {
    match value {
        Value::Array(items) => items.iter().all(keys_sorted),
        Value::Object(map) => {
            let keys: Vec<Vec<u16>> = map.keys().map(|k| k.encode_utf16().collect()).collect();
            keys.windows(2).all(|w| w[0] < w[1]) && map.values().all(keys_sorted)
        }
        _ => true,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn canonicalization_is_idempotent(v in value()) {
        let once = canonical::to_vec(&v);
        let reparsed = canonical::parse(&once).map_err(|e| TestCaseError::fail(format!("canonical output refused: {e}")))?;
        let twice = canonical::to_vec(&reparsed);
        prop_assert_eq!(String::from_utf8_lossy(&twice), String::from_utf8_lossy(&once));
    }

    #[test]
    fn parsing_the_canonical_form_gives_back_the_value(v in value()) {
        let bytes = canonical::to_vec(&v);
        let back = canonical::parse(&bytes).map_err(|e| TestCaseError::fail(format!("canonical output refused: {e}")))?;
        prop_assert!(same(&v, &back), "{} came back as {}", v, back);
        // An independent (lax, order-keeping) parser reads the same value, keys in UTF-16 order.
        let lax: Value = serde_json::from_slice(&bytes).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert!(same(&v, &lax));
        prop_assert!(keys_sorted(&lax), "keys out of UTF-16 order in {}", String::from_utf8_lossy(&bytes));
    }

    #[test]
    fn canonical_bytes_do_not_depend_on_input_layout(v in value()) {
        let pretty = serde_json::to_string_pretty(&v).unwrap();
        let parsed = canonical::parse(pretty.as_bytes()).map_err(|e| TestCaseError::fail(format!("{e} in {pretty}")))?;
        prop_assert_eq!(canonical::to_vec(&parsed), canonical::to_vec(&v));
    }
}

fn nested(levels: usize, open: &str, inner: &str, close: &str) -> String {
    format!("{}{inner}{}", open.repeat(levels), close.repeat(levels))
}

#[test]
fn nesting_up_to_max_depth_is_accepted_and_one_more_is_refused() {
    for (open, close) in [("[", "]"), ("{\"k\":", "}")] {
        let deepest = nested(MAX_DEPTH - 1, open, "[]", close);
        let value = canonical::parse(deepest.as_bytes()).unwrap_or_else(|e| panic!("{MAX_DEPTH} levels refused: {e}"));
        assert_eq!(canonical::to_vec(&value), deepest.as_bytes());
        let too_deep = nested(MAX_DEPTH, open, "[]", close);
        let err = canonical::parse(too_deep.as_bytes()).expect_err("MAX_DEPTH + 1 levels accepted");
        assert!(err.message.contains(&format!("nesting deeper than {MAX_DEPTH} levels")), "{err}");
        assert_eq!(err.line, 1);
    }
}

/// Long strings: plain runs of random length with escapable and multi-byte
/// characters between, so runs cross the writer's 8-byte steps and the hashing
/// buffer's 8 KiB edge at random places. (Runs are cut from a fixed text: drawing
/// thousands of characters one by one is slow in a debug build.)
fn long_text() -> impl Strategy<Value = String> {
    const PLAIN: &str = "the quick brown fox jumps over the lazy dog / 0123456789 ";
    let piece = prop_oneof![
        4 => (0usize..3000).prop_map(|n| PLAIN.chars().cycle().take(n).collect::<String>()),
        1 => Just("\n".to_owned()),
        1 => Just("\"".to_owned()),
        1 => Just("\\".to_owned()),
        1 => proptest::char::range('\u{0}', '\u{1f}').prop_map(String::from),
        1 => any::<char>().prop_map(String::from),
    ];
    proptest::collection::vec(piece, 0..16).prop_map(|pieces| pieces.concat())
}

/// Keys from the ranges where UTF-8 byte order and UTF-16 order disagree.
fn key() -> impl Strategy<Value = String> {
    let ch = prop_oneof![
        2 => proptest::char::range('a', 'c'),
        1 => proptest::char::range('\u{7f}', '\u{800}'),
        2 => proptest::char::range('\u{e000}', '\u{ffff}'),
        2 => proptest::char::range('\u{10000}', '\u{10ffff}'),
    ];
    proptest::collection::vec(ch, 0..4).prop_map(|chars| chars.into_iter().collect())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Strings are written exactly as `JSON.stringify` writes them; serde_json's
    /// writer escapes the same bytes the same way, so it is the independent oracle.
    #[test]
    fn strings_are_escaped_like_json_stringify(text in long_text()) {
        let ours = canonical::to_vec(&Value::String(text.clone()));
        let oracle = serde_json::to_string(&text).unwrap();
        prop_assert_eq!(String::from_utf8(ours).unwrap(), oracle);
    }

    /// The checksum hashes canonical bytes while writing them; it must equal SHA-256
    /// of the canonical bytes written out first, for small values and for values
    /// far past the hashing buffer.
    #[test]
    fn streaming_hash_equals_sha256_of_the_canonical_bytes(
        v in value(),
        texts in proptest::collection::vec(long_text(), 0..6),
    ) {
        let mut map = Map::new();
        map.insert("value".into(), v);
        map.insert("texts".into(), Value::Array(texts.into_iter().map(Value::String).collect()));
        let bytes = canonical::to_vec(&Value::Object(map.clone()));
        let expected = digest::sha256(&bytes);
        map.insert("checksum".into(), Value::from("left out of the hash"));
        prop_assert_eq!(digest::packet_checksum(&map), expected);
        let mut packet = Map::new();
        for field in ["systemPrompt", "effectiveUserMessage", "outputSchema", "model"] {
            packet.insert(field.into(), map["texts"].clone());
        }
        prop_assert_eq!(digest::exact_input_hash(&packet), digest::sha256(&digest::exact_input_bytes(&packet)));
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2048, ..ProptestConfig::default() })]

    #[test]
    fn key_order_is_utf16_code_unit_order(a in key(), b in key()) {
        let expected = a.encode_utf16().cmp(b.encode_utf16());
        prop_assert_eq!(canonical::utf16_order(&a, &b), expected, "{:?} vs {:?}", a, b);
    }
}
