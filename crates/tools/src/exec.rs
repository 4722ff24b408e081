//! The tools that run commands in the sandbox: `run_tests` (the project's test command, optionally
//! narrowed) and `run` (one command from the allow-list in `plumb.toml`, no shell).

use async_trait::async_trait;
use plumb_sandbox::{CommandSpec, Network};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::test_run::{run_test_command, sandbox_limits};
use crate::tool::{Project, Tool};
use crate::{ToolContext, ToolError, ToolOutput, args};

pub(crate) struct RunTests;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RunTestsArgs {
    #[serde(default)]
    tests: Vec<String>,
}

#[async_trait]
impl Tool for RunTests {
    fn name(&self) -> &'static str {
        "run_tests"
    }

    fn runs_commands(&self) -> bool {
        true
    }

    /// Names the project's own test command and an id of its runner's form, when it can run
    /// single tests.
    fn description_values(&self, project: &Project<'_>) -> Value {
        let command = project.test_command.map(|cmd| cmd.display());
        let example = project
            .test_command
            .filter(|cmd| cmd.runner.narrows())
            .and_then(|cmd| cmd.runner.adapter().test_id_example());
        json!({"command": command, "example": example})
    }

    fn parameters(&self, project: &Project<'_>) -> Value {
        let example = project
            .test_command
            .and_then(|cmd| cmd.runner.adapter().test_id_example())
            .map_or_else(String::new, |example| format!(" (e.g. {example})"));
        json!({
            "type": "object",
            "properties": {
                "tests": {"type": "array", "items": {"type": "string"}, "description": format!("Test ids or paths{example}; empty runs everything.")}
            },
            "additionalProperties": false
        })
    }

    async fn call(&self, ctx: &ToolContext<'_>, value: &Value) -> Result<ToolOutput, ToolError> {
        let a: RunTestsArgs = args::parse(self.name(), "tests?", value)?;
        let Some(cmd) = ctx.test_command else {
            return Err(ToolError::respond(
                "this project has no test command plumb knows of, so run_tests cannot run. Say so in done's summary.",
            ));
        };
        let run = run_test_command(
            ctx.sandbox,
            ctx.workspace.root(),
            cmd,
            &a.tests,
            sandbox_limits(ctx.config),
            ctx.cancel,
        )
        .await?;
        Ok(ToolOutput {
            text: run.render(),
            summary: run.result_line(),
            command_time: run.duration,
            ..ToolOutput::default()
        })
    }
}

pub(crate) struct RunCommand;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RunArgs {
    argv: Vec<String>,
}

/// Words a shell would treat specially; here they would only be passed on as plain arguments, so a
/// model that writes them thinks it has a shell and is told it has not.
const SHELL_WORDS: [&str; 9] = ["|", "||", "&&", ";", ">", ">>", "<", "&", "2>&1"];

fn shell_syntax(arg: &str) -> bool {
    SHELL_WORDS.contains(&arg) || arg.contains("$(") || arg.contains('`') || arg.contains('\n')
}

#[async_trait]
impl Tool for RunCommand {
    fn name(&self) -> &'static str {
        "run"
    }

    fn runs_commands(&self) -> bool {
        true
    }

    /// The example is the project's own test command, which `run` always allows.
    fn parameters(&self, project: &Project<'_>) -> Value {
        let example = project.test_command.map_or_else(String::new, |cmd| {
            format!(
                ", e.g. {}",
                serde_json::to_string(&cmd.argv).unwrap_or_default()
            )
        });
        json!({
            "type": "object",
            "properties": {
                "argv": {"type": "array", "items": {"type": "string"}, "minItems": 1, "description": format!("The program and its arguments{example}.")}
            },
            "required": ["argv"],
            "additionalProperties": false
        })
    }

    async fn call(&self, ctx: &ToolContext<'_>, value: &Value) -> Result<ToolOutput, ToolError> {
        let a: RunArgs = args::parse(self.name(), "argv", value)?;
        let allowed = allowed_prefixes(ctx);
        if a.argv.is_empty() {
            return Err(ToolError::respond(format!(
                "argv is empty. Give a command as a list of strings starting with one of: {}.",
                allowed.join(" | ")
            )));
        }
        if let Some(bad) = a.argv.iter().find(|arg| shell_syntax(arg)) {
            return Err(ToolError::respond(format!(
                "`{bad}` is shell syntax, and run has no shell. Give one command as a list of plain strings."
            )));
        }
        let permitted = ctx
            .config
            .run
            .allowed_commands
            .iter()
            .chain(ctx.test_command.map(|c| &c.argv))
            .any(|prefix| !prefix.is_empty() && a.argv.starts_with(prefix));
        if !permitted {
            return Err(ToolError::respond(format!(
                "`{}` is not allowed. Allowed commands start with: {}.",
                a.argv.join(" "),
                allowed.join(" | ")
            )));
        }
        let spec = CommandSpec {
            argv: a.argv.clone(),
            workdir: ctx.workspace.root().to_path_buf(),
            env: Vec::new(),
            limits: sandbox_limits(ctx.config),
            // The agent's commands never get the network.
            network: Network::Off,
        };
        let output = ctx.sandbox.run(&spec, ctx.cancel).await.map_err(|err| {
            ToolError::respond(format!("could not run `{}`: {err}", a.argv.join(" ")))
        })?;
        let mut status = match (output.exit_code, output.timed_out) {
            (_, true) => "stopped at the time limit".to_string(),
            (Some(code), false) => format!("exit {code}"),
            (None, false) => "killed by a signal".to_string(),
        };
        if !output.limits_hit.is_empty() {
            status.push_str(&format!(
                "; the sandbox's {} limit was hit",
                output.limits_hit.join(", ")
            ));
        }
        let mut text = format!("`{}`: {status}\n", a.argv.join(" "));
        if !output.stdout.is_empty() {
            text.push_str(&output.stdout);
            if !output.stdout.ends_with('\n') {
                text.push('\n');
            }
        }
        if !output.stderr.is_empty() {
            text.push_str("[stderr]\n");
            text.push_str(&output.stderr);
        }
        Ok(ToolOutput {
            text: crate::workdir_paths::relative_to_workdir(&text, ctx.workspace.root()),
            summary: format!("`{}`: {status}", a.argv.join(" ")),
            command_time: output.duration,
            ..ToolOutput::default()
        })
    }
}

fn allowed_prefixes(ctx: &ToolContext<'_>) -> Vec<String> {
    ctx.config
        .run
        .allowed_commands
        .iter()
        .chain(ctx.test_command.map(|c| &c.argv))
        .map(|p| p.join(" "))
        .collect()
}
