use super::*;
use crate::template::Check as _;
use crate::template::{Matcher, Trim};

fn files(list: &[(&str, &str)]) -> BTreeMap<String, String> {
    list.iter().map(|(n, t)| ((*n).to_owned(), (*t).to_owned())).collect()
}

fn matcher(files: &BTreeMap<String, String>, root: &str) -> Matcher {
    read(root, files).unwrap().matcher(Trim::AsRendered).unwrap()
}

/// Each rendering (as mustache.js renders the template with other data: values with
/// newlines and template-looking text, lists of other lengths) conforms; each
/// rendering with one literal character changed does not.
#[track_caller]
fn conform(m: &Matcher, renderings: &[&str], changed: &[&str]) {
    for text in renderings {
        assert!(m.accepts(text), "does not conform: {text:?}");
    }
    for text in changed {
        assert!(!m.accepts(text), "conforms though changed: {text:?}");
    }
}

#[test]
fn standalone_section_lines_are_dropped() {
    let files = files(&[(
        "release_notes.user.mustache",
        "Release notes for {{repo}}:\n{{#pulls}}\n- #{{number}} {{{title}}}\n{{/pulls}}\n  {{^pulls}}\nNo pull \
         requests.\n  {{/pulls}}\n{{! standalone comment }}\nThanks.\n",
    )]);
    let m = matcher(&files, "release_notes.user.mustache");
    conform(
        &m,
        &[
            "Release notes for a/b:\n- #1 Fix {{#pulls}}\nsecond line\n- #22 x\nThanks.\n",
            "Release notes for a/b:\n- #1 one\n- #2 two\n- #3 three\nThanks.\n",
            "Release notes for :\nNo pull requests.\nThanks.\n",
        ],
        &[
            "Release notes for a/b:\n- #1 one\n- #2 two\nThanks!\n",
            "Release notes fxr a/b:\n- #1 one\nThanks.\n",
            "Release notes for a/b:\n\n- #1 one\nThanks.\n",
            "Release notes for :\nNo pull requests!\nThanks.\n",
            "Release notes for a/b:\n- #1 one\nThanks.",
        ],
    );
}

#[test]
fn inline_sections_and_interpolations_keep_their_lines() {
    let files = files(&[("t", "A {{#x}}yes{{/x}}\n  {{y}}\n {{#x}}{{/x}}{{z}}\n")]);
    let m = matcher(&files, "t");
    conform(&m, &["A yes\n  v\n w\n", "A \n  \n \n"], &["A yes\nv\n w\n", "A yes\n  v\nw\n"]);
}

#[test]
fn delimiters_change_for_the_rest_of_the_template() {
    let files = files(&[(
        "t",
        "{{=<% %>=}}\nHi <%name%>, {{literal}}\n<%#items%>\n  * <%.%>\n<%/items%>\n<%={{ }}=%>\nBye {{{name}}}.\n",
    )]);
    let m = matcher(&files, "t");
    conform(
        &m,
        &["Hi Ada, {{literal}}\n  * a\n  * &lt;%b%&gt;\nBye Ada.\n", "Hi , {{literal}}\nBye .\n"],
        &["Hi Ada, {{literal}}\n  - a\nBye Ada.\n", "Hi Ada, {literal}\nBye Ada.\n", "Hi Ada, {{literal}}\nBye Ada!\n"],
    );
}

#[test]
fn partials_are_read_from_the_folder_and_standalone_ones_indented() {
    let files = files(&[
        ("prompts/main.mustache", "Head\n  {{> item}}\nTail {{>inline}}!\n"),
        ("prompts/item.mustache", "line1 {{x}}\n\nline2\n"),
        ("prompts/inline", "[{{y}}]"),
        ("item.mustache", "another folder's\n"),
    ]);
    let m = matcher(&files, "prompts/main.mustache");
    conform(
        &m,
        &["Head\n  line1 X\nmore\n\n  line2\nTail [Y]!\n"],
        &[
            "Head\nline1 X\n\nline2\nTail [Y]!\n",
            "Head\n  line1 X\n  \n  line2\nTail [Y]!\n",
            "Head\nanother folder's\n",
        ],
    );
    let found = m.found("Head\n  line1 X\n\n  line2\nTail [Y]!\n").unwrap();
    assert_eq!(found.branches, ["prompts/item.mustache", "prompts/inline"]);
}

#[test]
fn a_standalone_multiline_comment_is_dropped() {
    let m = matcher(&files(&[("t", "A\n  {{! one\n two }}  \nB {{!x}}\r\n  {{#s}}\r\nC\r\n{{/s}}")]), "t");
    conform(&m, &["A\nB \r\nC\r\n", "A\nB \r\n"], &["A\n\nB \r\n", "A\nB \nC\n"]);
}

