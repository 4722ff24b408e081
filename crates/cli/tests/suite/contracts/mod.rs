//! The contract points of docs/contracts.md that had no test of their own (issue 20), each against
//! the real `plumb` binary: the run's budgets, the `run` tool's allow-list, the reading tools'
//! scope, exit 3 for plumb's own machinery (the sandbox, git), the `fix` flags end to end and
//! `plumb doctor`. One module per area; what they share is here.

mod budgets;
mod doctor;
mod fix_flags;
mod infra;
mod run_tool;
mod scope;

use std::path::{Path, PathBuf};

use plumb_protocol::{Event, FinalReport};

use crate::suite::common::{shadow_git, work_dir};

/// (tool name, ok, full output) of every finished tool call, in order.
fn finished_tools(events: &[Event]) -> Vec<(String, bool, String)> {
    events
        .iter()
        .filter_map(|event| match event {
            Event::ToolFinished {
                name, ok, output, ..
            } => Some((name.clone(), *ok, output.clone())),
            _ => None,
        })
        .collect()
}

/// Writes an executable shell script `name` holding `body` into `dir` (made if need be), for a
/// PATH that puts it before the real program.
fn fake_program(dir: &Path, name: &str, body: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// This process's PATH with `dir` in front: what a plumb child gets so that it finds a fake
/// program first (the test process itself keeps its own environment).
fn path_with(dir: &Path) -> std::ffi::OsString {
    let mut dirs = vec![dir.to_path_buf()];
    dirs.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    std::env::join_paths(dirs).unwrap()
}

/// The absolute path of `program` on this process's PATH.
fn real_program(program: &str) -> PathBuf {
    std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .map(|dir| dir.join(program))
        .find(|path| path.is_file())
        .unwrap_or_else(|| {
            panic!("{program} is not on PATH; scripts/setup-test-deps.sh installs it")
        })
}

/// Whether the run was rolled back with `file` only in the kept attempt: the workspace no longer
/// has it, the patch is empty, and the attempt ref's history added it.
fn rolled_back_keeping(report: &FinalReport, file: &str) -> bool {
    let kept = report.attempt_ref.as_deref().is_some_and(|attempt| {
        plumb_test_support::git(
            &shadow_git(report),
            &["log", "--name-only", "--format=", attempt],
        )
        .lines()
        .any(|line| line == file)
    });
    !work_dir(report).join(file).exists() && report.patch.is_empty() && kept
}
