//! Prompt states on disk (`--state-dir`): the KV cache of a fixed prompt head, saved once it has been evaluated
//! and loaded when a later process starts with the same head, so each run skips evaluating it again.
//!
//! A state is only valid for the exact model file and llama.cpp build that computed it, so the file name is a
//! hash of the prompt text together with the model file's and this executable's path, size and modification
//! time. After loading, the engine also checks that the stored tokens are the prompt's tokens; any mismatch or
//! read error means the prompt is evaluated as if nothing was stored. Files are written under a temporary name
//! and renamed, so a reader never sees half a file, and the folder keeps only the newest [`KEEP_FILES`].

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use sha2::{Digest, Sha256};

/// How many state files the folder keeps (each holds about 30 MB per thousand tokens of a 1.5B model).
pub const KEEP_FILES: usize = 8;

const SUFFIX: &str = ".state";

/// Where prompt states live, and what makes a state valid.
#[derive(Debug, Clone)]
pub struct StateStore {
    dir: PathBuf,
    identity: String,
}

impl StateStore {
    /// A store in `dir` for states computed from `model` by the running executable.
    pub fn new(dir: PathBuf, model: &Path) -> Self {
        let exe = std::env::current_exe().unwrap_or_default();
        let identity = format!(
            "model {}\nrunner {}\n",
            file_identity(model),
            file_identity(&exe)
        );
        Self { dir, identity }
    }

    /// The file the state of `prompt` is kept in.
    pub fn path_for(&self, prompt: &str) -> PathBuf {
        let mut hash = Sha256::new();
        hash.update(self.identity.as_bytes());
        hash.update(prompt.as_bytes());
        let digest = hash.finalize();
        let mut name = String::with_capacity(40);
        for byte in digest.iter().take(16) {
            let _ = write!(name, "{byte:02x}");
        }
        name.push_str(SUFFIX);
        self.dir.join(name)
    }

    /// A temporary name beside `path` for writing it.
    pub fn temporary(path: &Path) -> PathBuf {
        let mut name = path.as_os_str().to_owned();
        name.push(format!(".{}.tmp", std::process::id()));
        PathBuf::from(name)
    }

    /// Creates the folder; an error is a sentence naming it.
    pub fn ensure_dir(&self) -> Result<(), String> {
        std::fs::create_dir_all(&self.dir).map_err(|err| {
            format!(
                "could not create the prompt-state folder {} ({err})",
                self.dir.display()
            )
        })
    }

    /// Deletes all but the newest [`KEEP_FILES`] state files (by modification time).
    pub fn prune(&self) {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return;
        };
        let mut states: Vec<(SystemTime, PathBuf)> = entries
            .filter_map(Result::ok)
            .filter(|entry| entry.file_name().to_string_lossy().ends_with(SUFFIX))
            .filter_map(|entry| {
                let modified = entry.metadata().and_then(|m| m.modified()).ok()?;
                Some((modified, entry.path()))
            })
            .collect();
        states.sort_by_key(|(modified, _)| std::cmp::Reverse(*modified));
        for (_, path) in states.into_iter().skip(KEEP_FILES) {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// A file's path, size and modification time, or its path alone when it cannot be read.
fn file_identity(path: &Path) -> String {
    let meta = std::fs::metadata(path).ok();
    let size = meta.as_ref().map_or(0, std::fs::Metadata::len);
    let modified = meta
        .and_then(|m| m.modified().ok())
        .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    format!("{} {size} {modified}", path.display())
}

#[cfg(test)]
mod tests {
    use super::{KEEP_FILES, StateStore};
    use pretty_assertions::assert_eq;
    use std::time::{Duration, SystemTime};

    fn scratch(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("plumb-llm-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn the_file_depends_on_the_prompt_and_the_model_file() {
        let dir = scratch("names");
        let model_a = dir.join("a.gguf");
        let model_b = dir.join("b.gguf");
        std::fs::write(&model_a, b"one").unwrap();
        std::fs::write(&model_b, b"two").unwrap();
        let a = StateStore::new(dir.join("states"), &model_a);
        let b = StateStore::new(dir.join("states"), &model_b);

        let names = [
            a.path_for("head"),
            a.path_for("head"),
            a.path_for("head2"),
            b.path_for("head"),
        ];

        assert_eq!(names[0], names[1]);
        assert!(names[0] != names[2] && names[0] != names[3]);
        assert!(names[0].starts_with(dir.join("states")));
        assert!(names[0].to_string_lossy().ends_with(".state"));
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn prune_keeps_the_newest_state_files_only() {
        let dir = scratch("prune");
        let store = StateStore::new(dir.clone(), &dir.join("m.gguf"));
        let start = SystemTime::now() - Duration::from_secs(3600);
        for i in 0..KEEP_FILES + 2 {
            let path = dir.join(format!("{i:02}.state"));
            std::fs::write(&path, b"x").unwrap();
            let file = std::fs::File::options().write(true).open(&path).unwrap();
            file.set_modified(start + Duration::from_secs(i as u64))
                .unwrap();
        }
        std::fs::write(dir.join("notes.txt"), b"not a state").unwrap();

        store.prune();

        let mut left: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        let mut expected: Vec<String> = (2..KEEP_FILES + 2)
            .map(|i| format!("{i:02}.state"))
            .collect();
        expected.push("notes.txt".to_owned());
        assert_eq!(left, expected);
        std::fs::remove_dir_all(dir).unwrap();
    }
}
