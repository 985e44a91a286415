//! What the integration tests share: one way to run the binary (with a clean
//! environment), one temporary-project builder, and one interop gate: a test that
//! reads an absent `../shared` corpus is ignored, with the reason, on a developer's
//! checkout, and fails under CI (CI has the corpora; a shrunken suite must not pass).
#![allow(dead_code)] // each test binary uses its own part of this module

pub mod lifecycle;

use libtest_mimic::{Arguments, Trial};
use std::ffi::OsStr;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Once, OnceLock};

/// The crate root.
pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The variables packetproof reads (`packetproof::env::VARIABLES`): removed from every run so
/// a developer's shell (`CI=1`, `PACKETPROOF_ROOT=…`) cannot change a test's meaning.
pub fn packetproof_variables() -> impl Iterator<Item = &'static str> {
    packetproof::env::VARIABLES.iter().map(|(name, _)| *name)
}

/// The packetproof binary, run from the crate root, with none of its variables
/// set and no standard input.
pub fn bin() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_packetproof"));
    command.current_dir(root()).stdin(Stdio::null());
    for name in packetproof_variables() {
        command.env_remove(name);
    }
    command
}

/// Seconds any one command of a project [`Project::under_timeout`] may take before it
/// counts as a hang.
const HANG: &str = "20";

/// [`bin`] under `timeout` (a hang fails the test instead of stalling it), run in `dir`.
fn bin_under_timeout(dir: &Path) -> Command {
    let mut command = Command::new("timeout");
    command.args(["-k", "2", HANG, env!("CARGO_BIN_EXE_packetproof")]).current_dir(dir).stdin(Stdio::null());
    for name in packetproof_variables() {
        command.env_remove(name);
    }
    command
}

/// The example program `name` (a Rust twin of a worked suite's exporter or evaluator),
/// beside the binary in `target/<profile>/examples`. `cargo test` builds the examples, but
/// a narrower run (`cargo test --test cli`) neither builds a missing one nor rebuilds a
/// stale one; so the first call in a test binary builds them all, offline, into the same
/// target directory and profile (nothing to do when they are fresh), and every call fails
/// when they could not be built.
#[track_caller]
pub fn example(name: &str) -> PathBuf {
    static BUILT: OnceLock<Result<(), String>> = OnceLock::new();
    let profile_dir = Path::new(env!("CARGO_BIN_EXE_packetproof")).parent().unwrap();
    if let Err(e) = BUILT.get_or_init(|| build_examples(profile_dir)) {
        panic!("{e}");
    }
    let program = profile_dir.join("examples").join(name).with_extension(std::env::consts::EXE_EXTENSION);
    assert!(program.is_file(), "`cargo build --examples` made no {}", program.display());
    program
}

/// `cargo build --examples` for the profile whose binaries are in `profile_dir`.
fn build_examples(profile_dir: &Path) -> Result<(), String> {
    let profile = match profile_dir.file_name().and_then(OsStr::to_str) {
        Some("debug") | None => "dev",
        Some(other) => other,
    };
    let built = Command::new(env!("CARGO"))
        .current_dir(root())
        .args(["build", "--offline", "--quiet", "--examples", "--profile", profile, "--target-dir"])
        .arg(profile_dir.parent().unwrap())
        .output()
        .map_err(|e| format!("run cargo: {e}"))?;
    match built.status.success() {
        true => Ok(()),
        false => Err(format!("cargo build --examples: {}", String::from_utf8_lossy(&built.stderr))),
    }
}

/// A finished run: exit code and both streams as text.
#[derive(Debug)]
pub struct Output {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Output {
    /// Everything, for assertion messages.
    pub fn describe(&self) -> String {
        format!("status {}\n--- stdout\n{}\n--- stderr\n{}", self.code, self.stdout, self.stderr)
    }

    /// Everything, for a whole-output snapshot: `project`'s path is written `[project]`,
    /// the crate's `[crate]`, so the snapshot is the same on every machine and run.
    pub fn redacted(&self, project: &Path) -> String {
        redact(&self.describe(), project)
    }

