//! The job queue and its workers, on SQLite and on PostgreSQL: every task runs exactly once with
//! two workers taking jobs at once, a run longer than the queue's dead-worker time is not run
//! twice, and a task whose worker stopped mid-run is retried by another.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::future::BoxFuture;
use plumb_store::{
    AttemptEnd, QueueSettings, RunContext, Store, TaskFilter, TaskRunner, TaskState,
    WorkerSettings, run_worker,
};
use tokio_util::sync::CancellationToken;

use super::backends::new_task;

/// Which task each run was, by which attempt and worker.
type RunLog = Arc<Mutex<Vec<(String, i64, String)>>>;

/// Records the run, takes `duration` (or forever), and ends as a verified change or a failure.
struct Recorder {
    log: RunLog,
    duration: Option<Duration>,
}

impl TaskRunner for Recorder {
    fn run(&self, run: RunContext) -> BoxFuture<'static, AttemptEnd> {
        let log = self.log.clone();
        let duration = self.duration;
        Box::pin(async move {
            log.lock().unwrap().push((
                run.task.id.clone(),
                run.claim.attempt,
                run.claim.worker.clone(),
            ));
            run.store
                .advance(&run.claim, TaskState::Running)
                .await
                .unwrap();
            let body = serde_json::json!({ "round": 1 });
            run.store
                .append_event(&run.claim, "round", &body)
                .await
                .unwrap();
            let wait = async {
                match duration {
                    Some(duration) => tokio::time::sleep(duration).await,
                    None => std::future::pending::<()>().await,
                }
            };
            tokio::select! {
                () = wait => {}
                cause = run.stop.stopped() => {
                    return AttemptEnd {
                        state: TaskState::Cancelled,
                        outcome: "cancelled".into(),
                        reason: Some(format!("cancelled ({cause:?}); rolled back")),
                        diff_sha256: None,
                    };
                }
            }
            run.store
                .advance(&run.claim, TaskState::Checking)
                .await
                .unwrap();
            AttemptEnd {
                state: TaskState::AwaitingApproval,
                outcome: "success".into(),
                reason: None,
                diff_sha256: Some("e".repeat(64)),
            }
        })
    }
}

/// Fast beats and a short lease, so a dead worker shows in seconds.
fn settings(id: &str, queue: &str) -> WorkerSettings {
    WorkerSettings {
        id: id.to_owned(),
        queue: QueueSettings {
            name: queue.to_owned(),
            heartbeat: Duration::from_secs(1),
        },
        heartbeat: Duration::from_millis(200),
        // Many beats long, so a test process starved for a few seconds on a busy machine is not
        // taken for dead.
        lease: Duration::from_secs(5),
        sweep: Duration::from_millis(300),
    }
}

fn start(
    store: &Store,
    settings: WorkerSettings,
    runner: Recorder,
) -> (CancellationToken, tokio::task::JoinHandle<()>) {
    let shutdown = CancellationToken::new();
    let store = store.clone();
    let stop = shutdown.clone();
    let handle = tokio::spawn(async move {
        run_worker(store, settings, Arc::new(runner), stop)
            .await
            .unwrap();
    });
    (shutdown, handle)
}

