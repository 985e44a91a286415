//! One call from many records: the evidence every record gives (`conventions`) is
//! gathered by its trace and span id, so a span, its span events and the log events
//! emitted inside it (in another export, another file) are one call; a call span nested
//! in another call span is that call too, and so is the anthropic SDK's own span inside
//! another instrumentation's call span (the SDK starts a trace of its own, so only its
//! time and model place it: an SDK span within another call's time, with its model, is
//! that call); a record that says nothing of a call is dropped at once. Each call is counted
//! once, whatever number of records and exports carry it, and judged when all are read.
//!
//! Memory: one entry per call, holding what is compared (digests and bounded excerpts
//! of its messages, its model and max-tokens values), never a record.
//!
//! A call gathered here may be only part of one when its records come in several export
//! requests (`serve`): [`Gathered::absorb_later`] adds a later part to it as if its
//! records had been read after the first's, which `super::window` relies on.

use super::conventions::{self, Library, Piece, Said, Source, Unread};
use super::genai::{Call, Message};
use super::record::{At, Kind, Record};
use super::settings::Recorded;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::rc::Rc;

/// A record's trace and span id, as one key: the first 16 bytes of the SHA-256 of both
/// (ids are chosen by whoever wrote the export: no crafted pair lands on another's key).
pub(crate) type Key = [u8; 16];

pub(crate) fn key(trace_id: &str, span_id: &str) -> Key {
    let mut hash = Sha256::new();
    hash.update(trace_id.as_bytes());
    hash.update([0]);
    hash.update(span_id.as_bytes());
    let digest = hash.finalize();
    let mut out = [0; 16];
    out.copy_from_slice(&digest[..16]);
    out
}

/// Everything read of one call.
#[derive(Debug, Default, Clone)]
pub(crate) struct Evidence {
    pub(crate) model: Vec<Said>,
    pub(crate) max_tokens: Vec<Said>,
    /// What its records say of the rest of the call (boxed: most calls record none).
    pub(crate) rest: Option<Box<Recorded>>,
    /// Each source of input messages, with what it says.
    pub(crate) content: Vec<(Source, Result<Vec<Message>, Unread>)>,
    /// System instructions recorded apart from the messages, with their source.
    pub(crate) system_only: Vec<(Source, Result<Message, Unread>)>,
    pub(crate) conflicts: Vec<String>,
    /// The instrumentations that recorded it.
    pub(crate) libraries: Vec<Library>,
    /// How its records were read where they are not as sent, once each.
    pub(crate) notes: Vec<String>,
    /// What its instrumentation never records of its input (`conventions::Reading`).
    pub(crate) unrecorded: Option<&'static str>,
    /// Which `content` entries gather one message per event (`Piece::One`), each with
    /// its messages' times: a later part of the call carries on their list rather than
    /// starting a second one, each message placed by its time, so the order the parts
    /// arrive in (an exporter's batches, a retry) does not reorder the messages.
    one_by_one: Vec<(usize, Vec<u64>)>,
}

/// Take what a later record says of the rest of the call into what is known of it.
fn absorb_rest(rest: &mut Option<Box<Recorded>>, other: Option<Box<Recorded>>) {
    match (rest.as_mut(), other) {
        (_, None) => {}
        (None, other) => *rest = other,
        (Some(known), Some(other)) => {
            known.settings.extend(other.settings);
            known.whole = known.whole.or(other.whole);
        }
    }
}

impl Evidence {
    fn absorb(&mut self, other: Evidence) {
        let offset = self.content.len();
        self.one_by_one.extend(other.one_by_one.into_iter().map(|(i, times)| (i + offset, times)));
        self.model.extend(other.model);
        self.max_tokens.extend(other.max_tokens);
        absorb_rest(&mut self.rest, other.rest);
        self.content.extend(other.content);
        self.system_only.extend(other.system_only);
        self.conflicts.extend(other.conflicts);
        for library in other.libraries {
            self.add_library(Some(library));
        }
        self.add_notes(other.notes);
        self.unrecorded = self.unrecorded.or(other.unrecorded);
    }

