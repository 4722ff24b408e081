//! The two databases behind one store: SQLite (one file, nothing to install) and PostgreSQL (a
//! fleet). The SQL is written once — `$N` parameters and `RETURNING` mean the same in both — and
//! `on_pool!` compiles each body once per backend, with its own pool and transaction types.

use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};

use crate::error::{Result, StoreError};

/// The store's migrations, recorded in a table of their own: the job queue's library keeps its
/// migrations in sqlx's default table of the same database.
const MIGRATIONS_TABLE: &str = "plumb_store_migrations";

fn migrations(mut migrator: sqlx::migrate::Migrator) -> sqlx::migrate::Migrator {
    migrator.dangerous_set_table_name(MIGRATIONS_TABLE);
    migrator
}

/// How long a write waits for another writer of the SQLite file before it fails.
const SQLITE_BUSY_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a call waits for a free connection.
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(30);

#[derive(Debug, Clone)]
pub(crate) enum Pool {
    Sqlite(SqlitePool),
    Postgres(PgPool),
}

impl Pool {
    /// `sqlite:PATH` (or a path ending `.db`/`.sqlite`), or `postgres://…`; the schema migrated.
    pub(crate) async fn open(url: &str) -> Result<Pool> {
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            let options = PgConnectOptions::from_str(url).map_err(|error| StoreError::BadUrl {
                url: redact(url),
                message: error.to_string(),
            })?;
            let pool = PgPoolOptions::new()
                .max_connections(8)
                .acquire_timeout(ACQUIRE_TIMEOUT)
                .connect_with(options)
                .await
                .map_err(|error| StoreError::BadUrl {
                    url: redact(url),
                    message: format!("cannot connect: {error}"),
                })?;
            migrations(sqlx::migrate!("migrations/postgres"))
                .run(&pool)
                .await?;
            return Ok(Pool::Postgres(pool));
        }
        let path = url
            .strip_prefix("sqlite://")
            .or_else(|| url.strip_prefix("sqlite:"));
        match path {
            Some(path) if !path.is_empty() => Pool::open_sqlite(Path::new(path)).await,
            _ => Err(StoreError::BadUrl {
                url: redact(url),
                message: "give sqlite:PATH (a file, created if missing) or postgres://USER@HOST/DB"
                    .to_owned(),
            }),
        }
    }

    /// A SQLite file at `path`, created if missing.
    pub(crate) async fn open_sqlite(path: &Path) -> Result<Pool> {
        if let Some(parent) = path
            .parent()
            .filter(|parent| !parent.as_os_str().is_empty())
        {
            std::fs::create_dir_all(parent).map_err(|error| StoreError::BadUrl {
                url: format!("sqlite:{}", path.display()),
                message: format!("cannot create the folder {}: {error}", parent.display()),
            })?;
        }
        // WAL lets readers go on beside the one writer; FULL syncs each commit, so a task's
        // record survives the machine going down, not only the process.
        let options = SqliteConnectOptions::new()
            .filename(path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Full)
            .foreign_keys(true)
            .busy_timeout(SQLITE_BUSY_TIMEOUT);
        let pool = SqlitePoolOptions::new()
            .max_connections(4)
            .acquire_timeout(ACQUIRE_TIMEOUT)
            .connect_with(options)
            .await
            .map_err(|error| StoreError::BadUrl {
                url: format!("sqlite:{}", path.display()),
                message: error.to_string(),
            })?;
        migrations(sqlx::migrate!("migrations/sqlite"))
            .run(&pool)
            .await?;
        Ok(Pool::Sqlite(pool))
    }

    pub(crate) fn backend(&self) -> &'static str {
        match self {
            Pool::Sqlite(_) => "sqlite",
            Pool::Postgres(_) => "postgres",
        }
    }

    /// Where the store's SQLite file is, for the job queue's own connections to it.
    pub(crate) fn sqlite_options(&self) -> Option<SqliteConnectOptions> {
        match self {
            Pool::Sqlite(pool) => Some(pool.connect_options().as_ref().clone()),
            Pool::Postgres(_) => None,
        }
    }

    pub(crate) fn postgres_pool(&self) -> Option<PgPool> {
        match self {
            Pool::Postgres(pool) => Some(pool.clone()),
            Pool::Sqlite(_) => None,
        }
    }

    pub(crate) async fn close(&self) {
        match self {
            Pool::Sqlite(pool) => pool.close().await,
            Pool::Postgres(pool) => pool.close().await,
        }
    }
}

/// A transaction that writes from its first statement. SQLite's `BEGIN IMMEDIATE` takes the write
/// lock up front, so a transaction that reads first cannot fail at its first write when another
/// connection wrote meanwhile (SQLite does not wait in that case, it refuses).
pub(crate) trait BeginWrite {
    type Db: sqlx::Database;
    async fn begin_write(&self) -> sqlx::Result<sqlx::Transaction<'static, Self::Db>>;
}

impl BeginWrite for SqlitePool {
    type Db = sqlx::Sqlite;
    async fn begin_write(&self) -> sqlx::Result<sqlx::Transaction<'static, sqlx::Sqlite>> {
        self.begin_with("BEGIN IMMEDIATE").await
    }
}

impl BeginWrite for PgPool {
    type Db = sqlx::Postgres;
    async fn begin_write(&self) -> sqlx::Result<sqlx::Transaction<'static, sqlx::Postgres>> {
        self.begin().await
    }
}

/// Runs `$body` with `$pool` bound to the concrete pool: the same SQL on either backend.
macro_rules! on_pool {
    ($store:expr, $pool:ident => $body:expr) => {
        match &$store.pool {
            $crate::pool::Pool::Sqlite($pool) => $body,
            $crate::pool::Pool::Postgres($pool) => $body,
        }
    };
}
pub(crate) use on_pool;

/// A database URL without its password, for messages and logs.
pub fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    match rest.split_once('@') {
        Some((user_info, host)) => match user_info.split_once(':') {
            Some((user, _password)) => format!("{scheme}://{user}:***@{host}"),
            None => url.to_owned(),
        },
        None => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::redact;

    #[test]
    fn a_password_never_reaches_a_message() {
        assert_eq!(
            redact("postgres://plumb:secret@db.internal/plumb"),
            "postgres://plumb:***@db.internal/plumb"
        );
        assert_eq!(
            redact("postgres://plumb@db/plumb"),
            "postgres://plumb@db/plumb"
        );
        assert_eq!(redact("sqlite:/tmp/x.db"), "sqlite:/tmp/x.db");
    }
}
