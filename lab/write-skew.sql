-- Write skew (seed 003): the requests' statements are in lab/write-skew.spec.
-- These are lab's own: the pending count after a variant, and the index
-- exercise (the seed's ★★★): enough order history that the planner reads one
-- customer's orders through ix_orders_customer_id, the plan the check uses,
-- and the predicate (SIRead) locks the two transactions hold after their checks.
--   \set customer_id 1234

-- name: pending
SELECT count(*) AS pending FROM orders WHERE customer_id = :customer_id AND status = 'Pending';

-- name: fill_history
INSERT INTO orders (order_no, customer_id, status)
SELECT 'BK-H' || i, (i % 2000) + 1, 'Delivered' FROM generate_series(0, 19999) AS i;

-- name: analyze
ANALYZE orders;

-- name: explain_check
-- why: which plan the check uses decides which predicate locks it takes
-- why-tr: kontrolün kullandığı plan hangi predicate lock'ları alacağını belirler
EXPLAIN (COSTS OFF) SELECT count(*) FROM orders WHERE customer_id = :customer_id AND status = 'Pending';

-- name: drop_index
DROP INDEX ix_orders_customer_id;

-- name: clear_pending
DELETE FROM orders WHERE status = 'Pending';

-- name: siread_locks
SELECT l.pid, l.locktype, c.relname AS relation, l.page, l.tuple
  FROM pg_locks l LEFT JOIN pg_class c ON c.oid = l.relation
 WHERE l.mode = 'SIReadLock' AND l.pid = ANY (:pids)
 ORDER BY l.pid, l.locktype, c.relname, l.page, l.tuple;
