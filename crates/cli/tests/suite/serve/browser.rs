//! The web page of `plumb serve` in a real headless Chromium (Debian's `chromium`), driven over
//! WebDriver (`chromedriver`, through fantoccini) as a person would use it: signing in, starting
//! BILL-412 from the form, watching it, reading the diff, refusing a stale SHA, approving the
//! right one, downloading the patch; rejecting and cancelling; a dropped event stream resumed
//! without a line lost or repeated; another tenant seeing nothing; a bidi character in a file
//! name and a ticket shown escaped. Every page must end with no error in `window.plumbErrors`
//! (scripts, promises, assets, console errors, Content-Security-Policy violations). Screenshots
//! land in `target/tmp/screenshots/`; `PLUMB_UPDATE_SCREENSHOTS=1` also writes `docs/screenshots/`.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::{Client, ClientBuilder, Locator};
use plumb_test_support::tree_digest;
use serde_json::{Value, json};

use super::{Serve, call, event_list, free_port, post_bill_412, runtime, settled, token};
use crate::suite::common::Fixture;

const CHROMIUM: &str = "/usr/bin/chromium";
/// Long enough for a BILL-412 run in the sandbox on a loaded two-core machine.
const RUN_TIMEOUT: Duration = Duration::from_secs(300);

/// A `chromedriver` process and one browser session on it, downloads going to a folder of its own.
struct Browser {
    client: Client,
    driver: Child,
    downloads: tempfile::TempDir,
}

impl Browser {
    async fn start() -> Browser {
        for (program, package) in [(CHROMIUM, "chromium"), ("chromedriver", "chromium-driver")] {
            let found = Command::new(program)
                .arg("--version")
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|status| status.success());
            assert!(
                found,
                "the web page's tests need {program}: apt-get install {package} \
                 (scripts/setup-test-deps.sh --tests installs it)"
            );
        }
        let port = free_port();
        let driver = Command::new("chromedriver")
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let downloads = tempfile::tempdir().unwrap();
        let mut capabilities = serde_json::Map::new();
        capabilities.insert("browserName".into(), json!("chrome"));
        capabilities.insert(
            "goog:chromeOptions".into(),
            json!({
                "binary": CHROMIUM,
                "args": ["--headless=new", "--no-sandbox", "--disable-gpu",
                         "--disable-dev-shm-usage", "--window-size=1280,800"],
                "prefs": {
                    "download.default_directory": downloads.path(),
                    "download.prompt_for_download": false,
                },
            }),
        );
        let connector = hyper_util::client::legacy::connect::HttpConnector::new();
        let url = format!("http://127.0.0.1:{port}");
        let deadline = Instant::now() + Duration::from_secs(60);
        let client = loop {
            match ClientBuilder::new(connector.clone())
                .capabilities(capabilities.clone())
                .connect(&url)
                .await
            {
                Ok(client) => break client,
                Err(error) => {
                    assert!(
                        Instant::now() < deadline,
                        "chromedriver gave no session in 60 s: {error}"
                    );
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
            }
        };
        Browser {
            client,
            driver,
            downloads,
        }
    }

    async fn open(&self, url: &str) {
        self.client.goto(url).await.unwrap();
    }

    async fn js(&self, script: &str) -> Value {
        self.client.execute(script, Vec::new()).await.unwrap()
    }

