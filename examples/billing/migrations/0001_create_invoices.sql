-- 0001: invoices and their lines.
-- Applied in production on 2023-04-02. Never edit an applied migration;
-- add a new numbered file instead.

CREATE TABLE invoices (
    number          TEXT PRIMARY KEY,
    customer_id     TEXT NOT NULL,
    issued_on       DATE NOT NULL,
    seller_state    CHAR(2) NOT NULL,
    place_of_supply CHAR(2) NOT NULL,
    total           NUMERIC(12, 2) NOT NULL
);

CREATE TABLE invoice_lines (
    invoice_number  TEXT NOT NULL REFERENCES invoices (number),
    sku             TEXT NOT NULL,
    description     TEXT NOT NULL,
    quantity        INTEGER NOT NULL CHECK (quantity > 0),
    unit_price      NUMERIC(12, 2) NOT NULL,
    PRIMARY KEY (invoice_number, sku)
);
