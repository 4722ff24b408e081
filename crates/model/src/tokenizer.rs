//! Counting tokens the way a model does, where plumb can: the embedded model's own vocabulary,
//! read from its GGUF file, and OpenAI's `o200k_base` for OpenAI models. The repo map's budget is
//! counted with it (`ModelClient::token_counter`); where no tokenizer is known, the caller falls
//! back to its estimate.
//!
//! The embedded models (Qwen2.5-Coder) use a byte-level BPE whose token ids are its merge ranks
//! (the vocabulary was built as a tiktoken rank file), so tiktoken's merge rule — merge the pair
//! whose joined bytes have the lowest id — gives llama.cpp's tokens. The GGUF file holds the
//! vocabulary in its header (`tokenizer.ggml.tokens`, each token's bytes written as GPT-2's
//! printable characters, and `tokenizer.ggml.token_type`), read here without touching the
//! weights. The pre-tokenizer's pattern is llama.cpp's for `tokenizer.ggml.pre = "qwen2"`; a
//! model with another pre-tokenizer gets no tokenizer (and the caller its estimate) rather than a
//! wrong count. The runner's test compares these counts with llama.cpp's own on prose, code and
//! non-ASCII text.

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufReader, Read};
use std::path::Path;
use std::sync::Arc;

use rustc_hash::FxHashMap;
use tiktoken_rs::CoreBPE;

/// Counts the tokens of a text.
pub type TokenCounter = Arc<dyn Fn(&str) -> usize + Send + Sync>;

/// llama.cpp's pre-tokenizer pattern for Qwen2 (`LLAMA_VOCAB_PRE_TYPE_QWEN2`).
const QWEN2_PATTERN: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";

/// GGUF's token type of an ordinary BPE token (control and user-defined tokens are not merged
/// from text).
const NORMAL_TOKEN: i32 = 1;

/// Header entries read at most: a GGUF header has a few dozen.
const MAX_ENTRIES: u64 = 10_000;
/// The longest array or string read from a header (the vocabulary has ~150,000 tokens).
const MAX_ITEMS: u64 = 4_000_000;

/// Why a model file gave no tokenizer.
#[derive(Debug, thiserror::Error)]
pub enum TokenizerError {
    #[error("could not read {path}: {source}")]
    Io {
        path: String,
        #[source]
        source: io::Error,
    },
    #[error("{path} is not a GGUF file plumb can read: {why}")]
    Format { path: String, why: String },
    #[error("{path} uses the pre-tokenizer `{pre}`, which plumb does not count with")]
    Unsupported { path: String, pre: String },
}

/// The tokenizer of the GGUF model at `path`.
pub fn gguf_tokenizer(path: &Path) -> Result<CoreBPE, TokenizerError> {
    let shown = path.display().to_string();
    let file = File::open(path).map_err(|source| TokenizerError::Io {
        path: shown.clone(),
        source,
    })?;
    let vocab = read_vocab(&mut BufReader::new(file)).map_err(|why| match why {
        HeaderError::Io(source) => TokenizerError::Io {
            path: shown.clone(),
            source,
        },
        HeaderError::Format(why) => TokenizerError::Format {
            path: shown.clone(),
            why,
        },
    })?;
    if vocab.pre != "qwen2" {
        return Err(TokenizerError::Unsupported {
            path: shown,
            pre: vocab.pre,
        });
    }
    let unicode_to_byte = unicode_to_byte();
    let mut encoder = FxHashMap::default();
    for (id, token) in vocab.tokens.iter().enumerate() {
        if vocab.types.get(id).copied().unwrap_or(NORMAL_TOKEN) != NORMAL_TOKEN {
            continue;
        }
        let bytes: Option<Vec<u8>> = token
            .chars()
            .map(|c| unicode_to_byte.get(&c).copied())
            .collect();
        let (Some(bytes), Ok(rank)) = (bytes, u32::try_from(id)) else {
            return Err(TokenizerError::Format {
                path: shown,
                why: format!("token {id} is not written in byte-level characters"),
            });
        };
        // The first id wins: tiktoken's decoder needs each byte string once.
        encoder.entry(bytes).or_insert(rank);
    }
    // tiktoken panics on a byte it has no token for: every byte must be one, as in every
    // byte-level vocabulary.
    if let Some(byte) = (0..=u8::MAX).find(|byte| !encoder.contains_key([*byte].as_slice())) {
        return Err(TokenizerError::Format {
            path: shown,
            why: format!("no token is the byte {byte:#04x} alone"),
        });
    }
    CoreBPE::new(encoder, FxHashMap::default(), QWEN2_PATTERN).map_err(|why| {
        TokenizerError::Format {
            path: shown,
            why: why.to_string(),
        }
    })
}

/// The counter of `bpe`: its tokens of a text, special tokens written as text counted as text.
pub fn counter(bpe: CoreBPE) -> TokenCounter {
    Arc::new(move |text: &str| bpe.encode_ordinary(text).len())
}

