//! Every output format any command prints, in one enum. A command offers some of
//! them (its `--format` values, declared once per command: the reporters' `Kind`,
//! whose `Test` offers libtest's three); the command
//! line refuses any other as a usage error naming the ones that command offers.

/// An output format, named on the command line as [`Format::name`] says.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    strum::VariantArray,
    strum::IntoStaticStr,
    strum::EnumString,
    strum::Display,
)]
#[strum(serialize_all = "lowercase")]
pub enum Format {
    /// Lines for a terminal (coloured only on one).
    Text,
    /// For programs: a document packetproof defines (`formatVersion` first, a schema in
    /// `schemas/`), or, where the format is another tool's, that tool's document as it
    /// is (`evaluate`: the reference evaluator's evaluation.json; `test`: libtest's events).
    Json,
    /// JUnit XML, for CI systems.
    Junit,
    /// Markdown, for a pull-request comment.
    Markdown,
    /// One self-contained HTML page, to keep as a CI artifact.
    Html,
    /// libtest's: one line per trial (`test` only).
    Pretty,
    /// libtest's: one character per trial (`test` only).
    Terse,
}

impl Format {
    /// Every format, in declaration order.
    pub const ALL: &'static [Format] = <Format as strum::VariantArray>::VARIANTS;

    /// The name `--format` takes.
    pub fn name(self) -> &'static str {
        self.into()
    }

    /// The format named `name`, if any.
    pub fn from_name(name: &str) -> Option<Format> {
        name.parse().ok()
    }
}

/// The version of every `--format json` document packetproof defines (its top-level
/// `formatVersion`; the schemas in `schemas/` pin it). Raised when a key changes
/// meaning or disappears; adding a key does not raise it.
pub const JSON_FORMAT_VERSION: u32 = 1;

#[cfg(test)]
mod tests {
    use super::Format;

    #[test]
    fn every_format_is_found_by_its_name() {
        for format in Format::ALL {
            assert_eq!(Format::from_name(format.name()), Some(*format));
        }
        assert_eq!(Format::from_name("JSON"), None);
    }
}