    /// Everything, for a whole-output snapshot of a run with no project of its own: the
    /// crate's path is written `[crate]`.
    pub fn redacted_crate(&self) -> String {
        redact_crate(&self.describe())
    }

    /// Exited by itself (no hang past [`Project::under_timeout`]'s limit, no signal), without a panic.
    #[track_caller]
    pub fn clean(&self) -> &Self {
        assert!(self.code != 124 && self.code != 137 && self.code >= 0, "hung or killed: {}", self.describe());
        assert!(![101, 134].contains(&self.code), "crashed: {}", self.describe());
        assert!(!self.stderr.contains("panicked"), "panicked: {}", self.describe());
        self
    }
}

/// `text` with `project`'s path written `[project]` and the crate's `[crate]`.
pub fn redact(text: &str, project: &Path) -> String {
    redact_crate(&text.replace(&project.display().to_string(), "[project]"))
}

/// `text` with the crate's path written `[crate]`.
pub fn redact_crate(text: &str) -> String {
    text.replace(&root().display().to_string(), "[crate]")
}

impl From<std::process::Output> for Output {
    fn from(out: std::process::Output) -> Output {
        Output {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }
}

/// The one folder of a test binary's snapshots, whatever module takes them:
/// `tests/<binary>/snapshots/` (each file is named after its module and snapshot).
pub fn snapshot_dir() -> PathBuf {
    root().join("tests").join(env!("CARGO_CRATE_NAME")).join("snapshots")
}

/// What changes from run to run in an output, written as a placeholder (insta filters,
/// applied in order after [`Output::redacted`]): digests `sha256:[hash]` (a bare one
/// `[hash]`: a run's completion.json records when it was made), git revisions
/// as packetproof prints them (12 or 40 hex digits) `[rev]`, the count of unchanged
/// cases `[n] unchanged`, the time libtest took `finished in [duration]`.
pub fn snapshot_filters() -> Vec<(&'static str, &'static str)> {
    vec![
        (r"sha256:[0-9a-f]+", "sha256:[hash]"),
        (r"\b[0-9a-f]{64}\b", "[hash]"),
        (r"\b(?:[0-9a-f]{12}|[0-9a-f]{40})\b", "[rev]"),
        (r"\b\d+ unchanged\b", "[n] unchanged"),
        (r"finished in \d+\.\d+s", "finished in [duration]"),
    ]
}

/// Assert the whole output of a run against the snapshot `name` (insta, in
/// `tests/cli/snapshots/`): review a change with `cargo insta review`, or accept it with
/// `INSTA_UPDATE=always cargo test`. `project`'s path is written `[project]` (without one,
/// only the crate's path is redacted), and what changes with every run is written as a
/// placeholder ([`snapshot_filters`]).
#[macro_export]
macro_rules! assert_output_snapshot {
    ($name:expr, $output:expr) => {
        $crate::assert_output_snapshot!(@text $name, $output.redacted_crate())
    };
    // Several runs as one text (each under a heading of the test's own), for one snapshot.
    (text: $name:expr, $text:expr) => {
        $crate::assert_output_snapshot!(@text $name, $crate::support::redact_crate(&$text))
    };
    (text: $name:expr, $text:expr, $project:expr) => {
        $crate::assert_output_snapshot!(@text $name, $crate::support::redact(&$text, $project))
    };
    ($name:expr, $output:expr, $project:expr) => {
        $crate::assert_output_snapshot!(@text $name, $output.redacted($project))
    };
    // The one place the snapshot folder and the filters are set.
    (@text $name:expr, $redacted:expr) => {
        insta::with_settings!({ snapshot_path => $crate::support::snapshot_dir(), filters => $crate::support::snapshot_filters() }, {
            insta::assert_snapshot!($name, $redacted);
        })
    };
}

/// Run `command` to completion.
#[track_caller]
pub fn exec(command: &mut Command) -> Output {
    command.output().expect("run packetproof").into()
}

/// Wait for `child` (started with piped output) to end.
#[track_caller]
pub fn finish(child: Child) -> Output {
    child.wait_with_output().expect("wait for packetproof").into()
}

/// The JSON file at `path`, parsed.
#[track_caller]
pub fn read_json(path: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))).unwrap()
}

