//! Tasks as a tenant sees them: created queued, read back, listed by page and state, decided on.

use plumb_store::{AttemptEnd, Decision, Store, StoreError, TaskFilter, TaskState};

use super::backends::{new_task, on_both};

async fn a_task_is_created_queued_and_reads_back(store: &Store) {
    let created = store
        .create_task(&new_task("acme", "BILL-412"))
        .await
        .unwrap();
    assert_eq!(created.state, TaskState::Queued);
    assert_eq!(created.attempt, 0);
    assert_eq!(created.spec["ticket"], "BILL-412");
    assert_eq!(store.task("acme", &created.id).await.unwrap(), created);
    let events = store.events("acme", &created.id, 0, 100).await.unwrap();
    assert_eq!(events.len(), 1);
    assert_eq!((events[0].seq, events[0].kind.as_str()), (1, "state"));
    assert_eq!(events[0].body["state"], "queued");
}
on_both!(
    a_task_is_created_queued_and_reads_back,
    a_task_is_created_queued_and_reads_back
);

fn not_found<T>(result: Result<T, StoreError>) -> bool {
    matches!(result, Err(StoreError::NotFound(_)))
}

async fn another_tenant_s_task_reads_as_unknown(store: &Store) {
    let task = store.create_task(&new_task("acme", "mine")).await.unwrap();
    assert!(not_found(store.task("globex", &task.id).await));
    assert!(not_found(store.events("globex", &task.id, 0, 10).await));
    assert!(not_found(store.request_cancel("globex", &task.id).await));
    assert!(not_found(
        store.decide("globex", &task.id, &Decision::Reject).await
    ));
    assert!(not_found(store.attempts("globex", &task.id).await));
    let theirs = store
        .list_tasks("globex", &TaskFilter::default())
        .await
        .unwrap();
    assert!(theirs.tasks.is_empty());
    // Untouched by the attempts above.
    assert_eq!(
        store.task("acme", &task.id).await.unwrap().state,
        TaskState::Queued
    );
}
on_both!(
    another_tenant_s_task_reads_as_unknown,
    another_tenant_s_task_reads_as_unknown
);

async fn tasks_list_newest_first_by_page_and_state(store: &Store) {
    let mut ids = Vec::new();
    for n in 0..7 {
        ids.push(
            store
                .create_task(&new_task("acme", &format!("t{n}")))
                .await
                .unwrap()
                .id,
        );
    }
    store
        .create_task(&new_task("globex", "other"))
        .await
        .unwrap();
    let cancelled = store.request_cancel("acme", &ids[2]).await.unwrap();
    assert_eq!(cancelled.state, TaskState::Cancelled);

    let mut seen = Vec::new();
    let mut filter = TaskFilter {
        limit: 3,
        ..TaskFilter::default()
    };
    loop {
        let page = store.list_tasks("acme", &filter).await.unwrap();
        assert!(page.tasks.len() <= 3);
        seen.extend(page.tasks.iter().map(|task| task.id.clone()));
        match page.next {
            Some(cursor) => filter.before = Some(cursor),
            None => break,
        }
    }
    let newest_first: Vec<String> = ids.iter().rev().cloned().collect();
    assert_eq!(seen, newest_first);

    let only = TaskFilter {
        state: Some(TaskState::Cancelled),
        ..TaskFilter::default()
    };
    let page = store.list_tasks("acme", &only).await.unwrap();
    let listed: Vec<&str> = page.tasks.iter().map(|task| task.id.as_str()).collect();
    assert_eq!(listed, vec![ids[2].as_str()]);
}
on_both!(
    tasks_list_newest_first_by_page_and_state,
    tasks_list_newest_first_by_page_and_state
);

/// Runs a task to `awaiting_approval` with a diff whose SHA-256 is `sha`.
pub async fn awaiting_approval(store: &Store, tenant: &str, sha: &str) -> String {
    let task = store
        .create_task(&new_task(tenant, "fix it"))
        .await
        .unwrap();
    let claim = store
        .claim(&task.id, "w1", std::time::Duration::from_secs(60))
        .await
        .unwrap();
    for state in [
        TaskState::Running,
        TaskState::Checking,
        TaskState::Reviewing,
    ] {
        store.advance(&claim, state).await.unwrap();
    }
    let end = AttemptEnd {
        state: TaskState::AwaitingApproval,
        outcome: "success".into(),
        reason: None,
        diff_sha256: Some(sha.to_owned()),
    };
    store.finish(&claim, &end).await.unwrap();
    task.id
}

async fn approval_needs_the_stored_sha(store: &Store) {
    let sha = "a".repeat(64);
    let id = awaiting_approval(store, "acme", &sha).await;
    let stale = Decision::Approve {
        sha256: "b".repeat(64),
    };
    match store.decide("acme", &id, &stale).await {
        Err(StoreError::ShaMismatch { stored, .. }) => assert_eq!(stored, sha),
        other => panic!("a stale SHA was not refused: {other:?}"),
    }
    assert_eq!(
        store.task("acme", &id).await.unwrap().state,
        TaskState::AwaitingApproval
    );
    let approved = store
        .decide(
            "acme",
            &id,
            &Decision::Approve {
                sha256: sha.clone(),
            },
        )
        .await;
    assert_eq!(approved.unwrap().state, TaskState::Approved);
    // Decided once: a second decision is a wrong state, not a second approval.
    match store.decide("acme", &id, &Decision::Reject).await {
        Err(StoreError::WrongState { state, .. }) => assert_eq!(state, TaskState::Approved),
        other => panic!("{other:?}"),
    }
    let undone = store
        .decide("acme", &id, &Decision::RollBack)
        .await
        .unwrap();
    assert_eq!(undone.state, TaskState::RolledBack);
}
on_both!(approval_needs_the_stored_sha, approval_needs_the_stored_sha);

async fn a_task_that_is_not_waiting_cannot_be_approved(store: &Store) {
    let task = store.create_task(&new_task("acme", "fresh")).await.unwrap();
    let approve = Decision::Approve {
        sha256: String::new(),
    };
    match store.decide("acme", &task.id, &approve).await {
        Err(StoreError::WrongState { state, wanted, .. }) => {
            assert_eq!((state, wanted), (TaskState::Queued, TaskState::Approved));
        }
        other => panic!("{other:?}"),
    }
}
on_both!(
    a_task_that_is_not_waiting_cannot_be_approved,
    a_task_that_is_not_waiting_cannot_be_approved
);

async fn reopen_and_approve(db: super::backends::Db) {
    // Reopening is what a restart of `plumb serve` does: the waiting task is a record in the
    // database, not a thread that waited.
    let sha = "c".repeat(64);
    let id = awaiting_approval(&db.store, "acme", &sha).await;
    let before = db.store.task("acme", &id).await.unwrap();
    db.store.close().await;
    let reopened = Store::open(&db.url).await.unwrap();
    assert_eq!(reopened.task("acme", &id).await.unwrap(), before);
    let approved = reopened
        .decide("acme", &id, &Decision::Approve { sha256: sha })
        .await;
    assert_eq!(approved.unwrap().state, TaskState::Approved);
    reopened.close().await;
    db.finish().await;
}

mod a_task_waiting_for_approval_survives_reopening_the_store {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn sqlite() {
        super::reopen_and_approve(crate::suite::backends::sqlite().await).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn postgres() {
        super::reopen_and_approve(crate::suite::backends::postgres().await).await;
    }
}
