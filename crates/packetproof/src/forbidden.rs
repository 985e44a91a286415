//! `[forbidden]` and an agent's own lists over it, compiled once: the keys and value
//! patterns that mark material which must never reach a model.

use regex::Regex;

/// `[forbidden]` as written (over the built-in lists), and an agent's
/// `[agents.NAME.forbidden]` (or `[contract.forbidden]`) over the suite's: a list given
/// replaces the one below it (narrowed or replaced: an agent whose prompts carry image URLs
/// by design leaves the media-URL pattern out), and `extra_*` add to it, so a suite or an
/// agent names only its own.
#[derive(Debug, Clone, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawForbidden {
    keys: Option<Vec<String>>,
    blueprint_keys: Option<Vec<String>>,
    value_patterns: Option<Vec<String>>,
    #[serde(default)]
    extra_keys: Vec<String>,
    #[serde(default)]
    extra_blueprint_keys: Vec<String>,
    #[serde(default)]
    extra_value_patterns: Vec<String>,
}

/// Forbidden packet material: keys anywhere, and patterns in string values.
#[derive(Debug, Clone)]
pub(crate) struct Forbidden {
    pub(crate) keys: Vec<String>,
    /// Keys refused inside a compile input's source blueprint only, exact case
    /// (the reference's blueprint scan): generated media and provider records.
    pub(crate) blueprint_keys: Vec<String>,
    pub(crate) patterns: Vec<String>,
    /// Every pattern as one alternation, so a clean text (nearly every text) is
    /// scanned once and the scan may stop at the first match (a `RegexSet` asked which
    /// patterns match looks for every one of them to the end). (`cargo bench`: the forbidden-material check of the
    /// interop packet went from 44 to 41 µs of CPU.) `None` when there are no
    /// patterns (an empty alternation would match everything).
    any: Option<Regex>,
    /// Each pattern alone, in configured order: which one matched, once something did.
    each: Vec<Regex>,
    /// The keys as a text writes them (see [`Forbidden::written_keys`]).
    written: Option<Regex>,
}

impl Forbidden {
    /// The lists `[forbidden]` resolves to: each built-in (or restated) list with the
    /// suite's `extra_*` added, each entry once. An error names the setting.
    pub(crate) fn from_settings(raw: RawForbidden) -> std::result::Result<Forbidden, String> {
        let none = Forbidden::new(Vec::new(), Vec::new(), Vec::new()).expect("no pattern to refuse");
        none.under(raw)
    }

    /// `raw`'s lists over these: each list it gives in place of this one, its `extra_*`
    /// added, each entry once (an agent's over the suite's). An error names the setting,
    /// below the table it is read from.
    pub(crate) fn under(&self, raw: RawForbidden) -> std::result::Result<Forbidden, String> {
        for pattern in &raw.extra_value_patterns {
            Regex::new(pattern).map_err(|e| format!("forbidden.extra_value_patterns: {e}"))?;
        }
        Forbidden::new(
            joined(raw.keys.unwrap_or_else(|| self.keys.clone()), raw.extra_keys),
            joined(raw.blueprint_keys.unwrap_or_else(|| self.blueprint_keys.clone()), raw.extra_blueprint_keys),
            joined(raw.value_patterns.unwrap_or_else(|| self.patterns.clone()), raw.extra_value_patterns),
        )
        .map_err(|e| format!("forbidden.value_patterns: {e}"))
    }

    pub(crate) fn new(
        keys: Vec<String>,
        blueprint_keys: Vec<String>,
        patterns: Vec<String>,
    ) -> std::result::Result<Forbidden, regex::Error> {
        // Each pattern compiles alone first, so one cannot close another's group
        // inside the alternation; inline flags such as `(?i)` stay scoped to their group.
        let each = patterns.iter().map(|p| Regex::new(p)).collect::<std::result::Result<Vec<_>, _>>()?;
        let any = match patterns.is_empty() {
            true => None,
            false => Some(Regex::new(&patterns.iter().map(|p| format!("(?:{p})")).collect::<Vec<_>>().join("|"))?),
        };
        let written = written_keys(&keys);
        Ok(Forbidden { keys, blueprint_keys, patterns, any, each, written })
    }

    /// The forbidden keys as written keys in any case, for texts that may hold them
    /// (template slot values): see [`written_keys`].
    pub(crate) fn written_keys(&self) -> Option<&Regex> {
        self.written.as_ref()
    }

    /// The first configured pattern that matches `text`, if any.
    pub(crate) fn matching_pattern(&self, text: &str) -> Option<&str> {
        if !self.any.as_ref().is_some_and(|any| any.is_match(text)) {
            return None;
        }
        self.each.iter().position(|re| re.is_match(text)).map(|i| self.patterns[i].as_str())
    }

    /// Case-insensitive: `PreviewScreens` is the same render-only snapshot.
    pub(crate) fn is_forbidden_key(&self, key: &str) -> bool {
        self.keys.iter().any(|k| k.eq_ignore_ascii_case(key))
    }
}

/// `list` with each item of `extra` it lacks.
fn joined(mut list: Vec<String>, extra: Vec<String>) -> Vec<String> {
    for item in extra {
        if !list.contains(&item) {
            list.push(item);
        }
    }
    list
}

/// The forbidden keys as written keys in any case: JSON's (`"posterUrl" :`), single
/// quoted (`'posterUrl':`, JavaScript and Python), and bare where only a key stands:
/// a YAML block key starting its line (`posterUrl: x`, `- posterUrl: x`) or a key of
/// a flow mapping or object literal (`{posterUrl: x`, `, posterUrl:`). A word before a
/// colon in prose ("the verdict: yes") is no key.
fn written_keys(keys: &[String]) -> Option<Regex> {
    if keys.is_empty() {
        return None;
    }
    let k = keys.iter().map(|k| regex::escape(k)).collect::<Vec<_>>().join("|");
    let quoted = format!(r#""(?:{k})"\s*:|'(?:{k})'\s*:"#);
    let block = format!(r"(?m:^[ \t]*(?:-[ \t]+)?(?:{k})[ \t]*:(?:[ \t]|$))");
    let flow = format!(r"[{{,][ \t\r\n]*(?:{k})[ \t]*:");
    Regex::new(&format!("(?i){quoted}|{block}|{flow}")).ok()
}
