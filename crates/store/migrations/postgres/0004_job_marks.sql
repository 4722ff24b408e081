-- When a task's job was last put on the queue and last taken off it, so the sweep can find a
-- queued task with no job left (a push that failed after the task was queued again) and push it
-- once more. Kept in step with the other backend's 0004_job_marks.sql.
ALTER TABLE tasks ADD COLUMN pushed_ms BIGINT;
ALTER TABLE tasks ADD COLUMN taken_ms BIGINT;
