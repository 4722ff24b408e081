//! The escape suite under bwrap: writes and reads outside the workspace, the shadow git
//! directory, and the network. Each case prints what happened inside; the host is checked
//! afterwards.

use std::io::ErrorKind;
use std::net::TcpListener;
use std::path::Path;

use pretty_assertions::assert_eq;

use super::bwrap_support::{BwrapFixture, listing, py};
use super::run_dirs::{HOST_SECRET, Place, host_path};

/// Runs each `(name, path)` write attempt and prints `name: wrote` or `name: refused`.
const WRITE_ATTEMPTS: &str = r#"
import os, sys
outside, token, home = sys.argv[1], sys.argv[2], sys.argv[3]

def attempt(name, action):
    try:
        action()
        print(name + ": wrote")
    except OSError:
        print(name + ": refused")

def write(path):
    return lambda: open(path, "w").write("pwned")

def via_symlink():
    os.symlink(outside + "/via-symlink", "link-out")
    open("link-out", "w").write("pwned")

def via_shadow_symlink():
    os.symlink("../shadow.git/HEAD", "link-shadow")
    open("link-shadow", "w").write("pwned")

def mkdir_then_write():
    os.makedirs(outside, exist_ok=True)
    open(outside + "/made-inside", "w").write("pwned")

attempt("absolute path into a host dir", write(outside + "/absolute"))
attempt("../ next to the workspace", write("../escape-" + token))
attempt("a folder next to the workspace", lambda: os.mkdir("../made-" + token))
attempt("into the shadow git dir", write("../shadow.git/hooks-" + token))
attempt("symlink pointing out", via_symlink)
attempt("symlink into the shadow git dir", via_shadow_symlink)
attempt("hard link to a host file", lambda: os.link(outside + "/secret.txt", "hard-secret"))
attempt("hard link to a system file", lambda: os.link("/etc/hostname", "hard-hostname"))
attempt("/proc/self/root", write("/proc/self/root" + outside + "/proc-root"))
attempt("/proc/1/root", write("/proc/1/root" + outside + "/proc-1-root"))
attempt("/proc/1/cwd/..", write("/proc/1/cwd/../escape-cwd-" + token))
attempt("the system", write("/usr/pwned-" + token))
attempt("/etc", write("/etc/pwned-" + token))
attempt("the host HOME", write(home + "/pwned-" + token))
attempt("the root of the sandbox", write("/pwned-" + token))
attempt("sysctl", write("/proc/sys/kernel/hostname"))
attempt("mkdir -p the host dir (lands in the private /tmp)", mkdir_then_write)
"#;

#[tokio::test]
async fn writes_outside_the_workspace_fail_and_change_nothing_on_the_host() {
    writes_outside_fail(Place::Target).await;
}

/// Where the private `/tmp` lies over the workspace's parents.
#[tokio::test]
async fn writes_outside_a_workspace_under_tmp_fail_and_change_nothing_on_the_host() {
    writes_outside_fail(Place::Tmp).await;
}

async fn writes_outside_fail(place: Place) {
    let fx = BwrapFixture::at(place);
    let outside = fx.outside();
    let token = fx.token();
    let home = std::env::var("HOME").unwrap_or_else(|_| "/root".to_owned());
    let spec = fx.spec(&py(
        WRITE_ATTEMPTS,
        &[outside.to_str().unwrap(), &token, &home],
    ));

    let out = fx.run(&spec).await;
    let host = (
        listing(&outside),
        std::fs::read_to_string(outside.join("secret.txt")).unwrap(),
        listing(fx.run_dir.path()),
        listing(&fx.run_dir.path().join("shadow.git")),
        Path::new(&format!("/usr/pwned-{token}")).exists(),
        Path::new(&format!("/etc/pwned-{token}")).exists(),
        Path::new(&format!("{home}/pwned-{token}")).exists(),
        Path::new(&format!("/pwned-{token}")).exists(),
    );

    let refused = |name: &str| format!("{name}: refused\n");
    let expected_stdout: String = [
        "absolute path into a host dir",
        "../ next to the workspace",
        "a folder next to the workspace",
        "into the shadow git dir",
        "symlink pointing out",
        "symlink into the shadow git dir",
        "hard link to a host file",
        "hard link to a system file",
        "/proc/self/root",
        "/proc/1/root",
        "/proc/1/cwd/..",
        "the system",
        "/etc",
        "the host HOME",
        "the root of the sandbox",
        "sysctl",
    ]
    .map(refused)
    .concat()
        + "mkdir -p the host dir (lands in the private /tmp): wrote\n";
    let expected_host = (
        vec!["secret.txt".to_owned()],
        HOST_SECRET.to_owned(),
        vec!["shadow.git".to_owned(), "work".to_owned()],
        vec!["HEAD".to_owned()],
        false,
        false,
        false,
        false,
    );
    assert_eq!(
        (out.exit_code, out.stdout, host),
        (Some(0), expected_stdout, expected_host),
        "stderr: {}",
        out.stderr
    );
}

#[tokio::test]
async fn host_files_home_and_the_shadow_git_dir_are_not_visible() {
    host_files_not_visible(Place::Target).await;
}

#[tokio::test]
async fn host_files_home_and_the_shadow_git_dir_are_not_visible_from_a_workspace_under_tmp() {
    host_files_not_visible(Place::Tmp).await;
}

