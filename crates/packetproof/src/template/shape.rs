//! What a slot's value may be: its contract. An agent declares it (`[agents.NAME.slots]`
//! or `[contract.slots]`), or it is taken from the values the agent's vouched packets
//! fill the slot with: one value everywhere is literal text, integers only an integer,
//! `true`/`false` only a boolean; anything else is any text.

use serde::Deserialize;

/// The shape of a slot's value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shape {
    /// Any text: the slot is variable.
    Text,
    /// Exactly this text: every vouched packet fills the slot with it.
    Literal(String),
    /// An integer in decimal (`-?[0-9]+`).
    Integer,
    /// `true` or `false` (as JavaScript and jinja write them, or `True`/`False` as Python does).
    Boolean,
    /// Any text without a line terminator (none of Unicode's: `\n`, `\r`, VT, FF,
    /// NEL, LINE SEPARATOR, PARAGRAPH SEPARATOR).
    SingleLine,
    /// One of these values.
    Enum(Vec<String>),
    /// Text the regular expression matches whole.
    Pattern(String),
    /// Strict JSON (held to the contract's schema, when it names one).
    Json,
}

/// A slot's contract: its shape, and what is checked of a value once it is taken out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlotContract {
    pub shape: Shape,
    /// At most this many characters.
    pub max_length: Option<usize>,
    /// A JSON Schema file (relative to the suite) the value, parsed as JSON, must follow.
    pub schema: Option<String>,
}

impl SlotContract {
    pub fn of(shape: Shape) -> SlotContract {
        SlotContract { shape, max_length: None, schema: None }
    }
}

impl Shape {
    /// The regular expression of a whole value of this shape (`None`: any text).
    pub fn pattern(&self) -> Option<String> {
        match self {
            Shape::Text | Shape::Json => None,
            Shape::Literal(text) => Some(regex::escape(text)),
            Shape::Integer => Some("-?[0-9]+".into()),
            Shape::Boolean => Some("true|false|True|False".into()),
            Shape::SingleLine => Some(r"[^\n\r\x0B\x0C\x{85}\x{2028}\x{2029}]*".into()),
            Shape::Enum(values) => Some(values.iter().map(|v| regex::escape(v)).collect::<Vec<_>>().join("|")),
            Shape::Pattern(pattern) => Some(pattern.clone()),
        }
    }

    /// The shape as messages name it.
    pub fn describe(&self) -> String {
        match self {
            Shape::Text => "any text".into(),
            Shape::Literal(text) => {
                format!("the one value every vouched packet holds ({} chars)", text.chars().count())
            }
            Shape::Integer => "an integer".into(),
            Shape::Boolean => "a boolean".into(),
            Shape::SingleLine => "a single line".into(),
            Shape::Enum(values) => format!("one of {values:?}"),
            Shape::Pattern(pattern) => format!("text matching /{pattern}/"),
            Shape::Json => "JSON".into(),
        }
    }

    /// The shape taken from the values vouched packets fill a slot with (`None`: no
    /// vouched packet fills it, so nothing is known of it).
    pub fn of_values<'a>(values: impl IntoIterator<Item = &'a str>) -> Option<Shape> {
        let mut distinct: Vec<&str> = values.into_iter().collect();
        distinct.sort_unstable();
        distinct.dedup();
        let all = |test: fn(&str) -> bool| distinct.iter().all(|v| test(v));
        match distinct.as_slice() {
            [] => None,
            [one] => Some(Shape::Literal((*one).to_owned())),
            _ if all(is_integer) => Some(Shape::Integer),
            _ if all(|v| matches!(v, "true" | "false" | "True" | "False")) => Some(Shape::Boolean),
            _ => Some(Shape::Text),
        }
    }
}