#[test]
fn what_cannot_be_followed_is_refused_by_name() {
    for (text, says) in [
        ("{{> missing}}", "no such partial"),
        ("{{> t}}", "cycle"),
        ("{{>*dynamic}}", "dynamic partial"),
        ("{{<parent}}{{/parent}}", "inheritance"),
        ("{{$block}}x{{/block}}", "inheritance"),
        ("{{#a}}x", "never closed"),
        ("{{#a}}x{{/b}}", "closes the section a"),
        ("x{{/b}}", "closes no open section"),
        ("{{ }}", "empty tag"),
        ("{{name", "unclosed tag"),
        ("{{=<% %>", "unclosed delimiter"),
        ("{{=<%=}}", "two delimiters"),
        ("Hi {{>two}}", "several lines"),
    ] {
        let files = files(&[("t", text), ("two", "a\nb\n")]);
        let err = read("t", &files).unwrap_err();
        assert!(err.starts_with("t: ") && err.contains(says), "{text}: {err}");
    }
}

/// The official mustache spec's required tests (tests/data/mustache-spec, vendored
/// with its licence): each expected rendering conforms to its template, with its
/// first or last literal character changed it does not, or the template is refused
/// for the documented reason.
#[test]
fn the_mustache_specs_tests_conform_or_are_refused_as_documented() {
    let refused = [("partials", "Failed Lookup", "no such partial"), ("partials", "Recursion", "cycle")];
    let dir = std::path::Path::new(crate::PROJECT_ROOT).join("tests/data/mustache-spec");
    let (mut conformed, mut changed, mut seen_refused) = (0, 0, 0);
    for spec in ["comments", "delimiters", "interpolation", "inverted", "partials", "sections"] {
        let json: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.join(format!("{spec}.json"))).unwrap()).unwrap();
        for test in json["tests"].as_array().unwrap() {
            let name = test["name"].as_str().unwrap();
            let mut files = BTreeMap::new();
            for (partial, text) in test["partials"].as_object().into_iter().flatten() {
                files.insert(partial.clone(), text.as_str().unwrap().to_owned());
            }
            files.insert("(spec)".to_owned(), test["template"].as_str().unwrap().to_owned());
            let expected = test["expected"].as_str().unwrap();
            match (read("(spec)", &files), refused.iter().find(|(s, n, _)| *s == spec && *n == name)) {
                (Err(err), Some((.., says))) => {
                    assert!(err.contains(says), "{spec}/{name}: {err}");
                    seen_refused += 1;
                }
                (Err(err), None) => panic!("{spec}/{name} is refused: {err}"),
                (Ok(_), Some(_)) => panic!("{spec}/{name} is read, though documented as refused"),
                (Ok(template), None) => {
                    let m = template.matcher(Trim::AsRendered).unwrap();
                    assert!(m.accepts(expected), "{spec}/{name}: {expected:?} does not conform to {template:#?}");
                    conformed += 1;
                    let mut edges = Vec::new();
                    if let Some(Piece::Literal(first)) = template.pieces.first() {
                        edges.push(first.chars().next().map(|c| (0, c.len_utf8())));
                    }
                    if let Some(Piece::Literal(last)) = template.pieces.last() {
                        edges.push(last.chars().next_back().map(|c| (expected.len() - c.len_utf8(), expected.len())));
                    }
                    for (from, to) in edges.into_iter().flatten() {
                        let mut text = expected.to_owned();
                        let other = if &text[from..to] == "\u{7f}" { "\u{1}" } else { "\u{7f}" };
                        text.replace_range(from..to, other);
                        assert!(!m.accepts(&text), "{spec}/{name}: {text:?} conforms though changed");
                        changed += 1;
                    }
                }
            }
        }
    }
    assert_eq!(seen_refused, refused.len());
    assert!(conformed >= 130 && changed >= 100, "{conformed} conformed, {changed} changed");
}

#[test]
fn an_escaped_slot_holds_only_what_the_escape_produces() {
    let files = files(&[("t", "Note: {{note}} / raw: {{{raw}}} / amp: {{&amp}}\n")]);
    let m = matcher(&files, "t");
    conform(
        &m,
        &[
            "Note: &lt;script&gt;alert(1)&lt;&#x2F;script&gt; / raw: <b> / amp: <i>\n",
            "Note: Tom &amp; Jerry&#39;s &quot;show&quot; / raw: & / amp: \"\n",
        ],
        &[
            "Note: <script>alert(1)</script> / raw: x / amp: y\n",
            "Note: Tom & Jerry / raw: x / amp: y\n",
            "Note: say \"hi\" / raw: x / amp: y\n",
        ],
    );
    // An app that turns escaping off declares it: then the slot takes any text.
    let settings = Settings { escape_html: false };
    let raw = read_with("t", &files, settings).unwrap().matcher(Trim::AsRendered).unwrap();
    assert!(raw.accepts("Note: <script>alert(1)</script> / raw: x / amp: y\n"));
}
