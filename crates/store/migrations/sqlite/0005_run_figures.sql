-- What a task's last finished run spent, for the task list: rounds, tokens (input + output) and
-- the estimated dollars. Written by the worker when the run ends. Kept in step with the other
-- backend's 0005_run_figures.sql.
ALTER TABLE tasks ADD COLUMN rounds BIGINT;
ALTER TABLE tasks ADD COLUMN tokens BIGINT;
ALTER TABLE tasks ADD COLUMN cost_usd REAL;
