//! English texts.
use super::{ScenarioText, Texts, Ui, VariantText};

pub static TEXTS: Texts = Texts {
    ui: Ui {
        col_scenario: "scenario",
        col_summary: "summary",
        col_variants: "variants",
        col_variant: "variant",
        col_expected: "expected",
        col_observed: "observed",
        col_anomaly: "anomaly",
        col_verdict: "verdict",
        col_t_ms: "t ms",
        verdict_ok: "as documented",
        verdict_not: "NOT as documented",
        verdict_skipped: "skipped",
        yes: "yes",
        no: "no",
        skipped: "skipped",
        note: "note",
        metrics: "metrics",
        why: "why",
        scenario_footer: "{scenario} on PostgreSQL {version} ({ms} ms)",
        all_summary: "Summary: PostgreSQL {version}, {variants} variants, {ok} as documented ({ms} ms)",
        error: "error",
        interrupted: "interrupted: the sessions are closed and lab's objects removed",
        step_next: "next: session {session} runs",
        step_prompt: "[Enter] run it   [s Enter] run the rest of this variant without stopping",
        step_skipping: "running the rest of this variant without stopping",
        step_needs_terminal: "--step waits for Enter before each step, so it needs a terminal on stdin; run it without --step or from a terminal",
        step_begin: "start a transaction",
        step_commit: "make the transaction's changes visible and release its locks",
        step_rollback: "undo the transaction and release its locks",
        step_other: "the scenario's next step",
        server_running: "PostgreSQL {version} is running (ready in {ms} ms), with the lab schema \"{schema}\".",
        server_run_against: "Run scenarios against it with",
        server_stop: "Stop with Ctrl-C.",
        server_stopped: "server stopped and removed",
        locks_title: "lab sessions on PostgreSQL {version} at {time} (every {every} s; Ctrl-C to stop)",
        locks_none: "no lab session is connected",
        locks_needs_server: "lab locks watches a running server: give it --database-url (the one `lab server` prints) or set DATABASE_URL",
        col_pid: "pid",
        col_session: "session",
        col_state: "state",
        col_wait_event: "wait event",
        col_blocked_by: "blocked by",
        col_lock_mode: "lock mode",
        col_query: "statement",
        step_waiting: "waiting for a lock held or queued by {who}",
        step_after_waiting: "after waiting {ms} ms: ",
        step_commit_rolled_back: "ROLLBACK (the transaction had failed, so COMMIT rolled it back)",
        retry_again: "attempt {attempt} failed with {code}; rolling back, retrying the whole transaction after {ms} ms",
        retry_exhausted: "attempt {attempt} failed with {code}; no attempts left",
        col_waiting: "waiting",
    },
    scenarios: SCENARIOS,
    say: SAY,
};

