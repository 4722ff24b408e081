mod api;
mod events;
mod harness;
mod openapi;
mod tenant;
