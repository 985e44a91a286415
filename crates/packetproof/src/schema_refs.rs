//! Checks a validation schema's references before `jsonschema` compiles it. The
//! compiler follows `$ref` eagerly: a schema that reaches itself without first
//! stepping into the instance (`{"allOf": [{"$ref": "#"}]}`, or `a → b → a`
//! through `$defs`) recurses until the stack overflows or memory runs out, which
//! aborts the whole process. Such a schema could never be evaluated anyway: it
//! would apply itself to the same value forever. So it is refused here, with the
//! cycle named, and evaluation records a finding instead of crashing.
//!
//! Recursion through an applicator that steps into the instance (`properties`,
//! `items`, …) is legitimate (a tree schema) and allowed. Only local references
//! are supported (`#`, `#/pointer`, `#anchor`): nothing is ever fetched, and an
//! embedded resource (`$id` below the root) would change what `#` means.

use serde_json::Value;
use std::collections::HashMap;

/// Keywords whose subschemas apply to the *same* instance (no step into it).
const IN_PLACE_LISTS: [&str; 3] = ["allOf", "anyOf", "oneOf"];
const IN_PLACE_ONE: [&str; 4] = ["not", "if", "then", "else"];
const IN_PLACE_MAPS: [&str; 2] = ["dependentSchemas", "dependencies"];
const REFS: [&str; 3] = ["$ref", "$dynamicRef", "$recursiveRef"];

/// `Err` says why the schema cannot be evaluated safely, naming the JSON pointer.
pub(crate) fn check(schema: &Value) -> Result<(), String> {
    let nodes = collect(schema)?;
    let index: HashMap<&str, usize> = nodes.iter().enumerate().map(|(i, (p, _))| (p.as_str(), i)).collect();
    let anchors = anchors(&nodes);
    let mut edges: Vec<Vec<usize>> = vec![Vec::new(); nodes.len()];
    for (i, (pointer, value)) in nodes.iter().enumerate() {
        let Value::Object(map) = value else { continue };
        for key in REFS {
            let Some(reference) = map.get(key) else { continue };
            let target = resolve(reference, &index, &anchors).map_err(|why| format!("{pointer}/{key}: {why}"))?;
            edges[i].extend(target);
        }
        for key in IN_PLACE_LISTS {
            if let Some(Value::Array(items)) = map.get(key) {
                edges[i].extend((0..items.len()).filter_map(|n| index.get(format!("{pointer}/{key}/{n}").as_str())));
            }
        }
        for key in IN_PLACE_ONE {
            edges[i].extend(index.get(format!("{pointer}/{key}").as_str()));
        }
        for key in IN_PLACE_MAPS {
            if let Some(Value::Object(entries)) = map.get(key) {
                let child = |name: &String| index.get(format!("{pointer}/{key}/{}", escape(name)).as_str()).copied();
                edges[i].extend(entries.keys().filter_map(child));
            }
        }
    }
    match find_cycle(&edges) {
        None => Ok(()),
        Some(cycle) => {
            let path: Vec<&str> = cycle.iter().map(|&i| display(&nodes[i].0)).collect();
            Err(format!(
                "the schema refers to itself without stepping into the value ({}); it cannot be evaluated",
                path.join(" → ")
            ))
        }
    }
}

fn display(pointer: &str) -> &str {
    if pointer.is_empty() {
        "#"
    } else {
        pointer
    }
}

/// Every object or array in the schema, by JSON pointer (iteratively: no recursion
/// on input). Refuses embedded resources (`$id` below the root, other than an anchor).
fn collect(schema: &Value) -> Result<Vec<(String, &Value)>, String> {
    let mut nodes = Vec::new();
    let mut stack = vec![(String::new(), schema)];
    while let Some((pointer, value)) = stack.pop() {
        match value {
            Value::Object(map) => {
                if let Some(Value::String(id)) = map.get("$id") {
                    if !pointer.is_empty() && !id.starts_with('#') {
                        return Err(format!(
                            "{pointer}/$id: an embedded schema resource ({id:?}) is not supported; keep one resource"
                        ));
                    }
                }
                for (key, child) in map.iter().rev() {
                    stack.push((format!("{pointer}/{}", escape(key)), child));
                }
            }
            Value::Array(items) => {
                for (n, child) in items.iter().enumerate().rev() {
                    stack.push((format!("{pointer}/{n}"), child));
                }
            }
            _ => continue,
        }
        nodes.push((pointer, value));
    }
    Ok(nodes)
}

