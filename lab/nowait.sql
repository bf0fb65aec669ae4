-- NOWAIT and SKIP LOCKED (seeds 003 and 000).
-- A holds order 1 FOR UPDATE: someone is editing it. NOWAIT makes B fail at
-- once with 55P03 ("this record is being edited by someone else"); SKIP
-- LOCKED makes B skip the row, at once, without error.

-- name: edit
SELECT order_id, status FROM orders WHERE order_id = 1 FOR UPDATE;

-- name: edit_nowait
SELECT order_id, status FROM orders WHERE order_id = 1 FOR UPDATE NOWAIT;

-- name: edit_skip_locked
SELECT order_id, status FROM orders WHERE order_id = 1 FOR UPDATE SKIP LOCKED;
