-- "100 concurrent decrements must remove exactly 100" (seed 000).
-- Book 1 has :stock copies; :requests "buy one" requests arrive at once, each
-- on its own connection.

-- name: set_stock
UPDATE stock_items SET quantity_on_hand = :stock WHERE book_id = 1;

-- Read-modify-write: read, compute stock - 1 in the application, write it back.
-- name: read
-- why: read the stock; the request computes stock - 1 itself
-- why-tr: stoğu oku; istek stok - 1'i kendisi hesaplar
SELECT quantity_on_hand FROM stock_items WHERE book_id = 1;

-- name: write
-- why: write the value computed from the read, whatever the row holds now
-- why-tr: okumadan hesaplanan değeri yaz, satırda şu an ne olursa olsun
UPDATE stock_items SET quantity_on_hand = :new_quantity WHERE book_id = 1;

-- The atomic guard: rows affected decides the sale (1 sold, 0 sold out).
-- name: buy_one
-- why: decrement only while stock remains: 1 row affected = sold, 0 = sold out
-- why-tr: yalnızca stok varken azalt: 1 satır etkilendi = satıldı, 0 = tükendi
UPDATE stock_items SET quantity_on_hand = quantity_on_hand - 1
 WHERE book_id = 1 AND quantity_on_hand >= 1;

-- name: stock
SELECT quantity_on_hand FROM stock_items WHERE book_id = 1;

