-- The DDL lock queue (seed 003, "DDL Kuyruğu").
-- A runs a report on books inside a transaction (ACCESS SHARE). B's ALTER
-- TABLE needs ACCESS EXCLUSIVE and queues behind A. C's plain SELECT does not
-- conflict with A, but it queues behind B: one migration stops all traffic.

-- name: report
SELECT count(*) AS books, sum(price) AS catalogue_value FROM books;

-- name: alter
ALTER TABLE books ADD COLUMN subtitle text;

-- name: read
SELECT title FROM books WHERE book_id = 2;

-- name: set_lock_timeout
SET lock_timeout = :timeout;

-- The seed's view of the queue.
-- name: queue
SELECT pid, pg_blocking_pids(pid) AS blocked_by, state, wait_event_type, left(query, 45) AS query
  FROM pg_stat_activity
 WHERE pid = ANY (:pids)
 ORDER BY backend_start;
