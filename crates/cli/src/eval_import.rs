//! `plumb eval import` (public benchmarks into task sets) and `plumb eval compare` (two runs side
//! by side).

use plumb_eval::import::{ImportError, Lang, import_humanevalpack};
use plumb_eval::report;

use crate::Failure;
use crate::args::{EvalCompareArgs, EvalImportArgs};
use crate::screen::{self, one_line, say};

pub(crate) fn run(args: EvalImportArgs) -> Result<i32, Failure> {
    if args.benchmark != "humanevalpack" {
        return Err(Failure::bad_input(format!(
            "plumb eval import knows no benchmark `{}`; the one it imports is humanevalpack",
            args.benchmark
        )));
    }
    let lang: Lang = args
        .lang
        .parse()
        .map_err(|err: plumb_eval::import::UnknownLang| {
            Failure::bad_input(format!("--lang: {err}"))
        })?;
    let summary = import_humanevalpack(&args.file, lang, &args.out).map_err(|err| match err {
        ImportError::Write { .. } | ImportError::Git { .. } => Failure::infra(err.to_string()),
        _ => Failure::bad_input(err.to_string()),
    })?;
    for problem in &summary.problems {
        say!(
            "plumb: skipped a record: {}",
            one_line(&problem.to_string())
        );
    }
    say!(
        "imported {} {lang} tasks into {}",
        summary.tasks,
        summary.tasks_file.display()
    );
    Ok(0)
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
        screen::json_out(&text);
    } else {
        screen::out(&comparison.render_text());
    }
    Ok(0)
}
