-- The READ COMMITTED re-check (seed 000; the PostgreSQL manual's example).
-- website has one row with hits = 10. A adds a hit; B deletes rows with
-- hits = 10 and waits for A. When A commits, B re-evaluates its WHERE on the
-- updated row (hits = 11) and deletes nothing, although a row with hits = 10
-- existed both before and after, from each one's point of view.

-- name: hit
UPDATE website SET hits = hits + 1;

-- name: delete_tens
DELETE FROM website WHERE hits = 10;

-- name: rows
SELECT website_id, hits FROM website;
