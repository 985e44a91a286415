//! One rule for every output option: for each command that writes a
//! file it is told to (`wire --out`, `export --out`, `attest --out`,
//! `evaluate --report`, `test --junit`, `test --attestation`, `serve --findings`), every kind of existing target is tried
//! (a run's file, the command's own input, harness.toml, a symlink, a directory,
//! a FIFO, a device when root can make one, a new file inside another run
//! directory) and the whole tree, bytes and metadata, must be unchanged; a fresh
//! path outside any run must be the only change.

use super::*;
use libtest_mimic::Trial;
use std::collections::BTreeMap;
use std::io::BufRead;
use std::os::unix::fs::{MetadataExt, PermissionsExt};

pub fn trials() -> Vec<Trial> {
    trials![
        no_output_option_changes_anything_but_its_own_new_file,
        test_junit_never_replaces_the_suites_files,
        serve_findings_go_to_a_new_file_or_its_own,
        prepare_never_makes_a_run_inside_another_or_in_a_golden_folder
    ]
}

/// What a path is, and everything about it a write could change.
#[derive(Debug, PartialEq, Eq)]
struct Entry {
    kind: &'static str,
    mode: u32,
    len: u64,
    mtime: (i64, i64),
    ino: u64,
    content: Vec<u8>,
}

/// Every path under `root` (symlinks not followed) with its metadata and, for
/// regular files, its bytes (symlinks: their target).
fn snapshot_tree(root: &Path) -> BTreeMap<PathBuf, Entry> {
    let mut out = BTreeMap::new();
    for entry in walkdir::WalkDir::new(root).sort_by_file_name() {
        let entry = entry.unwrap();
        let meta = entry.path().symlink_metadata().unwrap();
        let file_type = meta.file_type();
        let content = if file_type.is_file() {
            std::fs::read(entry.path()).unwrap()
        } else if file_type.is_symlink() {
            std::fs::read_link(entry.path()).unwrap().into_os_string().into_encoded_bytes()
        } else {
            Vec::new()
        };
        let kind = packetproof::fsutil::kind(&file_type);
        // A directory's own times change when an entry is added and removed
        // (a refused temp file); its entries are compared one by one instead.
        let (len, mtime) =
            if file_type.is_dir() { (0, (0, 0)) } else { (meta.len(), (meta.mtime(), meta.mtime_nsec())) };
        out.insert(
            entry.path().to_path_buf(),
            Entry { kind, mode: meta.permissions().mode(), len, mtime, ino: meta.ino(), content },
        );
    }
    out
}

/// The differences between two snapshots, as lines.
fn changes(before: &BTreeMap<PathBuf, Entry>, after: &BTreeMap<PathBuf, Entry>) -> Vec<String> {
    let mut out = Vec::new();
    for (path, entry) in before {
        match after.get(path) {
            None => out.push(format!("removed {}", path.display())),
            Some(now) if now != entry => out.push(format!("changed {}: {entry:?} -> {now:?}", path.display())),
            _ => {}
        }
    }
    out.extend(after.keys().filter(|p| !before.contains_key(*p)).map(|p| format!("added {}", p.display())));
    out
}

/// The existing targets every output option is tried on, beside `input`.
fn targets(root: &Path, run_file: &Path, other_run: &Path, input: &Path) -> Vec<(&'static str, PathBuf)> {
    std::fs::write(root.join("notes.txt"), b"not an output\n").unwrap();
    let link = root.join("link.json");
    if link.symlink_metadata().is_err() {
        std::os::unix::fs::symlink(root.join("notes.txt"), &link).unwrap();
    }
    std::fs::create_dir_all(root.join("a-directory.json")).unwrap();
    let fifo = root.join("fifo.json");
    if fifo.symlink_metadata().is_err() {
        mkfifo(&fifo);
    }
    let mut out = vec![
        ("a run's file", run_file.to_path_buf()),
        ("the input itself", input.to_path_buf()),
        ("harness.toml", root.join("harness.toml")),
        ("a symlink", link),
        ("a directory", root.join("a-directory.json")),
        ("a FIFO", fifo),
        ("a new file inside another run", other_run.join("new-output.json")),
        ("an existing file of another kind", root.join("notes.txt")),
    ];
    let device = root.join("device.json");
    let made = device.symlink_metadata().is_ok()
        || (is_root()
            && rustix::fs::mknodat(
                rustix::fs::CWD,
                &device,
                rustix::fs::FileType::CharacterDevice,
                rustix::fs::Mode::from(0o666),
                rustix::fs::makedev(1, 3),
            )
            .is_ok());
    if made {
        out.push(("a device", device));
    }
    out
}

