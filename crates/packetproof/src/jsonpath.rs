//! JSON paths and the locations of findings: `$.a.b[0]`, `<file> $.a`, built while
//! walking a value and rendered only when something is found.

use std::fmt;

/// JSONPath text of a child member, quoting keys that are not plain identifiers.
pub fn child(path: &str, key: &str) -> String {
    format!("{path}{}", Segment::Key(key.to_owned()))
}

pub(crate) fn index(path: &str, i: usize) -> String {
    format!("{path}[{i}]")
}

/// One step down a JSON value: an object member or an array item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Segment {
    Key(String),
    Index(usize),
}

impl fmt::Display for Segment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Segment::Key(key) => write_key(f, key),
            Segment::Index(i) => write!(f, "[{i}]"),
        }
    }
}

fn write_key(f: &mut fmt::Formatter<'_>, key: &str) -> fmt::Result {
    if !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        write!(f, ".{key}")
    } else {
        write!(f, "[{}]", serde_json::Value::from(key))
    }
}

/// A path from the root of a JSON value (`$`), shown as `$.a.b[0]["odd key"]`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JsonPath(Vec<Segment>);

impl JsonPath {
    /// `$`: the value itself.
    pub fn root() -> JsonPath {
        JsonPath(Vec::new())
    }

    /// `$.key`: a member of the value itself.
    pub fn field(key: &str) -> JsonPath {
        JsonPath::root().key(key)
    }

    /// The member `key` of the value at this path.
    pub fn key(mut self, key: &str) -> JsonPath {
        self.0.push(Segment::Key(key.to_owned()));
        self
    }

    /// The item `i` of the array at this path.
    pub fn index(mut self, i: usize) -> JsonPath {
        self.0.push(Segment::Index(i));
        self
    }

    pub(crate) fn segments(&self) -> &[Segment] {
        &self.0
    }
}

impl fmt::Display for JsonPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("$")?;
        self.0.iter().try_for_each(|segment| segment.fmt(f))
    }
}

/// Where a finding is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// A value of the JSON the report is about: `$.a[0]`.
    Value(JsonPath),
    /// A value in a file named relative to the report's target (a run directory's
    /// file, a capture): `<file> $.a[0]`.
    InFile { file: String, path: JsonPath },
    /// A value of the packet rebuilt from a run's files, which no file holds as such:
    /// `packet $.a[0]`.
    RebuiltPacket(JsonPath),
    /// A value of JSON carried encoded in a string of a file (a HAR entry's request
    /// body, an attestation's base64 payload): `<file> <field> $.a`. No file holds
    /// it as written, so its numbers are never looked up.
    Encoded { file: String, field: String, path: JsonPath },
    /// A place shown as given, never looked into: a file or directory, a lifecycle
    /// step, or a path kept in the reference tools' own text.
    Named(String),
}

impl Location {
    /// `$`: the whole value.
    pub(crate) fn root() -> Location {
        Location::Value(JsonPath::root())
    }

    /// A file, directory or step, shown as given.
    pub(crate) fn named(place: impl Into<String>) -> Location {
        Location::Named(place.into())
    }

    /// The value at `path` in `file`.
    pub fn in_file(file: impl Into<String>, path: JsonPath) -> Location {
        Location::InFile { file: file.into(), path }
    }

    /// The value at `path` of the JSON encoded in `field` of `file`.
    pub(crate) fn encoded(file: impl Into<String>, field: impl fmt::Display, path: JsonPath) -> Location {
        Location::Encoded { file: file.into(), field: field.to_string(), path }
    }

    /// This location in the packet rebuilt from a run (a place that is not a path in
    /// the packet is named after the word "packet").
    pub(crate) fn in_rebuilt_packet(self) -> Location {
        match self {
            Location::Value(path) => Location::RebuiltPacket(path),
            other => Location::Named(format!("packet {other}")),
        }
    }
}

impl From<JsonPath> for Location {
    fn from(path: JsonPath) -> Location {
        Location::Value(path)
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Value(path) => path.fmt(f),
            Location::InFile { file, path } => write!(f, "{file} {path}"),
            Location::RebuiltPacket(path) => write!(f, "packet {path}"),
            Location::Encoded { file, field, path } => write!(f, "{file} {field} {path}"),
            Location::Named(place) => f.write_str(place),
        }
    }
}

impl serde::Serialize for Location {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// A JSON path built while walking a value, made into a [`JsonPath`] only when
/// something is found (walks of large packets then allocate nothing on the happy path).
#[derive(Debug, Clone)]
pub struct Trail<'a> {
    root: JsonPath,
    steps: Vec<Step<'a>>,
}

#[derive(Debug, Clone, Copy)]
enum Step<'a> {
    Key(&'a str),
    Index(usize),
}

impl<'a> Trail<'a> {
    pub fn new(root: JsonPath) -> Self {
        Trail { root, steps: Vec::new() }
    }
    pub(crate) fn push_key(&mut self, key: &'a str) {
        self.steps.push(Step::Key(key));
    }
    pub(crate) fn push_index(&mut self, i: usize) {
        self.steps.push(Step::Index(i));
    }
    pub(crate) fn pop(&mut self) {
        self.steps.pop();
    }

    /// The path walked so far.
    pub(crate) fn path(&self) -> JsonPath {
        self.steps.iter().fold(self.root.clone(), |path, step| match step {
            Step::Key(key) => path.key(key),
            Step::Index(i) => path.index(*i),
        })
    }

    pub(crate) fn render(&self) -> String {
        self.path().to_string()
    }

    /// The steps walked so far, as text after `root` (a path the caller holds as text).
    pub(crate) fn render_under(&self, root: &str) -> String {
        let mut path = root.to_owned();
        for step in &self.steps {
            match step {
                Step::Key(key) => path = child(&path, key),
                Step::Index(i) => path = index(&path, *i),
            }
        }
        path
    }
}
/// Visit every value under an object's members with its trail, depth first.
pub fn walk_map<'a>(
    map: &'a serde_json::Map<String, serde_json::Value>,
    trail: &mut Trail<'a>,
    visit: &mut impl FnMut(&'a serde_json::Value, Option<&'a str>, &Trail<'a>),
) {
    for (key, item) in map {
        trail.push_key(key);
        visit(item, Some(key), trail);
        walk(item, trail, visit);
        trail.pop();
    }
}

/// Visit every value under `value` with its trail, depth first.
pub fn walk<'a>(
    value: &'a serde_json::Value,
    trail: &mut Trail<'a>,
    visit: &mut impl FnMut(&'a serde_json::Value, Option<&'a str>, &Trail<'a>),
) {
    match value {
        serde_json::Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                trail.push_index(i);
                visit(item, None, trail);
                walk(item, trail, visit);
                trail.pop();
            }
        }
        serde_json::Value::Object(map) => walk_map(map, trail, visit),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_render_as_jsonpath_text() {
        let path = JsonPath::root().key("a").key("odd key").index(0).key("").key("b_1");
        assert_eq!(path.to_string(), r#"$.a["odd key"][0][""].b_1"#);
        assert_eq!(Location::in_file("run file.json", path.clone()).to_string(), format!("run file.json {path}"));
        assert_eq!(Location::from(path.clone()).in_rebuilt_packet().to_string(), format!("packet {path}"));
        assert_eq!(Location::named("lifecycle").in_rebuilt_packet().to_string(), "packet lifecycle");
        assert_eq!(child("$.x", "a\"]"), r#"$.x["a\"]"]"#);
    }
}
