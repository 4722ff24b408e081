//! Escape attempts under gVisor: writing outside the workspace, reading the host, plumb's
//! environment, and the network. Each test also shows the legitimate path works, so that a
//! command that simply fails to run cannot pass it.

use std::io::Read;
use std::net::TcpListener;
use std::path::PathBuf;
use std::time::Duration;

use pretty_assertions::assert_eq;

use super::{GvisorFixture, SECRETS, exists};
use crate::suite::run_dirs::{HOST_SECRET, Place};

#[tokio::test]
async fn writes_outside_the_workspace_do_not_reach_the_host() {
    writes_outside_fail(Place::Target).await;
}

/// Where the private `/tmp` lies over the workspace's parents.
#[tokio::test]
async fn writes_outside_a_workspace_under_tmp_do_not_reach_the_host() {
    writes_outside_fail(Place::Tmp).await;
}

async fn writes_outside_fail(place: Place) {
    let fx = GvisorFixture::at(place).await;
    let outside = fx.outside.path().canonicalize().unwrap();
    let run_dir = fx.run_dir.path().canonicalize().unwrap();
    let script = format!(
        "echo inside > inside.txt; \
         mkdir -p {out}; echo x > {out}/absolute.txt; \
         echo x > ../dotdot.txt; \
         echo x > ../shadow.git/hooks-written; \
         ln -s {out} link-out; echo x > link-out/through-symlink.txt; \
         ln {out}/secret.txt hardlink; echo x >> hardlink; \
         echo x > /proc/self/root{out}/through-proc.txt; \
         touch /usr/plumb-gvisor-escape; \
         (echo x > ../dotdot.txt) 2>/dev/null && echo wrote ../dotdot.txt; \
         mkdir ../made 2>/dev/null && echo made ../made; \
         true",
        out = outside.display()
    );

    let out = fx.run(&fx.sh(&script)).await;

    let written: Vec<PathBuf> = [
        outside.join("absolute.txt"),
        run_dir.join("dotdot.txt"),
        run_dir.join("shadow.git/hooks-written"),
        outside.join("through-symlink.txt"),
        outside.join("through-proc.txt"),
        PathBuf::from("/usr/plumb-gvisor-escape"),
    ]
    .into_iter()
    .filter(|p| exists(p))
    .collect();
    let _ = std::fs::remove_file("/usr/plumb-gvisor-escape");
    let actual = (
        out.exit_code,
        out.stdout.clone(),
        std::fs::read_to_string(fx.work().join("inside.txt")).unwrap(),
        written,
        std::fs::read_to_string(outside.join("secret.txt")).unwrap(),
    );
    let expected = (
        Some(0),
        String::new(),
        "inside\n".to_owned(),
        Vec::<PathBuf>::new(),
        HOST_SECRET.to_owned(),
    );
    assert_eq!(actual, expected, "{out:#?}");
}

#[tokio::test]
async fn host_files_outside_the_workspace_are_invisible() {
    host_files_invisible(Place::Target).await;
}

#[tokio::test]
async fn host_files_outside_a_workspace_under_tmp_are_invisible() {
    host_files_invisible(Place::Tmp).await;
}

async fn host_files_invisible(place: Place) {
    let fx = GvisorFixture::at(place).await;
    let outside = fx.outside.path().canonicalize().unwrap();
    let run_dir = fx.run_dir.path().canonicalize().unwrap();
    let host_home = PathBuf::from(std::env::var("HOME").unwrap_or_else(|_| "/root".to_owned()));
    // Files that exist on the host, so that "invisible" is a claim about the sandbox.
    let mut targets = vec![outside.join("secret.txt"), run_dir.join("shadow.git/HEAD")];
    targets.extend(
        [".bashrc", ".profile", ".gitconfig", ".npmrc", ".ssh"]
            .map(|name| host_home.join(name))
            .into_iter()
            .filter(|p| exists(p)),
    );
    let checks: String = targets
        .iter()
        .map(|p| format!("[ -e '{0}' ] && echo 'visible: {0}'; ", p.display()))
        .collect();
    let script = format!(
        "{checks}cat /etc/shadow; cat {secret} 2>/dev/null; echo checked",
        secret = outside.join("secret.txt").display()
    );

    let out = fx.run(&fx.sh(&script)).await;

    assert!(targets.len() >= 2, "{targets:?}");
    assert_eq!(
        (out.exit_code, out.stdout.as_str()),
        (Some(0), "checked\n"),
        "{out:#?}"
    );
}

#[tokio::test]
async fn plumb_environment_secrets_are_invisible() {
    let fx = GvisorFixture::new().await;

    let out = fx
        .run(&fx.sh("env; tr '\\0' '\\n' < /proc/1/environ; tr '\\0' '\\n' < /proc/self/environ"))
        .await;

    let leaked: Vec<&str> = SECRETS
        .iter()
        .filter(|(name, value)| out.stdout.contains(name) || out.stdout.contains(value))
        .map(|(name, _)| *name)
        .collect();
    let actual = (
        out.exit_code,
        leaked,
        out.stdout.contains("HOME=/home/sandbox"),
    );
    assert_eq!(actual, (Some(0), Vec::<&str>::new(), true), "{out:#?}");
}

#[tokio::test]
async fn the_host_network_is_unreachable() {
    let fx = GvisorFixture::new().await;
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let script = format!(
        "python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=3)\" \
           2>/dev/null; echo python=$?; \
         python3 -c \"import socket; socket.create_connection(('1.1.1.1', 53), timeout=3)\" \
           2>/dev/null; echo outside=$?; \
         bash -c 'echo hi > /dev/tcp/127.0.0.1/{port}' 2>/dev/null; echo devtcp=$?; \
         python3 -c \"import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); \
           s.listen(); c = socket.create_connection(s.getsockname()); print('loopback ok')\""
    );
    let mut spec = fx.sh(&script);
    spec.limits.timeout = Duration::from_secs(60);

    let out = fx.run(&spec).await;

    let mut accepted = Vec::new();
    while let Ok((mut stream, peer)) = listener.accept() {
        let mut got = String::new();
        let _ = stream.read_to_string(&mut got);
        accepted.push(format!("{peer}: {got}"));
    }
    assert_eq!(
        (out.stdout.as_str(), accepted),
        (
            "python=1\noutside=1\ndevtcp=1\nloopback ok\n",
            Vec::<String>::new()
        ),
        "{out:#?}"
    );
}
