use super::*;
use crate::template::Check as _;
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
    assert!(matcher.accepts(text), "does not conform:\n{text:?}\n{:#?}", read(root, files).unwrap());
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
        // Ends in a loop, or in a slot that may render empty: the trimmed end is cut alike.
        "Items:\n{% for i in items %}\n- {{ i }}\n{% endfor %}\n",
        "Head {{ v }}\n\n{{ v }}\n",
        "{% if x %}\nA\n{% endif %}\n{% for i in items %}{{ i }}\n\n{% endfor %}",
    ];
    for source in cases {
        let files = files(&[("t", source)]);
        for context in [
            json!({"x": true, "v": "value\nwith lines", "items": ["a", "b"]}),
            json!({"x": false, "v": "", "items": []}),
            json!({"x": true, "v": " {{ v }}\n", "items": ["", "{% endfor %}\n", "c"]}),
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
    let found = m.found("Top Zed\n\n## B\n- 1\n- 2\n\n## A\nabout Zed\nEnd.").unwrap();
    assert_eq!(found.branches, ["parts/b.j2", "parts/a.j2"]);
    assert!(!m.accepts("Top Zed\n\n## never\n\n## A\nabout Zed\nEnd."));
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

/// The packets the project's own templates compile from its fixtures conform to those
/// templates, and stop conforming when a line of their literal text changes. The
/// packets are compiled here, not read from the golden folder: a prompt edit fails the
/// conformance gate alone.
#[test]
fn the_projects_compiled_packets_conform_to_its_templates() {
    let root = std::path::Path::new(crate::PROJECT_ROOT);
    let config = crate::Invocation::from(crate::Config::load(root, None).unwrap());
    let files: BTreeMap<String, String> = config
        .settings()
        .walk_prompt_templates()
        .into_iter()
        .map(|(name, bytes)| (name, String::from_utf8(bytes).unwrap()))
        .collect();
    let system = read("system.md.j2", &files).unwrap().matcher(Trim::TrimEnd).unwrap();
    let user = read("user.md.j2", &files).unwrap().matcher(Trim::TrimEnd).unwrap();
    let mut seen = 0;
    for case in crate::corpus::cases(&config).unwrap() {
        let Ok(packet) = crate::compile::compile(&case.request, &config, &case.name) else { continue };
        let (s, u) = (packet["systemPrompt"].as_str().unwrap(), packet["userMessage"].as_str().unwrap());
        assert!(system.accepts(s), "{}: system prompt", case.name);
        let found = user.found(u).unwrap_or_else(|| panic!("{}: user message does not conform", case.name));
        assert!(found.branches.iter().any(|b| b.starts_with("branches/")), "{:?}", found.branches);
        let line = literal_line(&files["user.md.j2"], u).expect("a literal line of user.md.j2 in the message");
        let changed = u.replacen(line, &format!("{line}!"), 1);
        assert!(!user.accepts(&changed), "{}: a changed line still conforms", case.name);
        seen += 1;
    }
    assert!(seen > 5, "only {seen} packets compiled");
}

/// A line of `template` without template syntax, long enough to be unambiguous, that `text` holds.
fn literal_line<'t>(template: &'t str, text: &str) -> Option<&'t str> {
    template.lines().find(|line| line.len() > 20 && !line.contains(['{', '%', '#']) && text.contains(line))
}

/// Random small templates (text, slots, `if`/`else`, `for`, comments, every whitespace
/// control) and random data (strings with newlines and template-looking text, lists of
/// any length) rendered by minijinja under the project's settings conform, as rendered
/// and with each declared trim applied; in a template without slots, a rendering with
/// one character changed does not.
mod property {
    use super::*;
    use proptest::prelude::*;

