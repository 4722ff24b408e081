//! Events: numbered per task from 1 without gaps, in the order written, read from any point,
//! never rewritten; artefacts kept per attempt with their SHA-256.

use std::time::Duration;

use plumb_store::{ArtefactName, Claim, RunFigures, Store, StoreError};
use sha2::{Digest as _, Sha256};

use super::backends::{new_task, on_both};

async fn events_are_numbered_in_order_and_read_from_any_point(store: &Store) {
    let task = store
        .create_task(&new_task("acme", "events"))
        .await
        .unwrap();
    let claim = store
        .claim(&task.id, "w1", Duration::from_secs(60))
        .await
        .unwrap();
    // Written from several tasks at once, as a worker's event writer and a person's cancel might.
    let mut writers = Vec::new();
    for writer in 0..4 {
        let store = store.clone();
        let claim = claim.clone();
        writers.push(tokio::spawn(async move {
            for n in 0..10 {
                let body = serde_json::json!({ "writer": writer, "n": n });
                store.append_event(&claim, "round", &body).await.unwrap();
            }
        }));
    }
    for writer in writers {
        writer.await.unwrap();
    }
    let all = store.events("acme", &task.id, 0, 1000).await.unwrap();
    // queued, preparing, then the 40 written above.
    let seqs: Vec<i64> = all.iter().map(|event| event.seq).collect();
    assert_eq!(seqs, (1..=42).collect::<Vec<i64>>());
    // Each writer's own events in the order it wrote them.
    for writer in 0..4 {
        let ns: Vec<i64> = all
            .iter()
            .filter(|event| event.body["writer"] == writer)
            .map(|event| event.body["n"].as_i64().unwrap())
            .collect();
        assert_eq!(ns, (0..10).collect::<Vec<i64>>());
    }
    // A reader resuming after event 30 gets 31 onward, once each.
    let rest = store.events("acme", &task.id, 30, 1000).await.unwrap();
    assert_eq!(rest.first().map(|event| event.seq), Some(31));
    assert_eq!(rest.len(), 12);
    assert_eq!(rest, all[30..].to_vec());
}
on_both!(
    events_are_numbered_in_order_and_read_from_any_point,
    events_are_numbered_in_order_and_read_from_any_point
);

async fn artefacts_are_kept_per_attempt_with_their_sha256(store: &Store) {
    let task = store
        .create_task(&new_task("acme", "artefacts"))
        .await
        .unwrap();
    let claim = store
        .claim(&task.id, "w1", Duration::from_secs(60))
        .await
        .unwrap();
    let patch = b"diff --git a/x b/x\n\xff not utf-8\n";
    let sha = store
        .put_artefact(&claim, ArtefactName::Patch, patch)
        .await
        .unwrap();
    let expected: String = Sha256::digest(patch)
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect();
    assert_eq!(sha, expected);
    let stored = store
        .artefact("acme", &task.id, ArtefactName::Patch)
        .await
        .unwrap()
        .unwrap();
    assert_eq!((stored.attempt, stored.content.as_slice()), (1, &patch[..]));
    assert_eq!(stored.sha256, sha);
    assert!(
        store
            .artefact("acme", &task.id, ArtefactName::Review)
            .await
            .unwrap()
            .is_none()
    );
}
on_both!(
    artefacts_are_kept_per_attempt_with_their_sha256,
    artefacts_are_kept_per_attempt_with_their_sha256
);

async fn a_run_s_figures_are_kept_on_its_task_by_the_current_attempt_only(store: &Store) {
    let task = store
        .create_task(&new_task("acme", "figures"))
        .await
        .unwrap();
    assert_eq!(task.figures, None, "none before a run finished");
    let claim = store
        .claim(&task.id, "w1", Duration::from_secs(60))
        .await
        .unwrap();
    let figures = RunFigures {
        rounds: 8,
        tokens: 12_345,
        usd: 0.0125,
    };
    store.set_figures(&claim, &figures).await.unwrap();
    let read = store.task("acme", &task.id).await.unwrap();
    assert_eq!(read.figures, Some(figures));
    // An attempt that is not the task's current one writes nothing.
    let stale = Claim {
        attempt: claim.attempt + 1,
        ..claim
    };
    let other = RunFigures {
        rounds: 1,
        tokens: 1,
        usd: 1.0,
    };
    assert!(matches!(
        store.set_figures(&stale, &other).await,
        Err(StoreError::StaleAttempt { .. })
    ));
    let read = store.task("acme", &task.id).await.unwrap();
    assert_eq!(read.figures, Some(figures));
}
on_both!(
    a_run_s_figures_are_kept_on_its_task_by_the_current_attempt_only,
    a_run_s_figures_are_kept_on_its_task_by_the_current_attempt_only
);

async fn an_event_cannot_be_rewritten(db: super::backends::Db) {
    let task = db
        .store
        .create_task(&new_task("acme", "append only"))
        .await
        .unwrap();
    // Through a connection of its own, past the store's API: the database itself refuses.
    let rewrite = "UPDATE events SET body = '{}' WHERE task_id = $1";
    let refused = if db.url.starts_with("sqlite:") {
        let pool = sqlx::SqlitePool::connect(&db.url).await.unwrap();
        sqlx::query(rewrite)
            .bind(&task.id)
            .execute(&pool)
            .await
            .unwrap_err()
    } else {
        let pool = sqlx::PgPool::connect(&db.url).await.unwrap();
        sqlx::query(rewrite)
            .bind(&task.id)
            .execute(&pool)
            .await
            .unwrap_err()
    };
    assert!(
        refused.to_string().contains("events are append-only"),
        "{refused}"
    );
    let events = db.store.events("acme", &task.id, 0, 10).await.unwrap();
    assert_eq!(events[0].body["state"], "queued");
    db.finish().await;
}

mod an_event_cannot_be_rewritten {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn sqlite() {
        super::an_event_cannot_be_rewritten(crate::suite::backends::sqlite().await).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn postgres() {
        super::an_event_cannot_be_rewritten(crate::suite::backends::postgres().await).await;
    }
}
