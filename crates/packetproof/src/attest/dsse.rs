//! DSSE envelopes (the signing format in-toto attestations travel in):
//! `{payload: base64(body), payloadType, signatures: [{keyid, sig: base64}]}`, each
//! signature over the pre-authentication encoding of type and body, never over the
//! JSON text, so no canonicalization is needed. Ed25519 and base64 are crates'.

use super::ShapeProblem;
use crate::report::{excerpt, JsonPath};
use base64::engine::general_purpose::{STANDARD, URL_SAFE};
use base64::Engine;
use ed25519_dalek::{Signature, Signer, SigningKey, VerifyingKey};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub(crate) const IN_TOTO_PAYLOAD_TYPE: &str = "application/vnd.in-toto+json";

/// An envelope carries one signature per signer; a run receipt has a handful at
/// most. More is refused, so checking costs at most this many × trusted keys.
pub(crate) const MAX_SIGNATURES: usize = 16;

/// One serde type, written by `attest` and read by `verify` (through
/// [`Envelope::from_json`]), fields in written order. Unknown fields are refused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct Envelope {
    pub(crate) payload: String,
    pub(crate) payload_type: String,
    pub(crate) signatures: Vec<EnvelopeSignature>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct EnvelopeSignature {
    /// Only a hint for finding the key; never trusted.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub(crate) keyid: String,
    pub(crate) sig: String,
}

/// `"DSSEv1" SP LEN(type) SP type SP LEN(body) SP body`, lengths as ASCII decimal
/// byte counts. Hand-written: it is a byte concatenation, not cryptography, and
/// pulling in a DSSE crate for it would add a dependency for four lines.
pub fn pae(payload_type: &str, body: &[u8]) -> Vec<u8> {
    let mut out = format!("DSSEv1 {} {payload_type} {} ", payload_type.len(), body.len()).into_bytes();
    out.extend_from_slice(body);
    out
}

/// An envelope with one Ed25519 signature over PAE(type, body).
pub(crate) fn sign(payload_type: &str, body: &[u8], key: &SigningKey) -> Envelope {
    let signature = key.sign(&pae(payload_type, body));
    Envelope {
        payload: STANDARD.encode(body),
        payload_type: payload_type.to_owned(),
        signatures: vec![EnvelopeSignature {
            keyid: super::keys::key_id(&key.verifying_key()),
            sig: STANDARD.encode(signature.to_bytes()),
        }],
    }
}

impl Envelope {
    /// The payload bytes. DSSE lets encoders use either base64 alphabet.
    pub(crate) fn body(&self) -> Result<Vec<u8>, String> {
        decode(&self.payload).map_err(|e| format!("payload is not base64: {e}"))
    }

    /// The index of the first signature that one of `keys` made over this
    /// envelope's PAE (strict Ed25519 verification), and which key.
    /// Refused with more than [`MAX_SIGNATURES`]: each is tried against every key.
    pub(crate) fn signed_by(&self, keys: &[VerifyingKey]) -> Result<Option<(usize, usize)>, String> {
        if self.signatures.len() > MAX_SIGNATURES {
            return Err(format!(
                "{} signatures; at most {MAX_SIGNATURES} are accepted (each is tried against every trusted key)",
                self.signatures.len()
            ));
        }
        let message = pae(&self.payload_type, &self.body()?);
        for (i, entry) in self.signatures.iter().enumerate() {
            let Ok(bytes) = decode(&entry.sig) else { continue };
            let Ok(signature) = Signature::from_slice(&bytes) else { continue };
            if let Some(k) = keys.iter().position(|key| key.verify_strict(&message, &signature).is_ok()) {
                return Ok(Some((i, k)));
            }
        }
        Ok(None)
    }
}

impl Envelope {
    /// An envelope read from JSON, or the first place its shape is wrong. Unknown
    /// fields are refused (as `deny_unknown_fields` refuses them). The JSON is checked
    /// before it is read into the type: serde's messages name no path.
    pub(crate) fn from_json(value: Value) -> Result<Envelope, ShapeProblem> {
        let fields = [("payload", Kind::Text), ("payloadType", Kind::Text), ("signatures", Kind::List)];
        let envelope = object(&value, JsonPath::root(), "a DSSE envelope", &fields)?;
        let signatures = envelope["signatures"].as_array().into_iter().flatten();
        for (i, signature) in signatures.enumerate() {
            object(
                signature,
                JsonPath::field("signatures").index(i),
                "a signature",
                &[("keyid", Kind::OptionalText), ("sig", Kind::Text)],
            )?;
        }
        serde_json::from_value(value).map_err(|e| (JsonPath::root(), format!("a DSSE envelope: {e}")))
    }
}

