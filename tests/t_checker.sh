#!/usr/bin/env bash
# The checker itself: tests/check_trace.py must reject hand-made bad traces
# (each with the reason it gives) and accept a hand-made good one, so a PASS
# from it means something. Also its `files` / `block` / `info` totals on a
# trace whose numbers are written out here.
source "$(dirname "$0")/lib.sh"
CT="$GPUIO_SRC/tests/check_trace.py"

# M lines every good trace needs for pid 1 / tid 1 and disk pid 9 lane 1
META='{"name":"process_name","ph":"M","pid":1,"args":{"name":"app"}},
{"name":"thread_name","ph":"M","pid":1,"tid":1,"args":{"name":"app"}},
{"name":"process_name","ph":"M","pid":9,"args":{"name":"disk sda"}},
{"name":"thread_name","ph":"M","pid":9,"tid":1,"args":{"name":"lane 1"}},
{"name":"thread_name","ph":"M","pid":9,"tid":2,"args":{"name":"lane 2"}}'

n=0
# bad NAME REASON CONTENT: the checker must exit non-zero and say REASON
bad() {
  local name=$1 reason=$2 f="$TMP/$1.json" rc=0
  printf '%s' "$3" > "$f"
  python3 "$CT" "$f" > "$TMP/out" 2>&1 || rc=$?
  [ "$rc" -ne 0 ] || { cat "$TMP/out"; fail "checker accepted bad trace '$name'"; }
  grep -q -- "$reason" "$TMP/out" || { cat "$TMP/out"; fail "'$name': message lacks '$reason'"; }
  n=$((n + 1))
}
good() {
  local f="$TMP/$1.json"
  printf '%s' "$2" > "$f"
  python3 "$CT" "$f" > "$TMP/out" 2>&1 || { cat "$TMP/out"; fail "checker rejected good trace '$1'"; }
}

