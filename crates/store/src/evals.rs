//! The reports of evals run through the job queue: `plumb eval --db` keeps each eval's summary
//! and static HTML page here once it has written them, so the web page of `plumb serve` lists and
//! serves them from the same store its tasks come from.

use sqlx::Row as _;

use crate::error::{Result, StoreError};
use crate::pool::{BeginWrite as _, on_pool};
use crate::{Store, now_ms};

/// An eval's report as a list shows it (its page is read with [`Store::eval_report_html`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EvalReportRecord {
    pub id: String,
    /// The eval's name: its output folder's.
    pub title: String,
    /// `summary.json` as the eval wrote it.
    pub summary: String,
    pub created_ms: i64,
    pub updated_ms: i64,
}

/// What one list of reports holds at most (newest first).
const MAX_LISTED: i64 = 200;

impl Store {
    /// Keeps `tenant`'s eval report `id` (its summary JSON and HTML page), replacing the one an
    /// earlier run of the same eval kept.
    pub async fn put_eval_report(
        &self,
        tenant: &str,
        id: &str,
        title: &str,
        summary: &str,
        html: &[u8],
    ) -> Result<()> {
        let now = now_ms();
        on_pool!(self, pool => {
            let mut tx = pool.begin_write().await?;
            sqlx::query(
                "INSERT INTO eval_reports (tenant, id, title, summary, html, created_ms, updated_ms) \
                 VALUES ($1, $2, $3, $4, $5, $6, $6) \
                 ON CONFLICT (tenant, id) DO UPDATE SET title = excluded.title, \
                 summary = excluded.summary, html = excluded.html, updated_ms = excluded.updated_ms",
            )
            .bind(tenant)
            .bind(id)
            .bind(title)
            .bind(summary)
            .bind(html)
            .bind(now)
            .execute(&mut *tx)
            .await?;
            tx.commit().await?;
        });
        Ok(())
    }

    /// `tenant`'s eval reports, the most recently updated first.
    pub async fn eval_reports(&self, tenant: &str) -> Result<Vec<EvalReportRecord>> {
        on_pool!(self, pool => {
            let rows = sqlx::query(
                "SELECT id, title, summary, created_ms, updated_ms FROM eval_reports \
                 WHERE tenant = $1 ORDER BY updated_ms DESC, id LIMIT $2",
            )
            .bind(tenant)
            .bind(MAX_LISTED)
            .fetch_all(pool)
            .await?;
            rows.iter()
                .map(|row| {
                    Ok(EvalReportRecord {
                        id: row.try_get("id")?,
                        title: row.try_get("title")?,
                        summary: row.try_get("summary")?,
                        created_ms: row.try_get("created_ms")?,
                        updated_ms: row.try_get("updated_ms")?,
                    })
                })
                .collect()
        })
    }

    /// The HTML page of `tenant`'s eval report `id`; `NotFound` for none (or another tenant's).
    pub async fn eval_report_html(&self, tenant: &str, id: &str) -> Result<Vec<u8>> {
        on_pool!(self, pool => {
            let row = sqlx::query("SELECT html FROM eval_reports WHERE tenant = $1 AND id = $2")
                .bind(tenant)
                .bind(id)
                .fetch_optional(pool)
                .await?
                .ok_or_else(|| StoreError::EvalReportNotFound(id.to_owned()))?;
            Ok(row.try_get("html")?)
        })
    }
}
