//! A person starts BILL-412 from the form, watches it with the stream cut once, reads the ladder
//! and the diff, downloads the patch, has a stale SHA refused, approves the right one, rolls it
//! back; at phone width nothing runs off the screen; another tenant sees nothing.

use std::time::Duration;

use plumb_test_support::tree_digest;
use serde_json::{Value, json};

use super::super::{Serve, event_list, free_port, runtime, token};
use super::driver::{Browser, RUN_TIMEOUT, api};
use crate::suite::common::Fixture;

/// Every event of a task that has ended, as its stream sends them (checked 1..n).
async fn all_events(task_url: &str, token: &str) -> Vec<Value> {
    let text = reqwest::Client::new()
        .get(format!("{task_url}/events"))
        .bearer_auth(token)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    event_list(&text).0
}

/// The sequence numbers of the lines the task page shows.
async fn shown_seqs(browser: &Browser) -> Vec<i64> {
    let seqs = browser
        .js("return [...document.querySelectorAll('ol.events li')].map((li) => Number(li.dataset.seq))")
        .await;
    serde_json::from_value(seqs).unwrap()
}

#[test]
fn a_person_starts_a_task_in_the_browser_reads_its_diff_and_approves_the_exact_sha() {
    let fixture = Fixture::billing();
    let before = tree_digest(fixture.repo_path());
    let db = format!("sqlite:{}", fixture.home.path().join("plumb.db").display());
    let acme = token(&fixture, &db, "acme");
    let other = token(&fixture, &db, "globex");
    let serve = Serve::start(&fixture, &db, free_port());
    let base = serve.base.clone();
    let repo = fixture.repo_path().display().to_string();
    let ticket = std::fs::read_to_string(fixture.ticket()).unwrap();

    runtime().block_on(async {
        let browser = Browser::start().await;

        // A token the server does not know is refused on the sign-in form.
        browser.open(&format!("{base}/")).await;
        browser
            .type_into(
                "form[data-test=sign-in] input[name=token]",
                "plumb_not-a-token",
            )
            .await;
        browser
            .click("form[data-test=sign-in] button[type=submit]")
            .await;
        let refusal = browser.text("form[data-test=sign-in] [role=alert]").await;
        assert!(refusal.contains("not live"), "{refusal}");
        assert_eq!(
            browser.js("return location.href").await,
            json!(format!("{base}/"))
        );

        browser.sign_in(&base, &acme).await;
        assert_eq!(browser.text("[data-test=tenant]").await, "acme");
        // The token stays in the tab's session storage, never in the address.
        let href = browser.js("return location.href").await;
        assert!(!href.as_str().unwrap().contains(&acme), "{href}");
        browser.find("[data-test=no-tasks]").await;

        // The form: the server's refusals shown beside the field they name.
        browser.click("a[href='#/new']").await;
        browser.click("input[name=kind][value=path]").await;
        browser
            .type_into("input[name=path]", "relative/billing")
            .await;
        browser.type_into("textarea[name=ticket]", &ticket).await;
        browser.type_into("input[name=max_rounds]", "0").await;
        browser
            .click("form[data-test=new-task] button[type=submit]")
            .await;
        let rounds = browser.text("[data-error-for=max_rounds]").await;
        assert!(rounds.contains("max_rounds"), "{rounds}");
        browser.type_into("input[name=max_rounds]", "12").await;
        browser
            .click("form[data-test=new-task] button[type=submit]")
            .await;
        let path_error = browser.text("[data-error-for='repo.path']").await;
        assert!(path_error.contains("absolute"), "{path_error}");
        browser.type_into("input[name=path]", &repo).await;
        // The ticket's Markdown preview, drawn through DOMPurify.
        browser.click("[data-test=preview-tab]").await;
        let preview = browser.text("[data-test=preview]").await;
        assert!(preview.contains("BILL-412"), "{preview}");
        browser.click("[role=tab]:not([data-test])").await;
        browser.screenshot("new-task").await;
        browser
            .click("form[data-test=new-task] button[type=submit]")
            .await;

        // The task page: live lines; the stream is cut once mid-run and must resume.
        let id = browser
            .until(
                "the task page",
                "return location.hash.startsWith('#/tasks/') ? location.hash.slice(8) : null",
                Duration::from_secs(30),
            )
            .await
            .as_str()
            .unwrap()
            .to_owned();
        let task_url = format!("{base}/api/tasks/{id}");
        browser
            .until(
                "the run's first lines",
                "return document.querySelectorAll('ol.events li').length >= 3",
                RUN_TIMEOUT,
            )
            .await;
        browser.js("window.plumbDebug.dropStream()").await;
        browser
            .until(
                "the stream resumed",
                "return window.plumbDebug.resumes() >= 1 \
                 && document.querySelector('[data-test=stream]').textContent === 'live'",
                Duration::from_secs(30),
            )
            .await;
        assert_eq!(
            browser
                .wait_for_state(&["awaiting approval", "failed"])
                .await,
            "awaiting approval"
        );

        // The run's figures are on the task (BILL-412's script takes 8 rounds).
        let (_, task) = api(reqwest::Method::GET, &task_url, &acme).await;
        assert_eq!(task["rounds"], 8, "{task}");
        assert!(
            task["tokens"].is_i64() && task["cost_usd"].is_f64(),
            "{task}"
        );

        // The ladder filled in, the diff drawn, its SHA the API's.
        let (_, diff) = api(reqwest::Method::GET, &format!("{task_url}/diff"), &acme).await;
        let sha = diff["sha256"].as_str().unwrap().to_owned();
        let shown_sha = browser
            .until(
                "the diff",
                "return document.querySelector('[data-test=sha]')?.textContent",
                Duration::from_secs(30),
            )
            .await;
        assert_eq!(shown_sha, json!(sha));
        browser
            .until(
                "the diff's files",
                "return document.querySelectorAll('.d2h-file-wrapper').length > 0",
                Duration::from_secs(30),
            )
            .await;
        let files = browser.text(".d2h-file-list-wrapper").await;
        assert!(files.contains("billing/invoice_totals.py"), "{files}");
        let approval = browser
            .js("return document.querySelector('[data-step=approval]').dataset.status")
            .await;
        assert_eq!(approval, json!("waiting"));
        for step in ["syntax", "reproduce", "pass", "full_suite"] {
            let status = browser
                .js(&format!(
                    "return document.querySelector('[data-step={step}]').dataset.status"
                ))
                .await;
            assert_eq!(status, json!("passed"), "the ladder's {step} step");
        }
        let highlighted = browser
            .js("return document.querySelectorAll('.d2h-code-line-ctn .hljs-keyword').length")
            .await;
        assert!(
            highlighted.as_u64().unwrap() > 0,
            "the diff's code is highlighted"
        );
        browser.click("[data-test=unified]").await;
        browser.find(".d2h-file-diff .d2h-code-linenumber").await;
        browser.click("[data-test=split]").await;
        browser.find(".d2h-files-diff").await;
        // The whole page down to the diff's first lines, for the screenshot.
        browser.client.set_window_size(1280, 1500).await.unwrap();
        browser.js("window.scrollTo(0, 0)").await;
        browser.screenshot("task").await;
        browser.client.set_window_size(1280, 800).await.unwrap();
        assert!(browser.disabled_reason("approve").await.is_none());
        let rollback_open = browser.disabled_reason("rollback").await;
        assert!(rollback_open.is_none(), "{rollback_open:?}");

        // The patch downloaded from the page is byte for byte the API's.
        browser.click("[data-action=download-patch]").await;
        let downloaded = browser.downloaded(&format!("plumb-{id}.patch")).await;
        let from_api = reqwest::Client::new()
            .get(format!("{task_url}/patch"))
            .bearer_auth(&acme)
            .send()
            .await
            .unwrap()
            .bytes()
            .await
            .unwrap();
        assert_eq!(downloaded, from_api.to_vec());

        // A SHA that is not the diff's is refused, with the server's reason on the page.
        browser.click("[data-action=approve]").await;
        let prefilled = browser
            .js("return document.querySelector('[data-test=confirm] input[name=sha256]').value")
            .await;
        assert_eq!(prefilled, json!(sha));
        let stale = if sha.starts_with('0') { "1" } else { "0" }.repeat(64);
        browser
            .type_into("[data-test=confirm] input[name=sha256]", &stale)
            .await;
        browser.click("[data-action=confirm-approve]").await;
        let refused = browser.text("[data-test=message][role=alert]").await;
        assert!(refused.contains("SHA-256"), "{refused}");
        let (_, task) = api(reqwest::Method::GET, &task_url, &acme).await;
        assert_eq!(task["state"], "awaiting_approval", "{task}");

        // The right SHA approves; the change reaches the folder.
        browser
            .type_into("[data-test=confirm] input[name=sha256]", &sha)
            .await;
        browser.click("[data-action=confirm-approve]").await;
        assert_eq!(browser.wait_for_state(&["approved"]).await, "approved");
        let approve_closed = browser.disabled_reason("approve").await.unwrap();
        assert!(
            approve_closed.contains("this task is approved"),
            "{approve_closed}"
        );
        let stream = browser.text("[data-test=stream]").await;
        assert_eq!(stream, "live", "an approved task's stream stays open");
        // The folder on the server now holds the change (the reproduction test among it).
        assert!(fixture.repo_path().join("tests/test_gst.py").exists());

        // An approved change may still be rolled back: the folder is put back as it was.
        assert!(browser.disabled_reason("rollback").await.is_none());
        browser.click("[data-action=rollback]").await;
        assert_eq!(
            browser.wait_for_state(&["rolled back"]).await,
            "rolled back"
        );
        assert!(!fixture.repo_path().join("tests/test_gst.py").exists());
        assert_eq!(tree_digest(fixture.repo_path()), before);

        // Once the task is final the stream ends, and the page showed every event once.
        browser
            .until(
                "the stream's end",
                "return document.querySelector('[data-test=stream]').textContent === 'ended'",
                Duration::from_secs(30),
            )
            .await;
        let events = all_events(&task_url, &acme).await;
        let expected: Vec<i64> = (1..=i64::try_from(events.len()).unwrap()).collect();
        assert_eq!(
            shown_seqs(&browser).await,
            expected,
            "no line lost or repeated"
        );
        browser.assert_no_errors("task").await;

        // The list: the task with its figures; then at phone width nothing runs off the screen.
        browser.click("a.brand").await;
        let row = browser.text(&format!("tr[data-task='{id}']")).await;
        assert!(
            row.contains("rolled back") && row.contains("BILL-412"),
            "{row}"
        );
        browser.screenshot("tasks").await;
        browser.client.set_window_size(390, 844).await.unwrap();
        for page in ["#/", &format!("#/tasks/{id}"), "#/new"] {
            browser.open(&format!("{base}/{page}")).await;
            browser.find("main h1").await;
            let overflow = browser
                .js("return document.documentElement.scrollWidth - window.innerWidth")
                .await;
            assert!(
                overflow.as_i64().unwrap() <= 0,
                "{page} is wider than a phone: {overflow}"
            );
            browser.assert_no_errors(page).await;
        }
        browser.client.set_window_size(1280, 800).await.unwrap();

        // Another tenant sees no task, and the task's page reads as unknown.
        browser.sign_out().await;
        browser.sign_in(&base, &other).await;
        browser.find("[data-test=no-tasks]").await;
        browser.open(&format!("{base}/#/tasks/{id}")).await;
        browser.find("[data-test=not-found]").await;
        browser.assert_no_errors("another tenant's").await;
        browser.close().await;
    });
    let (code, err) = serve.stop();
    assert_eq!(code, Some(0), "{err}");
}
