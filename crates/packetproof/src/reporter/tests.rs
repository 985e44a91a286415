use super::*;
use crate::conformance::runner::{Record, Summary};
use crate::release::{Base, Report};
use crate::trace::genai::Call;
use crate::trace::verdict::Verdict;
use crate::{Finding, JsonPath, Location, PacketCheck};

/// One event of each kind (trace: a call and the end), built from minimal data.
struct Samples {
    outcomes: Vec<Outcome>,
    found: Verification,
    evaluation: Evaluation,
    judged: Judged,
    counts: Counts,
    release: Report,
    names: Vec<String>,
    records: Vec<Record>,
    summary: Summary,
}

impl Samples {
    fn new() -> Samples {
        let failing = Outcome::new("p.json", vec![Finding::new(PacketCheck::Checksum, Location::root(), "differs")]);
        let call = Call {
            span: "chat".into(),
            scope: "scope".into(),
            trace_id: "t".into(),
            span_id: "s".into(),
            model: None,
            max_tokens: None,
        };
        Samples {
            outcomes: vec![failing.clone()],
            found: Verification { outcomes: vec![failing], ..Verification::default() },
            evaluation: Evaluation {
                ok: true,
                failures: vec![],
                document: serde_json::json!({"ok": true}),
                notes: vec![],
            },
            judged: Judged {
                file: "t.jsonl".into(),
                line: 1,
                call,
                verdict: Verdict::Unreviewed { reason: "no packet".into() },
                notes: vec![],
                fails: true,
                expired: None,
            },
            counts: Counts::default(),
            release: Report {
                base: Base { commit: "0".repeat(40), chosen_by: "--base HEAD".into(), is_head: true },
                ok: true,
                changed_files: vec![],
                cases: vec![],
                unchanged_cases: 0,
                groups: vec![],
                violations: vec![],
                exporter_files: Vec::new(),
                verdicts: Vec::new(),
                lock: Vec::new(),
            },
            names: vec!["a::packet::checksum".into(), "b::packet::contract".into(), "corpus::layout".into()],
            records: vec![
                record("a::packet::checksum", None, None),
                record("b::packet::contract", Some("differs"), None),
                record("corpus::layout", None, Some("not applicable")),
            ],
            summary: Summary { passed: 1, failed: 1, ignored: 1, ..Summary::default() },
        }
    }

    /// Every event of `kind`, in the order a command reports them.
    fn events(&self, kind: Kind) -> Vec<Event<'_>> {
        match kind {
            Kind::Outcomes => vec![Event::Outcomes(&self.outcomes)],
            Kind::Verification => vec![Event::Verified { found: &self.found, verbose: true }],
            Kind::RuleBook => vec![Event::RuleBook],
            Kind::Evaluation => {
                vec![Event::Evaluated { evaluation: &self.evaluation, report: Path::new("e.json"), skipped: &[] }]
            }
            Kind::Trace => vec![Event::TraceCall(&self.judged), Event::TraceEnd { counts: &self.counts, skipped: &[] }],
            Kind::Release => vec![Event::Release(&self.release)],
            Kind::Test => {
                let mut events =
                    vec![Event::Test(RunEvent::Listed(&self.names)), Event::Test(RunEvent::Started(&self.names))];
                for record in &self.records {
                    events.push(Event::Test(RunEvent::TrialStarted(&record.name)));
                    events.push(Event::Test(RunEvent::TrialFinished(record)));
                }
                events.push(Event::Test(RunEvent::Finished(&self.summary)));
                events
            }
        }
    }
}

fn record(name: &str, failure: Option<&str>, skipped: Option<&str>) -> Record {
    Record {
        name: name.into(),
        time: std::time::Duration::ZERO,
        failure: failure.map(str::to_owned),
        skipped: skipped.map(str::to_owned),
        notes: Vec::new(),
    }
}

/// A format a kind offers renders every event of that kind, and a format it does
/// not offer renders none: `Kind::formats` and the format modules agree both ways.
/// (A new `Format` or `Event` does not compile until every match names it; this
/// catches an arm that answers "not offered" for a format a command lists, and the
/// reverse.)
#[test]
fn each_kind_renders_in_exactly_the_formats_it_offers() {
    let samples = Samples::new();
    for kind in Kind::ALL {
        for format in Format::ALL {
            let mut state = State::of(*format, false);
            let rendered: Result<Vec<String>> = samples.events(*kind).into_iter().map(|e| state.render(e)).collect();
            let offered = kind.formats().contains(format);
            assert_eq!(rendered.is_ok(), offered, "{kind:?} in {format}: {rendered:?}");
            if offered {
                assert!(!rendered.unwrap().concat().is_empty(), "{kind:?} in {format} printed nothing");
            }
        }
    }
}

