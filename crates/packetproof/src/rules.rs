//! The rule book: every check packetproof has, declared once. A finding carries
//! its [`Check`], never a string; each check's entry in [`Check::rule`] says its
//! name, what it reads, what it needs before it can apply, and what it proves.
//! Commands do not list checks of their own: they apply every rule whose needs
//! are met (`crate::judge`) and report the others as not applicable, with why.
//!
//! Adding a check: one variant, one arm in [`Check::rule`], a negative fixture or a
//! mutation operator that it must catch (or, for a check of a command's input, the
//! test named in `tested_by`). `rules_are_proven` in `tests/conformance.rs` fails
//! for a registered check that has none.

use serde::{Serialize, Serializer};
use std::fmt;

/// Every named check. [`Check::name`] is what findings print as `[check]`, what
/// the conformance runner names its tests (`<fixture>::<check>`), and what
/// `expect.toml` and `[checks] skip` refer to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Check {
    Packet(PacketCheck),
    Run(RunCheck),
    Corpus(CorpusCheck),
    /// A golden agent-request.json is the agent view of the packet beside it.
    GoldenAgentRequest,
    /// A compile request is well-formed (`export`, and every fixture's request).
    CompileRequest,
    /// `wire --check`: a captured provider request carries exactly the packet's material.
    WireRequest,
    /// A `verify` path held nothing to check.
    VerifyNothingFound,
    /// A file `verify` could not read at all (exit 2).
    VerifyUnreadable,
}

/// Checks of one runtime packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PacketCheck {
    Regenerates,
    ExactInputHash,
    Checksum,
    Contract,
    BranchIsolation,
    BranchConsistency,
    RendersFromInput,
    ForbiddenMaterial,
    ProviderShape,
}

/// Checks of one run directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RunCheck {
    AgentRequest,
    ManifestBinding,
    SnapshotParity,
    Evaluation,
    Completion,
    ProviderRequest,
    Attestation,
    StaleTemp,
}

/// Checks over the whole fixture corpus.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CorpusCheck {
    Layout,
    SnapshotParity,
    UniqueAgentTasks,
    BranchCoverage,
    MutationSelfTest,
}

/// What a check reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reads {
    /// One runtime packet, whoever made it.
    Packet,
    /// A packet together with the compile request (fixture) it was made from.
    PacketAndRequest,
    /// A run directory (and the packet rebuilt from it).
    Run,
    /// The fixture corpus as a whole.
    Corpus,
    /// A compile input.
    CompileInput,
    /// A captured provider request and its packet.
    Capture,
    /// Whatever path `verify` was given.
    Path,
}

/// What a check needs before it can apply; without it the check reports itself
/// as not applicable, with the reason, and never passes silently.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    /// The packet's promptVersions are the sha256 of this suite's templates: only
    /// then can the suite re-render it or know which template lines it left out.
    SuiteTemplates,
    /// The compile request the packet was made from (a fixture of the suite).
    Request,
    /// Something that makes the packet from the request now: packetproof's compiler,
    /// or the suite's `[exporter]`.
    Producer,
    /// A run directory whose files hold what the check reads (a file it checks is present).
    RunFile(&'static str),
    /// A key the signature must verify under (`--trusted-key`); without one an
    /// attestation present is still checked, an absent one is not required.
    TrustedKey,
    /// A suite: harness.toml beside fixture and golden folders.
    Suite,
    /// The packet's provider is one harness.toml names: its output mode (text-JSON or
    /// schema) decides the shape.
    ConfiguredProvider,
}

/// One entry of the rule book (`packetproof checks` lists them).
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Rule {
    pub(crate) name: &'static str,
    pub(crate) reads: Reads,
    pub(crate) needs: &'static [Need],
    /// One sentence: what holds when the check passes.
    pub(crate) proves: &'static str,
    /// For a check that no fixture or mutation can exercise (it reads a command's
    /// own input): the test, `file::function`, that proves it can fail.
    pub(crate) tested_by: Option<&'static str>,
}

impl fmt::Display for Reads {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Reads::Packet => "packet",
            Reads::PacketAndRequest => "packet-and-request",
            Reads::Run => "run",
            Reads::Corpus => "corpus",
            Reads::CompileInput => "compile-input",
            Reads::Capture => "capture",
            Reads::Path => "path",
        })
    }
}

impl fmt::Display for Need {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Need::SuiteTemplates => f.write_str("suite-templates"),
            Need::Request => f.write_str("request"),
            Need::Producer => f.write_str("producer"),
            Need::RunFile(file) => write!(f, "run-file:{file}"),
            Need::TrustedKey => f.write_str("trusted-key"),
            Need::Suite => f.write_str("suite"),
            Need::ConfiguredProvider => f.write_str("configured-provider"),
        }
    }
}

