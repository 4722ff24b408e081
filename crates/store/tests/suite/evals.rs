//! Eval reports: kept per tenant, replaced by a later run of the same eval, read back byte for
//! byte, never another tenant's.

use plumb_store::{Store, StoreError};

use super::backends::on_both;

async fn an_eval_report_is_kept_replaced_and_read_by_its_tenant_only(store: &Store) {
    assert!(store.eval_reports("eval").await.unwrap().is_empty());
    let page = b"<!doctype html><title>eval</title>\xe2\x80\xae";
    store
        .put_eval_report("eval", "e1", "python-12", "{\"v\":1}", page)
        .await
        .unwrap();
    store
        .put_eval_report("eval", "e2", "rust-12", "{\"v\":1}", b"<p>rust</p>")
        .await
        .unwrap();
    let listed = store.eval_reports("eval").await.unwrap();
    assert_eq!(listed.len(), 2);
    assert_eq!(store.eval_report_html("eval", "e1").await.unwrap(), page);

    // The same eval run again replaces its report and keeps when it was first made.
    let first = listed.iter().find(|r| r.id == "e1").unwrap().clone();
    store
        .put_eval_report("eval", "e1", "python-12", "{\"v\":2}", b"<p>again</p>")
        .await
        .unwrap();
    let listed = store.eval_reports("eval").await.unwrap();
    assert_eq!(listed.len(), 2);
    let again = listed.iter().find(|r| r.id == "e1").unwrap();
    assert_eq!(
        (again.summary.as_str(), again.created_ms),
        ("{\"v\":2}", first.created_ms)
    );
    assert!(again.updated_ms >= first.updated_ms);
    assert_eq!(
        store.eval_report_html("eval", "e1").await.unwrap(),
        b"<p>again</p>"
    );

    // Another tenant sees none of them.
    assert!(store.eval_reports("acme").await.unwrap().is_empty());
    assert!(matches!(
        store.eval_report_html("acme", "e1").await,
        Err(StoreError::EvalReportNotFound(_))
    ));
}
on_both!(
    an_eval_report_is_kept_replaced_and_read_by_its_tenant_only,
    an_eval_report_is_kept_replaced_and_read_by_its_tenant_only
);
