//! Values as `trace` reads them: JSON whose strings borrow from the export's bytes
//! wherever they need no unescaping, so reading a record copies no text. The strict
//! parse ([`parse`]) accepts exactly what `canonical::parse` accepts (a duplicate key,
//! a lone surrogate, a number out of a double's range or nesting past its depth is
//! refused) and refuses it in the same words at the same place, being the same tokenizer
//! behind the same checks (`canonical::parse_with`), and [`Json`] compares as
//! `serde_json::Value` compares (an object's members in any order).

use crate::canonical::ParseError;
use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};
use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;

/// A JSON value whose strings may borrow from the text it was read from.
#[derive(Debug, Clone)]
pub(crate) enum Json<'a> {
    Null,
    Bool(bool),
    Number(Number),
    String(Cow<'a, str>),
    Array(Vec<Json<'a>>),
    /// Members in the order written, each key once.
    Object(Vec<(Cow<'a, str>, Json<'a>)>),
}

impl<'a> Json<'a> {
    /// An object's member.
    pub(crate) fn get(&self, key: &str) -> Option<&Json<'a>> {
        match self {
            Json::Object(members) => members.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    pub(crate) fn as_str(&self) -> Option<&str> {
        match self {
            Json::String(s) => Some(s),
            _ => None,
        }
    }

    pub(crate) fn is_null(&self) -> bool {
        matches!(self, Json::Null)
    }

    pub(crate) fn is_string(&self) -> bool {
        matches!(self, Json::String(_))
    }

    pub(crate) fn is_array(&self) -> bool {
        matches!(self, Json::Array(_))
    }

    /// The value as `serde_json` holds it (owned), for what outlives the record.
    pub(crate) fn to_value(&self) -> Value {
        match self {
            Json::Null => Value::Null,
            Json::Bool(b) => Value::Bool(*b),
            Json::Number(n) => Value::Number(n.clone()),
            Json::String(s) => Value::String(s.to_string()),
            Json::Array(items) => Value::Array(items.iter().map(Json::to_value).collect()),
            Json::Object(members) => {
                Value::Object(members.iter().map(|(k, v)| (k.to_string(), v.to_value())).collect::<Map<_, _>>())
            }
        }
    }
}

impl PartialEq for Json<'_> {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Json::Null, Json::Null) => true,
            (Json::Bool(a), Json::Bool(b)) => a == b,
            (Json::Number(a), Json::Number(b)) => a == b,
            (Json::String(a), Json::String(b)) => a == b,
            (Json::Array(a), Json::Array(b)) => a == b,
            // Keys are unique, so equal lengths and each member found equal is equality.
            (Json::Object(a), Json::Object(b)) => {
                a.len() == b.len() && a.iter().all(|(k, v)| other.get(k).is_some_and(|w| v == w))
            }
            _ => false,
        }
    }
}

/// Parse `bytes` as strict JSON, as `canonical::parse` does (and with its errors).
pub(crate) fn parse(bytes: &[u8]) -> Result<Json<'_>, ParseError> {
    crate::canonical::parse_with(bytes, Strict)
}

/// Builds a [`Json`] borrowing what it can, refusing duplicate keys.
struct Strict;

impl<'de> DeserializeSeed<'de> for Strict {
    type Value = Json<'de>;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Json<'de>, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Strict {
    type Value = Json<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Json<'de>, E> {
        Ok(Json::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Json<'de>, E> {
        Ok(Json::Number(v.into()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Json<'de>, E> {
        Ok(Json::Number(v.into()))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Json<'de>, E> {
        Number::from_f64(v).map(Json::Number).ok_or_else(|| E::custom("number is not finite"))
    }
    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Json<'de>, E> {
        Ok(Json::String(Cow::Borrowed(v)))
    }
    fn visit_str<E>(self, v: &str) -> Result<Json<'de>, E> {
        Ok(Json::String(Cow::Owned(v.to_owned())))
    }
    fn visit_string<E>(self, v: String) -> Result<Json<'de>, E> {
        Ok(Json::String(Cow::Owned(v)))
    }
    fn visit_unit<E>(self) -> Result<Json<'de>, E> {
        Ok(Json::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json<'de>, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(Strict)? {
            items.push(item);
        }
        Ok(Json::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json<'de>, A::Error> {
        let mut members: Vec<(Cow<'de, str>, Json<'de>)> = Vec::new();
        // A key is refused as soon as it repeats one, where canonical::parse refuses it:
        // compared with each member of a small object, looked up in a set past that.
        let mut many: Option<HashSet<Cow<'de, str>>> = None;
        while let Some(key) = map.next_key_seed(Key)? {
            let repeated = match &mut many {
                Some(keys) => !keys.insert(key.clone()),
                None => members.iter().any(|(k, _)| *k == key),
            };
            if repeated {
                return Err(de::Error::custom(crate::canonical::duplicate_key(&key)));
            }
            let value = map.next_value_seed(Strict)?;
            members.push((key, value));
            if many.is_none() && members.len() > 16 {
                many = Some(members.iter().map(|(k, _)| k.clone()).collect());
            }
        }
        Ok(Json::Object(members))
    }
}

/// An object key, borrowed when it needs no unescaping.
struct Key;

impl<'de> DeserializeSeed<'de> for Key {
    type Value = Cow<'de, str>;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Cow<'de, str>, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for Key {
    type Value = Cow<'de, str>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object key")
    }
    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Borrowed(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Owned(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Owned(v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_strict_parse_agrees_with_canonical_parse() {
        let texts: &[&str] = &[
            r#"{"a": [1, -2, 3.5, "x\ny", null, true, {"b": {}}]}"#,
            r#"{"a": 1, "a": 2}"#,
            r#"{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"ka":10,"kb":11,"kc":12,"kd":13,"ke":14,"kf":15,"k3":16}"#,
            r#"["\ud800"]"#,
            "[1e400]",
            "\u{feff}{}",
            "{} x",
            "",
            "[NaN]",
        ];
        for text in texts {
            let strict = parse(text.as_bytes()).map(|j| j.to_value());
            assert_eq!(strict, crate::canonical::parse(text.as_bytes()), "{text}");
        }
        assert_eq!(parse(&[b'"', 0xff, b'"']).map(|j| j.to_value()), crate::canonical::parse(&[b'"', 0xff, b'"']));
        let nested = format!("{}{}", "[".repeat(200), "]".repeat(200));
        assert_eq!(parse(nested.as_bytes()).map(|j| j.to_value()), crate::canonical::parse(nested.as_bytes()));
    }

    #[test]
    fn values_compare_as_serde_json_values_do() {
        let a = parse(br#"{"x": 1, "y": [1.0, "s"]}"#).unwrap();
        let b = parse(br#"{"y": [1.0, "s"], "x": 1}"#).unwrap();
        assert_eq!(a, b);
        assert_ne!(parse(b"1").unwrap(), parse(b"1.0").unwrap());
        assert_ne!(a, parse(br#"{"x": 1}"#).unwrap());
        assert!(matches!(parse(br#"["a\"b", "c"]"#).unwrap(), Json::Array(items)
            if matches!(&items[0], Json::String(Cow::Owned(_))) && matches!(&items[1], Json::String(Cow::Borrowed(_)))));
    }
}
