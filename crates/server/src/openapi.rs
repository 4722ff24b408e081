//! The API's OpenAPI 3.1 document, generated from the handlers' annotations and the bodies'
//! types; served at `/api/openapi.json` and committed as `docs/openapi.json`, which a test keeps
//! equal to it so every change to the API shows in review.

use utoipa::openapi::security::{Http, HttpAuthScheme, SecurityScheme};
use utoipa::{Modify, OpenApi};

use crate::{artefacts, error, events, settings, spec, tasks, tenant, views};

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
        views::UploadView,
        views::ApproveBody,
        views::StateName,
        tenant::TenantView,
        tenant::KeyBody,
        tenant::ProviderName,
    )),
    modifiers(&BearerToken)
)]
pub struct ApiDoc;

/// The document as pretty JSON, with a newline at the end (as the committed copy is).
pub fn document() -> String {
    let mut json = ApiDoc::openapi()
        .to_pretty_json()
        .unwrap_or_else(|error| format!("{{\"error\": \"{error}\"}}"));
    json.push('\n');
    json
}
