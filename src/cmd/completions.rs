//! `packetproof completions SHELL`: generated from the clap structures by
//! clap_complete, so it cannot drift from the commands. Printed rather than installed:
//! packagers and users put it where their system looks (README, "Shell completions and
//! the manual page").

use crate::print;
use packetproof::{Result, Status};

#[derive(Debug, Clone, clap::Args)]
pub struct CompletionsArgs {
    /// bash, zsh, fish, powershell or elvish.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// `cli`: the command line's clap definition, as the registry of commands builds it.
pub fn run(args: CompletionsArgs, mut cli: clap::Command) -> Result<Status> {
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut cli, "packetproof", &mut script);
    print::bytes(&script)?;
    Ok(Status::Holds)
}
