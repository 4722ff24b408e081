-- Tenants' API tokens, and archives uploaded for tasks. Kept in step with the other backend's
-- 0002_tokens_uploads.sql: the same tables and columns.

-- A token is stored as the SHA-256 of its secret; the secret is shown once, when it is made.
CREATE TABLE tokens (
    id TEXT PRIMARY KEY NOT NULL,
    tenant TEXT NOT NULL,
    label TEXT NOT NULL,
    secret_sha256 TEXT NOT NULL UNIQUE,
    created_ms BIGINT NOT NULL,
    revoked_ms BIGINT
);

-- An archive a tenant uploaded, kept until a task that names it has been unpacked by a worker
-- (a worker on another machine reads it from here).
CREATE TABLE uploads (
    id TEXT PRIMARY KEY NOT NULL,
    tenant TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    size BIGINT NOT NULL,
    content BYTEA NOT NULL,
    created_ms BIGINT NOT NULL
);
CREATE INDEX uploads_by_tenant ON uploads (tenant, created_ms);
