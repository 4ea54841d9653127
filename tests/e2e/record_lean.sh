#!/bin/sh
# record_lean.sh: libencore-record.so, preloaded into every recorded process, carries only
# the writer side of libtrace (libtrace/meson.build): no trace reader, session or predicate
# code, in its symbol table (hidden symbols included) or its dynamic exports.
# Usage: record_lean.sh LIBENCORE_RECORD_SO
set -u
lib=$1
command -v nm > /dev/null || { echo "SKIP: no nm"; exit 77; }
syms=$(nm "$lib" 2> /dev/null; nm -D "$lib")
echo "$syms" | grep -q ' trace_writer_open$' ||
    { echo "SKIP: no symbol table to read (stripped?)"; exit 77; }
bad=$(echo "$syms" | grep -E ' (trace_reader_|trace_session_|trace_pred_)[a-z_]*$' | sort -u)
[ -z "$bad" ] || { echo "FAIL: the recorder carries reader/predicate code:"; echo "$bad"; exit 1; }
echo "libencore-record.so: writer side only"
