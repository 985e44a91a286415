//! The conformance gate under `cargo test`: the library's trials
//! (`packetproof::conformance`, the same ones `packetproof test` runs), plus the
//! interop samples of the Node implementation, which only this repository has.

#[path = "support/mod.rs"]
mod support;

use libtest_mimic::{Arguments, Completion, Failed, Trial};
use packetproof::Config;
use std::path::{Path, PathBuf};
use std::sync::Arc;

fn main() {
    let args = Arguments::from_args();
    let config = Config::load(root(), None).unwrap_or_else(|e| panic!("{e}"));
    let note = Arc::new(|text: &str| eprintln!("{text}"));
    // Whether trials may re-bless golden files: decided once, here, from CI and PACKETPROOF_BLESS.
    let env = packetproof::env::Env::current().unwrap_or_else(|e| panic!("{e}"));
    let writes = packetproof::bless::GoldenWrites::from_env(&env);
    let suite =
        packetproof::conformance::trials(Arc::new(config.into()), note, writes).unwrap_or_else(|e| panic!("{e}"));
    let mut trials: Vec<Trial> = suite.trials.into_iter().map(libtest_trial).collect();
    trials.extend(interop_trials());
    let conclusion = libtest_mimic::run(&args, trials);
    // After the summary: each distinct change once, then the command that fixes it.
    print!("{}", suite.stale.report(packetproof::check::stale::BLESS_COMMAND));
    conclusion.exit();
}

/// A library trial as libtest-mimic's: the library runs it (a panic is its failure) and
/// libtest-mimic prints its outcome, an ignored trial's reason too.
fn libtest_trial(trial: packetproof::conformance::runner::Trial) -> Trial {
    let name = trial.name().to_owned();
    Trial::ignorable_test(name, move || {
        let record = trial.run();
        match (record.failure, record.skipped) {
            (Some(message), _) => Err(message.into()),
            (None, Some(reason)) => Ok(Completion::ignored_with(reason)),
            (None, None) => Ok(Completion::Completed),
        }
    })
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The Node implementation's samples (ignored when absent, failed when absent under CI).
fn interop_trials() -> Vec<Trial> {
    let folder = support::interop_dir();
    let samples = ["runtime-packet.anthropic.json", "runtime-packet.google.json", "run-anthropic", "run-google"];
    samples
        .into_iter()
        .map(|sample| {
            let path = folder.join(sample);
            let name = format!("interop::{sample}");
            let folder = folder.clone();
            let trial = Trial::test(name, move || interop_trial(&folder, path));
            support::interop_gate(trial, support::interop_present(), &support::interop_dir())
        })
        .collect()
}

fn interop_trial(folder: &Path, path: PathBuf) -> Result<(), Failed> {
    // The samples append their own Google suffix, not the project's.
    let config =
        Config::load(root(), Some(&folder.join("google-suffix.txt"))).map_err(|e| Failed::from(e.to_string()))?;
    // The reference's own samples carry generator prompts in asset examples: noted, not failed.
    let config = packetproof::Invocation::new(
        config,
        packetproof::CommandPolicy {
            asset_example_prompts: Some(packetproof::config::Policy::Warn),
            ..Default::default()
        },
    );
    let outcomes = packetproof::verify::verify(&config, &[path]).map_err(|e| Failed::from(e.to_string()))?;
    if outcomes.is_empty() {
        return Err("nothing to verify was found".into());
    }
    if packetproof::Outcome::all_ok(&outcomes) {
        Ok(())
    } else {
        let event = packetproof::reporter::Event::Outcomes(&outcomes);
        Err(packetproof::reporter::render(packetproof::Format::Text, event)
            .map_err(|e| Failed::from(e.to_string()))?
            .into())
    }
}