pub static SAY: &[(&str, &str)] = &[
    ("any.waited_for", "waited for"),
    ("any.did_not_wait_for", "did not wait for"),
    ("lu.rmw.ok", "B's UPDATE succeeded; both committed; final {q}"),
    ("lu.rmw.err", "B's UPDATE failed with {code} ({message}); final {q}"),
    (
        "lu.atomic",
        "B {waited} A; B's UPDATE affected {rows} row(s); final {q}",
    ),
    ("lu.sfu", "B {waited} A, then read {qb}; final {q}"),
    (
        "lu.optimistic",
        "A's versioned UPDATE affected {a} row, B's {b}; final {q}",
    ),
    (
        "lu.token",
        "updated_at was {stamp} before and after A's save; B's check passed ({b} row); A's address {fate}",
    ),
    ("lu.token.lost", "was overwritten"),
    ("lu.token.kept", "survived"),
    (
        "lu.merge",
        "row-wide version: B's save affected {rows} row(s){needless}; per-field checks: both changes {landed}",
    ),
    ("lu.merge.needless", " (a needless conflict)"),
    ("lu.merge.landed", "landed"),
    ("lu.merge.not_landed", "did not both land"),
    ("ws.inserted", "{who} inserted{tries}"),
    ("ws.saw", "{who} saw {n} pending, inserted nothing{tries}"),
    ("ws.failed", "{who} failed with {code} at {stmt}{tries}"),
    ("ws.attempt", " (attempt {n})"),
    ("ws.rule", "{a}; {b}; {pending} pending for customer {customer}"),
    ("ws.part", "{part}: {a}, {b}{shared}"),
    ("ws.no_shared_page", " (no shared index page)"),
    ("ws.shared_page", " (both hold index page {pages})"),
    ("fk.ok", "B's INSERT {waited} and completed"),
    ("fk.waited_for_a", "waited for A"),
    ("fk.did_not_wait", "did not wait"),
    (
        "fk.err",
        "B's INSERT waited {ms} ms, then failed with {code}: {message}",
    ),
    (
        "dl.victim",
        "{victim} was cancelled with 40P01 after waiting {ms} ms (deadlock_timeout {timeout} ms); its COMMIT rolled back; the other committed",
    ),
    ("dl.none", "no session failed"),
    (
        "dl.same",
        "B {waited} A; both committed; books 1 and 2 reserved {r1} and {r2} times",
    ),
    ("nw.failed", "B failed after {ms} ms with {code}: {message}"),
    ("nw.got_row", "B got the row after {ms} ms"),
    ("nw.rows", "B got {rows} row(s) after {ms} ms, no error"),
    (
        "al.xact",
        "{winners} ran, {skipped} skipped; after COMMIT the next run {got} the lock",
    ),
    ("al.got", "got"),
    ("al.did_not_get", "did not get"),
    (
        "al.pooled",
        "the next run on another connection was {first}; after the pool reset it {second}",
    ),
    ("al.not_skipped", "not skipped"),
    ("al.skipped_idle", "skipped though nothing ran"),
    ("al.ran", "ran"),
    ("al.skipped_again", "was skipped again"),
    ("dq.queue", "B waited {b} ms for A; C was blocked by {by} for {c} ms"),
    ("dq.nobody", "nobody"),
    (
        "dq.retry",
        "B's first ALTER {first}; C waited {c} ms; B {done} after {n} attempt(s)",
    ),
    ("dq.first_ok", "succeeded"),
    ("dq.first_failed", "failed with {code} after the lock_timeout"),
    ("dq.done", "succeeded"),
    ("dq.not_done", "still failed"),
    ("rc.ok", "B's DELETE deleted {n} row(s); hits is now {hits}"),
    ("rc.err", "B's DELETE failed with {code}: {message}"),
    (
        "to.lock",
        "B waited {ms} ms and failed with {code}; B holds {locks} lock(s) after ROLLBACK",
    ),
    ("to.update_ok", "B's UPDATE succeeded"),
    (
        "to.statement",
        "B's statement was cancelled with {code} after {ms} ms; the aborted transaction held {locks} lock(s); A {waited} B; B's next statement {next}",
    ),
    ("to.next_failed", "failed with {code}"),
    ("to.next_ok", "succeeded"),
    ("to.statement_ok", "B's statement completed"),
    ("to.ended", "A waited {ms} ms until the server ended B; {seen}"),
    ("to.seen_ok", "B's next statement succeeded"),
    ("to.seen", "B's next statement: {what}"),
    (
        "qu.result",
        "{total} processed by {workers} worker(s), {dups} duplicates, {lost} lost; {elapsed} ms against an ideal {ideal} ms (efficiency {eff}); at most {par} batch(es) in parallel",
    ),
    (
        "sr.rmw",
        "{requests} requests each read {stock}; {sold} \"sold\"; final stock {final}: {lost} decrement(s) lost",
    ),
    (
        "sr.guard",
        "{sold} sold, {rejected} rejected; final stock {final} (from {stock})",
    ),
    (
        "sr.oversell",
        "stock {stock}, {requests} requests: read-modify-write sold {naive} ({over} oversold); the atomic guard sold {guarded} and rejected {rejected}",
    ),
    (
        "se.result",
        "final price {price} at source version {version}; {dropped} stale event(s) dropped",
    ),
    (
        "in.audit",
        "{issued} numbers issued; {dups} duplicate(s); gaps {gaps}; {unknown} unknown locally; {rate} invoices/s with {workers} worker(s) ({par} in parallel at most)",
    ),
    ("in.none", "none"),
    (
        "in.priority",
        "first in, first out: {fifo_n} invoices went before it ({fifo_ms} ms); with priority: {prio_n} ({prio_ms} ms)",
    ),
    ("en.skipped", "skipped: {reason}"),
    ("en.differs", "{observed} — differs from the documentation: {failures}"),
];

