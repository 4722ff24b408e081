//! The operator's secret key that seals tenants' model keys: from `--secret-key-file FILE`, else
//! the environment variable `PLUMB_SECRET_KEY`; 64 hexadecimal digits either way. `plumb serve`,
//! every `plumb worker` and `plumb tenant key` must share it.

use std::path::Path;

use plumb_store::SecretKey;

use crate::Failure;

/// The secret key, or none when neither the file nor the variable gives one.
pub(crate) fn load(file: Option<&Path>) -> Result<Option<SecretKey>, Failure> {
    if let Some(path) = file {
        let origin = format!("--secret-key-file {}", path.display());
        let text = std::fs::read_to_string(path)
            .map_err(|error| Failure::bad_input(format!("{origin}: {error}")))?;
        return SecretKey::parse(&text, &origin)
            .map(Some)
            .map_err(Failure::bad_input);
    }
    match std::env::var("PLUMB_SECRET_KEY") {
        Ok(text) if !text.trim().is_empty() => SecretKey::parse(&text, "PLUMB_SECRET_KEY")
            .map(Some)
            .map_err(Failure::bad_input),
        _ => Ok(None),
    }
}
