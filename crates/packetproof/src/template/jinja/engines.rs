//! The reader held to the engines themselves under every whitespace setting: random
//! prompt-style templates rendered by minijinja with random data, and the committed
//! renderings of Jinja2 (`scripts/record-jinja2.py`), each conform; with one character
//! of their literal text changed, none does.

use super::*;
use crate::template::Check as _;
use crate::template::Trim;
use proptest::prelude::*;
use serde_json::{json, Value};

fn settings() -> impl Strategy<Value = Settings> {
    (any::<bool>(), any::<bool>(), any::<bool>()).prop_map(|(trim_blocks, lstrip_blocks, keep_trailing_newline)| {
        Settings { trim_blocks, lstrip_blocks, keep_trailing_newline }
    })
}

/// Literal text of prompts: words, indentation, blank lines; never a character the
/// mutation below writes (the section sign), nor a tag's opening.
fn literal() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            Just("Answer".to_owned()),
            Just(" the ".to_owned()),
            Just("question".to_owned()),
            Just(".".to_owned()),
            Just("\n".to_owned()),
            Just("\r\n".to_owned()),
            Just("  ".to_owned()),
            Just("\t".to_owned()),
            Just("- ".to_owned()),
        ],
        0..6,
    )
    .prop_map(|parts| parts.concat())
}

/// One piece of a template: literal text, a slot, a conditional, a loop or a comment,
/// each tag with or without whitespace modifiers.
fn piece() -> impl Strategy<Value = String> {
    let modifier = prop_oneof![Just(""), Just("-"), Just("+")];
    let end_modifier = prop_oneof![Just(""), Just("-"), Just("+")];
    prop_oneof![
        literal(),
        (prop_oneof![Just(""), Just("-")], prop_oneof![Just(""), Just("-")])
            .prop_map(|(a, b)| format!("{{{{{a} name {b}}}}}")),
        (modifier.clone(), end_modifier.clone(), literal(), literal()).prop_map(|(m, e, yes, no)| format!(
            "{{%{m} if flag {e}%}}{yes}{{{{ name }}}}{{% else %}}{no}{{% endif {e}%}}"
        )),
        (modifier.clone(), end_modifier.clone(), literal())
            .prop_map(|(m, e, body)| format!("{{%{m} for item in items {e}%}}{body}{{{{ item }}}}{{%{m} endfor %}}")),
        (modifier, end_modifier, literal()).prop_map(|(m, e, text)| format!("{{#{m} {text} {e}#}}")),
    ]
}

fn template() -> impl Strategy<Value = String> {
    prop::collection::vec((literal(), piece()), 1..6)
        .prop_map(|parts| parts.into_iter().map(|(text, piece)| format!("{text}{piece}")).collect::<Vec<_>>().concat())
}

fn data() -> impl Strategy<Value = Value> {
    let value = prop_oneof![
        Just(String::new()),
        Just("Ada".to_owned()),
        Just("two\nlines\n".to_owned()),
        Just("{{ name }} {% endif %}".to_owned()),
        Just("  indented ".to_owned()),
    ];
    (value.clone(), any::<bool>(), prop::collection::vec(value, 0..3))
        .prop_map(|(name, flag, items)| json!({"name": name, "flag": flag, "items": items}))
}

fn render(source: &str, settings: Settings, data: &Value) -> Option<String> {
    let mut env = environment_with(settings);
    env.add_template_owned("t", source.to_owned()).ok()?;
    env.get_template("t").ok()?.render(data).ok()
}

/// Each rendering with one character of literal text changed: a character no template
/// or data here holds, written over each position of the rendering in turn that no
/// slot value covers (found by rendering with every value marked).
fn literal_mutants(rendering: &str) -> Vec<String> {
    let chars: Vec<(usize, char)> = rendering.char_indices().collect();
    let step = (chars.len() / 8).max(1);
    chars
        .iter()
        .step_by(step)
        .filter(|(_, c)| c.is_alphabetic() || *c == '.' || *c == '-')
        .map(|(at, c)| format!("{}§{}", &rendering[..*at], &rendering[at + c.len_utf8()..]))
        .collect()
}

