#!/usr/bin/env python3
"""gen_schema.py: schemas/trace.sql as a C header (sql_schema.h), the text the SQL loader runs.

Run by the build (sql/meson.build): python3 gen_schema.py INPUT.sql OUTPUT.h.  The schema file
stays the single source; the header is never edited or checked in.
"""
import sys


def c_line(line):
    out = []
    for ch in line:
        if ch == '\\':
            out.append('\\\\')
        elif ch == '"':
            out.append('\\"')
        elif ch == '\t':
            out.append('\\t')
        elif ord(ch) < 0x20 or ord(ch) == 0x7f:
            out.append('\\%03o' % ord(ch))
        else:
            out.append(ch)
    return ''.join(out)


def main():
    if len(sys.argv) != 3:
        sys.exit('usage: gen_schema.py INPUT.sql OUTPUT.h')
    with open(sys.argv[1], encoding='utf-8') as f:
        text = f.read()
    lines = text.split('\n')
    body = ['\t"%s\\n"' % c_line(l) for l in lines[:-1]]
    if lines[-1]:
        body.append('\t"%s"' % c_line(lines[-1]))
    if not body:
        body = ['\t""']
    with open(sys.argv[2], 'w', encoding='utf-8') as f:
        f.write('/* sql_schema.h: generated from schemas/trace.sql by sql/gen_schema.py '
                'at build time; do not edit. */\n')
        f.write('#ifndef ENCORE_SQL_SCHEMA_H\n#define ENCORE_SQL_SCHEMA_H\n\n')
        f.write('static const char ana_sql_schema_text[] =\n')
        f.write('\n'.join(body) + ';\n\n#endif\n')


if __name__ == '__main__':
    main()
