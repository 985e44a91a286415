//! Stage `schema`: the output against the run's schema (the packet's
//! `outputSchema.schema`, or the Google run's pinned snapshot). The jsonschema crate
//! replaces the reference's in-house validator; on the runtime schema's keywords (type,
//! enum, required, properties, items, minItems, maxItems, minLength) they agree.

use super::{Failures, SCHEMA};
use crate::{canonical, digest};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// Schema errors listed before the rest are summarized as a count.
const MAX_SCHEMA_ERRORS: usize = 25;

/// Validate `output` against `schema`, or say that no schema is available. Returns
/// whether validation was applied (evaluation.json's `schemaValidationApplied`).
pub(crate) fn check(schema: Option<&Value>, output: &Value, out: &mut Failures) -> bool {
    let Some(schema) = schema else {
        out.fail(SCHEMA, "no validation schema: the packet carries no outputSchema and the run pins no snapshot");
        return false;
    };
    let validator = match validator(schema) {
        Ok(validator) => validator,
        Err(message) => {
            out.fail(SCHEMA, format!("the validation schema does not compile: {message}"));
            return false;
        }
    };
    let errors: Vec<String> = validator
        .iter_errors(output)
        .map(|e| format!("at {}: {e}", pointer_path(&e.instance_path.to_string())))
        .collect();
    let extra = errors.len().saturating_sub(MAX_SCHEMA_ERRORS);
    for message in errors.into_iter().take(MAX_SCHEMA_ERRORS) {
        out.fail(SCHEMA, message);
    }
    if extra > 0 {
        out.fail(SCHEMA, format!("and {extra} more schema error(s)"));
    }
    true
}

/// A JSON pointer (`/result/x/0`) as a JSONPath (`$.result.x[0]`), like every other message.
fn pointer_path(pointer: &str) -> String {
    pointer.split('/').skip(1).fold("$".to_owned(), |path, step| {
        let step = step.replace("~1", "/").replace("~0", "~");
        match step.parse::<usize>() {
            Ok(i) => crate::report::index(&path, i),
            Err(_) => crate::report::child(&path, &step),
        }
    })
}

/// The compiled validator for `schema`, compiled once per schema digest for the
/// whole process (verify evaluates many runs pinned to the same snapshot). No
/// network: jsonschema is built without its resolver features.
pub(crate) fn validator(schema: &Value) -> Result<Arc<jsonschema::Validator>, String> {
    static CACHE: OnceLock<Mutex<HashMap<String, Arc<jsonschema::Validator>>>> = OnceLock::new();
    let key = digest::sha256(&canonical::to_vec(schema));
    let cache = CACHE.get_or_init(Default::default);
    if let Some(found) = cache.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return Ok(Arc::clone(found));
    }
    // Checked first: a self-referential schema would overflow the compiler's stack.
    crate::schema_refs::check(schema)?;
    let compiled = Arc::new(jsonschema::validator_for(schema).map_err(|e| e.to_string())?);
    // Two threads may compile the same schema at once: the first one stored is kept,
    // so every caller of one digest shares one validator.
    let mut cache = cache.lock().unwrap_or_else(|e| e.into_inner());
    Ok(Arc::clone(cache.entry(key).or_insert(compiled)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn validator_is_compiled_once_per_schema() {
        let schema = json!({"type": "object", "required": ["result"]});
        let a = validator(&schema).unwrap();
        let b = validator(&json!({"required": ["result"], "type": "object"})).unwrap();
        assert!(Arc::ptr_eq(&a, &b), "same digest, same compiled validator");
        assert!(!a.is_valid(&json!({})));
    }

    #[test]
    fn remote_refs_are_never_fetched() {
        let schema = json!({"$ref": "https://example.invalid/schema.json"});
        assert!(validator(&schema).is_err());
    }

    #[test]
    fn schema_problems_and_a_missing_schema_fail() {
        let mut out = Failures::default();
        assert!(check(Some(&json!({"type": "object", "required": ["result"]})), &json!(null), &mut out));
        assert!(!check(None, &json!({}), &mut out));
        let stages: Vec<_> = out.list.iter().map(crate::evaluator::testkit::builtin_stage).collect();
        assert_eq!(stages, [SCHEMA, SCHEMA]);
    }

    #[test]
    fn pointers_read_as_json_paths() {
        assert_eq!(pointer_path(""), "$");
        assert_eq!(
            pointer_path("/result/onboardingStrategySequence/0/a~1b"),
            "$.result.onboardingStrategySequence[0][\"a/b\"]"
        );
    }
}
