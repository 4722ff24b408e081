//! Where this process may make cgroups, per controller: parsing `/proc/self/mountinfo` and
//! `/proc/self/cgroup`, then a trial `mkdir` under each candidate; on v2, enabling the
//! controllers for children (and moving ourselves into a leaf when that is what the kernel's
//! "no internal processes" rule asks). See `cgroup/mod.rs` for the rules.

use std::fs;
use std::path::{Path, PathBuf};

use super::{Controller, Place, Support, Version, fresh_name, words};

/// One line of `/proc/self/mountinfo`, the fields we use.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Mount {
    root: String,
    point: PathBuf,
    fstype: String,
    super_options: Vec<String>,
}

/// Undoes mountinfo's octal escapes (`\040` for a space).
fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let octal = bytes
            .get(i + 1..i + 4)
            .filter(|d| bytes[i] == b'\\' && d.iter().all(|b| (b'0'..=b'7').contains(b)));
        match octal {
            Some(d) => {
                let value = d.iter().fold(0u32, |acc, b| acc * 8 + u32::from(b - b'0'));
                out.push(u8::try_from(value).unwrap_or(b'?'));
                i += 4;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn parse_mountinfo(text: &str) -> Vec<Mount> {
    text.lines()
        .filter_map(|line| {
            let (left, right) = line.split_once(" - ")?;
            let left: Vec<&str> = left.split(' ').collect();
            let mut right = right.split(' ');
            let fstype = right.next()?.to_owned();
            let _source = right.next()?;
            let super_options = right.next()?.split(',').map(str::to_owned).collect();
            Some(Mount {
                root: unescape(left.get(3)?),
                point: PathBuf::from(unescape(left.get(4)?)),
                fstype,
                super_options,
            })
        })
        .collect()
}

/// The directory of our cgroup `path` (from `/proc/self/cgroup`) under `mount`, or `None`
/// when the mount does not show that part of the hierarchy.
fn dir_under(mount: &Mount, path: &str) -> Option<PathBuf> {
    if path.split('/').any(|part| part == "..") {
        return None;
    }
    let root = mount.root.trim_end_matches('/');
    let relative = path.strip_prefix(root)?;
    if !relative.is_empty() && !relative.starts_with('/') {
        return None;
    }
    Some(mount.point.join(relative.trim_start_matches('/')))
}

/// Where each controller's parent cgroup is, before any probing: v1 directories per
/// controller, and the v2 directory.
#[derive(Debug, Default, PartialEq, Eq)]
struct Candidates {
    v1: Vec<(Controller, PathBuf)>,
    v2: Option<PathBuf>,
}

fn candidates(mountinfo: &str, self_cgroup: &str) -> Candidates {
    let mounts = parse_mountinfo(mountinfo);
    let memberships: Vec<(&str, &str)> = self_cgroup
        .lines()
        .filter_map(|line| {
            let mut parts = line.splitn(3, ':');
            let _id = parts.next()?;
            Some((parts.next()?, parts.next()?))
        })
        .collect();
    let mut found = Candidates::default();
    for controller in Controller::ALL {
        let name = controller.name();
        let mount = mounts
            .iter()
            .find(|m| m.fstype == "cgroup" && m.super_options.iter().any(|o| o == name));
        let path = memberships
            .iter()
            .find(|(controllers, _)| controllers.split(',').any(|c| c == name));
        if let (Some(mount), Some((_, path))) = (mount, path)
            && let Some(dir) = dir_under(mount, path)
        {
            found.v1.push((controller, dir));
        }
    }
    let v2_mount = mounts.iter().find(|m| m.fstype == "cgroup2");
    let v2_path = memberships.iter().find(|(c, _)| c.is_empty());
    if let (Some(mount), Some((_, path))) = (v2_mount, v2_path) {
        found.v2 = dir_under(mount, path);
    }
    found
}

/// Whether we may make cgroups under `parent`: a trial `mkdir` and `rmdir`.
fn can_create_under(parent: &Path) -> bool {
    let trial = parent.join(fresh_name("plumb-probe"));
    if fs::create_dir(&trial).is_err() {
        return false;
    }
    fs::remove_dir(&trial).is_ok()
}

pub(super) fn detect() -> Support {
    let mountinfo = fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let self_cgroup = fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    let found = candidates(&mountinfo, &self_cgroup);
    let mut support = Support::default();
    for (controller, dir) in &found.v1 {
        if can_create_under(dir) {
            support.set(
                *controller,
                Place {
                    version: Version::V1,
                    parent: dir.clone(),
                },
            );
        }
    }
    let in_v1: Vec<Controller> = found.v1.iter().map(|(c, _)| *c).collect();
    let wanted: Vec<Controller> = Controller::ALL
        .into_iter()
        .filter(|c| !in_v1.contains(c))
        .collect();
    if let Some(dir) = found.v2
        && !wanted.is_empty()
    {
        for controller in enable_v2(&dir, &wanted) {
            support.set(
                controller,
                Place {
                    version: Version::V2,
                    parent: dir.clone(),
                },
            );
        }
    }
    support
}

/// Enables `wanted` for children of the v2 cgroup `dir` where possible; returns the
/// controllers children of `dir` now get. See the module header for the move into a leaf.
fn enable_v2(dir: &Path, wanted: &[Controller]) -> Vec<Controller> {
    let available = words(&dir.join("cgroup.controllers"));
    let wanted: Vec<Controller> = wanted
        .iter()
        .copied()
        .filter(|c| available.iter().any(|a| a == c.name()))
        .collect();
    if wanted.is_empty() {
        return Vec::new();
    }
    let subtree = dir.join("cgroup.subtree_control");
    let enable = |controller: Controller| {
        fs::write(&subtree, format!("+{}", controller.name())).is_ok()
            || words(&subtree).iter().any(|w| w == controller.name())
    };
    let mut enabled: Vec<Controller> = wanted.iter().copied().filter(|c| enable(*c)).collect();
    if enabled.len() < wanted.len() && move_into_leaf(dir) {
        enabled = wanted.iter().copied().filter(|c| enable(*c)).collect();
    }
    if enabled.is_empty() || !can_create_under(dir) {
        return Vec::new();
    }
    enabled
}

/// Moves this process into `<dir>/plumb-supervisor` when it is the only process in `dir`, so
/// that `dir` may enable controllers for its children.
fn move_into_leaf(dir: &Path) -> bool {
    let ours = std::process::id().to_string();
    let members = words(&dir.join("cgroup.procs"));
    if members.iter().any(|pid| *pid != ours) {
        return false;
    }
    let leaf = dir.join("plumb-supervisor");
    if fs::create_dir(&leaf).is_err() && !leaf.is_dir() {
        return false;
    }
    fs::write(leaf.join("cgroup.procs"), &ours).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    const MOUNTINFO: &str = "\
22 27 0:21 / /proc rw,relatime - proc proc rw
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
33 31 0:30 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpuacct
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
39 31 0:36 /outer /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
";

    #[test]
    fn finds_v1_directories_under_our_own_cgroups() {
        let self_cgroup = "\
8:pids:/outer/inner
4:memory:/process_api/abc
2:cpuacct:/
1:cpu:/
0::/
";

        let actual = candidates(MOUNTINFO, self_cgroup);

        let expected = Candidates {
            v1: vec![
                (
                    Controller::Memory,
                    PathBuf::from("/sys/fs/cgroup/memory/process_api/abc"),
                ),
                (Controller::Pids, PathBuf::from("/sys/fs/cgroup/pids/inner")),
                (Controller::Cpu, PathBuf::from("/sys/fs/cgroup/cpu/")),
            ],
            v2: Some(PathBuf::from("/sys/fs/cgroup/unified/")),
        };
        assert_eq!(actual, expected);
    }

    #[test]
    fn finds_the_v2_directory_and_refuses_paths_outside_the_mount() {
        let mountinfo = "30 23 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw,nsdelegate\n";
        let pure_v2 = candidates(mountinfo, "0::/user.slice/plumb.service\n");
        let escaped = candidates(mountinfo, "0::/../../sibling\n");
        let bind_of_other = candidates(
            "30 23 0:26 /docker/x /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n",
            "0::/docker/xy\n",
        );

        let actual = (pure_v2, escaped.v2, bind_of_other.v2);

        let expected = (
            Candidates {
                v1: Vec::new(),
                v2: Some(PathBuf::from("/sys/fs/cgroup/user.slice/plumb.service")),
            },
            None,
            None,
        );
        assert_eq!(actual, expected);
    }

    #[test]
    fn mountinfo_escapes_are_undone() {
        let actual = unescape(r"/mnt/with\040space\134x\0");

        assert_eq!(actual, r"/mnt/with space\x\0");
    }
}