good nested "[$META,
{\"name\":\"read\",\"cat\":\"vfs\",\"ph\":\"X\",\"ts\":1.000,\"dur\":10.000,\"pid\":1,\"tid\":1,\"bind_id\":\"0x1\",\"flow_out\":true,\"args\":{\"path\":\"/a\",\"bytes\":100}},
{\"name\":\"inner\",\"cat\":\"vfs\",\"ph\":\"X\",\"ts\":2.000,\"dur\":3.000,\"pid\":1,\"tid\":1,\"args\":{}},
{\"name\":\"edge\",\"cat\":\"vfs\",\"ph\":\"X\",\"ts\":5.000,\"dur\":6.000,\"pid\":1,\"tid\":1,\"args\":{}},
{\"name\":\"read\",\"cat\":\"block\",\"ph\":\"X\",\"ts\":2.000,\"dur\":3.000,\"pid\":9,\"tid\":1,\"bind_id\":\"0x1\",\"flow_in\":true,\"args\":{\"dev\":\"sda\",\"op\":\"read\",\"bytes\":4096}},
{\"name\":\"read\",\"cat\":\"block\",\"ph\":\"X\",\"ts\":5.000,\"dur\":1.000,\"pid\":9,\"tid\":1,\"bind_id\":\"0x1\",\"flow_in\":true,\"args\":{\"dev\":\"sda\",\"op\":\"read\",\"bytes\":4096}},
{\"name\":\"write\",\"cat\":\"block\",\"ph\":\"X\",\"ts\":2.500,\"dur\":1.000,\"pid\":9,\"tid\":2,\"args\":{\"dev\":\"sda\",\"op\":\"write\",\"bytes\":512}},
{\"name\":\"throughput sda\",\"cat\":\"block\",\"ph\":\"C\",\"ts\":0.000,\"pid\":9,\"args\":{\"read_MiBps\":1.5}},
{\"name\":\"gpuio trace info\",\"cat\":\"gpuio\",\"ph\":\"i\",\"s\":\"g\",\"ts\":0,\"pid\":7,\"args\":{\"dropped\":0,\"hostname\":\"h\"}}
]"
grep -q "^OK" "$TMP/out" || fail "checker does not say OK"
# the last X above ends exactly where the next begins: touching is not overlapping

bad overlap "overlap without nesting" "[$META,
{\"name\":\"read\",\"ph\":\"X\",\"ts\":1.000,\"dur\":10.000,\"pid\":1,\"tid\":1},
{\"name\":\"read\",\"ph\":\"X\",\"ts\":5.000,\"dur\":10.000,\"pid\":1,\"tid\":1}]"
bad lane "block slices overlap" "[$META,
{\"name\":\"read\",\"cat\":\"block\",\"ph\":\"X\",\"ts\":1.000,\"dur\":10.000,\"pid\":9,\"tid\":1},
{\"name\":\"read\",\"cat\":\"block\",\"ph\":\"X\",\"ts\":2.000,\"dur\":1.000,\"pid\":9,\"tid\":1}]"
bad flow_in_only "no flow_out" "[$META,
{\"name\":\"read\",\"cat\":\"block\",\"ph\":\"X\",\"ts\":1.000,\"dur\":1.000,\"pid\":9,\"tid\":1,\"bind_id\":\"0x2\",\"flow_in\":true}]"
bad flow_out_only "no flow_in" "[$META,
{\"name\":\"read\",\"ph\":\"X\",\"ts\":1.000,\"dur\":1.000,\"pid\":1,\"tid\":1,\"bind_id\":\"0x3\",\"flow_out\":true}]"
bad flow_two_sources "2 flow_out" "[$META,
{\"name\":\"a\",\"ph\":\"X\",\"ts\":1.000,\"dur\":1.000,\"pid\":1,\"tid\":1,\"bind_id\":\"0x4\",\"flow_out\":true},
{\"name\":\"b\",\"ph\":\"X\",\"ts\":3.000,\"dur\":1.000,\"pid\":1,\"tid\":1,\"bind_id\":\"0x4\",\"flow_out\":true},
{\"name\":\"c\",\"cat\":\"block\",\"ph\":\"X\",\"ts\":5.000,\"dur\":1.000,\"pid\":9,\"tid\":1,\"bind_id\":\"0x4\",\"flow_in\":true}]"
bad truncated "invalid JSON" "[$META,
{\"name\":\"read\",\"ph\":\"X\",\"ts\":1.000,\"dur\":1."
bad object_form "not the JSON array form" "{\"traceEvents\":[$META]}"
bad no_name "no \"name\"" "[$META,{\"ph\":\"X\",\"ts\":1,\"dur\":1,\"pid\":1,\"tid\":1}]"
bad no_ph "no \"ph\"" "[$META,{\"name\":\"x\",\"ts\":1,\"dur\":1,\"pid\":1,\"tid\":1}]"
bad no_ts "no numeric ts" "[$META,{\"name\":\"x\",\"ph\":\"X\",\"dur\":1,\"pid\":1,\"tid\":1}]"
bad neg_dur "dur >= 0" "[$META,{\"name\":\"x\",\"ph\":\"X\",\"ts\":1,\"dur\":-1,\"pid\":1,\"tid\":1}]"
bad counter_cat "counter without cat" "[$META,{\"name\":\"tp\",\"ph\":\"C\",\"ts\":1,\"pid\":9,\"args\":{\"v\":1}}]"
bad counter_args "counter args must be numbers" "[$META,{\"name\":\"tp\",\"cat\":\"block\",\"ph\":\"C\",\"ts\":1,\"pid\":9,\"args\":{\"v\":\"x\"}}]"
bad no_process_name "no process_name" "[$META,{\"name\":\"x\",\"ph\":\"X\",\"ts\":1,\"dur\":1,\"pid\":5,\"tid\":1}]"
bad no_thread_name "no thread_name" "[$META,{\"name\":\"x\",\"ph\":\"X\",\"ts\":1,\"dur\":1,\"pid\":1,\"tid\":77}]"
bad surrogate "not valid UTF-8/Unicode" "[$META,{\"name\":\"x\\ud800\",\"ph\":\"X\",\"ts\":1,\"dur\":1,\"pid\":1,\"tid\":1}]"
bad nan "invalid JSON" "[$META,{\"name\":\"x\",\"ph\":\"X\",\"ts\":NaN,\"dur\":1,\"pid\":1,\"tid\":1}]"
bad raw_newline "invalid JSON" "[$META,{\"name\":\"x
y\",\"ph\":\"X\",\"ts\":1,\"dur\":1,\"pid\":1,\"tid\":1}]"
bad invalid_utf8 "not valid UTF-8 at byte" "$(printf '[{"name":"x\xff","ph":"M","pid":1,"args":{"name":"a"}}]')"
# the same rules through gzip
printf '[{"name":"a","ph":"X","ts":1,"dur":9,"pid":1,"tid":1},{"name":"b","ph":"X","ts":2,"dur":9,"pid":1,"tid":1}]' |
  gzip > "$TMP/gz.json.gz"
if python3 "$CT" "$TMP/gz.json.gz" > "$TMP/out" 2>&1; then fail "checker accepted a bad gzipped trace"; fi
grep -q "overlap without nesting" "$TMP/out" || { cat "$TMP/out"; fail "gzipped trace not checked"; }
n=$((n + 1))

# totals on the good trace: numbers written above
pycheck checker.totals "$TMP/nested.json" || fail "files/block/info totals"
python3 "$CT" files "$TMP/nested.json" | python3 -c 'import json,sys; assert json.load(sys.stdin)["/a"]["read_bytes"] == 100' ||
  fail "check_trace.py files"
python3 "$CT" info "$TMP/nested.json" | has '"hostname"' || fail "check_trace.py info"
echo "checker rejected $n bad traces, accepted the good one"
