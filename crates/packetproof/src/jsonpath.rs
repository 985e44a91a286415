//! JSON paths for findings: `$.a.b[0]`, built while walking a value and rendered
//! only when something is found.

/// JSONPath text of a child member, quoting keys that are not plain identifiers.
pub fn child(path: &str, key: &str) -> String {
    if !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        format!("{path}.{key}")
    } else {
        format!("{path}[{}]", serde_json::Value::from(key))
    }
}

pub fn index(path: &str, i: usize) -> String {
    format!("{path}[{i}]")
}

/// A JSON path built while walking a value, rendered only when something is found
/// (walks of large packets then allocate nothing on the happy path).
#[derive(Debug, Clone)]
pub struct Trail<'a> {
    root: &'a str,
    steps: Vec<Step<'a>>,
}

#[derive(Debug, Clone, Copy)]
enum Step<'a> {
    Key(&'a str),
    Index(usize),
}

impl<'a> Trail<'a> {
    pub fn new(root: &'a str) -> Self {
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
    pub(crate) fn render(&self) -> String {
        self.steps.iter().fold(self.root.to_owned(), |path, step| match step {
            Step::Key(key) => child(&path, key),
            Step::Index(i) => index(&path, *i),
        })
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
