-- Row lock modes against a foreign key (seed 003, "Row Lock Modları").
-- A locks book 1 to change its price; B adds an order item for book 1. The
-- foreign key check on order_items takes FOR KEY SHARE on the book: it
-- conflicts with FOR UPDATE, not with FOR NO KEY UPDATE.

-- name: lock_for_update
SELECT book_id, price FROM books WHERE book_id = 1 FOR UPDATE;

-- name: lock_for_no_key_update
SELECT book_id, price FROM books WHERE book_id = 1 FOR NO KEY UPDATE;

-- name: set_lock_timeout
SET lock_timeout = :timeout;

-- name: add_item
INSERT INTO order_items (order_id, book_id, quantity, unit_price) VALUES (1, 1, 1, 10.00);

-- name: change_price
UPDATE books SET price = 45.00 WHERE book_id = 1;
