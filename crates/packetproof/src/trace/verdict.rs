//! A call held to the reviewed packets, as its request was sent:
//!
//! - matched: its messages are exactly a packet's request (a system message with the
//!   packet's system text, then one user message with its user text, in that order),
//!   and its model and max tokens are the packet's;
//! - mismatched: its texts are a packet's but its messages are in another order or
//!   other roles, or its model or max tokens differ, are of the wrong type or out of
//!   range, or its records contradict each other (two values for one thing: each named);
//! - unreviewed: no packet has its texts;
//! - not judgeable: its content was not captured, or cannot be read (the hint names the
//!   setting of the instrumentation that recorded it).
//!
//! Held to a gate (`super::vouched`), a matched call whose packet the gate did not vouch
//! for is unvouched, and an unreviewed one may conform to a vouched template.

use super::conventions::{shown, Library, Said, Unread};
use super::genai::{roles, Call, Message};
use super::join::Evidence;
use super::packets::{Packets, Reviewed, Seen};
use super::settings::{held, Expected, Required, BUDGET};
use serde::Serialize;
use serde_json::Value;

/// How to turn content capture on, when the instrumentation is not known.
pub(crate) const CAPTURE_HINT: &str = "turn content capture on: OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY \
    with OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental (the opentelemetry-python-contrib GenAI \
    instrumentations; OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true for @opentelemetry/instrumentation-openai in Node), \
    TRACELOOP_TRACE_CONTENT=true (OpenLLMetry, Python and Node), ANTHROPIC_OPEN_TELEMETRY_TRACES_CONTENT_MODE=content \
    (the anthropic SDK's own spans), OPENINFERENCE_HIDE_INPUTS unset (OpenInference), recordInputs: true (Vercel AI SDK); \
    content captured as events is in the logs export: give that file too";

#[derive(Debug, Clone, PartialEq, Serialize, strum::IntoStaticStr)]
#[serde(tag = "verdict", rename_all = "kebab-case")]
#[strum(serialize_all = "kebab-case")]
pub enum Verdict {
    Matched {
        packet: String,
    },
    Mismatched {
        /// The packet whose texts the call has (none when its records contradict each
        /// other about the texts themselves).
        #[serde(skip_serializing_if = "Option::is_none")]
        packet: Option<String>,
        differences: Vec<String>,
    },
    Unreviewed {
        reason: String,
    },
    #[strum(serialize = "not judgeable")]
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

pub use crate::conform::{Filled, Used};

impl Verdict {
    pub fn name(&self) -> &'static str {
        self.into()
    }

    /// Unreviewed, mismatched and unvouched calls fail the command (a not-judgeable one
    /// fails unless unjudged calls are allowed: `Counts::ok`).
    pub(crate) fn fails(&self) -> bool {
        matches!(self, Verdict::Mismatched { .. } | Verdict::Unreviewed { .. } | Verdict::Unvouched { .. })
    }
}

/// The hint for a call without content: the setting of each library that recorded it.
pub(crate) fn capture_hint(libraries: &[Library]) -> String {
    match libraries {
        [] => CAPTURE_HINT.to_owned(),
        some => {
            let hints: Vec<&str> = some.iter().map(|l| l.hint()).collect();
            format!("turn content capture on: {}", hints.join("; "))
        }
    }
}

/// The verdict on a call (filling in its model and max tokens), and what it could not
/// compare or read otherwise than sent (notes).
pub(crate) fn judge(
    call: &mut Call,
    evidence: &Evidence,
    packets: &Packets,
    require: Required,
) -> (Verdict, Vec<String>) {
    let (verdict, mut notes) = judge_content(call, evidence, packets, require);
    notes.extend(evidence.notes.iter().cloned());
    (verdict, notes)
}

