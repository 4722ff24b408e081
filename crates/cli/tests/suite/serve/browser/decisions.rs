//! The other decisions from the page: a running task cancelled; a change rejected, after its
//! ticket and a file name holding a bidi control were shown escaped and the reviewer's note sat
//! on the line it names.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::json;

use super::super::{Serve, call, free_port, post_bill_412, runtime, settled, token};
use super::driver::{Browser, RUN_TIMEOUT};
use crate::suite::common::Fixture;

#[test]
fn a_person_cancels_a_running_task_from_the_page() {
    let fixture = Fixture::billing();
    let script = fixture.slow_script();
    let model = format!("model=script:{}", script.display());
    let db = format!("sqlite:{}", fixture.home.path().join("plumb.db").display());
    let acme = token(&fixture, &db, "acme");
    let serve = Serve::start_settings(
        &fixture,
        &db,
        free_port(),
        &[&model, "run.allowed_commands=[[\"sleep\"]]"],
    );
    let rt = runtime();
    let task_url = post_bill_412(&rt, &serve, &fixture, &acme, None);
    let id = task_url.rsplit('/').next().unwrap().to_owned();
    rt.block_on(async {
        let browser = Browser::start().await;
        browser.sign_in(&serve.base, &acme).await;
        browser.task_page(&serve.base, &id).await;
        browser
            .until(
                "the sleep started",
                "return document.querySelector('ol.events')?.textContent.includes('sleep')",
                RUN_TIMEOUT,
            )
            .await;
        let reject = browser.disabled_reason("reject").await.unwrap();
        assert!(reject.contains("awaiting approval"), "{reject}");
        // A disabled action stays reachable by keyboard, so its reason can be read.
        let focused = browser
            .js("document.querySelector('[data-action=reject]').focus(); \
                 return document.activeElement.dataset.action")
            .await;
        assert_eq!(focused, json!("reject"));
        let patch = browser.disabled_reason("download-patch").await.unwrap();
        assert!(patch.contains("no diff"), "{patch}");
        browser.click("[data-action=cancel]").await;
        assert_eq!(browser.wait_for_state(&["cancelled"]).await, "cancelled");
        let again = browser.disabled_reason("cancel").await.unwrap();
        assert!(again.contains("ended"), "{again}");
        let lines = browser.text("ol.events").await;
        assert!(lines.contains("cancel requested"), "{lines}");
        browser.assert_no_errors("cancelled task").await;
        browser.close().await;
    });
    let task = settled(&rt, &task_url, &acme);
    assert_eq!(task["state"], "cancelled", "{task}");
    let (code, err) = serve.stop();
    assert_eq!(code, Some(0), "{err}");
}

/// BILL-412's script with a first step that writes a file whose name holds a right-to-left
/// override (U+202E), as a Trojan-Source change would (the tool refuses the path and names it;
/// the run goes on to the fix), and a last line that answers the reviewer with a note on line 53
/// of the fixed file.
fn bidi_script(fixture: &Fixture) -> PathBuf {
    let original = std::fs::read_to_string(
        plumb_test_support::billing_example().join("bill-412.script.jsonl"),
    )
    .unwrap();
    let bidi = json!({"tool": "create_file", "args": {"path": "docs/read\u{202e}me.md", "content": "GST after discount.\n"}});
    let review = json!({"tool": "submit_review", "args": {
        "verdict": "approve",
        "summary": "GST is now worked out after the discount.",
        "notes": [{"file": "billing/invoice_totals.py", "line": 53, "note": "tax on the net price, as the ticket asks"}],
    }});
    let path = fixture.script_path("bidi.jsonl");
    std::fs::write(&path, format!("{bidi}\n{original}{review}\n")).unwrap();
    path
}

#[test]
fn a_bidi_name_is_shown_escaped_a_review_note_sits_on_its_line_and_a_person_rejects() {
    let fixture = Fixture::billing();
    let model = format!("model=script:{}", bidi_script(&fixture).display());
    let db = format!("sqlite:{}", fixture.home.path().join("plumb.db").display());
    let acme = token(&fixture, &db, "acme");
    let serve = Serve::start_settings(&fixture, &db, free_port(), &[&model]);
    let rt = runtime();
    let ticket = std::fs::read_to_string(fixture.ticket()).unwrap();
    let body = json!({
        "repo": {"kind": "path", "path": fixture.repo_path()},
        "ticket": format!("Totals \u{202e}wrong\u{202c} after discount\n\n{ticket}"),
    });
    let (status, task) = rt.block_on(call(
        reqwest::Method::POST,
        &format!("{}/api/tasks", serve.base),
        &acme,
        Some(body),
    ));
    assert_eq!(status, 201, "{task}");
    let id = task["id"].as_str().unwrap().to_owned();
    let task_url = format!("{}/api/tasks/{id}", serve.base);
    let ended = settled(&rt, &task_url, &acme);
    assert_eq!(ended["state"], "awaiting_approval", "{ended}");

    rt.block_on(async {
        let browser = Browser::start().await;
        browser.sign_in(&serve.base, &acme).await;
        let row = browser.text(&format!("tr[data-task='{id}']")).await;
        assert!(row.contains("Totals <U+202E>wrong<U+202C> after discount"), "{row}");
        browser.task_page(&serve.base, &id).await;
        browser
            .until(
                "the diff's files",
                "return document.querySelectorAll('.d2h-file-wrapper').length > 0",
                Duration::from_secs(60),
            )
            .await;
        // The refused call names the file as the model sent it: escaped on the page.
        let lines = browser.text("ol.events").await;
        assert!(lines.contains("create_file {\"content\":\"GST after discount.\\n\",\"path\":\"docs/read<U+202E>me.md\"}"), "{lines}");
        let raw = browser
            .js("return document.body.innerText.includes('\\u202e')")
            .await;
        assert_eq!(raw, json!(false), "no bidi control reaches the screen as itself");
        // The reviewer's note sits under the line it names, in both layouts.
        let verdict = browser.text("[data-test=verdict]").await;
        assert_eq!(verdict, "approve");
        for layout in ["split", "unified"] {
            browser.click(&format!("[data-test={layout}]")).await;
            let placed = browser
                .until(
                    "the review note on its line",
                    "const note = document.querySelector('[data-test=review-note]'); \
                     const row = note?.closest('tr')?.previousElementSibling; \
                     return note && row ? [note.textContent, row.textContent] : null",
                    Duration::from_secs(30),
                )
                .await;
            assert!(
                placed[0].as_str().unwrap().contains("tax on the net price")
                    && placed[1].as_str().unwrap().contains("compute_gst(net, rate)"),
                "{layout}: {placed}"
            );
        }
        let title = browser.text("[data-test=task-title]").await;
        assert!(title.contains("<U+202E>"), "{title}");

        browser.click("[data-action=reject]").await;
        assert_eq!(browser.wait_for_state(&["rejected"]).await, "rejected");
        let approve = browser.disabled_reason("approve").await.unwrap();
        assert!(approve.contains("rejected"), "{approve}");
        browser.assert_no_errors("rejected task").await;
        browser.close().await;
    });
    let (_, task) = rt.block_on(call(reqwest::Method::GET, &task_url, &acme, None));
    assert_eq!(task["state"], "rejected", "{task}");
    let (code, err) = serve.stop();
    assert_eq!(code, Some(0), "{err}");
}
