//! Stage `routes`: unique screen ids, a valid first screen, a
//! canonical action on every screen, no `navigate`/`to` aliases, known edge targets, a
//! completing action somewhere, and every screen reachable from the first.
//!
//! An action is any object with a string `kind` and an array `edges`, wherever it sits
//! in a screen; edges (`nextScreenId`) are the only links between screens.

use super::text::{objects, shown};
use super::{Ctx, Failures, ROUTES};
use serde_json::{Map, Value};
use std::collections::{HashMap, HashSet, VecDeque};

const TERMINAL: [&str; 2] = ["complete", "purchase"];

fn is_action(map: &Map<String, Value>) -> bool {
    map.get("kind").is_some_and(Value::is_string) && map.get("edges").is_some_and(Value::is_array)
}

pub(crate) fn check(ctx: &Ctx, out: &mut Failures) {
    let screens = ctx.screens();
    if screens.is_empty() {
        return;
    }
    let ids: Vec<&str> = screens.iter().filter_map(|s| s.get("id").and_then(Value::as_str)).collect();
    let known: HashSet<&str> = ids.iter().copied().collect();
    if known.len() != ids.len() {
        out.fail(ROUTES, format!("{}.screens: screen ids must be distinct, found {ids:?}", ctx.path));
    }
    let first = ctx.block.get("firstScreenId").and_then(Value::as_str).filter(|f| known.contains(f));
    if first.is_none() {
        let found = shown(ctx.block.get("firstScreenId"));
        out.fail(ROUTES, format!("{}.firstScreenId: expected one of the screen ids {ids:?}, found {found}", ctx.path));
    }
    // Owned ids: the walk's paths borrow shorter than the answer.
    let mut graph: HashMap<String, Vec<String>> = HashMap::new();
    for (i, screen) in screens.iter().enumerate() {
        let at = ctx.screen_path(i);
        let from = screen.get("id").and_then(Value::as_str);
        let mut has_action = false;
        objects(screen, &at, &mut |action, trail| {
            if !is_action(action) {
                return;
            }
            has_action = true;
            if action.contains_key("navigate") {
                out.fail(ROUTES, format!("{}.navigate: not a canonical action field; use edges", trail.render()));
            }
            for (j, edge) in action["edges"].as_array().into_iter().flatten().enumerate() {
                let edge_at = format!("{}.edges[{j}]", trail.render());
                if edge.get("to").is_some() {
                    out.fail(ROUTES, format!("{edge_at}.to: not a canonical edge field; use nextScreenId"));
                }
                match edge.get("nextScreenId").and_then(Value::as_str) {
                    // A good edge joins the graph only from a screen with a string id.
                    Some(next) if known.contains(next) => {
                        if let Some(from) = from {
                            graph.entry(from.to_owned()).or_default().push(next.to_owned())
                        }
                    }
                    _ => {
                        let found = shown(edge.get("nextScreenId"));
                        out.fail(ROUTES, format!("{edge_at}.nextScreenId: {found} is not a screen of this block"));
                    }
                }
            }
        });
        if !has_action {
            out.fail(ROUTES, format!("{at}: screen {i} has no canonical action (kind + edges)"));
        }
    }
    let mut terminal = false;
    objects(ctx.block_value, ctx.path, &mut |action, _| {
        terminal |= is_action(action) && action["kind"].as_str().is_some_and(|k| TERMINAL.contains(&k));
    });
    if !terminal {
        out.fail(ROUTES, format!("{}: no action of kind \"complete\" or \"purchase\"; the block never ends", ctx.path));
    }
    if let Some(first) = first {
        let reached = reach(first, &graph);
        for id in ids.iter().filter(|id| !reached.contains(*id)) {
            out.fail(
                ROUTES,
                format!("{}.screens: screen {id:?} is unreachable from firstScreenId {first:?}", ctx.path),
            );
        }
    }
}

fn reach<'a>(first: &'a str, graph: &'a HashMap<String, Vec<String>>) -> HashSet<&'a str> {
    let mut reached = HashSet::from([first]);
    let mut queue = VecDeque::from([first]);
    while let Some(id) = queue.pop_front() {
        for next in graph.get(id).into_iter().flatten() {
            if reached.insert(next.as_str()) {
                queue.push_back(next.as_str());
            }
        }
    }
    reached
}

#[cfg(test)]
mod tests {
    use super::super::testkit::{judge_stages, packet, valid_output};
    use serde_json::json;

    fn screens(out: &mut serde_json::Value) -> &mut serde_json::Value {
        &mut out["result"]["onboardingStrategySequence"][0]["screens"]
    }

    #[test]
    fn route_problems_each_fail() {
        for edit in [
            |o: &mut serde_json::Value| screens(o)[1]["id"] = json!("s1"),
            |o: &mut serde_json::Value| o["result"]["onboardingStrategySequence"][0]["firstScreenId"] = json!("x"),
            |o: &mut serde_json::Value| {
                screens(o)[0]["content"]["actionBar"]["primary"]["action"]["navigate"] = json!(null)
            },
            |o: &mut serde_json::Value| {
                screens(o)[0]["content"]["actionBar"]["primary"]["action"]["edges"][0]["to"] = json!("s2")
            },
            |o: &mut serde_json::Value| {
                screens(o)[0]["content"]["actionBar"]["primary"]["action"]["edges"][0]["nextScreenId"] =
                    json!("nowhere")
            },
            |o: &mut serde_json::Value| {
                screens(o)[1]["content"]["actionBar"]["primary"]["action"]["kind"] = json!("noop")
            },
            |o: &mut serde_json::Value| {
                screens(o)[0]["content"]["actionBar"]["primary"]["action"]["edges"] = json!([]);
            },
            |o: &mut serde_json::Value| screens(o)[1]["content"].as_object_mut().unwrap().clear(),
        ] {
            let mut out = valid_output();
            edit(&mut out);
            let stages = judge_stages(&out, &packet());
            assert!(stages.contains(&"routes"), "{out}\n{stages:?}");
        }
    }

    #[test]
    fn purchase_ends_a_block_and_terminal_actions_may_sit_anywhere() {
        let mut out = valid_output();
        screens(&mut out)[1]["content"]["actionBar"]["primary"]["action"]["kind"] = json!("purchase");
        assert_eq!(judge_stages(&out, &packet()), Vec::<&str>::new());
    }
}
