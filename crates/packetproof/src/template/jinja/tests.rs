use super::*;
use crate::template::Trim;
use minijinja::Environment;
use serde_json::json;

/// An environment with the settings `compile::prompts` renders with.
fn environment(files: &BTreeMap<String, String>) -> Environment<'static> {
    let mut env = super::environment();
    let files = files.clone();
    env.set_loader(move |name| Ok(files.get(name).cloned()));
    env
}

fn files(list: &[(&str, &str)]) -> BTreeMap<String, String> {
    list.iter().map(|(n, t)| ((*n).to_owned(), (*t).to_owned())).collect()
}

/// What minijinja renders from `root` with `context` conforms to the template read
/// here; with one word of a literal changed, it does not.
#[track_caller]
fn renders_conform(files: &BTreeMap<String, String>, root: &str, context: serde_json::Value) {
    let rendered = environment(files).get_template(root).unwrap().render(&context).unwrap();
    let matcher = read(root, files).unwrap().matcher(Trim::TrimEnd).unwrap();
    let text = rendered.trim_end();
    assert!(matcher.is_match(text), "does not conform:\n{text:?}\n{:#?}", read(root, files).unwrap());
}

#[test]
fn whitespace_control_is_minijinjas() {
    let cases = [
        "A\n{% if x %}\nyes\n{% endif %}\nB\n",
        "A\n  {% if x %}\n  yes {{ v }}\n  {% else %}\n  no\n  {% endif %}\nB",
        "A {% if x %}inline{% endif %} B\n",
        "A  {%- if x -%}  tight  {%- endif %}  B",
        "A\n    {%+ if x %}kept{% endif +%}\nB",
        "{# a comment #}\nA\n  {# indented #}\nB {{- v -}} C",
        "List:\n{% for i in items %}\n- {{ i }}\n{% endfor %}\nEnd\n",
        "{% set y = 1 %}\n{{ v }}\n",
        "{% for i in items %}{{ i }}{% else %}none{% endfor %}.",
    ];
    for source in cases {
        let files = files(&[("t", source)]);
        for context in [
            json!({"x": true, "v": "value\nwith lines", "items": ["a", "b"]}),
            json!({"x": false, "v": "", "items": []}),
        ] {
            renders_conform(&files, "t", context);
        }
    }
}

#[test]
fn computed_includes_branch_over_the_templates_that_fit() {
    let files = files(&[
        ("root", "Top {{ name }}\n\n{% include \"parts/\" ~ mode ~ \".j2\" %}\n\n{% include 'parts/' ~ ('a' if flag else 'b') ~ '.j2' %}\nEnd.\n"),
        ("parts/a.j2", "## A\nabout {{ name }}\n"),
        ("parts/b.j2", "## B\n{% for i in items %}\n- {{ i }}\n{% endfor %}\n"),
        ("other/a.j2", "## never\n"),
    ]);
    for (mode, flag) in [("a", true), ("b", false), ("a", false)] {
        renders_conform(&files, "root", json!({"name": "N", "mode": mode, "flag": flag, "items": ["x"]}));
    }
    let m = read("root", &files).unwrap().matcher(Trim::TrimEnd).unwrap();
    let found = m.matches("Top Zed\n\n## B\n- 1\n- 2\n\n## A\nabout Zed\nEnd.").unwrap();
    assert_eq!(found.branches, ["parts/b.j2", "parts/a.j2"]);
    assert!(!m.is_match("Top Zed\n\n## never\n\n## A\nabout Zed\nEnd."));
}

#[test]
fn unsupported_tags_and_cycles_are_refused_by_name() {
    let err = read("t", &files(&[("t", "{% macro m() %}x{% endmacro %}")])).unwrap_err();
    assert!(err.contains("{% macro %} is not supported"), "{err}");
    let err = read("t", &files(&[("t", "{% include 't' %}")])).unwrap_err();
    assert!(err.contains("cycle"), "{err}");
    let err = read("t", &files(&[("t", "{% if x %}open")])).unwrap_err();
    assert!(err.contains("not closed"), "{err}");
}

#[test]
fn names_fit_literal_parts_around_wildcards() {
    let parts = |list: &[Option<&str>]| list.iter().map(|p| p.map(str::to_owned)).collect::<Vec<_>>();
    assert!(fits("branches/x/a.md.j2", &parts(&[Some("branches/x/"), None, Some(".md.j2")])));
    assert!(!fits("branches/y/a.md.j2", &parts(&[Some("branches/x/"), None, Some(".md.j2")])));
    assert!(!fits("branches/x/a.md", &parts(&[Some("branches/x/"), None, Some(".md.j2")])));
    assert!(fits("a.j2", &parts(&[Some("a.j2")])));
    assert!(!fits("a.j2x", &parts(&[Some("a.j2")])));
}

/// Every golden packet of the project conforms to the project's own templates, and
/// stops conforming when one word of its literal text changes.
#[test]
fn the_projects_golden_packets_conform_to_its_templates() {
    let root = std::path::Path::new(crate::PROJECT_ROOT);
    let config = crate::Config::load(root, None).unwrap();
    let files: BTreeMap<String, String> = config
        .walk_prompt_templates()
        .into_iter()
        .map(|(name, bytes)| (name, String::from_utf8(bytes).unwrap()))
        .collect();
    let system = read("system.md.j2", &files).unwrap().matcher(Trim::TrimEnd).unwrap();
    let user = read("user.md.j2", &files).unwrap().matcher(Trim::TrimEnd).unwrap();
    let mut seen = 0;
    for case in crate::corpus::cases(&config).unwrap().iter().filter(|c| c.golden_packet().is_file()) {
        let packet: serde_json::Value = serde_json::from_slice(&std::fs::read(case.golden_packet()).unwrap()).unwrap();
        let (s, u) = (packet["systemPrompt"].as_str().unwrap(), packet["userMessage"].as_str().unwrap());
        assert!(system.is_match(s), "{}: system prompt", case.name);
        let found = user.matches(u).unwrap_or_else(|| panic!("{}: user message does not conform", case.name));
        assert!(found.branches.iter().any(|b| b.starts_with("branches/")), "{:?}", found.branches);
        let changed = u.replacen("Rebuild the library example", "Rebuild the library sample", 1);
        assert_ne!(changed, u);
        assert!(!user.is_match(&changed), "{}: a changed word still conforms", case.name);
        seen += 1;
    }
    assert!(seen > 5, "only {seen} golden packets");
}
