mod attempts;
mod backends;
mod events;
mod queue;
mod tasks;
mod tenants;
mod tokens;