// In JSON as in text: one name each (`run-file:completion.json`).
impl Serialize for Reads {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl Serialize for Need {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

const fn rule(name: &'static str, reads: Reads, needs: &'static [Need], proves: &'static str) -> Rule {
    Rule { name, reads, needs, proves, tested_by: None }
}

const fn tested(rule: Rule, test: &'static str) -> Rule {
    Rule { tested_by: Some(test), ..rule }
}

impl Check {
    /// Every check, in report order.
    pub const ALL: [Check; 27] = [
        Check::Packet(PacketCheck::Regenerates),
        Check::Packet(PacketCheck::ExactInputHash),
        Check::Packet(PacketCheck::Checksum),
        Check::Packet(PacketCheck::Contract),
        Check::Packet(PacketCheck::BranchIsolation),
        Check::Packet(PacketCheck::BranchConsistency),
        Check::Packet(PacketCheck::RendersFromInput),
        Check::Packet(PacketCheck::ForbiddenMaterial),
        Check::Packet(PacketCheck::ProviderShape),
        Check::Run(RunCheck::AgentRequest),
        Check::Run(RunCheck::ManifestBinding),
        Check::Run(RunCheck::SnapshotParity),
        Check::Run(RunCheck::Evaluation),
        Check::Run(RunCheck::Completion),
        Check::Run(RunCheck::ProviderRequest),
        Check::Run(RunCheck::Attestation),
        Check::Run(RunCheck::StaleTemp),
        Check::Corpus(CorpusCheck::Layout),
        Check::Corpus(CorpusCheck::SnapshotParity),
        Check::Corpus(CorpusCheck::UniqueAgentTasks),
        Check::Corpus(CorpusCheck::BranchCoverage),
        Check::Corpus(CorpusCheck::MutationSelfTest),
        Check::GoldenAgentRequest,
        Check::CompileRequest,
        Check::WireRequest,
        Check::VerifyNothingFound,
        Check::VerifyUnreadable,
    ];

