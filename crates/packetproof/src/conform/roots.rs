//! The root templates an agent's system prompt and user message render: the block
//! builder's two minijinja roots (its compiler trims each rendering's end), or what
//! the agent declares (`[agents.NAME.templates]`), each read in its style under its
//! engine's settings, with what the app does to its rendering.

use super::slots;
use super::Files;
use crate::profile::{Profile, Style};
use crate::template::{format, jinja, located, mustache, Piece, Template, Trim};
use crate::Invocation;
use std::collections::BTreeMap;

/// One root template, read.
pub(crate) struct Root {
    pub(crate) name: String,
    pub(crate) template: Template,
    /// What the app does to this template's rendering before sending it.
    pub(crate) trim: Trim,
}

/// What an agent declares of its roots.
pub(crate) struct Declared {
    pub(crate) style: Style,
    pub(crate) system: Vec<(String, Trim)>,
    pub(crate) user: Vec<(String, Trim)>,
    pub(crate) jinja: jinja::Settings,
    pub(crate) mustache: mustache::Settings,
    /// Slots a template's rendering fills: slot name → (template name, what the app does to it).
    pub(crate) fills: Vec<(String, String, Trim)>,
}

/// The settings table an agent is declared in, as messages name it.
pub(crate) fn setting(agent: &Profile, config: &Invocation) -> String {
    if config.settings().agents.several() {
        format!("agents.{}", agent.name)
    } else {
        "contract".into()
    }
}

/// The roots `agent` renders, or why it declares none.
pub(crate) fn roots(agent: &Profile, config: &Invocation) -> Result<Declared, String> {
    if agent.is_block_builder() {
        let one = |name: &str| vec![(name.to_owned(), Trim::TrimEnd)];
        let (system, user) = agent.entries();
        return Ok(Declared {
            style: Style::Jinja,
            system: one(system),
            user: one(user),
            jinja: jinja::Settings::PROJECT,
            mustache: mustache::Settings::default(),
            fills: Vec::new(),
        });
    }
    let Some(t) = &agent.templates else {
        return Err(format!("agent {:?} declares no templates ([{}.templates])", agent.name, setting(agent, config)));
    };
    let trimmed = |names: &[String]| {
        names.iter().map(|n| (n.clone(), t.renderings.get(n).copied().unwrap_or(t.rendering))).collect()
    };
    let fills = t
        .fills
        .iter()
        .map(|(slot, name)| (slot.clone(), name.clone(), t.renderings.get(name).copied().unwrap_or_default()))
        .collect();
    Ok(Declared {
        style: t.style,
        system: trimmed(&t.system),
        user: trimmed(&t.user),
        jinja: t.jinja,
        mustache: t.mustache,
        fills,
    })
}

/// The roots of `declared` read among `texts`; a root that cannot be read (not among
/// them: `missing` says why) is left out, with why in `refused`: it stops no other.
pub(super) fn read(
    declared: &Declared,
    names: &[(String, Trim)],
    texts: &BTreeMap<String, String>,
    missing: &dyn Fn(&str) -> String,
    refused: &mut Vec<String>,
) -> Vec<Root> {
    let mut roots = Vec::new();
    let fills = match read_fills(declared, texts, missing) {
        Ok(fills) => fills,
        Err(why) => {
            refused.push(why);
            return roots;
        }
    };
    for (name, trim) in names {
        let Some(text) = texts.get(name) else {
            refused.push(missing(name));
            continue;
        };
        let read = read_one(declared, name, text, texts).map(|t| filled(t, &fills));
        // Too large to match alone is refused alone.
        match read.and_then(|t| t.matcher(*trim).map(|_| t)) {
            Ok(template) => roots.push(Root { name: name.clone(), template, trim: *trim }),
            Err(why) => refused.push(format!("the template {name}: {why}")),
        }
    }
    roots
}

/// Each slot a template fills, with that template read (what the app does to its
/// rendering applied), or why one cannot be read.
fn read_fills(
    declared: &Declared,
    texts: &BTreeMap<String, String>,
    missing: &dyn Fn(&str) -> String,
) -> Result<BTreeMap<String, (String, Template)>, String> {
    let mut fills = BTreeMap::new();
    for (slot, name, trim) in &declared.fills {
        let text = texts.get(name).ok_or_else(|| missing(name))?;
        let template = read_one(declared, name, text, texts).map_err(|why| format!("the template {name}: {why}"))?;
        fills.insert(slot.clone(), (name.clone(), template.trimmed(*trim)));
    }
    // A filling template's own slots may be filled too, never by itself.
    let snapshot = fills.clone();
    for (_, (name, template)) in fills.iter_mut() {
        let others: BTreeMap<String, (String, Template)> =
            snapshot.iter().filter(|(_, (n, _))| n != name).map(|(s, f)| (s.clone(), f.clone())).collect();
        *template = filled(std::mem::take(template), &others);
    }
    Ok(fills)
}

