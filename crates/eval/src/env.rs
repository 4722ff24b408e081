//! The tree at a task's `base_commit`, with no later history, in a folder of its own.
