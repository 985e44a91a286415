//! JSON numbers as the contract means them: values, not spellings. `1e0`, `1.0`
//! and `1` are the same number (JavaScript parses them to the same double, and
//! canonical JSON prints them alike), so wherever the contract compares values
//! they compare equal. Messages still quote a number as the file wrote it: the
//! parsed value has forgotten its spelling, so [`quote_as_written`] finds it again
//! in the file's text, and only when a finding needs it.

use crate::report::{Finding, JsonPath, Location, Segment};
use serde_json::value::RawValue;
use serde_json::Value;
use std::collections::BTreeMap;

/// Deep equality with numbers compared by value.
pub(crate) fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x == y || x.as_f64().is_some_and(|x| Some(x) == y.as_f64()),
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y)),
        (Value::Object(x), Value::Object(y)) => same_map(x, y),
        _ => a == b,
    }
}

/// [`same`] for two objects.
pub(crate) fn same_map(x: &serde_json::Map<String, Value>, y: &serde_json::Map<String, Value>) -> bool {
    x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
}

/// [`same`] for an optional value (a missing field is never equal).
pub(crate) fn same_opt(a: Option<&Value>, b: &Value) -> bool {
    a.is_some_and(|a| same(a, b))
}

/// Rewrite each finding whose JSON path names a number in `text` (the file the
/// findings are about) so that its message shows the number as written there:
/// "found 2.0" becomes "found 2e0" when the file says `2e0`.
pub(crate) fn quote_as_written(findings: &mut [Finding], text: &[u8]) {
    let Ok(text) = std::str::from_utf8(text) else { return };
    for finding in findings.iter_mut().filter(|f| shows_a_number(f)) {
        if let Location::Value(path) = &finding.path {
            finding.message = as_written(&finding.message, text, path);
        }
    }
}

/// `message` with the number at `path` in `text` shown as `text` writes it.
fn as_written(message: &str, text: &str, path: &JsonPath) -> String {
    let Some(written) = raw_at(text, path) else { return message.to_owned() };
    let Ok(Value::Number(parsed)) = serde_json::from_str::<Value>(written) else { return message.to_owned() };
    let shown = parsed.to_string();
    match shown == written {
        true => message.to_owned(),
        false => replace_token(message, &shown, written),
    }
}

/// Whether a finding's message can show a number (every number prints with a digit).
/// Finding a path's text parses the file around it, so findings that cannot change
/// are not looked up: a verify of 1,000 packets with two such findings each spent a
/// quarter of its CPU time here.
fn shows_a_number(finding: &Finding) -> bool {
    finding.message.bytes().any(|b| b.is_ascii_digit())
}

/// [`quote_as_written`] for findings about `file`, read again only when one may show a number.
pub(crate) fn quote_as_written_in(findings: &mut [Finding], file: &std::path::Path, max_bytes: u64) {
    if !findings.iter().any(shows_a_number) {
        return;
    }
    if let Ok(bytes) = crate::fsutil::read_bytes(file, max_bytes) {
        quote_as_written(findings, &bytes);
    }
}

/// [`quote_as_written`] for findings about the files of a run directory (located
/// [`Location::InFile`], the run checks' form), each file read once.
pub(crate) fn quote_as_written_under(findings: &mut [Finding], dir: &std::path::Path, max_bytes: u64) {
    let mut texts: BTreeMap<String, Option<String>> = BTreeMap::new();
    for finding in findings.iter_mut().filter(|f| shows_a_number(f)) {
        let Location::InFile { file, path } = &finding.path else { continue };
        let text = texts.entry(file.clone()).or_insert_with(|| {
            let bytes = crate::fsutil::read_bytes(&dir.join(file), max_bytes).ok()?;
            String::from_utf8(bytes).ok()
        });
        if let Some(text) = text {
            finding.message = as_written(&finding.message, text, path);
        }
    }
}

/// The raw text of the value at a JSON path, if any.
fn raw_at<'t>(text: &'t str, path: &JsonPath) -> Option<&'t str> {
    let mut raw = text;
    for segment in path.segments() {
        raw = match segment {
            Segment::Key(key) => member(raw, key)?,
            Segment::Index(i) => {
                let items: Vec<&RawValue> = serde_json::from_str(raw).ok()?;
                items.get(*i)?.get()
            }
        };
    }
    Some(raw.trim())
}

