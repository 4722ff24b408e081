-- Tasks, their attempts, their events and their artefacts. Times are milliseconds since the Unix
-- epoch. Kept in step with migrations/sqlite/0001_tasks.sql: the same tables and columns.
CREATE TABLE tasks (
    id TEXT PRIMARY KEY NOT NULL,
    tenant TEXT NOT NULL,
    -- The job queue its runs go through: a sweep for dead workers looks at its own queue only.
    queue TEXT NOT NULL,
    state TEXT NOT NULL,
    title TEXT NOT NULL,
    spec TEXT NOT NULL,
    attempt BIGINT NOT NULL DEFAULT 0,
    max_attempts BIGINT NOT NULL,
    next_seq BIGINT NOT NULL DEFAULT 0,
    cancel_requested_ms BIGINT,
    outcome TEXT,
    reason TEXT,
    diff_sha256 TEXT,
    created_ms BIGINT NOT NULL,
    updated_ms BIGINT NOT NULL
);
CREATE INDEX tasks_by_tenant ON tasks (tenant, created_ms DESC, id DESC);
CREATE INDEX tasks_by_state ON tasks (state);

CREATE TABLE attempts (
    task_id TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    number BIGINT NOT NULL,
    worker TEXT NOT NULL,
    started_ms BIGINT NOT NULL,
    heartbeat_ms BIGINT NOT NULL,
    finished_ms BIGINT,
    outcome TEXT,
    reason TEXT,
    PRIMARY KEY (task_id, number)
);

CREATE TABLE events (
    task_id TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    seq BIGINT NOT NULL,
    attempt BIGINT NOT NULL,
    at_ms BIGINT NOT NULL,
    kind TEXT NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (task_id, seq)
);

-- An event, once written, stays as it was written.
CREATE FUNCTION plumb_events_are_never_rewritten() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION 'events are append-only';
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER events_are_never_rewritten BEFORE UPDATE ON events
    FOR EACH ROW EXECUTE FUNCTION plumb_events_are_never_rewritten();

CREATE TABLE artefacts (
    task_id TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    attempt BIGINT NOT NULL,
    name TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    content BYTEA NOT NULL,
    PRIMARY KEY (task_id, attempt, name)
);