    fn add_notes(&mut self, notes: Vec<String>) {
        for note in notes {
            if !self.notes.contains(&note) {
                self.notes.push(note);
            }
        }
    }

    fn add_library(&mut self, library: Option<Library>) {
        if let Some(library) = library.filter(|l| !self.libraries.contains(l)) {
            self.libraries.push(library);
        }
    }

    /// What a later part of the call says, taken as if its records were read after this
    /// one's: messages recorded one per event continue the list of the same source.
    fn absorb_later(&mut self, later: Evidence) {
        let Evidence {
            model,
            max_tokens,
            rest,
            content,
            system_only,
            conflicts,
            libraries,
            notes,
            unrecorded,
            one_by_one,
        } = later;
        self.add_notes(notes);
        self.unrecorded = self.unrecorded.or(unrecorded);
        self.model.extend(model);
        self.max_tokens.extend(max_tokens);
        absorb_rest(&mut self.rest, rest);
        for (i, (source, messages)) in content.into_iter().enumerate() {
            let Some((_, times)) = one_by_one.iter().find(|(at, _)| *at == i) else {
                self.content.push((source, messages));
                continue;
            };
            match messages {
                Ok(messages) => {
                    for (message, &time) in messages.into_iter().zip(times) {
                        self.piece(Piece::One { source: source.clone(), message: Ok(message) }, time);
                    }
                }
                Err(e) => self.piece(Piece::One { source, message: Err(e) }, 0),
            }
        }
        self.system_only.extend(system_only);
        self.conflicts.extend(conflicts);
        for library in libraries {
            self.add_library(Some(library));
        }
    }

    /// Take `piece`, read from a record of `time` (Unix nanoseconds).
    fn piece(&mut self, piece: Piece, time: u64) {
        // Most calls have one piece of content: room for one, not a vector's first four.
        self.content.reserve_exact(usize::from(self.content.is_empty()));
        match piece {
            Piece::Whole { source, messages } => self.content.push((source, messages)),
            Piece::System { source, message } => self.system_only.push((source, message)),
            Piece::One { source, message } => {
                let slot = self.content.iter().rposition(|(s, _)| *s == source);
                match (slot, message) {
                    (None, message) => {
                        self.one_by_one.push((self.content.len(), vec![time]));
                        self.content.push((source, message.map(|m| vec![m])));
                    }
                    (Some(i), Ok(message)) => {
                        let times = self.one_by_one.iter_mut().find(|(at, _)| *at == i).map(|(_, times)| times);
                        match (&mut self.content[i].1, times) {
                            // After every message of the same time or earlier: one record's
                            // messages, and records of one time, keep the order they came in.
                            (Ok(messages), Some(times)) => {
                                let at = times.partition_point(|&t| t <= time);
                                times.insert(at, time);
                                messages.insert(at, message);
                            }
                            (Ok(messages), None) => messages.push(message),
                            (Err(_), _) => {}
                        }
                    }
                    (Some(i), Err(e)) => {
                        if self.content[i].1.is_ok() {
                            self.content[i].1 = Err(e);
                        }
                    }
                }
            }
        }
    }
}

/// Where a call was read and which record is it.
#[derive(Debug, Clone)]
struct Origin {
    file: Rc<str>,
    line: usize,
    name: Rc<str>,
    scope: Rc<str>,
    kind: Kind,
}

#[derive(Debug)]
struct Entry {
    /// Its trace and span id as one key (none without a span id: it joins nothing).
    key: Option<Key>,
    trace_id: String,
    span_id: String,
    parent_span_id: String,
    /// The record that is the call (a span, or an inference details event), if read.
    call: Option<Origin>,
    /// Where the first evidence was read (a call made only of message events).
    first: Origin,
    /// The call span's time, or a record without ids' own, in Unix nanoseconds (0: not known).
    start: u64,
    end: u64,
    evidence: Evidence,
}

