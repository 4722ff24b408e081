//! Candidates sampled ahead: the first `sample_again` of a request asks the runner for several
//! replies in one batch (they share the prompt's cache and cost little more than one on a CPU),
//! returns the first and keeps the rest here for the attempts that follow. A queue answers only
//! the request it was sampled for, the same prompt and grammar, and the next attempt in order;
//! any other request drops it.

use std::collections::VecDeque;

use plumb_protocol::ModelReply;

/// Replies sampled for one request and not yet handed out.
pub(crate) struct Queued {
    prompt: String,
    schema: Option<String>,
    /// The attempt the front reply answers.
    next_attempt: u32,
    replies: VecDeque<ModelReply>,
}

impl Queued {
    pub(crate) fn new(
        prompt: String,
        schema: Option<String>,
        next_attempt: u32,
        replies: VecDeque<ModelReply>,
    ) -> Option<Self> {
        (!replies.is_empty()).then_some(Self {
            prompt,
            schema,
            next_attempt,
            replies,
        })
    }
}

/// The queued reply for `attempt` of the request with this prompt and schema, when there is one;
/// the queue is dropped when it answers another request or runs out.
pub(crate) fn take(
    queue: &mut Option<Queued>,
    prompt: &str,
    schema: Option<&str>,
    attempt: u32,
) -> Option<ModelReply> {
    let matches = queue.as_ref().is_some_and(|queued| {
        queued.prompt == prompt
            && queued.schema.as_deref() == schema
            && queued.next_attempt == attempt
    });
    if !matches {
        *queue = None;
        return None;
    }
    let queued = queue.as_mut()?;
    let reply = queued.replies.pop_front();
    queued.next_attempt += 1;
    if queued.replies.is_empty() {
        *queue = None;
    }
    reply
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn reply(content: &str) -> ModelReply {
        ModelReply {
            content: content.to_string(),
            ..ModelReply::default()
        }
    }

    fn queue() -> Option<Queued> {
        Queued::new(
            "p".into(),
            Some("s".into()),
            2,
            VecDeque::from([reply("b"), reply("c")]),
        )
    }

    #[test]
    fn replies_come_in_attempt_order_for_the_same_request_only() {
        let mut q = queue();
        let contents = |r: Option<ModelReply>| r.map(|r| r.content);
        assert_eq!(contents(take(&mut q, "p", Some("s"), 2)), Some("b".into()));
        assert_eq!(contents(take(&mut q, "p", Some("s"), 3)), Some("c".into()));
        assert!(q.is_none(), "an emptied queue is dropped");

        let mut q = queue();
        assert_eq!(contents(take(&mut q, "other", Some("s"), 2)), None);
        assert!(q.is_none(), "another request drops the queue");

        let mut q = queue();
        assert_eq!(contents(take(&mut q, "p", None, 2)), None);
        let mut q = queue();
        assert_eq!(
            contents(take(&mut q, "p", Some("s"), 3)),
            None,
            "out of order"
        );
        assert!(q.is_none());
    }

    #[test]
    fn an_empty_batch_queues_nothing() {
        assert!(Queued::new("p".into(), None, 1, VecDeque::new()).is_none());
    }
}
