//! expect.toml `[[fails]]`: a check a negative case must fail, and how its finding
//! is recognised. The check (the rule) is required; the finding may further be held
//! to an evaluator stage (`stage = "routes"`: the finding names it, as `[routes] …`
//! or `stage "routes"`), and to its wording, as a fragment (`message`) or a regular
//! expression (`pattern`). Without either, any finding of the check (at the stage)
//! is the declared failure: a reworded evaluator message then needs no edit here.

use regex::Regex;
use std::fmt;

/// A negative case's declaration: this check must fail, with a finding like this.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(try_from = "Declared")]
pub(crate) struct Expectation {
    pub(crate) check: String,
    stage: Option<String>,
    wording: Wording,
}

#[derive(Debug, Clone)]
enum Wording {
    Any,
    Fragment(String),
    Pattern(Regex),
}

/// expect.toml's spelling of an [`Expectation`], before its pattern is compiled.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Declared {
    check: String,
    stage: Option<String>,
    message: Option<String>,
    pattern: Option<String>,
}

impl TryFrom<Declared> for Expectation {
    type Error = String;

    fn try_from(declared: Declared) -> Result<Expectation, String> {
        let wording = match (declared.message, declared.pattern) {
            (Some(_), Some(_)) => return Err("give `message` (a fragment) or `pattern` (a regex), not both".into()),
            (Some(fragment), None) => Wording::Fragment(fragment),
            (None, Some(pattern)) => {
                Wording::Pattern(Regex::new(&pattern).map_err(|e| format!("`pattern` is not a regex: {e}"))?)
            }
            (None, None) => Wording::Any,
        };
        if declared.stage.as_deref().is_some_and(|s| s.trim().is_empty()) {
            return Err("`stage` is blank".into());
        }
        Ok(Expectation { check: declared.check, stage: declared.stage, wording })
    }
}

impl Expectation {
    /// Whether a finding's message is the declared failure.
    pub(crate) fn matches(&self, message: &str) -> bool {
        let at_stage = self.stage.as_deref().is_none_or(|stage| names_stage(message, stage));
        at_stage
            && match &self.wording {
                Wording::Any => true,
                Wording::Fragment(fragment) => message.contains(fragment.as_str()),
                Wording::Pattern(pattern) => pattern.is_match(message),
            }
    }
}

/// The forms in which findings name an evaluator stage: a failure `[stage] message`,
/// an earliest stage `stage: "stage"`, a verdict `at stage "stage"`.
fn names_stage(message: &str, stage: &str) -> bool {
    [format!("[{stage}] "), format!("stage: {stage:?}"), format!("stage {stage:?}")]
        .iter()
        .any(|form| message.contains(form.as_str()))
}

/// "with \"fragment\"", "matching /pattern/", each "at stage \"x\"" when one is declared.
impl fmt::Display for Expectation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.wording {
            Wording::Any => write!(f, "any finding")?,
            Wording::Fragment(fragment) => write!(f, "{fragment:?}")?,
            Wording::Pattern(pattern) => write!(f, "a finding matching /{pattern}/")?,
        }
        match &self.stage {
            Some(stage) => write!(f, " at stage {stage:?}"),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn declared(toml: &str) -> Result<Expectation, String> {
        toml::from_str::<Expectation>(toml).map_err(|e| e.to_string())
    }

    #[test]
    fn a_failure_is_matched_by_check_and_stage_with_the_message_optional_or_a_pattern() {
        let finding = "[routes] $.result.screens: screen \"one_cue\" is unreachable";
        let by_stage = declared("check = \"run::evaluation\"\nstage = \"routes\"").unwrap();
        assert!(by_stage.matches(finding));
        assert!(by_stage.matches("the evaluation did not pass (earliest failure stage: \"routes\")"));
        assert!(!by_stage.matches("[evidence] $.result: unresolved"));
        let pattern = declared(
            "check = \"run::evaluation\"\nstage = \"routes\"\npattern = 'screen \"\\w+\" is (unreachable|orphaned)'",
        );
        assert!(pattern.unwrap().matches(finding));
        let fragment = declared("check = \"run::evaluation\"\nmessage = \"is unreachable\"").unwrap();
        assert!(fragment.matches(finding) && !fragment.matches("[routes] no completing action"));
        assert_eq!(fragment.to_string(), "\"is unreachable\"");
        assert_eq!(by_stage.to_string(), "any finding at stage \"routes\"");
    }

    #[test]
    fn a_declaration_that_cannot_match_as_meant_is_an_error() {
        let both = declared("check = \"c\"\nmessage = \"m\"\npattern = \"p\"").unwrap_err();
        assert!(both.contains("not both"), "{both}");
        let bad = declared("check = \"c\"\npattern = \"(\"").unwrap_err();
        assert!(bad.contains("`pattern` is not a regex"), "{bad}");
        assert!(declared("check = \"c\"\nstage = \" \"").unwrap_err().contains("`stage` is blank"));
        assert!(declared("check = \"c\"\nmesage = \"m\"").unwrap_err().contains("unknown field"));
    }
}