/// The calls read so far, in the order first read.
#[derive(Debug, Default)]
pub(crate) struct Join {
    /// Boxed: 100,000 entries side by side would be one 40 MB block, taken from the
    /// system afresh on every read and copied whole on every growth.
    #[allow(clippy::vec_box)]
    entries: Vec<Box<Entry>>,
    by_id: HashMap<Key, usize>,
    /// The file being read, and the last record's name and scope, shared by the calls
    /// that have them (a trace's calls mostly share their span name and scope).
    file: Option<Rc<str>>,
    name: Option<Rc<str>>,
    scope: Option<Rc<str>>,
    /// The entry of the message events without ids read last: the next such event of the
    /// same scope is the same call's (they are one call's messages, one per event).
    messages_without_ids: Option<usize>,
}

/// The anthropic SDK's own call spans (a trace of their own) into the call span of
/// another instrumentation whose time holds theirs and whose model is theirs. Candidates
/// are sorted by start: each SDK span looks at the few that started last before it.
fn fold_sdk_spans(entries: &[Box<Entry>], root: &mut [usize]) {
    let is_sdk = |e: &Entry| e.evidence.libraries.first() == Some(&Library::AnthropicSdk);
    let timed = |e: &Entry| e.call.as_ref().is_some_and(|c| c.kind == Kind::Span) && e.end > 0;
    let mut hosts: Vec<usize> =
        (0..entries.len()).filter(|&i| root[i] == i && timed(&entries[i]) && !is_sdk(&entries[i])).collect();
    hosts.sort_by_key(|&i| entries[i].start);
    let model = |e: &Entry| e.evidence.model.first().map(|s| s.value.clone());
    for i in 0..entries.len() {
        let sdk = &entries[i];
        if root[i] != i || !timed(sdk) || !is_sdk(sdk) {
            continue;
        }
        let before = hosts.partition_point(|&h| entries[h].start <= sdk.start);
        let host = hosts[..before].iter().rev().take(64).find(|&&h| {
            let host = &entries[h];
            host.end >= sdk.end && (model(host).is_none() || model(sdk).is_none() || model(host) == model(sdk))
        });
        if let Some(&host) = host {
            root[i] = host;
        }
    }
}

/// Records without trace or span id (message or details events emitted outside their
/// span: OpenLIT's streamed details event, OpenLLMetry's anthropic events) into the call
/// span whose time holds theirs. Within no call span's time they are a call of their own
/// (an inference-details event emitted alone); within two calls' they belong to one of
/// them, which cannot be told: they are put with the first, whose content then cannot
/// be compared. Never a second call.
fn fold_by_time(entries: &mut [Box<Entry>], root: &mut [usize]) {
    let is_span = |e: &Entry| e.call.as_ref().is_some_and(|c| c.kind == Kind::Span) && e.end > 0;
    let mut spans: Vec<usize> = (0..entries.len()).filter(|&i| is_span(&entries[i])).collect();
    spans.sort_by_key(|&i| entries[i].start);
    for i in 0..entries.len() {
        let entry = &entries[i];
        if root[i] != i || !entry.span_id.is_empty() || entry.start == 0 || is_span(entry) {
            continue;
        }
        let at = entry.start;
        let before = spans.partition_point(|&s| entries[s].start <= at);
        let mut hosts: Vec<usize> =
            spans[..before].iter().rev().take(64).filter(|&&s| entries[s].end >= at).map(|&s| root[s]).collect();
        hosts.sort_unstable();
        hosts.dedup();
        let Some(&host) = hosts.first() else { continue };
        root[i] = host;
        if hosts.len() > 1 {
            let why = format!(
                "a record without trace or span id ({}) falls within the time of {} calls: which one it belongs to \
                 cannot be told",
                entry.first.name,
                hosts.len()
            );
            entries[host].evidence.content.push(("records without ids".into(), Err(Unread::Unparsed(why))));
        }
    }
}

