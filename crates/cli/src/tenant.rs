//! `plumb tenant limits|key|show`: an operator's settings for a tenant of `plumb serve` — how
//! many of its tasks run at once, rounds and dollars per task — and the model keys it brings,
//! read from stdin (never an argument, so never in a shell's history or a process list) and
//! stored sealed under the secret key.

use std::io::Read as _;

use plumb_store::{StoreError, TenantLimits, check_provider, check_tenant};

use crate::args::{TenantAction, TenantArgs};
use crate::screen::{one_line, say};
use crate::{Failure, store_url};

pub(crate) async fn run(args: TenantArgs) -> Result<i32, Failure> {
    let tenant = match &args.action {
        TenantAction::Limits { tenant, .. }
        | TenantAction::Key { tenant, .. }
        | TenantAction::Show { tenant } => tenant.clone(),
    };
    check_tenant(&tenant).map_err(|message| Failure::bad_input(format!("--tenant: {message}")))?;
    // Everything read from the command line and stdin is checked before the store is opened.
    let key = match &args.action {
        TenantAction::Key {
            provider,
            delete,
            secret_key_file,
            ..
        } => {
            check_provider(provider)
                .map_err(|message| Failure::bad_input(format!("--provider: {message}")))?;
            if *delete {
                None
            } else {
                Some((read_key()?, secret_key(secret_key_file.clone())?))
            }
        }
        _ => None,
    };
    let (store, _) = store_url::open(args.db.as_deref()).await?;
    match args.action {
        TenantAction::Limits {
            max_running,
            max_rounds,
            max_usd,
            ..
        } => {
            let limits = TenantLimits {
                max_running,
                max_rounds,
                max_usd,
            };
            store
                .set_tenant_limits(&tenant, &limits)
                .await
                .map_err(failure)?;
            say!(
                "plumb tenant: {} may run {} task(s) at once, {} round(s) and {} per task",
                one_line(&tenant),
                or_server(max_running),
                or_server(max_rounds),
                max_usd.map_or_else(|| "the server's budget".to_owned(), |usd| format!("${usd}"))
            );
        }
        TenantAction::Key { provider, .. } => match key {
            Some((key, secret)) => {
                store
                    .set_model_key(&tenant, &provider, &key, &secret)
                    .await
                    .map_err(failure)?;
                say!(
                    "plumb tenant: {}'s {provider} key is kept, sealed; its tasks use it from their next run",
                    one_line(&tenant)
                );
            }
            None => {
                let gone = store
                    .delete_model_key(&tenant, &provider)
                    .await
                    .map_err(failure)?;
                say!(
                    "plumb tenant: {}",
                    if gone {
                        format!("{}'s {provider} key is forgotten", one_line(&tenant))
                    } else {
                        format!("{} kept no {provider} key", one_line(&tenant))
                    }
                );
            }
        },
        TenantAction::Show { .. } => {
            let limits = store.tenant_limits(&tenant).await.map_err(failure)?;
            let keys = store.model_keys(&tenant).await.map_err(failure)?;
            let providers: Vec<&str> = keys.iter().map(|key| key.provider.as_str()).collect();
            crate::screen::out(&format!(
                "tenant\t{}\nmax_running\t{}\nmax_rounds\t{}\nmax_usd\t{}\nkeys\t{}\n",
                one_line(&tenant),
                or_server(limits.max_running),
                or_server(limits.max_rounds),
                limits
                    .max_usd
                    .map_or_else(|| "the server's".to_owned(), |usd| usd.to_string()),
                if providers.is_empty() {
                    "none".to_owned()
                } else {
                    providers.join(", ")
                }
            ));
        }
    }
    store.close().await;
    Ok(0)
}

fn or_server(limit: Option<i64>) -> String {
    limit.map_or_else(|| "the server's".to_owned(), |n| n.to_string())
}

fn failure(error: StoreError) -> Failure {
    match error {
        StoreError::Invalid(message) => Failure::bad_input(message),
        other => Failure::infra(other.to_string()),
    }
}

/// The key from stdin, trimmed of the newline a pipe or a paste adds.
fn read_key() -> Result<String, Failure> {
    let mut text = String::new();
    std::io::stdin()
        .take(64 * 1024)
        .read_to_string(&mut text)
        .map_err(|error| Failure::bad_input(format!("reading the key from stdin: {error}")))?;
    let key = text.trim().to_owned();
    plumb_store::check_model_key(&key)
        .map_err(|message| Failure::bad_input(format!("the key on stdin: {message}")))?;
    Ok(key)
}

fn secret_key(file: Option<std::path::PathBuf>) -> Result<plumb_store::SecretKey, Failure> {
    crate::secret_key::load(file.as_deref())?.ok_or_else(|| {
        Failure::bad_input(
            "no secret key to seal the key with: set PLUMB_SECRET_KEY (64 hex digits, e.g. from \
             `openssl rand -hex 32`) or give --secret-key-file, the same as the server's",
        )
    })
}
