//! The rule book: every check packetproof has, declared once. A finding carries
//! its [`Check`], never a string; each check's entry in [`Check::rule`] says its
//! name, what it reads, what it needs before it can apply, and what it proves.
//! Commands do not list checks of their own: they ask the one engine
//! (`crate::judge`), which decides from these declarations whether a rule applies
//! and runs it, or reports it skipped with the reason.
//!
//! Adding a check is three steps: its declaration (a variant and its arm in
//! [`Check::rule`]), its function (the arm in `judge::dispatch`, a `match` the
//! compiler holds exhaustive), and its negative proof (a fixture whose expect.toml
//! names it, a mutation it must catch, or the test named in `tested_by`). Every list
//! of checks is derived from the enums; `rules_are_proven` fails for a check with
//! no proof, and a test fails when docs/rules.md's rule table is not this book.

mod vocabulary;

use serde::Serialize;
use std::fmt;
use strum::VariantArray;

pub(crate) use vocabulary::stages;
pub use vocabulary::{Need, Reads, Skip, Stage};

/// Every named check. [`Check::name`] is what findings print as `[check]`, what
/// the conformance runner names its tests (`<fixture>::<check>`), and what
/// `expect.toml` and `[checks] skip` refer to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Check {
    Packet(PacketCheck),
    Run(RunCheck),
    Corpus(CorpusCheck),
    Input(InputCheck),
}

/// Checks of what a command was given, judged by the command that reads it: no
/// suite can skip them (a skip would change nothing but the verdict).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, VariantArray)]
pub enum InputCheck {
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
    /// `--gate`: the packet is a subject of a valid gate statement from a trusted key.
    GateVouched,
}

/// Checks of one runtime packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, VariantArray)]
pub enum PacketCheck {
    Regenerates,
    ExactInputHash,
    Checksum,
    Contract,
    BranchIsolation,
    BranchConsistency,
    RendersFromInput,
    TemplateConformance,
    ForbiddenMaterial,
    ProviderShape,
}

/// Checks of one run directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, VariantArray)]
pub enum RunCheck {
    AgentRequest,
    ManifestBinding,
    SnapshotParity,
    Evaluation,
    EvaluatorVerdict,
    Completion,
    ProviderRequest,
    Attestation,
    StaleTemp,
}

/// Checks over the whole fixture corpus.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, VariantArray)]
pub enum CorpusCheck {
    Layout,
    SnapshotParity,
    UniqueAgentTasks,
    BranchCoverage,
    MutationSelfTest,
    Lock,
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
    /// Whether a suite's `[checks] skip` may turn it off.
    pub(crate) skip: Skip,
    /// The steps at which the rule is not yet due: the step makes what it checks, or
    /// applies it itself.
    pub(crate) not_due_at: &'static [Stage],
}

/// Why the integrity rules are never skipped.
const INTEGRITY: &str =
    "it binds the verdict to these exact bytes: without it no other rule is about what the model received";
/// Why the rules of a run's receipts are never skipped.
const RECEIPT: &str =
    "a run's receipts prove what was prepared, sent, answered and signed; a receipt left unchecked proves nothing";
/// Why the checks of a command's own input are never skipped.
const INPUT: &str = "it judges what the command was given: a skip would change nothing but the verdict";

const fn rule(name: &'static str, reads: Reads, needs: &'static [Need], proves: &'static str) -> Rule {
    Rule { name, reads, needs, proves, tested_by: None, skip: Skip::Allowed, not_due_at: &[] }
}

const fn waits(rule: Rule, stages: &'static [Stage]) -> Rule {
    Rule { not_due_at: stages, ..rule }
}

const fn tested(rule: Rule, test: &'static str) -> Rule {
    Rule { tested_by: Some(test), ..rule }
}

const fn locked(rule: Rule, why: &'static str) -> Rule {
    Rule { skip: Skip::Never(why), ..rule }
}

/// `N` checks: every variant of each group, in the groups' order (a const loop:
/// the list is derived from the enums, never kept by hand).
const fn all_checks<const N: usize>() -> [Check; N] {
    let mut all = [Check::Input(InputCheck::VerifyUnreadable); N];
    let mut i = 0;
    macro_rules! take {
        ($group:ident, $variant:path) => {
            let mut j = 0;
            while j < $group::VARIANTS.len() {
                all[i] = $variant($group::VARIANTS[j]);
                i += 1;
                j += 1;
            }
        };
    }
    take!(PacketCheck, Check::Packet);
    take!(RunCheck, Check::Run);
    take!(CorpusCheck, Check::Corpus);
    take!(InputCheck, Check::Input);
    assert!(i == N, "Check::COUNT is not the number of variants");
    all
}

