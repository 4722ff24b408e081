//! The two databases every test runs on: a fresh SQLite file, and a fresh schema in the test
//! PostgreSQL (`PLUMB_TEST_POSTGRES_URL`, default the one `scripts/setup-test-deps.sh --tests`
//! creates). A missing PostgreSQL fails the test saying so; it is never skipped.

use plumb_store::{NewTask, Store};

pub const DEFAULT_POSTGRES: &str = "postgres://plumb:plumb@127.0.0.1:5432/plumb_test";

pub struct Db {
    pub store: Store,
    /// What `Store::open` takes to reach the same database again.
    pub url: String,
    _dir: Option<tempfile::TempDir>,
    /// PostgreSQL: the admin connection and the test's schema, dropped by `finish`.
    schema: Option<(sqlx::PgPool, String)>,
}

impl Db {
    pub async fn finish(self) {
        self.store.close().await;
        if let Some((admin, schema)) = self.schema {
            let drop = sqlx::AssertSqlSafe(format!("DROP SCHEMA {schema} CASCADE"));
            sqlx::query(drop).execute(&admin).await.unwrap();
        }
    }
}

pub async fn sqlite() -> Db {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite:{}", dir.path().join("plumb.db").display());
    let store = Store::open(&url).await.unwrap();
    assert_eq!(store.backend(), "sqlite");
    Db {
        store,
        url,
        _dir: Some(dir),
        schema: None,
    }
}

pub async fn postgres() -> Db {
    let url = std::env::var("PLUMB_TEST_POSTGRES_URL").unwrap_or_else(|_| DEFAULT_POSTGRES.into());
    // A schema of its own per test: the tests run in parallel against one database.
    let schema = format!("t{:016x}", fastrand::u64(..));
    let admin = sqlx::PgPool::connect(&url).await.unwrap_or_else(|error| {
        panic!(
            "PostgreSQL is not reachable at {url} ({error}): run scripts/setup-test-deps.sh --tests, \
             or set PLUMB_TEST_POSTGRES_URL"
        )
    });
    let create = sqlx::AssertSqlSafe(format!("CREATE SCHEMA {schema}"));
    sqlx::query(create).execute(&admin).await.unwrap();
    let separator = if url.contains('?') { '&' } else { '?' };
    let scoped = format!("{url}{separator}options=-c%20search_path%3D{schema}");
    let store = Store::open(&scoped).await.unwrap();
    assert_eq!(store.backend(), "postgres");
    Db {
        store,
        url: scoped,
        _dir: None,
        schema: Some((admin, schema)),
    }
}

pub fn new_task(tenant: &str, title: &str) -> NewTask {
    NewTask {
        tenant: tenant.to_owned(),
        // A queue per tenant: the tests of the job queue use a tenant and a queue of their own.
        queue: tenant.to_owned(),
        title: title.to_owned(),
        spec: serde_json::json!({ "repo": "https://example.com/r.git", "ticket": title }),
        max_attempts: 2,
    }
}

/// Defines `$name` twice, as `sqlite` and `postgres` tests in a module of that name.
macro_rules! on_both {
    ($name:ident, $body:ident) => {
        mod $name {
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn sqlite() {
                let db = $crate::suite::backends::sqlite().await;
                super::$body(&db.store).await;
                db.finish().await;
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn postgres() {
                let db = $crate::suite::backends::postgres().await;
                super::$body(&db.store).await;
                db.finish().await;
            }
        }
    };
}
pub(crate) use on_both;
