mod attempts;
mod backends;
mod events;
mod queue;
mod tasks;
mod tokens;
