//! Self-contained HTML reports: `packetproof test --report FILE.html` (the
//! coverage matrix and every trial's state) and `release-check --format html`
//! (the changed templates, the affected cases, each distinct change with its
//! prompts side by side, the verdict). One file each, with its style inline and no
//! script, link or URL, fit to attach to a CI run and open offline; a
//! Content-Security-Policy forbids the page to load anything.
//!
//! The pages are minijinja templates (`templates/`) over the data of
//! `coverage` and `release`; every value they print goes through
//! `escape::escape`.

pub(crate) mod coverage;
pub(crate) mod escape;
pub(crate) mod release;
pub(crate) mod side_by_side;

use crate::conformance::runner::Record;
use crate::Invocation;
use crate::{Error, Result};
use minijinja::{AutoEscape, Environment, UndefinedBehavior};
use std::path::Path;

/// Marks a file as a packetproof HTML report: only such a file is ever replaced by one.
pub(crate) const GENERATOR: &str = r#"<meta name="generator" content="packetproof">"#;

const TEMPLATES: [(&str, &str); 4] = [
    ("style.css", include_str!("templates/style.css")),
    ("layout.html", include_str!("templates/layout.html")),
    ("test.html", include_str!("templates/test.html")),
    ("release.html", include_str!("templates/release.html")),
];

/// The test report for the trials recorded.
pub(crate) fn test_report(config: &Invocation, records: &[Record]) -> Result<String> {
    let page = coverage::test_page(config, records)?;
    render("test.html", minijinja::context! { page => page, generator => GENERATOR })
}

/// The release check as one page.
pub fn release_report(report: &crate::release::Report) -> Result<String> {
    let page = release::release_page(report);
    render("release.html", minijinja::context! { page => page, generator => GENERATOR })
}

/// Write the test report to `path` under the output rule: never over an input of
/// the gate, a project or run file, or an existing file that is not such a report;
/// atomically.
pub fn write_test_report(path: &Path, config: &Invocation, records: &[Record]) -> Result<()> {
    refuse_foreign(path, config)?;
    let html = test_report(config, records)?;
    crate::fsutil::write_atomic(path, html.as_bytes())
}

/// The output rule for `path` alone, so a command can refuse it before its work.
pub fn refuse_foreign(path: &Path, config: &Invocation) -> Result<()> {
    crate::run::refuse_foreign_page(path, config.settings(), "a packetproof HTML report", is_report)
}

/// Whether `text` is a report this module wrote (so `--report` may replace it).
pub(crate) fn is_report(text: &str) -> bool {
    text.starts_with("<!DOCTYPE html>") && text.contains(GENERATOR)
}

fn render(name: &str, context: minijinja::Value) -> Result<String> {
    let env = environment()?;
    let page = env.get_template(name).and_then(|t| t.render(context)).map_err(|e| template_error(name, &e))?;
    Ok(page)
}

/// Strict undefined (a misspelt field is an error, not an empty cell); every
/// value printed through [`escape::formatter`].
fn environment() -> Result<Environment<'static>> {
    let mut env = Environment::new();
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    env.set_auto_escape_callback(|_| AutoEscape::Html);
    env.set_formatter(escape::formatter);
    for (name, source) in TEMPLATES {
        env.add_template(name, source).map_err(|e| template_error(name, &e))?;
    }
    Ok(env)
}

fn template_error(name: &str, error: &minijinja::Error) -> Error {
    let at = Path::new("crates/packetproof/src/report_html/templates").join(name);
    Error::Internal(format!("{}: the HTML report template failed: {error}", at.display()))
}

#[cfg(test)]
mod tests;
