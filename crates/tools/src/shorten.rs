//! Output shortening (being written).