    /// Waits until `script` returns something truthy; that value.
    async fn until(&self, what: &str, script: &str, timeout: Duration) -> Value {
        let deadline = Instant::now() + timeout;
        loop {
            let value = self.js(script).await;
            let truthy = !matches!(&value, Value::Null | Value::Bool(false))
                && value != json!("")
                && value != json!(0);
            if truthy {
                return value;
            }
            if Instant::now() > deadline {
                let shown = self.js("return document.body.innerText").await;
                panic!("{what}: not within {timeout:?}; the page shows:\n{shown}");
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    async fn find(&self, css: &str) -> fantoccini::elements::Element {
        self.client
            .wait()
            .at_most(Duration::from_secs(30))
            .for_element(Locator::Css(css))
            .await
            .unwrap_or_else(|error| panic!("no {css} on the page: {error}"))
    }

    async fn click(&self, css: &str) {
        self.find(css).await.click().await.unwrap();
    }

    async fn type_into(&self, css: &str, text: &str) {
        let field = self.find(css).await;
        field.clear().await.unwrap();
        field.send_keys(text).await.unwrap();
    }

    async fn text(&self, css: &str) -> String {
        self.find(css).await.text().await.unwrap()
    }

    /// Fails the test on any error the page met since it loaded.
    async fn assert_no_errors(&self, page: &str) {
        let errors = self.js("return window.plumbErrors").await;
        assert_eq!(errors, json!([]), "the {page} page met errors");
    }

    async fn sign_in(&self, base: &str, token: &str) {
        self.open(&format!("{base}/")).await;
        self.type_into("form[data-test=sign-in] input[name=token]", token)
            .await;
        self.click("form[data-test=sign-in] button[type=submit]")
            .await;
        self.until(
            "signed in",
            "return document.querySelector('[data-test=tenant]')?.textContent",
            Duration::from_secs(30),
        )
        .await;
    }

    async fn sign_out(&self) {
        self.click("[data-action=sign-out]").await;
        self.find("form[data-test=sign-in]").await;
    }

    /// Opens the task page of `id`.
    async fn task_page(&self, base: &str, id: &str) {
        self.open(&format!("{base}/#/tasks/{id}")).await;
        self.find("[data-test=task-state]").await;
    }

    async fn wait_for_state(&self, states: &[&str]) -> String {
        let script = format!(
            "const s = document.querySelector('[data-test=task-state]')?.textContent; \
             return {states:?}.includes(s) ? s : null"
        );
        let value = self.until("the task's state", &script, RUN_TIMEOUT).await;
        value.as_str().unwrap().to_owned()
    }

    /// The reason a disabled decision button gives, or `None` when it is usable.
    async fn disabled_reason(&self, action: &str) -> Option<String> {
        let script = format!(
            "const b = document.querySelector('[data-action={action}]'); \
             return b.getAttribute('aria-disabled') === 'true' ? b.title : null"
        );
        self.js(&script).await.as_str().map(str::to_owned)
    }

    async fn screenshot(&self, name: &str) {
        let png = self.client.screenshot().await.unwrap();
        let folder = Path::new(env!("CARGO_TARGET_TMPDIR")).join("screenshots");
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(folder.join(format!("{name}.png")), &png).unwrap();
        if std::env::var_os("PLUMB_UPDATE_SCREENSHOTS").is_some() {
            let docs = workspace().join("docs").join("screenshots");
            std::fs::create_dir_all(&docs).unwrap();
            std::fs::write(docs.join(format!("{name}.png")), &png).unwrap();
        }
    }

    /// The file `name` once the browser has finished writing it.
    async fn downloaded(&self, name: &str) -> Vec<u8> {
        let path = self.downloads.path().join(name);
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let partial = std::fs::read_dir(self.downloads.path())
                .unwrap()
                .flatten()
                .any(|entry| entry.file_name().to_string_lossy().ends_with(".crdownload"));
            if path.exists() && !partial {
                return std::fs::read(&path).unwrap();
            }
            assert!(Instant::now() < deadline, "{name} was not downloaded");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    async fn close(mut self) {
        let _ = self.client.clone().close().await;
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        // A test that failed mid-way still leaves no chromedriver behind.
        let _ = self.driver.kill();
    }
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

async fn api(method: reqwest::Method, url: &str, token: &str) -> (u16, Value) {
    call(method, url, token, None).await
}

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
                "return document.querySelector('[data-test=stream]').textContent === 'live'",
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
