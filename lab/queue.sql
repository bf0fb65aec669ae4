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
-- why: take the first unprocessed batch and lock it; workers asking for the same rows wait here
-- why-tr: işlenmemiş ilk paketi al ve kilitle; aynı satırları isteyen worker'lar burada bekler
SELECT outbox_message_id FROM outbox_messages
 WHERE processed_at IS NULL
 ORDER BY outbox_message_id
 LIMIT :batch
 FOR UPDATE;

-- name: dequeue_skip_locked
-- why: take the first unprocessed batch nobody holds: rows locked by other workers are skipped, not waited for
-- why-tr: kimsenin tutmadığı ilk işlenmemiş paketi al: başka worker'ların kilitlediği satırlar beklenmez, atlanır
SELECT outbox_message_id FROM outbox_messages
 WHERE processed_at IS NULL
 ORDER BY outbox_message_id
 LIMIT :batch
 FOR UPDATE SKIP LOCKED;

-- name: mark_processed
-- why: the batch was sent: mark its messages processed, still holding their locks
-- why-tr: paket gönderildi: mesajları, kilitleri hâlâ tutulurken işlenmiş olarak işaretle
UPDATE outbox_messages SET processed_at = now(), processed_by = :worker
 WHERE outbox_message_id = ANY (:ids);

-- name: left_over
SELECT count(*) FROM outbox_messages WHERE processed_at IS NULL;
