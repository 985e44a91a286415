//! `packetproof checks`: the rule book.

use crate::flags::{formats, RULE_BOOK};
use crate::print;
use packetproof::reporter::Event;
use packetproof::{Format, Result, Status};

#[derive(Debug, Clone, clap::Args)]
pub struct ChecksArgs {
    /// `text` or `json`.
    #[arg(long, value_parser = formats(RULE_BOOK), default_value = RULE_BOOK[0].name())]
    pub format: Format,
}

pub fn run(args: ChecksArgs) -> Result<Status> {
    print::reported(args.format, Event::RuleBook)?;
    Ok(Status::Holds)
}
