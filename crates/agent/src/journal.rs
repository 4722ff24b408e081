//! The journal writer: one task owns the file and writes one JSON line per event, flushed as it
//! goes, so a run that dies still leaves every event before the crash on disk. What a line keeps
//! of its event (a request's new messages, texts capped) is `journal_entry.rs`.

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use plumb_protocol::{Event, JOURNAL_VERSION, JournalLine};
use tokio::io::AsyncWriteExt;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::journal_entry::EntryWriter;

/// How many events may wait for the writer before senders wait too.
const QUEUE: usize = 256;

/// A handle on the journal task.
pub struct Journal {
    path: PathBuf,
    tx: mpsc::Sender<Event>,
    task: JoinHandle<std::io::Result<()>>,
}

impl Journal {
    /// Creates (or truncates) the journal file and starts its writer task.
    pub async fn create(path: &Path, run_id: &str) -> std::io::Result<Journal> {
        if let Some(parent) = path.parent() {
            tokio::fs::create_dir_all(parent).await?;
        }
        let file = tokio::fs::File::create(path).await?;
        let (tx, rx) = mpsc::channel(QUEUE);
        let task = tokio::spawn(write_lines(file, rx, run_id.to_string()));
        Ok(Journal {
            path: path.to_path_buf(),
            tx,
            task,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Queues one event. A writer that has stopped (disk full) loses the event; `close` reports it.
    pub async fn write(&self, event: Event) {
        let _ = self.tx.send(event).await;
    }

    /// Waits until every queued event is on disk.
    pub async fn close(self) -> std::io::Result<()> {
        drop(self.tx);
        match self.task.await {
            Ok(result) => result,
            Err(err) => Err(std::io::Error::other(err)),
        }
    }
}

async fn write_lines(
    mut file: tokio::fs::File,
    mut rx: mpsc::Receiver<Event>,
    run: String,
) -> std::io::Result<()> {
    let mut seq = 0u64;
    let mut entries = EntryWriter::default();
    while let Some(event) = rx.recv().await {
        let line = JournalLine {
            v: JOURNAL_VERSION,
            ts: now_ms(),
            run: run.clone(),
            seq,
            event: entries.entry(event),
        };
        seq += 1;
        let mut text = serde_json::to_string(&line).map_err(std::io::Error::other)?;
        text.push('\n');
        file.write_all(text.as_bytes()).await?;
        file.flush().await?;
    }
    file.sync_data().await
}

/// Milliseconds since the Unix epoch.
pub(crate) fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// Reads a journal file back into its lines (versions 1 and 2; [`crate::journal_requests`] rebuilds
/// the requests of either); the error names the line that does not parse or is of a newer version.
pub fn read_journal(path: &Path) -> Result<Vec<JournalLine>, String> {
    // A journal is plumb's own file, named by the user, not workspace content.
    #[allow(clippy::disallowed_methods)]
    let text = std::fs::read_to_string(path)
        .map_err(|err| format!("could not read the journal {}: {err}", path.display()))?;
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(index, line)| {
            let parsed = serde_json::from_str::<JournalLine>(line).map_err(|err| {
                format!(
                    "line {} of the journal {} is not a plumb journal line: {err}",
                    index + 1,
                    path.display()
                )
            })?;
            if parsed.v > JOURNAL_VERSION {
                return Err(format!(
                    "line {} of the journal {} is of journal version {}, newer than this plumb reads ({JOURNAL_VERSION}); read it with the plumb version named in its first line, or a newer one",
                    index + 1,
                    path.display(),
                    parsed.v,
                ));
            }
            Ok(parsed)
        })
        .collect()
}
