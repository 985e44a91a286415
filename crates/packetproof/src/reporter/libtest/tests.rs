use crate::conformance::runner::{self, Completion, Failed, Passed, Selection, Trial};
use crate::reporter::{Event, Kind, Reporter};
use crate::Format;

/// A tiny suite of every outcome: passed, failed (a message of two lines), found
/// not to apply as it ran (with why), panicked; one trial the filter leaves out.
const SUITE: [(&str, &str); 5] = [
    ("a::packet::checksum", "pass"),
    ("a::packet::contract", "fail"),
    ("b::run::attestation", "ignore"),
    ("corpus::layout", "panic"),
    ("left-out", "pass"),
];
const FILTER: &str = "::";
const REASON: &str = "not applicable: the fixture's run/ has no \"attestation.json\"";

fn body(kind: &str) -> Result<Passed, Failed> {
    match kind {
        "fail" => Err("packet::contract failed:\n  [packet::contract] $.maxTokens: too many".into()),
        "ignore" => Ok(Completion::ignored_with(REASON).into()),
        "panic" => panic!("boom"),
        _ => Ok(Completion::Completed.into()),
    }
}

/// The runner's output in `format`, one worker, through the reporter.
fn ours(format: Format, color: bool) -> String {
    let trials = SUITE.iter().map(|(name, kind)| Trial::test((*name).to_owned(), move || body(kind))).collect();
    let selected = Selection { filter: Some(FILTER.into()), ..Selection::default() }.select(trials);
    let mut reporter = Reporter::new(format, Kind::Test, color).unwrap();
    let mut out = String::new();
    runner::run_on(selected, 1, |event| out.push_str(&reporter.report(Event::Test(event)).unwrap()));
    out
}

/// What libtest-mimic printed for the same trials on one thread (the runner `packetproof
/// test` used before it had its own).
fn libtest_mimic(format: libtest_mimic::FormatSetting) -> String {
    use libtest_mimic::{Arguments, ColorSetting};
    let trials = SUITE
        .iter()
        .map(|(name, kind)| {
            libtest_mimic::Trial::ignorable_test(*name, move || match body(kind) {
                Err(failed) => Err(failed.message().into()),
                Ok(Passed { completion: Completion::Ignored { reason }, .. }) => {
                    Ok(libtest_mimic::Completion::ignored_with(reason))
                }
                Ok(_) => Ok(libtest_mimic::Completion::Completed),
            })
        })
        .collect();
    let log = tempfile::NamedTempFile::new().unwrap();
    let arguments = Arguments {
        filter: Some(FILTER.into()),
        test_threads: Some(1),
        format: Some(format),
        color: Some(ColorSetting::Never),
        logfile: Some(log.path().display().to_string()),
        ..Arguments::default()
    };
    let conclusion = libtest_mimic::run(&arguments, trials);
    assert_eq!((conclusion.num_passed, conclusion.num_failed, conclusion.num_ignored), (1, 2, 1));
    std::fs::read_to_string(log.path()).unwrap()
}

/// The run's duration, the one part that differs from run to run.
fn untimed(text: &str) -> String {
    let seconds = regex::Regex::new(r"finished in [0-9.]+s").unwrap();
    let exec_time = regex::Regex::new(r#""exec_time": [0-9.e-]+"#).unwrap();
    let text = seconds.replace_all(text, "finished in [t]s");
    exec_time.replace_all(&text, r#""exec_time": [t]"#).into_owned()
}

#[test]
fn pretty_and_terse_print_what_libtest_mimic_printed() {
    for (format, setting) in
        [(Format::Pretty, libtest_mimic::FormatSetting::Pretty), (Format::Terse, libtest_mimic::FormatSetting::Terse)]
    {
        assert_eq!(untimed(&ours(format, false)), untimed(&libtest_mimic(setting)), "{format}");
    }
    let pretty = ours(Format::Pretty, false);
    assert!(pretty.contains(&format!("test b::run::attestation ... ignored ({REASON})\n")), "{pretty}");
    assert!(pretty.contains("---- corpus::layout ----\ntest panicked: boom\n"), "{pretty}");
    assert!(
        pretty.contains("test result: FAILED. 1 passed; 2 failed; 1 ignored; 0 measured; 1 filtered out"),
        "{pretty}"
    );
}

/// The JSON events are libtest-mimic's, line for line, except that an ignored trial
/// says why (libtest's `message`), which libtest-mimic leaves out.
#[test]
fn json_events_are_libtest_mimics_with_the_reason_of_each_ignored_trial() {
    let printed = ours(Format::Json, false);
    let ours = untimed(&printed);
    let theirs = untimed(&libtest_mimic(libtest_mimic::FormatSetting::Json));
    let (ours, theirs): (Vec<&str>, Vec<&str>) = (ours.lines().collect(), theirs.lines().collect());
    assert_eq!(ours.len(), theirs.len(), "{ours:#?}\n{theirs:#?}");
    let message = serde_json::to_string(REASON).unwrap();
    for (ours, theirs) in ours.iter().zip(&theirs) {
        match ours.contains(r#""event": "ignored""#) {
            true => assert_eq!(*ours, theirs.replace(" }", &format!(", \"message\": {message} }}"))),
            false => assert_eq!(ours, theirs),
        }
    }
    // Straight from the runner: every ignored event of a run carries its reason.
    let ignored: Vec<serde_json::Value> = printed
        .lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
        .filter(|event| event["event"] == "ignored")
        .collect();
    assert_eq!(ignored.len(), 1);
    assert_eq!(ignored[0]["message"], REASON);
}

#[test]
fn verdicts_are_coloured_only_when_asked() {
    for format in [Format::Pretty, Format::Terse] {
        let (plain, coloured) = (ours(format, false), ours(format, true));
        assert!(!plain.contains('\u{1b}'), "{plain:?}");
        assert!(coloured.contains("\u{1b}[32m") && coloured.contains("\u{1b}[31m"), "{coloured:?}");
        assert!(coloured.contains("\u{1b}[33m"), "{coloured:?}");
    }
    assert!(!ours(Format::Json, true).contains('\u{1b}'));
}

/// A name or reason that would start a line of its own, or drive the terminal, is escaped.
#[test]
fn control_characters_in_a_name_or_reason_are_escaped() {
    let trials = vec![Trial::ignored("x\ntest result: ok.".into(), "why\u{1b}[2J")];
    let selected = Selection::default().select(trials);
    let mut reporter = Reporter::new(Format::Pretty, Kind::Test, false).unwrap();
    let mut out = String::new();
    runner::run_on(selected, 1, |event| out.push_str(&reporter.report(Event::Test(event)).unwrap()));
    assert!(out.contains("test x\\u{a}test result: ok. ... ignored (why\\u{1b}[2J)\n"), "{out}");
}
