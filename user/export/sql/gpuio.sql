-- SPDX-License-Identifier: MIT
--
-- gpuio.sql — PerfettoSQL views over a gpuio .pftrace (docs/sql.md).
--
-- Load it into Perfetto's trace_processor, then query the gpuio_* views:
--
--   cat gpuio.sql my_query.sql > q.sql
--   trace_processor_shell -q q.sql run.pftrace                 (every result as CSV)
--   trace_processor_shell query -i -f gpuio.sql run.pftrace    (then an interactive shell)
--   trace_processor_shell --add-sql-package /usr/share/gpuio run.pftrace
--       > INCLUDE PERFETTO MODULE gpuio.gpuio;                  (as a module)
--   Perfetto UI: paste this file into the "Query (SQL)" page and run it.
--
-- Installed as $(PREFIX)/share/gpuio/gpuio.sql. It reads only what the
-- export writes (docs/export-schema.md): slices by category (vfs, block, gpu),
-- their args (debug annotations: the arg `path` is the key 'debug.path'),
-- the flow table (a call's arrows to its block requests), the thread and
-- process descriptors, and the thread_state table Perfetto builds from the
-- export's sched_switch / sched_waking events. Every view works on merged
-- traces (one machine per host: utid/upid and track ids are per machine).
--
-- Views (columns: docs/sql.md):
--   gpuio_file_calls       one row per VFS call slice (io_uring requests too)
--   gpuio_page_faults      one row per page_fault slice
--   gpuio_block_requests   one row per block request, with the call behind it
--   gpuio_gpu_activities   one row per kernel, memcpy and memset
--   gpuio_gpu_gaps         GPU idle gaps per (process, GPU), as gpuio report
--   gpuio_gpu_stream_gaps  idle gaps per (process, GPU, stream)
--   gpuio_thread_states    thread states, with what a blocked thread was in
--   gpuio_call_sites       calls and faults per line of the program and file (--stacks)
--   gpuio_cpu_samples      one row per on-CPU sample, its function and site
--   gpuio_cpu_functions    samples per function: where CPU time went
--
-- Statements are CREATE OR REPLACE: running the file twice (the UI) is fine.

-- ---------------------------------------------------------------------------
-- VFS calls and page faults
-- ---------------------------------------------------------------------------

-- Block requests per source slice (a call or a fault fans out to k requests).
CREATE OR REPLACE PERFETTO VIEW _gpuio_flow_blocks(
  slice_id JOINID(slice.id),
  block_requests LONG,
  block_bytes LONG
) AS
SELECT f.slice_out AS slice_id,
       COUNT(*) AS block_requests,
       SUM(extract_arg(b.arg_set_id, 'debug.bytes')) AS block_bytes
FROM flow f
JOIN slice b ON b.id = f.slice_in AND b.category = 'block'
GROUP BY f.slice_out;

-- The slices of category vfs with the thread and process they belong to:
-- a call or fault is on its thread's track; an io_uring request is on a lane
-- of its process (a process-scoped track), its submitter in the arg `tid`.
CREATE OR REPLACE PERFETTO VIEW _gpuio_vfs_slices(
  id ID(slice.id),
  ts TIMESTAMP,
  dur DURATION,
  name STRING,
  arg_set_id ARGSETID,
  track_id JOINID(track.id),
  utid JOINID(thread.id),
  upid JOINID(process.id),
  lane STRING
) AS
SELECT s.id, s.ts, s.dur, s.name, s.arg_set_id, s.track_id,
       COALESCE(tt.utid,
                (SELECT MAX(t2.utid) FROM thread t2
                 WHERE t2.upid = pt.upid
                   AND t2.tid = extract_arg(s.arg_set_id, 'debug.tid'))) AS utid,
       COALESCE(t.upid, pt.upid) AS upid,
       CASE WHEN pt.id IS NOT NULL THEN pt.name END AS lane
FROM slice s
LEFT JOIN thread_track tt ON tt.id = s.track_id
LEFT JOIN thread t ON t.utid = tt.utid
LEFT JOIN process_track pt ON pt.id = s.track_id
WHERE s.category = 'vfs';

-- One row per traced call (read, pread64, write, openat, fsync, …,
-- io_uring_read, recvfrom, …): who made it, on which file, what it moved.
CREATE OR REPLACE PERFETTO VIEW gpuio_file_calls(
  id ID(slice.id),
  ts TIMESTAMP,
  dur DURATION,
  end_ts TIMESTAMP,
  call STRING,
  path STRING,
  bytes LONG,
  requested LONG,
  offset LONG,
  fd LONG,
  cache_miss_pages LONG,
  errno LONG,
  error STRING,
  flags STRING,
  length LONG,
  ftype STRING,
  path2 STRING,
  peer STRING,
  proto STRING,
  messages LONG,
  io_uring_lane STRING,
  utid JOINID(thread.id),
  tid LONG,
  thread_name STRING,
  upid JOINID(process.id),
  pid LONG,
  process_name STRING,
  block_requests LONG,
  block_bytes LONG,
  site STRING,
  stack STRING,
  arg_set_id ARGSETID
) AS
SELECT v.id, v.ts, v.dur, v.ts + v.dur AS end_ts,
       v.name AS call,
       extract_arg(v.arg_set_id, 'debug.path') AS path,
       extract_arg(v.arg_set_id, 'debug.bytes') AS bytes,
       extract_arg(v.arg_set_id, 'debug.requested') AS requested,
       extract_arg(v.arg_set_id, 'debug.offset') AS offset,
       extract_arg(v.arg_set_id, 'debug.fd') AS fd,
       extract_arg(v.arg_set_id, 'debug.cache_miss_pages') AS cache_miss_pages,
       extract_arg(v.arg_set_id, 'debug.errno') AS errno,
       extract_arg(v.arg_set_id, 'debug.error') AS error,
       extract_arg(v.arg_set_id, 'debug.flags') AS flags,
       extract_arg(v.arg_set_id, 'debug.length') AS length,
       extract_arg(v.arg_set_id, 'debug.ftype') AS ftype,
       extract_arg(v.arg_set_id, 'debug.path2') AS path2,
       extract_arg(v.arg_set_id, 'debug.peer') AS peer,
       extract_arg(v.arg_set_id, 'debug.proto') AS proto,
       extract_arg(v.arg_set_id, 'debug.messages') AS messages,
       v.lane AS io_uring_lane,
       v.utid,
       COALESCE(t.tid, extract_arg(v.arg_set_id, 'debug.tid')) AS tid,
       t.name AS thread_name,
       v.upid,
       p.pid,
       p.name AS process_name,
       COALESCE(fb.block_requests, 0) AS block_requests,
       COALESCE(fb.block_bytes, 0) AS block_bytes,
       extract_arg(v.arg_set_id, 'debug.site') AS site,
       extract_arg(v.arg_set_id, 'debug.stack') AS stack,
       v.arg_set_id
FROM _gpuio_vfs_slices v
LEFT JOIN thread t ON t.utid = v.utid
LEFT JOIN process p ON p.upid = v.upid
LEFT JOIN _gpuio_flow_blocks fb ON fb.slice_id = v.id
WHERE v.name != 'page_fault';

-- One row per page_fault slice (a fault on a file mapping that made its
-- thread wait: major, or it read pages in, or it slept).
CREATE OR REPLACE PERFETTO VIEW gpuio_page_faults(
  id ID(slice.id),
  ts TIMESTAMP,
  dur DURATION,
  end_ts TIMESTAMP,
  path STRING,
  offset LONG,
  bytes LONG,
  pages LONG,
  readahead_offset LONG,
  major BOOL,
  slept BOOL,
  is_write BOOL,
  cut BOOL,
  utid JOINID(thread.id),
  tid LONG,
  thread_name STRING,
  upid JOINID(process.id),
  pid LONG,
  process_name STRING,
  block_requests LONG,
  block_bytes LONG,
  site STRING,
  stack STRING,
  arg_set_id ARGSETID
) AS
SELECT v.id, v.ts, v.dur, v.ts + v.dur AS end_ts,
       extract_arg(v.arg_set_id, 'debug.path') AS path,
       extract_arg(v.arg_set_id, 'debug.offset') AS offset,
       extract_arg(v.arg_set_id, 'debug.bytes') AS bytes,
       extract_arg(v.arg_set_id, 'debug.pages') AS pages,
       extract_arg(v.arg_set_id, 'debug.readahead_offset') AS readahead_offset,
       COALESCE(extract_arg(v.arg_set_id, 'debug.major'), 0) AS major,
       COALESCE(extract_arg(v.arg_set_id, 'debug.slept'), 0) AS slept,
       COALESCE(extract_arg(v.arg_set_id, 'debug.write'), 0) AS is_write,
       COALESCE(extract_arg(v.arg_set_id, 'debug.cut'), 0) AS cut,
       v.utid, t.tid, t.name AS thread_name, v.upid, p.pid, p.name AS process_name,
       COALESCE(fb.block_requests, 0) AS block_requests,
       COALESCE(fb.block_bytes, 0) AS block_bytes,
       extract_arg(v.arg_set_id, 'debug.site') AS site,
       extract_arg(v.arg_set_id, 'debug.stack') AS stack,
       v.arg_set_id
FROM _gpuio_vfs_slices v
LEFT JOIN thread t ON t.utid = v.utid
LEFT JOIN process p ON p.upid = v.upid
LEFT JOIN _gpuio_flow_blocks fb ON fb.slice_id = v.id
WHERE v.name = 'page_fault';

-- ---------------------------------------------------------------------------
-- Python stacks (gpuio trace --stacks --sample-hz N)
-- ---------------------------------------------------------------------------

-- Calls and page faults per line of the program that made them (the arg
-- site: the innermost frame of the program's own code, "file:line function")
-- and file.
CREATE OR REPLACE PERFETTO VIEW gpuio_call_sites(
  site STRING, path STRING, calls LONG, page_faults LONG, bytes LONG, dur DURATION,
  threads LONG
) AS
SELECT site, path, SUM(calls) AS calls, SUM(faults) AS page_faults,
       SUM(bytes) AS bytes, SUM(dur) AS dur, COUNT(DISTINCT utid) AS threads
FROM (SELECT site, path, 1 AS calls, 0 AS faults, COALESCE(bytes, 0) AS bytes, dur, utid
      FROM gpuio_file_calls WHERE site IS NOT NULL
      UNION ALL
      SELECT site, path, 0, 1, COALESCE(bytes, 0), dur, utid
      FROM gpuio_page_faults WHERE site IS NOT NULL)
GROUP BY site, path;

-- A sample's frame as gpuio wrote it: the function, the file (the frame's
-- mapping; Perfetto puts "/" before names like "<frozen os>"), the line
-- (rel_pc), and whether the file is library code (the rule of the arg site).
CREATE OR REPLACE PERFETTO VIEW _gpuio_py_frames(
  frame_id LONG, function STRING, file STRING, line LONG, library BOOL
) AS
SELECT frame_id, function, file, line,
       (file IN ('', '?') OR file GLOB '<*' OR file GLOB '*/site-packages/*'
        OR file GLOB '*/dist-packages/*' OR file GLOB '*/lib/python3.*'
        OR file GLOB '*/lib64/python3.*') AS library
FROM (SELECT f.id AS frame_id, f.name AS function, f.rel_pc AS line,
             CASE WHEN m.name GLOB '/<*' OR m.name = '/?' THEN SUBSTR(m.name, 2)
                  ELSE m.name END AS file
      FROM stack_profile_frame f JOIN stack_profile_mapping m ON m.id = f.mapping);

-- Each callsite's ancestors, itself first (depth 0 up).
CREATE OR REPLACE PERFETTO VIEW _gpuio_callsite_up(callsite_id LONG, depth LONG,
                                                   frame_id LONG) AS
WITH RECURSIVE up(callsite_id, depth, cur, frame_id) AS (
  SELECT id, 0, parent_id, frame_id FROM stack_profile_callsite
  UNION ALL
  SELECT up.callsite_id, up.depth + 1, c.parent_id, c.frame_id
  FROM up JOIN stack_profile_callsite c ON c.id = up.cur
)
SELECT callsite_id, depth, frame_id FROM up;

-- One row per on-CPU sample: its thread, its innermost frame (function,
-- file, line) and site (the innermost frame of the program's own code,
-- "file:line function" as the calls' arg site; NULL when none).
CREATE OR REPLACE PERFETTO VIEW gpuio_cpu_samples(
  id LONG, ts TIMESTAMP, utid JOINID(thread.id), tid LONG, thread_name STRING,
  upid JOINID(process.id), pid LONG, process_name STRING, callsite_id LONG,
  function STRING, file STRING, line LONG, site STRING
) AS
SELECT s.id, s.ts, s.utid, t.tid, t.name AS thread_name, t.upid, p.pid,
       p.name AS process_name, s.callsite_id, f.function, f.file, f.line,
       (SELECT g.file || ':' || g.line || ' ' || g.function
        FROM _gpuio_callsite_up u JOIN _gpuio_py_frames g ON g.frame_id = u.frame_id
        WHERE u.callsite_id = s.callsite_id AND NOT g.library
        ORDER BY u.depth LIMIT 1) AS site
FROM cpu_profile_stack_sample s
JOIN stack_profile_callsite c ON c.id = s.callsite_id
JOIN _gpuio_py_frames f ON f.frame_id = c.frame_id
LEFT JOIN thread t USING (utid)
LEFT JOIN process p ON p.upid = t.upid;

-- Samples per process and function: self_samples with the function
-- innermost (on the CPU in its own code), total_samples with it anywhere on
-- the stack; share = self_samples / the process's samples.
CREATE OR REPLACE PERFETTO VIEW gpuio_cpu_functions(
  upid JOINID(process.id), pid LONG, process_name STRING, function STRING, file STRING,
  self_samples LONG, total_samples LONG, share DOUBLE
) AS
WITH per_site AS (
  SELECT s.callsite_id, t.upid, COUNT(*) AS n
  FROM cpu_profile_stack_sample s LEFT JOIN thread t USING (utid)
  GROUP BY s.callsite_id, t.upid
),
funcs AS (
  SELECT DISTINCT ps.callsite_id, ps.upid, ps.n, g.function, g.file, u.depth = 0 AS leaf
  FROM per_site ps
  JOIN _gpuio_callsite_up u ON u.callsite_id = ps.callsite_id
  JOIN _gpuio_py_frames g ON g.frame_id = u.frame_id
),
agg AS (
  SELECT upid, function, file, SUM(CASE WHEN leaf THEN n ELSE 0 END) AS self_samples,
         SUM(CASE WHEN leaf THEN 0 ELSE n END) AS other
  FROM (SELECT callsite_id, upid, n, function, file, MAX(leaf) AS leaf
        FROM funcs GROUP BY callsite_id, upid, function, file)
  GROUP BY upid, function, file
)
SELECT a.upid, p.pid, p.name AS process_name, a.function, a.file, a.self_samples,
       a.self_samples + a.other AS total_samples,
       1.0 * a.self_samples / (SELECT SUM(n) FROM per_site ps WHERE ps.upid IS a.upid) AS share
FROM agg a LEFT JOIN process p ON p.upid = a.upid;

-- ---------------------------------------------------------------------------
-- Block requests
-- ---------------------------------------------------------------------------

-- One row per block request (insert → complete) on its disk's lane, with
-- the call or page fault that submitted it (the flow's source; NULL for
-- writeback, metadata and I/O of calls not in the trace).
CREATE OR REPLACE PERFETTO VIEW gpuio_block_requests(
  id ID(slice.id),
  ts TIMESTAMP,
  dur DURATION,
  end_ts TIMESTAMP,
  dev STRING,
  op STRING,
  flags STRING,
  sector LONG,
  bytes LONG,
  queue_us DOUBLE,
  service_us DOUBLE,
  queue_dur DURATION,
  service_dur DURATION,
  path STRING,
  pid LONG,
  tid LONG,
  writeback BOOL,
  metadata BOOL,
  error LONG,
  disk STRING,
  lane STRING,
  call_id JOINID(slice.id),
  call STRING,
  call_ts TIMESTAMP,
  call_dur DURATION,
  call_path STRING,
  call_tid LONG,
  call_thread_name STRING,
  arg_set_id ARGSETID
) AS
SELECT b.id, b.ts, b.dur, b.ts + b.dur AS end_ts,
       extract_arg(b.arg_set_id, 'debug.dev') AS dev,
       extract_arg(b.arg_set_id, 'debug.op') AS op,
       extract_arg(b.arg_set_id, 'debug.flags') AS flags,
       extract_arg(b.arg_set_id, 'debug.sector') AS sector,
       extract_arg(b.arg_set_id, 'debug.bytes') AS bytes,
       extract_arg(b.arg_set_id, 'debug.queue_us') AS queue_us,
       extract_arg(b.arg_set_id, 'debug.service_us') AS service_us,
       CAST(ROUND(extract_arg(b.arg_set_id, 'debug.queue_us') * 1000) AS INT) AS queue_dur,
       CAST(ROUND(extract_arg(b.arg_set_id, 'debug.service_us') * 1000) AS INT) AS service_dur,
       extract_arg(b.arg_set_id, 'debug.path') AS path,
       extract_arg(b.arg_set_id, 'debug.pid') AS pid,
       extract_arg(b.arg_set_id, 'debug.tid') AS tid,
       COALESCE(extract_arg(b.arg_set_id, 'debug.writeback'), 0) AS writeback,
       COALESCE(extract_arg(b.arg_set_id, 'debug.metadata'), 0) AS metadata,
       extract_arg(b.arg_set_id, 'debug.error') AS error,
       dk.name AS disk,
       ln.name AS lane,
       c.id AS call_id,
       c.name AS call,
       c.ts AS call_ts,
       c.dur AS call_dur,
       extract_arg(c.arg_set_id, 'debug.path') AS call_path,
       ct.tid AS call_tid,
       ct.name AS call_thread_name,
       b.arg_set_id
FROM slice b
LEFT JOIN track ln ON ln.id = b.track_id
LEFT JOIN track dk ON dk.id = ln.parent_id
LEFT JOIN flow f ON f.slice_in = b.id
LEFT JOIN slice c ON c.id = f.slice_out
LEFT JOIN thread_track ctt ON ctt.id = c.track_id
LEFT JOIN thread ct ON ct.utid = ctt.utid
WHERE b.category = 'block';

-- ---------------------------------------------------------------------------
-- GPU activity and idle gaps
-- ---------------------------------------------------------------------------

-- One row per kernel, memcpy and memset (category gpu), on its stream lane
-- ("GPU N · stream S", "… · lane L" where one stream's activities overlap),
-- a child of its GPU's track ("GPU N").
CREATE OR REPLACE PERFETTO VIEW gpuio_gpu_activities(
  id ID(slice.id),
  ts TIMESTAMP,
  dur DURATION,
  end_ts TIMESTAMP,
  kind STRING,
  name STRING,
  device LONG,
  stream LONG,
  pid LONG,
  context LONG,
  correlation LONG,
  bytes LONG,
  gpu STRING,
  gpu_track_id JOINID(track.id),
  lane STRING,
  track_id JOINID(track.id),
  arg_set_id ARGSETID
) AS
SELECT s.id, s.ts, s.dur, s.ts + s.dur AS end_ts,
       CASE
         WHEN extract_arg(s.arg_set_id, 'debug.grid') IS NOT NULL THEN 'kernel'
         WHEN extract_arg(s.arg_set_id, 'debug.mem_kind') IS NOT NULL THEN 'memset'
         ELSE 'memcpy'
       END AS kind,
       s.name,
       extract_arg(s.arg_set_id, 'debug.device') AS device,
       extract_arg(s.arg_set_id, 'debug.stream') AS stream,
       extract_arg(s.arg_set_id, 'debug.pid') AS pid,
       extract_arg(s.arg_set_id, 'debug.context') AS context,
       extract_arg(s.arg_set_id, 'debug.correlation') AS correlation,
       extract_arg(s.arg_set_id, 'debug.bytes') AS bytes,
       g.name AS gpu,
       g.id AS gpu_track_id,
       ln.name AS lane,
       s.track_id,
       s.arg_set_id
FROM slice s
JOIN track ln ON ln.id = s.track_id
LEFT JOIN track g ON g.id = ln.parent_id
WHERE s.category = 'gpu';

-- Busy periods, then the holes between them, per scope: 'gpu' = a process's
-- activities on one GPU (all its streams), 'stream' = one stream of it.
-- Overlapping or touching activities make one busy period (gpuio report's
-- rule, docs/report.md: "idle gaps = the holes between busy periods").
CREATE OR REPLACE PERFETTO VIEW _gpuio_gpu_scoped(
  scope STRING, gpu_track_id LONG, pid LONG, stream LONG,
  id LONG, ts LONG, end_ts LONG, name STRING
) AS
SELECT 'gpu' AS scope, gpu_track_id, pid, NULL AS stream, id, ts, end_ts, name
FROM gpuio_gpu_activities
UNION ALL
SELECT 'stream' AS scope, gpu_track_id, pid, stream, id, ts, end_ts, name
FROM gpuio_gpu_activities;

CREATE OR REPLACE PERFETTO VIEW _gpuio_gpu_periods(
  scope STRING, gpu_track_id LONG, pid LONG, stream LONG, period LONG,
  ts LONG, end_ts LONG, first_id LONG, first_name STRING,
  last_id LONG, last_name STRING, activities LONG
) AS
WITH marked AS (
  SELECT *,
         MAX(end_ts) OVER (PARTITION BY scope, gpu_track_id, pid, stream
                           ORDER BY ts, end_ts, id
                           ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_end
  FROM _gpuio_gpu_scoped
),
numbered AS (
  SELECT *,
         SUM(CASE WHEN prev_end IS NULL OR ts > prev_end THEN 1 ELSE 0 END)
           OVER (PARTITION BY scope, gpu_track_id, pid, stream
                 ORDER BY ts, end_ts, id
                 ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS period
  FROM marked
),
firsts AS (
  -- SQLite: with MIN()/MAX(), the bare columns come from the row that has it
  SELECT scope, gpu_track_id, pid, stream, period,
         MIN(ts) AS ts, id AS first_id, name AS first_name, COUNT(*) AS activities
  FROM numbered GROUP BY scope, gpu_track_id, pid, stream, period
),
lasts AS (
  SELECT scope, gpu_track_id, pid, stream, period,
         MAX(end_ts) AS end_ts, id AS last_id, name AS last_name
  FROM numbered GROUP BY scope, gpu_track_id, pid, stream, period
)
SELECT f.scope, f.gpu_track_id, f.pid, f.stream, f.period, f.ts, l.end_ts,
       f.first_id, f.first_name, l.last_id, l.last_name, f.activities
FROM firsts f
JOIN lasts l
  ON l.scope = f.scope AND l.gpu_track_id = f.gpu_track_id AND l.pid = f.pid
 AND l.stream IS f.stream AND l.period = f.period;

CREATE OR REPLACE PERFETTO VIEW _gpuio_gpu_scoped_gaps(
  scope STRING, gpu_track_id LONG, pid LONG, stream LONG,
  ts LONG, end_ts LONG, dur LONG,
  prev_id LONG, prev_name STRING, next_id LONG, next_name STRING
) AS
SELECT scope, gpu_track_id, pid, stream, ts, end_ts, end_ts - ts AS dur,
       prev_id, prev_name, next_id, next_name
FROM (
  SELECT scope, gpu_track_id, pid, stream,
         LAG(end_ts) OVER w AS ts,
         ts AS end_ts,
         LAG(last_id) OVER w AS prev_id,
         LAG(last_name) OVER w AS prev_name,
         first_id AS next_id,
         first_name AS next_name
  FROM _gpuio_gpu_periods
  WINDOW w AS (PARTITION BY scope, gpu_track_id, pid, stream ORDER BY period)
)
WHERE ts IS NOT NULL;

-- GPU idle gaps of a process on one GPU: no kernel, copy or memset of it on
-- any stream of that GPU between ts and end_ts. prev_* is the activity that
-- ended last before the gap, next_* the one that ended it.
CREATE OR REPLACE PERFETTO VIEW gpuio_gpu_gaps(
  ts TIMESTAMP,
  dur DURATION,
  end_ts TIMESTAMP,
  gpu STRING,
  device LONG,
  pid LONG,
  process_name STRING,
  prev_id JOINID(slice.id),
  prev_name STRING,
  next_id JOINID(slice.id),
  next_name STRING,
  gpu_track_id JOINID(track.id)
) AS
SELECT g.ts, g.dur, g.end_ts, gt.name AS gpu,
       extract_arg(n.arg_set_id, 'debug.device') AS device,
       g.pid,
       (SELECT p.name FROM process p
        WHERE p.pid = g.pid AND p.machine_id IS gt.machine_id) AS process_name,
       g.prev_id, g.prev_name, g.next_id, g.next_name, g.gpu_track_id
FROM _gpuio_gpu_scoped_gaps g
LEFT JOIN track gt ON gt.id = g.gpu_track_id
LEFT JOIN slice n ON n.id = g.next_id
WHERE g.scope = 'gpu';

-- The same per stream: gaps between consecutive activities of one stream
-- (its lanes together), whatever the GPU's other streams did meanwhile.
CREATE OR REPLACE PERFETTO VIEW gpuio_gpu_stream_gaps(
  ts TIMESTAMP,
  dur DURATION,
  end_ts TIMESTAMP,
  gpu STRING,
  device LONG,
  stream LONG,
  pid LONG,
  prev_id JOINID(slice.id),
  prev_name STRING,
  next_id JOINID(slice.id),
  next_name STRING,
  gpu_track_id JOINID(track.id)
) AS
SELECT g.ts, g.dur, g.end_ts, gt.name AS gpu,
       extract_arg(n.arg_set_id, 'debug.device') AS device,
       g.stream, g.pid,
       g.prev_id, g.prev_name, g.next_id, g.next_name, g.gpu_track_id
FROM _gpuio_gpu_scoped_gaps g
LEFT JOIN track gt ON gt.id = g.gpu_track_id
LEFT JOIN slice n ON n.id = g.next_id
WHERE g.scope = 'stream';

-- ---------------------------------------------------------------------------
-- Thread states
-- ---------------------------------------------------------------------------

-- The calls and faults on each thread's own track (not io_uring lanes), and
-- the CUDA syncs (cuda_sync records, cuda_api calls of kind sync), which a
-- thread state can be inside.
CREATE OR REPLACE PERFETTO VIEW _gpuio_thread_waits(
  utid LONG, id LONG, ts LONG, end_ts LONG, what STRING, name STRING, path STRING
) AS
SELECT tt.utid, s.id, s.ts, s.ts + s.dur AS end_ts,
       CASE
         WHEN s.category = 'vfs' AND s.name = 'page_fault' THEN 'page_fault'
         WHEN s.category = 'vfs' AND extract_arg(s.arg_set_id, 'debug.ftype') = 'socket' THEN 'socket'
         WHEN s.category = 'vfs' THEN 'file_io'
         ELSE 'gpu_sync'
       END AS what,
       s.name,
       CASE WHEN s.category = 'vfs' THEN extract_arg(s.arg_set_id, 'debug.path') END AS path
FROM slice s
JOIN thread_track tt ON tt.id = s.track_id
WHERE s.category = 'vfs'
   OR s.category = 'cuda_sync'
   OR (s.category = 'cuda_api' AND extract_arg(s.arg_set_id, 'debug.kind') = 'sync');

-- One row per thread state (Perfetto's thread_state, from the export's
-- scheduler events), with the traced call the thread was in when the state
-- began: for a blocked thread, what it was blocked in.
--   state       Perfetto's code: Running, R, R+, S, D, …
--   state_name  Running, Runnable, Runnable (Preempted), Sleeping,
--               Uninterruptible Sleep (the names the JSON export's state
--               lanes use)
--   blocked     1 for S and D (asleep), else 0
--   blocked_kind (blocked states) file_io, page_fault, socket, gpu_sync
--               when inside such a call, else uninterruptible (D) or
--               sleep (S); NULL when not blocked
CREATE OR REPLACE PERFETTO VIEW gpuio_thread_states(
  id ID(thread_state.id),
  ts TIMESTAMP,
  dur DURATION,
  end_ts TIMESTAMP,
  utid JOINID(thread.id),
  tid LONG,
  thread_name STRING,
  upid JOINID(process.id),
  pid LONG,
  process_name STRING,
  state STRING,
  state_name STRING,
  blocked BOOL,
  blocked_kind STRING,
  cpu LONG,
  waker_utid JOINID(thread.id),
  waker_tid LONG,
  waker_thread_name STRING,
  call_id JOINID(slice.id),
  call STRING,
  call_path STRING
) AS
WITH merged AS (
  SELECT utid, ts, id AS state_id, NULL AS call_id, NULL AS call_end,
         NULL AS what, NULL AS call_name, NULL AS call_path, 0 AS is_call
  FROM thread_state
  UNION ALL
  SELECT utid, ts, NULL, id, end_ts, what, name, path, 1
  FROM _gpuio_thread_waits
),
-- cg: how many calls of the thread began at or before this row, so a state
-- and the latest call that began at or before it share cg
numbered AS (
  SELECT *,
         SUM(is_call) OVER (PARTITION BY utid
                            ORDER BY ts, is_call DESC, COALESCE(call_id, state_id)
                            ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS cg
  FROM merged
),
inside AS (
  SELECT s.state_id, c.call_id, c.what, c.call_name, c.call_path
  FROM numbered s
  JOIN numbered c
    ON c.is_call = 1 AND c.utid = s.utid AND c.cg = s.cg AND s.ts < c.call_end
  WHERE s.is_call = 0
)
SELECT st.id, st.ts, st.dur, st.ts + st.dur AS end_ts,
       st.utid, t.tid, t.name AS thread_name, t.upid, p.pid, p.name AS process_name,
       st.state,
       CASE
         WHEN st.state = 'Running' THEN 'Running'
         WHEN st.state = 'R' THEN 'Runnable'
         WHEN st.state = 'R+' THEN 'Runnable (Preempted)'
         WHEN substr(st.state, 1, 1) = 'S' THEN 'Sleeping'
         WHEN substr(st.state, 1, 1) = 'D' THEN 'Uninterruptible Sleep'
         ELSE st.state
       END AS state_name,
       substr(st.state, 1, 1) IN ('S', 'D') AS blocked,
       CASE
         WHEN substr(st.state, 1, 1) NOT IN ('S', 'D') THEN NULL
         WHEN i.what IS NOT NULL THEN i.what
         WHEN substr(st.state, 1, 1) = 'D' THEN 'uninterruptible'
         ELSE 'sleep'
       END AS blocked_kind,
       st.cpu,
       st.waker_utid, wt.tid AS waker_tid, wt.name AS waker_thread_name,
       i.call_id, i.call_name AS call, i.call_path
FROM thread_state st
LEFT JOIN inside i ON i.state_id = st.id
LEFT JOIN thread t ON t.utid = st.utid
LEFT JOIN process p ON p.upid = t.upid
LEFT JOIN thread wt ON wt.utid = st.waker_utid;

-- ===========================================================================
-- THE REPORT'S ANSWER: LOOP STEPS AND GPU-GAP CAUSES
--
-- `gpuio convert` draws what `gpuio report` found (docs/export-schema.md,
-- "Findings"): per training loop a "steps · loop N · THREAD TID" track in the
-- loop's process, a slice per step (category gpuio_step); per GPU and process
-- an "idle gaps · pid P" track under the GPU, a slice per idle gap of 1 ms or
-- more and the report's ten largest (category gpuio_gap).
-- ===========================================================================

-- One row per step of a loop: its wait for data, the rest, the largest cause
-- and the loop thread's time by kind inside the step (µs; 0: none).
CREATE OR REPLACE PERFETTO VIEW gpuio_loop_steps(
  id JOINID(slice.id),
  ts TIMESTAMP,
  dur DURATION,
  loop LONG,
  step LONG,
  pid LONG,
  tid LONG,
  thread_name STRING,
  process_name STRING,
  wait_us DOUBLE,
  rest_us DOUBLE,
  cause STRING,
  data_files STRING,
  peers STRING,
  on_cpu_us DOUBLE,
  runnable_us DOUBLE,
  file_io_us DOUBLE,
  page_fault_us DOUBLE,
  socket_us DOUBLE,
  pipe_us DOUBLE,
  gpu_sync_us DOUBLE,
  waiting_for_ranks_us DOUBLE,
  waiting_for_data_us DOUBLE,
  futex_us DOUBLE,
  poll_us DOUBLE,
  child_us DOUBLE,
  sleep_us DOUBLE,
  other_sleep_us DOUBLE
) AS
SELECT s.id, s.ts, s.dur,
       extract_arg(s.arg_set_id, 'debug.loop') AS loop,
       extract_arg(s.arg_set_id, 'debug.step') AS step,
       p.pid,
       extract_arg(s.arg_set_id, 'debug.tid') AS tid,
       (SELECT t.name FROM thread t
        WHERE t.tid = extract_arg(s.arg_set_id, 'debug.tid') AND t.upid IS p.upid) AS thread_name,
       p.name AS process_name,
       extract_arg(s.arg_set_id, 'debug.wait_us') AS wait_us,
       extract_arg(s.arg_set_id, 'debug.rest_us') AS rest_us,
       extract_arg(s.arg_set_id, 'debug.cause') AS cause,
       extract_arg(s.arg_set_id, 'debug.data_files') AS data_files,
       extract_arg(s.arg_set_id, 'debug.peers') AS peers,
       COALESCE(extract_arg(s.arg_set_id, 'debug.time_us.on_cpu'), 0) AS on_cpu_us,
       COALESCE(extract_arg(s.arg_set_id, 'debug.time_us.runnable'), 0) AS runnable_us,
       COALESCE(extract_arg(s.arg_set_id, 'debug.time_us.file_io'), 0) AS file_io_us,
       COALESCE(extract_arg(s.arg_set_id, 'debug.time_us.page_fault'), 0) AS page_fault_us,
       COALESCE(extract_arg(s.arg_set_id, 'debug.time_us.socket'), 0) AS socket_us,
       COALESCE(extract_arg(s.arg_set_id, 'debug.time_us.pipe'), 0) AS pipe_us,
       COALESCE(extract_arg(s.arg_set_id, 'debug.time_us.gpu_sync'), 0) AS gpu_sync_us,
       COALESCE(extract_arg(s.arg_set_id, 'debug.time_us.waiting_for_ranks'), 0) AS waiting_for_ranks_us,
       COALESCE(extract_arg(s.arg_set_id, 'debug.time_us.waiting_for_data'), 0) AS waiting_for_data_us,
       COALESCE(extract_arg(s.arg_set_id, 'debug.time_us.futex'), 0) AS futex_us,
       COALESCE(extract_arg(s.arg_set_id, 'debug.time_us.poll'), 0) AS poll_us,
       COALESCE(extract_arg(s.arg_set_id, 'debug.time_us.child'), 0) AS child_us,
       COALESCE(extract_arg(s.arg_set_id, 'debug.time_us.sleep'), 0) AS sleep_us,
       COALESCE(extract_arg(s.arg_set_id, 'debug.time_us.other_sleep'), 0) AS other_sleep_us
FROM slice s
LEFT JOIN process_track pt ON pt.id = s.track_id
LEFT JOIN process p ON p.upid = pt.upid
WHERE s.category = 'gpuio_step';

-- One row per GPU idle gap slice: its cause (the launching thread's largest
-- state, else what the host did meanwhile), the launcher.
CREATE OR REPLACE PERFETTO VIEW gpuio_gap_findings(
  id JOINID(slice.id),
  ts TIMESTAMP,
  dur DURATION,
  gpu STRING,
  pid LONG,
  launcher_tid LONG,
  cause STRING
) AS
SELECT s.id, s.ts, s.dur,
       (SELECT g.name FROM track g WHERE g.id = t.parent_id) AS gpu,
       extract_arg(s.arg_set_id, 'debug.pid') AS pid,
       extract_arg(s.arg_set_id, 'debug.launcher_tid') AS launcher_tid,
       extract_arg(s.arg_set_id, 'debug.cause') AS cause
FROM slice s
LEFT JOIN track t ON t.id = s.track_id
WHERE s.category = 'gpuio_gap';

-- One row per GPU idle gap slice and cause: source 'host' (by_cause_us:
-- file reads, writes, other file calls, CUDA syncs, other), 'launcher' (the
-- launching thread's state during the gap: on_cpu, waiting_for_data, ...).
CREATE OR REPLACE PERFETTO VIEW gpuio_gap_causes(
  id JOINID(slice.id),
  ts TIMESTAMP,
  dur DURATION,
  gpu STRING,
  pid LONG,
  launcher_tid LONG,
  source STRING,
  cause STRING,
  us DOUBLE
) AS
SELECT f.id, f.ts, f.dur, f.gpu, f.pid, f.launcher_tid,
       CASE WHEN a.key GLOB 'debug.by_cause_us.*' THEN 'host' ELSE 'launcher' END AS source,
       CASE WHEN a.key GLOB 'debug.by_cause_us.*' THEN substr(a.key, 19)
            ELSE substr(a.key, 25) END AS cause,
       a.real_value AS us
FROM gpuio_gap_findings f
JOIN slice s ON s.id = f.id
JOIN args a ON a.arg_set_id = s.arg_set_id
WHERE a.key GLOB 'debug.by_cause_us.*' OR a.key GLOB 'debug.launcher_state_us.*';
