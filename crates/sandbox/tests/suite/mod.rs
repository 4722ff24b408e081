mod env;
mod kill;
mod limits;
mod run;
mod support;
