//! One judge: a system prompt and user message as a rendering of an agent's templates
//! (its literal text theirs, values of their slots' shapes in their slots, each value
//! scanned for forbidden material). `packet::template-conformance` holds every packet
//! to it, `trace --gate` (and so `serve` and `wire --check --gate`) every call no packet
//! has: what production would refuse, the gate refuses first.
//!
//! The agent's templates are read once per judge (`AgentTemplates`); which template
//! files count, and which reviewed texts the undeclared slot shapes are taken from, is
//! the caller's: the suite's files and golden packets for the gate, the files and
//! packets a gate statement vouches for in production.

mod roots;
pub(crate) mod rule;
pub(crate) mod slots;

use crate::digest;
use crate::profile::Profile;
use crate::report::PacketCheck;
use crate::template::{Matcher, Rendering};
use crate::Invocation;
pub(crate) use roots::{located, located_names, roots, setting, suite_files, templates_followed, Root};
use serde::Serialize;
use slots::Contracts;
use std::collections::{BTreeMap, BTreeSet};

/// A template a conforming text rendered, and its version (the sha256 of its bytes).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Used {
    pub name: String,
    pub version: String,
}

/// A slot a conforming text filled: named by its expression, its value reported by
/// length and digest only (it is production data: no report copies it).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Filled {
    pub template: String,
    pub name: String,
    pub length: usize,
    pub sha256: String,
}

/// Which of the two texts a refusal is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Part {
    System,
    User,
}

impl Part {
    fn what(self) -> &'static str {
        match self {
            Part::System => "system prompt",
            Part::User => "user message",
        }
    }
}

/// How a pair of texts was judged.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Conformance {
    /// A rendering of the agent's templates, with every slot in its contract.
    Conforms { templates: Vec<Used>, slots: Vec<Filled> },
    /// Not decided within the per-call bound of matching steps (never a pass).
    Undecided(String),
}

/// A refusal: which text, and why.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Refusal {
    pub(crate) part: Part,
    pub(crate) why: String,
    /// Whether only a shape taken from the reviewed texts stops it (no declared one).
    pub(crate) by_inferred_shape: bool,
}

fn refusal(part: Part, why: String) -> Refusal {
    Refusal { part, why, by_inferred_shape: false }
}

/// One root template ready to match: each slot held to its shape, and any text in
/// every slot (which slot is outside its shape, when only the shaped one refuses).
struct Matchers {
    name: String,
    shaped: Matcher,
    free: Matcher,
}

/// The roots a system prompt or a user message may render.
struct Role {
    roots: Vec<Matchers>,
    /// The roots' names, as messages give them.
    names: String,
}

/// One agent's templates, read and compiled once.
pub(crate) struct AgentTemplates {
    system: Role,
    user: Role,
    contracts: Contracts,
    /// Each counted template's version: the sha256 of its bytes, as promptVersions records it.
    versions: BTreeMap<String, String>,
    /// The root templates no text can conform to, each with why (its reader refused
    /// it, or it is not counted); the others still match.
    pub(crate) refused: Vec<String>,
    /// How messages name the templates: "the vouched " in production, else nothing.
    called: &'static str,
    /// The material no slot value may hold: the agent's.
    forbidden: crate::forbidden::Forbidden,
}

/// The template files that count: name → bytes (under `paths.prompts`, or a key path).
pub(crate) type Files = Vec<(String, Vec<u8>)>;

/// Why a root not among the files is not counted, and whether a slot schema's bytes are
/// admitted (gate material in production).
pub(crate) type Lookups<'a> = (&'a dyn Fn(&str) -> String, &'a dyn Fn(&[u8]) -> bool);

/// Each root's name and its matcher.
type RootMatchers = [(String, Matcher)];

impl AgentTemplates {
    /// `agent`'s templates among `files`, each undeclared slot's shape taken from the
    /// values `reviewed` (system, user) texts fill it with; `missing` says why a root
    /// not among `files` is not counted.
    pub(crate) fn new(
        agent: &Profile,
        config: &Invocation,
        files: &Files,
        reviewed: &[(&str, &str)],
        (missing, admitted): Lookups,
    ) -> Result<AgentTemplates, String> {
        let versions = files.iter().map(|(name, bytes)| (name.clone(), digest::sha256(bytes))).collect();
        let texts: BTreeMap<String, String> = files
            .iter()
            .filter_map(|(name, bytes)| Some((name.clone(), String::from_utf8(bytes.clone()).ok()?)))
            .collect();
        let declared = roots(agent, config)?;
        let mut refused = Vec::new();
        let system = roots::read(&declared, &declared.system, &texts, missing, &mut refused);
        let user = roots::read(&declared, &declared.user, &texts, missing, &mut refused);
        let mut names = BTreeSet::new();
        for root in system.iter().chain(&user) {
            let mut of_root = BTreeSet::new();
            slots::slot_names(&root.template, &mut of_root);
            names.extend(of_root.into_iter().map(|slot| (root.name.clone(), slot)));
        }
        let free = |roots: &[Root]| -> Result<Vec<(String, Matcher)>, String> {
            roots.iter().map(|r| Ok((r.name.clone(), r.template.matcher(r.trim)?))).collect()
        };
        let (system_free, user_free) = (free(&system)?, free(&user)?);
        let observe = || observed((&system_free, &user_free), reviewed, config);
        let mut contracts = Contracts::new(agent, &names, &observe, config, &setting(agent, config), admitted)?;
        contracts.hold(system.iter().chain(&user).map(|root| &root.template))?;
        Ok(AgentTemplates {
            system: role(&system, system_free, &contracts)?,
            user: role(&user, user_free, &contracts)?,
            contracts,
            versions,
            refused,
            called: "",
            forbidden: config.settings().forbidden_of(agent).clone(),
        })
    }

