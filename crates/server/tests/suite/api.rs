//! The API's answers: tokens and tenants, task requests checked field by field, the life of a
//! task through a person's decisions, and errors as `{error, message}` with the status their type
//! calls for.

use serde_json::json;

use super::harness::{assert_error, start};

const PATCH: &str = "diff --git a/billing.py b/billing.py\n--- a/billing.py\n+++ b/billing.py\n\
@@ -1,2 +1,2 @@\n def total(items):\n-    return sum(items)\n+    return round(sum(items), 2)\n";

#[tokio::test]
async fn capabilities_are_open_and_everything_else_needs_a_live_token() {
    let server = start(false).await;
    let (status, body) = server.get("", "/api/capabilities").await;
    assert_eq!(status, 200);
    assert_eq!(body["default_model"], "local");
    assert_eq!(body["intake"]["server_paths"], false);
    assert_eq!(body["limits"]["max_rounds"], 12);

    assert_error(
        &server.get("", "/api/tasks").await,
        401,
        "unauthorized",
        "plumb token create",
    );
    let forged = "plumb_0000000000000000000000000000000000000000000000000000000000000000";
    assert_error(
        &server.get(forged, "/api/tasks").await,
        401,
        "unauthorized",
        "Bearer",
    );

    let token = server.token("acme").await;
    assert_eq!(server.get(&token, "/api/tasks").await.0, 200);
    let listed = server.store.list_tokens().await.unwrap();
    server.store.revoke_token(&listed[0].id).await.unwrap();
    assert_error(
        &server.get(&token, "/api/tasks").await,
        401,
        "unauthorized",
        "Bearer",
    );
}

#[tokio::test]
async fn a_task_request_is_checked_field_by_field() {
    let server = start(false).await;
    let token = server.token("acme").await;
    let git = json!({"kind": "git", "url": "https://example.com/r.git"});
    // Each refusal says what to change, and names the field a form shows it beside (none for a
    // body that is not a task request at all).
    let cases = [
        (
            json!({"repo": git, "ticket": "  "}),
            "ticket is empty",
            Some("ticket"),
        ),
        (
            json!({"repo": git, "ticket": "x".repeat(5000)}),
            "at most 4096",
            Some("ticket"),
        ),
        (
            json!({"repo": git, "ticket": "t", "model": "script:/etc/passwd"}),
            "not one this server offers",
            Some("model"),
        ),
        (
            json!({"repo": git, "ticket": "t", "max_rounds": 0}),
            "max_rounds is 0",
            Some("max_rounds"),
        ),
        (
            json!({"repo": git, "ticket": "t", "max_usd": -1.5}),
            "max_usd must be a number of dollars above 0",
            Some("max_usd"),
        ),
        (
            json!({"repo": git, "ticket": "t", "max_usd": 0}),
            "max_usd must be a number of dollars above 0",
            Some("max_usd"),
        ),
        (
            json!({"repo": {"kind": "git", "url": "http://example.com/r.git"}, "ticket": "t"}),
            "https",
            Some("repo.url"),
        ),
        (
            json!({"repo": {"kind": "git", "url": "https://e.com/r.git", "rev": "--upload-pack=x"}, "ticket": "t"}),
            "repo.rev",
            Some("repo.rev"),
        ),
        (
            json!({"repo": {"kind": "path", "path": "/tmp"}, "ticket": "t"}),
            "--allow-server-paths",
            Some("repo.kind"),
        ),
        (
            json!({"repo": {"kind": "upload", "id": "u123"}, "ticket": "t"}),
            "repo.id",
            Some("repo.id"),
        ),
        (
            json!({"repo": {"kind": "ftp"}, "ticket": "t"}),
            "unknown variant",
            None,
        ),
        (
            json!({"repo": git, "ticket": "t", "sandbox": "none"}),
            "unknown field",
            None,
        ),
        (json!({"ticket": "t"}), "missing field `repo`", None),
    ];
    for (body, says, field) in cases {
        let answer = server.post(&token, "/api/tasks", &body).await;
        assert_error(&answer, 400, "bad_request", says);
        assert_eq!(
            answer.1.get("field").and_then(|f| f.as_str()),
            field,
            "{says}"
        );
    }
    let not_json = server
        .client
        .post(server.url("/api/tasks"))
        .bearer_auth(&token)
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(not_json.status().as_u16(), 415);
    let (_, page) = server.get(&token, "/api/tasks").await;
    assert_eq!(page["tasks"], json!([]), "a refused request leaves no task");
    // A budget the request gives is kept with it.
    let (status, task) = server
        .post(
            &token,
            "/api/tasks",
            &json!({"repo": git, "ticket": "t", "max_usd": 0.25}),
        )
        .await;
    assert_eq!(status, 201, "{task}");
    assert_eq!(task["request"]["max_usd"], 0.25);
    assert!(task["rounds"].is_null() && task["cost_usd"].is_null());
}