    /// The rule book's entry: the one place a check is declared.
    pub(crate) const fn rule(self) -> Rule {
        use Need::*;
        use Reads::*;
        match self {
            Check::Packet(check) => match check {
                PacketCheck::Regenerates => rule(
                    "packet::regenerates",
                    PacketAndRequest,
                    &[Request, Producer],
                    "the packet is byte for byte what its request makes now (packetproof's compiler or the suite's exporter)",
                ),
                PacketCheck::ExactInputHash => {
                    rule("packet::exact-input-hash", Packet, &[], "exactInputHash is the sha256 of what the model receives")
                }
                PacketCheck::Checksum => rule("packet::checksum", Packet, &[], "checksum binds the whole packet"),
                PacketCheck::Contract => {
                    rule("packet::contract", Packet, &[], "fields, fixed values, types and model limits are the contract's")
                }
                PacketCheck::BranchIsolation => rule(
                    "packet::branch-isolation",
                    PacketAndRequest,
                    &[Request],
                    "only the branch the request resolves to rendered: no excluded request text (and, for packets of \
                     this suite's templates, no line of an unrendered template)",
                ),
                PacketCheck::BranchConsistency => rule(
                    "packet::branch-consistency",
                    Packet,
                    &[],
                    "resolvedBranch is what the packet's own renderInput implies",
                ),
                PacketCheck::RendersFromInput => rule(
                    "packet::renders-from-input",
                    Packet,
                    &[SuiteTemplates],
                    "the prompts are this suite's templates rendered over the packet's own renderInput",
                ),
                PacketCheck::ForbiddenMaterial => rule(
                    "packet::forbidden-material",
                    Packet,
                    &[],
                    "no render-only snapshot, media URL, storage path or generator prompt reaches the model",
                ),
                PacketCheck::ProviderShape => {
                    rule(
                        "packet::provider-shape",
                        Packet,
                        &[ConfiguredProvider],
                        "outputSchema and the text-JSON suffix fit the provider",
                    )
                }
            },
            Check::Run(check) => match check {
                RunCheck::AgentRequest => rule(
                    "run::agent-request",
                    Run,
                    &[RunFile("agent-request.json")],
                    "the run's packet is valid and agent-request.json is exactly its agent view",
                ),
                RunCheck::ManifestBinding => rule(
                    "run::manifest-binding",
                    Run,
                    &[RunFile("run-manifest.json")],
                    "the manifest is the prepared receipt of this exact packet",
                ),
                RunCheck::SnapshotParity => rule(
                    "run::snapshot-parity",
                    Run,
                    &[RunFile("run-manifest.json")],
                    "validation-schema.json has the bytes the manifest pins",
                ),
                RunCheck::Evaluation => rule(
                    "run::evaluation",
                    Run,
                    &[RunFile("raw-output.json")],
                    "the raw output was evaluated, passed, and evaluates the same now",
                ),
                RunCheck::Completion => rule(
                    "run::completion",
                    Run,
                    &[],
                    "completion.json binds the current bytes of every run file and a passing evaluation",
                ),
                RunCheck::ProviderRequest => tested(
                    rule(
                        "run::provider-request",
                        Run,
                        &[RunFile("provider-request.json")],
                        "the request sent to the provider carries exactly the packet's material",
                    ),
                    "tests/cli/attest.rs::verify_checks_a_runs_provider_request",
                ),
                RunCheck::Attestation => tested(
                    rule(
                        "run::attestation",
                        Run,
                        &[TrustedKey],
                        "attestation.json is signed by a trusted key over the run's current files",
                    ),
                    "tests/cli/attest.rs::verify_fails_each_broken_attestation_with_the_reason",
                ),
                RunCheck::StaleTemp => tested(
                    rule("run::stale-temp", Run, &[], "no temp file of a killed step is left in the run"),
                    "tests/cli/hardening/verify.rs::stale_temp_files_are_reported_by_verify_and_cleaned_by_the_next_step",
                ),
            },
            Check::Corpus(check) => match check {
                CorpusCheck::Layout => tested(
                    rule(
                        "corpus::layout",
                        Corpus,
                        &[Suite],
                        "every fixture folder is a case, every golden folder belongs to one, and no golden folder \
                         holds a temp file of a killed bless",
                    ),
                    "tests/cli/corpus.rs::a_fixture_folder_without_request_json_is_named",
                ),
                CorpusCheck::SnapshotParity => tested(
                    rule(
                        "corpus::snapshot-parity",
                        Corpus,
                        &[],
                        "the schema snapshot is what the vendored Builder schema generates",
                    ),
                    "tests/cli/compile.rs::schema_check_fails_after_a_hand_edit_of_the_snapshot",
                ),
                CorpusCheck::UniqueAgentTasks => tested(
                    rule("corpus::unique-agent-tasks", Corpus, &[Suite], "each fresh agent's task id is used by one run"),
                    "crates/packetproof/src/check/mod.rs::a_reused_agent_task_is_named_with_both_cases",
                ),
                CorpusCheck::BranchCoverage => tested(
                    rule(
                        "corpus::branch-coverage",
                        Corpus,
                        &[Suite],
                        "every branch value and value pair has a golden packet",
                    ),
                    "tests/cli/test.rs::branch_coverage_runs_once_the_suite_requires_it",
                ),
                CorpusCheck::MutationSelfTest => rule(
                    "corpus::mutation-self-test",
                    Corpus,
                    &[Suite],
                    "every kind of damage to a golden packet or run is caught by a check that applies",
                ),
            },
            Check::GoldenAgentRequest => tested(
                rule(
                    "golden::agent-request",
                    Path,
                    &[Suite],
                    "a golden agent-request.json is the agent view of the packet beside it",
                ),
                "tests/cli/run/verify.rs::verify_checks_a_golden_agent_request_against_the_packet_beside_it",
            ),
            Check::CompileRequest => tested(
                rule("compile::request", CompileInput, &[], "the compile input is one the reference's validator accepts"),
                "tests/cli/compile.rs::bad_requests_are_refused_with_every_problem_and_nothing_written",
            ),
            Check::WireRequest => tested(
                rule("wire::request", Capture, &[], "a captured provider request carries exactly the packet's material"),
                "tests/wire_check.rs::an_extra_message_is_a_finding",
            ),
            Check::VerifyNothingFound => tested(
                rule("verify::nothing-found", Path, &[], "a path given to verify holds something to check"),
                "crates/packetproof/src/verify.rs::outcomes_come_in_path_order_whatever_the_workers_and_each_json_file_is_read_once",
            ),
            Check::VerifyUnreadable => tested(
                rule("verify::unreadable", Path, &[], "every file verify was given could be read"),
                "tests/cli/hardening/verify.rs::an_unreadable_file_is_exit_2_in_verify_as_in_validate",
            ),
        }
    }

    pub const fn name(self) -> &'static str {
        self.rule().name
    }

    /// The check of this name, if there is one (`expect.toml`, `[checks] skip`).
    pub(crate) fn from_name(name: &str) -> Option<Check> {
        Check::ALL.into_iter().find(|check| check.name() == name)
    }

    /// Every check name, for a message that lists them.
    pub(crate) fn names() -> Vec<&'static str> {
        Check::ALL.map(Check::name).to_vec()
    }
}

