//! The rest of a call as its records tell it (tools, sampling, the output format, …;
//! read by `conventions::settings`) held to what was reviewed. Telemetry records what
//! an instrumentation chose to; a request body holds all of it, and what it does not send
//! it does not send. A field a call sends is judged against the reviewed value (or one an
//! agent declares); a reviewed field a call's telemetry does not record is named as not
//! judged, a finding when required (`--require FIELD`).

use super::conventions::Said;
use crate::call::{self, Call, FIELDS};
use crate::profile::Declared;
use serde_json::Value;
use std::borrow::Cow;
use std::collections::BTreeMap;

pub(crate) use super::conventions::settings::OUTPUT;
/// The name `--require` takes for the budget.
pub(crate) const BUDGET: &str = "maxTokens";

/// Fields a call's telemetry must record, or the call is a finding (`--require`): a
/// set over the call fields, the output format and the budget.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Required(u64);

impl Required {
    /// Every name `--require` takes.
    pub fn names() -> impl Iterator<Item = &'static str> {
        FIELDS.iter().map(|f| f.name).chain([OUTPUT, BUDGET])
    }

    /// Add a field by name; `Err` names the fields there are.
    pub fn add(&mut self, name: &str) -> Result<(), String> {
        let Some(i) = Required::names().position(|n| n == name) else {
            let names: Vec<&str> = Required::names().collect();
            return Err(format!("unknown field {name:?}; expected one of {}", names.join(", ")));
        };
        self.0 |= 1 << i;
        Ok(())
    }

    pub(crate) fn has(self, name: &str) -> bool {
        Required::names().position(|n| n == name).is_some_and(|i| self.0 & (1 << i) != 0)
    }
}

