//! The API's OpenAPI 3.1 document, generated from the handlers' annotations and the bodies'
//! types; served at `/api/openapi.json` and committed as `docs/openapi.json`, which a test keeps
//! equal to it so every change to the API shows in review.

use utoipa::openapi::security::{Http, HttpAuthScheme, SecurityScheme};
use utoipa::{Modify, OpenApi};

use crate::{artefacts, error, evals, events, settings, spec, tasks, tenant, views};

/// The bearer-token scheme every endpoint but the capabilities and this document uses.
struct BearerToken;

impl Modify for BearerToken {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(Http::new(HttpAuthScheme::Bearer)),
        );
    }
}

#[derive(OpenApi)]
#[openapi(
    info(
        title = "plumb",
        description = "plumb's service: coding tasks run by workers on a job queue, verified by \
                       the check ladder, held for a person's approval of the diff's SHA-256.",
        license(name = "Apache-2.0", identifier = "Apache-2.0")
    ),
    paths(
        crate::capabilities,
        tasks::create_task,
        tasks::list_tasks,
        tasks::get_task,
        events::events,
        artefacts::diff,
        artefacts::patch,
        artefacts::bundle,
        artefacts::report,
        tasks::approve,
        tasks::reject,
        tasks::cancel,
        tasks::rollback,
        artefacts::upload,
        tenant::get_tenant,
        tenant::put_key,
        tenant::delete_key,
        evals::list_evals,
        evals::eval_report,
    ),
    components(schemas(
        error::ErrorBody,
        settings::Capabilities,
        spec::TaskRequest,
        spec::RepoSource,
        views::TaskView,
        views::TaskList,
        views::DiffView,
        views::EventView,
        views::EventFrame,
        views::UploadView,
        views::ApproveBody,
        views::StateName,
        tenant::TenantView,
        tenant::KeyBody,
        tenant::ProviderName,
        evals::EvalView,
        evals::EvalList,
    )),
    modifiers(&BearerToken)
)]
pub struct ApiDoc;

/// The document as pretty JSON, with a newline at the end (as the committed copy is).
pub fn document() -> String {
    let mut document = serde_json::to_value(ApiDoc::openapi())
        .unwrap_or_else(|error| serde_json::json!({ "error": error.to_string() }));
    add_task_links(&mut document);
    let mut json = serde_json::to_string_pretty(&document)
        .unwrap_or_else(|error| format!("{{\"error\": \"{error}\"}}"));
    json.push('\n');
    json
}

/// Links from a created task (`POST /api/tasks`, 201) to every operation on a task, its `id` from
/// the response, and from the list of evals to an eval's report, so a client generator — and the
/// fuzz run's stateful phase — can follow a real task or eval. Written into the JSON here: utoipa's `Link` names its fields in snake case, which the
/// OpenAPI schema does not know (`operationId`).
fn add_task_links(document: &mut serde_json::Value) {
    let mut links = serde_json::Map::new();
    if let Some(paths) = document["paths"].as_object() {
        for (path, item) in paths {
            if !path.starts_with("/api/tasks/{id}") {
                continue;
            }
            for operation in item.as_object().into_iter().flat_map(|item| item.values()) {
                if let Some(id) = operation["operationId"].as_str() {
                    let link = serde_json::json!({
                        "operationId": id,
                        "parameters": { "id": "$response.body#/id" },
                    });
                    links.insert(id.to_owned(), link);
                }
            }
        }
    }
    if let Some(created) = document
        .pointer_mut("/paths/~1api~1tasks/post/responses/201")
        .and_then(serde_json::Value::as_object_mut)
    {
        created.insert("links".to_owned(), serde_json::Value::Object(links));
    }
    // The newest eval's report, from the list of evals.
    if let Some(listed) = document
        .pointer_mut("/paths/~1api~1evals/get/responses/200")
        .and_then(serde_json::Value::as_object_mut)
    {
        let link = serde_json::json!({
            "eval_report": {
                "operationId": "eval_report",
                "parameters": { "id": "$response.body#/evals/0/id" },
            }
        });
        listed.insert("links".to_owned(), link);
    }
}