/// Append `more` to `to`, with no more room than it uses when `to` is empty: a call's
/// evidence waits until every record is read, and most calls have one of each.
fn append<T>(to: &mut Vec<T>, more: Vec<T>) {
    if to.is_empty() {
        to.reserve_exact(more.len());
    }
    to.extend(more);
}

/// `text` as the one shared in `slot` when it is the same, else shared from now on.
fn shared(slot: &mut Option<Rc<str>>, text: &str) -> Rc<str> {
    match slot {
        Some(shared) if **shared == *text => shared.clone(),
        _ => slot.insert(Rc::from(text)).clone(),
    }
}

/// A call ready to judge (or, across requests, a part of one: `super::window`).
#[derive(Clone)]
pub(crate) struct Gathered {
    pub(crate) file: String,
    pub(crate) line: usize,
    pub(crate) call: Call,
    /// Which record is the call: a span, an inference-details event, or none (only
    /// message events were read).
    pub(crate) kind: Option<Kind>,
    /// The keys of its records: its own, then those of the call spans folded into it
    /// (none for records without a span id, which join nothing).
    pub(crate) keys: Vec<Key>,
    /// When its call span started and ended, or when its records without ids were
    /// written, in Unix nanoseconds (0: not known): what places records without ids.
    pub(crate) time: (u64, u64),
    pub(crate) evidence: Evidence,
}

impl Gathered {
    /// Whether the call is whole: its span was read, and its messages. A part without
    /// either may be waiting for a record of another export (its content sent as log
    /// events, its span in the traces).
    pub(crate) fn is_whole(&self) -> bool {
        self.kind == Some(Kind::Span) && !self.evidence.content.is_empty()
    }

    /// Add `later`, a part of the same call read afterwards (another request): its
    /// record names the call if this part's does not (a span before an event, as
    /// [`Join::add`] chooses), and its evidence follows this part's.
    pub(crate) fn absorb_later(&mut self, later: Gathered) {
        let better = match self.kind {
            None => later.kind.is_some(),
            Some(kind) => kind == Kind::Log && later.kind == Some(Kind::Span),
        };
        if better {
            (self.file, self.line, self.call, self.kind) = (later.file, later.line, later.call, later.kind);
        }
        for key in later.keys {
            if !self.keys.contains(&key) {
                self.keys.push(key);
            }
        }
        self.evidence.absorb_later(later.evidence);
    }
}

impl Join {
    /// Take what `record` says of a call.
    pub(crate) fn add(&mut self, record: Record, at: &At) {
        let reading = conventions::read(&record);
        if reading.repeat || !reading.is_evidence() {
            return;
        }
        let origin = Origin {
            file: shared(&mut self.file, at.file),
            line: at.line,
            name: shared(&mut self.name, &record.name),
            scope: shared(&mut self.scope, &record.scope),
            kind: record.kind,
        };
        // A record without a span id joins nothing: a call of its own.
        let id = (!record.span_id.is_empty()).then(|| key(&record.trace_id, &record.span_id));
        let mut index = id.and_then(|id| self.by_id.get(&id).copied());
        if id.is_none() {
            let run =
                self.messages_without_ids.filter(|&i| !reading.call && *self.entries[i].first.scope == *record.scope);
            index = index.or(run);
        }
        let index = index.unwrap_or_else(|| {
            if let Some(id) = id {
                self.by_id.insert(id, self.entries.len());
            }
            self.entries.push(Box::new(Entry {
                key: id,
                trace_id: record.trace_id.to_string(),
                span_id: record.span_id.to_string(),
                parent_span_id: String::new(),
                call: None,
                first: origin.clone(),
                // A record without ids is placed by its time (`fold_by_time`).
                start: if id.is_none() { record.start } else { 0 },
                end: if id.is_none() { record.end } else { 0 },
                evidence: Evidence::default(),
            }));
            self.entries.len() - 1
        });
        if id.is_none() {
            self.messages_without_ids = (!reading.call).then_some(index);
        }
        let entry = &mut self.entries[index];
        if reading.call {
            // A span names the call before an event of it does.
            let better = match &entry.call {
                None => true,
                Some(call) => call.kind == Kind::Log && record.kind == Kind::Span,
            };
            if better {
                entry.call = Some(origin);
            }
            if record.kind == Kind::Span {
                entry.parent_span_id = record.parent_span_id.into_owned();
                (entry.start, entry.end) = (record.start, record.end);
            }
        }
        let evidence = &mut entry.evidence;
        append(&mut evidence.model, reading.model);
        append(&mut evidence.max_tokens, reading.max_tokens);
        if !reading.settings.is_empty() || reading.whole.is_some() {
            let rest = Recorded { settings: reading.settings, whole: reading.whole };
            absorb_rest(&mut evidence.rest, Some(Box::new(rest)));
        }
        append(&mut evidence.conflicts, reading.conflicts);
        evidence.add_library(reading.library);
        evidence.add_notes(reading.notes);
        evidence.unrecorded = evidence.unrecorded.or(reading.unrecorded);
        for piece in reading.content {
            evidence.piece(piece, record.start);
        }
    }