/// `value` written to `path` as packetproof writes JSON (canonical, pretty).
#[track_caller]
pub fn write_json(path: &Path, value: &serde_json::Value) {
    std::fs::write(path, packetproof::canonical::to_pretty(value)).unwrap();
}

/// Run the binary with `args` from the crate root (no standard input).
#[track_caller]
pub fn run<I: IntoIterator<Item = S>, S: AsRef<OsStr>>(args: I) -> Output {
    exec(bin().args(args))
}

/// Run the binary with `args`, feeding `input` on standard input.
#[track_caller]
pub fn run_with_stdin<I: IntoIterator<Item = S>, S: AsRef<OsStr>>(args: I, input: &[u8]) -> Output {
    let mut child =
        bin().args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("spawn");
    child.stdin.take().expect("a piped stdin").write_all(input).expect("write standard input");
    child.wait_with_output().expect("run packetproof").into()
}

/// A temporary project: named items of this crate (files or folders) copied into a
/// fresh directory, which every command run through [`Project::bin`] uses as its root.
/// The run lifecycle's projects are in `lifecycle.rs`.
pub struct Project {
    dir: tempfile::TempDir,
    /// Commands run under `timeout`, from the project's folder ([`Project::under_timeout`]).
    guarded: bool,
}

impl Project {
    /// Copy `items` (paths relative to the crate root) into a new project.
    #[track_caller]
    pub fn with(items: &[&str]) -> Project {
        let dir = tempfile::tempdir().expect("a temporary directory");
        for item in items {
            copy_tree(&root().join(item), &dir.path().join(item));
        }
        Project { dir, guarded: false }
    }

    /// An empty project with no harness.toml in it or above it: a place to run
    /// `init` and commands outside any suite ([`Project::run_in`]).
    #[track_caller]
    pub fn empty() -> Project {
        let dir = tempfile::tempdir().expect("a temporary directory");
        assert!(
            dir.path().ancestors().all(|d| !d.join("harness.toml").exists()),
            "the temporary folder must not lie inside a suite"
        );
        Project { dir, guarded: false }
    }

    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    /// The binary run in the folder `relative` with `args`, finding its settings as a
    /// user's shell would (no `PACKETPROOF_ROOT`).
    #[track_caller]
    pub fn run_in(&self, relative: &str, args: &[&str]) -> Output {
        exec(bin().current_dir(self.path(relative)).args(args))
    }

    /// `packetproof init suite` here; returns the suite's path.
    #[track_caller]
    pub fn init(&self) -> PathBuf {
        let out = self.run_in("", &["init", "suite"]);
        assert_eq!(out.code, 0, "{}", out.describe());
        self.path("suite")
    }

    pub fn path(&self, relative: &str) -> PathBuf {
        self.dir.path().join(relative)
    }

    /// Every command run under `timeout` from now on, so a hang fails the test instead of
    /// stalling it (the hardening tests), and from the project's folder.
    pub fn under_timeout(mut self) -> Project {
        self.guarded = true;
        self
    }

    /// The binary with this project as `PACKETPROOF_ROOT`.
    pub fn bin(&self) -> Command {
        let mut command = match self.guarded {
            false => bin(),
            true => bin_under_timeout(self.root()),
        };
        command.env("PACKETPROOF_ROOT", self.root());
        command
    }

    #[track_caller]
    pub fn run(&self, args: &[&str]) -> Output {
        exec(self.bin().args(args))
    }