fn anchors<'a>(nodes: &'a [(String, &'a Value)]) -> HashMap<&'a str, usize> {
    let mut out = HashMap::new();
    for (i, (_, value)) in nodes.iter().enumerate() {
        for key in ["$anchor", "$dynamicAnchor"] {
            if let Some(name) = value.get(key).and_then(Value::as_str) {
                out.insert(name, i);
            }
        }
        if let Some(name) = value.get("$id").and_then(Value::as_str).and_then(|id| id.strip_prefix('#')) {
            out.insert(name, i);
        }
    }
    out
}

/// The node a local reference leads to (`None`: it leads nowhere, and the
/// compiler will say so).
fn resolve(
    reference: &Value,
    index: &HashMap<&str, usize>,
    anchors: &HashMap<&str, usize>,
) -> Result<Option<usize>, String> {
    let Some(text) = reference.as_str() else { return Ok(None) };
    if text == "#" || text.is_empty() {
        return Ok(index.get("").copied());
    }
    let Some(fragment) = text.strip_prefix('#') else {
        return Err(format!("{text:?}: only local references (#, #/pointer, #anchor) are supported"));
    };
    let fragment = percent_decode(fragment);
    if fragment.starts_with('/') {
        Ok(index.get(fragment.as_str()).copied())
    } else {
        Ok(anchors.get(fragment.as_str()).copied())
    }
}

fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// `%XX` escapes of a URI fragment (a malformed escape is kept as written).
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (bytes[i], bytes.get(i + 1).copied().and_then(hex), bytes.get(i + 2).copied().and_then(hex)) {
            (b'%', Some(hi), Some(lo)) => {
                out.push((hi * 16 + lo) as u8);
                i += 3;
            }
            (byte, ..) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A cycle in the graph, as the list of nodes on it (iterative depth-first search).
fn find_cycle(edges: &[Vec<usize>]) -> Option<Vec<usize>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        OnPath,
        Done,
    }
    let mut mark = vec![Mark::New; edges.len()];
    for start in 0..edges.len() {
        if mark[start] != Mark::New {
            continue;
        }
        // (node, index of the next edge to follow)
        let mut path: Vec<(usize, usize)> = vec![(start, 0)];
        mark[start] = Mark::OnPath;
        while let Some(&mut (node, ref mut next)) = path.last_mut() {
            if let Some(&to) = edges[node].get(*next) {
                *next += 1;
                match mark[to] {
                    Mark::OnPath => {
                        let from = path.iter().position(|(n, _)| *n == to).expect("on the path");
                        let mut cycle: Vec<usize> = path[from..].iter().map(|(n, _)| *n).collect();
                        cycle.push(to);
                        return Some(cycle);
                    }
                    Mark::New => {
                        mark[to] = Mark::OnPath;
                        path.push((to, 0));
                    }
                    Mark::Done => {}
                }
            } else {
                mark[node] = Mark::Done;
                path.pop();
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn self_reference_in_place_is_refused() {
        let err = check(&json!({"allOf": [{"$ref": "#"}]})).unwrap_err();
        assert!(err.contains("refers to itself") && err.contains("# → /allOf/0 → #"), "{err}");
        let err = check(&json!({"$ref": "#"})).unwrap_err();
        assert!(err.contains("# → #"), "{err}");
    }

    #[test]
    fn a_reference_loop_through_defs_is_refused() {
        let schema = json!({
            "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"anyOf": [{"$ref": "#/$defs/a"}]}},
            "properties": {"x": {"$ref": "#/$defs/a"}}
        });
        let err = check(&schema).unwrap_err();
        assert!(err.contains("/$defs/a → /$defs/b → /$defs/b/anyOf/0 → /$defs/a"), "{err}");
        let anchored = json!({"$defs": {"a": {"$anchor": "x", "not": {"$ref": "#x"}}}});
        assert!(check(&anchored).is_err());
        let escaped = json!({"$defs": {"a/b": {"$ref": "#/$defs/a~1b"}}});
        assert!(check(&escaped).is_err());
        let percent = json!({"$defs": {"a b": {"$ref": "#/$defs/a%20b"}}});
        assert!(check(&percent).is_err());
    }

    #[test]
    fn recursion_that_steps_into_the_value_is_allowed() {
        let tree = json!({"type": "object", "properties": {"children": {"type": "array", "items": {"$ref": "#"}}}});
        check(&tree).unwrap();
        let validator = jsonschema::validator_for(&tree).unwrap();
        assert!(validator.is_valid(&json!({"children": [{"children": []}]})));
        check(&json!({"$defs": {"a": {"type": "string"}}, "allOf": [{"$ref": "#/$defs/a"}, {"$ref": "#/$defs/a"}]}))
            .unwrap();
        check(&json!({"type": "object"})).unwrap();
    }

    #[test]
    fn only_local_references_in_one_resource() {
        let err = check(&json!({"$ref": "https://example.invalid/s.json"})).unwrap_err();
        assert!(err.contains("/$ref: \"https://example.invalid/s.json\": only local references"), "{err}");
        let err = check(&json!({"$defs": {"a": {"$id": "other.json"}}})).unwrap_err();
        assert!(err.contains("/$defs/a/$id: an embedded schema resource"), "{err}");
        check(&json!({"$id": "https://example.invalid/root.json", "type": "object"})).unwrap();
    }
}
