//! plumb-agent