fn judge_content(call: &mut Call, evidence: &Evidence, packets: &Packets, require: Required) -> (Verdict, Vec<String>) {
    let mut withheld = None;
    let mut differences = evidence.conflicts.clone();
    let model = one_value(&evidence.model, "model", model_problem, &mut differences);
    let max_tokens = one_value(&evidence.max_tokens, "max tokens", max_tokens_problem, &mut differences);
    call.model = model.as_ref().and_then(|s| s.value.as_str().map(str::to_owned));
    call.max_tokens = max_tokens.as_ref().and_then(|s| whole(&s.value));

    let mut unparsed = None;
    let mut readable: Vec<(&str, &[Message])> = Vec::new();
    for (source, messages) in &evidence.content {
        match messages {
            Ok(messages) => readable.push((source, messages)),
            Err(Unread::Conflict(why)) => differences.push(why.clone()),
            Err(Unread::Unparsed(why)) => unparsed = unparsed.or(Some(why.clone())),
            Err(Unread::Withheld(why)) => withheld = withheld.or(Some(why.clone())),
        }
    }
    // System instructions recorded alone agree with the system messages of the rest,
    // or are the content when nothing else is.
    for (source, message) in &evidence.system_only {
        match message {
            Ok(message) => match readable.first() {
                None => readable.push((source, std::slice::from_ref(message))),
                Some((other, messages)) => {
                    let systems: Vec<&Message> = messages.iter().filter(|m| m.role == "system").collect();
                    if systems.as_slice() != [message] {
                        let theirs: Vec<String> = systems.iter().map(|m| m.text.describe()).collect();
                        differences.push(format!(
                            "{source} is {} and {other} sends system text {}",
                            message.text.describe(),
                            if theirs.is_empty() { "none".to_owned() } else { theirs.join(" then ") }
                        ));
                    }
                }
            },
            Err(Unread::Conflict(why)) => differences.push(why.clone()),
            Err(Unread::Unparsed(why)) => unparsed = unparsed.or(Some(why.clone())),
            Err(Unread::Withheld(why)) => withheld = withheld.or(Some(why.clone())),
        }
    }
    if let Some((first_source, first)) = readable.first() {
        for (source, messages) in &readable[1..] {
            if messages != first {
                differences.push(format!(
                    "{first_source} and {source} differ: {}",
                    first_difference(first, messages, first_source, source)
                ));
            }
        }
    }
    if let (Some((_, messages)), true) = (readable.first(), differences.is_empty()) {
        if let Some(verdict) = evidence.unrecorded.and_then(|why| partly_recorded(why, messages, packets)) {
            return (verdict, Vec::new());
        }
        if let Some(verdict) = cut_short(messages, packets) {
            return (verdict, Vec::new());
        }
    }
    let texts = packet_for(readable.first().map(|(_, m)| *m), packets);
    if !differences.is_empty() {
        let packet = match &texts {
            Texts::Packet(found, structure) => {
                let p = best(found, model.as_ref(), max_tokens.as_ref());
                differences.extend(structure.clone());
                differences.extend(compared(p, model.as_ref(), max_tokens.as_ref()));
                Some(p.file.clone())
            }
            _ => None,
        };
        return (Verdict::Mismatched { packet, differences }, Vec::new());
    }
    if let Some(why) = unparsed {
        return (Verdict::NotJudgeable { reason: format!("{why}: the call's content cannot be compared") }, Vec::new());
    }
    let (packet, structure) = match texts {
        Texts::None => {
            let hint = capture_hint(&evidence.libraries);
            let reason = match withheld {
                Some(why) => format!("the call carries no message content ({why}); {hint}"),
                None => format!("the call carries no message content; {hint}"),
            };
            return (Verdict::NotJudgeable { reason }, Vec::new());
        }
        Texts::Unreviewed(reason) => return (Verdict::Unreviewed { reason }, Vec::new()),
        Texts::Packet(found, structure) => (best(found, model.as_ref(), max_tokens.as_ref()), structure),
    };
    let mut notes = Vec::new();
    let mut differences = structure;
    if model.is_none() {
        notes.push("the call records no gen_ai.request.model: the model is not compared".to_owned());
    }
    match budget_missing(evidence, require) {
        Some(Missing::Sent) if packet.call.omits_max_tokens() => {}
        Some(Missing::Sent) => {
            differences.push(format!("max tokens: the call sends none; the packet's are {}", packet.max_tokens))
        }
        Some(Missing::Required) => differences
            .push(format!("max tokens: the call records none (required); the packet's are {}", packet.max_tokens)),
        Some(Missing::Unrecorded) => {
            notes.push("the call records no gen_ai.request.max_tokens: max tokens are not compared".to_owned())
        }
        None => {}
    }
    differences.extend(compared(packet, model.as_ref(), max_tokens.as_ref()));
    let expected = Expected {
        reviewed: vec![(&packet.call, &packet.output)],
        declared: None,
        whose: "the packet's request would",
    };
    let (settings, unjudged) = held(evidence.rest.as_deref(), &expected, require);
    differences.extend(settings);
    notes.extend(unjudged);
    let verdict = match differences.is_empty() {
        true => Verdict::Matched { packet: packet.file.clone() },
        false => Verdict::Mismatched { packet: Some(packet.file.clone()), differences },
    };
    (verdict, notes)
}