#[tokio::test]
async fn a_task_is_queued_with_its_limits_clamped_and_listed_by_page_and_state() {
    let server = start(false).await;
    let token = server.token("acme").await;
    let body = json!({
        "repo": {"kind": "git", "url": "https://example.com/acme/billing.git"},
        "ticket": "# BILL-412\nTotals are off by a cent",
        "max_rounds": 99,
    });
    let (status, task) = server.post(&token, "/api/tasks", &body).await;
    assert_eq!(status, 201, "{task}");
    assert_eq!(task["state"], "queued");
    assert_eq!(task["title"], "BILL-412");
    assert_eq!(
        task["request"]["max_rounds"], 12,
        "clamped to the server's limit"
    );
    assert_eq!(task["request"]["model"], "local", "the default model named");
    let id = task["id"].as_str().unwrap();
    assert_eq!(
        server.get(&token, &format!("/api/tasks/{id}")).await.1,
        task
    );

    for n in 0..4 {
        server.create(&token, &format!("ticket {n}")).await;
    }
    let (_, first) = server.get(&token, "/api/tasks?limit=3").await;
    assert_eq!(first["tasks"].as_array().unwrap().len(), 3);
    let next = first["next"].as_str().unwrap();
    let (_, second) = server
        .get(&token, &format!("/api/tasks?limit=3&before={next}"))
        .await;
    assert_eq!(second["tasks"].as_array().unwrap().len(), 2);
    assert_eq!(second["next"], serde_json::Value::Null);
    let titles: Vec<&str> = [&first, &second]
        .iter()
        .flat_map(|page| page["tasks"].as_array().unwrap())
        .map(|task| task["title"].as_str().unwrap())
        .collect();
    assert_eq!(
        titles,
        ["ticket 3", "ticket 2", "ticket 1", "ticket 0", "BILL-412"]
    );

    server.store.request_cancel("acme", id).await.unwrap();
    let (_, cancelled) = server.get(&token, "/api/tasks?state=cancelled").await;
    assert_eq!(cancelled["tasks"].as_array().unwrap().len(), 1);
    assert_error(
        &server.get(&token, "/api/tasks?state=done").await,
        400,
        "bad_request",
        "state",
    );
    assert_error(
        &server.get(&token, "/api/tasks?limit=9999").await,
        400,
        "bad_request",
        "1-500",
    );
    assert_error(
        &server.get(&token, "/api/tasks?before=x").await,
        400,
        "bad_request",
        "cursor",
    );
}