    /// These templates, named in messages as `called` (`"the vouched "`).
    pub(crate) fn called(self, called: &'static str) -> AgentTemplates {
        AgentTemplates { called, ..self }
    }

    /// The texts as a rendering of these templates, or which text is none and why.
    pub(crate) fn judge(&self, (system, user): (&str, &str), config: &Invocation) -> Result<Conformance, Refusal> {
        // Roots left out are named, so that a text they would have matched says why.
        let refused = match self.refused.as_slice() {
            [] => String::new(),
            list => format!(" (not matched against: {})", list.join("; ")),
        };
        let system_found = match self.rendering(&self.system, system, Part::System, &refused)? {
            Ok(found) => found,
            Err(reason) => return Ok(Conformance::Undecided(reason)),
        };
        let user_found = match self.rendering(&self.user, user, Part::User, &refused) {
            Err(why) => match less_google_suffix(user, config.settings()) {
                Some(without) => self.rendering(&self.user, without, Part::User, &refused).map_err(|_| why)?,
                None => return Err(why),
            },
            Ok(found) => found,
        };
        let user_found = match user_found {
            Ok(found) => found,
            Err(reason) => return Ok(Conformance::Undecided(reason)),
        };
        let found = [(Part::System, &system_found), (Part::User, &user_found)];
        let slots = self.slots_kept(&found, config)?;
        Ok(Conformance::Conforms { templates: self.used(&found), slots })
    }

    /// How `text` renders one of `role`'s roots with each slot in its shape, else why
    /// not (naming the slot outside its shape when only its shape stops it, else where
    /// the text departs from every rendering); `Ok(Err(_))`: not decided in bound.
    fn rendering(
        &self,
        role: &Role,
        text: &str,
        part: Part,
        refused: &str,
    ) -> Result<Result<Rendering, String>, Refusal> {
        let what = part.what();
        for root in &role.roots {
            match root.shaped.matches(text) {
                Ok(Some(mut found)) => {
                    found.branches.insert(0, root.name.clone());
                    return Ok(Ok(found));
                }
                Err(unsplit) => return Ok(Err(format!("the {what} was not matched: {unsplit}"))),
                Ok(None) => {}
            }
        }
        for root in &role.roots {
            let Some(found) = root.free.matches(text).ok().flatten() else { continue };
            let outside = found.slots.iter().find_map(|(name, value)| {
                let why = self.contracts.outside_shape(&root.name, name, value)?;
                let inferred = self.contracts.is_inferred(&root.name, name);
                Some((
                    inferred,
                    format!(
                        "the {what} renders {}{}, but the value of {{{{ {name} }}}} in {} is outside its shape: {why}",
                        self.called, root.name, root.name
                    ),
                ))
            });
            if let Some((by_inferred_shape, why)) = outside {
                return Err(Refusal { part, why, by_inferred_shape });
            }
        }
        if role.roots.is_empty() {
            return Err(refusal(part, format!("the {what} has no template to be a rendering of{refused}")));
        }
        let departs = departure(role, text);
        Err(refusal(
            part,
            match part {
                Part::System => {
                    format!("the {what} is no rendering of {}{}{departs}{refused}", self.called, role.names)
                }
                Part::User => format!(
                    "the {what} is no rendering of {}{} (its literal text differs, or a branch it takes is not among \
                 them){departs}{refused}",
                    self.called, role.names
                ),
            },
        ))
    }

    /// Every template the renderings took that is counted, once, in text order.
    fn used(&self, found: &[(Part, &Rendering)]) -> Vec<Used> {
        let mut used: Vec<Used> = Vec::new();
        for (_, rendering) in found {
            for name in rendering.branches.iter().filter(|b| self.versions.contains_key(*b)) {
                if !used.iter().any(|u| &u.name == name) {
                    used.push(Used { name: name.clone(), version: self.versions[name].clone() });
                }
            }
        }
        used
    }

