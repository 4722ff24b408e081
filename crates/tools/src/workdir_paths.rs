//! Command output as the model sees it holds no path of the host: the sandbox runs commands in
//! the workspace at its real path, so a runner that prints absolute paths (node's failing test
//! `location`, cargo's test binary, Python's `ImportError … (/…/module.py)`) would put the host's
//! layout — a home folder, a user name, plumb's run folder — into the prompt. Each such path is
//! written relative to the workspace instead, as every other tool names files.

use std::path::Path;

/// `text` with the workspace's absolute path `workdir` written relative: `WORKDIR/src/a.js`
/// becomes `src/a.js` and `WORKDIR` alone `.`. A longer name that only starts with it
/// (`WORKDIR2/…`) is left alone.
pub fn relative_to_workdir(text: &str, workdir: &Path) -> String {
    let Some(root) = workdir.to_str().map(|root| root.trim_end_matches('/')) else {
        return text.to_string();
    };
    if root.is_empty() || !text.contains(root) {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(root) {
        let (before, found) = rest.split_at(at);
        out.push_str(before);
        let after = found.get(root.len()..).unwrap_or_default();
        match after.chars().next() {
            Some('/') => {
                rest = after.get(1..).unwrap_or_default();
            }
            Some(next) if next.is_alphanumeric() || "_-.".contains(next) => {
                out.push_str(root);
                rest = after;
            }
            _ => {
                out.push('.');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn workspace_paths_become_relative_and_look_alikes_stay() {
        let workdir = Path::new("/home/alice/.local/share/plumb/runs/r1/workspace/work");
        let text = "location: '/home/alice/.local/share/plumb/runs/r1/workspace/work/test/a.test.js:12:3'\n\
            Running unittests src/lib.rs (/home/alice/.local/share/plumb/runs/r1/workspace/work/target/debug/deps/x-1)\n\
            cwd: /home/alice/.local/share/plumb/runs/r1/workspace/work\n\
            other: /home/alice/.local/share/plumb/runs/r1/workspace/work2/b.py and /usr/lib/python3/x.py";
        assert_eq!(
            relative_to_workdir(text, workdir),
            "location: 'test/a.test.js:12:3'\n\
            Running unittests src/lib.rs (target/debug/deps/x-1)\n\
            cwd: .\n\
            other: /home/alice/.local/share/plumb/runs/r1/workspace/work2/b.py and /usr/lib/python3/x.py"
        );
        assert_eq!(relative_to_workdir("no paths", workdir), "no paths");
        assert_eq!(
            relative_to_workdir("/w/a", Path::new("/w/")),
            "a",
            "a trailing slash on the workdir"
        );
    }
}
