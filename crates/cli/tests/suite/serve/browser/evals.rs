//! Eval reports kept by `plumb eval --db`, listed and downloaded from the page by the tenant
//! `eval` only.

use serde_json::json;

use super::super::{Serve, free_port, runtime, token};
use super::driver::{Browser, api};
use crate::suite::common::Fixture;

#[test]
fn an_eval_report_kept_by_the_queue_is_listed_and_downloaded_by_the_eval_tenant_only() {
    let fixture = Fixture::billing();
    let db = format!("sqlite:{}", fixture.home.path().join("plumb.db").display());
    let eval = token(&fixture, &db, "eval");
    let acme = token(&fixture, &db, "acme");
    let serve = Serve::start(&fixture, &db, free_port());
    let rt = runtime();
    // What `plumb eval --db` keeps when it has written its reports (its own test checks that).
    let page = "<!doctype html><style>body{color:red}</style><h1>python-12</h1>\n";
    let summary = json!({"meta": {"model": "script"}, "total_instances": 12,
                         "resolved_instances": 9, "resolved_pct": 75.0, "totals": {"usd": 0.5}});
    rt.block_on(async {
        let store = plumb_store::Store::open(&db).await.unwrap();
        store
            .put_eval_report(
                "eval",
                "e42",
                "python-12",
                &summary.to_string(),
                page.as_bytes(),
            )
            .await
            .unwrap();
    });
    let report_url = format!("{}/api/evals/e42/report", serve.base);
    rt.block_on(async {
        // Sent as an attachment that may run nothing, never as a page of the server's origin.
        let response = reqwest::Client::new()
            .get(&report_url)
            .bearer_auth(&eval)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        let policy = response.headers()["content-security-policy"]
            .to_str()
            .unwrap();
        assert!(
            policy.starts_with("sandbox;") && policy.contains("default-src 'none'"),
            "{policy}"
        );
        let disposition = response.headers()["content-disposition"].to_str().unwrap();
        assert!(disposition.starts_with("attachment;"), "{disposition}");
        let (status, _) = api(reqwest::Method::GET, &report_url, &acme).await;
        assert_eq!(status, 404, "another tenant's eval reads as unknown");

        let browser = Browser::start().await;
        browser.sign_in(&serve.base, &eval).await;
        browser.click("a[href='#/evals']").await;
        let row = browser.text("tr[data-eval=e42]").await;
        assert!(
            row.contains("python-12") && row.contains("9 (75.0 %)") && row.contains("$0.50"),
            "{row}"
        );
        browser
            .click("tr[data-eval=e42] [data-action=download-report]")
            .await;
        assert_eq!(
            browser.downloaded("plumb-eval-e42.html").await,
            page.as_bytes()
        );
        browser.assert_no_errors("evals").await;

        browser.sign_out().await;
        browser.sign_in(&serve.base, &acme).await;
        browser.open(&format!("{}/#/evals", serve.base)).await;
        browser.find("[data-test=no-evals]").await;
        browser.close().await;
    });
    let (code, err) = serve.stop();
    assert_eq!(code, Some(0), "{err}");
}