#[test]
fn a_reporter_refuses_a_format_its_kind_does_not_offer() {
    let refused = Reporter::new(Format::Html, Kind::Outcomes, false).unwrap_err();
    assert_eq!(
        refused.to_string(),
        "usage: --format html is not offered by validate, schema --check and wire --check (offered: text, json)"
    );
    assert!(Reporter::new(Format::Pretty, Kind::Trace, false).is_err());
    let samples = Samples::new();
    let mut trace = Reporter::new(Format::Json, Kind::Trace, false).unwrap();
    assert!(trace.report(Event::Outcomes(&samples.outcomes)).unwrap_err().to_string().contains("internal error"));
}

#[test]
fn text_is_coloured_only_when_asked() {
    let samples = Samples::new();
    let mut plain = Reporter::new(Format::Text, Kind::Verification, false).unwrap();
    let mut coloured = Reporter::new(Format::Text, Kind::Verification, true).unwrap();
    let event = Event::Verified { found: &samples.found, verbose: true };
    let (plain, coloured) = (plain.report(event).unwrap(), coloured.report(event).unwrap());
    assert_eq!(plain, "p.json: FAILED (1 finding(s))\n  [packet::checksum] $: differs\n1 checked: 0 hold, 1 failed\n");
    assert!(coloured.contains("\u{1b}[") && !plain.contains('\u{1b}'), "{coloured:?}");
}

#[test]
fn findings_are_capped_per_check_with_a_note() {
    let mut findings: Vec<Finding> = (0..crate::report::MAX_FINDINGS_PER_CHECK + 5)
        .map(|i| Finding::new(PacketCheck::Contract, JsonPath::root().index(i), "dup"))
        .collect();
    findings.push(Finding::new(PacketCheck::Checksum, Location::root(), "kept"));
    let outcome = Outcome::new("x.json", findings);
    let text = render(Format::Text, Event::Outcomes(std::slice::from_ref(&outcome))).unwrap();
    assert_eq!(text.matches("[packet::contract]").count(), crate::report::MAX_FINDINGS_PER_CHECK + 1, "{text}");
    assert!(text.contains("note: 5 more [packet::contract] finding(s) not listed"), "{text}");
    assert!(text.contains("[packet::checksum] $: kept") && text.contains("FAILED"));
    let json = render(Format::Json, Event::Outcomes(&[outcome])).unwrap();
    let shown = format!("$[{}]", crate::report::MAX_FINDINGS_PER_CHECK);
    assert!(json.contains("5 more [packet::contract]") && !json.contains(&shown));
}

#[test]
fn a_hostile_name_is_escaped_in_text_and_exact_in_json() {
    let outcome = Outcome::new("a\u{1b}[2J\u{202e}.json", vec![]);
    let text = render(Format::Text, Event::Outcomes(std::slice::from_ref(&outcome))).unwrap();
    assert_eq!(text, "a\\u{1b}[2J\\u{202e}.json: ok (0 finding(s))\n");
    let json = render(Format::Json, Event::Outcomes(&[outcome])).unwrap();
    let parsed: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(parsed["results"][0]["target"], "a\u{1b}[2J\u{202e}.json");
}

