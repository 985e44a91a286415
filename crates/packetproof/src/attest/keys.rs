//! Ed25519 keys in PEM, as `openssl genpkey -algorithm ed25519` (PKCS#8 private)
//! and `openssl pkey -pubout` (SPKI public) write them. Parsing and the crypto are
//! ed25519-dalek's (with its pkcs8 and pem features); nothing here is hand-written.

use crate::JsonPath;
use crate::{digest, fsutil, Error, Result};
use ed25519_dalek::pkcs8::{DecodePrivateKey, DecodePublicKey, EncodePublicKey};
use ed25519_dalek::{SigningKey, VerifyingKey};
use std::path::Path;

/// Key files are small; anything larger is not a key.
const MAX_KEY_BYTES: u64 = 64 * 1024;

/// A PKCS#8 PEM private key file.
pub fn signing_key(path: &Path) -> Result<SigningKey> {
    let file = fsutil::open_regular(path)?;
    refuse_open_permissions(path, &file)?;
    let bytes = fsutil::read_limited(file, &path.display().to_string(), MAX_KEY_BYTES)?;
    let text =
        String::from_utf8(bytes).map_err(|_| Error::shape(path.display(), JsonPath::root(), "PEM text (UTF-8)"))?;
    SigningKey::from_pkcs8_pem(&text).map_err(|e| {
        let expected = "an Ed25519 private key in PKCS#8 PEM (BEGIN PRIVATE KEY)";
        match other_key(&text) {
            Some(kind) => Error::shape(path.display(), JsonPath::root(), format!("{expected}, found {kind}")),
            None => Error::shape(path.display(), JsonPath::root(), format!("{expected}: {e}")),
        }
    })
}

/// What a PEM file that is not an Ed25519 private key holds, by its label or, for
/// PKCS#8, by its algorithm (the parser's own error names the OID it expected).
fn other_key(text: &str) -> Option<String> {
    let (label, document) = ed25519_dalek::pkcs8::SecretDocument::from_pem(text).ok()?;
    let kind = match label {
        "RSA PRIVATE KEY" => "an RSA private key (PKCS#1)",
        "EC PRIVATE KEY" => "an EC private key (SEC1)",
        "ENCRYPTED PRIVATE KEY" => "an encrypted private key (decrypt it first)",
        "PUBLIC KEY" => "a public key (attest signs with the private key)",
        "PRIVATE KEY" => {
            let info = document.decode_msg::<ed25519_dalek::pkcs8::PrivateKeyInfo>().ok()?;
            match info.algorithm.oid.to_string().as_str() {
                "1.2.840.113549.1.1.1" | "1.2.840.113549.1.1.10" => "an RSA private key",
                "1.2.840.10045.2.1" => "an EC (ECDSA) private key",
                "1.3.101.113" => "an Ed448 private key",
                "1.3.101.110" | "1.3.101.111" => "an X25519 or X448 key-agreement key",
                other => return Some(format!("a private key of the algorithm {other}")),
            }
        }
        other => return Some(format!("a PEM block labelled {other:?}")),
    };
    Some(kind.to_owned())
}

/// An SPKI PEM public key file.
pub fn verifying_key(path: &Path) -> Result<VerifyingKey> {
    let text = read_text(path)?;
    VerifyingKey::from_public_key_pem(&text).map_err(|e| {
        Error::shape(
            path.display(),
            JsonPath::root(),
            format!("an Ed25519 public key in SPKI PEM (BEGIN PUBLIC KEY): {e}"),
        )
    })
}

/// The DSSE `keyid` hint: `sha256:` of the public key's SPKI DER bytes (what
/// `openssl pkey -pubin -outform DER | sha256sum` prints).
pub fn key_id(key: &VerifyingKey) -> String {
    let der = key.to_public_key_der().expect("an Ed25519 public key always encodes");
    digest::sha256(der.as_bytes())
}

/// A private key others can read is no longer private: refused as ssh refuses
/// one, checked on the opened file (the path could be swapped meanwhile).
#[cfg(unix)]
fn refuse_open_permissions(path: &Path, file: &std::fs::File) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let mode = file.metadata().map_err(|e| Error::io(path, e))?.permissions().mode() & 0o7777;
    if mode & 0o077 == 0 {
        return Ok(());
    }
    Err(Error::refused(
        path.display(),
        format!(
            "permissions {mode:04o} are too open: a private key must be readable by its owner only \
             (run `chmod 600 {}`)",
            path.display()
        ),
    ))
}

#[cfg(not(unix))]
fn refuse_open_permissions(_path: &Path, _file: &std::fs::File) -> Result<()> {
    Ok(())
}

fn read_text(path: &Path) -> Result<String> {
    let bytes = fsutil::read_bytes(path, MAX_KEY_BYTES)?;
    String::from_utf8(bytes).map_err(|_| Error::shape(path.display(), JsonPath::root(), "PEM text (UTF-8)"))
}
