//! `packetproof completions SHELL` and `packetproof man [COMMAND]`: generated from the
//! clap structures by clap_complete and clap_mangen, so they cannot drift from the
//! commands. Printed rather than installed: packagers and users put them where their
//! system looks (README, "Shell completions and the manual page").

use super::{args, print};
use packetproof::{Error, Result, Status};

pub fn completions(shell: clap_complete::Shell) -> Result<Status> {
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut args::cli_command(), "packetproof", &mut script);
    print::bytes(&script)?;
    Ok(Status::Holds)
}

pub fn man(command: Option<&str>) -> Result<Status> {
    let mut cli = args::cli_command();
    cli.build();
    let (page, title) = match command {
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
