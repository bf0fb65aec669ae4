-- Deadlock (seed 003, "Deadlock, Timeout'lar").
-- A and B each reserve a copy of two books. In opposite orders they deadlock:
-- after deadlock_timeout the server's detector cancels one with 40P01 and its
-- COMMIT becomes a ROLLBACK. In book_id order B simply waits for A.

-- name: deadlock_timeout
SELECT setting::int AS deadlock_timeout_ms FROM pg_settings WHERE name = 'deadlock_timeout';

-- name: reserve
UPDATE stock_items SET quantity_reserved = quantity_reserved + 1 WHERE book_id = :book_id;

-- name: reserved
SELECT book_id, quantity_reserved FROM stock_items WHERE book_id IN (1, 2) ORDER BY book_id;
