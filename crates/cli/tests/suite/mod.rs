mod bad_input;
mod bill_412;
mod common;
mod failures;
mod replay;
