//! What the figures were measured on: CPUs (`nproc`), kernel (`uname -r`), CPU model, the build
//! profile of this binary, the versions of the tools the measurements spawn, and the load average
//! (other work on a shared machine shows up in every figure).

use std::process::Command;

pub struct Machine {
    pub nproc: usize,
    pub kernel: String,
    pub cpu: String,
    pub profile: &'static str,
    pub git: String,
    /// `None` when `rg` is not installed.
    pub rg: Option<String>,
    pub python: String,
    /// `/proc/loadavg`'s 1-minute figure when the benchmark started.
    pub load_at_start: String,
}

pub fn describe() -> Machine {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|text| {
            text.lines()
                .find(|line| line.starts_with("model name"))
                .and_then(|line| line.split_once(':'))
                .map(|(_, name)| name.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".to_string());
    Machine {
        nproc: std::thread::available_parallelism().map_or(1, |n| n.get()),
        kernel: first_line("uname", &["-r"]).unwrap_or_else(|| "unknown".to_string()),
        cpu,
        profile: if cfg!(debug_assertions) {
            "debug (the figures are not representative; use scripts/bench.sh)"
        } else {
            "release"
        },
        git: first_line("git", &["--version"]).unwrap_or_else(|| "git missing".to_string()),
        rg: first_line("rg", &["--version"]),
        python: first_line("python3", &["-m", "pytest", "--version"])
            .map(|pytest| {
                let python = first_line("python3", &["--version"]).unwrap_or_default();
                format!("{python}, {pytest}")
            })
            .unwrap_or_else(|| "python3 with pytest missing".to_string()),
        load_at_start: load_average(),
    }
}

/// The 1-minute load average: other work on the machine shows up in the figures.
pub fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|text| text.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "unknown".to_string())
}

/// The first line a command prints (stdout, else stderr), or `None` when it cannot run or fails.
pub fn first_line(program: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(program).args(args).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let text = if out.stdout.is_empty() {
        out.stderr
    } else {
        out.stdout
    };
    String::from_utf8_lossy(&text)
        .lines()
        .next()
        .map(str::to_string)
}

/// The file system holding `path`, as `TYPE at MOUNT POINT` from `/proc/mounts` (the longest
/// mount point that contains it).
pub fn filesystem_of(path: &std::path::Path) -> String {
    let Ok(mounts) = std::fs::read_to_string("/proc/mounts") else {
        return "unknown file system".to_string();
    };
    mounts
        .lines()
        .filter_map(|line| {
            let mut fields = line.split_whitespace();
            let (_device, point, kind) = (fields.next()?, fields.next()?, fields.next()?);
            path.starts_with(point)
                .then(|| (point.len(), format!("{kind} at {point}")))
        })
        .max_by_key(|(length, _)| *length)
        .map_or_else(|| "unknown file system".to_string(), |(_, text)| text)
}
