//! Where a run's events go: the journal (one writer task, `journal.rs`) and, when a front end
//! watches, its observer channel. Everything that happens in a run, the helpers' work included,
//! reaches both through [`Emitter::emit`].

use std::path::Path;

use plumb_protocol::Event;
use tokio::sync::mpsc;

use crate::journal::Journal;

pub(crate) struct Emitter {
    journal: Journal,
    observer: Option<mpsc::Sender<Event>>,
}

impl Emitter {
    pub(crate) fn new(journal: Journal, observer: Option<mpsc::Sender<Event>>) -> Self {
        Self { journal, observer }
    }

    /// Sends an event to the observer, if any, and to the journal.
    pub(crate) async fn emit(&self, event: Event) {
        if let Some(observer) = &self.observer {
            let _ = observer.send(event.clone()).await;
        }
        self.journal.write(event).await;
    }

    pub(crate) fn journal_path(&self) -> &Path {
        self.journal.path()
    }

    /// Flushes and closes the journal.
    pub(crate) async fn close(self) -> std::io::Result<()> {
        self.journal.close().await
    }
}
