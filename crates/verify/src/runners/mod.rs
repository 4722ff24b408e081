//! One module per test runner: its summary parser (`counts`), its failure excerpt (`excerpt`),
//! how to narrow its command (`narrow`), and its per-test outcomes (`with_report`, `results`).

pub(crate) mod cargo;
pub(crate) mod go;
pub(crate) mod jest;
pub(crate) mod jvm;
pub(crate) mod nextest;
pub(crate) mod npm;
pub(crate) mod pytest;
