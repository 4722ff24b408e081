//! The patch and the list of changed files, and the parsers for git's `-z` diff listings.
//!
//! Both listings come from `git diff --cached -M -z <baseline>` after `git add -A`, so new, deleted and
//! renamed files are all seen; `-z` means paths arrive unquoted and NUL-separated, whatever bytes they hold.
//! The list of changed files is the `--raw --no-abbrev` listing: with each path, the mode and the full
//! object id on both sides, so a caller reads what the patch carries (the staged blob) rather than the
//! file in the copy, which may be a link to anywhere.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::ids::is_full_hex;

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
    /// What the baseline holds (for a rename, at the old path); `None` for an added file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<Entry>,
    /// What the patch carries (the staged entry); `None` for a deleted file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<Entry>,
}

/// One side of a changed file as git stores it: its mode and object id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    pub mode: EntryMode,
    /// A blob (the text, or a link's target), or for a gitlink a commit of another repository.
    pub id: ObjectId,
}

/// Git's file modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EntryMode {
    /// `100644`
    Regular,
    /// `100755`
    Executable,
    /// `120000`: the blob is the link's target.
    Symlink,
    /// `160000`: a commit of another repository (a submodule or a nested repository).
    Gitlink,
}

impl EntryMode {
    fn parse(octal: &str) -> Option<EntryMode> {
        match octal {
            "100644" => Some(EntryMode::Regular),
            "100755" => Some(EntryMode::Executable),
            "120000" => Some(EntryMode::Symlink),
            "160000" => Some(EntryMode::Gitlink),
            _ => None,
        }
    }
}

/// A full git object id (40 or 64 lowercase hex digits), checked when made, so it is safe as a git
/// argument.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct ObjectId(String);

impl ObjectId {
    /// Accepts exactly a full lowercase hex id.
    pub fn parse(value: &str) -> Option<ObjectId> {
        is_full_hex(value).then(|| ObjectId(value.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for ObjectId {
    type Error = String;

    fn try_from(value: String) -> Result<Self, Self::Error> {
        ObjectId::parse(&value).ok_or_else(|| format!("`{value}` is not a full object id"))
    }
}

impl From<ObjectId> for String {
    fn from(id: ObjectId) -> String {
        id.0
    }
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

/// Parses `git diff --raw -z --no-abbrev` output: `:OLDMODE NEWMODE OLDID NEWID STATUS\0PATH\0`, or
/// `...RNNN\0FROM\0TO\0` for renames (and copies, which are reported as additions of the new path). A side
/// with mode `000000` is absent. Returns `None` on output of another shape (a mode git does not store, an
/// abbreviated id, an unknown status).
pub(crate) fn parse_raw(raw: &[u8]) -> Option<Vec<ChangedFile>> {
    let mut fields = raw.split(|b| *b == 0).filter(|f| !f.is_empty());
    let mut files = Vec::new();
    while let Some(head) = fields.next() {
        let head = std::str::from_utf8(head).ok()?.strip_prefix(':')?;
        let mut cols = head.split(' ');
        let (old_mode, new_mode, old_id, new_id, status) = (
            cols.next()?,
            cols.next()?,
            cols.next()?,
            cols.next()?,
            cols.next()?,
        );
        let before = entry(old_mode, old_id)?;
        let after = entry(new_mode, new_id)?;
        let path = lossy(fields.next()?);
        let file = match status.as_bytes().first()? {
            b'A' => ChangedFile {
                status: ChangeKind::Added,
                path,
                before: None,
                after,
            },
            b'M' | b'T' => ChangedFile {
                status: ChangeKind::Modified,
                path,
                before,
                after,
            },
            b'D' => ChangedFile {
                status: ChangeKind::Deleted,
                path,
                before,
                after: None,
            },
            b'R' => ChangedFile {
                status: ChangeKind::Renamed { from: path },
                path: lossy(fields.next()?),
                before,
                after,
            },
            b'C' => ChangedFile {
                status: ChangeKind::Added,
                path: lossy(fields.next()?),
                before: None,
                after,
            },
            _ => return None,
        };
        files.push(file);
    }
    Some(files)
}

/// One side of a raw row: `Some(None)` when absent (mode `000000`), `None` when malformed.
fn entry(mode: &str, id: &str) -> Option<Option<Entry>> {
    if mode == "000000" {
        return Some(None);
    }
    Some(Some(Entry {
        mode: EntryMode::parse(mode)?,
        id: ObjectId::parse(id)?,
    }))
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

    fn id(digit: char) -> ObjectId {
        ObjectId::parse(&digit.to_string().repeat(40)).unwrap()
    }

    fn side(mode: EntryMode, digit: char) -> Option<Entry> {
        Some(Entry {
            mode,
            id: id(digit),
        })
    }

    #[test]
    fn raw_listing_covers_every_kind_with_modes_and_ids() {
        let (a, b, c, d, zero) = (
            "a".repeat(40),
            "b".repeat(40),
            "c".repeat(40),
            "d".repeat(40),
            "0".repeat(40),
        );
        let raw = format!(
            ":000000 100755 {zero} {a} A\0new.sh\0\
             :100644 100644 {a} {b} M\0a b.py\0\
             :100644 000000 {b} {zero} D\0gone.py\0\
             :100644 100644 {c} {d} R087\0old/x.py\0new/x.py\0\
             :100644 120000 {c} {d} T\0AGENTS.md\0\
             :000000 160000 {zero} {a} A\0vendor/lib\0"
        );
        let actual = parse_raw(raw.as_bytes());
        let expected = Some(vec![
            ChangedFile {
                status: ChangeKind::Added,
                path: "new.sh".into(),
                before: None,
                after: side(EntryMode::Executable, 'a'),
            },
            ChangedFile {
                status: ChangeKind::Modified,
                path: "a b.py".into(),
                before: side(EntryMode::Regular, 'a'),
                after: side(EntryMode::Regular, 'b'),
            },
            ChangedFile {
                status: ChangeKind::Deleted,
                path: "gone.py".into(),
                before: side(EntryMode::Regular, 'b'),
                after: None,
            },
            ChangedFile {
                status: ChangeKind::Renamed {
                    from: "old/x.py".into(),
                },
                path: "new/x.py".into(),
                before: side(EntryMode::Regular, 'c'),
                after: side(EntryMode::Regular, 'd'),
            },
            ChangedFile {
                status: ChangeKind::Modified,
                path: "AGENTS.md".into(),
                before: side(EntryMode::Regular, 'c'),
                after: side(EntryMode::Symlink, 'd'),
            },
            ChangedFile {
                status: ChangeKind::Added,
                path: "vendor/lib".into(),
                before: None,
                after: side(EntryMode::Gitlink, 'a'),
            },
        ]);
        assert_eq!(actual, expected);
    }

    #[test]
    fn raw_listing_of_another_shape_is_refused() {
        let a = "a".repeat(40);
        let rows = [
            format!(":100664 100644 {a} {a} M\0x\0"),
            format!(":100644 100644 {a} abc123 M\0x\0"),
            format!(":100644 100644 {a} {a} X\0x\0"),
            format!("100644 100644 {a} {a} M\0x\0"),
            format!(":100644 100644 {a} {a} R100\0only-one-path\0"),
        ];
        let actual: Vec<bool> = rows
            .iter()
            .map(|row| parse_raw(row.as_bytes()).is_none())
            .collect();
        assert_eq!(actual, vec![true; rows.len()]);
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
