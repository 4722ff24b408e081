//! The web page at `/`: its files (`web/src/`, and the libraries vendored from npm in
//! `web/vendor/`) are compiled into the binary, so the page works offline and cannot drift from
//! the server it talks to. Each answer carries an ETag (a `304` when the browser has it), is sent
//! gzipped when the browser takes it, and comes with a Content-Security-Policy that lets the page
//! run only its own files: no inline script but the import map, whose hash the policy names, no
//! other origin, no framing.

use std::sync::OnceLock;

use axum::Router;
use axum::body::Bytes;
use axum::extract::Path;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use base64::Engine;
use sha2::{Digest, Sha256};

/// One file of the page.
struct Asset {
    /// Its path under `/assets/` (the page's own files) or `/assets/vendor/`.
    path: &'static str,
    bytes: &'static [u8],
    content_type: &'static str,
}

macro_rules! asset {
    (src $name:literal, $type:expr) => {
        Asset {
            path: $name,
            bytes: include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/web/src/", $name)),
            content_type: $type,
        }
    };
    (vendor $name:literal, $type:expr) => {
        Asset {
            path: concat!("vendor/", $name),
            bytes: include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/web/vendor/", $name)),
            content_type: $type,
        }
    };
}

const JS: &str = "text/javascript; charset=utf-8";
const CSS: &str = "text/css; charset=utf-8";

/// Every file the page loads. `index.html` is served at `/`.
static ASSETS: &[Asset] = &[
    asset!(src "index.html", "text/html; charset=utf-8"),
    asset!(src "favicon.svg", "image/svg+xml"),
    asset!(src "style.css", CSS),
    asset!(src "errors.js", JS),
    asset!(src "app.js", JS),
    asset!(src "api.js", JS),
    asset!(src "stream.js", JS),
    asset!(src "ui.js", JS),
    asset!(src "text.js", JS),
    asset!(src "list.js", JS),
    asset!(src "form.js", JS),
    asset!(src "task.js", JS),
    asset!(src "progress.js", JS),
    asset!(src "ladder.js", JS),
    asset!(src "diff.js", JS),
    asset!(src "evals.js", JS),
    asset!(vendor "preact.mjs", JS),
    asset!(vendor "preact-hooks.mjs", JS),
    asset!(vendor "htm.mjs", JS),
    asset!(vendor "marked.esm.js", JS),
    asset!(vendor "purify.min.js", JS),
    asset!(vendor "highlight.min.js", JS),
    asset!(vendor "diff2html-ui-base.min.js", JS),
    asset!(vendor "diff2html.min.css", CSS),
    asset!(vendor "hljs-light.min.css", CSS),
    asset!(vendor "hljs-dark.min.css", CSS),
];

/// What the browser is sent for one file, worked out once.
struct Prepared {
    etag: HeaderValue,
    /// The gzipped bytes, when that is smaller (shared by every answer, not copied).
    gzipped: Option<Bytes>,
}

fn prepared() -> &'static [Prepared] {
    static PREPARED: OnceLock<Vec<Prepared>> = OnceLock::new();
    PREPARED.get_or_init(|| ASSETS.iter().map(prepare).collect())
}

fn prepare(asset: &Asset) -> Prepared {
    let digest = Sha256::digest(asset.bytes);
    let etag = format!("\"{digest:x}\"");
    let gzipped = gzip(asset.bytes)
        .filter(|packed| packed.len() < asset.bytes.len())
        .map(Bytes::from);
    Prepared {
        // Hex digits in quotes are always a header value.
        etag: HeaderValue::from_str(&etag).unwrap_or(HeaderValue::from_static("\"\"")),
        gzipped,
    }
}

fn gzip(bytes: &[u8]) -> Option<Vec<u8>> {
    use std::io::Write;
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    encoder.write_all(bytes).ok()?;
    encoder.finish().ok()
}

