//! `packetproof man [COMMAND]`: generated from the clap structures by clap_mangen, so
//! it cannot drift from the commands.

use crate::print;
use packetproof::{Error, Result, Status};

#[derive(Debug, Clone, clap::Args)]
pub struct ManArgs {
    /// A command whose own page to print (default: the main page, which lists them all).
    pub command: Option<String>,
}

/// `cli`: the command line's clap definition, as the registry of commands builds it.
pub fn run(args: ManArgs, mut cli: clap::Command) -> Result<Status> {
    cli.build();
    let (page, title) = match args.command.as_deref() {
        None => (cli, "packetproof".to_owned()),
        Some(name) => {
            let names: Vec<String> = cli.get_subcommands().map(|c| c.get_name().to_owned()).collect();
            let Some(sub) = cli.find_subcommand(name) else {
                return Err(Error::Usage(format!("man: no command {name:?}; the commands are {}", names.join(", "))));
            };
            // Titled as `man` lists it: packetproof-<command>(1).
            (sub.clone(), format!("packetproof-{name}"))
        }
    };
    let mut roff = Vec::new();
    clap_mangen::Man::new(page).title(title).render(&mut roff).map_err(|e| Error::io("<manual page>", e))?;
    print::bytes(&roff)?;
    Ok(Status::Holds)
}
