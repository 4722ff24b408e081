//! Workers and attempts: a live run is never taken twice, a dead worker's task is retried on a
//! fresh attempt and then failed, a late finisher changes nothing, cancel reaches the worker.

use std::collections::BTreeMap;
use std::time::Duration;

use plumb_store::{ArtefactName, AttemptEnd, Store, StoreError, TaskFilter, TaskState};

use super::backends::{new_task, on_both};

const LEASE: Duration = Duration::from_secs(60);
/// A lease every heartbeat is older than: the worker is taken for dead at once.
const EXPIRED: Duration = Duration::ZERO;

fn stale<T>(result: Result<T, StoreError>) -> bool {
    matches!(result, Err(StoreError::StaleAttempt { .. }))
}

fn failed(reason: &str) -> AttemptEnd {
    AttemptEnd {
        state: TaskState::Failed,
        outcome: "tests_failed".into(),
        reason: Some(reason.into()),
        diff_sha256: None,
    }
}

async fn a_live_attempt_is_not_taken_by_another_worker(store: &Store) {
    let task = store
        .create_task(&new_task("acme", "long run"))
        .await
        .unwrap();
    let claim = store.claim(&task.id, "w1", LEASE).await.unwrap();
    assert_eq!(claim.attempt, 1);
    store.advance(&claim, TaskState::Running).await.unwrap();
    match store.claim(&task.id, "w2", LEASE).await {
        Err(StoreError::Held { worker, .. }) => assert_eq!(worker, "w1"),
        other => panic!("a live run was taken: {other:?}"),
    }
    assert!(store.sweep_lost("acme", LEASE).await.unwrap().is_empty());
    let signals = store.heartbeat(&claim).await.unwrap();
    assert!(!signals.cancel_requested);
    assert_eq!(store.task("acme", &task.id).await.unwrap().attempt, 1);
}
on_both!(
    a_live_attempt_is_not_taken_by_another_worker,
    a_live_attempt_is_not_taken_by_another_worker
);

