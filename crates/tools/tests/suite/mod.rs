mod search;
