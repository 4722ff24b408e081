//! plumb-workspace
