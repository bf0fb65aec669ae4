-- A job queue in the database (seed 003, "SKIP LOCKED ile Veritabanında Job Queue").
-- Workers loop: BEGIN; take a batch; "send" it; mark it processed; COMMIT.
-- A worker that gets no rows concludes the queue is empty and stops.
--   \set messages 1000   \set batch 10   \set worker '''W1'''

-- name: fill
INSERT INTO outbox_messages (outbox_message_id, payload)
SELECT i, 'order-shipped ' || i FROM generate_series(1, :messages) AS i;

-- name: analyze
ANALYZE outbox_messages;

-- name: dequeue_for_update
SELECT outbox_message_id FROM outbox_messages
 WHERE processed_at IS NULL
 ORDER BY outbox_message_id
 LIMIT :batch
 FOR UPDATE;

-- name: dequeue_skip_locked
SELECT outbox_message_id FROM outbox_messages
 WHERE processed_at IS NULL
 ORDER BY outbox_message_id
 LIMIT :batch
 FOR UPDATE SKIP LOCKED;

-- name: mark_processed
UPDATE outbox_messages SET processed_at = now(), processed_by = :worker
 WHERE outbox_message_id = ANY (:ids);

-- name: left_over
SELECT count(*) FROM outbox_messages WHERE processed_at IS NULL;
