-- Gapless legal invoice numbers with parallel workers (seed 001).
-- Invoices are queued by producers, taken by workers with SKIP LOCKED (as in
-- lab/queue.sql), numbered in series 'A', and sent to an external integrator
-- that is slow and can fail. Numbers must have no duplicates and no gaps.

-- Producers: the scheduler's batch and users' clicks.
-- name: enqueue
INSERT INTO invoices (series, tax_number, priority, source)
SELECT 'A', lpad(i::text, 10, '0'), :priority, :source FROM generate_series(1, :count) AS i;

-- Some customers' tax numbers are wrong: the integrator rejects those for good.
-- name: invalid_tax_numbers
UPDATE invoices SET tax_number = 'INVALID' WHERE invoice_id % 10 = 7;

-- Numbering at enqueue time (the second naive approach).
-- name: number_at_enqueue
UPDATE invoices SET reserved_no = n.no
  FROM (SELECT invoice_id, row_number() OVER (ORDER BY invoice_id) AS no FROM invoices) AS n
 WHERE invoices.invoice_id = n.invoice_id;

-- name: counter_after_enqueue
UPDATE invoice_sequences SET next_no = (SELECT max(reserved_no) + 1 FROM invoices) WHERE series = 'A';

-- A user cancels an invoice while it is still queued.
-- name: cancel
UPDATE invoices SET status = 'CANCELLED', updated_at = now() WHERE invoice_id = :invoice_id AND status = 'QUEUED';

-- The worker's dequeue: one invoice, interactive ones first.
-- name: take
-- why: take the next queued invoice, interactive ones first; SKIP LOCKED leaves other workers' invoices alone
-- why-tr: sıradaki faturayı al, önce etkileşimliler; SKIP LOCKED diğer worker'ların faturalarına dokunmaz
SELECT invoice_id, reserved_no, tax_number FROM invoices
 WHERE status = 'QUEUED'
 ORDER BY priority DESC, invoice_id
 LIMIT 1
 FOR UPDATE SKIP LOCKED;

-- 1. MAX()+1 at send time: two workers read the same MAX.
-- name: max_plus_one
-- why: number it MAX + 1: two workers can read the same MAX
-- why-tr: MAX + 1 ile numarala: iki worker aynı MAX'ı okuyabilir
SELECT coalesce(max(invoice_no), 0) + 1 AS no FROM outgoing_invoices WHERE series = 'A';

-- 3. A sequence: nextval never rolls back.
-- name: next_from_sequence
-- why: number it from a sequence: nextval is never rolled back
-- why-tr: sequence'ten numarala: nextval asla geri alınmaz
SELECT nextval('invoice_no_seq') AS no;

-- 4. and 5. The counter row.
-- name: lock_counter
-- why: lock the counter row: every other worker waits here until this invoice is done
-- why-tr: sayaç satırını kilitle: diğer her worker bu fatura bitene kadar burada bekler
SELECT next_no AS no FROM invoice_sequences WHERE series = 'A' FOR UPDATE;

-- name: advance_counter
-- why: the integrator accepted: move the counter on, in the same transaction
-- why-tr: entegratör kabul etti: sayacı aynı transaction içinde ilerlet
UPDATE invoice_sequences SET next_no = next_no + 1 WHERE series = 'A';

-- 5. JIT reservation: take the next number only if the invoice has none yet.
-- name: reserve
-- why: reserve the next number in a short transaction of its own, just before the call
-- why-tr: bir sonraki numarayı çağrıdan hemen önce, kendi kısa transaction'ında ayır
UPDATE invoice_sequences SET next_no = next_no + 1 WHERE series = 'A' RETURNING next_no - 1 AS no;

-- name: mark_sending
-- why: record the number on the invoice and mark it SENDING before calling out
-- why-tr: dışarıyı çağırmadan önce numarayı faturaya yaz ve SENDING olarak işaretle
UPDATE invoices SET reserved_no = :no, status = 'SENDING', attempts = attempts + 1, updated_at = now()
 WHERE invoice_id = :invoice_id;

-- name: record_sent
-- why: record the number as issued; the unique key refuses a second use
-- why-tr: numarayı verilmiş olarak kaydet; unique key ikinci kullanımı reddeder
INSERT INTO outgoing_invoices (series, invoice_no, invoice_id) VALUES ('A', :no, :invoice_id);

-- name: mark
-- why: record the invoice's new status
-- why-tr: faturanın yeni durumunu kaydet
UPDATE invoices SET status = :status, updated_at = now() WHERE invoice_id = :invoice_id;

-- A user corrects a rejected invoice's tax number; it goes back to the queue with its number.
-- name: correct_and_requeue
-- why: a user corrects the tax number: back to the queue, with its number
-- why-tr: bir kullanıcı vergi numarasını düzeltir: numarasıyla birlikte kuyruğa geri
UPDATE invoices SET tax_number = '0000000000', status = 'QUEUED', updated_at = now() WHERE invoice_id = :invoice_id;

-- Orphan recovery: invoices stuck in SENDING longer than the threshold.
-- name: stuck_sending
-- why: find invoices stuck in SENDING longer than the threshold
-- why-tr: eşikten uzun süredir SENDING'de takılı faturaları bul
SELECT invoice_id, reserved_no FROM invoices
 WHERE status = 'SENDING' AND updated_at < now() - make_interval(secs => :threshold_s)
 ORDER BY invoice_id;

-- The audit's local side.
-- name: outgoing
SELECT invoice_no, invoice_id FROM outgoing_invoices WHERE series = 'A' ORDER BY invoice_no;

-- name: numbers_issued
SELECT greatest(
         (SELECT next_no - 1 FROM invoice_sequences WHERE series = 'A'),
         (SELECT coalesce(max(reserved_no), 0) FROM invoices),
         (SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM invoice_no_seq)) AS high;

-- name: statuses
SELECT status, count(*) AS invoices FROM invoices GROUP BY status ORDER BY status;