impl PacketCheck {
    /// In report order.
    pub(crate) const ALL: [PacketCheck; 9] = [
        PacketCheck::Regenerates,
        PacketCheck::ExactInputHash,
        PacketCheck::Checksum,
        PacketCheck::Contract,
        PacketCheck::BranchIsolation,
        PacketCheck::BranchConsistency,
        PacketCheck::RendersFromInput,
        PacketCheck::ForbiddenMaterial,
        PacketCheck::ProviderShape,
    ];

    pub(crate) const fn name(self) -> &'static str {
        Check::Packet(self).name()
    }
}

impl RunCheck {
    /// In report order.
    pub(crate) const ALL: [RunCheck; 8] = [
        RunCheck::AgentRequest,
        RunCheck::ManifestBinding,
        RunCheck::SnapshotParity,
        RunCheck::Evaluation,
        RunCheck::Completion,
        RunCheck::ProviderRequest,
        RunCheck::Attestation,
        RunCheck::StaleTemp,
    ];

    pub(crate) const fn name(self) -> &'static str {
        Check::Run(self).name()
    }
}

impl CorpusCheck {
    pub(crate) const ALL: [CorpusCheck; 5] = [
        CorpusCheck::Layout,
        CorpusCheck::SnapshotParity,
        CorpusCheck::UniqueAgentTasks,
        CorpusCheck::BranchCoverage,
        CorpusCheck::MutationSelfTest,
    ];

    pub(crate) const fn name(self) -> &'static str {
        Check::Corpus(self).name()
    }
}

impl From<PacketCheck> for Check {
    fn from(check: PacketCheck) -> Check {
        Check::Packet(check)
    }
}

impl From<RunCheck> for Check {
    fn from(check: RunCheck) -> Check {
        Check::Run(check)
    }
}

impl From<CorpusCheck> for Check {
    fn from(check: CorpusCheck) -> Check {
        Check::Corpus(check)
    }
}

macro_rules! named {
    ($($kind:ty),*) => {$(
        impl fmt::Display for $kind {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.name())
            }
        }
    )*};
}
named!(Check, PacketCheck, RunCheck, CorpusCheck);

impl serde::Serialize for Check {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

/// A check that did not run on a target, and why.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Skipped {
    pub(crate) check: Check,
    pub(crate) reason: String,
}

impl fmt::Display for Skipped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}] not applicable: {}", self.check, self.reason)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_check_has_one_distinct_name_and_is_found_by_it() {
        let names = Check::names();
        let mut sorted = names.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), names.len(), "two checks share a name: {names:?}");
        for check in Check::ALL {
            assert_eq!(Check::from_name(check.name()), Some(check));
        }
        assert_eq!(Check::from_name("packet::nope"), None);
    }

    /// A registered check has a negative fixture (expect.toml names it), or names
    /// the test that proves it can fail, and that test exists. The mutation self-test
    /// is the proof of the packet and run checks; its own failure is proven by
    /// `crate::mutation`'s baseline rule only (a gap, said in the README).
    #[test]
    fn rules_are_proven() {
        let root = std::path::Path::new(crate::PROJECT_ROOT);
        let mut declared = String::new();
        for entry in walkdir::WalkDir::new(root.join("fixtures")).into_iter().filter_map(Result::ok) {
            if entry.file_name() == "expect.toml" {
                declared.push_str(&std::fs::read_to_string(entry.path()).unwrap());
            }
        }
        let mut unproven = Vec::new();
        for check in Check::ALL {
            let fixture = declared.contains(&format!("check = \"{}\"", check.name()));
            let test = check.rule().tested_by.is_some_and(|test| {
                let (file, function) = test.split_once("::").unwrap();
                std::fs::read_to_string(root.join(file)).is_ok_and(|text| text.contains(&format!("fn {function}(")))
            });
            if !fixture && !test && check != Check::Corpus(CorpusCheck::MutationSelfTest) {
                unproven.push(check.name());
            }
        }
        assert!(unproven.is_empty(), "registered checks with no negative fixture and no existing test: {unproven:?}");
    }

    #[test]
    fn the_scoped_lists_are_the_registry_in_its_order() {
        let scoped: Vec<Check> = PacketCheck::ALL
            .map(Check::from)
            .into_iter()
            .chain(RunCheck::ALL.map(Check::from))
            .chain(CorpusCheck::ALL.map(Check::from))
            .collect();
        let registered: Vec<Check> = Check::ALL
            .into_iter()
            .filter(|c| matches!(c, Check::Packet(_) | Check::Run(_) | Check::Corpus(_)))
            .collect();
        assert_eq!(scoped, registered);
    }
}
