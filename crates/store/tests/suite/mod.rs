mod attempts;
mod backends;
mod events;
mod tasks;
