mod search;
mod specs;
