//! `plumb doctor`: what works on this machine — the sandbox backends (user namespaces, bubblewrap,
//! cgroups, gVisor), the toolchains inside bwrap (rust, go, node, java/maven), git and Python — each
//! with the fix when it does not. Exit 0 when the default
//! sandbox works, 3 when it does not.

use std::process::Command;

use plumb_sandbox::{CheckKind, check_backends, check_toolchains};

use crate::screen::say_out;

pub(crate) async fn run() -> i32 {
    let mut default_works = true;
    for status in check_backends().await {
        let mark = if status.works { "ok  " } else { "FAIL" };
        say_out!("{mark}  {:<16} {}", status.kind.as_str(), status.detail);
        if let Some(fix) = &status.fix {
            say_out!("      {:<16} fix: {fix}", "");
        }
        if status.kind == CheckKind::Bwrap && !status.works {
            default_works = false;
        }
    }
    for status in check_toolchains().await {
        let mark = if status.works { "ok  " } else { "FAIL" };
        say_out!("{mark}  {:<16} {}", status.kind.as_str(), status.detail);
    }
    for (name, argv) in [
        ("git", ["git", "--version"]),
        ("python3", ["python3", "--version"]),
    ] {
        let found = Command::new(argv[0]).arg(argv[1]).output();
        match found {
            Ok(out) if out.status.success() => say_out!(
                "ok    {name:<16} {}",
                String::from_utf8_lossy(&out.stdout).trim()
            ),
            _ => say_out!("FAIL  {name:<16} not found; install it (apt-get install {name})"),
        }
    }
    if default_works {
        0
    } else {
        say_out!(
            "the default sandbox (bwrap) does not work here; fix it as above or pass --sandbox none"
        );
        3
    }
}
