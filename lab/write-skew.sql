-- Write skew (seed 003, "SERIALIZABLE ve SSI").
-- Rule: a customer may have at most one Pending order. Each request checks,
-- then inserts if it saw none. Both requests finish their check before either
-- inserts. Under READ COMMITTED and REPEATABLE READ both insert (no row is
-- written by both, so there is nothing to conflict on); SERIALIZABLE sees the
-- read/write dependencies and fails one with 40001.
--
-- By hand, in two psql sessions (search_path set to the lab schema):
--   \set isolation 'SERIALIZABLE'   \set customer_id 1234   \set order_no '''BK-TA1'''

-- name: begin
BEGIN ISOLATION LEVEL :isolation;

-- name: check
SELECT count(*) AS pending FROM orders WHERE customer_id = :customer_id AND status = 'Pending';

-- name: insert
INSERT INTO orders (order_no, customer_id, status) VALUES (:order_no, :customer_id, 'Pending');

-- name: pending
SELECT count(*) FROM orders WHERE customer_id = :customer_id AND status = 'Pending';

-- The index exercise (the seed's ★★★): enough order history that the planner
-- reads one customer's orders through ix_orders_customer_id.
-- name: fill_history
INSERT INTO orders (order_no, customer_id, status)
SELECT 'BK-H' || i, (i % 2000) + 1, 'Delivered' FROM generate_series(0, 19999) AS i;

-- name: analyze
ANALYZE orders;

-- name: explain_check
EXPLAIN (COSTS OFF) SELECT count(*) FROM orders WHERE customer_id = :customer_id AND status = 'Pending';

-- name: drop_index
DROP INDEX ix_orders_customer_id;

-- name: clear_pending
DELETE FROM orders WHERE status = 'Pending';

-- The evidence: predicate (SIRead) locks the two transactions hold after their checks.
-- name: siread_locks
SELECT l.pid, l.locktype, c.relname AS relation, l.page, l.tuple
  FROM pg_locks l LEFT JOIN pg_class c ON c.oid = l.relation
 WHERE l.mode = 'SIReadLock' AND l.pid = ANY (:pids)
 ORDER BY l.pid, l.locktype, c.relname, l.page, l.tuple;