/// The published schema of `release-check --format json` (schemas/) describes every
/// field and kind a report can hold: a report holding each one validates, and one
/// with an unknown kind does not.
#[test]
fn a_release_report_of_every_kind_matches_its_published_schema() {
    use crate::release::{ChangeKind, ChangedFile, ExporterFile, VerdictChange, Violation, ViolationKind};
    let changes = [
        ChangeKind::Template,
        ChangeKind::Schema,
        ChangeKind::Reference,
        ChangeKind::Code,
        ChangeKind::Exporter,
        ChangeKind::Fixture,
        ChangeKind::Golden,
        ChangeKind::Lock,
        ChangeKind::Other,
    ];
    // A new kind does not compile until it is listed above.
    let _ = |kind: ChangeKind| match kind {
        ChangeKind::Template
        | ChangeKind::Schema
        | ChangeKind::Reference
        | ChangeKind::Code
        | ChangeKind::Exporter
        | ChangeKind::Fixture
        | ChangeKind::Golden
        | ChangeKind::Lock
        | ChangeKind::Other => (),
    };
    let violations = [
        ViolationKind::NotReblessed,
        ViolationKind::UnexplainedGoldenChange,
        ViolationKind::OrphanedGoldenChange,
        ViolationKind::PromptVersionMismatch,
        ViolationKind::LabelWithoutText,
        ViolationKind::TextWithoutLabel,
        ViolationKind::UnexplainedPromptChange,
        ViolationKind::LockNotBlessed,
    ];
    let _ = |kind: ViolationKind| match kind {
        ViolationKind::NotReblessed
        | ViolationKind::UnexplainedGoldenChange
        | ViolationKind::OrphanedGoldenChange
        | ViolationKind::PromptVersionMismatch
        | ViolationKind::LabelWithoutText
        | ViolationKind::TextWithoutLabel
        | ViolationKind::UnexplainedPromptChange
        | ViolationKind::LockNotBlessed => (),
    };
    let digest = Some(format!("sha256:{}", "a".repeat(64)));
    let mut release = Samples::new().release;
    release.changed_files = changes.iter().map(|kind| ChangedFile { path: "f".into(), kind: *kind }).collect();
    release.violations = violations
        .iter()
        .map(|kind| Violation { kind: *kind, message: "m".into(), cases: vec!["c".into()], paths: vec!["p".into()] })
        .collect();
    release.exporter_files = vec![ExporterFile { path: "app/x.py".into(), before: None, after: digest.clone() }];
    release.verdicts = vec![VerdictChange { case: "c".into(), before: "passes".into(), after: "none".into() }];
    release.lock = vec![crate::lock::PinChange { file: "s.json".into(), before: digest, after: None }];
    let schema_file = std::path::Path::new(crate::PROJECT_ROOT).join("schemas/release-check.schema.json");
    let schema: serde_json::Value = serde_json::from_slice(&std::fs::read(schema_file).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let mut state = State::of(Format::Json, false);
    let document: serde_json::Value = serde_json::from_str(&state.render(Event::Release(&release)).unwrap()).unwrap();
    let errors: Vec<String> = validator.iter_errors(&document).map(|e| format!("{e} at {}", e.instance_path)).collect();
    assert!(errors.is_empty(), "{errors:#?}");
    let mut unknown = document.clone();
    unknown["changedFiles"][0]["kind"] = "nonsense".into();
    assert!(!validator.is_valid(&unknown));
}

/// A traced call as the reporter wrote it when it built a tree of values first: the
/// call's members, the verdict's, then the notes (insertion order kept).
fn call_as_a_tree(judged: &Judged, format_version: Option<u32>) -> String {
    let call = &judged.call;
    let mut value = serde_json::Map::new();
    if let Some(version) = format_version {
        value.insert("formatVersion".into(), version.into());
    }
    let bounded = |text: &str| serde_json::Value::from(json::bounded_text(text).into_owned());
    value.insert("file".into(), judged.file.clone().into());
    value.insert("line".into(), judged.line.into());
    value.insert("span".into(), bounded(&call.span));
    value.insert("scope".into(), bounded(&call.scope));
    value.insert("traceId".into(), bounded(&call.trace_id));
    value.insert("spanId".into(), bounded(&call.span_id));
    value.insert("model".into(), call.model.as_deref().map_or(serde_json::Value::Null, bounded));
    value.insert("maxTokens".into(), call.max_tokens.into());
    if let serde_json::Value::Object(verdict) = serde_json::to_value(&judged.verdict).unwrap() {
        value.extend(verdict);
    }
    if !judged.notes.is_empty() {
        value.insert("notes".into(), judged.notes.clone().into());
    }
    serde_json::Value::Object(value).to_string()
}

/// Every verdict, with and without notes, model and max tokens, with a long and a
/// key-like name: the call serialized straight is byte for byte the tree it replaced.
#[test]
fn a_traced_call_is_written_as_the_tree_of_values_wrote_it() {
    use crate::trace::verdict::{Filled, Used};
    let verdicts = [
        Verdict::Matched { packet: "p.json".into() },
        Verdict::Mismatched { packet: Some("p.json".into()), differences: vec!["model \"a\"".into(), "b".into()] },
        Verdict::Mismatched { packet: None, differences: vec![] },
        Verdict::Unreviewed { reason: "no packet has \u{e9}\n".into() },
        Verdict::NotJudgeable { reason: "r".into() },
        Verdict::Unvouched { packet: "p.json".into(), reason: "r".into() },
        Verdict::Conforms {
            templates: vec![Used { name: "system.md.j2".into(), version: "sha256:ab".into() }],
            slots: vec![Filled { template: "t".into(), name: "x".into(), length: 3, sha256: "cd".into() }],
        },
    ];
    let mut judged = Samples::new().judged;
    let mut lines = 0;
    for verdict in verdicts {
        for (notes, model, max_tokens, span) in [
            (vec![], None, None, "chat".to_owned()),
            (vec!["n\t1".to_owned(), "n2".to_owned()], Some("gpt-5".to_owned()), Some(64), "x".repeat(5_000)),
            (vec![], Some("-----BEGIN PRIVATE KEY-----\nMII".to_owned()), Some(0), "s\u{0}\"".to_owned()),
        ] {
            (judged.verdict, judged.notes, judged.call.model, judged.call.max_tokens) =
                (verdict.clone(), notes, model, max_tokens);
            judged.call.span = span;
            assert_eq!(json::trace_call(&judged), call_as_a_tree(&judged, None));
            assert_eq!(trace_line(&judged), call_as_a_tree(&judged, Some(crate::report::JSON_FORMAT_VERSION)) + "\n");
            lines += 1;
        }
    }
    assert_eq!(lines, 21);
}
