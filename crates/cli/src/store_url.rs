//! The store `plumb serve`, `plumb worker` and `plumb token` share: `--db URL`, or plumb.db in
//! plumb's state folder.

use plumb_store::Store;

use crate::{Failure, setup};

/// Opens the store `db` names (the state folder's plumb.db when none); returns it and its URL.
pub(crate) async fn open(db: Option<&str>) -> Result<(Store, String), Failure> {
    let url = match db {
        Some(url) => url.to_owned(),
        None => format!("sqlite:{}", setup::state_dir()?.join("plumb.db").display()),
    };
    let store = Store::open(&url).await.map_err(|error| {
        Failure::bad_input(format!(
            "--db: {error}; give sqlite:PATH or postgres://USER:PASSWORD@HOST/DB"
        ))
    })?;
    Ok((store, url))
}
