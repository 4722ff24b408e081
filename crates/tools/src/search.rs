//! search_code engine (being written).
