//! A call held to the reviewed packets: matched (its exact system and user text are a
//! packet's, and so are its model and max tokens), mismatched (the texts are a
//! packet's, the model or max tokens are not), unreviewed (no packet has its texts),
//! or not judgeable (its content was not captured, or cannot be read). Held to a
//! gate (`super::vouched`), a matched call whose packet the gate did not vouch for
//! is unvouched, and an unreviewed one may conform to a vouched template.

use super::genai::{Call, Content};
use super::packets::Packets;
use serde::Serialize;

/// How to turn content capture on, for the not-judgeable verdict.
pub(crate) const CAPTURE_HINT: &str =
    "turn content capture on: OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY \
    with OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental (the opentelemetry-python-contrib GenAI \
    instrumentations), TRACELOOP_TRACE_CONTENT=true (opentelemetry-instrumentation-anthropic), or \
    ANTHROPIC_OPEN_TELEMETRY_TRACES_CONTENT_MODE=content (the anthropic SDK's own spans); content captured as \
    events (EVENT_ONLY) is in the logs export: give that file too";

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "verdict", rename_all = "kebab-case")]
pub enum Verdict {
    Matched {
        packet: String,
    },
    Mismatched {
        packet: String,
        differences: Vec<String>,
    },
    Unreviewed {
        reason: String,
    },
    NotJudgeable {
        reason: String,
    },
    /// The call's packet is no subject of a valid gate statement from a trusted key.
    Unvouched {
        packet: String,
        reason: String,
    },
    /// No packet has the call's texts, but they render the templates the gate vouched for.
    Conforms {
        templates: Vec<Used>,
        slots: Vec<Filled>,
    },
}

/// A template a conforming call rendered, and its version (the sha256 of its bytes).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Used {
    pub name: String,
    pub version: String,
}

/// A slot a conforming call filled: named by its expression, its value reported by
/// length and digest only (it is production data: no report copies it).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Filled {
    pub template: String,
    pub name: String,
    pub length: usize,
    pub sha256: String,
}

impl Verdict {
    pub fn name(&self) -> &'static str {
        match self {
            Verdict::Matched { .. } => "matched",
            Verdict::Mismatched { .. } => "mismatched",
            Verdict::Unreviewed { .. } => "unreviewed",
            Verdict::NotJudgeable { .. } => "not judgeable",
            Verdict::Unvouched { .. } => "unvouched",
            Verdict::Conforms { .. } => "conforms",
        }
    }

    /// Unreviewed, mismatched and unvouched calls fail the command.
    pub(crate) fn fails(&self) -> bool {
        matches!(self, Verdict::Mismatched { .. } | Verdict::Unreviewed { .. } | Verdict::Unvouched { .. })
    }
}

/// The verdict on `call`, and what it could not compare (notes).
pub(crate) fn judge(call: &Call, packets: &Packets) -> (Verdict, Vec<String>) {
    let (system, messages) = match &call.content {
        Content::Captured { system, messages } => (system, messages),
        Content::Missing => {
            let reason = format!("the call carries no message content; {CAPTURE_HINT}");
            return (Verdict::NotJudgeable { reason }, Vec::new());
        }
        Content::Unreadable(why) => return (Verdict::NotJudgeable { reason: why.clone() }, Vec::new()),
    };
    let user = match messages.as_slice() {
        [(role, text)] if role == "user" => text,
        _ => {
            let roles: Vec<&str> = messages.iter().map(|(role, _)| role.as_str()).collect();
            let reason = format!("a reviewed packet sends one user message; the call sends {roles:?}");
            return (Verdict::Unreviewed { reason }, Vec::new());
        }
    };
    let candidates = packets.with_text(system, user);
    let Some(first) = candidates.first() else {
        let reason = match packets.sharing_system(system) {
            0 => "no reviewed packet has this system text".to_owned(),
            n => format!("no reviewed packet has this user text ({n} have its system text)"),
        };
        return (Verdict::Unreviewed { reason }, Vec::new());
    };
    let mut notes = Vec::new();
    if call.model.is_none() {
        notes.push("the call records no gen_ai.request.model: the model is not compared".to_owned());
    }
    if call.max_tokens.is_none() {
        notes.push("the call records no gen_ai.request.max_tokens: max tokens are not compared".to_owned());
    }
    let differences = |p: &super::packets::Reviewed| {
        let mut out = Vec::new();
        if let Some(model) = call.model.as_deref().filter(|m| *m != p.model) {
            out.push(format!("model {model:?}; the packet's is {:?}", p.model));
        }
        if let Some(tokens) = call.max_tokens.filter(|t| *t != p.max_tokens) {
            out.push(format!("max tokens {tokens}; the packet's are {}", p.max_tokens));
        }
        out
    };
    let verdict = match candidates.iter().find(|p| differences(p).is_empty()) {
        Some(p) => Verdict::Matched { packet: p.file.clone() },
        None => Verdict::Mismatched { packet: first.file.clone(), differences: differences(first) },
    };
    (verdict, notes)
}