/// A call whose instrumentation leaves part of its input unrecorded (the system prompt)
/// and whose messages lack that part: never judged as if it sent none. A user text no
/// reviewed packet has is unreviewed whatever the rest; one a packet has cannot be told.
fn partly_recorded(why: &str, messages: &[Message], packets: &Packets) -> Option<Verdict> {
    if messages.iter().any(|m| m.role == "system") {
        return None;
    }
    let users: Vec<&Message> = messages.iter().filter(|m| m.role == "user").collect();
    let unknown = users.iter().find(|m| packets.with_user(&m.text.sha256).is_empty());
    Some(match unknown {
        Some(_) => Verdict::Unreviewed { reason: format!("no reviewed packet has this user text ({why})") },
        None if users.is_empty() => Verdict::NotJudgeable { reason: format!("{why}; the call records no user text") },
        None => Verdict::NotJudgeable { reason: format!("{why}; its user text is a reviewed packet's") },
    })
}

/// A call with a text its instrumentation cut short, judged only as a beginning: never
/// matched; unreviewed when no reviewed packet's texts begin so.
fn cut_short(messages: &[Message], packets: &Packets) -> Option<Verdict> {
    let (i, first) = messages.iter().enumerate().find_map(|(i, m)| Some((i, m.cut.as_deref()?)))?;
    let cut = format!(
        "message {i} ({}) is recorded cut short after {} characters, its instrumentation's mark for a text it did \
         not record whole",
        crate::report::one_line(&messages[i].role),
        first.chars().count()
    );
    fn seen(m: &Message) -> Seen<'_> {
        match &m.cut {
            Some(start) => Seen::Cut(start),
            None => Seen::Whole(&m.text.sha256),
        }
    }
    let found = match messages {
        [system, user] if system.role == "system" && user.role == "user" => {
            packets.beginning_with(seen(system), seen(user))
        }
        _ => return Some(Verdict::NotJudgeable { reason: format!("{cut}: the call's content cannot be compared") }),
    };
    Some(match found {
        Some(p) => Verdict::NotJudgeable {
            reason: format!("{cut}: it agrees with {} as far as it was recorded; the rest cannot be compared", p.file),
        },
        None => Verdict::Unreviewed { reason: format!("{cut}, and no reviewed packet's texts begin so") },
    })
}

/// Why a call has no budget to compare, when it has none.
pub(crate) enum Missing {
    /// The request body holds the whole call and sends no budget.
    Sent,
    /// Its telemetry records none, and `--require maxTokens` asks for it.
    Required,
    /// Its telemetry records none.
    Unrecorded,
}

pub(crate) fn budget_missing(evidence: &Evidence, require: Required) -> Option<Missing> {
    match () {
        _ if evidence.rest.as_ref().is_some_and(|r| r.sends_no_budget()) => Some(Missing::Sent),
        _ if !evidence.max_tokens.is_empty() => None,
        _ if require.has(BUDGET) => Some(Missing::Required),
        _ => Some(Missing::Unrecorded),
    }
}

/// What a call's messages find among the packets.
enum Texts<'p> {
    /// No content at all.
    None,
    Unreviewed(String),
    /// A packet with these texts, and how the call's messages differ from its request in
    /// order or roles (empty: the same).
    Packet(&'p [Reviewed], Vec<String>),
}

fn packet_for<'p>(messages: Option<&[Message]>, packets: &'p Packets) -> Texts<'p> {
    let Some(messages) = messages else { return Texts::None };
    match messages {
        [system, user] if system.role == "system" && user.role == "user" => {
            let found = packets.with_text(&system.text.sha256, &user.text.sha256);
            // Among equal texts, the packet with the call's model and max tokens is judged by `compared`.
            if !found.is_empty() {
                return Texts::Packet(found, Vec::new());
            }
            if packets.with_user(&user.text.sha256).is_empty() {
                let reason = match packets.sharing_system(&system.text.sha256) {
                    0 => "no reviewed packet has this system text".to_owned(),
                    n => format!("no reviewed packet has this user text ({n} have its system text)"),
                };
                return Texts::Unreviewed(reason);
            }
            Texts::Unreviewed("no reviewed packet has this system text with this user text".to_owned())
        }
        _ => {
            // Another shape: the packet whose system and user texts it carries, in any role or order.
            let user = messages.iter().filter(|m| m.role == "user").find_map(|m| {
                let with = packets.with_user(&m.text.sha256);
                with.iter().find(|p| {
                    p.system_empty && !messages.iter().any(|m| m.role == "system")
                        || messages.iter().any(|other| !std::ptr::eq(other, m) && other.text.sha256 == p.system)
                })
            });
            match user {
                Some(p) if p.system_empty && roles(messages) == "[user]" => {
                    Texts::Packet(std::slice::from_ref(p), Vec::new())
                }
                Some(p) => {
                    let expected = if p.system_empty { "[user]" } else { "[system, user]" };
                    Texts::Packet(
                        std::slice::from_ref(p),
                        vec![format!(
                            "messages: the call sends {}; the packet's request sends {expected}",
                            roles(messages)
                        )],
                    )
                }
                None => Texts::Unreviewed(format!(
                    "a reviewed packet's request sends a system message then one user message; the call sends {} \
                     and no packet has its texts",
                    roles(messages)
                )),
            }
        }
    }
}

