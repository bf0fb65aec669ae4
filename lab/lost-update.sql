-- Lost update (seed 003 "Önce Tahmin Et", seed 000).
-- Book 1 has 36 copies on hand. Two clerks, sessions A and B, each remove one
-- copy at the same time; A commits first. The correct result is 34.
--
-- By hand: open two psql sessions with search_path set to the lab schema
-- (psql "$DATABASE_URL" -c 'SET search_path TO lab' ... or SET it first), set
-- the variables with \set (e.g. \set new_quantity 35) and run the named
-- statements in the order `lab lost-update` prints in its timeline.

-- name: begin_read_committed
BEGIN ISOLATION LEVEL READ COMMITTED;

-- name: begin_repeatable_read
BEGIN ISOLATION LEVEL REPEATABLE READ;

-- name: read
-- the application reads the stock and computes the new value itself
SELECT quantity_on_hand FROM stock_items WHERE book_id = 1;

-- name: write
UPDATE stock_items SET quantity_on_hand = :new_quantity WHERE book_id = 1;

-- name: atomic_decrement
-- fix 1: let the database compute; a waiting UPDATE re-reads the committed row
UPDATE stock_items SET quantity_on_hand = quantity_on_hand - 1 WHERE book_id = 1;

-- name: read_for_update
-- fix 2: lock the row while reading; the other clerk waits here
SELECT quantity_on_hand FROM stock_items WHERE book_id = 1 FOR UPDATE;

-- name: read_versioned
-- fix 3: optimistic locking; the version travels with what was read
SELECT quantity_on_hand, version FROM stock_items WHERE book_id = 1;

-- name: write_if_version
-- rows affected decides: 1 = written, 0 = someone changed the row since it was read
UPDATE stock_items SET quantity_on_hand = :new_quantity, version = version + 1
 WHERE book_id = 1 AND version = :read_version;

-- name: current
SELECT quantity_on_hand, version FROM stock_items WHERE book_id = 1;

-- name: audit
SELECT changed_by AS session, column_name, old_value, new_value,
       to_char(changed_at, 'HH24:MI:SS.MS') AS changed_at
  FROM audit_log WHERE table_name = 'stock_items' AND row_id = '1' ORDER BY audit_id;

-- The updated_at pitfall: the order form uses updated_at (second precision,
-- stamped from the application's clock) as its concurrency token.
-- name: read_order
SELECT delivery_address, note, updated_at FROM orders WHERE order_id = 1;

-- name: save_order_if_unchanged
UPDATE orders SET delivery_address = :address, note = :note, updated_at = :now
 WHERE order_id = 1 AND updated_at = :read_stamp;

-- Field-level merge (seed 000's opening story): A corrects the address, B writes a note.
-- name: read_order_versioned
SELECT delivery_address, note, version FROM orders WHERE order_id = 1;

-- name: save_address_row_version
UPDATE orders SET delivery_address = :address, version = version + 1
 WHERE order_id = 1 AND version = :read_version;

-- name: save_note_row_version
UPDATE orders SET note = :note, version = version + 1
 WHERE order_id = 1 AND version = :read_version;

-- name: save_address_if_field_unchanged
UPDATE orders SET delivery_address = :address, version = version + 1
 WHERE order_id = 1 AND delivery_address IS NOT DISTINCT FROM :read_address;

-- name: save_note_if_field_unchanged
UPDATE orders SET note = :note, version = version + 1
 WHERE order_id = 1 AND note IS NOT DISTINCT FROM :read_note;

-- name: reset_order
UPDATE orders SET delivery_address = 'Kadikoy, Istanbul', note = NULL, version = 1 WHERE order_id = 1;
