mod anthropic;
mod openai;
mod retries;
mod support;
