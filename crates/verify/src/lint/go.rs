//! `go vet` prints, on stderr, a `# package` header and then one `file.go:line:col: message` line
//! per finding; type-check errors carry a `vet: ` prefix. The text names no analyzer, so findings
//! get the code `vet` and type-check errors `typecheck`.

use super::Diagnostic;

pub(super) fn parse(stdout: &str, stderr: &str) -> Result<Vec<Diagnostic>, String> {
    let mut diagnostics = Vec::new();
    let mut failure = None;
    for line in stderr.lines().chain(stdout.lines()).map(str::trim_end) {
        if let Some(diagnostic) = finding(line) {
            diagnostics.push(diagnostic);
        } else if failure.is_none()
            && (line.starts_with("go: ") || line.starts_with("pattern ./...:"))
        {
            failure = Some(line.to_string());
        }
    }
    match failure {
        Some(line) if diagnostics.is_empty() => {
            Err(format!("go vet did not check the project ({line})"))
        }
        _ => Ok(diagnostics),
    }
}

/// `[vet: ]path.go:line[:col]: message`.
fn finding(line: &str) -> Option<Diagnostic> {
    let (code, rest) = match line.strip_prefix("vet: ") {
        Some(rest) => ("typecheck", rest),
        None => ("vet", line),
    };
    let (path, rest) = rest.split_once(".go:")?;
    let (number, rest) = rest.split_once(':')?;
    let line_number: usize = number.parse().ok()?;
    // An optional column before the message.
    let message = match rest.split_once(':') {
        Some((column, message)) if column.parse::<usize>().is_ok() => message,
        _ => rest,
    };
    Some(Diagnostic {
        path: format!("{path}.go"),
        line: line_number,
        code: code.to_string(),
        message: message.trim().to_string(),
    })
}
