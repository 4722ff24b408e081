mod outline;
mod repo_map;
mod syntax;