/// Tools without their `strict` members.
fn without_strict(tools: &Value) -> Value {
    match tools {
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|tool| match tool {
                    Value::Object(t) => Value::Object(
                        t.iter().filter(|(k, _)| *k != "strict").map(|(k, v)| (k.clone(), v.clone())).collect(),
                    ),
                    other => other.clone(),
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

/// The tools a call sends for a reviewed call and output, as telemetry may record them:
/// the call's own, then (where an API sends the schema as a forced tool) the schema's.
fn tools_recorded_as(reviewed: Option<&Value>, output: &Value) -> Option<Value> {
    let schema = output.as_object().filter(|s| s.contains_key("name"))?;
    let mut tools = reviewed.and_then(Value::as_array).cloned().unwrap_or_default();
    let mut tool = serde_json::Map::new();
    for key in ["name", "description"] {
        if let Some(value) = schema.get(key) {
            tool.insert(key.into(), value.clone());
        }
    }
    tool.insert("parameters".into(), schema.get("schema").cloned().unwrap_or(Value::Null));
    tools.push(Value::Object(tool));
    Some(Value::Array(tools))
}

/// What a call's records say of the rest of it.
#[derive(Debug, Default, Clone)]
pub(crate) struct Recorded {
    /// The call's fields (`crate::call`) and its output format, by field name.
    pub(crate) settings: Vec<(&'static str, Said)>,
    /// A record holds the whole call (a request body of this API): what it does not
    /// send, the call does not send.
    pub(crate) whole: Option<&'static str>,
}

impl Recorded {
    /// A whole call (a request body) that sends no budget: its call says so.
    pub(crate) fn sends_no_budget(&self) -> bool {
        self.whole.is_some()
            && self.settings.iter().any(|(f, s)| *f == call::MAX_TOKENS_OMITTED && s.value == Value::Bool(true))
    }
}

/// What a call is held to: the calls and outputs of the reviewed packets it may be, and
/// what its agent declares.
pub(crate) struct Expected<'a> {
    /// Each reviewed packet's call, and its output as a call asks for it: `"text"`,
    /// `"json"`, or the schema.
    pub(crate) reviewed: Vec<(&'a Call, &'a Value)>,
    pub(crate) declared: Option<&'a BTreeMap<String, Declared>>,
    /// Who reviewed it, for messages: "the packet", "the vouched packets".
    pub(crate) whose: &'a str,
}

/// How a call's settings differ from what was reviewed (differences), and the fields
/// reviewed that its telemetry does not record (notes; differences when required).
pub(crate) fn held(recorded: Option<&Recorded>, expected: &Expected, required: Required) -> (Vec<String>, Vec<String>) {
    let settings = recorded.map_or(&[][..], |r| r.settings.as_slice());
    let whole = recorded.and_then(|r| r.whole);
    // A body is compared with the reviewed calls as its API sends them.
    let sent: Vec<(Cow<Call>, Cow<Value>)> = match whole.and_then(crate::wire::specs::named) {
        Some(spec) => expected
            .reviewed
            .iter()
            .map(|(c, o)| {
                let (call, output) = crate::wire::api::as_sent(spec, c, o);
                (Cow::Owned(call), Cow::Owned(output))
            })
            .collect(),
        None => expected.reviewed.iter().map(|(c, o)| (Cow::Borrowed(*c), Cow::Borrowed(*o))).collect(),
    };
    let whole = whole.is_some();
    // A schema sent as the forced tool (Anthropic) is judged with the tools recorded.
    let schema_names: Vec<&Value> = sent.iter().filter_map(|(_, o)| o.get("name")).collect();
    let schema_in_tools = settings.iter().any(|(f, said)| {
        *f == "tools"
            && said
                .value
                .as_array()
                .is_some_and(|t| t.iter().any(|t| t.get("name").is_some_and(|n| schema_names.contains(&n))))
    });
    let mut differences = Vec::new();
    let mut unrecorded = Vec::new();
    for name in FIELDS.iter().map(|f| f.name).chain([OUTPUT]) {
        let recorded: Vec<&Said> = settings.iter().filter(|(f, _)| *f == name).map(|(_, s)| s).collect();
        if recorded.is_empty() && name != OUTPUT && sent.iter().all(|(c, _)| c.get(name).is_none()) {
            continue;
        }
        // A plain-text answer is asked for with no format at all: as a call sends nothing.
        let reviewed: Vec<Option<&Value>> = match name {
            OUTPUT => sent.iter().map(|(_, o)| Some(o.as_ref()).filter(|o| *o != "text")).collect(),
            _ => sent.iter().map(|(c, _)| c.get(name)).collect(),
        };
        let declared = expected.declared.and_then(|d| d.get(name));
        if recorded.is_empty() {
            if name == OUTPUT && schema_in_tools {
                continue;
            }
            if reviewed.iter().all(Option::is_some) && !reviewed.is_empty() {
                match whole || required.has(name) {
                    true => differences.push(format!(
                        "{name}: the call sends none; {} {}",
                        expected.whose,
                        describe(&reviewed, declared)
                    )),
                    false => unrecorded.push(name),
                }
            }
            continue;
        }
        for said in recorded {
            let fits = |v: &Value| match name {
                OUTPUT => same_output(&said.value, v),
                // Telemetry records a tool without OpenAI's `strict` flag: judged without it.
                "tools" if !whole => call::same(&without_strict(&said.value), &without_strict(v)),
                _ => call::same(&said.value, v),
            };
            let plain = name == OUTPUT && said.value == "text" && reviewed.iter().any(Option::is_none);
            let schema_tool = name == "tools"
                && !whole
                && sent.iter().any(|(c, o)| tools_recorded_as(c.get("tools"), o).is_some_and(|t| fits(&t)));
            let allowed = plain
                || schema_tool
                || reviewed.iter().flatten().any(|v| fits(v))
                || declared.is_some_and(|d| d.allows(&said.value));
            if !allowed {
                differences.push(format!(
                    "{name}: {} is {}; {} {}",
                    said.source,
                    crate::wire::diff::show(&said.value),
                    expected.whose,
                    describe(&reviewed, declared)
                ));
            }
        }
    }
    let mut notes = Vec::new();
    if !unrecorded.is_empty() {
        notes.push(format!(
            "not judged, as the telemetry does not record them: {} (`--require FIELD` makes each a finding)",
            unrecorded.join(", ")
        ));
    }
    (differences, notes)
}

/// What the reviewed packets send of a field.
fn describe(reviewed: &[Option<&Value>], declared: Option<&Declared>) -> String {
    let mut values: Vec<String> = Vec::new();
    for value in reviewed {
        let shown = value.map_or("none".to_owned(), crate::wire::diff::show);
        if !values.contains(&shown) {
            values.push(shown);
        }
    }
    let sent = match values.as_slice() {
        [] => "send none".to_owned(),
        [one] if one == "none" => "send none".to_owned(),
        [one] => format!("send {one}"),
        many => format!("send one of {}", many.join(", ")),
    };
    match declared {
        Some(declared) => format!("{sent}, and the agent declares {}", declared.describe()),
        None => sent,
    }
}

/// A recorded output format against a reviewed one: a kind (`text`, `json`) against the
/// reviewed one's kind; a schema against the reviewed schema, each member it names.
fn same_output(recorded: &Value, reviewed: &Value) -> bool {
    let kind = |v: &Value| match v {
        Value::String(kind) => kind.clone(),
        _ => "json".to_owned(),
    };
    match (recorded, reviewed) {
        (Value::Object(got), Value::Object(want)) => {
            got.iter().all(|(k, v)| want.get(k).is_some_and(|w| call::same(v, w)))
        }
        (Value::Object(_), _) => false,
        _ => kind(recorded) == kind(reviewed),
    }
}

/// A packet's output as a call asks for it: its schema, `"json"` for the text-JSON
/// suffix, else `"text"`.
pub(crate) fn output_of(packet: &Value) -> Value {
    match packet.get("outputSchema") {
        Some(schema) => schema.clone(),
        None if packet.get("userMessage") != packet.get("effectiveUserMessage") => Value::from("json"),
        None => Value::from("text"),
    }
}