fn member<'t>(raw: &'t str, key: &str) -> Option<&'t str> {
    let members: BTreeMap<String, &RawValue> = serde_json::from_str(raw).ok()?;
    members.get(key).map(|v| v.get())
}

/// `message` with each standalone occurrence of the number `shown` replaced.
fn replace_token(message: &str, shown: &str, written: &str) -> String {
    let number_char = |c: char| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '+' | '-');
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(at) = rest.find(shown) {
        let before = rest[..at].chars().next_back();
        let after = rest[at + shown.len()..].chars().next();
        out.push_str(&rest[..at]);
        let standalone = !before.is_some_and(number_char) && !after.is_some_and(number_char);
        out.push_str(if standalone { written } else { shown });
        rest = &rest[at + shown.len()..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn numbers_compare_by_value_everywhere() {
        let parse = |t: &str| crate::canonical::parse(t.as_bytes()).unwrap();
        assert!(same(&parse("1e0"), &json!(1)));
        assert!(same(&parse(r#"{"a":[1.0,{"b":64e3}]}"#), &json!({"a": [1, {"b": 64000}]})));
        assert!(!same(&parse("2e0"), &json!(1)));
        assert!(!same(&json!({"a": 1}), &json!({"a": 1, "b": 2})));
        assert!(!same(&json!("1"), &json!(1)));
    }

    #[test]
    fn messages_quote_numbers_as_the_file_wrote_them() {
        let text = br#"{"attempt": 2e0, "deep": {"odd key": [0, 1.50]}, "ok": 3}"#;
        let at = JsonPath::root;
        let mut findings = vec![
            Finding::new(crate::PacketCheck::Contract, at().key("attempt"), "expected 1, found 2.0"),
            Finding::new(crate::PacketCheck::Contract, at().key("deep").key("odd key").index(1), "1.5 is not 21.5"),
            Finding::new(crate::PacketCheck::Contract, at().key("ok"), "found 3"),
            Finding::new(crate::PacketCheck::Contract, at().key("missing"), "found 2.0"),
        ];
        quote_as_written(&mut findings, text);
        let messages: Vec<&str> = findings.iter().map(|f| f.message.as_str()).collect();
        assert_eq!(messages, ["expected 1, found 2e0", "1.50 is not 21.5", "found 3", "found 2.0"]);
    }

    #[test]
    fn run_findings_quote_the_file_and_key_they_name_whatever_the_names_hold() {
        let dir = tempfile::tempdir().unwrap();
        // As text, `copy $1.json $["a $.b\"]"]` splits at the first " $" into the
        // wrong file, and its key reads as a path of its own.
        std::fs::write(dir.path().join("copy $1.json"), br#"{"a $.b\"]": [7, 2e0], "n": 5.0}"#).unwrap();
        std::fs::write(dir.path().join("copy"), br#"{"n": 4e0}"#).unwrap();
        // Nor is the packet rebuilt from a run a file, whatever the run holds.
        std::fs::write(dir.path().join("packet"), br#"{"n": 6e0}"#).unwrap();
        let path = JsonPath::root().key("a $.b\"]").index(1);
        let mut findings = vec![
            Finding::new(crate::RunCheck::Evaluation, Location::in_file("copy $1.json", path.clone()), "found 2.0"),
            Finding::new(
                crate::RunCheck::Evaluation,
                Location::in_file("copy", JsonPath::root().key("n")),
                "found 4.0",
            ),
            Finding::new(crate::RunCheck::Evaluation, Location::named("copy $1.json"), "found 5.0"),
            Finding::new(crate::RunCheck::AgentRequest, Location::RebuiltPacket(JsonPath::field("n")), "found 6.0"),
        ];
        quote_as_written_under(&mut findings, dir.path(), 1 << 20);
        let messages: Vec<&str> = findings.iter().map(|f| f.message.as_str()).collect();
        assert_eq!(messages, ["found 2e0", "found 4e0", "found 5.0", "found 6.0"]);
        assert_eq!(findings[0].path.to_string(), r#"copy $1.json $["a $.b\"]"][1]"#);
    }

    /// `same` over generated doubles and their spellings. What each property catches:
    /// comparing numbers as parsed (`1` an integer, `1.0` a double) fails the first;
    /// comparing within a tolerance, or through a lossy conversion, fails the second
    /// and third; a canonical spelling that rounds fails the last.
    mod property {
        use super::*;
        use proptest::prelude::*;

        fn parse(text: &str) -> Value {
            crate::canonical::parse(text.as_bytes()).unwrap_or_else(|e| panic!("{text}: {e}"))
        }

        fn canonical(v: f64) -> String {
            String::from_utf8(crate::canonical::to_vec(&json!(v))).unwrap()
        }

        /// Finite doubles: any, integers, and short decimals (`n / 10^k`).
        fn double() -> impl Strategy<Value = f64> {
            prop_oneof![
                any::<f64>().prop_filter("finite", |v| v.is_finite()),
                (-1_000_000i64..1_000_000).prop_map(|n| n as f64),
                (-1_000_000i64..1_000_000, 0..8i32).prop_map(|(n, k)| n as f64 / 10f64.powi(k)),
            ]
        }

        /// The same value written several ways: the digits of its shortest spelling as an
        /// integer mantissa (`12345e-1`), with zeros appended (`12345000e-4`), with a point
        /// and a signed capital exponent (`1.23450E+3`), and without an exponent (`1234.5`).
        fn spellings(v: f64) -> Vec<String> {
            let shortest = format!("{v:e}");
            let (mantissa, exponent) = shortest.split_once('e').unwrap();
            let exponent: i32 = exponent.parse().unwrap();
            let (sign, mantissa) = mantissa.strip_prefix('-').map_or(("", mantissa), |m| ("-", m));
            let digits = mantissa.replace('.', "");
            let scale = exponent - (digits.len() as i32 - 1);
            let (first, rest) = digits.split_at(1);
            // JSON allows no leading zero: zero's zeros go after a point.
            let zeros = match digits.as_str() {
                "0" => format!("{sign}0.000e{}", scale - 3),
                _ => format!("{sign}{digits}000e{}", scale - 3),
            };
            let mut out = vec![format!("{sign}{digits}e{scale}"), zeros, format!("{sign}{first}.{rest}0E{exponent:+}")];
            if (-30..=30).contains(&scale) {
                out.push(format!("{sign}{}", decimal(&digits, scale)));
            }
            out
        }

        /// `digits × 10^scale` written without an exponent.
        fn decimal(digits: &str, scale: i32) -> String {
            if scale >= 0 {
                return format!("{digits}{}.0", "0".repeat(scale as usize));
            }
            let point = digits.len() as i32 + scale;
            match point > 0 {
                true => format!("{}.{}", &digits[..point as usize], &digits[point as usize..]),
                false => format!("0.{}{digits}", "0".repeat(-point as usize)),
            }
        }

        proptest! {
            #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

            #[test]
            fn one_value_spelled_differently_is_the_same_number(v in double()) {
                let canonical = parse(&canonical(v));
                for spelling in spellings(v) {
                    let spelled = parse(&spelling);
                    prop_assert!(same(&spelled, &canonical), "{} is not {:e}", spelling, v);
                    prop_assert!(same(&json!({"k": [spelled]}), &json!({"k": [v]})), "{} nested", spelling);
                }
                if v.fract() == 0.0 && v.abs() < 9e15 {
                    let integer = parse(&format!("{}", v as i64));
                    prop_assert!(same(&integer, &canonical), "{} as an integer", v);
                }
            }

            #[test]
            fn a_value_and_its_neighbour_are_different_numbers(v in double()) {
                // The next double away from zero: the smallest step a spelling can make.
                let neighbour = f64::from_bits(v.to_bits() + 1);
                prop_assume!(neighbour.is_finite());
                prop_assert!(!same(&parse(&canonical(v)), &parse(&canonical(neighbour))), "{:e} and {:e}", v, neighbour);
            }

            #[test]
            fn neighbouring_safe_integers_are_different_numbers(n in -(1i64 << 53)..(1i64 << 53)) {
                // Past 2^53 two integers are one double, as JavaScript reads them: the same.
                let (integer, next, point) = (n.to_string(), (n + 1).to_string(), format!("{n}.0"));
                prop_assert!(!same(&parse(&integer), &parse(&next)), "{} and {}", integer, next);
                prop_assert!(same(&parse(&integer), &parse(&point)), "{} and {}", integer, point);
            }

            #[test]
            fn the_canonical_spelling_parses_back_to_the_same_value(v in double()) {
                let text = canonical(v);
                let back = parse(&text);
                prop_assert!(same(&back, &json!(v)), "{:e} was written {}", v, text);
                prop_assert_eq!(back.as_f64(), Some(v), "{} was written {}", v, text);
            }
        }
    }
}
