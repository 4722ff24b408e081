-- 0002: store discount and tax per line, and the tax split per invoice.
-- Applied in production on 2023-11-19. Never edit an applied migration;
-- add a new numbered file instead.

ALTER TABLE invoice_lines ADD COLUMN category TEXT NOT NULL DEFAULT 'standard';
ALTER TABLE invoice_lines ADD COLUMN discount NUMERIC(12, 2) NOT NULL DEFAULT 0;
ALTER TABLE invoice_lines ADD COLUMN gst_rate NUMERIC(4, 2) NOT NULL DEFAULT 0.18;
ALTER TABLE invoice_lines ADD COLUMN gst_amount NUMERIC(12, 2) NOT NULL DEFAULT 0;

ALTER TABLE invoices ADD COLUMN discount_code TEXT;
ALTER TABLE invoices ADD COLUMN central_tax NUMERIC(12, 2) NOT NULL DEFAULT 0;
ALTER TABLE invoices ADD COLUMN state_tax NUMERIC(12, 2) NOT NULL DEFAULT 0;
ALTER TABLE invoices ADD COLUMN integrated_tax NUMERIC(12, 2) NOT NULL DEFAULT 0;
