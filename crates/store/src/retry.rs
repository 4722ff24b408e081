//! Riding out a database that is away for a moment — a PostgreSQL restart, a failover, a dropped
//! connection — for the writes a worker must not lose: a run's events and artefacts, its state
//! moves and how it ended. Only errors that say the database could not be reached are retried;
//! a refusal (a stale attempt, a wrong state) is answered at once.

use std::future::Future;
use std::time::Duration;

use tokio::time::Instant;

use crate::error::{Result, StoreError};

/// The first pause between tries; each next one doubles, up to [`MAX_PAUSE`].
const FIRST_PAUSE: Duration = Duration::from_millis(100);
const MAX_PAUSE: Duration = Duration::from_secs(2);

impl StoreError {
    /// Whether the database could not be reached (and a later try may succeed), as opposed to an
    /// answer from it.
    pub fn is_transient(&self) -> bool {
        match self {
            StoreError::Database(error) => transient_sqlx(error),
            _ => false,
        }
    }
}

fn transient_sqlx(error: &sqlx::Error) -> bool {
    match error {
        sqlx::Error::Io(_)
        | sqlx::Error::PoolTimedOut
        | sqlx::Error::Tls(_)
        | sqlx::Error::Protocol(_)
        | sqlx::Error::WorkerCrashed => true,
        // SQLSTATE class 08 (connection exception) and 57P0x (the server is shutting down,
        // restarting or not yet accepting connections).
        sqlx::Error::Database(error) => error
            .code()
            .is_some_and(|code| code.starts_with("08") || code.starts_with("57P0")),
        _ => false,
    }
}

/// Runs `op` until it succeeds, fails with a non-transient error, or `within` has passed since
/// the first try (then the last error is returned).
pub async fn retry_transient<T, F, Fut>(within: Duration, mut op: F) -> Result<T>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T>>,
{
    let deadline = Instant::now() + within;
    let mut pause = FIRST_PAUSE;
    loop {
        match op().await {
            Err(error) if error.is_transient() && Instant::now() + pause < deadline => {
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(MAX_PAUSE);
            }
            done => return done,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU32, Ordering};

    use super::*;

    fn unreachable() -> StoreError {
        StoreError::Database(sqlx::Error::Io(std::io::Error::from(
            std::io::ErrorKind::ConnectionRefused,
        )))
    }

    #[tokio::test]
    async fn a_transient_failure_is_tried_again_until_it_succeeds() {
        let tries = AtomicU32::new(0);
        let result = retry_transient(Duration::from_secs(10), || async {
            if tries.fetch_add(1, Ordering::SeqCst) < 3 {
                Err(unreachable())
            } else {
                Ok(7)
            }
        })
        .await;
        assert_eq!(result.unwrap(), 7);
        assert_eq!(tries.load(Ordering::SeqCst), 4);
    }

    #[tokio::test]
    async fn a_refusal_is_answered_at_once_and_an_outage_gives_up_at_the_deadline() {
        let tries = AtomicU32::new(0);
        let refused: Result<()> = retry_transient(Duration::from_secs(10), || async {
            tries.fetch_add(1, Ordering::SeqCst);
            Err(StoreError::NotFound("t1".into()))
        })
        .await;
        assert!(matches!(refused, Err(StoreError::NotFound(_))));
        assert_eq!(tries.load(Ordering::SeqCst), 1);

        // Pauses of 0.1, 0.2 and 0.4 s fit in one second; the next (0.8 s) would not.
        let tries = AtomicU32::new(0);
        let away: Result<()> = retry_transient(Duration::from_secs(1), || async {
            tries.fetch_add(1, Ordering::SeqCst);
            Err(unreachable())
        })
        .await;
        assert!(away.unwrap_err().is_transient());
        let tries = tries.load(Ordering::SeqCst);
        assert!((3..=4).contains(&tries), "{tries} tries");
    }
}