impl Check {
    const COUNT: usize = PacketCheck::VARIANTS.len()
        + RunCheck::VARIANTS.len()
        + CorpusCheck::VARIANTS.len()
        + InputCheck::VARIANTS.len();

    /// Every check, in report order.
    pub const ALL: [Check; Check::COUNT] = all_checks();

    /// The rule book's entry: the one place a check is declared.
    pub(crate) const fn rule(self) -> Rule {
        use Need::*;
        use Reads::*;
        match self {
            Check::Packet(check) => match check {
                PacketCheck::Regenerates => waits(
                    rule(
                        "packet::regenerates",
                        PacketAndRequest,
                        &[Request, Producer],
                        "the packet is byte for byte what its request makes now (packetproof's compiler or the suite's exporter)",
                    ),
                    &[Stage::Write],
                ),
                PacketCheck::ExactInputHash => locked(
                    rule("packet::exact-input-hash", Packet, &[], "exactInputHash is the sha256 of what the model receives"),
                    INTEGRITY,
                ),
                PacketCheck::Checksum => locked(rule("packet::checksum", Packet, &[], "checksum binds the whole packet"), INTEGRITY),
                PacketCheck::Contract => {
                    rule("packet::contract", Packet, &[], "fields, fixed values, types and model limits are the contract's")
                }
                PacketCheck::BranchIsolation => rule(
                    "packet::branch-isolation",
                    PacketAndRequest,
                    &[Request, BlockBuilderProfile, BuiltinBranchValues],
                    "only the branch the request resolves to rendered: no excluded request text (and, for packets of \
                     this suite's templates, no line of an unrendered template)",
                ),
                PacketCheck::BranchConsistency => rule(
                    "packet::branch-consistency",
                    Packet,
                    &[BlockBuilderProfile],
                    "resolvedBranch is what the packet's own renderInput implies",
                ),
                PacketCheck::RendersFromInput => rule(
                    "packet::renders-from-input",
                    Packet,
                    &[BlockBuilderProfile, BuiltinBranchValues, SuiteTemplates],
                    "the prompts are this suite's templates rendered over the packet's own renderInput",
                ),
                PacketCheck::TemplateConformance => rule(
                    "packet::template-conformance",
                    Packet,
                    &[AgentTemplates],
                    "the prompts are a rendering of the agent's templates, every slot in its contract and free of \
                     forbidden material, judged as trace, serve and wire --check --gate judge a production call",
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
            Check::Run(check) => {
                let declared = match check {
                RunCheck::AgentRequest => rule(
                    "run::agent-request",
                    Run,
                    &[RunFile("agent-request.json")],
                    "agent-request.json is exactly the agent view of the run's packet (which the packet rules judge)",
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
                RunCheck::Evaluation => waits(
                    rule(
                        "run::evaluation",
                        Run,
                        &[RunFile("raw-output.json"), EvaluatorRuns],
                        "the raw output was evaluated, passed, and evaluates the same now",
                    ),
                    &[Stage::Evaluate, Stage::Complete],
                ),
                RunCheck::EvaluatorVerdict => tested(
                    rule(
                        "run::evaluator-verdict",
                        FixtureRun,
                        &[SuiteEvaluator, GoldenVerdict],
                        "the suite's evaluator gives the fixture's answer its blessed verdict (and fails at the stage \
                         a negative fixture declares)",
                    ),
                    "tests/cli/evaluator.rs::a_new_evaluator_rule_is_red_until_the_maintainer_declares_it_and_blesses",
                ),
                RunCheck::Completion => waits(
                    rule(
                        "run::completion",
                        Run,
                        &[],
                        "completion.json binds the current bytes of every run file and a passing evaluation",
                    ),
                    &[Stage::Evaluate, Stage::Complete],
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
                RunCheck::Attestation => waits(
                    tested(
                        rule(
                            "run::attestation",
                            Run,
                            &[TrustedKey],
                            "attestation.json is signed by a trusted key over the run's current files",
                        ),
                        "tests/cli/attest.rs::verify_fails_each_broken_attestation_with_the_reason",
                    ),
                    &[Stage::Evaluate, Stage::Complete, Stage::Attest],
                ),
                RunCheck::StaleTemp => tested(
                    rule("run::stale-temp", Run, &[], "no temp file of a killed step is left in the run"),
                    "tests/cli/hardening/verify.rs::stale_temp_files_are_reported_by_verify_and_cleaned_by_the_next_step",
                ),
                };
                // Whether the answer passes is the suite's evaluator's business; the
                // receipts around it are not.
                match check {
                    RunCheck::Evaluation | RunCheck::EvaluatorVerdict => declared,
                    _ => locked(declared, RECEIPT),
                }
            }
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
                        &[BuilderSchema],
                        "the schema snapshot is the same JSON as the suite's Builder schema it is generated from",
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
                CorpusCheck::Lock => tested(
                    rule(
                        "corpus::lock",
                        Corpus,
                        &[Suite, Lock],
                        "the files the suite's packets depend on (schema, templates, `[exporter] files`) have the digests \
                         the last bless pinned in packetproof.lock",
                    ),
                    "tests/cli/profile.rs::an_edited_schema_is_red_until_bless_pins_it",
                ),
            },
            Check::Input(check) => locked(
                match check {
                    InputCheck::GoldenAgentRequest => tested(
                        rule(
                            "golden::agent-request",
                            Path,
                            &[Suite],
                            "a golden agent-request.json is the agent view of the packet beside it",
                        ),
                        "tests/cli/run/verify.rs::verify_checks_a_golden_agent_request_against_the_packet_beside_it",
                    ),
                    InputCheck::CompileRequest => tested(
                        rule(
                            "compile::request",
                            CompileInput,
                            &[],
                            "the compile input is one the reference's validator accepts",
                        ),
                        "tests/cli/compile.rs::bad_requests_are_refused_with_every_problem_and_nothing_written",
                    ),
                    InputCheck::WireRequest => tested(
                        rule(
                            "wire::request",
                            Capture,
                            &[],
                            "a captured provider request carries exactly the packet's material",
                        ),
                        "tests/wire_check.rs::an_extra_message_is_a_finding",
                    ),
                    InputCheck::VerifyNothingFound => tested(
                        rule("verify::nothing-found", Path, &[], "a path given to verify holds something to check"),
                        "crates/packetproof/src/verify.rs::outcomes_come_in_path_order_whatever_the_workers_and_each_json_file_is_read_once",
                    ),
                    InputCheck::VerifyUnreadable => tested(
                        rule("verify::unreadable", Path, &[], "every file verify was given could be read"),
                        "tests/cli/hardening/verify.rs::an_unreadable_file_is_exit_2_in_verify_as_in_validate",
                    ),
                    InputCheck::GateVouched => tested(
                        rule(
                            "gate::vouched",
                            Path,
                            &[],
                            "the packet is one a green gate, signed by a trusted key, vouched for",
                        ),
                        "tests/cli/gate.rs::a_rehashed_packet_the_gate_never_vouched_for_fails",
                    ),
                },
                INPUT,
            ),
        }
    }

    pub const fn name(self) -> &'static str {
        self.rule().name
    }

    /// `Err(why not)` when no suite may skip this check.
    pub(crate) const fn skippable(self) -> Result<(), &'static str> {
        match self.rule().skip {
            Skip::Allowed => Ok(()),
            Skip::Never(why) => Err(why),
        }
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
    /// In report order (the enum's own order).
    pub(crate) const ALL: &'static [PacketCheck] = <PacketCheck as VariantArray>::VARIANTS;

    pub(crate) const fn name(self) -> &'static str {
        Check::Packet(self).name()
    }
}

impl RunCheck {
    /// In report order (the enum's own order).
    pub(crate) const ALL: &'static [RunCheck] = <RunCheck as VariantArray>::VARIANTS;

    pub(crate) const fn name(self) -> &'static str {
        Check::Run(self).name()
    }
}

impl CorpusCheck {
    /// In report order (the enum's own order).
    pub(crate) const ALL: &'static [CorpusCheck] = <CorpusCheck as VariantArray>::VARIANTS;

    pub(crate) const fn name(self) -> &'static str {
        Check::Corpus(self).name()
    }
}

impl InputCheck {
    pub(crate) const fn name(self) -> &'static str {
        Check::Input(self).name()
    }
}

impl From<InputCheck> for Check {
    fn from(check: InputCheck) -> Check {
        Check::Input(check)
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
named!(Check, PacketCheck, RunCheck, CorpusCheck, InputCheck);

impl serde::Serialize for Check {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

/// A check that did not run on a target, and why.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Skipped {
    pub check: Check,
    pub reason: String,
}

impl fmt::Display for Skipped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}] not applicable: {}", self.check, self.reason)
    }
}

#[cfg(test)]
mod tests;