#[derive(Clone, Copy)]
enum Kind {
    Text,
    OptionalText,
    List,
}

/// `value` as an object of exactly these fields (optional ones may be absent).
fn object<'a>(
    value: &'a Value,
    at: JsonPath,
    what: &str,
    fields: &[(&str, Kind)],
) -> Result<&'a Map<String, Value>, ShapeProblem> {
    let names = fields.iter().map(|(name, _)| *name).collect::<Vec<_>>().join(", ");
    let Some(map) = value.as_object() else {
        return Err((at, format!("{what} {{{names}}}, found {}", type_name(Some(value)))));
    };
    if let Some(key) = map.keys().find(|key| !fields.iter().any(|(name, _)| name == key)) {
        return Err((at, format!("{what} with only the fields {names}, found the field {}", excerpt(key))));
    }
    for &(name, kind) in fields {
        let found = map.get(name);
        let fits = match kind {
            Kind::Text => found.is_some_and(Value::is_string),
            Kind::OptionalText => found.is_none_or(Value::is_string),
            Kind::List => found.is_some_and(Value::is_array),
        };
        if !fits {
            let expected = if matches!(kind, Kind::List) { "an array" } else { "a string" };
            return Err((at.key(name), format!("{expected}, found {}", type_name(found))));
        }
    }
    Ok(map)
}

fn type_name(value: Option<&Value>) -> &'static str {
    match value {
        None => "nothing (the field is missing)",
        Some(Value::Null) => "null",
        Some(Value::Bool(_)) => "a boolean",
        Some(Value::Number(_)) => "a number",
        Some(Value::String(_)) => "a string",
        Some(Value::Array(_)) => "an array",
        Some(Value::Object(_)) => "an object",
    }
}

fn decode(text: &str) -> Result<Vec<u8>, base64::DecodeError> {
    STANDARD.decode(text).or_else(|_| URL_SAFE.decode(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pae_matches_the_dsse_protocol_vector() {
        // protocol.md, "Test Vectors" of the DSSE specification.
        assert_eq!(
            pae("http://example.com/HelloWorld", b"hello world"),
            b"DSSEv1 29 http://example.com/HelloWorld 11 hello world"
        );
        // Lengths are byte counts, not characters.
        assert_eq!(pae("t", "é".as_bytes()), "DSSEv1 1 t 2 é".as_bytes());
    }

    #[test]
    fn a_signature_verifies_only_for_its_key_type_and_body() {
        let key = SigningKey::from_bytes(&[7; 32]);
        let other = SigningKey::from_bytes(&[8; 32]);
        let envelope = sign(IN_TOTO_PAYLOAD_TYPE, b"{}", &key);
        assert_eq!(envelope.signed_by(&[other.verifying_key(), key.verifying_key()]), Ok(Some((0, 1))));
        assert_eq!(envelope.signed_by(&[other.verifying_key()]), Ok(None));
        let mut retyped = envelope.clone();
        retyped.payload_type = "application/json".into();
        assert_eq!(retyped.signed_by(&[key.verifying_key()]), Ok(None));
        let mut edited = envelope;
        edited.payload = STANDARD.encode(b"{ }");
        assert_eq!(edited.signed_by(&[key.verifying_key()]), Ok(None));
    }

    /// A keyid is optional in DSSE: a signature without one is read (and written
    /// back without one).
    #[test]
    fn a_signature_without_a_keyid_is_read() {
        let mut value =
            serde_json::to_value(sign(IN_TOTO_PAYLOAD_TYPE, b"{}", &SigningKey::from_bytes(&[7; 32]))).unwrap();
        value["signatures"][0].as_object_mut().unwrap().remove("keyid");
        let envelope = Envelope::from_json(value.clone()).unwrap();
        assert_eq!(envelope.signatures[0].keyid, "");
        assert_eq!(serde_json::to_value(&envelope).unwrap(), value);
    }

    #[test]
    fn more_signatures_than_the_limit_are_refused_before_any_is_checked() {
        let key = SigningKey::from_bytes(&[7; 32]);
        let mut envelope = sign(IN_TOTO_PAYLOAD_TYPE, b"{}", &key);
        let valid = envelope.signatures[0].clone();
        envelope.signatures = vec![valid; MAX_SIGNATURES];
        assert_eq!(envelope.signed_by(&[key.verifying_key()]), Ok(Some((0, 0))));
        envelope.signatures.push(envelope.signatures[0].clone());
        let err = envelope.signed_by(&[key.verifying_key()]).unwrap_err();
        assert!(err.contains("17 signatures; at most 16"), "{err}");
    }
}
