//! The patch and the list of changed files, and the parsers for git's `-z` diff listings.
//!
//! Both listings come from `git diff --cached -M -z <baseline>` after `git add -A`, so new, deleted and
//! renamed files are all seen; `-z` means paths arrive unquoted and NUL-separated, whatever bytes they hold.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The verified change, as a person reviews and approves it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Patch {
    /// `git diff` output from the baseline to the copy, applicable with `git apply` (or `patch -p1`).
    pub text: String,
    /// Lowercase hex SHA-256 of `text`: what the approver is shown and `plumb apply --sha` checks.
    pub sha256: String,
    /// The files the patch touches, in git's order.
    pub files: Vec<ChangedFile>,
}

impl Patch {
    pub(crate) fn new(text: String, files: Vec<ChangedFile>) -> Patch {
        let sha256 = sha256_hex(text.as_bytes());
        Patch {
            text,
            sha256,
            files,
        }
    }

    /// True when the copy equals the baseline.
    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }
}

/// One file changed since the baseline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChangedFile {
    pub status: ChangeKind,
    /// Path relative to the workspace root, `/`-separated (for a rename, the new path).
    pub path: String,
}

/// How a file changed since the baseline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ChangeKind {
    Added,
    /// Content, mode or type (file ↔ link) changed.
    Modified,
    Deleted,
    Renamed {
        /// The path at the baseline.
        from: String,
    },
}

impl ChangeKind {
    /// The one-letter status git uses: `A`, `M`, `D` or `R`.
    pub fn letter(&self) -> char {
        match self {
            ChangeKind::Added => 'A',
            ChangeKind::Modified => 'M',
            ChangeKind::Deleted => 'D',
            ChangeKind::Renamed { .. } => 'R',
        }
    }
}

/// Lowercase hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut out = String::with_capacity(64);
    for byte in digest {
        out.push(char::from(HEX[usize::from(byte >> 4)]));
        out.push(char::from(HEX[usize::from(byte & 0x0f)]));
    }
    out
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Parses `git diff --name-status -z` output: `STATUS\0PATH\0`, or `RNNN\0FROM\0TO\0` for renames (and
/// copies, which are reported as additions of the new path). Returns `None` on output of another shape.
pub(crate) fn parse_name_status(raw: &[u8]) -> Option<Vec<ChangedFile>> {
    let mut fields = raw.split(|b| *b == 0).filter(|f| !f.is_empty());
    let mut files = Vec::new();
    while let Some(status) = fields.next() {
        let path = lossy(fields.next()?);
        let file = match status.first()? {
            b'A' => ChangedFile {
                status: ChangeKind::Added,
                path,
            },
            b'M' | b'T' => ChangedFile {
                status: ChangeKind::Modified,
                path,
            },
            b'D' => ChangedFile {
                status: ChangeKind::Deleted,
                path,
            },
            b'R' => ChangedFile {
                status: ChangeKind::Renamed { from: path },
                path: lossy(fields.next()?),
            },
            b'C' => ChangedFile {
                status: ChangeKind::Added,
                path: lossy(fields.next()?),
            },
            _ => return None,
        };
        files.push(file);
    }
    Some(files)
}

/// Parses `git diff --numstat -z` output and returns the paths git counts as binary (`-\t-\t` rows). Rows are
/// `ADDED\tDELETED\tPATH\0`, or `ADDED\tDELETED\t\0FROM\0TO\0` for renames. `None` on another shape.
pub(crate) fn binary_paths(raw: &[u8]) -> Option<Vec<String>> {
    let mut fields = raw.split(|b| *b == 0);
    let mut binary = Vec::new();
    while let Some(row) = fields.next() {
        if row.is_empty() {
            continue;
        }
        let mut cols = row.splitn(3, |b| *b == b'\t');
        let added = cols.next()?;
        let deleted = cols.next()?;
        let rest = cols.next()?;
        let path = if rest.is_empty() {
            let _from = fields.next()?;
            fields.next()?
        } else {
            rest
        };
        if added == b"-" && deleted == b"-" {
            binary.push(lossy(path));
        }
    }
    Some(binary)
}

/// The files of a `git diff` text whose sections hold bytes that are not UTF-8, named by the `b/` side of
/// their `diff --git` header (or `(unknown file)` before any header).
pub(crate) fn non_utf8_files(diff: &[u8]) -> Vec<String> {
    let mut current = "(unknown file)".to_owned();
    let mut found: Vec<String> = Vec::new();
    for line in diff.split(|b| *b == b'\n') {
        if let Some(header) = line.strip_prefix(b"diff --git ") {
            let text = lossy(header);
            current = match text.rfind(" b/") {
                Some(at) => text.get(at + 3..).unwrap_or(&text).to_owned(),
                None => text,
            };
        }
        if std::str::from_utf8(line).is_err() && found.last() != Some(&current) {
            found.push(current.clone());
        }
    }
    found
}

fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn name_status_covers_every_kind() {
        let raw = b"A\0new.py\0M\0a b.py\0D\0gone.py\0R087\0old/x.py\0new/x.py\0T\0link\0";
        let actual = parse_name_status(raw);
        let expected = Some(vec![
            ChangedFile {
                status: ChangeKind::Added,
                path: "new.py".into(),
            },
            ChangedFile {
                status: ChangeKind::Modified,
                path: "a b.py".into(),
            },
            ChangedFile {
                status: ChangeKind::Deleted,
                path: "gone.py".into(),
            },
            ChangedFile {
                status: ChangeKind::Renamed {
                    from: "old/x.py".into(),
                },
                path: "new/x.py".into(),
            },
            ChangedFile {
                status: ChangeKind::Modified,
                path: "link".into(),
            },
        ]);
        assert_eq!(actual, expected);
    }

    #[test]
    fn numstat_finds_binary_rows_including_renames() {
        let raw = b"1\t0\ta.py\0-\t-\timg.png\0-\t-\t\0old.bin\0new.bin\x003\t2\t\0o.py\0n.py\0";
        let actual = binary_paths(raw);
        assert_eq!(
            actual,
            Some(vec!["img.png".to_owned(), "new.bin".to_owned()])
        );
    }

    #[test]
    fn sha256_of_empty_text() {
        let actual = sha256_hex(b"");
        assert_eq!(
            actual,
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }
}
