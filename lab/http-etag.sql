-- The lost update one layer up (seed 000): the Bookstore's HTTP API, as
-- `lab http-etag` serves it. A book is sent with its row version as a strong
-- ETag ("v<version>"); a PUT carries it back in If-Match and the write is ONE
-- statement guarded by that version: rows affected decides (1 row: written,
-- 200 with the new ETag; 0 rows: 412 Precondition Failed).
--
-- Follow it in psql (after lab/schema.sql and lab/seed.sql):
--   \set id 1
--   \set price 45.00
--   \set stock 35
--   \set versions 1
-- then run a statement below; run put_if_match twice: the second finds
-- version 2 and changes no row, which the API answers with 412.

-- name: get_book
-- why: the book and its version, which the response carries as its ETag
-- why-tr: kitap ve sürümü; yanıt sürümü ETag olarak taşır
SELECT b.book_id, b.title, b.price, s.quantity_on_hand AS stock, b.version
  FROM books b JOIN stock_items s USING (book_id)
 WHERE b.book_id = :id;

-- A PUT without a precondition: whatever the row holds now is overwritten.
-- name: put_unconditional
-- why: write the client's copy whatever the row holds now (no precondition)
-- why-tr: satırda şu an ne olursa olsun istemcinin kopyasını yaz (önkoşul yok)
WITH b AS (
    UPDATE books SET price = :price, version = version + 1
     WHERE book_id = :id
    RETURNING book_id, price, version
), s AS (
    UPDATE stock_items SET quantity_on_hand = :stock
      FROM b WHERE stock_items.book_id = b.book_id
    RETURNING stock_items.quantity_on_hand
)
SELECT b.price, s.quantity_on_hand AS stock, b.version FROM b, s;

-- If-Match: the write happens only at a version the client has seen.
-- name: put_if_match
-- why: write only if the row is still at a version the client's If-Match names: 0 rows = 412
-- why-tr: yalnızca satır hâlâ istemcinin If-Match'te verdiği sürümdeyse yaz: 0 satır = 412
WITH b AS (
    UPDATE books SET price = :price, version = version + 1
     WHERE book_id = :id AND version IN (:versions)
    RETURNING book_id, price, version
), s AS (
    UPDATE stock_items SET quantity_on_hand = :stock
      FROM b WHERE stock_items.book_id = b.book_id
    RETURNING stock_items.quantity_on_hand
)
SELECT b.price, s.quantity_on_hand AS stock, b.version FROM b, s;

-- If-None-Match: * on a PUT: create only if the book does not exist yet.
-- name: create_if_absent
-- why: create the book only if nobody has: 0 rows (the key exists) = 412
-- why-tr: kitabı yalnızca kimse oluşturmadıysa oluştur: 0 satır (anahtar var) = 412
WITH b AS (
    INSERT INTO books (book_id, title, price) VALUES (:id, :title, :price)
    ON CONFLICT (book_id) DO NOTHING
    RETURNING book_id, title, price, version
), s AS (
    INSERT INTO stock_items (book_id, quantity_on_hand)
    SELECT book_id, :stock FROM b
    RETURNING quantity_on_hand
)
SELECT b.title, b.price, s.quantity_on_hand AS stock, b.version FROM b, s;

-- What the writes left behind (lab reads it after the variant).
-- name: audit
-- why: every write the API made to the book, old and new values
-- why-tr: API'nin kitaba yaptığı her yazma, eski ve yeni değerleriyle
SELECT column_name, old_value, new_value
  FROM audit_log
 WHERE row_id = :id::text AND table_name IN ('books', 'stock_items')
 ORDER BY audit_id;