/// The Content-Security-Policy of every page answer: only this origin's files run, plus the one
/// inline script, the import map, named by its hash.
pub(crate) fn content_security_policy() -> &'static str {
    static POLICY: OnceLock<String> = OnceLock::new();
    POLICY.get_or_init(|| {
        // A unit test holds index.html to one import map; without it no inline script may run.
        let import_map = std::str::from_utf8(ASSETS[0].bytes)
            .ok()
            .and_then(inline_import_map)
            .map(|map| {
                let hash = base64::engine::general_purpose::STANDARD.encode(Sha256::digest(map));
                format!(" 'sha256-{hash}'")
            })
            .unwrap_or_default();
        format!(
            "default-src 'none'; script-src 'self'{import_map}; style-src 'self'; \
             img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; \
             frame-ancestors 'none'"
        )
    })
}

/// The text of `<script type="importmap">…</script>` in `html`, as the browser hashes it.
fn inline_import_map(html: &str) -> Option<&str> {
    let (_, rest) = html.split_once("<script type=\"importmap\">")?;
    let (map, _) = rest.split_once("</script>")?;
    Some(map)
}

/// The page's routes: `/` and `/assets/…`.
pub(crate) fn routes<S: Clone + Send + Sync + 'static>() -> Router<S> {
    Router::new()
        .route(
            "/",
            get(|headers: HeaderMap| async move { answer(0, &headers) }),
        )
        .route(
            "/assets/{*path}",
            get(|Path(path): Path<String>, headers: HeaderMap| async move {
                match ASSETS.iter().position(|asset| asset.path == path) {
                    Some(index) if index != 0 => answer(index, &headers),
                    _ => (
                        StatusCode::NOT_FOUND,
                        security_headers(),
                        "no such file of the page",
                    )
                        .into_response(),
                }
            }),
        )
}

