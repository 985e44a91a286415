//! `packetproof canon`: a JSON file's canonical (RFC 8785) bytes, or their digest.

use crate::print;
use packetproof::{canonical, digest, fsutil, Result, Status};
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, clap::Args)]
pub struct CanonArgs {
    /// The JSON file; `-` or nothing reads standard input.
    pub file: Option<PathBuf>,
    /// Print `sha256:<hex>` and a newline instead of the canonical bytes.
    #[arg(long)]
    pub hash: bool,
}

pub fn run(args: CanonArgs) -> Result<Status> {
    let (name, bytes) = match args.file.as_deref() {
        None => ("<stdin>".to_owned(), read_stdin()?),
        Some(p) if p == Path::new("-") => ("<stdin>".to_owned(), read_stdin()?),
        Some(p) => (p.display().to_string(), fsutil::read_bytes(p, fsutil::DEFAULT_MAX_BYTES)?),
    };
    let value = canonical::parse(&bytes).map_err(|e| e.in_file(name))?;
    let bytes = canonical::to_vec(&value);
    if args.hash {
        print::bytes(format!("{}\n", digest::sha256(&bytes)).as_bytes())?;
    } else {
        print::bytes(&bytes)?;
    }
    Ok(Status::Holds)
}

fn read_stdin() -> Result<Vec<u8>> {
    fsutil::read_limited(std::io::stdin().lock(), "<stdin>", fsutil::DEFAULT_MAX_BYTES)
}