/// `template` with each slot a template fills replaced by that template's rendering
/// (a branch labelled by its name, so a rendering names it among the templates used).
fn filled(template: Template, fills: &BTreeMap<String, (String, Template)>) -> Template {
    if fills.is_empty() {
        return template;
    }
    let pieces = template
        .pieces
        .into_iter()
        .map(|piece| match piece {
            Piece::Slot(name) => match fills.get(&name) {
                Some((filler, body)) => Piece::Branch(vec![(filler.clone(), body.clone())]),
                None => Piece::Slot(name),
            },
            Piece::Branch(arms) => Piece::Branch(arms.into_iter().map(|(l, t)| (l, filled(t, fills))).collect()),
            Piece::Choice(arms) => Piece::Choice(arms.into_iter().map(|t| filled(t, fills)).collect()),
            Piece::Repeat(body) => Piece::Repeat(filled(body, fills)),
            literal => literal,
        })
        .collect();
    Template { pieces }
}

/// The template `root` (whose text is `text`) in its style, read among `texts`, or
/// why it cannot be followed.
fn read_one(declared: &Declared, root: &str, text: &str, texts: &BTreeMap<String, String>) -> Result<Template, String> {
    let strip = |why: String| why.strip_prefix(&format!("{root}: ")).map(str::to_owned).unwrap_or(why);
    match declared.style {
        Style::Jinja => jinja::read_with(root, texts, declared.jinja).map_err(strip),
        Style::Format => format::read(text),
        Style::Mustache => mustache::read_with(root, texts, declared.mustache).map_err(strip),
    }
}

/// The suite's templates as the gate reads them: the files under `paths.prompts`, and
/// each template an agent names at a key path of an app file (`FILE#KEY.PATH`, from
/// the suite's folder) that can be read there.
pub(crate) fn suite_files(config: &Invocation) -> Files {
    let mut files = config.prompt_templates();
    for name in located_names(config) {
        if let Ok(text) = located(config, &name) {
            files.push((name, text.into_bytes()));
        }
    }
    files
}

/// Every template name an agent declares at a key path, once.
pub(crate) fn located_names(config: &Invocation) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for t in config.settings().agents.all().iter().filter_map(|agent| agent.templates.as_ref()) {
        for name in t.system.iter().chain(&t.user).chain(t.fills.values()) {
            if located::reference(name).is_some() && !names.contains(name) {
                names.push(name.clone());
            }
        }
    }
    names
}

/// The text of the template `name` (`FILE#KEY.PATH`), or why it cannot be read.
pub(crate) fn located(config: &Invocation, name: &str) -> Result<String, String> {
    let Some((file, path)) = located::reference(name) else { return Err(format!("{name} names no key path")) };
    let bytes = crate::fsutil::read_bytes(&config.settings().root.join(file), config.settings().limits.max_file_bytes)
        .map_err(|e| e.to_string())?;
    located::text_at(file, &bytes, path)
}

/// Why the root `name` is not among the templates read: a key path's own error, else `otherwise`.
pub(crate) fn why_missing(config: &Invocation, name: &str, otherwise: String) -> String {
    match located::reference(name).map(|_| located(config, name)) {
        Some(Err(why)) => format!("the template {name}: {why}"),
        _ => otherwise,
    }
}

/// `test --attest`: every root template the suite's texts may render, read as the
/// judge reads them, so that no gate is signed over a template conformance cannot
/// follow; the error names each one and why.
pub(crate) fn templates_followed(config: &Invocation) -> crate::Result<()> {
    let mut refused = Vec::new();
    let files = suite_files(config);
    let texts: BTreeMap<String, String> =
        files.into_iter().filter_map(|(name, bytes)| Some((name, String::from_utf8(bytes).ok()?))).collect();
    for agent in config.settings().agents.all() {
        let Ok(declared) = roots(agent, config) else { continue };
        let missing =
            |root: &str| why_missing(config, root, format!("{root} is no UTF-8 template under paths.prompts"));
        let names = [declared.system.clone(), declared.user.clone()].concat();
        let read = read(&declared, &names, &texts, &missing, &mut refused);
        let templates: Vec<&Template> = read.iter().map(|r| &r.template).collect();
        refused.extend(slots::undeclared(agent, &templates, &setting(agent, config)));
    }
    if refused.is_empty() {
        return Ok(());
    }
    Err(crate::Error::Config {
        file: config.settings().file_name(),
        message: format!(
            "the gate would vouch for templates that template conformance cannot follow: {} (docs/gating-any-agent.md, \
             template styles)",
            refused.join("; ")
        ),
    })
}
