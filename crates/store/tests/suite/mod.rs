mod attempts;
mod backends;
mod evals;
mod events;
mod queue;
mod tasks;
mod tenants;
mod tokens;
