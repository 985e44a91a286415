//! `packetproof init`: a new suite (the demo, or one app agent's), or CI and hooks wired
//! to the repository's suite.

use crate::print;
use packetproof::init::{AgentRequest, Options, REPOSITORY_WORKFLOW, WORKFLOW_PATH};
use packetproof::profile::Style;
use packetproof::{Result, Status};
use std::path::PathBuf;

/// The commit this binary was built from (see build.rs): `init`'s workflow pins the
/// action to it. None for a build outside git.
const BUILT_FROM: Option<&str> = option_env!("PACKETPROOF_BUILT_FROM");

#[derive(Debug, Clone, clap::Args)]
pub struct InitArgs {
    /// The empty folder to write the suite into (default: the current directory).
    pub dir: Option<PathBuf>,
    /// Write the suite of one app agent of this name ([agents.NAME], its templates, one
    /// fixture, an exporter skeleton in the app's language: JavaScript in a Node project,
    /// else Python) instead of the demo.
    #[arg(long, value_name = "NAME")]
    pub agent: Option<String>,
    /// The agent's template style: jinja (minijinja / Jinja2, `{{ name }}`), mustache
    /// (`{{{name}}}`) or format (Python str.format, `{name}`).
    #[arg(long, value_parser = style(), default_value = "mustache", requires = "agent")]
    pub style: Style,
    /// How the agent answers: plain text, or JSON in a schema (written as its schema file).
    #[arg(long, value_enum, default_value_t, requires = "agent")]
    pub output: OutputArg,
    /// The provider of the agent's call, as harness.toml's [providers.NAME] names it.
    #[arg(long, value_name = "NAME", default_value = "anthropic", requires = "agent")]
    pub provider: String,
    /// The model of the agent's call [default: the provider's first built-in model].
    #[arg(long, value_name = "MODEL", requires = "agent")]
    pub model: Option<String>,
}

/// `--style`: one of the library's template styles, by the name harness.toml gives it.
fn style() -> impl clap::builder::TypedValueParser<Value = Style> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(Style::NAMES)
        .try_map(|name: String| Style::from_name(&name).ok_or_else(|| format!("{name:?} names no template style")))
}

/// `init --output`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum OutputArg {
    /// Plain text: no outputSchema.
    #[default]
    Text,
    /// JSON in the agent's schema file: the packets carry it as outputSchema.
    Schema,
}

impl From<OutputArg> for packetproof::profile::Output {
    fn from(output: OutputArg) -> Self {
        match output {
            OutputArg::Text => Self::Text,
            OutputArg::Schema => Self::Schema,
        }
    }
}

pub fn run(args: InitArgs) -> Result<Status> {
    let dir = args.dir.unwrap_or_else(|| PathBuf::from("."));
    let (style, output) = (args.style, args.output.into());
    let (provider, model) = (Some(args.provider), args.model);
    let agent = args.agent.map(|name| AgentRequest { name, style, output, provider, model });
    let options = Options { agent, writes: super::golden_writes()?, built_from: BUILT_FROM };
    let done = packetproof::init::run(&dir, &options)?;
    print::initialized(&dir, &done)?;
    if done.workflow_unpinned {
        print::note(&format!(
            "{} not written: this packetproof was built outside a git checkout, so there is no commit to pin \
             its GitHub Action to (build it from a checkout, or with PACKETPROOF_REVISION set)",
            if done.in_repository.is_some() { REPOSITORY_WORKFLOW } else { WORKFLOW_PATH }
        ));
    }
    Ok(Status::Holds)
}
