//! plumb-verify