#[tokio::test]
async fn approval_is_bound_to_the_diff_s_sha256_and_decisions_follow_the_state() {
    let server = start(false).await;
    let token = server.token("acme").await;
    let id = server.create(&token, "BILL-412").await;
    assert_error(
        &server.get(&token, &format!("/api/tasks/{id}/diff")).await,
        409,
        "wrong_state",
        "queued",
    );
    let sha = server.run_to_approval(&id, 3, PATCH).await;

    let (status, diff) = server.get(&token, &format!("/api/tasks/{id}/diff")).await;
    assert_eq!(status, 200, "{diff}");
    assert_eq!(diff["sha256"], sha);
    assert_eq!(diff["patch"], PATCH);
    assert_eq!(
        diff["files"],
        json!([{"path": "billing.py", "added": 1, "removed": 1}])
    );
    let download = server
        .client
        .get(server.url(&format!("/api/tasks/{id}/patch")))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert_eq!(download.headers()["x-plumb-sha256"], sha.as_str());
    assert!(
        download.headers()["content-disposition"]
            .to_str()
            .unwrap()
            .contains(".patch")
    );
    assert_eq!(download.bytes().await.unwrap(), PATCH.as_bytes());

    let approve = format!("/api/tasks/{id}/approve");
    let stale = "0".repeat(64);
    assert_error(
        &server
            .post(&token, &approve, &json!({"sha256": stale}))
            .await,
        409,
        "sha_mismatch",
        &sha,
    );
    assert_error(
        &server
            .post(&token, &approve, &json!({"sha256": "abc"}))
            .await,
        400,
        "bad_request",
        "64 hex",
    );
    let (_, still) = server.get(&token, &format!("/api/tasks/{id}")).await;
    assert_eq!(
        still["state"], "awaiting_approval",
        "a refused approval changes nothing"
    );

    let (status, approved) = server.post(&token, &approve, &json!({"sha256": sha})).await;
    assert_eq!(
        (status, approved["state"].as_str()),
        (200, Some("approved"))
    );
    assert_error(
        &server.post(&token, &approve, &json!({"sha256": sha})).await,
        409,
        "wrong_state",
        "approved",
    );
    assert_error(
        &server
            .post(&token, &format!("/api/tasks/{id}/reject"), &json!({}))
            .await,
        409,
        "wrong_state",
        "rejected",
    );
    let (status, rolled) = server
        .post(&token, &format!("/api/tasks/{id}/rollback"), &json!({}))
        .await;
    assert_eq!(
        (status, rolled["state"].as_str()),
        (200, Some("rolled_back"))
    );
    assert_error(
        &server
            .post(&token, &format!("/api/tasks/{id}/cancel"), &json!({}))
            .await,
        409,
        "wrong_state",
        "rolled_back",
    );
}

#[tokio::test]
async fn a_running_task_is_asked_to_cancel_and_a_queued_one_is_cancelled_at_once() {
    let server = start(false).await;
    let token = server.token("acme").await;
    let queued = server.create(&token, "queued").await;
    let (_, task) = server
        .post(&token, &format!("/api/tasks/{queued}/cancel"), &json!({}))
        .await;
    assert_eq!(task["state"], "cancelled");

    let running = server.create(&token, "running").await;
    let claim = server.claim(&running).await;
    let (_, task) = server
        .post(&token, &format!("/api/tasks/{running}/cancel"), &json!({}))
        .await;
    assert_eq!(
        (task["state"].as_str(), task["cancel_requested"].as_bool()),
        (Some("preparing"), Some(true))
    );
    let signals = server.store.heartbeat(&claim).await.unwrap();
    assert!(
        signals.cancel_requested,
        "the worker hears of it with its next heartbeat"
    );
}

#[tokio::test]
async fn another_tenant_s_task_is_unknown_to_every_endpoint() {
    let server = start(false).await;
    let acme = server.token("acme").await;
    let globex = server.token("globex").await;
    let id = server.create(&acme, "mine").await;
    let sha = server.run_to_approval(&id, 1, PATCH).await;
    for path in ["", "/diff", "/patch", "/report", "/events"] {
        let answer = server.get(&globex, &format!("/api/tasks/{id}{path}")).await;
        assert_error(&answer, 404, "not_found", &id);
    }
    for (action, body) in [
        ("approve", json!({"sha256": sha})),
        ("reject", json!({})),
        ("cancel", json!({})),
        ("rollback", json!({})),
    ] {
        let answer = server
            .post(&globex, &format!("/api/tasks/{id}/{action}"), &body)
            .await;
        assert_error(&answer, 404, "not_found", &id);
    }
    let (_, theirs) = server.get(&globex, "/api/tasks").await;
    assert_eq!(theirs["tasks"], json!([]));
    let (_, mine) = server.get(&acme, &format!("/api/tasks/{id}")).await;
    assert_eq!(
        mine["state"], "awaiting_approval",
        "nothing another tenant sent changed it"
    );
}