fn security_headers() -> [(header::HeaderName, HeaderValue); 4] {
    [
        (
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(content_security_policy()),
        ),
        (
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        ),
        (
            header::REFERRER_POLICY,
            HeaderValue::from_static("no-referrer"),
        ),
        (header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY")),
    ]
}

/// Asset `index`, as the request's headers allow: 304 when the browser holds this version,
/// gzipped when it takes gzip. Files are revalidated on every load (`no-cache`), as their names
/// do not change between versions of plumb.
fn answer(index: usize, request: &HeaderMap) -> Response {
    let asset = &ASSETS[index];
    let prepared = &prepared()[index];
    let mut response = if request
        .get(header::IF_NONE_MATCH)
        .is_some_and(|tags| matches_etag(tags, &prepared.etag))
    {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        match &prepared.gzipped {
            Some(packed) if takes_gzip(request) => (
                [(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"))],
                packed.clone(),
            )
                .into_response(),
            _ => asset.bytes.into_response(),
        }
    };
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(asset.content_type),
    );
    headers.insert(header::ETAG, prepared.etag.clone());
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert(header::VARY, HeaderValue::from_static("Accept-Encoding"));
    for (name, value) in security_headers() {
        headers.insert(name, value);
    }
    response
}

fn matches_etag(header: &HeaderValue, etag: &HeaderValue) -> bool {
    let Ok(tags) = header.to_str() else {
        return false;
    };
    let ours = etag.to_str().unwrap_or_default();
    tags.split(',')
        .map(|tag| tag.trim().trim_start_matches("W/"))
        .any(|tag| tag == "*" || tag == ours)
}

/// Whether `Accept-Encoding` takes gzip (and does not refuse it with `q=0`).
fn takes_gzip(request: &HeaderMap) -> bool {
    let Some(accepted) = request
        .get(header::ACCEPT_ENCODING)
        .and_then(|value| value.to_str().ok())
    else {
        return false;
    };
    accepted.split(',').any(|coding| {
        let mut parts = coding.split(';').map(str::trim);
        let name = parts.next().unwrap_or_default();
        let refused = parts.any(|parameter| {
            parameter
                .strip_prefix("q=")
                .and_then(|q| q.parse::<f32>().ok())
                .is_some_and(|q| q == 0.0)
        });
        (name.eq_ignore_ascii_case("gzip") || name == "*") && !refused
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_policy_names_the_hash_of_the_import_map_the_page_holds() {
        let index = std::str::from_utf8(ASSETS[0].bytes).unwrap();
        let map = inline_import_map(index).unwrap();
        assert!(map.starts_with("{\"imports\":"), "{map}");
        let parsed: serde_json::Value = serde_json::from_str(map).unwrap();
        for target in parsed["imports"].as_object().unwrap().values() {
            let path = target.as_str().unwrap().strip_prefix("/assets/").unwrap();
            assert!(
                ASSETS.iter().any(|asset| asset.path == path),
                "{path} is not embedded"
            );
        }
        let hash = base64::engine::general_purpose::STANDARD.encode(Sha256::digest(map));
        assert!(content_security_policy().contains(&format!("'sha256-{hash}'")));
        // Only one inline script: the page's others are files.
        assert_eq!(index.matches("<script>").count(), 0);
        assert_eq!(index.matches("<script type=\"importmap\">").count(), 1);
    }

    #[test]
    fn every_file_the_page_names_is_embedded() {
        let mut named = Vec::new();
        for asset in ASSETS
            .iter()
            .filter(|asset| !asset.path.starts_with("vendor/"))
        {
            let text = std::str::from_utf8(asset.bytes).unwrap();
            for quoted in text.split(['"', '\'']).skip(1).step_by(2) {
                if let Some(path) = quoted.strip_prefix("/assets/") {
                    named.push(path.to_owned());
                } else if quoted.starts_with("./") && quoted.ends_with(".js") {
                    named.push(quoted.trim_start_matches("./").to_owned());
                }
            }
        }
        assert!(named.len() > 10, "{named:?}");
        for path in named {
            assert!(
                ASSETS.iter().any(|asset| asset.path == path),
                "{path} is named by the page and not embedded"
            );
        }
        let folder = concat!(env!("CARGO_MANIFEST_DIR"), "/web/src");
        for entry in std::fs::read_dir(folder).unwrap() {
            let name = entry.unwrap().file_name().into_string().unwrap();
            assert!(
                ASSETS.iter().any(|asset| asset.path == name),
                "web/src/{name} is not embedded"
            );
        }
    }

    #[test]
    fn the_vendored_files_are_those_their_checksums_name() {
        let sums = include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/web/vendor/SHA256SUMS"
        ));
        for asset in ASSETS
            .iter()
            .filter(|asset| asset.path.starts_with("vendor/"))
        {
            let name = asset.path.trim_start_matches("vendor/");
            let line = sums
                .lines()
                .find(|line| line.ends_with(&format!("./{name}")))
                .unwrap_or_else(|| panic!("{name} has no checksum"));
            let digest = format!("{:x}", Sha256::digest(asset.bytes));
            assert!(line.starts_with(&digest), "{name}: {line} vs {digest}");
        }
    }

    #[test]
    fn gzip_is_sent_only_to_a_browser_that_takes_it() {
        let headers = |value: &'static str| {
            let mut map = HeaderMap::new();
            map.insert(header::ACCEPT_ENCODING, HeaderValue::from_static(value));
            map
        };
        assert!(takes_gzip(&headers("gzip, deflate, br, zstd")));
        assert!(takes_gzip(&headers("br;q=1.0, GZIP;q=0.5")));
        assert!(takes_gzip(&headers("*")));
        assert!(!takes_gzip(&headers("gzip;q=0, br")));
        assert!(!takes_gzip(&headers("identity")));
        assert!(!takes_gzip(&HeaderMap::new()));
    }

    #[test]
    fn an_etag_matches_itself_weak_or_listed() {
        let ours = HeaderValue::from_static("\"abc\"");
        assert!(matches_etag(&HeaderValue::from_static("\"abc\""), &ours));
        assert!(matches_etag(
            &HeaderValue::from_static("\"x\", W/\"abc\""),
            &ours
        ));
        assert!(matches_etag(&HeaderValue::from_static("*"), &ours));
        assert!(!matches_etag(&HeaderValue::from_static("\"abd\""), &ours));
    }
}