/// Try `args` (with `{out}` replaced) on every target: each is refused with exit 2
/// and the tree does not change; then on a fresh path, the one file that appears.
#[track_caller]
fn check_command(
    label: &str,
    root: &Path,
    run: impl Fn(&[String]) -> Output,
    args: &[&str],
    targets: &[(&str, PathBuf)],
) {
    let with = |out: &Path| -> Vec<String> {
        args.iter().map(|a| if *a == "{out}" { s(out).to_owned() } else { (*a).to_owned() }).collect()
    };
    for (kind, target) in targets {
        let before = snapshot_tree(root);
        let out = run(&with(target));
        out.clean();
        let changed = changes(&before, &snapshot_tree(root));
        assert!(
            changed.is_empty(),
            "{label} onto {kind} ({}) changed the tree: {changed:#?}\n{}",
            target.display(),
            out.describe()
        );
        assert_eq!(out.code, 2, "{label} onto {kind} ({}) was not refused: {}", target.display(), out.describe());
        assert!(out.stderr.contains("refused"), "{label} onto {kind}: {}", out.describe());
    }
    let fresh = root.join("outputs").join(format!("{}.out", label.replace(' ', "-")));
    std::fs::create_dir_all(fresh.parent().unwrap()).unwrap();
    let before = snapshot_tree(root);
    let out = run(&with(&fresh));
    assert!(out.code == 0 || out.code == 1, "{label} onto a fresh path: {}", out.describe());
    let changed = changes(&before, &snapshot_tree(root));
    assert_eq!(changed, vec![format!("added {}", fresh.display())], "{label}: {}", out.describe());
}

fn private_key(root: &Path) -> PathBuf {
    let key = root.join("signing.pem");
    std::fs::copy(support::root().join("tests/keys/test-ed25519.pem"), &key).unwrap();
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
    key
}

fn no_output_option_changes_anything_but_its_own_new_file() {
    let project = Project::lifecycle().under_timeout();
    let root = project.root();
    let own = project.completed("own", "T-own");
    let other = project.completed("other", "T-other");
    let packet = project.packet("anthropic", "out");
    let request = root.join("request.json");
    std::fs::copy(support::root().join("fixtures/anthropic-staged-alone-default/request.json"), &request).unwrap();
    // export compiles with the project's prompt templates.
    for entry in walkdir::WalkDir::new(support::root().join("references/prompts")) {
        let entry = entry.unwrap();
        let to = root.join(entry.path().strip_prefix(support::root()).unwrap());
        match entry.file_type().is_dir() {
            true => std::fs::create_dir_all(&to).unwrap(),
            false => drop(std::fs::copy(entry.path(), &to).unwrap()),
        }
    }
    let key = private_key(root);
    let answer = root.join("answer.json");
    write_json(&answer, &good_output());
    let run_file = other.join("completion.json");
    let run = |args: &[String]| {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        project.run(&args)
    };
    let commands: [(&str, Vec<&str>, &Path); 4] = [
        ("wire --out", vec!["wire", "--packet", s(&packet), "--api", "anthropic", "--out", "{out}"], &packet),
        ("export --out", vec!["export", "--request", s(&request), "--out", "{out}"], &request),
        ("attest --out", vec!["attest", s(&own), "--key", s(&key), "--out", "{out}"], &key),
        (
            "evaluate --report",
            vec!["evaluate", "--run-dir", s(&own), "--output", s(&answer), "--report", "{out}"],
            &answer,
        ),
    ];
    for (label, args, input) in &commands {
        let targets = targets(root, &run_file, &other, input);
        check_command(label, root, run, args, &targets);
    }
}