    /// Each slot value within its contract and free of forbidden material, reported once
    /// a slot (the first time a loop fills it); else the slot that is not.
    fn slots_kept(&self, found: &[(Part, &Rendering)], config: &Invocation) -> Result<Vec<Filled>, Refusal> {
        let mut slots: Vec<Filled> = Vec::new();
        // The suite's skip of `packet::forbidden-material` is one decision: every command
        // reads renderInput and the slot values alike, both or neither.
        let scans_forbidden = !config.settings().checks.skip.contains_key(PacketCheck::ForbiddenMaterial.name());
        for (part, rendering) in found {
            // The root comes first: the template the slot values fill.
            let template = rendering.branches.first().map_or("", String::as_str);
            for (name, value) in &rendering.slots {
                let breach =
                    self.contracts.breach(template, name, value).map(|why| format!("breaks its contract: {why}"));
                let breach = breach.or_else(|| {
                    scans_forbidden
                        .then(|| slots::forbidden(value, &self.forbidden))
                        .flatten()
                        .map(|why| format!("holds forbidden material ({why})"))
                });
                if let Some(why) = breach {
                    let message = format!(
                        "the {} renders {}{template}, but the value of {{{{ {name} }}}} {why}",
                        part.what(),
                        self.called
                    );
                    return Err(refusal(*part, message));
                }
                if !slots.iter().any(|f| f.template == template && &f.name == name) {
                    slots.push(Filled {
                        template: template.to_owned(),
                        name: name.clone(),
                        length: value.chars().count(),
                        sha256: digest::sha256(value.as_bytes()),
                    });
                }
            }
        }
        Ok(slots)
    }
}

/// The shaped matcher beside each root's free one.
fn role(roots: &[Root], free: Vec<(String, Matcher)>, contracts: &Contracts) -> Result<Role, String> {
    let mut matchers = Vec::new();
    for (root, (name, free)) in roots.iter().zip(free) {
        let shape_of = |slot: &str| contracts.pattern(&root.name, slot);
        matchers.push(Matchers { name, shaped: root.template.shaped_matcher(root.trim, &shape_of)?, free });
    }
    let names = roots.iter().map(|r| r.name.as_str()).collect::<Vec<_>>().join(" or ");
    Ok(Role { roots: matchers, names })
}

/// Where a text that renders no root departs from the one it follows furthest: the
/// line and column, and the text there (read from the start, else from the end).
fn departure(role: &Role, text: &str) -> String {
    let furthest = role.roots.iter().filter_map(|r| Some((r.free.departs_at(text).ok()?, &r.name)));
    let Some(((ahead, back), name)) = furthest.max_by_key(|((ahead, back), _)| (*ahead, text.len() - back)) else {
        return String::new();
    };
    let place = |at: usize| {
        let line = text[..at].matches('\n').count() + 1;
        let column = text[..at].rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        format!("line {line}, column {column}")
    };
    if ahead < text.len() {
        let here: String = text[ahead..].chars().take(40).collect();
        return format!(
            "; it departs from {name} at {} (byte {ahead}), at {}",
            place(ahead),
            crate::report::excerpt(&here)
        );
    }
    if back > 0 {
        let chars: Vec<char> = text[..back].chars().collect();
        let before: String = chars[chars.len().saturating_sub(40)..].iter().collect();
        let at = back - chars.last().map_or(0, |c| c.len_utf8());
        return format!(
            "; read from its end, it departs from {name} at {} (byte {at}), in {}",
            place(at),
            crate::report::excerpt(&before)
        );
    }
    format!("; its start and its end are {name}'s, but no rendering of it holds what lies between")
}

/// The values the reviewed texts fill each slot of each root with (every time a loop
/// fills it).
fn observed(
    (system, user): (&RootMatchers, &RootMatchers),
    reviewed: &[(&str, &str)],
    config: &Invocation,
) -> BTreeMap<slots::RootSlot, Vec<String>> {
    let first = |roots: &[(String, Matcher)], text: &str| {
        roots.iter().find_map(|(root, m)| Some((root.clone(), m.matches(text).ok().flatten()?)))
    };
    let mut observed: BTreeMap<slots::RootSlot, Vec<String>> = BTreeMap::new();
    for (system_text, user_text) in reviewed {
        let user_found = first(user, user_text)
            .or_else(|| less_google_suffix(user_text, config.settings()).and_then(|u| first(user, u)));
        for (root, found) in [first(system, system_text), user_found].into_iter().flatten() {
            for (name, value) in found.slots {
                observed.entry((root.clone(), name)).or_default().push(value);
            }
        }
    }
    observed
}

/// A Google text-JSON packet's user message ends with the suite's suffix: the user
/// message less it, when it ends with it (the templates render the message without).
fn less_google_suffix<'a>(user: &'a str, config: &crate::Config) -> Option<&'a str> {
    let suffix = config.google_suffix.as_str();
    user.strip_suffix(suffix).filter(|_| !suffix.is_empty())
}

#[cfg(test)]
mod tests;
