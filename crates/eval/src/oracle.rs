//! The oracle: a scripted model generated from a task's gold patch.
