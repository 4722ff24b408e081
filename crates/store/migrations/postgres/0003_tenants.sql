-- Per-tenant limits and model keys. Kept in step with the other backend's 0003_tenants.sql: the
-- same tables and columns.

-- What an operator allows a tenant; NULL is no limit of the tenant's own (the server's apply).
CREATE TABLE tenant_limits (
    tenant TEXT PRIMARY KEY NOT NULL,
    max_running BIGINT,
    max_rounds BIGINT,
    max_usd DOUBLE PRECISION,
    updated_ms BIGINT NOT NULL
);

-- A tenant's own key for a model provider, sealed (XChaCha20-Poly1305, the tenant and provider as
-- associated data) with the operator's secret key, which the database never holds.
CREATE TABLE tenant_keys (
    tenant TEXT NOT NULL,
    provider TEXT NOT NULL,
    nonce BYTEA NOT NULL,
    sealed BYTEA NOT NULL,
    updated_ms BIGINT NOT NULL,
    PRIMARY KEY (tenant, provider)
);
