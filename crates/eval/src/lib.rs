//! `plumb eval`: replay a task set (past tickets, SWE-bench-style records, imported public
//! benchmarks) through the same `Run` that `plumb fix` uses, score each attempt as SWE-bench does,
//! and report resolved %, pass@k, pass^k, cost and time.
//!
//! The parts, in the order one task goes through them:
//! - [`task`]: the one task type every reader produces ([`Task`]);
//! - [`tasks`]: reading task sets (plumb's JSON Lines, SWE-bench's JSON/JSON Lines/parquet,
//!   Multi-SWE-bench records) and resolving each record's repository without a download;
//! - [`import`]: turning public benchmarks (HumanEvalFix) into task sets;
//! - [`env`]: the tree at `base_commit`, with no later history, for one attempt;
//! - [`oracle`]: the scripted model that plays a task's gold patch;
//! - [`score`]: the test patch on top of the agent's patch, FAIL_TO_PASS and PASS_TO_PASS in the
//!   sandbox, outcomes read the way the official harness reads them;
//! - [`runner`]: tasks in parallel, resumable, one folder per attempt;
//! - [`result`]: what one attempt leaves behind ([`AttemptResult`]), the input of the report;
//! - [`report`]: `summary.json`, `report.html`, `compare`, the predictions file.

pub mod env;
pub mod import;
pub mod oracle;
pub mod report;
pub mod result;
pub mod runner;
pub mod score;
pub mod task;
pub mod tasks;

pub use result::{AttemptResult, AttemptStatus, TestGroup, TestResult, TestStatus};
pub use task::{RepoSource, Task, TaskOrigin};
