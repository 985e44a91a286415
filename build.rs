//! The git revision the binary is built from, for `packetproof init`: the CI workflow it
//! writes pins packetproof's GitHub Action to this exact commit, so CI runs the
//! packetproof that wrote the suite. `PACKETPROOF_REVISION` (40 hex digits; the release
//! workflow sets it) wins; else the checkout's HEAD, read from `.git` without spawning git
//! (a worktree's `.git` file and packed refs included). A build from a source tarball
//! knows none: `init` then says so instead of writing a workflow.
//!
//! Hand-written rather than a crate (vergen, built): those spawn git or link libgit2, and
//! four file reads are enough here.

use std::path::{Path, PathBuf};

fn main() {
    println!("cargo:rerun-if-env-changed=PACKETPROOF_REVISION");
    let revision = match std::env::var("PACKETPROOF_REVISION") {
        Ok(given) if is_commit(&given) => Some(given),
        Ok(given) if !given.is_empty() => panic!("PACKETPROOF_REVISION must be 40 hex digits, not {given:?}"),
        // Read when the script runs, not baked in when it is compiled: a target folder
        // built in another checkout can hold a compiled script cargo runs here again.
        _ => std::env::var_os("CARGO_MANIFEST_DIR").and_then(|root| head_of(Path::new(&root))),
    };
    if let Some(revision) = revision {
        println!("cargo:rustc-env=PACKETPROOF_BUILT_FROM={revision}");
    }
}

fn is_commit(text: &str) -> bool {
    text.len() == 40 && text.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// The commit HEAD names in the checkout at `root`, watched for changes.
fn head_of(root: &Path) -> Option<String> {
    let dot_git = root.join(".git");
    let git_dir = if dot_git.is_file() {
        let text = std::fs::read_to_string(&dot_git).ok()?;
        PathBuf::from(text.strip_prefix("gitdir:")?.trim())
    } else {
        dot_git
    };
    // A worktree keeps its HEAD; branches live in the common directory.
    let common = match std::fs::read_to_string(git_dir.join("commondir")) {
        Ok(relative) => git_dir.join(relative.trim()),
        Err(_) => git_dir.clone(),
    };
    let head = read_watched(&git_dir.join("HEAD"))?;
    let Some(reference) = head.trim().strip_prefix("ref:").map(str::trim) else {
        return Some(head.trim().to_owned()).filter(|h| is_commit(h));
    };
    if let Some(commit) = read_watched(&common.join(reference)) {
        return Some(commit.trim().to_owned()).filter(|c| is_commit(c));
    }
    let packed = read_watched(&common.join("packed-refs"))?;
    packed.lines().find_map(|line| {
        let (commit, name) = line.split_once(' ')?;
        (name == reference && is_commit(commit)).then(|| commit.to_owned())
    })
}

/// A file's text, and cargo told to rebuild when it changes. Only files that exist are
/// watched: cargo would rerun the build script on every build for a missing one.
fn read_watched(path: &Path) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    println!("cargo:rerun-if-changed={}", path.display());
    Some(text)
}
