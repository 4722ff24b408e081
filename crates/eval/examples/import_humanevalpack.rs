//! `cargo run -p plumb-eval --example import_humanevalpack -- FILE.jsonl LANG OUT`: the
//! importer alone, for `scripts/check-humanevalpack.sh` (which must not wait on the CLI's
//! `plumb eval import humanevalpack`, the same call).

use std::path::PathBuf;
use std::process::ExitCode;

use plumb_eval::import::{Lang, import_humanevalpack};
use plumb_protocol::display::for_screen;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [file, lang, out] = args.as_slice() else {
        eprintln!("usage: import_humanevalpack FILE.jsonl python|js|rust|go OUT");
        return ExitCode::from(2);
    };
    let lang: Lang = match lang.parse() {
        Ok(lang) => lang,
        Err(error) => {
            eprintln!("{}", for_screen(&error.to_string()));
            return ExitCode::from(2);
        }
    };
    match import_humanevalpack(&PathBuf::from(file), lang, &PathBuf::from(out)) {
        Ok(summary) => {
            for problem in &summary.problems {
                // A record's problem quotes the record, which is the benchmark file's text.
                eprintln!("left out: {}", for_screen(&problem.to_string()));
            }
            println!(
                "{} tasks in {}",
                summary.tasks,
                summary.tasks_file.display()
            );
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("{}", for_screen(&error.to_string()));
            ExitCode::from(2)
        }
    }
}
