//! A tenant's limits and model keys: limits set, read and cleared; a key kept only sealed (the
//! raw row holds no byte of it), opened only with the secret key it was sealed under, listed
//! without it, forgotten; and a tenant at its limit of tasks running has its next task refused
//! by the claim until one ends, while another tenant's task is taken.

use std::time::Duration;

use plumb_store::{AttemptEnd, SecretKey, Store, StoreError, TaskState, TenantLimits};

use super::backends::{Db, new_task, on_both};

const LEASE: Duration = Duration::from_secs(60);

fn secret(digit: char) -> SecretKey {
    SecretKey::parse(&digit.to_string().repeat(64), "test").unwrap()
}

async fn limits_are_set_read_and_cleared(store: &Store) {
    assert_eq!(
        store.tenant_limits("acme").await.unwrap(),
        TenantLimits::default()
    );
    let limits = TenantLimits {
        max_running: Some(2),
        max_rounds: Some(12),
        max_usd: Some(1.5),
    };
    store.set_tenant_limits("acme", &limits).await.unwrap();
    assert_eq!(store.tenant_limits("acme").await.unwrap(), limits);
    assert_eq!(
        store.tenant_limits("globex").await.unwrap(),
        TenantLimits::default()
    );
    let fewer = TenantLimits {
        max_rounds: Some(5),
        ..TenantLimits::default()
    };
    store.set_tenant_limits("acme", &fewer).await.unwrap();
    assert_eq!(store.tenant_limits("acme").await.unwrap(), fewer);
    let zero = TenantLimits {
        max_running: Some(0),
        ..TenantLimits::default()
    };
    assert!(matches!(
        store.set_tenant_limits("acme", &zero).await,
        Err(StoreError::Invalid(_))
    ));
    assert!(matches!(
        store.set_tenant_limits("Not A Tenant", &fewer).await,
        Err(StoreError::Invalid(_))
    ));
}
on_both!(
    limits_are_set_read_and_cleared,
    limits_are_set_read_and_cleared
);

async fn a_tenant_at_its_limit_waits_and_others_do_not(store: &Store) {
    let limits = TenantLimits {
        max_running: Some(1),
        ..TenantLimits::default()
    };
    store.set_tenant_limits("acme", &limits).await.unwrap();
    let first = store.create_task(&new_task("acme", "one")).await.unwrap();
    let second = store.create_task(&new_task("acme", "two")).await.unwrap();
    let other = store
        .create_task(&new_task("globex", "three"))
        .await
        .unwrap();
    let claim = store.claim(&first.id, "w1", LEASE).await.unwrap();
    match store.claim(&second.id, "w2", LEASE).await {
        Err(StoreError::TenantBusy { tenant, running }) => {
            assert_eq!((tenant.as_str(), running), ("acme", 1));
        }
        other => panic!("a second task of a tenant limited to one ran: {other:?}"),
    }
    let waiting = store.task("acme", &second.id).await.unwrap();
    assert_eq!((waiting.state, waiting.attempt), (TaskState::Queued, 0));
    store.claim(&other.id, "w2", LEASE).await.unwrap();

    let end = AttemptEnd {
        state: TaskState::Failed,
        outcome: "tests_failed".into(),
        reason: Some("done".into()),
        diff_sha256: None,
    };
    store.finish(&claim, &end).await.unwrap();
    let next = store.claim(&second.id, "w2", LEASE).await.unwrap();
    assert_eq!(next.attempt, 1);
}
on_both!(
    a_tenant_at_its_limit_waits_and_others_do_not,
    a_tenant_at_its_limit_waits_and_others_do_not
);

async fn a_model_key_is_kept_sealed(db: Db) {
    let store = &db.store;
    let key = "sk-live-0123456789abcdef";
    let kept = store
        .set_model_key("acme", "openai", key, &secret('a'))
        .await
        .unwrap();
    assert_eq!(kept.provider, "openai");
    let listed = store.model_keys("acme").await.unwrap();
    assert_eq!(listed, vec![kept]);
    assert!(store.model_keys("globex").await.unwrap().is_empty());
    let opened = store
        .model_key("acme", "openai", &secret('a'))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(opened.expose(), key);
    assert!(
        store
            .model_key("acme", "anthropic", &secret('a'))
            .await
            .unwrap()
            .is_none()
    );
    assert!(matches!(
        store.model_key("acme", "openai", &secret('b')).await,
        Err(StoreError::Invalid(_))
    ));

    // Past the store's API: the row holds no trace of the key.
    let select = "SELECT nonce, sealed FROM tenant_keys WHERE tenant = 'acme'";
    let (nonce, sealed): (Vec<u8>, Vec<u8>) = if db.url.starts_with("sqlite:") {
        let pool = sqlx::SqlitePool::connect(&db.url).await.unwrap();
        sqlx::query_as(select).fetch_one(&pool).await.unwrap()
    } else {
        let pool = sqlx::PgPool::connect(&db.url).await.unwrap();
        sqlx::query_as(select).fetch_one(&pool).await.unwrap()
    };
    assert_eq!(nonce.len(), 24);
    let secret_part = &key.as_bytes()[8..16];
    assert!(!sealed.windows(8).any(|window| window == secret_part));

    assert!(matches!(
        store
            .set_model_key("acme", "openai", "two words", &secret('a'))
            .await,
        Err(StoreError::Invalid(_))
    ));
    assert!(matches!(
        store
            .set_model_key("acme", "ollama", key, &secret('a'))
            .await,
        Err(StoreError::Invalid(_))
    ));
    assert!(store.delete_model_key("acme", "openai").await.unwrap());
    assert!(!store.delete_model_key("acme", "openai").await.unwrap());
    assert!(store.model_keys("acme").await.unwrap().is_empty());
    db.finish().await;
}

mod a_model_key_is_kept_sealed {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn sqlite() {
        super::a_model_key_is_kept_sealed(crate::suite::backends::sqlite().await).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn postgres() {
        super::a_model_key_is_kept_sealed(crate::suite::backends::postgres().await).await;
    }
}

async fn claims_racing_for_one_tenant_stay_within_its_limit(store: &Store) {
    let limits = TenantLimits {
        max_running: Some(2),
        ..TenantLimits::default()
    };
    store.set_tenant_limits("acme", &limits).await.unwrap();
    let mut ids = Vec::new();
    for n in 0..32 {
        let task = store
            .create_task(&new_task("acme", &format!("t{n}")))
            .await
            .unwrap();
        ids.push(task.id);
    }
    let claims = ids.into_iter().enumerate().map(|(n, id)| {
        let store = store.clone();
        tokio::spawn(async move { store.claim(&id, &format!("w{n}"), LEASE).await })
    });
    let mut taken = 0;
    for claim in claims {
        match claim.await.unwrap() {
            Ok(_) => taken += 1,
            Err(StoreError::TenantBusy { .. }) => {}
            Err(other) => panic!("{other}"),
        }
    }
    assert_eq!(taken, 2, "claims at once went past the limit of 2");
}
on_both!(
    claims_racing_for_one_tenant_stay_within_its_limit,
    claims_racing_for_one_tenant_stay_within_its_limit
);
