//! `plumb token create|list|revoke`: the API tokens tenants of `plumb serve` sign in with. A
//! token's secret is printed once, on stdout, and the store keeps only its SHA-256.

use crate::args::{TokenAction, TokenArgs};
use crate::screen::{one_line, say};
use crate::{Failure, store_url};

pub(crate) async fn run(args: TokenArgs) -> Result<i32, Failure> {
    let (store, _) = store_url::open(args.db.as_deref()).await?;
    match args.action {
        TokenAction::Create { tenant, label } => {
            plumb_store::check_tenant(&tenant)
                .map_err(|message| Failure::bad_input(format!("--tenant: {message}")))?;
            let (token, secret) = store
                .create_token(&tenant, &label)
                .await
                .map_err(|error| Failure::infra(error.to_string()))?;
            say!(
                "plumb token: made {} for tenant {}; the secret below is shown this once",
                token.id,
                one_line(&token.tenant)
            );
            crate::screen::out(&format!("{secret}\n"));
        }
        TokenAction::List => {
            let tokens = store
                .list_tokens()
                .await
                .map_err(|error| Failure::infra(error.to_string()))?;
            if tokens.is_empty() {
                say!("plumb token: no tokens; `plumb token create --tenant NAME` makes one");
            }
            for token in tokens {
                let state = if token.revoked_ms.is_some() {
                    "revoked"
                } else {
                    "live"
                };
                crate::screen::out(&format!(
                    "{}\t{}\t{}\t{}\n",
                    token.id,
                    one_line(&token.tenant),
                    state,
                    one_line(&token.label)
                ));
            }
        }
        TokenAction::Revoke { id } => {
            let token = store.revoke_token(&id).await.map_err(|error| match error {
                plumb_store::StoreError::Invalid(message) => Failure::bad_input(message),
                other => Failure::infra(other.to_string()),
            })?;
            say!(
                "plumb token: {} of tenant {} is revoked",
                token.id,
                one_line(&token.tenant)
            );
        }
    }
    store.close().await;
    Ok(0)
}