    /// The binary started with `args`, its output piped ([`finish`] waits for it).
    #[track_caller]
    pub fn spawn(&self, args: &[&str]) -> Child {
        self.bin().args(args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("start packetproof")
    }

    /// A suite of a test's own: this crate's harness.toml and templates, the requests of
    /// the fixtures `cases`, and an empty golden folder ([`Project::blessed`] fills it).
    ///
    /// Tests use packets compiled by the templates of the tree they run in, never the
    /// repository's golden files: only the conformance gate (tests/conformance.rs)
    /// depends on those being current, so a template edit fails the gate alone, with
    /// its bless hint. tests/tidy.rs (`tests_own_their_packets`) holds every test to it.
    #[track_caller]
    pub fn suite(cases: &[&str]) -> Project {
        let project = Project::with(&SUITE_SOURCES);
        for case in cases {
            let request = format!("fixtures/{case}/request.json");
            copy_tree(&root().join(&request), &project.path(&request));
        }
        project.corpus_folders()
    }

    /// [`Project::suite`] with every fixture of this crate, whole (expectations, runs,
    /// the negative cases' own packets).
    #[track_caller]
    pub fn corpus() -> Project {
        let project = Project::with(&SUITE_SOURCES);
        copy_tree(&root().join("fixtures"), &project.path("fixtures"));
        project.corpus_folders()
    }

    /// Every corpus folder harness.toml names exists (a missing one is an error, never created).
    fn corpus_folders(self) -> Project {
        for folder in ["fixtures", "golden"] {
            std::fs::create_dir_all(self.path(folder)).unwrap();
        }
        self
    }

    /// Sign a gate statement over the suite (`test --attest` with the test key, owner-only)
    /// at `statement`, relative to the project; the run must pass.
    #[track_caller]
    pub fn sign_gate(&self, statement: &str) {
        let key = self.path("owner-only.pem");
        std::fs::copy(root().join("tests/keys/test-ed25519.pem"), &key).unwrap();
        std::fs::set_permissions(&key, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
        let signed =
            self.run_in("", &["test", "--attest", "owner-only.pem", "--attestation", statement, "--allow-dirty"]);
        assert_eq!(signed.code, 0, "{}", signed.describe());
    }

    /// Golden files for this suite's fixtures, blessed now from its templates.
    #[track_caller]
    pub fn blessed(self) -> Project {
        let out = self.run(&["bless"]);
        assert_eq!(out.code, 0, "bless: {}", out.describe());
        self
    }
}

/// What a suite of a test's own copies from this crate: its settings and templates.
const SUITE_SOURCES: [&str; 2] = ["harness.toml", "references"];

/// The packet of the corpus case `case` as this crate's templates compile its fixture's
/// request now, in process: the bytes `export` prints and `bless` writes, parsed. For
/// tests that take a packet apart or edit it (see [`Project::suite`] for why not the
/// golden file).
#[track_caller]
pub fn compiled_packet(case: &str) -> serde_json::Value {
    let config =
        packetproof::Invocation::from(packetproof::Config::load(root(), None).unwrap_or_else(|e| panic!("{e}")));
    let file = root().join("fixtures").join(case).join("request.json");
    let request = std::fs::read(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let request = packetproof::canonical::parse(&request).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    packetproof::compile::compile(&request, &config, case).unwrap_or_else(|e| panic!("{case}: {e}"))
}

/// [`compiled_packet`] written as `dir/<case>.json`, byte for byte as `export` writes it; its path.
#[track_caller]
pub fn packet_file(dir: &Path, case: &str) -> PathBuf {
    let path = dir.join(format!("{case}.json"));
    std::fs::write(&path, packetproof::canonical::to_pretty(&compiled_packet(case))).unwrap();
    path
}

/// Copy a file, or a folder recursively.
#[track_caller]
pub fn copy_tree(from: &Path, to: &Path) {
    if from.is_dir() {
        std::fs::create_dir_all(to).unwrap();
        for entry in std::fs::read_dir(from).unwrap() {
            let entry = entry.unwrap();
            copy_tree(&entry.path(), &to.join(entry.file_name()));
        }
    } else {
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::copy(from, to).unwrap_or_else(|e| panic!("copy {}: {e}", from.display()));
    }
}

/// The Node implementation's samples (read only). CI has them; a checkout may not.
pub fn interop_dir() -> PathBuf {
    root().join("../shared/interop")
}

pub fn interop_present() -> bool {
    interop_dir().join("runtime-packet.anthropic.json").is_file()
}

/// `module::name` for a test function of `module_path` (the binary's own name dropped).
pub fn test_name(module_path: &str, name: &str) -> String {
    match module_path.split_once("::") {
        Some((_, module)) => format!("{module}::{name}"),
        None => name.to_owned(),
    }
}

/// Under CI, as packetproof reads `CI` (an unreadable value counts as CI: the strict side).
pub fn under_ci() -> bool {
    packetproof::env::Env::current().map_or(true, |env| env.ci)
}

/// The interop gate: `trial` (which reads `corpus`) when `present`; otherwise a trial
/// of the same name that says why: ignored on a developer's checkout (said once on
/// stderr), failed under CI.
pub fn interop_gate(trial: Trial, present: bool, corpus: &Path) -> Trial {
    let ci = under_ci();
    if !present && !ci {
        static SAID: Once = Once::new();
        SAID.call_once(|| eprintln!("interop tests are ignored: {} is absent", corpus.display()));
    }
    gate(ci, trial, present, corpus)
}

/// [`interop_gate`] with CI given, and silent.
pub fn gate(ci: bool, trial: Trial, present: bool, corpus: &Path) -> Trial {
    if present {
        return trial.with_kind("interop");
    }
    let name = trial.name().to_owned();
    let why = format!("{} is absent", corpus.display());
    if ci {
        let message = format!("{why}: CI runs every interop test (set CI only where ../shared exists)");
        return Trial::test(name, move || Err(message.into())).with_kind("interop");
    }
    Trial::test(name, || Ok(())).with_kind("interop").with_ignored_flag(true)
}

/// A test that reads `../shared/interop`, through [`interop_gate`].
pub fn needs_interop(name: String, test: fn()) -> Trial {
    interop_gate(trial(name, test), interop_present(), &interop_dir())
}

/// A data-driven suite (datatest-stable) whose `corpus` is absent: one trial named
/// `name`, through [`interop_gate`] (datatest-stable refuses an empty root and
/// cannot mark a test ignored). Returns the suite's exit status.
pub fn absent_corpus(name: &str, corpus: &Path) -> std::process::ExitCode {
    let trial = interop_gate(Trial::test(name, || Ok(())), false, corpus);
    libtest_mimic::run(&Arguments::from_args(), vec![trial]).exit_code()
}

/// A plain test (a function that panics on failure) as a trial, its duration recorded
/// for [`slowest`].
pub fn trial(name: String, test: fn()) -> Trial {
    let timed = name.clone();
    Trial::test(name, move || {
        let start = std::time::Instant::now();
        test();
        DURATIONS.lock().unwrap_or_else(|e| e.into_inner()).push((timed, start.elapsed()));
        Ok(())
    })
}

/// Each passed trial of [`trial`] and how long it took.
static DURATIONS: std::sync::Mutex<Vec<(String, std::time::Duration)>> = std::sync::Mutex::new(Vec::new());

/// The `n` slowest trials that passed, as lines for the end of a run (slowest first), and
/// the time all of them took: what a contributor waits for, and where it goes.
pub fn slowest(n: usize) -> Vec<String> {
    let mut all = DURATIONS.lock().unwrap_or_else(|e| e.into_inner()).clone();
    all.sort_by_key(|(_, d)| std::cmp::Reverse(*d));
    let total: std::time::Duration = all.iter().map(|(_, d)| *d).sum();
    let mut lines = vec![format!("{} trials took {:.1} s in all; the {n} slowest:", all.len(), total.as_secs_f64())];
    lines.extend(all.iter().take(n).map(|(name, d)| format!("{:>8.2} s  {name}", d.as_secs_f64())));
    lines
}

/// `test` as a trial named `name` of `module`, through [`needs`] `program` (whose
/// `--version` must run): a live test of an exporter in that language.
pub fn trial_needing(program: &str, module: &str, name: &str, test: fn()) -> Trial {
    needs(program, missing_program(program), trial(test_name(module, name), test))
}

/// Why `program` cannot be run here (`program --version` fails), if it cannot.
pub fn missing_program(program: &str) -> Option<String> {
    let runs = Command::new(program).arg("--version").output().is_ok_and(|o| o.status.success());
    (!runs).then(|| format!("{program} not found"))
}

/// The variable in which CI names what it does not install, each with why:
/// `NEED: why; NEED: why` (`.ci/run` sets it).
pub const WITHOUT: &str = "PACKETPROOF_TESTS_WITHOUT";

/// One policy for every test that needs what a machine may lack (a program, a package,
/// a browser), named `need`: with it (`missing` is `None`) the trial runs; without it on
/// a developer's machine the trial is ignored and the reason said once on stderr; without
/// it under CI the trial fails, unless CI names `need` in [`WITHOUT`] with why it does not
/// install it (then it is ignored with that reason). So CI installs what the tests need
/// or says why not, and a test cannot pass there by being skipped unseen.
pub fn needs(need: &str, missing: Option<String>, trial: Trial) -> Trial {
    needs_under(under_ci(), std::env::var(WITHOUT).ok().as_deref(), need, missing, trial)
}

/// [`needs`] with CI and [`WITHOUT`]'s value given.
pub fn needs_under(ci: bool, without: Option<&str>, need: &str, missing: Option<String>, trial: Trial) -> Trial {
    let Some(why) = missing else { return trial };
    let name = trial.name().to_owned();
    let kind = trial.kind().to_owned();
    let declined = without.and_then(|list| declined(list, need));
    let said = |reason: &str| {
        static SAID: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
        let mut said = SAID.lock().unwrap_or_else(|e| e.into_inner());
        if !said.iter().any(|n| n == need) {
            said.push(need.to_owned());
            eprintln!("tests needing {need} are ignored: {reason}");
        }
    };
    match (ci, declined) {
        (true, None) => {
            let message = format!("{why}: CI must install {need} for this test, or name it in {WITHOUT} with why not");
            Trial::test(name, move || Err(message.into())).with_kind(kind)
        }
        (true, Some(reason)) => {
            said(&format!("{why}; CI does not install it: {reason}"));
            Trial::test(name, || Ok(())).with_kind(kind).with_ignored_flag(true)
        }
        (false, _) => {
            said(&why);
            Trial::test(name, || Ok(())).with_kind(kind).with_ignored_flag(true)
        }
    }
}

/// Why `list` (as [`WITHOUT`] holds it) says `need` is not installed, if it names it.
fn declined(list: &str, need: &str) -> Option<String> {
    list.split(';')
        .filter_map(|entry| entry.split_once(':'))
        .find_map(|(name, why)| (name.trim() == need && !why.trim().is_empty()).then(|| why.trim().to_owned()))
}

/// packetproof run in `dir` (a suite's folder, found as a user's shell would find it).
pub fn run_in(dir: &Path, args: &[&str]) -> Output {
    exec(bin().current_dir(dir).args(args))
}

/// `trials![a, b]`: the functions `a` and `b` as trials named after them.
#[macro_export]
macro_rules! trials {
    ($($name:ident),* $(,)?) => {
        vec![$($crate::support::trial($crate::support::test_name(module_path!(), stringify!($name)), $name)),*]
    };
}

/// `interop_trials![a, b]`: the same, ignored when `../shared/interop` is absent.
#[macro_export]
macro_rules! interop_trials {
    ($($name:ident),* $(,)?) => {
        vec![$($crate::support::needs_interop($crate::support::test_name(module_path!(), stringify!($name)), $name)),*]
    };
}

/// Run git in `dir` as a test author (no signing, a fixed identity); panics on failure.
#[track_caller]
pub fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .current_dir(dir)
        .args(["-c", "user.name=packetproof", "-c", "user.email=test@example.invalid", "-c", "commit.gpgsign=false"])
        .args(args)
        .output()
        .expect("run git");
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}
