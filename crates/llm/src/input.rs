//! stdin, read on a thread of its own from the start, so the runner notices at any moment that plumb has gone.
//!
//! plumb closes the runner's stdin only when it is done with it or has died; either way nobody will read another
//! reply. So end of file is final: the thread sets [`Input::closed`], which the engine checks between prompt
//! batches and between generated tokens (a request being answered is abandoned), and the main loop ends once the
//! lines read before it are consumed. This is the runner's second line of defence: the first is the parent-death
//! signal it asks for at start (`main.rs`), which covers a parent that dies with stdin still open elsewhere.

use std::io::BufRead;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, sync_channel};

/// Request lines as they arrive, and whether stdin has ended.
pub struct Input {
    lines: Receiver<Result<Vec<u8>, String>>,
    closed: Arc<AtomicBool>,
}

impl Input {
    /// Starts the reading thread on this process's stdin.
    pub fn start() -> Self {
        let closed = Arc::new(AtomicBool::new(false));
        // Bounded: plumb sends one request at a time, so a few lines of slack are plenty.
        let (send, lines) = sync_channel(16);
        let flag = Arc::clone(&closed);
        std::thread::spawn(move || {
            let mut stdin = std::io::stdin().lock();
            loop {
                let mut line = Vec::new();
                match stdin.read_until(b'\n', &mut line) {
                    Ok(0) => break,
                    Ok(_) => {
                        if send.send(Ok(line)).is_err() {
                            break;
                        }
                    }
                    Err(err) => {
                        let _ = send.send(Err(format!("could not read stdin ({err})")));
                        break;
                    }
                }
            }
            flag.store(true, Ordering::SeqCst);
        });
        Self { lines, closed }
    }

    /// The flag the engine watches: true once stdin has ended.
    pub fn closed(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.closed)
    }

    /// The next line, or `None` at the end of stdin (also when it ended while lines were still queued: their
    /// replies would have no reader).
    pub fn next_line(&self) -> Option<Result<Vec<u8>, String>> {
        if self.closed.load(Ordering::SeqCst) {
            return None;
        }
        self.lines.recv().ok()
    }
}
