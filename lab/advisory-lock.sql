-- Advisory locks: one instance runs the nightly stock sync (seed 003).
-- The key is the run's schema plus the job name, so lab runs on one server
-- do not share it: \set key '''lab:nightly-stock-sync'''

-- name: try_xact_lock
SELECT pg_try_advisory_xact_lock(hashtext(:key)) AS got;

-- name: sync
UPDATE stock_items SET quantity_on_hand = quantity_on_hand WHERE book_id <= 5;

-- name: session_lock
SELECT pg_advisory_lock(hashtext(:key));

-- name: try_session_lock
SELECT pg_try_advisory_lock(hashtext(:key)) AS got;

-- name: unlock
SELECT pg_advisory_unlock(hashtext(:key)) AS released;

-- What a pool runs when it takes a connection back (DISCARD ALL includes it).
-- name: pool_reset
SELECT pg_advisory_unlock_all();

-- name: holders
SELECT pid, locktype, mode, granted FROM pg_locks
 WHERE locktype = 'advisory' AND objid = hashtext(:key)::oid;
