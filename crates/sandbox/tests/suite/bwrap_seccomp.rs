//! The strict mode's seccomp filter: ptrace, io_uring, non-unix sockets and keyrings are
//! refused inside, and the same probe without strict mode shows the filter is what refused.

use plumb_sandbox::BwrapSettings;
use pretty_assertions::assert_eq;

use super::bwrap_support::{BwrapFixture, py};

/// Each probe prints `name: ok` or `name: ERRNO`. Syscall numbers are x86_64's.
const PROBE: &str = r#"
import ctypes, errno, socket
libc = ctypes.CDLL(None, use_errno=True)
def report(name, rc):
    print(name + ": " + ("ok" if rc >= 0 else errno.errorcode[ctypes.get_errno()]))
# PTRACE_ATTACH to a pid that does not exist: ESRCH unless ptrace itself is refused.
report("ptrace", libc.ptrace(16, 999999, None, None))
report("io_uring_setup", libc.syscall(425, 1, ctypes.create_string_buffer(120)))
report("keyctl", libc.syscall(250, 0, -3, 0))
for name, family in [("inet socket", socket.AF_INET), ("unix socket", socket.AF_UNIX)]:
    try:
        socket.socket(family, socket.SOCK_STREAM).close()
        print(name + ": ok")
    except OSError as e:
        print(name + ": " + errno.errorcode[e.errno])
"#;

#[cfg(target_arch = "x86_64")]
#[tokio::test]
async fn strict_mode_refuses_ptrace_io_uring_keyrings_and_non_unix_sockets() {
    let strict = BwrapFixture::with_settings(BwrapSettings {
        seccomp: true,
        ..BwrapSettings::default()
    });
    let plain = BwrapFixture::new();

    let out = strict.run(&strict.spec(&py(PROBE, &[]))).await;
    let control = plain.run(&plain.spec(&py(PROBE, &[]))).await;
    let control_lines: Vec<&str> = control
        .stdout
        .lines()
        .filter(|l| l.starts_with("ptrace") || l.contains("socket"))
        .collect();

    assert_eq!(
        (
            out.stdout.as_str(),
            out.enforced.contains(&"seccomp".to_owned()),
            control_lines
        ),
        (
            "ptrace: EPERM\n\
             io_uring_setup: ENOSYS\n\
             keyctl: EPERM\n\
             inet socket: EAFNOSUPPORT\n\
             unix socket: ok\n",
            true,
            vec!["ptrace: ESRCH", "inet socket: ok", "unix socket: ok"]
        ),
        "stderr: {}",
        out.stderr
    );
}
