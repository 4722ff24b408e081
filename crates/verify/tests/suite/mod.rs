mod cargo;
mod detect;
mod fixtures;
mod go;
mod narrow;
mod npm;
mod pytest;
mod pytest_live;