#[tokio::test]
async fn an_upload_must_be_an_archive_under_the_cap_and_is_the_uploader_s_only() {
    let server = start(false).await;
    let acme = server.token("acme").await;
    let globex = server.token("globex").await;
    let send = |token: &str, body: Vec<u8>| {
        server
            .client
            .post(server.url("/api/uploads"))
            .bearer_auth(token)
            .header("content-type", "application/zip")
            .body(body)
            .send()
    };
    let not_archive = send(&acme, b"hello".to_vec()).await.unwrap();
    assert_eq!(not_archive.status().as_u16(), 400);
    let too_big = send(
        &acme,
        [b"PK\x03\x04".as_slice(), &vec![0; 70 * 1024]].concat(),
    )
    .await
    .unwrap();
    assert_eq!(too_big.status().as_u16(), 413);
    let body: serde_json::Value = too_big.json().await.unwrap();
    assert_eq!(body["error"], "too_large");

    // Checked by unpacking under the worker's caps: a link is refused by its entry's name.
    let linked = send(
        &acme,
        tar_gz(&[
            ("repo/README.md", None),
            ("repo/passwd", Some("/etc/passwd")),
        ]),
    )
    .await
    .unwrap();
    assert_eq!(linked.status().as_u16(), 400);
    let body: serde_json::Value = linked.json().await.unwrap();
    assert!(
        body["message"].as_str().unwrap().contains("repo/passwd"),
        "{body}"
    );

    let archive = tar_gz(&[("repo/README.md", None)]);
    let size = archive.len();
    let kept = send(&acme, archive).await.unwrap();
    assert_eq!(kept.status().as_u16(), 201);
    let upload: serde_json::Value = kept.json().await.unwrap();
    assert_eq!(upload["size"], size);
    let repo = json!({"kind": "upload", "id": upload["id"]});
    let (status, _) = server
        .post(&acme, "/api/tasks", &json!({"repo": repo, "ticket": "t"}))
        .await;
    assert_eq!(status, 201);
    let theirs = server
        .post(&globex, "/api/tasks", &json!({"repo": repo, "ticket": "t"}))
        .await;
    assert_error(&theirs, 400, "bad_request", "not one of your uploads");
}

#[tokio::test]
async fn a_server_path_is_taken_only_where_the_operator_allowed_it() {
    let server = start(true).await;
    let token = server.token("acme").await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().display().to_string();
    let (status, task) = server
        .post(
            &token,
            "/api/tasks",
            &json!({"repo": {"kind": "path", "path": path}, "ticket": "t"}),
        )
        .await;
    assert_eq!(status, 201, "{task}");
    let relative = json!({"repo": {"kind": "path", "path": "repo"}, "ticket": "t"});
    assert_error(
        &server.post(&token, "/api/tasks", &relative).await,
        400,
        "bad_request",
        "absolute path",
    );
}

#[tokio::test]
async fn unknown_endpoints_and_methods_answer_json_errors() {
    let server = start(false).await;
    let token = server.token("acme").await;
    assert_error(
        &server.get(&token, "/api/nothing").await,
        404,
        "not_found",
        "openapi.json",
    );
    let answer = server
        .client
        .delete(server.url("/api/tasks"))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status().as_u16(), 405);
    let body: serde_json::Value = answer.json().await.unwrap();
    assert_eq!(body["error"], "method_not_allowed");
}

/// A tar.gz of `entries`: a small file, or a symbolic link to the target given.
fn tar_gz(entries: &[(&str, Option<&str>)]) -> Vec<u8> {
    let encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    let mut builder = tar::Builder::new(encoder);
    for (path, link) in entries {
        let mut header = tar::Header::new_gnu();
        header.set_mode(0o644);
        match link {
            None => {
                let content = b"# a project\n";
                header.set_size(content.len() as u64);
                builder
                    .append_data(&mut header, path, &content[..])
                    .unwrap();
            }
            Some(target) => {
                header.set_entry_type(tar::EntryType::Symlink);
                header.set_size(0);
                builder.append_link(&mut header, path, target).unwrap();
            }
        }
    }
    builder.into_inner().unwrap().finish().unwrap()
}
