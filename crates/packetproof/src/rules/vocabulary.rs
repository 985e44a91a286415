//! The words a rule is declared in: what it reads, what it needs, whether a suite
//! may skip it, and at which steps it is not yet due; each with the one name text
//! and JSON give it (derived: kebab-case). The JSON schema and the npm package's
//! types restate the names; `rules::tests` holds them to these enums.

use serde::{Serialize, Serializer};

/// What a check reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::Display, strum::VariantArray)]
#[strum(serialize_all = "kebab-case")]
pub enum Reads {
    /// One runtime packet, whoever made it.
    Packet,
    /// A packet together with the compile request (fixture) it was made from.
    PacketAndRequest,
    /// A run directory (and the packet rebuilt from it).
    Run,
    /// A fixture's run, assembled by the gate, with the fixture's golden files.
    FixtureRun,
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::Display, strum::VariantNames)]
#[strum(serialize_all = "kebab-case")]
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
    #[strum(to_string = "run-file:{0}")]
    RunFile(&'static str),
    /// A key the signature must verify under (`--trusted-key`); without one an
    /// attestation present is still checked, an absent one is not required.
    TrustedKey,
    /// A suite: harness.toml beside fixture and golden folders.
    Suite,
    /// The packet's provider is one harness.toml names: its output mode (text-JSON or
    /// schema) decides the shape.
    ConfiguredProvider,
    /// The suite's contract profile is the block builder's: the rule reads its
    /// renderInput shape, its branch derivation or its templates.
    BlockBuilderProfile,
    /// The packet's resolvedBranch holds only values packetproof's compiler knows (a
    /// value a suite added to a block-builder value set is its own exporter's).
    BuiltinBranchValues,
    /// The packet's agent declares its templates (`[agents.NAME.templates]`), or is the
    /// block builder, whose templates are built in.
    AgentTemplates,
    /// The suite names a Builder schema its snapshot is generated from.
    BuilderSchema,
    /// The suite has a lock file (`bless` writes it).
    Lock,
    /// The evaluator that judges answers can run here: the built-in one, or the suite's
    /// `[evaluator]` where this command runs suite code (not `verify` unless asked).
    EvaluatorRuns,
    /// The suite declares its own `[evaluator]`, and it can run here.
    SuiteEvaluator,
    /// A fixture of the suite with an answer (`run/raw-output.json`) and a golden
    /// packet, so a blessed verdict.
    GoldenVerdict,
}

/// A step that makes what some rule checks (`crate::judge::Step` says which command
/// stands at which).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, strum::VariantNames)]
#[serde(rename_all = "kebab-case")]
#[strum(serialize_all = "kebab-case")]
pub enum Stage {
    /// `evaluate` writes the evaluation.
    Evaluate,
    /// `complete` writes the receipt, and applies `run::evaluation` itself in its stricter
    /// form (the evaluation must record the raw output's checksum).
    Complete,
    /// `attest` signs the run.
    Attest,
    /// `bless` and `export` write what the request makes now.
    Write,
}

/// Whether a suite may skip a rule. A skip of a rule that says `Never` is a
/// settings error naming the reason, so no suite setting weakens it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Skip {
    Allowed,
    Never(&'static str),
}

// In JSON: `"allowed"`, or `{"never": "why"}`.
impl Serialize for Skip {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        match self {
            Skip::Allowed => s.serialize_str("allowed"),
            Skip::Never(why) => {
                let mut map = s.serialize_map(Some(1))?;
                map.serialize_entry("never", why)?;
                map.end()
            }
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

/// Stages as a message or table names them (`evaluate, complete`).
pub(crate) fn stages(stages: &[Stage]) -> String {
    let name = |stage: &Stage| match stage {
        Stage::Evaluate => "evaluate",
        Stage::Complete => "complete",
        Stage::Attest => "attest",
        Stage::Write => "bless and export",
    };
    stages.iter().map(name).collect::<Vec<_>>().join(", ")
}
