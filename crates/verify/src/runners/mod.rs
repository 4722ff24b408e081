//! One module per test runner: its summary parser (`counts`), its failure excerpt (`excerpt`) and
//! how to narrow its command (`narrow`). Per-test outcomes will join them here.

pub(crate) mod cargo;
pub(crate) mod go;
pub(crate) mod npm;
pub(crate) mod pytest;
