//! `max_tokens` of an agent (`[contract]` or `[agents.NAME]`): the output budgets its
//! calls may carry, for an app that sets the budget per call. Without it, a production
//! call's budget is one its vouched packets carry.

use serde::Deserialize;

/// The budgets an agent's calls may carry.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub enum Budget {
    /// `max_tokens = [800, 1600]`: these values.
    Values(Vec<u64>),
    /// `max_tokens = { min = 256, max = 4096 }`: any whole number in the range.
    Range(Range),
}

/// `{ min, max }`, both included.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Range {
    pub min: u64,
    pub max: u64,
}

impl Budget {
    /// Whether a call may carry `tokens`.
    pub fn allows(&self, tokens: u64) -> bool {
        match self {
            Budget::Values(values) => values.contains(&tokens),
            Budget::Range(Range { min, max }) => (*min..=*max).contains(&tokens),
        }
    }

    /// As messages show it.
    pub fn describe(&self) -> String {
        match self {
            Budget::Values(values) => format!("{values:?}"),
            Budget::Range(Range { min, max }) => format!("{min} to {max}"),
        }
    }

    /// Why the declaration is none, if it is none.
    pub(crate) fn problem(&self) -> Option<String> {
        match self {
            Budget::Values(values) if values.is_empty() || values.contains(&0) => {
                Some("expected a non-empty list of budgets from 1".into())
            }
            Budget::Range(Range { min, max }) if *min == 0 || min > max => {
                Some(format!("expected 1 <= min <= max, found {min} to {max}"))
            }
            _ => None,
        }
    }
}

/// `[agents.NAME.call]`: values a call field may take beside the reviewed ones, for an
/// app that sets it per call (`temperature = [0.0, 0.7]`, `top_p = { min = 0.5, max = 1 }`
/// as `topP`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum Declared {
    /// These values (first: a struct would take a list of two numbers as its fields).
    Values(Vec<serde_json::Value>),
    /// A number range `{ min, max }`, both included.
    Range(NumberRange),
}

/// `[agents.NAME.call]` as declared, each key a call field.
pub(crate) fn declared_fields(
    declared: &std::collections::BTreeMap<String, Declared>,
) -> Result<std::collections::BTreeMap<String, Declared>, String> {
    match declared.keys().find(|name| crate::call::field(name).is_none()) {
        None => Ok(declared.clone()),
        Some(name) => {
            let names: Vec<&str> = crate::call::FIELDS.iter().map(|f| f.name).collect();
            Err(format!("contract.call.{name}: expected a call field, one of {names:?}"))
        }
    }
}

/// `{ min, max }` of numbers.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NumberRange {
    pub min: f64,
    pub max: f64,
}

impl Declared {
    /// Whether a call may send `value`.
    pub fn allows(&self, value: &serde_json::Value) -> bool {
        match self {
            Declared::Values(values) => values.iter().any(|v| crate::call::same(v, value)),
            Declared::Range(NumberRange { min, max }) => value.as_f64().is_some_and(|v| *min <= v && v <= *max),
        }
    }

    /// As messages show it.
    pub fn describe(&self) -> String {
        match self {
            Declared::Values(values) => serde_json::Value::Array(values.clone()).to_string(),
            Declared::Range(NumberRange { min, max }) => format!("{min} to {max}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(toml_value: &str) -> Result<Budget, toml::de::Error> {
        let table: toml::Table = toml::from_str(&format!("v = {toml_value}")).unwrap();
        table["v"].clone().try_into()
    }

    #[test]
    fn a_budget_is_values_or_a_range() {
        let values = read("[800, 1600]").unwrap();
        assert!(values.allows(800) && !values.allows(801));
        let range = read("{ min = 256, max = 4096 }").unwrap();
        assert!(range.allows(256) && range.allows(4096) && !range.allows(4097) && !range.allows(1));
        assert_eq!(range.describe(), "256 to 4096");
        assert!(read("{ min = 1, maximum = 2 }").is_err());
        assert!(read("[]").unwrap().problem().is_some());
        assert!(read("{ min = 9, max = 2 }").unwrap().problem().is_some());
        assert_eq!(values.problem(), None);
    }

    #[test]
    fn declared_call_values_are_a_list_or_a_number_range() {
        let read = |toml_value: &str| -> Declared {
            let table: toml::Table = toml::from_str(&format!("v = {toml_value}")).unwrap();
            table["v"].clone().try_into().unwrap()
        };
        let set = read("[0.0, 0.7]");
        assert!(set.allows(&serde_json::json!(0)) && set.allows(&serde_json::json!(0.7)));
        assert!(!set.allows(&serde_json::json!(0.9)));
        let range = read("{ min = 0.5, max = 1 }");
        assert!(range.allows(&serde_json::json!(0.75)) && !range.allows(&serde_json::json!(0.1)));
        assert!(!range.allows(&serde_json::json!("0.75")));
        assert_eq!(range.describe(), "0.5 to 1");
    }
}
