//! `plumb eval import` and `plumb eval compare`.

use crate::Failure;
use crate::args::{EvalCompareArgs, EvalImportArgs};

pub(crate) fn run(args: EvalImportArgs) -> Result<i32, Failure> {
    let _ = args;
    Err(Failure::bad_input("import: not built yet"))
}

pub(crate) fn compare(args: EvalCompareArgs) -> Result<i32, Failure> {
    let _ = args;
    Err(Failure::bad_input("compare: not built yet"))
}
