//! Why a worker stops a run it holds, as a type: the run learns it from the [`Stop`] in its
//! `RunContext` and passes it on to the agent's input channel, so the report names who stopped
//! it rather than a bare "cancelled".

use std::sync::{Arc, OnceLock};

use tokio_util::sync::CancellationToken;

/// Why a held run is stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopCause {
    /// A person asked to cancel the task (read by the attempt's heartbeat).
    CancelRequested,
    /// The worker process is stopping; the task goes back on the queue for another.
    WorkerStopping,
    /// The attempt is no longer current: another worker took the task for dead.
    Superseded,
}

/// Fires once, with the first cause given; also fires (as `WorkerStopping`) with the worker's
/// shutdown token it was made under.
#[derive(Debug, Clone)]
pub struct Stop {
    token: CancellationToken,
    cause: Arc<OnceLock<StopCause>>,
}

impl Stop {
    /// A stop that also fires when `shutdown` does.
    pub fn under(shutdown: &CancellationToken) -> Self {
        Self {
            token: shutdown.child_token(),
            cause: Arc::new(OnceLock::new()),
        }
    }

    /// Stops the run for `cause`; a later cause does not replace the first.
    pub fn stop(&self, cause: StopCause) {
        let _ = self.cause.set(cause);
        self.token.cancel();
    }

    pub fn is_stopped(&self) -> bool {
        self.token.is_cancelled()
    }

    /// Resolves once the run is to stop, with why.
    pub async fn stopped(&self) -> StopCause {
        self.token.cancelled().await;
        self.cause().unwrap_or(StopCause::WorkerStopping)
    }

    /// Why the run was stopped; `None` while it was not.
    pub fn cause(&self) -> Option<StopCause> {
        self.is_stopped().then(|| {
            self.cause
                .get()
                .copied()
                .unwrap_or(StopCause::WorkerStopping)
        })
    }

    /// A token cancelled with the stop, for code that takes one.
    pub fn token(&self) -> CancellationToken {
        self.token.child_token()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_first_cause_is_kept_and_a_shutdown_reads_as_the_worker_stopping() {
        let shutdown = CancellationToken::new();
        let stop = Stop::under(&shutdown);
        assert_eq!(stop.cause(), None);
        stop.stop(StopCause::CancelRequested);
        stop.stop(StopCause::Superseded);
        assert_eq!(stop.stopped().await, StopCause::CancelRequested);

        let other = Stop::under(&shutdown);
        shutdown.cancel();
        assert_eq!(other.stopped().await, StopCause::WorkerStopping);
        assert_eq!(other.cause(), Some(StopCause::WorkerStopping));
    }
}
