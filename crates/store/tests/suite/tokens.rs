//! Tokens: a secret shown once and kept only as its hash, looked up to its tenant, revoked; and
//! uploads read back only by the tenant that made them.

use plumb_store::{Store, StoreError};

use super::backends::on_both;

async fn a_token_s_secret_finds_its_tenant_until_it_is_revoked(store: &Store) {
    let (token, secret) = store.create_token("acme", "ci bot").await.unwrap();
    assert!(
        secret.starts_with("plumb_") && secret.len() == 6 + 64,
        "{secret}"
    );
    assert_eq!(
        store.tenant_for_token(&secret).await.unwrap().as_deref(),
        Some("acme")
    );
    let (_, other) = store.create_token("acme", "").await.unwrap();
    assert_ne!(secret, other, "every secret is fresh");
    assert_eq!(store.tenant_for_token("plumb_nope").await.unwrap(), None);
    assert_eq!(store.tenant_for_token("").await.unwrap(), None);

    let listed = store.list_tokens().await.unwrap();
    assert_eq!(listed.len(), 2);
    assert_eq!(
        (listed[0].id.as_str(), listed[0].label.as_str()),
        (token.id.as_str(), "ci bot")
    );
    let revoked = store.revoke_token(&token.id).await.unwrap();
    assert!(revoked.revoked_ms.is_some());
    assert_eq!(store.tenant_for_token(&secret).await.unwrap(), None);
    assert_eq!(
        store.tenant_for_token(&other).await.unwrap().as_deref(),
        Some("acme"),
        "revoking one token leaves the others"
    );
    assert!(matches!(
        store.revoke_token("k000").await,
        Err(StoreError::Invalid(_))
    ));
    assert!(matches!(
        store.create_token("Not A Tenant", "").await,
        Err(StoreError::Invalid(_))
    ));
}
on_both!(
    a_token_s_secret_finds_its_tenant_until_it_is_revoked,
    a_token_s_secret_finds_its_tenant_until_it_is_revoked
);

async fn an_upload_reads_back_only_for_its_tenant_and_can_be_forgotten(store: &Store) {
    let bytes = b"PK\x03\x04 an archive".to_vec();
    let upload = store.put_upload("acme", &bytes).await.unwrap();
    assert_eq!(upload.size, i64::try_from(bytes.len()).unwrap());
    let (record, content) = store.upload("acme", &upload.id).await.unwrap();
    assert_eq!((record, content), (upload.clone(), bytes));
    assert!(matches!(
        store.upload("globex", &upload.id).await,
        Err(StoreError::UploadNotFound(_))
    ));
    store.delete_upload("globex", &upload.id).await.unwrap();
    assert!(
        store.upload("acme", &upload.id).await.is_ok(),
        "another tenant cannot delete it"
    );
    store.delete_upload("acme", &upload.id).await.unwrap();
    assert!(store.upload("acme", &upload.id).await.is_err());
}
on_both!(
    an_upload_reads_back_only_for_its_tenant_and_can_be_forgotten,
    an_upload_reads_back_only_for_its_tenant_and_can_be_forgotten
);
