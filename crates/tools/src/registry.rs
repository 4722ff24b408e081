//! The registry of built-in tools. It is the one place that knows every tool's name, so an
//! unknown name is answered here with the list of real ones.

use plumb_context::templates::{TemplateError, tool_description};
use plumb_protocol::ToolSpec;
use serde_json::{Value, json};

use crate::edit::{CreateFile, EditFile};
use crate::exec::{RunCommand, RunTests};
use crate::read::{ListFiles, ReadFile, SearchCode};
use crate::replace::ReplaceFunction;
use crate::tool::{Project, Tool};
use crate::{ToolContext, ToolError, ToolOutput};
use plumb_verify::TestCommand;

/// The name of the tool with which the model says it is finished. The loop answers it with the
/// check ladder; the registry only describes it.
pub const DONE_TOOL: &str = "done";

/// The tools that write a file (and nothing else): the helpers run checks after them, and only
/// their calls can be tried on the workspace.
pub const WRITE_TOOLS: [&str; 3] = ["create_file", "edit_file", "replace_function"];

/// The built-in tools, in the order the model sees them, described for one project.
pub struct Registry {
    tools: Vec<Box<dyn Tool>>,
    /// The project's test command, which the test tools' descriptions name.
    test_command: Option<TestCommand>,
}

impl Default for Registry {
    fn default() -> Self {
        Self::builtin()
    }
}

impl Registry {
    /// The built-in tools described for a project whose test command is `test_command`.
    pub fn for_tests(test_command: &TestCommand) -> Self {
        Self {
            test_command: Some(test_command.clone()),
            ..Self::builtin()
        }
    }

    /// The built-in tools, described without naming a test runner.
    pub fn builtin() -> Self {
        Self {
            test_command: None,
            tools: vec![
                Box::new(SearchCode),
                Box::new(ReadFile),
                Box::new(ListFiles),
                Box::new(EditFile),
                Box::new(ReplaceFunction),
                Box::new(CreateFile),
                Box::new(RunTests),
                Box::new(RunCommand),
            ],
        }
    }

    /// Every tool's description for the model, `done` last.
    pub fn specs(&self) -> Result<Vec<ToolSpec>, TemplateError> {
        let project = Project {
            test_command: self.test_command.as_ref(),
        };
        let mut specs: Vec<ToolSpec> = self
            .tools
            .iter()
            .map(|tool| {
                Ok(ToolSpec {
                    name: tool.name().to_string(),
                    description: tool.description(&project)?,
                    parameters: tool.parameters(&project),
                })
            })
            .collect::<Result<_, TemplateError>>()?;
        specs.push(ToolSpec {
            name: DONE_TOOL.to_string(),
            description: tool_description(DONE_TOOL, Value::Null)?,
            parameters: json!({
                "type": "object",
                "properties": {"summary": {"type": "string", "description": "What you changed and why, in a few sentences."}},
                "required": ["summary"],
                "additionalProperties": false
            }),
        });
        Ok(specs)
    }

    /// Names of every tool, `done` included.
    pub fn names(&self) -> Vec<&'static str> {
        let mut names: Vec<&'static str> = self.tools.iter().map(|t| t.name()).collect();
        names.push(DONE_TOOL);
        names
    }

    pub fn get(&self, name: &str) -> Option<&dyn Tool> {
        self.tools.iter().find(|t| t.name() == name).map(|t| &**t)
    }

    /// Runs the named tool. An unknown name is a note for the model that lists the real tools.
    pub async fn call(
        &self,
        ctx: &ToolContext<'_>,
        name: &str,
        args: &Value,
    ) -> Result<ToolOutput, ToolError> {
        match self.get(name) {
            Some(tool) => tool.call(ctx, args).await,
            None => Err(ToolError::respond(format!(
                "there is no tool called {name}. The tools are: {}.",
                self.names().join(", ")
            ))),
        }
    }
}
