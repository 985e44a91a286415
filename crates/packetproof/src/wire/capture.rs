//! What was captured of a provider request: a bare JSON body (as a proxy or SDK log
//! records it), or a HAR file (HTTP Archive 1.2: `log.entries[].request` with
//! `method`, `url` and `postData.text`), from which the one POST to the API's
//! endpoint is picked. Every other POST to a generation endpoint of any vendor in the
//! file (Chat beside Responses, an Anthropic batch, …) is kept by its URL: it is not the
//! reviewed call, and the check fails naming it.

use super::Api;
use crate::{canonical, Error, JsonPath, Location, Result};
use serde_json::Value;

/// A captured request body and where it came from.
#[derive(Debug, Clone)]
pub struct Captured {
    pub(crate) body: Value,
    /// The captured file, for reports.
    pub(crate) origin: String,
    /// Where the body sits in a HAR file (its entry's `postData.text`); `None`: the
    /// file is the body.
    har_body: Option<JsonPath>,
    /// The request URL and where it is, when the capture records one.
    pub(crate) url: Option<(String, Location)>,
    /// What stands in place of the API's origin in the URL (`--base-url`: a proxy or
    /// a local capture server); `None`: the API's own host.
    pub(crate) base_url: Option<String>,
    /// The other POSTs to generation endpoints in a HAR file: each URL and where it is.
    pub(crate) others: Vec<(String, Location)>,
}

impl Captured {
    /// A finding path: the file (and HAR entry) and the JSON path inside the body.
    pub(crate) fn at(&self, path: JsonPath) -> Location {
        match &self.har_body {
            None => Location::in_file(&self.origin, path),
            Some(body) => Location::encoded(&self.origin, body, path),
        }
    }

    /// A bare body.
    pub fn body(body: Value, origin: &str) -> Captured {
        Captured { body, origin: origin.to_owned(), har_body: None, url: None, base_url: None, others: Vec::new() }
    }

    /// The capture was made through `base_url` instead of the API's origin.
    pub fn through(mut self, base_url: Option<&str>) -> Captured {
        self.base_url = base_url.map(str::to_owned);
        self
    }
}

/// Parse captured bytes: a HAR file when the top level has `log.entries`, else a body.
pub fn parse(bytes: &[u8], file: &str, api: Api) -> Result<Captured> {
    let value = canonical::parse(bytes).map_err(|e| e.in_file(file))?;
    match value.get("log").and_then(|log| log.get("entries")) {
        Some(entries) => from_har(entries, file, api),
        None if value.is_object() => Ok(Captured::body(value, file)),
        None => Err(Error::shape(file, JsonPath::root(), "a JSON request body (an object) or a HAR file")),
    }
}

