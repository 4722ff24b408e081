//! One module per part of `plumb eval`.

mod import;