fn test_junit_never_replaces_the_suites_files() {
    let suite = tempfile::tempdir().unwrap();
    let root = suite.path();
    let init = Command::new(BIN).args(["init", s(root)]).env_remove("PACKETPROOF_ROOT").output().unwrap();
    assert!(init.status.success(), "init: {}", String::from_utf8_lossy(&init.stderr));
    let case =
        std::fs::read_dir(root.join("fixtures")).unwrap().map(|e| e.unwrap().path()).find(|p| p.join("run").is_dir());
    let case = case.expect("init writes a fixture with a run");
    let request = case.join("request.json");
    let golden = root.join("golden").join(case.file_name().unwrap());
    let run = |args: &[String]| {
        let mut cmd = Command::new("timeout");
        cmd.args(["-k", "2", "120", BIN]).args(args).current_dir(root).env("PACKETPROOF_ROOT", root);
        cmd.env_remove("CI").env_remove("PACKETPROOF_BLESS").stdin(Stdio::null());
        finish(cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap())
    };
    let targets = targets(root, &golden.join("runtime-packet.json"), &golden, &request);
    let args = ["test", "corpus::layout", "--junit", "{out}"];
    check_command("test --junit", root, run, &args, &targets);
    // The signed gate statement: the whole gate runs, and it writes one new file or nothing.
    let key = private_key(root);
    let args = ["test", "--attest", s(&key), "--attestation", "{out}"];
    check_command("test --attestation", root, run, &args, &targets);
}

/// `serve --findings`: refused at the start (exit 2, nothing changed) onto every other
/// kind of target; on a fresh path the file it appends to is the one change.
fn serve_findings_go_to_a_new_file_or_its_own() {
    let project = Project::lifecycle().under_timeout();
    let root = project.root();
    let other = project.completed("other", "T-other");
    let packet = project.packet("openai", "served");
    let run = |args: &[String]| {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        serve_until_listening(&project, &args)
    };
    let args = ["serve", "--listen", "127.0.0.1:0", "--packets", s(&packet), "--findings", "{out}"];
    let targets = targets(root, &other.join("completion.json"), &other, &packet);
    check_command("serve --findings", root, run, &args, &targets);
}

/// Start `serve`; once it listens, stop it (SIGTERM, which `timeout` passes on) and
/// wait; a refused start ends by itself.
fn serve_until_listening(project: &Project, args: &[&str]) -> Output {
    let mut child = project.spawn(args);
    let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap()).lines();
    let mut seen = Vec::new();
    for line in stderr.by_ref().map_while(Result::ok) {
        let listening = line.starts_with("packetproof serve: listening on");
        seen.push(line);
        if listening {
            let pid = rustix::process::Pid::from_child(&child);
            rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
            break;
        }
    }
    seen.extend(stderr.map_while(Result::ok));
    let done = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&done.stdout).into_owned();
    Output { code: done.status.code().unwrap_or(-1), stdout, stderr: seen.join("\n") }
}

/// `prepare --out-dir`: the output is a directory; never inside another run or a
/// golden case folder, never onto a file, FIFO or device; a fresh folder gets the
/// run's files and nothing else changes.
fn prepare_never_makes_a_run_inside_another_or_in_a_golden_folder() {
    let project = Project::lifecycle().under_timeout();
    let root = project.root();
    let other = project.completed("other", "T-other");
    let packet = project.packet("anthropic", "prep");
    let golden = root.join("golden/case");
    std::fs::create_dir_all(&golden).unwrap();
    std::fs::copy(other.join("agent-request.json"), golden.join("agent-request.json")).unwrap();
    std::fs::copy(&packet, golden.join("runtime-packet.json")).unwrap();
    let mut targets = targets(root, &other.join("completion.json"), &other, &packet);
    targets.retain(|(kind, _)| !["a symlink", "a directory", "a new file inside another run"].contains(kind));
    targets.push(("a folder inside another run", other.join("inner")));
    targets.push(("a golden case folder", golden));
    for (kind, target) in &targets {
        let before = snapshot_tree(root);
        let out = project.run(&["prepare", "--packet", s(&packet), "--out-dir", s(target)]);
        out.clean();
        let changed = changes(&before, &snapshot_tree(root));
        assert!(changed.is_empty(), "prepare into {kind} changed the tree: {changed:#?}\n{}", out.describe());
        assert_eq!(out.code, 2, "prepare into {kind}: {}", out.describe());
    }
    let fresh = root.join("runs/fresh");
    let before = snapshot_tree(root);
    let out = project.run(&["prepare", "--packet", s(&packet), "--out-dir", s(&fresh)]);
    assert_eq!(out.code, 0, "{}", out.describe());
    let changed = changes(&before, &snapshot_tree(root));
    assert!(changed.iter().all(|c| c.starts_with(&format!("added {}", fresh.display()))), "{changed:#?}");
}
