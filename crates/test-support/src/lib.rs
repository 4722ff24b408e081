//! plumb-test-support
