//! The event stream: every event once and in order, across a dropped connection resumed with
//! `Last-Event-ID`, live while the task runs and ended once the task is final.

use futures_util::StreamExt as _;
use serde_json::json;

use super::harness::{Server, assert_error, start};

/// One server-sent event: its id and its data.
#[derive(Debug)]
struct Sse {
    id: i64,
    kind: String,
    data: serde_json::Value,
}

/// Reads events from `path` until `stop` of them arrived or the stream ended; `last` is sent as
/// `Last-Event-ID`.
async fn read(
    server: &Server,
    token: &str,
    id: &str,
    last: Option<i64>,
    stop: usize,
) -> (Vec<Sse>, bool) {
    let mut request = server
        .client
        .get(server.url(&format!("/api/tasks/{id}/events")))
        .bearer_auth(token);
    if let Some(last) = last {
        request = request.header("Last-Event-ID", last.to_string());
    }
    let response = request.send().await.unwrap();
    assert_eq!(response.status().as_u16(), 200);
    assert!(
        response.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/event-stream")
    );
    let mut body = response.bytes_stream();
    let mut text = String::new();
    let mut events = Vec::new();
    loop {
        while let Some(end) = text.find("\n\n") {
            let block: String = text.drain(..end + 2).collect();
            let mut event = Sse {
                id: -1,
                kind: String::new(),
                data: json!(null),
            };
            for line in block.lines() {
                if let Some(id) = line.strip_prefix("id: ") {
                    event.id = id.parse().unwrap();
                } else if let Some(kind) = line.strip_prefix("event: ") {
                    event.kind = kind.to_owned();
                } else if let Some(data) = line.strip_prefix("data: ") {
                    event.data = serde_json::from_str(data).unwrap();
                }
            }
            if event.id >= 0 {
                events.push(event);
            }
            if events.len() == stop {
                // Dropping the body drops the connection mid-stream.
                return (events, false);
            }
        }
        let next = tokio::time::timeout(std::time::Duration::from_secs(20), body.next())
            .await
            .expect("an event within 20 s");
        match next {
            Some(chunk) => text.push_str(&String::from_utf8_lossy(&chunk.unwrap())),
            None => return (events, true),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_stream_resumed_with_last_event_id_gets_every_event_once_in_order() {
    let server = start(false).await;
    let token = server.token("acme").await;
    let id = server.create(&token, "BILL-412").await;

    // A live stream sees the run as it goes: the first events arrive while the task runs.
    let claim = server.claim(&id).await;
    server
        .store
        .advance(&claim, plumb_store::TaskState::Running)
        .await
        .unwrap();
    let (first, ended) = read(&server, &token, &id, None, 3).await;
    assert!(!ended);
    let kinds: Vec<&str> = first.iter().map(|event| event.kind.as_str()).collect();
    assert_eq!(
        kinds,
        ["state", "state", "state"],
        "queued, preparing, running"
    );
    assert_eq!(first[2].data["body"]["state"], "running");

    let writer = {
        let store = server.store.clone();
        tokio::spawn(async move {
            for round in 0..40 {
                let body = json!({"type": "tool_call", "round": round});
                store
                    .append_event(&claim, "tool_call", &body)
                    .await
                    .unwrap();
                if round % 10 == 0 {
                    tokio::time::sleep(std::time::Duration::from_millis(30)).await;
                }
            }
            claim
        })
    };
    // Dropped after 10 more, resumed from the last one received, while the writer goes on.
    let (second, _) = read(&server, &token, &id, Some(first[2].id), 10).await;
    let claim = writer.await.unwrap();
    server
        .store
        .finish(
            &claim,
            &plumb_store::AttemptEnd {
                state: plumb_store::TaskState::Failed,
                outcome: "budget_exhausted".to_owned(),
                reason: Some("out of rounds".to_owned()),
                diff_sha256: None,
            },
        )
        .await
        .unwrap();
    let (third, ended) = read(
        &server,
        &token,
        &id,
        Some(second.last().unwrap().id),
        usize::MAX,
    )
    .await;
    assert!(ended, "the stream of a final task ends");

    let seqs: Vec<i64> = first
        .iter()
        .chain(&second)
        .chain(&third)
        .map(|event| event.id)
        .collect();
    let stored = server.store.events("acme", &id, 0, 1000).await.unwrap();
    let expected: Vec<i64> = (1..=i64::try_from(stored.len()).unwrap()).collect();
    assert_eq!(seqs, expected, "every event once, in order");
    let rounds: Vec<i64> = first
        .iter()
        .chain(&second)
        .chain(&third)
        .filter(|event| event.kind == "tool_call")
        .map(|event| event.data["body"]["round"].as_i64().unwrap())
        .collect();
    assert_eq!(rounds, (0..40).collect::<Vec<_>>());
    assert_eq!(third.last().unwrap().data["body"]["state"], "failed");

    // A replay after the end is the same stream again.
    let (replay, ended) = read(&server, &token, &id, None, usize::MAX).await;
    assert!(ended);
    assert_eq!(replay.len(), seqs.len());
}

#[tokio::test]
async fn a_bad_last_event_id_is_a_400() {
    let server = start(false).await;
    let token = server.token("acme").await;
    let id = server.create(&token, "BILL-412").await;
    let response = server
        .client
        .get(server.url(&format!("/api/tasks/{id}/events")))
        .bearer_auth(&token)
        .header("Last-Event-ID", "yesterday")
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let body: serde_json::Value = response.json().await.unwrap();
    assert_error(&(status, body), 400, "bad_request", "Last-Event-ID");
}
