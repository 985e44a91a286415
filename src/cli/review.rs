//! `bless --review`, after insta's review: each new or changed case shows its
//! grouped diff (golden on the left, recompiled on the right) and the developer
//! answers accept / reject / skip. Accepted cases are written; rejected ones
//! make the command fail (the source, not the golden file, needs fixing);
//! skipped ones are left for later. It needs a terminal to ask on.

use crate::bless::{self, Change, Pending, Requester};
use crate::diff::group;
use crate::{Config, Error, Result, Status};
use std::io::{BufRead, IsTerminal, Write};

/// The developer's answer for one case.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Decision {
    Accept,
    Reject,
    Skip,
}

pub(crate) fn review(config: &Config, filter: Option<&str>) -> Result<Status> {
    if !std::io::stdin().is_terminal() || !std::io::stdout().is_terminal() {
        return Err(Error::Usage(
            "bless --review asks on a terminal, and standard input or output is not one: run it in a terminal, \
             or bless without --review and review the change with `git diff`"
                .into(),
        ));
    }
    let pending = bless::plan(config, filter)?;
    let decisions = decide(&pending, std::io::stdin().lock(), anstream::stdout())?;
    let mut rejected = 0;
    for (case, decision) in pending.iter().zip(&decisions) {
        match decision {
            Decision::Accept if case.change != Change::Unchanged => bless::apply(config, case, Requester::Command)?,
            Decision::Reject => rejected += 1,
            _ => {}
        }
    }
    crate::cli::print::reviewed(&summary(&pending, &decisions))?;
    Ok(Status::from_ok(rejected == 0))
}

/// Ask about each new or updated case in turn (unchanged ones need no answer and
/// count as accepted). The end of the input skips every case not yet answered.
pub(crate) fn decide(pending: &[Pending], mut input: impl BufRead, mut output: impl Write) -> Result<Vec<Decision>> {
    let asked = pending.iter().filter(|p| p.change != Change::Unchanged).count();
    let mut decisions = Vec::new();
    let mut ended = false;
    let mut number = 0;
    for case in pending {
        if case.change == Change::Unchanged {
            decisions.push(Decision::Accept);
            continue;
        }
        number += 1;
        if ended {
            decisions.push(Decision::Skip);
            continue;
        }
        let text = format!(
            "\n{} ({}, {number} of {asked})\n{}",
            crate::report::escape_name(&case.case.name),
            case.change.word(),
            shown(case)
        );
        write(&mut output, &text)?;
        let decision = loop {
            write(&mut output, "accept (a), reject (r) or skip (s)? ")?;
            let mut line = String::new();
            let read = input.read_line(&mut line).map_err(|e| Error::io("<stdin>", e))?;
            match line.trim() {
                _ if read == 0 => {
                    ended = true;
                    break Decision::Skip;
                }
                "a" | "accept" => break Decision::Accept,
                "r" | "reject" => break Decision::Reject,
                "s" | "skip" => break Decision::Skip,
                _ => {}
            }
        };
        decisions.push(decision);
    }
    Ok(decisions)
}

/// The diff of a changed case, or what a new one will write.
fn shown(case: &Pending) -> String {
    let Some(golden) = &case.golden else {
        let field = |key: &str| case.packet.get(key).and_then(|v| v.as_str()).unwrap_or("?").to_owned();
        return format!(
            "  no golden files yet: writes {} ({} {})\n",
            case.case.golden_packet().display(),
            field("provider"),
            field("model")
        );
    };
    let groups = group(vec![(case.case.name.clone(), golden.clone(), case.packet.clone())], ("golden", "recompiled"));
    match groups.first().map(|g| g.body_text(("golden", "recompiled"))) {
        Some(body) if !body.is_empty() => body,
        _ => "  the packet is the same; its agent-request.json is rewritten\n".into(),
    }
}

fn summary(pending: &[Pending], decisions: &[Decision]) -> String {
    let count = |wanted: Decision| {
        pending.iter().zip(decisions).filter(|(p, d)| p.change != Change::Unchanged && **d == wanted).count()
    };
    let unchanged = pending.iter().filter(|p| p.change == Change::Unchanged).count();
    format!(
        "reviewed: {} accepted, {} rejected, {} skipped, {unchanged} unchanged\n",
        count(Decision::Accept),
        count(Decision::Reject),
        count(Decision::Skip)
    )
}

fn write(output: &mut impl Write, text: &str) -> Result<()> {
    output.write_all(text.as_bytes()).and_then(|()| output.flush()).map_err(|e| Error::io("<stdout>", e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// Two cases in a temporary project: the first with a stale golden packet
    /// (maxTokens differs), the second never blessed.
    fn pending() -> (tempfile::TempDir, Vec<Pending>) {
        let from = Path::new(env!("CARGO_MANIFEST_DIR"));
        let dir = tempfile::tempdir().unwrap();
        let copy = |item: &str| {
            for entry in walkdir::WalkDir::new(from.join(item)).into_iter().map(std::result::Result::unwrap) {
                let to = dir.path().join(entry.path().strip_prefix(from).unwrap());
                if entry.file_type().is_dir() {
                    std::fs::create_dir_all(&to).unwrap();
                } else {
                    std::fs::copy(entry.path(), &to).unwrap();
                }
            }
        };
        for item in [
            "harness.toml",
            "references",
            "fixtures/google-staged-both-selected",
            "fixtures/openai-staged-succ-default",
        ] {
            copy(item);
        }
        std::fs::create_dir_all(dir.path().join("golden")).unwrap();
        let config = Config::load(dir.path(), None).unwrap();
        let cases = crate::corpus::cases(&config).unwrap();
        let mut stale = crate::compile::compile(&cases[0].request, &config, "test").unwrap();
        stale["maxTokens"] = serde_json::json!(7);
        std::fs::create_dir_all(&cases[0].golden_dir).unwrap();
        std::fs::write(cases[0].golden_packet(), crate::canonical::to_pretty(&stale)).unwrap();
        let pending = cases.into_iter().map(|c| bless::pending(&config, c).unwrap()).collect();
        (dir, pending)
    }

    #[test]
    fn each_changed_case_shows_its_diff_and_takes_an_answer() {
        let (_dir, pending) = pending();
        assert_eq!(pending.iter().map(|p| p.change).collect::<Vec<_>>(), [Change::Updated, Change::New]);
        let mut output = Vec::new();
        let decisions = decide(&pending, "maybe\nr\na\n".as_bytes(), &mut output).unwrap();
        assert_eq!(decisions, [Decision::Reject, Decision::Accept]);
        let text = String::from_utf8(output).unwrap();
        assert!(text.contains("google-staged-both-selected (updated, 1 of 2)"), "{text}");
        assert!(text.contains("$.maxTokens: 7 → "), "{text}");
        assert!(text.contains("openai-staged-succ-default (new, 2 of 2)") && text.contains("no golden files yet"));
        assert_eq!(text.matches("accept (a), reject (r) or skip (s)? ").count(), 3, "an unclear answer asks again");
        assert_eq!(summary(&pending, &decisions), "reviewed: 1 accepted, 1 rejected, 0 skipped, 0 unchanged\n");
    }

    #[test]
    fn the_end_of_the_input_skips_what_is_left() {
        let (_dir, pending) = pending();
        let decisions = decide(&pending, "".as_bytes(), Vec::new()).unwrap();
        assert_eq!(decisions, [Decision::Skip, Decision::Skip]);
    }
}