/// GPT-2's byte-level alphabet, reversed: each printable character a byte is written as.
fn unicode_to_byte() -> HashMap<char, u8> {
    let printable = |b: u8| matches!(b, b'!'..=b'~' | 0xA1..=0xAC | 0xAE..=0xFF);
    let mut map = HashMap::with_capacity(256);
    let mut next = 0u32;
    for byte in 0..=u8::MAX {
        let code = if printable(byte) {
            u32::from(byte)
        } else {
            next += 1;
            255 + next
        };
        if let Some(c) = char::from_u32(code) {
            map.insert(c, byte);
        }
    }
    map
}

/// What the header says about the vocabulary.
struct Vocab {
    tokens: Vec<String>,
    types: Vec<i32>,
    pre: String,
}

enum HeaderError {
    Io(io::Error),
    Format(String),
}

impl From<io::Error> for HeaderError {
    fn from(error: io::Error) -> Self {
        if error.kind() == io::ErrorKind::UnexpectedEof {
            bad("the header ends early")
        } else {
            HeaderError::Io(error)
        }
    }
}

fn bad(why: impl Into<String>) -> HeaderError {
    HeaderError::Format(why.into())
}

/// Reads the header's key-value entries up to the tensors, keeping the vocabulary's.
fn read_vocab(reader: &mut impl Read) -> Result<Vocab, HeaderError> {
    let mut magic = [0u8; 4];
    reader.read_exact(&mut magic)?;
    if &magic != b"GGUF" {
        return Err(bad("it does not start with GGUF"));
    }
    let version = read_u32(reader)?;
    if !(2..=3).contains(&version) {
        return Err(bad(format!("GGUF version {version}")));
    }
    let _tensors = read_u64(reader)?;
    let entries = read_u64(reader)?;
    if entries > MAX_ENTRIES {
        return Err(bad(format!("{entries} header entries")));
    }
    let mut vocab = Vocab {
        tokens: Vec::new(),
        types: Vec::new(),
        pre: String::new(),
    };
    for _ in 0..entries {
        let key = read_string(reader)?;
        let kind = read_u32(reader)?;
        match (key.as_str(), kind) {
            ("tokenizer.ggml.tokens", ARRAY) => vocab.tokens = read_string_array(reader)?,
            ("tokenizer.ggml.token_type", ARRAY) => vocab.types = read_i32_array(reader)?,
            ("tokenizer.ggml.pre", STRING) => vocab.pre = read_string(reader)?,
            _ => skip_value(reader, kind)?,
        }
    }
    if vocab.tokens.is_empty() {
        return Err(bad("it has no tokenizer.ggml.tokens"));
    }
    Ok(vocab)
}

const STRING: u32 = 8;
const ARRAY: u32 = 9;

/// The size of a fixed-size GGUF value type; `None` for strings and arrays.
fn fixed_size(kind: u32) -> Result<Option<u64>, HeaderError> {
    Ok(match kind {
        0 | 1 | 7 => Some(1),
        2 | 3 => Some(2),
        4..=6 => Some(4),
        10..=12 => Some(8),
        STRING | ARRAY => None,
        other => return Err(bad(format!("value type {other}"))),
    })
}

fn skip_value(reader: &mut impl Read, kind: u32) -> Result<(), HeaderError> {
    match fixed_size(kind)? {
        Some(size) => skip(reader, size),
        None if kind == STRING => {
            let len = read_len(reader)?;
            skip(reader, len)
        }
        None => {
            let item = read_u32(reader)?;
            let count = read_len(reader)?;
            match fixed_size(item)? {
                Some(size) => skip(reader, size.saturating_mul(count)),
                None => (0..count).try_for_each(|_| skip_value(reader, item)),
            }
        }
    }
}

fn skip(reader: &mut impl Read, bytes: u64) -> Result<(), HeaderError> {
    let skipped = io::copy(&mut reader.take(bytes), &mut io::sink())?;
    if skipped == bytes {
        Ok(())
    } else {
        Err(bad("the header ends early"))
    }
}

fn read_string_array(reader: &mut impl Read) -> Result<Vec<String>, HeaderError> {
    if read_u32(reader)? != STRING {
        return Err(bad("tokenizer.ggml.tokens is not an array of strings"));
    }
    let count = read_len(reader)?;
    (0..count).map(|_| read_string(reader)).collect()
}

fn read_i32_array(reader: &mut impl Read) -> Result<Vec<i32>, HeaderError> {
    if read_u32(reader)? != 5 {
        return Err(bad("tokenizer.ggml.token_type is not an array of i32"));
    }
    let count = read_len(reader)?;
    (0..count)
        .map(|_| {
            let mut bytes = [0u8; 4];
            reader.read_exact(&mut bytes)?;
            Ok(i32::from_le_bytes(bytes))
        })
        .collect()
}

fn read_string(reader: &mut impl Read) -> Result<String, HeaderError> {
    let len = read_len(reader)?;
    let mut bytes = Vec::new();
    reader.take(len).read_to_end(&mut bytes)?;
    if u64::try_from(bytes.len()).ok() != Some(len) {
        return Err(bad("the header ends early"));
    }
    String::from_utf8(bytes).map_err(|_| bad("a header string is not UTF-8"))
}

