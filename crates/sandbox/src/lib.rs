//! plumb-sandbox