fn is_integer(text: &str) -> bool {
    let digits = text.strip_prefix('-').unwrap_or(text);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

/// One `slots` entry as written: a word (`"text"`, `"variable"`, `"integer"`,
/// `"boolean"`, `"single-line"`, `"json"`), a list of values, or a table.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum RawSlot {
    Word(String),
    Values(Vec<String>),
    Table(RawSlotTable),
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSlotTable {
    shape: Option<String>,
    values: Option<Vec<String>>,
    pattern: Option<String>,
    max_length: Option<usize>,
    schema: Option<String>,
}

const WORDS: &str = "\"text\" (or \"variable\"), \"integer\", \"boolean\", \"single-line\", \"json\"";

impl RawSlot {
    /// The contract declared for the slot `name`; errors are settings messages.
    pub fn resolve(self, name: &str) -> Result<SlotContract, String> {
        let table = match self {
            RawSlot::Word(word) => RawSlotTable { shape: Some(word), ..RawSlotTable::empty() },
            RawSlot::Values(values) => RawSlotTable { values: Some(values), ..RawSlotTable::empty() },
            RawSlot::Table(table) => table,
        };
        table.resolve(name)
    }
}

impl RawSlotTable {
    fn empty() -> RawSlotTable {
        RawSlotTable { shape: None, values: None, pattern: None, max_length: None, schema: None }
    }

    fn resolve(self, name: &str) -> Result<SlotContract, String> {
        let at = format!("slots.{name:?}");
        let given = [self.shape.is_some(), self.values.is_some(), self.pattern.is_some()];
        if given.iter().filter(|g| **g).count() > 1 {
            return Err(format!("{at}: give one of shape, values and pattern"));
        }
        let shape = match (self.shape.as_deref(), self.values, self.pattern) {
            (Some("text" | "variable"), ..) => Shape::Text,
            (Some("integer"), ..) => Shape::Integer,
            (Some("boolean"), ..) => Shape::Boolean,
            (Some("single-line"), ..) => Shape::SingleLine,
            (Some("json"), ..) => Shape::Json,
            (Some(other), ..) => {
                return Err(format!("{at}: expected a shape ({WORDS}) or a list of values, found {other:?}"))
            }
            (None, Some(values), _) if values.is_empty() => return Err(format!("{at}: expected at least one value")),
            (None, Some(values), _) => Shape::Enum(values),
            (None, None, Some(pattern)) => Shape::Pattern(whole_value(&at, &pattern)?),
            (None, None, None) if self.schema.is_some() => Shape::Json,
            (None, None, None) => Shape::Text,
        };
        if self.schema.is_some() && shape != Shape::Json {
            return Err(format!("{at}: a schema holds JSON values (shape = \"json\")"));
        }
        Ok(SlotContract { shape, max_length: self.max_length, schema: self.schema })
    }
}

/// A pattern of the whole value: `^` and `$` around it are implied (and taken off
/// when written); it must compile, with no other anchor or word boundary in it (a
/// slot's value is matched in the middle of a text, where those cannot be decided).
fn whole_value(at: &str, pattern: &str) -> Result<String, String> {
    let inner = pattern.strip_prefix('^').unwrap_or(pattern);
    let inner = inner.strip_suffix('$').filter(|p| !p.ends_with('\\')).unwrap_or(inner);
    let hir =
        regex_automata::util::syntax::parse(inner).map_err(|e| format!("{at}: the pattern does not compile: {e}"))?;
    if !hir.properties().look_set().is_empty() {
        return Err(format!(
            "{at}: the pattern holds an anchor or a word boundary; it is matched against the whole value already"
        ));
    }
    Ok(inner.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_taken_from_vouched_values() {
        assert_eq!(Shape::of_values([]), None);
        assert_eq!(Shape::of_values(["x", "x"]), Some(Shape::Literal("x".into())));
        assert_eq!(Shape::of_values(["3", "-12", "0"]), Some(Shape::Integer));
        assert_eq!(Shape::of_values(["true", "False"]), Some(Shape::Boolean));
        assert_eq!(Shape::of_values(["3", "three"]), Some(Shape::Text));
        assert_eq!(Shape::of_values(["-", "1"]), Some(Shape::Text));
    }

    #[test]
    fn declared_slots_resolve_or_say_what_was_expected() {
        let resolve = |toml_value: &str| {
            let raw: RawSlot =
                toml::from_str::<toml::Table>(&format!("v = {toml_value}")).unwrap()["v"].clone().try_into().unwrap();
            raw.resolve("x")
        };
        assert_eq!(resolve("\"variable\"").unwrap().shape, Shape::Text);
        assert_eq!(resolve("[\"a\", \"b\"]").unwrap().shape, Shape::Enum(vec!["a".into(), "b".into()]));
        let table = resolve("{ pattern = \"^[A-Z]+-[0-9]+$\", max_length = 12 }").unwrap();
        assert_eq!((table.shape, table.max_length), (Shape::Pattern("[A-Z]+-[0-9]+".into()), Some(12)));
        assert_eq!(resolve("{ schema = \"s.json\" }").unwrap().shape, Shape::Json);
        assert!(resolve("\"number\"").unwrap_err().contains("expected a shape"));
        assert!(resolve("[]").unwrap_err().contains("at least one value"));
        assert!(resolve("{ pattern = \"(\" }").unwrap_err().contains("does not compile"));
        assert!(resolve("{ shape = \"integer\", schema = \"s.json\" }").unwrap_err().contains("holds JSON"));
        assert!(resolve("{ values = [\"a\"], pattern = \"a\" }").unwrap_err().contains("one of"));
        assert!(resolve("{ pattern = \"a\\\\b\" }").unwrap_err().contains("word boundary"));
    }

    #[test]
    fn a_single_line_holds_no_line_terminator_of_any_kind() {
        let whole = regex::Regex::new(&format!(r"\A(?:{})\z", Shape::SingleLine.pattern().unwrap())).unwrap();
        assert!(whole.is_match("one line, with tabs\tand ünïcödé"));
        for terminator in ["\n", "\r", "\u{B}", "\u{C}", "\u{85}", "\u{2028}", "\u{2029}"] {
            assert!(!whole.is_match(&format!("a{terminator}b")), "{terminator:?}");
        }
    }
}
