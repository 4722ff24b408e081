mod bad_input;
mod bill_412;
mod common;
mod escape;
mod failures;
mod gaming;
mod replay;
mod setup_phase;
