//! Turning a model's JSON arguments into a tool's argument struct, with errors the model can act on.

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::ToolError;

/// Parses `value` into `T`. Arguments sent as a JSON string (some providers do) are unwrapped; a
/// missing object counts as `{}`. The error names the tool and its expected arguments.
pub(crate) fn parse<T: DeserializeOwned>(
    tool: &str,
    signature: &str,
    value: &Value,
) -> Result<T, ToolError> {
    let owned;
    let value = match value {
        Value::Null => {
            owned = Value::Object(Default::default());
            &owned
        }
        Value::String(text) => {
            owned = serde_json::from_str(text).map_err(|err| {
                ToolError::respond(format!(
                    "the arguments of {tool} are not a JSON object ({err}). Call it as {tool}({signature})."
                ))
            })?;
            &owned
        }
        other => other,
    };
    serde_json::from_value(value.clone()).map_err(|err| {
        ToolError::respond(format!(
            "bad arguments for {tool}: {err}. Call it as {tool}({signature})."
        ))
    })
}