/// Among packets with equal texts, the one whose model and max tokens the call has, else the first.
fn best<'p>(found: &'p [Reviewed], model: Option<&Said>, max_tokens: Option<&Said>) -> &'p Reviewed {
    found.iter().find(|p| compared(p, model, max_tokens).is_empty()).unwrap_or(&found[0])
}

/// The one value of a field, when all its records agree; differences name every wrong
/// or conflicting value with where it was read.
fn one_value(
    said: &[Said],
    what: &str,
    problem: fn(&Value) -> Option<&'static str>,
    differences: &mut Vec<String>,
) -> Option<Said> {
    let mut first: Option<&Said> = None;
    for s in said {
        if let Some(wrong) = problem(&s.value) {
            differences.push(format!("{what}: {} is {}, {wrong}", s.source, shown(&s.value)));
            continue;
        }
        match first {
            None => first = Some(s),
            Some(f) if same(&f.value, &s.value) => {}
            Some(f) => differences.push(format!(
                "{what}: the records disagree: {} is {}, {} is {}",
                f.source,
                shown(&f.value),
                s.source,
                shown(&s.value)
            )),
        }
    }
    first.cloned()
}

fn same(a: &Value, b: &Value) -> bool {
    match (whole(a), whole(b)) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

fn model_problem(value: &Value) -> Option<&'static str> {
    match value.as_str() {
        Some(s) if !s.trim().is_empty() => None,
        Some(_) => Some("an empty model name"),
        None => Some("not a model name (a string)"),
    }
}

/// The largest max tokens a packet can hold (JavaScript's largest exact integer).
const MAX_SAFE_INTEGER: u64 = 9_007_199_254_740_991;

fn max_tokens_problem(value: &Value) -> Option<&'static str> {
    match value {
        Value::Number(_) if whole(value).is_some() => None,
        Value::Number(_) => Some("out of range (a max tokens value is a whole number from 1)"),
        _ => Some("not a number"),
    }
}

/// A positive whole number (`32000.0` as a JavaScript instrumentation may write it).
pub(crate) fn whole(value: &Value) -> Option<u64> {
    if let Some(n) = value.as_u64() {
        return (1..=MAX_SAFE_INTEGER).contains(&n).then_some(n);
    }
    let f =
        value.as_f64().filter(|f| value.is_f64() && f.fract() == 0.0 && *f >= 1.0 && *f <= MAX_SAFE_INTEGER as f64)?;
    Some(f as u64)
}

/// How the call's model and max tokens differ from the packet's.
fn compared(p: &Reviewed, model: Option<&Said>, max_tokens: Option<&Said>) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(model) = model.and_then(|m| m.value.as_str()).filter(|m| *m != p.model) {
        out.push(format!("model {}; the packet's is {:?}", crate::report::excerpt(model), p.model));
    }
    if let Some(tokens) = max_tokens.and_then(|t| whole(&t.value)).filter(|t| *t != p.max_tokens) {
        out.push(format!("max tokens {tokens}; the packet's are {}", p.max_tokens));
    }
    out
}

/// The first message where two readings differ, each named.
fn first_difference(a: &[Message], b: &[Message], a_source: &str, b_source: &str) -> String {
    if let Some(i) = (0..a.len().min(b.len())).find(|&i| a[i] != b[i]) {
        return format!(
            "message {i} is {} {} in {a_source} and {} {} in {b_source}",
            crate::report::one_line(&a[i].role),
            a[i].text.describe(),
            crate::report::one_line(&b[i].role),
            b[i].text.describe()
        );
    }
    format!("{a_source} has {} messages {}, {b_source} has {} {}", a.len(), roles(a), b.len(), roles(b))
}