pub static SCENARIOS: &[ScenarioText] = &[
    ScenarioText {
        name: "lost-update",
        summary: "two clerks remove one copy of the same book at once (36 on hand, 34 must remain)",
        variants: &[
            VariantText {
                name: "read-committed",
                expected: "both read 36 and write 35; both commit; final 35: one decrement is lost (anomaly)",
                explain: "Each statement in READ COMMITTED sees the latest committed data, but the new value was computed in the application from an earlier read: B writes 35 over A's 35 without knowing. Fix: let the database compute (quantity_on_hand - 1), lock the row while reading (FOR UPDATE), or check a version.",
            },
            VariantText {
                name: "repeatable-read",
                expected: "B's UPDATE fails with 40001 (concurrent update); final 35 after A alone; nothing lost silently",
                explain: "REPEATABLE READ gives the transaction one snapshot; updating a row another transaction changed after that snapshot is refused with 40001 instead of overwriting it. Nothing is lost, but the application must retry the whole transaction, its read included.",
            },
            VariantText {
                name: "atomic-update",
                expected: "B's `quantity_on_hand - 1` waits for A, then re-reads the committed row; final 34",
                explain: "The UPDATE takes the row lock; B's UPDATE waits for A, then READ COMMITTED re-reads the committed row version (EvalPlanQual) and subtracts 1 from 35. Letting the database do the arithmetic is the simplest fix.",
            },
            VariantText {
                name: "select-for-update",
                expected: "B's SELECT ... FOR UPDATE waits for A, then reads 35 and writes 34; final 34",
                explain: "FOR UPDATE takes the row lock when reading, so B's read waits until A commits and then returns the new value; the application computes from current data. Keep such locks short, never across a user's think time.",
            },
            VariantText {
                name: "updated-at-token",
                expected: "updated_at as the token: A's save within the same second leaves the stamp B read, so B's conditional save succeeds and silently overwrites A's address (anomaly)",
                explain: "A concurrency token must change on every write. A second-precision timestamp stamped by the application can be the same before and after a write in the same second, so the conditional UPDATE still matches and overwrites. Use an integer version (or xmin).",
            },
            VariantText {
                name: "field-merge",
                expected: "A corrects the address, B writes a note: one row-wide version gives B a needless conflict; per-field checks let both changes land",
                explain: "A row-wide version makes any two edits conflict, even of different fields. Sending only the changed fields, each checked against the value originally read, lets independent edits both land and still catches real conflicts.",
            },
            VariantText {
                name: "optimistic-version",
                expected: "A's versioned UPDATE affects 1 row, B's affects 0: the conflict is reported with B's intent, what B read and what the row holds now; final 35",
                explain: "The version read with the row travels with the form and the write checks it. Rows affected decides: 0 means someone changed the row since it was read. Show the user what they wanted to write, what they read and what the row holds now.",
            },
        ],
    },
    ScenarioText {
        name: "write-skew",
        summary: "two requests each check \\\"no Pending order yet\\\" for a customer, then both insert one",
        variants: &[
            VariantText {
                name: "read-committed",
                expected: "both see 0 pending and insert: 2 pending orders for the customer (anomaly)",
                explain: "Both checks run before either insert, and neither insert touches a row the other read, so nothing blocks and nothing conflicts: the rule 'at most one pending order' is broken.",
            },
            VariantText {
                name: "repeatable-read",
                expected: "both insert too: no row is written by both, so snapshot isolation has nothing to detect; 2 pending (anomaly)",
                explain: "Snapshot isolation detects only write-write conflicts on the same row. The two inserts are different rows, so both commit: write skew.",
            },
            VariantText {
                name: "serializable",
                expected: "one commits, the other fails with 40001 (read/write dependencies among transactions); 1 pending",
                explain: "SSI tracks read/write dependencies with predicate (SIRead) locks that never block; when two transactions form a dangerous cycle, one is cancelled with 40001. Correct results need retries.",
            },
            VariantText {
                name: "serializable-retry",
                expected: "the failed request retries the whole transaction after a back-off, sees the pending order and inserts nothing; 1 pending",
                explain: "The failed request runs its whole transaction again after a randomised back-off; its new check sees the committed pending order, so it inserts nothing. Retry 40001 and 40P01 only, and run the read again.",
            },
            VariantText {
                name: "serializable-no-index",
                expected: "different customers under SERIALIZABLE: with ix_orders_customer_id both commit; neighbours on one index leaf page conflict (40001); without the index the relation-level predicate lock fails an unrelated request (40001)",
                explain: "Predicate locks follow the plan: a sequential scan locks the whole relation, so every insert conflicts with every check; an index scan locks the leaf pages it read, so only neighbouring keys conflict. The right index keeps false positives rare.",
            },
        ],
    },
    ScenarioText {
        name: "fk-blocking",
        summary: "A locks a book to change its price while B adds an order item for it (the FK check takes FOR KEY SHARE)",
        variants: &[
            VariantText {
                name: "for-update",
                expected: "B's INSERT waits on the FK check's FOR KEY SHARE, then fails with 55P03 at lock_timeout (CONTEXT names FOR KEY SHARE)",
                explain: "The foreign key check on order_items takes FOR KEY SHARE on the book. FOR UPDATE conflicts with it, so adding an order item waits for the price change. Lock with FOR NO KEY UPDATE when the key is not changed.",
            },
            VariantText {
                name: "for-no-key-update",
                expected: "B's INSERT completes without waiting: FOR NO KEY UPDATE does not conflict with FOR KEY SHARE",
                explain: "FOR NO KEY UPDATE, the mode an ordinary UPDATE takes, does not conflict with FOR KEY SHARE: orders for the book go through while its price is being changed.",
            },
        ],
    },
    ScenarioText {
        name: "deadlock",
        summary: "A and B each update two stock rows; in opposite orders the deadlock detector cancels one",
        variants: &[
            VariantText {
                name: "reverse-order",
                expected: "after deadlock_timeout one fails with 40P01 (DETAIL: who waits for whom); its COMMIT comes back as ROLLBACK; the other commits",
                explain: "Each session holds one row and waits for the other's. After deadlock_timeout the waiting backend runs the deadlock detector, finds the cycle and cancels a transaction (40P01); that transaction is aborted, so its COMMIT rolls back. Lock rows in one agreed order (e.g. by book_id).",
            },
            VariantText {
                name: "same-order",
                expected: "both lock in book_id order: B simply waits for A; no deadlock; both commit",
                explain: "Locking in the same order turns the cycle into a queue: B simply waits for A, then goes on.",
            },
        ],
    },
    ScenarioText {
        name: "nowait",
        summary: "A holds an order FOR UPDATE (someone is editing it); B asks for it without waiting",
        variants: &[
            VariantText {
                name: "nowait",
                expected: "B's FOR UPDATE NOWAIT fails at once with 55P03: \\\"this record is being edited by someone else\\\"",
                explain: "NOWAIT turns a row lock that cannot be taken at once into an error (55P03) instead of a wait: the right tool for 'someone else is editing this record'.",
            },
            VariantText {
                name: "skip-locked",
                expected: "B's FOR UPDATE SKIP LOCKED returns no rows, at once, without error",
                explain: "SKIP LOCKED silently passes over rows it cannot lock at once: right for a queue, wrong for the one record a user asked for.",
            },
        ],
    },
    ScenarioText {
        name: "advisory-lock",
        summary: "three instances start the nightly stock sync together; an advisory lock lets one run",
        variants: &[
            VariantText {
                name: "try-xact-lock",
                expected: "exactly one instance gets pg_try_advisory_xact_lock and runs, two skip; the lock goes with the transaction, so the next run gets it",
                explain: "An advisory lock is a lock on a number the application chooses. pg_try_advisory_xact_lock never waits and disappears with the transaction, even if the connection dies: the one that gets it runs, the others skip.",
            },
            VariantText {
                name: "session-lock-pooled",
                expected: "a session-level lock left behind on a pooled connection skips the next run although nothing runs; after the pool's reset (pg_advisory_unlock_all) the next run goes ahead",
                explain: "A session-level advisory lock lives as long as the connection. In a pool the connection outlives the job, so the lock does too and skips the next run. Unlock explicitly, reset pooled connections (DISCARD ALL), or use the transaction-level lock.",
            },
        ],
    },
    ScenarioText {
        name: "ddl-lock-queue",
        summary: "A's long report holds books; B's ALTER TABLE queues for ACCESS EXCLUSIVE; C's plain SELECT queues behind B",
        variants: &[
            VariantText {
                name: "no-lock-timeout",
                expected: "C (which does not conflict with A) is blocked by B, which is blocked by A, until the report ends",
                explain: "ALTER TABLE needs ACCESS EXCLUSIVE and waits behind the report's ACCESS SHARE. Lock requests queue in order, so C's harmless read waits behind the ALTER: one migration stops all traffic on the table.",
            },
            VariantText {
                name: "lock-timeout-retry",
                expected: "B sets a short lock_timeout, fails with 55P03 and pauses: C waits at most that long; B's retry succeeds once A ends",
                explain: "With a short lock_timeout the migration gives up its place in the queue, readers go on, and it retries later. Always set lock_timeout for migrations.",
            },
        ],
    },
    ScenarioText {
        name: "rc-recheck",
        summary: "hits = hits + 1 against DELETE ... WHERE hits = 10 (the PostgreSQL manual's example)",
        variants: &[
            VariantText {
                name: "read-committed",
                expected: "B's DELETE waits for A, re-checks the updated row (hits = 11) and deletes nothing (anomaly)",
                explain: "The waiting DELETE re-evaluates its WHERE against the row version A committed (EvalPlanQual). hits is now 11, so nothing matches, though hits = 10 held before and after from each session's own point of view.",
            },
            VariantText {
                name: "repeatable-read",
                expected: "B's DELETE waits for A, then fails with 40001 instead of silently deleting nothing",
                explain: "Under REPEATABLE READ the DELETE may not act on a row changed after its snapshot: it fails with 40001 and the application retries, instead of silently deleting nothing.",
            },
        ],
    },
    ScenarioText {
        name: "timeouts",
        summary: "lock_timeout, statement_timeout, idle_in_transaction_session_timeout and transaction_timeout",
        variants: &[
            VariantText {
                name: "lock-timeout",
                expected: "B's UPDATE waits for A's row lock, then fails with 55P03; after ROLLBACK B holds no locks",
                explain: "lock_timeout bounds how long one statement waits for a lock (55P03). The statement fails; the transaction must roll back, which releases what it held.",
            },
            VariantText {
                name: "statement-timeout",
                expected: "B's long statement is cancelled with 57014; the error aborts B's transaction at once, which frees its row lock (A does not wait), but B must still ROLLBACK (until then 25P02)",
                explain: "statement_timeout cancels a statement that runs too long (57014). The error aborts the transaction at once, releasing its locks; the session must still ROLLBACK (25P02 until then).",
            },
            VariantText {
                name: "idle-in-transaction",
                expected: "B, idle in a transaction holding a row lock, is terminated by the server; A, waiting on that row, goes on; B's next statement finds the connection gone",
                explain: "idle_in_transaction_session_timeout ends a session that sits in an open transaction, the usual cause of locks held for ever and of VACUUM held back. The server terminates it and its locks are released.",
            },
            VariantText {
                name: "transaction-timeout",
                expected: "PostgreSQL 17+: B's transaction is ended by the server at transaction_timeout, freeing the row A waits for (skipped on older servers)",
                explain: "transaction_timeout (PostgreSQL 17 and later) bounds a whole transaction, busy or idle; at the limit the server ends the session and its locks go.",
            },
        ],
    },
    ScenarioText {
        name: "queue",
        summary: "outbox relay: workers take batches of messages with FOR UPDATE or FOR UPDATE SKIP LOCKED",
        variants: &[
            VariantText {
                name: "for-update",
                expected: "no duplicates, nothing lost, but workers queue on the same rows: batches run one at a time (elapsed near ceil(messages/batch) x work)",
                explain: "Every worker asks for the same first rows and all but one wait on row locks. When the holder commits, the waiters re-check the rows (EvalPlanQual), skip the processed ones and lock the next: the work runs one batch at a time.",
            },
            VariantText {
                name: "skip-locked",
                expected: "no duplicates, nothing lost, work spread over all workers, batches in parallel (efficiency near 1)",
                explain: "SKIP LOCKED makes each worker pass over rows another worker holds and take the next free batch: no waiting, no duplicates, the work spread over all workers.",
            },
        ],
    },
    ScenarioText {
        name: "stock-race",
        summary: "R concurrent \\\"buy one\\\" requests against stock S (defaults 100 and 100): exactly R must be removed",
        variants: &[
            VariantText {
                name: "read-modify-write",
                expected: "every request reads S and writes S - 1: all R \\\"succeed\\\" but the stock drops by 1; R - 1 decrements lost (anomaly)",
                explain: "Every request computed stock - 1 from the same read; the writes queued on the row lock, but each wrote its own stale value. The race is in the application, between its read and its write.",
            },
            VariantText {
                name: "atomic-guard",
                expected: "UPDATE ... SET stock = stock - 1 WHERE stock >= 1: exactly R sold, final S - R",
                explain: "One statement reads and writes under the row lock, and its WHERE guard re-checks the stock after waiting: rows affected says whether this request got a copy.",
            },
            VariantText {
                name: "oversell",
                expected: "stock 90, 100 requests: read-modify-write sells more than 90; the atomic guard sells exactly 90 and rejects 10",
                explain: "Read-modify-write checks the stock on a stale read, so it sells copies that are gone; the guarded UPDATE re-checks under the lock and rejects the excess.",
            },
        ],
    },
    ScenarioText {
        name: "stale-event",
        summary: "the ERP's price changes v1 and v2 arrive out of order (v2 first)",
        variants: &[
            VariantText {
                name: "no-version-check",
                expected: "the last delivered message wins: the stale v1 overwrites v2 (anomaly)",
                explain: "Messages arrive in any order; applying each one blindly lets a delayed old message bring back old data.",
            },
            VariantText {
                name: "version-check",
                expected: "UPDATE ... WHERE source_version < incoming: v2 applies, the stale v1 is dropped and counted",
                explain: "The version travels in the message and the update applies only if it is newer than what the row holds; older messages are dropped and counted.",
            },
        ],
    },
    ScenarioText {
        name: "invoice-numbering",
        summary: "gapless invoice numbers while parallel workers send to a slow, failing integrator",
        variants: &[
            VariantText {
                name: "max-plus-one",
                expected: "MAX(invoice_no) + 1 at send time: two workers take the same number; the integrator rejects the second as duplicate (anomaly)",
                explain: "MAX()+1 reads what others have not written yet: two workers see the same maximum and take the same number; the integrator rejects the second as a duplicate.",
            },
            VariantText {
                name: "enqueue-time",
                expected: "numbers fixed when queued: invoices rejected for good or cancelled in the queue leave holes (anomaly)",
                explain: "A number fixed when the invoice is queued is lost when the invoice is later rejected for good or cancelled: holes in the series.",
            },
            VariantText {
                name: "sequence",
                expected: "nextval() at send time: a failed send rolls back but the value is gone: gaps (anomaly)",
                explain: "nextval() is never rolled back, by design: every failed send burns a number. Sequences are for keys, not for gapless legal numbers.",
            },
            VariantText {
                name: "lock-over-call",
                expected: "the counter row locked FOR UPDATE across the external call: no duplicates, no gaps, but one invoice per integrator latency whatever the number of workers",
                explain: "Holding the counter row lock across the external call keeps the series gapless but puts every worker behind one integrator call: about one invoice per latency.",
            },
            VariantText {
                name: "jit-reservation",
                expected: "a short transaction reserves the number just before the call; failures keep it and retries reuse it: no duplicates, no gaps, sends in parallel",
                explain: "A short transaction reserves the number just before the call and commits; the call runs with no lock held; a failed invoice keeps its number and its retries reuse it.",
            },
            VariantText {
                name: "orphan-recovery",
                expected: "jit-reservation with crashes after the integrator accepted (and before it was called): the sweep asks the integrator, repairs or resends with the same number behind a circuit breaker; no duplicates, no gaps",
                explain: "When a worker dies between the integrator's yes and the local record, the invoice stays in SENDING with its number. The sweep asks the integrator for that number: repair if it is there, resend with the same number if not; a circuit breaker stops hammering an integrator that keeps failing.",
            },
            VariantText {
                name: "priority",
                expected: "one interactive invoice queued behind a scheduler batch: sent within the first batches with priority ordering, after the whole batch without it",
                explain: "With priority in the dequeue order an interactive invoice overtakes a scheduler batch; the numbering does not change, only the order.",
            },
        ],
    },
];