/// A length or count, bounded so a damaged file cannot ask for gigabytes.
fn read_len(reader: &mut impl Read) -> Result<u64, HeaderError> {
    let len = read_u64(reader)?;
    if len > MAX_ITEMS {
        return Err(bad(format!("a header length of {len}")));
    }
    Ok(len)
}

fn read_u32(reader: &mut impl Read) -> Result<u32, HeaderError> {
    let mut bytes = [0u8; 4];
    reader.read_exact(&mut bytes)?;
    Ok(u32::from_le_bytes(bytes))
}

fn read_u64(reader: &mut impl Read) -> Result<u64, HeaderError> {
    let mut bytes = [0u8; 8];
    reader.read_exact(&mut bytes)?;
    Ok(u64::from_le_bytes(bytes))
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    fn string(out: &mut Vec<u8>, text: &str) {
        out.extend_from_slice(&(text.len() as u64).to_le_bytes());
        out.extend_from_slice(text.as_bytes());
    }

    /// A GGUF header with a small byte-level vocabulary: every byte, then merges of "ab", "abc".
    fn header(pre: &str) -> Vec<u8> {
        header_with(pre, NORMAL_TOKEN)
    }

    /// [`header`], the byte `z` typed `z_type`.
    fn header_with(pre: &str, z_type: i32) -> Vec<u8> {
        let byte_chars: HashMap<u8, char> =
            unicode_to_byte().into_iter().map(|(c, b)| (b, c)).collect();
        let mut tokens: Vec<String> = (0..=u8::MAX).map(|b| byte_chars[&b].to_string()).collect();
        tokens.push("ab".into());
        tokens.push("abc".into());
        tokens.push("<|im_start|>".into());
        let mut types = vec![NORMAL_TOKEN; tokens.len()];
        *types.last_mut().unwrap() = 3;
        types[usize::from(b'z')] = z_type;

        let mut out = b"GGUF".to_vec();
        out.extend_from_slice(&3u32.to_le_bytes());
        out.extend_from_slice(&0u64.to_le_bytes());
        out.extend_from_slice(&5u64.to_le_bytes());
        string(&mut out, "general.name");
        out.extend_from_slice(&STRING.to_le_bytes());
        string(&mut out, "test");
        string(&mut out, "general.file_type");
        out.extend_from_slice(&4u32.to_le_bytes());
        out.extend_from_slice(&7u32.to_le_bytes());
        string(&mut out, "tokenizer.ggml.pre");
        out.extend_from_slice(&STRING.to_le_bytes());
        string(&mut out, pre);
        string(&mut out, "tokenizer.ggml.tokens");
        out.extend_from_slice(&ARRAY.to_le_bytes());
        out.extend_from_slice(&STRING.to_le_bytes());
        out.extend_from_slice(&(tokens.len() as u64).to_le_bytes());
        for token in &tokens {
            string(&mut out, token);
        }
        string(&mut out, "tokenizer.ggml.token_type");
        out.extend_from_slice(&ARRAY.to_le_bytes());
        out.extend_from_slice(&5u32.to_le_bytes());
        out.extend_from_slice(&(types.len() as u64).to_le_bytes());
        for kind in types {
            out.extend_from_slice(&kind.to_le_bytes());
        }
        out
    }

    fn file(bytes: &[u8]) -> tempfile::NamedTempFile {
        let mut file = tempfile::NamedTempFile::new().unwrap();
        file.write_all(bytes).unwrap();
        file
    }

    #[test]
    fn a_vocabulary_read_from_the_header_merges_by_rank() {
        let file = file(&header("qwen2"));
        let count = counter(gguf_tokenizer(file.path()).unwrap());
        assert_eq!(count("abc"), 1);
        assert_eq!(count("abcab"), 2);
        assert_eq!(count("x"), 1);
        // A control token written in text is counted as text, byte by byte where nothing merges.
        assert_eq!(count("<|im_start|>"), 12);
        assert_eq!(count("é"), 2, "two bytes, no merge");
    }

    #[test]
    fn another_pre_tokenizer_or_a_file_that_is_not_gguf_gives_no_tokenizer() {
        let llama = file(&header("llama-bpe"));
        assert!(matches!(
            gguf_tokenizer(llama.path()),
            Err(TokenizerError::Unsupported { .. })
        ));
        // A vocabulary without a token for some byte would make the counter panic on it.
        let no_z = file(&header_with("qwen2", 6));
        let Err(error) = gguf_tokenizer(no_z.path()) else {
            panic!("a vocabulary without the byte z gave a tokenizer");
        };
        assert!(error.to_string().contains("0x7a"), "{error}");
        let text = file(b"not a model");
        assert!(matches!(
            gguf_tokenizer(text.path()),
            Err(TokenizerError::Format { .. })
        ));
        let cut = header("qwen2");
        let cut = file(&cut[..cut.len() / 2]);
        let Err(error) = gguf_tokenizer(cut.path()) else {
            panic!("half a header gave a tokenizer");
        };
        assert!(
            error.to_string().contains("the header ends early"),
            "{error}"
        );
    }
}
