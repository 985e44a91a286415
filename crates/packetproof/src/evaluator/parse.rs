//! Stage `json-parse`: the raw output trimmed as JavaScript trims,
//! parsed whole, or else as one fenced block that is the entire text. Stricter than the
//! reference on purpose (the contract's strict JSON): invalid UTF-8, duplicate keys, lone
//! surrogates, numbers out of the double range and nesting past `canonical::MAX_DEPTH`
//! are refused here instead of being repaired or crashing later.

use super::text::{is_js_space, js_trim};
use crate::canonical;
use serde_json::Value;

/// The parsed output, or why it cannot be read (the message of a `json-parse` failure).
pub(crate) fn parse_output(raw: &[u8]) -> Result<Value, String> {
    let text =
        std::str::from_utf8(raw).map_err(|e| format!("not UTF-8 (invalid byte at offset {})", e.valid_up_to()))?;
    let text = js_trim(text);
    if text.is_empty() {
        return Err("empty output: expected one JSON object".into());
    }
    match canonical::parse(text.as_bytes()) {
        Ok(value) => Ok(value),
        Err(whole) => match fence_body(text) {
            Some(body) => canonical::parse(body.as_bytes()).map_err(|e| format!("fenced block: invalid JSON at {e}")),
            None => Err(format!("not valid JSON (nor one fenced block holding it): invalid JSON at {whole}")),
        },
    }
}

/// Whether the output is readable only as a fenced block (the reference's evaluator
/// accepts it; its completion refuses it, and so does `complete`).
pub(crate) fn is_fenced(raw: &[u8]) -> bool {
    let Ok(text) = std::str::from_utf8(raw) else { return false };
    let text = js_trim(text);
    canonical::parse(text.as_bytes()).is_err()
        && fence_body(text).is_some_and(|b| canonical::parse(b.as_bytes()).is_ok())
}

/// The body of a text that is exactly one fenced block: three backticks, optionally the
/// word `json` in any case, optional white space, the body, optional white space, three
/// closing backticks at the very end. Any other info string stays part of the body (so
/// ```` ```javascript ```` fails to parse), as in the reference.
fn fence_body(text: &str) -> Option<&str> {
    if text.len() < 6 {
        return None;
    }
    let inner = text.strip_prefix("```")?.strip_suffix("```")?;
    let inner = match inner.get(..4) {
        Some(word) if word.eq_ignore_ascii_case("json") => &inner[4..],
        _ => inner,
    };
    Some(inner.trim_matches(is_js_space))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fenced_and_trimmed_output_parses() {
        assert_eq!(parse_output(b"  \n{\"a\":1}\n ").unwrap(), json!({"a": 1}));
        assert_eq!(parse_output("\u{FEFF}\u{A0}{\"a\":1}\u{2028}".as_bytes()).unwrap(), json!({"a": 1}));
        assert_eq!(parse_output(b"```json\n{\"a\":1}\n```").unwrap(), json!({"a": 1}));
        assert_eq!(parse_output(b"```JSON{\"a\":1}```").unwrap(), json!({"a": 1}));
        assert_eq!(parse_output(b"```\n{\"a\":1}\n```\n").unwrap(), json!({"a": 1}));
        assert!(parse_output(b"Here you go: ```json\n{\"a\":1}\n```").is_err());
        assert!(parse_output(b"```javascript\n{\"a\":1}\n```").is_err());
        assert!(parse_output(b"```json\n{\"a\":1}").is_err(), "unterminated fence");
        assert!(parse_output(b"``````").is_err());
        assert!(parse_output(b"```json\n{\"a\":}\n```").unwrap_err().contains("fenced block"));
        assert!(
            is_fenced(b"```json\n{\"a\":1}\n```")
                && !is_fenced(b" {\"a\":1} ")
                && !is_fenced(b"```json\n{\"a\":}\n```")
        );
    }

    #[test]
    fn strict_json_is_refused() {
        assert!(parse_output(b"{\"a\":1,\"a\":2}").unwrap_err().contains("duplicate"));
        assert!(parse_output(b"   ").unwrap_err().contains("empty"));
        assert!(parse_output(b"{\"a\":\"\xff\"}").unwrap_err().contains("not UTF-8"));
        assert!(parse_output(b"{\"a\":1e400}").is_err());
    }
}
