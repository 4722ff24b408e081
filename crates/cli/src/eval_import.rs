//! `plumb eval import` (public benchmarks into task sets) and `plumb eval compare` (two runs side
//! by side).

use plumb_eval::report;

use crate::Failure;
use crate::args::{EvalCompareArgs, EvalImportArgs};

pub(crate) fn run(args: EvalImportArgs) -> Result<i32, Failure> {
    let _ = args;
    Err(Failure::bad_input("import: not built yet"))
}

pub(crate) fn compare(args: EvalCompareArgs) -> Result<i32, Failure> {
    let comparison =
        report::compare(&args.a, &args.b).map_err(|err| Failure::bad_input(err.to_string()))?;
    if args.json {
        let text = serde_json::to_string_pretty(&comparison).map_err(|err| {
            Failure::infra(format!(
                "the comparison could not be written as JSON: {err}"
            ))
        })?;
        println!("{text}");
    } else {
        print!("{}", comparison.render_text());
    }
    Ok(0)
}
