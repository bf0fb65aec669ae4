-- Seed rows for the Bookstore lab. Every variant runs this first, so variants
-- and reruns are independent of each other.
--
-- Run by hand after lab/schema.sql:   psql "$DATABASE_URL" -v schema=lab -f lab/seed.sql
\if :{?schema}
\else
\set schema lab
\endif
\set ON_ERROR_STOP on
SET search_path TO :"schema";

TRUNCATE books, stock_items, customers, orders, order_items, outbox_messages,
         website, invoice_sequences, invoices, outgoing_invoices, audit_log RESTART IDENTITY;

INSERT INTO books (book_id, title, price) VALUES
    (1, 'Designing Data-Intensive Applications', 42.00),
    (2, 'PostgreSQL Internals', 35.00),
    (3, 'Database Internals', 38.00),
    (4, 'Transaction Processing', 55.00),
    (5, 'SQL Performance Explained', 29.00);

-- book 1 starts with 36 copies: two clerks each remove one, 34 must remain
INSERT INTO stock_items (book_id, quantity_on_hand) VALUES
    (1, 36), (2, 12), (3, 7), (4, 3), (5, 20);

INSERT INTO customers (customer_id, name)
SELECT i, 'Customer ' || i FROM generate_series(1, 2000) AS i;

-- one order to hang order items on (the foreign-key scenario inserts items for it)
INSERT INTO orders (order_id, order_no, customer_id, status, delivery_address, updated_at)
    VALUES (1, 'BK-0001', 1, 'Shipped', 'Kadikoy, Istanbul', '2026-11-30 10:00:00');
ALTER TABLE orders ALTER COLUMN order_id RESTART WITH 2;

INSERT INTO website (website_id, hits) VALUES (1, 10);

INSERT INTO invoice_sequences (series, next_no) VALUES ('A', 1);
ALTER SEQUENCE invoice_no_seq RESTART WITH 1;
