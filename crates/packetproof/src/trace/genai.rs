//! A GenAI call as `trace` keeps it: which record it is (its span or event, scope and
//! ids), the model and max tokens it records, and its input messages, each reduced to
//! its role, the SHA-256 of its text and a bounded excerpt ([`Text`]). The texts
//! themselves are not kept: a call's evidence waits in memory until every export has
//! been read (`join`), and a digest is all a comparison with a reviewed packet needs.

use sha2::{Digest, Sha256};
use std::borrow::Cow;

/// The longest attribute value read (text or JSON); a longer one makes the call not judgeable.
pub(crate) const MAX_ATTRIBUTE_BYTES: usize = 4 * 1024 * 1024;

/// One model call, as its records name it.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    pub(crate) span: String,
    pub scope: String,
    pub(crate) trace_id: String,
    pub span_id: String,
    /// The model recorded, when it is a non-empty string.
    pub(crate) model: Option<String>,
    /// The max tokens recorded, when they are a positive integer.
    pub(crate) max_tokens: Option<u64>,
}

impl Call {
    /// The model the call records (`gen_ai.request.model`), if any.
    pub fn model(&self) -> Option<&str> {
        self.model.as_deref()
    }

    /// The trace the call belongs to (hex).
    pub fn trace_id(&self) -> &str {
        &self.trace_id
    }
}

/// A text, as compared and as quoted: its digest, its length and its first characters
/// (quoted only when a report shows it); and the whole text only while a gate's
/// templates may need it ([`keep_whole_texts`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Text {
    pub(crate) sha256: [u8; 32],
    pub(crate) chars: usize,
    bytes: usize,
    /// The first characters shown (none of a text that looks like a key: it is never shown).
    head: Box<str>,
    key_like: bool,
    pub(crate) whole: Option<Box<str>>,
}

thread_local! {
    /// Whether texts read on this thread keep their whole content. Only template
    /// conformance (`trace --gate`) reads it; everything else compares digests, so a
    /// trace's memory stays its calls' count, not their size. A thread-local rather than
    /// a parameter: every convention reader makes texts, and only the session knows.
    static KEEP_WHOLE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Make the texts read on this thread from now on keep their whole content (or not).
pub(crate) fn keep_whole_texts(keep: bool) {
    KEEP_WHOLE.with(|k| k.set(keep));
}

impl Text {
    pub(crate) fn of(text: &str) -> Text {
        let key_like = crate::report::looks_like_a_key(text);
        let head = match text.char_indices().nth(crate::report::MAX_EXCERPT_CHARS) {
            _ if key_like => "",
            Some((cut, _)) => &text[..cut],
            None => text,
        };
        Text {
            sha256: Sha256::digest(text.as_bytes()).into(),
            chars: text.chars().count(),
            bytes: text.len(),
            head: head.into(),
            key_like,
            whole: KEEP_WHOLE.with(|k| k.get()).then(|| text.into()),
        }
    }

    /// What it keeps, in bytes (about).
    pub(crate) fn weight(&self) -> usize {
        48 + self.head.len() + self.whole.as_ref().map_or(0, |w| w.len())
    }

    /// Its bounded excerpt, as `report::excerpt` quotes the whole text.
    fn excerpt(&self) -> String {
        if self.key_like {
            return format!("<{} bytes that look like a key (PEM); never shown>", self.bytes);
        }
        let quoted = crate::report::escape_name(&format!("{:?}", self.head)).into_owned();
        match self.chars - self.head.chars().count() {
            0 => quoted,
            rest => format!("{quoted}… ({rest} more characters)"),
        }
    }

    /// The excerpt, and for a long text its digest (two long texts may share their start).
    pub(crate) fn describe(&self) -> String {
        match self.chars > crate::report::MAX_EXCERPT_CHARS {
            true => format!("{} (sha256 {})", self.excerpt(), &super::record::hex(&self.sha256)[..12]),
            false => self.excerpt(),
        }
    }
}

thread_local! {
    /// What the instrumentation of the record being read appends to a text it cut short
    /// (its family declares it): set while the record is read, as every reader makes texts.
    static CUT: std::cell::Cell<Option<&'static str>> = const { std::cell::Cell::new(None) };
}

/// Mark the texts read on this thread from now on that end with `marker` as cut short.
pub(crate) fn mark_cut(marker: Option<&'static str>) {
    CUT.with(|c| c.set(marker));
}

/// One input message: its role (`developer` is `system`, as the APIs treat it) and text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Message {
    pub(crate) role: Cow<'static, str>,
    pub(crate) text: Text,
    /// A text its instrumentation cut short: what was recorded before its mark, whole
    /// (judged only as the beginning of a reviewed text).
    pub(crate) cut: Option<Box<str>>,
}

impl Message {
    pub(crate) fn new(role: &str, text: &str) -> Message {
        let cut = CUT.with(|c| c.get()).and_then(|marker| text.strip_suffix(marker)).map(Box::from);
        let role = match role {
            "developer" | "system" => Cow::Borrowed("system"),
            "model" | "assistant" => Cow::Borrowed("assistant"),
            "user" => Cow::Borrowed("user"),
            "tool" => Cow::Borrowed("tool"),
            other => Cow::Owned(other.to_owned()),
        };
        Message { role, text: Text::of(text), cut }
    }
}

/// The roles of messages, for a reason: `[system, user]`.
pub(crate) fn roles(messages: &[Message]) -> String {
    let mut roles: Vec<String> = messages.iter().take(SHOWN_ROLES).map(|m| crate::report::one_line(&m.role)).collect();
    if messages.len() > SHOWN_ROLES {
        roles.push(format!("… {} more of {} messages", messages.len() - SHOWN_ROLES, messages.len()));
    }
    format!("[{}]", roles.join(", "))
}

/// A message list is named by at most this many roles (20,000 flattened messages are
/// one line of a report, not 120 KB).
const SHOWN_ROLES: usize = 8;

#[cfg(test)]
mod roles_tests {
    use super::*;

    #[test]
    fn a_long_message_list_is_named_within_a_bound() {
        let message = |role: &str| Message::new(role, "x");
        let few: Vec<Message> = ["system", "user"].iter().map(|r| message(r)).collect();
        assert_eq!(roles(&few), "[system, user]");
        let many: Vec<Message> = (0..20_000).map(|_| message("user")).collect();
        let named = roles(&many);
        assert!(named.len() < 200 && named.ends_with("… 19992 more of 20000 messages]"), "{named}");
    }
}