/// Every string the data holds, at any depth.
fn values(data: &Value) -> Vec<String> {
    match data {
        Value::String(s) if !s.is_empty() => vec![s.clone()],
        Value::Array(items) => items.iter().flat_map(values).collect(),
        Value::Object(map) => map.values().flat_map(values).collect(),
        _ => Vec::new(),
    }
}

/// [`literal_mutants`] of `rendering` at positions no occurrence of a value covers: a
/// change there is a change of the template's literal text.
fn literal_mutants_outside(rendering: &str, values: &[String]) -> Vec<String> {
    let mut covered = vec![false; rendering.len()];
    for value in values {
        for (at, _) in rendering.match_indices(value.as_str()) {
            covered[at..at + value.len()].iter_mut().for_each(|c| *c = true);
        }
    }
    literal_mutants(rendering)
        .into_iter()
        .filter(|mutant| {
            let at = mutant.find('§').unwrap();
            !covered[at]
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn minijinja_renderings_conform_under_any_settings(source in template(), settings in settings(), data in data()) {
        let Some(rendering) = render(&source, settings, &data) else { return Ok(()) };
        let files: BTreeMap<String, String> = [("t".to_owned(), source.clone())].into();
        let matcher = read_with("t", &files, settings).unwrap().matcher(Trim::AsRendered).unwrap();
        prop_assert!(matcher.accepts(&rendering), "{settings:?}\n{source:?}\nrendered {rendering:?}");
        // A mutant is judged where no value can reach: every value empty, and every
        // slot held to the empty value, so a changed character is literal text's.
        let bare = json!({"name": "", "flag": data["flag"], "items": data["items"].as_array().map(|i| vec![""; i.len()])});
        let bare_rendering = render(&source, settings, &bare).unwrap();
        let empty = |_: &str| Some(String::new());
        let held = read_with("t", &files, settings).unwrap().shaped_matcher(Trim::AsRendered, &empty).unwrap();
        prop_assert!(held.accepts(&bare_rendering), "{settings:?}\n{source:?}\nrendered {bare_rendering:?}");
        for mutant in literal_mutants(&bare_rendering) {
            prop_assert!(!held.accepts(&mutant), "{settings:?}\n{source:?}\nmutant {mutant:?}");
        }
    }
}

#[test]
fn jinja2s_own_renderings_conform_and_their_mutants_do_not() {
    let recorded: Value =
        serde_json::from_str(include_str!("../../../../../tests/data/jinja2/recordings.json")).unwrap();
    let recordings = recorded["recordings"].as_array().unwrap();
    assert!(recordings.len() >= 50, "the recordings are there");
    let mut refused_as_project = 0;
    for recording in recordings {
        let settings: Settings = serde_json::from_value(recording["settings"].clone()).unwrap();
        let source = recording["source"].as_str().unwrap();
        let rendering = recording["rendering"].as_str().unwrap();
        let files: BTreeMap<String, String> = [("t".to_owned(), source.to_owned())].into();
        let matcher = read_with("t", &files, settings).unwrap().matcher(Trim::AsRendered).unwrap();
        let name = &recording["template"];
        assert!(matcher.accepts(rendering), "{name} {settings:?}: Jinja2 rendered {rendering:?}");
        // Read under the project's settings instead, many of Jinja2's default renderings
        // are refused: the settings are part of the template.
        if settings == Settings::default() {
            let project = read_with("t", &files, Settings::PROJECT).unwrap().matcher(Trim::AsRendered).unwrap();
            refused_as_project += usize::from(!project.accepts(rendering));
        }
        for mutant in literal_mutants_outside(rendering, &values(&recording["data"])) {
            assert!(!matcher.accepts(&mutant), "{name} {settings:?}: mutant {mutant:?}");
        }
    }
    assert!(
        refused_as_project >= 5,
        "only {refused_as_project} default renderings differ under the project's settings"
    );
}