    #[derive(Debug, Clone)]
    enum Node {
        Text(&'static str),
        Var(usize, &'static str, &'static str),
        Comment(&'static str, &'static str),
        If(usize, [&'static str; 2], Vec<Node>, Option<Vec<Node>>),
        For(usize, [&'static str; 2], Vec<Node>),
    }

    const TEXT: &[&str] = &["A", "b", " ", "\n", "\t", "  \n", "-", ".", "\r\n", "\n\n"];
    const BLOCK: &[&str] = &["", "-", "+"];
    const VAR: &[&str] = &["", "-"];

    fn node(slots: bool) -> impl Strategy<Value = Node> {
        let leaf = prop_oneof![
            4 => prop::sample::select(TEXT).prop_map(Node::Text),
            1 => (prop::sample::select(VAR), prop::sample::select(VAR)).prop_map(|(a, b)| Node::Comment(a, b)),
            (if slots { 3 } else { 0 }) => (0..2usize, prop::sample::select(VAR), prop::sample::select(VAR))
                .prop_map(|(v, a, b)| Node::Var(v, a, b)),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            let ws = || [prop::sample::select(BLOCK), prop::sample::select(BLOCK)];
            let body = || prop::collection::vec(inner.clone(), 0..4);
            prop_oneof![
                (0..2usize, ws(), body(), prop::option::of(body())).prop_map(|(c, w, a, b)| Node::If(c, w, a, b)),
                (0..2usize, ws(), body()).prop_map(|(l, w, b)| Node::For(l, w, b)),
            ]
        })
    }

    fn tag(out: &mut String, [open, close]: [&str; 2], inner: &str) {
        out.push_str(&format!("{{%{open} {inner} {close}%}}"));
    }

    fn source(nodes: &[Node], out: &mut String) {
        for node in nodes {
            match node {
                Node::Text(text) => out.push_str(text),
                Node::Var(v, a, b) => out.push_str(&format!("{{{{{a} v{v} {b}}}}}")),
                Node::Comment(a, b) => out.push_str(&format!("{{#{a} note {b}#}}")),
                Node::If(c, ws, then, otherwise) => {
                    tag(out, *ws, &format!("if c{c}"));
                    source(then, out);
                    if let Some(otherwise) = otherwise {
                        tag(out, *ws, "else");
                        source(otherwise, out);
                    }
                    tag(out, *ws, "endif");
                }
                Node::For(l, ws, body) => {
                    tag(out, *ws, &format!("for v1 in l{l}"));
                    source(body, out);
                    tag(out, *ws, "endfor");
                }
            }
        }
    }

    fn value() -> impl Strategy<Value = String> {
        prop::collection::vec(
            prop::sample::select(&["x", " ", "\n", "{{ v0 }}", "{% endif %}", "\t", "A", "-"][..]),
            0..4,
        )
        .prop_map(|parts| parts.concat())
    }

    fn data() -> impl Strategy<Value = serde_json::Value> {
        (
            value(),
            value(),
            any::<[bool; 2]>(),
            prop::collection::vec(value(), 0..4),
            prop::collection::vec(value(), 0..3),
        )
            .prop_map(|(v0, v1, [c0, c1], l0, l1)| json!({"v0": v0, "v1": v1, "c0": c0, "c1": c1, "l0": l0, "l1": l1}))
    }

    fn check(nodes: Vec<Node>, context: serde_json::Value, slots: bool) -> Result<(), TestCaseError> {
        let mut text = String::new();
        source(&nodes, &mut text);
        let files = files(&[("t", &text)]);
        let rendered = environment(&files).get_template("t").unwrap().render(&context).unwrap();
        let template = read("t", &files).map_err(|e| TestCaseError::fail(format!("{text:?}: {e}")))?;
        let sent = [
            (Trim::AsRendered, rendered.clone()),
            (Trim::TrimEnd, rendered.trim_end().to_owned()),
            (Trim::Both, rendered.trim().to_owned()),
            (Trim::StripTrailingNewlines, rendered.trim_end_matches('\n').to_owned()),
        ];
        for (trim, sent) in sent {
            let matcher = template.matcher(trim).unwrap();
            prop_assert!(matcher.accepts(&sent), "{trim:?}: {sent:?} is no rendering of {text:?}");
            if !slots {
                for (at, c) in sent.char_indices() {
                    let changed = format!("{}§{}", &sent[..at], &sent[at + c.len_utf8()..]);
                    prop_assert!(!matcher.accepts(&changed), "{trim:?}: {changed:?} conforms to {text:?}");
                }
            }
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 400, failure_persistence: None, ..ProptestConfig::default() })]

        #[test]
        fn minijinjas_renderings_conform(nodes in prop::collection::vec(node(true), 0..6), context in data()) {
            check(nodes, context, true)?;
        }

        #[test]
        fn a_changed_character_does_not_conform(nodes in prop::collection::vec(node(false), 1..6), context in data()) {
            check(nodes, context, false)?;
        }
    }
}
