-- The live lock view (`lab locks`): lab's sessions on this server, what they
-- wait for and who blocks them. Runnable by hand: psql -f lab/locks.sql
-- lab's own connections are left out: its control connections, and a setup
-- connection (a spec's setup and teardown, the shell's \setup) while idle.
-- A statement lab sent for itself (marked /* lab */: its handshake, the
-- level read back after BEGIN) is not shown as the session's statement.

-- name: all_sessions
-- Every client's session (the room's psql windows too), lab's named as in lab_sessions.
SELECT a.pid,
       CASE WHEN a.application_name LIKE 'lab:%' THEN regexp_replace(a.application_name, '^lab:[^:]*:', '')
            ELSE coalesce(nullif(a.application_name, ''), a.usename) END AS session,
       a.state,
       coalesce(a.wait_event_type || ': ' || a.wait_event, '') AS wait_event,
       pg_blocking_pids(a.pid) AS blocked_by,
       coalesce((SELECT string_agg(DISTINCT l.mode, ', ') FROM pg_locks l WHERE l.pid = a.pid AND NOT l.granted), '') AS lock_mode,
       CASE WHEN a.query LIKE '/* lab */%' THEN '' ELSE left(regexp_replace(a.query, '\s+', ' ', 'g'), 200) END AS query,
       coalesce((SELECT round(extract(epoch FROM clock_timestamp() - min(l.waitstart)) * 1000)::bigint::text || ' ms'
                   FROM pg_locks l WHERE l.pid = a.pid AND NOT l.granted), '') AS waiting
  FROM pg_stat_activity a
 WHERE a.backend_type = 'client backend' AND a.pid <> pg_backend_pid()
   AND a.application_name NOT LIKE '%:control' AND a.application_name <> 'lab-locks'
   AND NOT (a.application_name LIKE 'lab:%:setup' AND a.state = 'idle')
 ORDER BY a.backend_start;

-- name: lab_sessions
SELECT a.pid,
       regexp_replace(a.application_name, '^lab:[^:]*:', '') AS session,
       a.state,
       coalesce(a.wait_event_type || ': ' || a.wait_event, '') AS wait_event,
       pg_blocking_pids(a.pid) AS blocked_by,
       coalesce((SELECT string_agg(DISTINCT l.mode, ', ') FROM pg_locks l WHERE l.pid = a.pid AND NOT l.granted), '') AS lock_mode,
       CASE WHEN a.query LIKE '/* lab */%' THEN '' ELSE left(regexp_replace(a.query, '\s+', ' ', 'g'), 200) END AS query,
       coalesce((SELECT round(extract(epoch FROM clock_timestamp() - min(l.waitstart)) * 1000)::bigint::text || ' ms'
                   FROM pg_locks l WHERE l.pid = a.pid AND NOT l.granted), '') AS waiting
  FROM pg_stat_activity a
 WHERE a.application_name LIKE 'lab:%' AND a.application_name NOT LIKE '%:control'
   AND NOT (a.application_name LIKE '%:setup' AND a.state = 'idle')
 ORDER BY a.backend_start;