async fn wait_until_settled(store: &Store, tenant: &str, count: usize) {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let filter = TaskFilter {
            limit: 500,
            ..TaskFilter::default()
        };
        let tasks = store.list_tasks(tenant, &filter).await.unwrap().tasks;
        let settled = tasks
            .iter()
            .filter(|task| {
                matches!(task.state, TaskState::AwaitingApproval) || task.state.is_final()
            })
            .count();
        if settled == count {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{settled} of {count} tasks settled in 120 s"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn wait_for_state(store: &Store, tenant: &str, id: &str, state: TaskState) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while store.task(tenant, id).await.unwrap().state != state {
        assert!(Instant::now() < deadline, "task {id} never became {state}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn unique(prefix: &str) -> String {
    format!("{prefix}-{:012x}", fastrand::u64(..) & 0xffff_ffff_ffff)
}

async fn every_task_runs_exactly_once_with_two_workers(store: Store, _url: String) {
    let tenant = unique("fifty");
    let mut queue = store
        .job_queue(&settings("-", &tenant).queue)
        .await
        .unwrap();
    for n in 0..50 {
        let task = store
            .create_task(&new_task(&tenant, &format!("t{n}")))
            .await
            .unwrap();
        queue.push(&task.id).await.unwrap();
    }
    let log = RunLog::default();
    let recorder = || Recorder {
        log: log.clone(),
        duration: Some(Duration::from_millis(20)),
    };
    let workers = [
        start(&store, settings(&unique("a"), &tenant), recorder()),
        start(&store, settings(&unique("b"), &tenant), recorder()),
    ];
    wait_until_settled(&store, &tenant, 50).await;
    for (shutdown, handle) in workers {
        shutdown.cancel();
        handle.await.unwrap();
    }
    let mut runs: BTreeMap<String, Vec<i64>> = BTreeMap::new();
    let mut by_worker: BTreeMap<String, usize> = BTreeMap::new();
    for (task, attempt, worker) in log.lock().unwrap().iter() {
        runs.entry(task.clone()).or_default().push(*attempt);
        *by_worker.entry(worker.clone()).or_default() += 1;
    }
    assert_eq!(runs.len(), 50);
    assert!(runs.values().all(|attempts| attempts == &[1]), "{runs:?}");
    let filter = TaskFilter {
        limit: 500,
        ..TaskFilter::default()
    };
    for task in store.list_tasks(&tenant, &filter).await.unwrap().tasks {
        assert_eq!((task.state, task.attempt), (TaskState::AwaitingApproval, 1));
        let events = store.events(&tenant, &task.id, 0, 100).await.unwrap();
        let kinds: Vec<&str> = events.iter().map(|event| event.kind.as_str()).collect();
        assert_eq!(
            kinds,
            ["state", "state", "state", "round", "state", "state"]
        );
    }
    eprintln!("runs by worker: {by_worker:?}");
}

async fn a_run_longer_than_the_queue_s_dead_worker_time_runs_once(store: Store, _url: String) {
    // The queue takes a worker for dead after two missed beats (2 s here); the run takes 6 s.
    let tenant = unique("long");
    let mut queue = store
        .job_queue(&settings("-", &tenant).queue)
        .await
        .unwrap();
    let task = store.create_task(&new_task(&tenant, "long")).await.unwrap();
    queue.push(&task.id).await.unwrap();
    let log = RunLog::default();
    let recorder = || Recorder {
        log: log.clone(),
        duration: Some(Duration::from_secs(6)),
    };
    let workers = [
        start(&store, settings(&unique("a"), &tenant), recorder()),
        start(&store, settings(&unique("b"), &tenant), recorder()),
    ];
    wait_until_settled(&store, &tenant, 1).await;
    for (shutdown, handle) in workers {
        shutdown.cancel();
        handle.await.unwrap();
    }
    assert_eq!(log.lock().unwrap().len(), 1, "{:?}", log.lock().unwrap());
    let ended = store.task(&tenant, &task.id).await.unwrap();
    assert_eq!(
        (ended.state, ended.attempt),
        (TaskState::AwaitingApproval, 1)
    );
}

async fn a_stopped_worker_s_task_is_retried_by_another(store: Store, url: String) {
    let tenant = unique("dies");
    let mut queue = store
        .job_queue(&settings("-", &tenant).queue)
        .await
        .unwrap();
    let task = store.create_task(&new_task(&tenant, "dies")).await.unwrap();
    queue.push(&task.id).await.unwrap();
    let log = RunLog::default();
    // The first worker's run never ends; the worker is then stopped dead, as a killed process
    // would be: it runs on a runtime of its own, shut down with every task on it (no goodbye to
    // the queue or the store, no heartbeat after).
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let doomed = settings(&unique("a"), &tenant);
    let runner = Arc::new(Recorder {
        log: log.clone(),
        duration: None,
    });
    // A store of its own too (its connections live on that runtime), as another process has.
    runtime.spawn(async move {
        let store = Store::open(&url).await.unwrap();
        run_worker(store, doomed, runner, CancellationToken::new()).await
    });
    wait_for_state(&store, &tenant, &task.id, TaskState::Running).await;
    runtime.shutdown_background();
    let (shutdown, second) = start(
        &store,
        settings(&unique("b"), &tenant),
        Recorder {
            log: log.clone(),
            duration: Some(Duration::from_millis(20)),
        },
    );
    wait_until_settled(&store, &tenant, 1).await;
    shutdown.cancel();
    second.await.unwrap();
    let attempts = store.attempts(&tenant, &task.id).await.unwrap();
    let outcomes: Vec<(i64, Option<&str>)> = attempts
        .iter()
        .map(|attempt| (attempt.number, attempt.outcome.as_deref()))
        .collect();
    assert_eq!(outcomes, vec![(1, Some("lost")), (2, Some("success"))]);
    let runs: Vec<i64> = log
        .lock()
        .unwrap()
        .iter()
        .map(|(_, attempt, _)| *attempt)
        .collect();
    assert_eq!(runs, vec![1, 2]);
    let ended = store.task(&tenant, &task.id).await.unwrap();
    assert_eq!(ended.state, TaskState::AwaitingApproval);
}

async fn a_worker_that_is_shut_down_gives_its_task_back(store: Store, _url: String) {
    let tenant = unique("shutdown");
    let mut queue = store
        .job_queue(&settings("-", &tenant).queue)
        .await
        .unwrap();
    let task = store
        .create_task(&new_task(&tenant, "shut down"))
        .await
        .unwrap();
    queue.push(&task.id).await.unwrap();
    let log = RunLog::default();
    let (stop_first, first) = start(
        &store,
        settings(&unique("a"), &tenant),
        Recorder {
            log: log.clone(),
            duration: None,
        },
    );
    wait_for_state(&store, &tenant, &task.id, TaskState::Running).await;
    stop_first.cancel();
    first.await.unwrap();
    let given_back = store.task(&tenant, &task.id).await.unwrap();
    assert_eq!(
        given_back.state,
        TaskState::Queued,
        "{:?}",
        given_back.reason
    );
    let (stop_second, second) = start(
        &store,
        settings(&unique("b"), &tenant),
        Recorder {
            log: log.clone(),
            duration: Some(Duration::from_millis(20)),
        },
    );
    wait_until_settled(&store, &tenant, 1).await;
    stop_second.cancel();
    second.await.unwrap();
    let attempts = store.attempts(&tenant, &task.id).await.unwrap();
    let outcomes: Vec<(i64, Option<&str>)> = attempts
        .iter()
        .map(|attempt| (attempt.number, attempt.outcome.as_deref()))
        .collect();
    assert_eq!(outcomes, vec![(1, Some("stopped")), (2, Some("success"))]);
}

async fn a_queued_task_left_without_a_job_is_pushed_again_by_the_sweep(store: Store, _url: String) {
    let tenant = unique("lost-job");
    let mut queue = store
        .job_queue(&settings("-", &tenant).queue)
        .await
        .unwrap();
    let pushed = store
        .create_task(&new_task(&tenant, "pushed"))
        .await
        .unwrap();
    queue.push(&pushed.id).await.unwrap();
    // Created and queued, but its push never happened (as when a push fails).
    let lost = store.create_task(&new_task(&tenant, "lost")).await.unwrap();
    tokio::time::sleep(Duration::from_millis(20)).await;
    let now = Duration::ZERO;
    assert_eq!(
        store.unqueued(&tenant, now).await.unwrap(),
        std::slice::from_ref(&lost.id)
    );
    // A job taken off the queue is spent: until a push follows, the task has none.
    store.mark_taken(&pushed.id).await.unwrap();
    tokio::time::sleep(Duration::from_millis(20)).await;
    let mut expected = vec![pushed.id.clone(), lost.id.clone()];
    expected.sort();
    assert_eq!(store.unqueued(&tenant, now).await.unwrap(), expected);
    queue.push(&pushed.id).await.unwrap();
    assert_eq!(
        store.unqueued(&tenant, now).await.unwrap(),
        std::slice::from_ref(&lost.id)
    );
    // Within the grace a push may still be on its way: nothing is pushed twice yet.
    assert!(
        store
            .unqueued(&tenant, Duration::from_secs(60))
            .await
            .unwrap()
            .is_empty()
    );

    // The worker's sweep pushes the lost task once its lease has passed, and both run once.
    let log = RunLog::default();
    let worker = start(
        &store,
        settings(&unique("w"), &tenant),
        Recorder {
            log: log.clone(),
            duration: Some(Duration::from_millis(20)),
        },
    );
    wait_until_settled(&store, &tenant, 2).await;
    worker.0.cancel();
    worker.1.await.unwrap();
    let mut ran: Vec<(String, i64)> = log
        .lock()
        .unwrap()
        .iter()
        .map(|(task, attempt, _)| (task.clone(), *attempt))
        .collect();
    ran.sort();
    let mut expected = vec![(pushed.id, 1), (lost.id, 1)];
    expected.sort();
    assert_eq!(ran, expected);
    assert!(store.unqueued(&tenant, now).await.unwrap().is_empty());
}

/// The queue's tables are shared by the whole PostgreSQL database (the library keeps them in a
/// schema of its own), so these tests use the database's default schema, each with a queue and a
/// tenant of its own, rather than a schema per test.
async fn postgres_store() -> (Store, String) {
    let url = std::env::var("PLUMB_TEST_POSTGRES_URL")
        .unwrap_or_else(|_| super::backends::DEFAULT_POSTGRES.into());
    let store = Store::open(&url).await.unwrap_or_else(|error| {
        panic!(
            "PostgreSQL is not reachable at {url} ({error}): run scripts/setup-test-deps.sh --tests, \
             or set PLUMB_TEST_POSTGRES_URL"
        )
    });
    (store, url)
}

macro_rules! on_both_queues {
    ($name:ident) => {
        mod $name {
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn sqlite() {
                let db = crate::suite::backends::sqlite().await;
                super::$name(db.store.clone(), db.url.clone()).await;
                db.finish().await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn postgres() {
                let (store, url) = super::postgres_store().await;
                super::$name(store.clone(), url).await;
                store.close().await;
            }
        }
    };
}

on_both_queues!(every_task_runs_exactly_once_with_two_workers);
on_both_queues!(a_run_longer_than_the_queue_s_dead_worker_time_runs_once);
on_both_queues!(a_stopped_worker_s_task_is_retried_by_another);
on_both_queues!(a_worker_that_is_shut_down_gives_its_task_back);
on_both_queues!(a_queued_task_left_without_a_job_is_pushed_again_by_the_sweep);
