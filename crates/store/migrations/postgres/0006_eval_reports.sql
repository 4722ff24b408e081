-- The report of an eval whose attempts ran through the job queue (`plumb eval --db`), kept for
-- the web page: its summary (summary.json) and its static page (report.html), one row per eval,
-- replaced when the same eval is run again. Kept in step with the other backend's
-- 0006_eval_reports.sql.
CREATE TABLE eval_reports (
    tenant TEXT NOT NULL,
    id TEXT NOT NULL,
    title TEXT NOT NULL,
    summary TEXT NOT NULL,
    html BYTEA NOT NULL,
    created_ms BIGINT NOT NULL,
    updated_ms BIGINT NOT NULL,
    PRIMARY KEY (tenant, id)
);
