//! plumb-config
