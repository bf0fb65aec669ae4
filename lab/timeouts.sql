-- The four timeouts (seed 003). All are off by default; each bounds a wait.
-- \set timeout '''1000ms'''

-- name: lock_row
UPDATE stock_items SET quantity_reserved = quantity_reserved + 1 WHERE book_id = 1;

-- name: set_lock_timeout
SET lock_timeout = :timeout;

-- name: set_statement_timeout
SET statement_timeout = :timeout;

-- name: long_query
SELECT pg_sleep(:seconds);

-- name: set_idle_timeout
SET idle_in_transaction_session_timeout = :timeout;

-- name: set_transaction_timeout
SET transaction_timeout = :timeout;

-- name: still_there
SELECT 1 AS alive;
