//! `plumb eval --db`: the repository's task set (a Python and a Rust part of it) through a
//! PostgreSQL job queue run by two `plumb worker` processes resolves and verifies the same tasks
//! as the same eval on one machine — with the task set's repositories moved away before the
//! workers start, so the trees can only have come through the store — and run again it resumes
//! with nothing left to do.

use std::process::{Child, Stdio};

use pretty_assertions::assert_eq;

use super::{eval, example_set, ids, results};
use crate::suite::common::{plumb_command, stderr};
use crate::suite::serve::pg::Postgres;

/// Two tasks of each language and kind of project.
const FILTER: &str = "^(shelf-coupon-case|text-slug-dashes|tally-bytes-unit|tally-csv-quotes)$";

fn worker(home: &std::path::Path, db: &str) -> Child {
    plumb_command(home)
        .args(["worker", "--db", db])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// Waits (up to 120 s) until the store holds `count` attempts of an eval.
fn wait_for_queued(db: &str, count: usize) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let store = rt.block_on(plumb_store::Store::open(db)).unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    loop {
        let page = rt
            .block_on(store.list_tasks("eval", &plumb_store::TaskFilter::default()))
            .unwrap();
        if page.tasks.len() >= count {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{} of {count} attempts queued after 120 s",
            page.tasks.len()
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}

fn stop(worker: Child) {
    let term = std::process::Command::new("kill")
        .args(["-TERM", &worker.id().to_string()])
        .status()
        .unwrap();
    assert!(term.success());
    let output = worker.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(0));
}

#[test]
fn an_eval_through_the_queue_with_two_workers_resolves_what_one_machine_does() {
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let tasks = example_set(dir.path());
    let tasks = tasks.to_str().unwrap();
    let local_out = dir.path().join("local");
    let local = eval(
        home.path(),
        &[
            tasks, "--model", "oracle", "--jobs", "2", "--filter", FILTER,
        ]
        .into_iter()
        .chain(["--out", local_out.to_str().unwrap()])
        .collect::<Vec<_>>(),
    );
    assert_eq!(local.status.code(), Some(0), "{}", stderr(&local));

    let pg = Postgres::start();
    let db = pg.url();
    let queued_out = dir.path().join("queued");
    let args = [
        tasks,
        "--model",
        "oracle",
        "--db",
        &db,
        "--jobs",
        "0",
        "--filter",
        FILTER,
        "--out",
        queued_out.to_str().unwrap(),
    ];
    let submitted = plumb_command(home.path())
        .arg("eval")
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_queued(&db, 4);
    let repos = dir.path().join("repos");
    let away = dir.path().join("repos-away");
    std::fs::rename(&repos, &away).unwrap();
    let workers = [worker(home.path(), &db), worker(home.path(), &db)];
    let queued = submitted.wait_with_output().unwrap();
    assert_eq!(queued.status.code(), Some(0), "{}", stderr(&queued));
    std::fs::rename(&away, &repos).unwrap();
    let (local, queued_results) = (results(&local_out), results(&queued_out));
    assert_eq!(
        (
            ids(&queued_results, |_| true),
            ids(&queued_results, |r| r.resolved()),
            ids(&queued_results, |r| r.verified()),
        ),
        (
            ids(&local, |_| true),
            ids(&local, |r| r.resolved()),
            ids(&local, |r| r.verified()),
        )
    );
    assert_eq!(ids(&queued_results, |r| r.resolved()).len(), 4);
    assert!(queued_out.join("report.html").is_file());

    // Every attempt is in: the packed trees they named are gone from the store.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let store = rt.block_on(plumb_store::Store::open(&db)).unwrap();
    let page = rt
        .block_on(store.list_tasks("eval", &plumb_store::TaskFilter::default()))
        .unwrap();
    assert_eq!(page.tasks.len(), 4);
    // The eval's report is kept for the web page, as the eval wrote it.
    let reports = rt.block_on(store.eval_reports("eval")).unwrap();
    assert_eq!(reports.len(), 1, "{reports:?}");
    assert_eq!(reports[0].title, "queued");
    assert_eq!(
        rt.block_on(store.eval_report_html("eval", &reports[0].id))
            .unwrap(),
        std::fs::read(queued_out.join("report.html")).unwrap()
    );
    for task in &page.tasks {
        assert_eq!(task.state, plumb_store::TaskState::Scored);
        let tree = task.spec["tree"].as_str().unwrap();
        assert!(matches!(
            rt.block_on(store.upload("eval", tree)),
            Err(plumb_store::StoreError::UploadNotFound(_))
        ));
    }

    // The same command again: every attempt has its result, nothing goes on the queue.
    let again = eval(home.path(), &args);
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
    assert_eq!(results(&queued_out), queued_results);
    for worker in workers {
        stop(worker);
    }
}
