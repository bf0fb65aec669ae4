-- Out-of-order events (seed 000, "Veri tek veritabanında değilse").
-- The ERP publishes price changes carrying its version of the book: v1 (40.00),
-- then v2 (45.00). They arrive out of order: v2 first, v1 late.

-- name: apply_blindly
UPDATE books SET price = :price, source_version = :version WHERE book_id = 1;

-- name: apply_if_newer
UPDATE books SET price = :price, source_version = :version
 WHERE book_id = 1 AND source_version < :version;

-- name: book
SELECT price, source_version FROM books WHERE book_id = 1;