async fn host_files_not_visible(place: Place) {
    let fx = BwrapFixture::at(place);
    let outside = fx.outside();
    let home = std::env::var("HOME").unwrap_or_else(|_| "/root".to_owned());
    let spec = fx.spec(&py(
        r#"
import os, sys
outside, home = sys.argv[1], sys.argv[2]
def show(name, action):
    try:
        print(name + ": " + repr(action()))
    except OSError as e:
        print(name + ": " + type(e).__name__)
show("host secret", lambda: open(outside + "/secret.txt").read())
show("~/.ssh", lambda: os.listdir(home + "/.ssh"))
show("/etc/shadow", lambda: open("/etc/shadow").read())
show("workspace parent", lambda: sorted(os.listdir("..")))
show("/", lambda: sorted(os.listdir("/")))
show("host HOME", lambda: sorted(os.listdir(home)) if os.path.isdir(home) else [])
"#,
        &[outside.to_str().unwrap(), &home],
    ));

    let out = fx.run(&spec).await;

    // HOME shows only the top directories of PATH entries under it (~/.pyenv for the
    // interpreter, ~/.cargo for `cargo`'s bin), never the rest.
    let mut home_visible: Vec<String> = host_path()
        .split(':')
        .filter_map(|entry| Path::new(entry).strip_prefix(&home).ok())
        .filter(|rest| Path::new(&home).join(rest).is_dir())
        .filter_map(|rest| rest.components().next())
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    home_visible.sort();
    home_visible.dedup();
    // `/` holds the system entries that exist, the sandbox's own mounts, and the first
    // directory of the workspace path and of every PATH entry outside the system.
    let system = [
        "bin", "sbin", "lib", "lib32", "lib64", "libx32", "usr", "etc",
    ];
    let first_dir = |path: &Path| -> String {
        let first = path.components().nth(1).unwrap();
        first.as_os_str().to_string_lossy().into_owned()
    };
    let mut root: Vec<String> = system
        .iter()
        .filter(|name| Path::new("/").join(name).exists())
        .map(|name| (*name).to_owned())
        .chain(["dev", "home", "proc", "tmp"].map(str::to_owned))
        .chain([first_dir(&fx.work())])
        .collect();
    for entry in host_path().split(':').map(Path::new) {
        if entry.is_absolute() && entry.is_dir() && !system.contains(&first_dir(entry).as_str()) {
            root.push(first_dir(entry));
        }
    }
    root.sort();
    root.dedup();
    let python_list = |names: &[String]| {
        let quoted: Vec<String> = names.iter().map(|n| format!("'{n}'")).collect();
        format!("[{}]", quoted.join(", "))
    };
    let expected = format!(
        "host secret: FileNotFoundError\n\
         ~/.ssh: FileNotFoundError\n\
         /etc/shadow: PermissionError\n\
         workspace parent: ['work']\n\
         /: {}\n\
         host HOME: {}\n",
        python_list(&root),
        python_list(&home_visible),
    );
    assert_eq!(
        (out.exit_code, out.stdout),
        (Some(0), expected),
        "stderr: {}",
        out.stderr
    );
}

#[tokio::test]
async fn the_network_is_off_loopback_of_the_host_included() {
    let fx = BwrapFixture::new();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port().to_string();
    let spec = fx.spec(&[
        "bash",
        "-c",
        r#"
python3 - "$1" <<'EOF'
import errno, socket, sys
port = int(sys.argv[1])
print("interfaces:", [name for _, name in socket.if_nameindex()])
for name, addr in [("host loopback", ("127.0.0.1", port)), ("outside", ("1.1.1.1", 53))]:
    s = socket.socket()
    s.settimeout(3)
    try:
        s.connect(addr)
        print(name + ": connected")
    except OSError as e:
        print(name + ": " + errno.errorcode.get(e.errno, str(e)))
EOF
(echo hi > "/dev/tcp/127.0.0.1/$1") 2>/dev/null && echo "/dev/tcp: connected" || echo "/dev/tcp: refused"
curl -s -m 3 "http://127.0.0.1:$1/" >/dev/null; echo "curl exit $?"
"#,
        "bash",
        &port,
    ]);

    let out = fx.run(&spec).await;
    let accepted = match listener.accept() {
        Ok(_) => "a connection arrived".to_owned(),
        Err(e) if e.kind() == ErrorKind::WouldBlock => "nothing arrived".to_owned(),
        Err(e) => e.to_string(),
    };

    let expected = "interfaces: ['lo']\n\
                    host loopback: ECONNREFUSED\n\
                    outside: ENETUNREACH\n\
                    /dev/tcp: refused\n\
                    curl exit 7\n";
    assert_eq!(
        (out.exit_code, out.stdout.as_str(), accepted.as_str()),
        (Some(0), expected, "nothing arrived"),
        "stderr: {}",
        out.stderr
    );
}

#[tokio::test]
async fn no_capabilities_no_new_privileges_and_no_nested_user_namespaces() {
    let fx = BwrapFixture::new();
    let spec = fx.spec(&py(
        r#"
import ctypes, errno
for line in open("/proc/self/status"):
    if line.startswith(("CapPrm", "CapEff", "CapBnd", "CapAmb", "NoNewPrivs")):
        print(line.strip().replace("\t", " "))
libc = ctypes.CDLL(None, use_errno=True)
rc = libc.unshare(0x10000000)  # CLONE_NEWUSER
print("nested user namespace:", "made" if rc == 0 else "refused")
"#,
        &[],
    ));

    let out = fx.run(&spec).await;

    assert_eq!(
        (out.exit_code, out.stdout.as_str()),
        (
            Some(0),
            "CapPrm: 0000000000000000\n\
             CapEff: 0000000000000000\n\
             CapBnd: 0000000000000000\n\
             CapAmb: 0000000000000000\n\
             NoNewPrivs: 1\n\
             nested user namespace: refused\n"
        ),
        "stderr: {}",
        out.stderr
    );
}
