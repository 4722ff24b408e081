mod notes;
mod outline;
mod prompt;
mod repo_map;
mod syntax;
