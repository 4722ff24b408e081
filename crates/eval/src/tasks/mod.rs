//! Reading task sets.
