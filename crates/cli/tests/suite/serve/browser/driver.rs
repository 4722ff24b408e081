//! The browser the web page's tests drive: a `chromedriver` process and one headless Chromium
//! session on it (fantoccini over WebDriver), with the waits, clicks and reads the tests share, and
//! screenshots into `target/tmp/screenshots/` (`PLUMB_UPDATE_SCREENSHOTS=1`: also
//! `docs/screenshots/`).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{Value, json};

use super::super::{call, free_port};

const CHROMIUM: &str = "/usr/bin/chromium";
/// Long enough for a BILL-412 run in the sandbox on a loaded two-core machine.
pub(super) const RUN_TIMEOUT: Duration = Duration::from_secs(300);

/// A `chromedriver` process and one browser session on it, downloads going to a folder of its own.
pub(super) struct Browser {
    pub client: Client,
    driver: Child,
    downloads: tempfile::TempDir,
}

impl Browser {
    pub async fn start() -> Browser {
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

    pub async fn open(&self, url: &str) {
        self.client.goto(url).await.unwrap();
    }

    pub async fn js(&self, script: &str) -> Value {
        self.client.execute(script, Vec::new()).await.unwrap()
    }

    /// Waits until `script` returns something truthy; that value.
    pub async fn until(&self, what: &str, script: &str, timeout: Duration) -> Value {
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

    pub async fn find(&self, css: &str) -> fantoccini::elements::Element {
        self.client
            .wait()
            .at_most(Duration::from_secs(30))
            .for_element(Locator::Css(css))
            .await
            .unwrap_or_else(|error| panic!("no {css} on the page: {error}"))
    }

    pub async fn click(&self, css: &str) {
        self.find(css).await.click().await.unwrap();
    }

    pub async fn type_into(&self, css: &str, text: &str) {
        let field = self.find(css).await;
        field.clear().await.unwrap();
        field.send_keys(text).await.unwrap();
    }

    pub async fn text(&self, css: &str) -> String {
        self.find(css).await.text().await.unwrap()
    }

    /// Fails the test on any error the page met since it loaded.
    pub async fn assert_no_errors(&self, page: &str) {
        let errors = self.js("return window.plumbErrors").await;
        assert_eq!(errors, json!([]), "the {page} page met errors");
    }

    pub async fn sign_in(&self, base: &str, token: &str) {
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

    pub async fn sign_out(&self) {
        self.click("[data-action=sign-out]").await;
        self.find("form[data-test=sign-in]").await;
    }

    /// Opens the task page of `id`.
    pub async fn task_page(&self, base: &str, id: &str) {
        self.open(&format!("{base}/#/tasks/{id}")).await;
        self.find("[data-test=task-state]").await;
    }

    pub async fn wait_for_state(&self, states: &[&str]) -> String {
        let script = format!(
            "const s = document.querySelector('[data-test=task-state]')?.textContent; \
             return {states:?}.includes(s) ? s : null"
        );
        let value = self.until("the task's state", &script, RUN_TIMEOUT).await;
        value.as_str().unwrap().to_owned()
    }

    /// The reason a disabled decision button gives, or `None` when it is usable.
    pub async fn disabled_reason(&self, action: &str) -> Option<String> {
        let script = format!(
            "const b = document.querySelector('[data-action={action}]'); \
             return b.getAttribute('aria-disabled') === 'true' ? b.title : null"
        );
        self.js(&script).await.as_str().map(str::to_owned)
    }

    pub async fn screenshot(&self, name: &str) {
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
    pub async fn downloaded(&self, name: &str) -> Vec<u8> {
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

    pub async fn close(mut self) {
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

pub(super) async fn api(method: reqwest::Method, url: &str, token: &str) -> (u16, Value) {
    call(method, url, token, None).await
}
