//! Every test of the `packetproof` command line, in one binary (one link, one
//! process start), one module per command. Each test runs the real binary through
//! `support::bin`, with a clean environment. Tests that read `../shared/interop`
//! are reported as ignored, with the reason, when it is absent.

#[macro_use]
#[path = "../support/mod.rs"]
mod support;

mod agents;
mod attest;
mod bless;
mod branch_truth;
mod canon;
mod compile;
mod contracts;
mod corpus;
mod distribution;
mod engines;
mod errors;
mod evaluator;
mod exporter;
mod foreign;
mod gate;
mod help;
mod init;
mod init_agent;
mod interop_gate;
mod npm;
mod one_verdict;
mod profile;
mod whole_call;
// FIFOs, device nodes, /dev/full and closed pipes: Linux.
#[cfg(target_os = "linux")]
mod hardening;
mod release_check;
mod report_html;
mod run;
// /proc (peak memory) and signals: Linux.
#[cfg(target_os = "linux")]
mod serve;
mod shell;
mod test;
mod trace;
mod validate;
mod wheel;
mod wire;
mod workflow;

use libtest_mimic::Arguments;

fn main() {
    let args = Arguments::from_args();
    let mut trials = canon::trials();
    trials.extend(bless::trials());
    trials.extend(validate::trials());
    trials.extend(compile::trials());
    trials.extend(corpus::trials());
    trials.extend(help::trials());
    trials.extend(release_check::trials());
    trials.extend(evaluator::trials());
    trials.extend(report_html::trials());
    trials.extend(run::trials());
    trials.extend(init::trials());
    trials.extend(init_agent::trials());
    trials.extend(interop_gate::trials());
    trials.extend(test::trials());
    trials.extend(shell::trials());
    trials.extend(contracts::trials());
    trials.extend(distribution::trials());
    trials.extend(errors::trials());
    trials.extend(npm::trials());
    trials.extend(wheel::trials());
    trials.extend(workflow::trials());
    trials.extend(exporter::trials());
    trials.extend(foreign::trials());
    trials.extend(wire::trials());
    trials.extend(one_verdict::trials());
    trials.extend(profile::trials());
    trials.extend(agents::trials());
    trials.extend(trace::trials());
    #[cfg(target_os = "linux")]
    trials.extend(serve::trials());
    trials.extend(attest::trials());
    trials.extend(engines::trials());
    trials.extend(whole_call::trials());
    trials.extend(gate::trials());
    trials.extend(branch_truth::trials());
    #[cfg(target_os = "linux")]
    trials.extend(hardening::trials());
    let conclusion = libtest_mimic::run(&args, trials);
    // How long the tests a contributor waits for take, slowest first (docs/benchmarks.md).
    if conclusion.num_passed > 0 && !args.list {
        for line in support::slowest(10) {
            eprintln!("{line}");
        }
    }
    conclusion.exit();
}