fn from_har(entries: &Value, file: &str, api: Api) -> Result<Captured> {
    let entries =
        entries.as_array().ok_or_else(|| Error::shape(file, JsonPath::field("log").key("entries"), "an array"))?;
    let matching: Vec<usize> = (0..entries.len())
        .filter(|&i| {
            let request = &entries[i]["request"];
            request["method"].as_str().is_some_and(|m| m.eq_ignore_ascii_case("POST"))
                && request["url"].as_str().is_some_and(|url| api.is_endpoint(url))
        })
        .collect();
    let i = match matching.as_slice() {
        [i] => *i,
        [] => {
            return Err(Error::shape(
                file,
                JsonPath::field("log").key("entries"),
                format!("one POST to the {} endpoint; found none among {} entries", api.name(), entries.len()),
            ))
        }
        many => {
            return Err(Error::shape(
                file,
                JsonPath::field("log").key("entries"),
                format!(
                    "one POST to the {} endpoint; found {} (entries {many:?}): keep only the one to check",
                    api.name(),
                    many.len()
                ),
            ))
        }
    };
    let at = JsonPath::field("log").key("entries").index(i).key("request");
    let request = &entries[i]["request"];
    let text_at = at.clone().key("postData").key("text");
    let text = request["postData"]["text"]
        .as_str()
        .ok_or_else(|| Error::shape(file, text_at.clone(), "the request body as a string"))?;
    let body = canonical::parse(text.as_bytes()).map_err(|e| e.in_file(format!("{file} {text_at}")))?;
    if !body.is_object() {
        return Err(Error::shape(format!("{file} {at}.postData.text"), JsonPath::root(), "a JSON object"));
    }
    let url = request["url"].as_str().unwrap_or_default().to_owned();
    let others = (0..entries.len())
        .filter(|&j| j != i)
        .filter_map(|j| {
            let request = &entries[j]["request"];
            let post = request["method"].as_str().is_some_and(|m| m.eq_ignore_ascii_case("POST"));
            let url = request["url"].as_str().filter(|url| post && super::endpoint::is_generation(url))?;
            let at = Location::in_file(file, JsonPath::field("log").key("entries").index(j).key("request").key("url"));
            Some((url.to_owned(), at))
        })
        .collect();
    Ok(Captured {
        body,
        origin: file.to_owned(),
        har_body: Some(JsonPath::field("log").key("entries").index(i).key("request").key("postData").key("text")),
        url: Some((
            url,
            Location::in_file(file, JsonPath::field("log").key("entries").index(i).key("request").key("url")),
        )),
        base_url: None,
        others,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn har(entries: Value) -> Vec<u8> {
        json!({"log": {"version": "1.2", "entries": entries}}).to_string().into_bytes()
    }

    fn entry(method: &str, url: &str, body: &str) -> Value {
        json!({"request": {"method": method, "url": url, "postData": {"mimeType": "application/json", "text": body}}})
    }

    #[test]
    fn the_one_post_to_the_endpoint_is_picked() {
        let bytes = har(json!([
            entry("GET", "https://api.anthropic.com/v1/models", "{}"),
            entry("POST", "https://api.anthropic.com/v1/messages/count_tokens", "{\"a\":1}"),
            entry("POST", "https://api.anthropic.com/v1/messages", "{\"model\":\"m\"}"),
        ]));
        let captured = parse(&bytes, "c.har", Api::from_name("anthropic").unwrap()).unwrap();
        assert_eq!(captured.body, json!({"model": "m"}));
        assert_eq!(
            captured.at(JsonPath::field("model")).to_string(),
            "c.har $.log.entries[2].request.postData.text $.model"
        );
        assert_eq!(captured.url.unwrap().1.to_string(), "c.har $.log.entries[2].request.url");
    }

    #[test]
    fn none_or_several_entries_are_refused_by_name() {
        let none = parse(&har(json!([])), "c.har", Api::from_name("gemini").unwrap()).unwrap_err().to_string();
        assert!(none.contains("found none among 0 entries"), "{none}");
        let post = entry("POST", "https://api.openai.com/v1/responses", "{}");
        let many = parse(&har(json!([post.clone(), post])), "c.har", Api::from_name("openai-responses").unwrap())
            .unwrap_err()
            .to_string();
        assert!(many.contains("found 2 (entries [0, 1])"), "{many}");
        let bad = parse(
            &har(json!([entry("POST", "https://x/v1/messages", "{\"a\":1,\"a\":2}")])),
            "c.har",
            Api::from_name("anthropic").unwrap(),
        )
        .unwrap_err()
        .to_string();
        assert!(bad.contains("c.har $.log.entries[0].request.postData.text:1:"), "{bad}");
    }

    #[test]
    fn every_other_post_to_a_generation_endpoint_is_kept_by_its_url() {
        let bytes = har(json!([
            entry("POST", "https://api.openai.com/v1/responses", "{\"model\":\"m\"}"),
            entry("POST", "https://api.openai.com/v1/chat/completions", "{}"),
            entry("POST", "https://api.anthropic.com/v1/messages/batches", "{}"),
            entry("POST", "https://api.anthropic.com/v1/messages/count_tokens", "{}"),
            entry("GET", "https://api.openai.com/v1/chat/completions", ""),
        ]));
        let captured = parse(&bytes, "c.har", Api::from_name("openai-responses").unwrap()).unwrap();
        let others: Vec<String> = captured.others.iter().map(|(url, at)| format!("{url} at {at}")).collect();
        assert_eq!(
            others,
            [
                "https://api.openai.com/v1/chat/completions at c.har $.log.entries[1].request.url",
                "https://api.anthropic.com/v1/messages/batches at c.har $.log.entries[2].request.url"
            ]
        );
    }

    #[test]
    fn a_bare_body_is_itself() {
        let captured = parse(b"{\"model\":\"m\"}", "b.json", Api::from_name("openai-chat").unwrap()).unwrap();
        assert_eq!(captured.at(JsonPath::field("model")), Location::in_file("b.json", JsonPath::field("model")));
        assert!(captured.url.is_none());
        assert!(parse(b"[1]", "b.json", Api::from_name("openai-chat").unwrap()).is_err());
    }
}