async fn a_dead_worker_s_task_is_retried_then_failed_with_the_reason(store: &Store) {
    let task = store.create_task(&new_task("acme", "dies")).await.unwrap();
    let first = store.claim(&task.id, "w1", LEASE).await.unwrap();
    store.advance(&first, TaskState::Running).await.unwrap();

    let moved = store.sweep_lost("acme", EXPIRED).await.unwrap();
    assert_eq!(moved, vec![(task.id.clone(), TaskState::Queued)]);
    let queued = store.task("acme", &task.id).await.unwrap();
    assert_eq!(queued.state, TaskState::Queued);
    assert!(
        queued
            .reason
            .unwrap_or_default()
            .contains("worker w1 sent no heartbeat")
    );

    let second = store.claim(&task.id, "w2", LEASE).await.unwrap();
    assert_eq!(second.attempt, 2);
    // The first worker, late: every write it tries is refused, and the task is unchanged.
    assert!(stale(store.heartbeat(&first).await));
    assert!(stale(
        store
            .append_event(&first, "round", &serde_json::json!({}))
            .await
    ));
    assert!(stale(
        store
            .put_artefact(&first, ArtefactName::Patch, b"late")
            .await
    ));
    assert!(stale(store.finish(&first, &failed("late")).await));
    assert!(stale(store.advance(&first, TaskState::Checking).await));
    assert_eq!(
        store.task("acme", &task.id).await.unwrap().state,
        TaskState::Preparing
    );

    // Its second worker dies too: out of attempts (two), the task fails, saying why.
    let moved = store.sweep_lost("acme", EXPIRED).await.unwrap();
    assert_eq!(moved, vec![(task.id.clone(), TaskState::Failed)]);
    let ended = store.task("acme", &task.id).await.unwrap();
    assert_eq!(ended.state, TaskState::Failed);
    assert_eq!(ended.outcome.as_deref(), Some("infra_error"));
    let reason = ended.reason.unwrap_or_default();
    assert!(
        reason.contains("worker w2") && reason.contains("no attempts left (2 of 2)"),
        "{reason}"
    );

    let attempts = store.attempts("acme", &task.id).await.unwrap();
    let outcomes: Vec<(i64, &str, Option<&str>)> = attempts
        .iter()
        .map(|attempt| {
            (
                attempt.number,
                attempt.worker.as_str(),
                attempt.outcome.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        outcomes,
        vec![(1, "w1", Some("lost")), (2, "w2", Some("lost"))]
    );
}
on_both!(
    a_dead_worker_s_task_is_retried_then_failed_with_the_reason,
    a_dead_worker_s_task_is_retried_then_failed_with_the_reason
);

async fn a_claim_on_a_stale_attempt_takes_over(store: &Store) {
    // The job queue hands the task to another worker (its own orphan recovery): the store lets it
    // in only because the holder's heartbeat is older than the lease.
    let task = store
        .create_task(&new_task("acme", "orphan"))
        .await
        .unwrap();
    let first = store.claim(&task.id, "w1", LEASE).await.unwrap();
    let second = store.claim(&task.id, "w2", EXPIRED).await.unwrap();
    assert_eq!((first.attempt, second.attempt), (1, 2));
    assert!(matches!(
        store.heartbeat(&first).await,
        Err(StoreError::StaleAttempt { .. })
    ));
    store.heartbeat(&second).await.unwrap();
}
on_both!(
    a_claim_on_a_stale_attempt_takes_over,
    a_claim_on_a_stale_attempt_takes_over
);

async fn cancel_reaches_the_worker_through_its_heartbeat(store: &Store) {
    let task = store
        .create_task(&new_task("acme", "cancel me"))
        .await
        .unwrap();
    let claim = store.claim(&task.id, "w1", LEASE).await.unwrap();
    store.advance(&claim, TaskState::Running).await.unwrap();
    let flagged = store.request_cancel("acme", &task.id).await.unwrap();
    assert_eq!(flagged.state, TaskState::Running);
    assert!(flagged.cancel_requested_ms.is_some());
    assert!(store.heartbeat(&claim).await.unwrap().cancel_requested);
    let end = AttemptEnd {
        state: TaskState::Cancelled,
        outcome: "cancelled".into(),
        reason: Some("cancelled by a person; rolled back".into()),
        diff_sha256: None,
    };
    store.finish(&claim, &end).await.unwrap();
    let ended = store.task("acme", &task.id).await.unwrap();
    assert_eq!(
        (ended.state, ended.cancel_requested_ms),
        (TaskState::Cancelled, None)
    );
    // A final task cannot be cancelled again.
    assert!(matches!(
        store.request_cancel("acme", &task.id).await,
        Err(StoreError::WrongState { .. })
    ));
}
on_both!(
    cancel_reaches_the_worker_through_its_heartbeat,
    cancel_reaches_the_worker_through_its_heartbeat
);

async fn a_dead_worker_s_cancelled_task_ends_cancelled_not_retried(store: &Store) {
    let task = store
        .create_task(&new_task("acme", "cancel then die"))
        .await
        .unwrap();
    let claim = store.claim(&task.id, "w1", LEASE).await.unwrap();
    store.request_cancel("acme", &task.id).await.unwrap();
    drop(claim);
    let moved = store.sweep_lost("acme", EXPIRED).await.unwrap();
    assert_eq!(moved, vec![(task.id.clone(), TaskState::Cancelled)]);
}
on_both!(
    a_dead_worker_s_cancelled_task_ends_cancelled_not_retried,
    a_dead_worker_s_cancelled_task_ends_cancelled_not_retried
);

async fn a_run_cannot_skip_the_ladder_or_end_without_a_diff(store: &Store) {
    let task = store.create_task(&new_task("acme", "skip")).await.unwrap();
    let claim = store.claim(&task.id, "w1", LEASE).await.unwrap();
    store.advance(&claim, TaskState::Running).await.unwrap();
    let waiting = AttemptEnd {
        state: TaskState::AwaitingApproval,
        outcome: "success".into(),
        reason: None,
        diff_sha256: Some("d".repeat(64)),
    };
    // From running, straight to awaiting approval: the ladder never ran.
    assert!(matches!(
        store.finish(&claim, &waiting).await,
        Err(StoreError::WrongState { .. })
    ));
    store.advance(&claim, TaskState::Checking).await.unwrap();
    let no_diff = AttemptEnd {
        diff_sha256: None,
        ..waiting.clone()
    };
    assert!(matches!(
        store.finish(&claim, &no_diff).await,
        Err(StoreError::WrongState { .. })
    ));
    // A worker cannot approve.
    assert!(matches!(
        store.advance(&claim, TaskState::Approved).await,
        Err(StoreError::WrongState { .. })
    ));
    store.finish(&claim, &waiting).await.unwrap();
    assert_eq!(
        store.task("acme", &task.id).await.unwrap().state,
        TaskState::AwaitingApproval
    );
}
on_both!(
    a_run_cannot_skip_the_ladder_or_end_without_a_diff,
    a_run_cannot_skip_the_ladder_or_end_without_a_diff
);

async fn fifty_tasks_four_workers_each_task_claimed_exactly_once(store: &Store) {
    for n in 0..50 {
        store
            .create_task(&new_task("acme", &format!("t{n}")))
            .await
            .unwrap();
    }
    let mut workers = Vec::new();
    for w in 0..4 {
        let store = store.clone();
        workers.push(tokio::spawn(async move {
            let worker = format!("w{w}");
            let mut done = Vec::new();
            loop {
                let filter = TaskFilter {
                    state: Some(TaskState::Queued),
                    limit: 10,
                    ..TaskFilter::default()
                };
                let page = store.list_tasks("acme", &filter).await.unwrap();
                if page.tasks.is_empty() {
                    break;
                }
                for task in page.tasks {
                    match store.claim(&task.id, &worker, LEASE).await {
                        Ok(claim) => {
                            store.advance(&claim, TaskState::Running).await.unwrap();
                            store.finish(&claim, &failed("no fix")).await.unwrap();
                            done.push(task.id);
                        }
                        // Another worker took it first.
                        Err(StoreError::Held { .. } | StoreError::WrongState { .. }) => {}
                        Err(error) => panic!("{error}"),
                    }
                }
            }
            done
        }));
    }
    let mut runs: BTreeMap<String, usize> = BTreeMap::new();
    for worker in workers {
        for id in worker.await.unwrap() {
            *runs.entry(id).or_default() += 1;
        }
    }
    assert_eq!(runs.len(), 50);
    assert!(runs.values().all(|count| *count == 1), "{runs:?}");
    let page = store
        .list_tasks(
            "acme",
            &TaskFilter {
                limit: 100,
                ..TaskFilter::default()
            },
        )
        .await
        .unwrap();
    assert!(
        page.tasks
            .iter()
            .all(|task| task.state == TaskState::Failed && task.attempt == 1)
    );
}
on_both!(
    fifty_tasks_four_workers_each_task_claimed_exactly_once,
    fifty_tasks_four_workers_each_task_claimed_exactly_once
);