    /// Every call, once: nested call spans folded into the outermost.
    pub(crate) fn finish(self) -> impl Iterator<Item = Gathered> {
        let Join { mut entries, by_id, .. } = self;
        let parent_of = |entries: &[Box<Entry>], i: usize| -> Option<usize> {
            let entry = &entries[i];
            if entry.call.is_none() || entry.parent_span_id.is_empty() {
                return None;
            }
            let parent = *by_id.get(&key(&entry.trace_id, &entry.parent_span_id))?;
            entries[parent].call.is_some().then_some(parent)
        };
        // Each entry's outermost call, once per entry: a walk stops at an entry already
        // resolved, so nesting of any depth is linear; a cycle of parent ids ends where it closes.
        const NONE: usize = usize::MAX;
        let mut root = vec![NONE; entries.len()];
        let mut seen = vec![NONE; entries.len()];
        let mut path = Vec::new();
        for i in 0..entries.len() {
            let mut at = i;
            let top = loop {
                if root[at] != NONE {
                    break root[at];
                }
                if seen[at] == i {
                    break at;
                }
                seen[at] = i;
                path.push(at);
                match parent_of(&entries, at) {
                    Some(parent) => at = parent,
                    None => break at,
                }
            };
            for p in path.drain(..) {
                root[p] = top;
            }
        }
        fold_sdk_spans(&entries, &mut root);
        fold_by_time(&mut entries, &mut root);
        let mut keys: Vec<Vec<Key>> = entries.iter().map(|e| e.key.into_iter().collect()).collect();
        for i in 0..entries.len() {
            if root[i] != i {
                let evidence = std::mem::take(&mut entries[i].evidence);
                // Message events placed by their time carry on their call's list of them.
                match entries[i].span_id.is_empty() {
                    true => entries[root[i]].evidence.absorb_later(evidence),
                    false => entries[root[i]].evidence.absorb(evidence),
                }
                let folded = std::mem::take(&mut keys[i]);
                keys[root[i]].extend(folded);
            }
        }
        entries.into_iter().zip(keys).enumerate().filter(move |(i, _)| root[*i] == *i).map(|(_, (entry, keys))| {
            let entry = *entry;
            let kind = entry.call.as_ref().map(|c| c.kind);
            let origin = entry.call.unwrap_or(entry.first);
            Gathered {
                file: origin.file.to_string(),
                line: origin.line,
                call: Call {
                    span: origin.name.to_string(),
                    scope: origin.scope.to_string(),
                    trace_id: entry.trace_id,
                    span_id: entry.span_id,
                    model: None,
                    max_tokens: None,
                },
                kind,
                keys,
                time: (entry.start, entry.end),
                evidence: entry.evidence,
            }
        })
    }
}
