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

-- Whether this session may change deadlock_timeout (a superuser setting).
-- name: can_set_deadlock_timeout
SELECT rolsuper AS can FROM pg_roles WHERE rolname = current_user;

-- the detector runs first in the session that has waited deadlock_timeout:
-- giving B a longer one makes A the one that detects (and is cancelled) on
-- every run, whatever else the machine is doing
-- name: set_deadlock_timeout
SET deadlock_timeout = :timeout;
