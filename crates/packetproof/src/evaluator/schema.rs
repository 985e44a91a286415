//! Stage `schema`: the output against the run's schema (the packet's
//! `outputSchema.schema`, or the Google run's pinned snapshot). The jsonschema crate
//! replaces the reference's in-house validator; on the runtime schema's keywords (type,
//! enum, required, properties, items, minItems, maxItems, minLength) they agree.

use super::{Failures, SCHEMA};
use crate::invocation::Recent;
use crate::{canonical, digest, Invocation};
use serde_json::Value;
use std::sync::Arc;

/// Schema errors listed before the rest are summarized as a count.
const MAX_SCHEMA_ERRORS: usize = 25;

/// Validate `output` against `schema`, or say that no schema is available. Returns
/// whether validation was applied (evaluation.json's `schemaValidationApplied`).
pub(crate) fn check(schema: Option<&Value>, output: &Value, out: &mut Failures, config: &Invocation) -> bool {
    let Some(schema) = schema else {
        out.fail(SCHEMA, "no validation schema: the packet carries no outputSchema and the run pins no snapshot");
        return false;
    };
    let validator = match validator(schema, config) {
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

/// How many compiled validators one invocation keeps: a suite's runs are pinned to
/// its one snapshot per schema file, and a packet's own outputSchema is usually that.
const VALIDATORS: usize = 8;

/// The validators an invocation compiled, each with the digest of its schema's
/// canonical bytes, the most recently used first.
struct Validators(Recent<(String, Arc<jsonschema::Validator>)>);

/// The compiled validator for `schema`, compiled once per schema digest for the
/// invocation (verify evaluates many runs pinned to the same snapshot). No network:
/// jsonschema is built without its resolver features.
pub(crate) fn validator(schema: &Value, config: &Invocation) -> Result<Arc<jsonschema::Validator>, String> {
    let key = digest::sha256(&canonical::to_vec(schema));
    let validators = config.cache(|| Validators(Recent::new(VALIDATORS)));
    let compile = || {
        // Checked first: a self-referential schema would overflow the compiler's stack.
        crate::schema_refs::check(schema)?;
        let compiled = jsonschema::validator_for(schema).map_err(|e| e.to_string())?;
        Ok((key.clone(), Arc::new(compiled)))
    };
    // Two threads may compile the same schema at once: the first one kept is what
    // both get, so every caller of one digest shares one validator.
    validators.0.get_or_try(|(seen, _)| *seen == key, compile).map(|(_, validator)| validator)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn validator_is_compiled_once_per_schema() {
        let config = crate::evaluator::testkit::config();
        let schema = json!({"type": "object", "required": ["result"]});
        let a = validator(&schema, &config).unwrap();
        let b = validator(&json!({"required": ["result"], "type": "object"}), &config).unwrap();
        assert!(Arc::ptr_eq(&a, &b), "same digest, same compiled validator");
        assert!(!a.is_valid(&json!({})));
    }

    #[test]
    fn remote_refs_are_never_fetched() {
        let schema = json!({"$ref": "https://example.invalid/schema.json"});
        assert!(validator(&schema, &crate::evaluator::testkit::config()).is_err());
    }

    #[test]
    fn schema_problems_and_a_missing_schema_fail() {
        let mut out = Failures::default();
        let config = crate::evaluator::testkit::config();
        assert!(check(Some(&json!({"type": "object", "required": ["result"]})), &json!(null), &mut out, &config));
        assert!(!check(None, &json!({}), &mut out, &config));
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
