#!/usr/bin/env python3
"""gen_wrappers.py: write one preload library's generated wrappers from calls.def.

    gen_wrappers.py calls.def PREFIX WRAPPERS.h CHECK.c

For every row of calls.def whose shape is not IRREGULAR, WRAPPERS.h defines the exported
wrapper, which hands the call to the shape's handler, a macro the library defines:

    PREFIX_SHAPE_<SHAPE>(name, "what", call, <the shape's parameters>..., real call)

(for FCNTL, the wrapper first reads the variable argument, passed as arg_, and the last
parameter is the real function, not a call; for SCANF, see VA_LIST below: the handler is an
expression, the call's result)

("what" names the call in messages: the row's name without __, _IO_, _chk and 64).  The wrappers
of a shape are inside #ifdef PREFIX_SHAPE_<SHAPE>: a source file defines the handlers of
the shapes it implements and then includes WRAPPERS.h, so each handler expands inline in
the file whose static helpers it uses (no extra call on the hot path).  Each shape block
also defines PREFIX_shape_<shape>_handled; CHECK.c refers to all of them, so a shape
without a handler on that side fails the link (-Wl,--no-undefined).  CHECK.c also holds
the table of generated rows (name, shape), for a debugger or a test to inspect.
"""
import re
import sys

# The handler's parameters for each shape, by calls.def parameter name.  "x?d": the
# parameter x, or d when the row has none; "x|y": x, or else y; "&x": x's address; "!x": 1
# when the row has no parameter x, else 0.
SHAPES = {
    'BYTES_OUT': ['fd', 'buf', 'n', 'flags?0'],
    'BYTES_OUT_TO': ['fd', 'buf', 'n', 'flags', 'addr', 'len'],
    'MSG_OUT': ['fd', 'msg', 'flags'],
    'IOV_OUT': ['fd', 'iov', 'iovcnt'],
    'BYTES_IN': ['fd', 'buf', 'n', 'flags?0'],
    'BYTES_IN_FROM': ['fd', 'buf', 'n', 'flags', 'addr', 'len'],
    'MSG_IN': ['fd', 'msg', 'flags'],
    'IOV_IN': ['fd', 'iov', 'iovcnt'],
    'FREAD': ['p', 'size', 'n', 'f'],
    'FGETS': ['s', 'n', 'f'],
    'GETDELIM': ['line', 'cap', 'f'],
    'GETC': ['f?stdin'],
    'FWRITE': ['p', 'size', 'n', 'f'],
    'FPUTS': ['s', 'f?stdout', '!f'],
    'PUTC': ['c', 'f?stdout'],
    'VPRINTF': ['f?(FILE *)NULL', 'fd?-1', '!fd'],
    'KMOVE': ['in', 'out', 'off_in|off?NULL', 'off_out?NULL', 'n', 'flags?0'],
    'SIGNAL_WAIT': ['info?(siginfo_t *)NULL'],
    'WAIT': ['&pid?NULL', 'options?0', 'status', 'ru?(struct rusage *)NULL'],
    'EXIT': ['status'],
    'VALUE_PID': [],
    'READY_POLL': ['fds', 'n'],
    'READY_SELECT': ['n', 'rs', 'ws', 'es'],
    'READY_EPOLL': ['epfd', 'ev', 'max'],
    'DUP': ['fd', 'fd2?-1', '!fd2'],
    'FCNTL': ['fd', 'cmd'],
    'VALUE_CLOCK': ['ts|tv', 'clk?0', '!clk'],
    'SCANF': ['f?stdin', 'fmt', 'ap?ap_'],
}


# Shapes of variadic calls, whose one variable argument the wrapper reads as a void * after
# the last named parameter (fcntl's third argument is an int, a long or a pointer depending
# on cmd: on the x86-64 and aarch64 ABIs all travel in one integer register, so forwarding it
# as a pointer is exact).  The handler gets it as `arg_`, and the real function itself, not
# a call.
VARIADIC = ('FCNTL',)

# Shapes whose rows hand a va_list to one real v-function, variadic or not: the scanf family,
# which all read through vfscanf, or __isoc99_vfscanf for the C99 forms (the function of
# VA_LIST[shape], called with the row's name).  A variadic row's wrapper does va_start on its
# last named parameter into ap_ and va_end after the handler; so the handler is an
# expression (the call's result, errno as the real call left it), given the real v-function
# itself, not a call.  glibc's headers with _GNU_SOURCE redirect the plain names (scanf to
# __isoc99_scanf...), so these wrappers are defined under another C name with an asm label.
VA_LIST = {
    'SCANF': lambda name: ('__isoc99_' if name.startswith('__isoc99_') else '') + 'vfscanf',
}


def rows(text):
    """The ENCORE_CALL rows of calls.def, each as its list of top-level fields."""
    text = re.sub(r'/\*.*?\*/', '', text, flags=re.S)
    out = []
    for m in re.finditer(r'^ENCORE_CALL\(', text, flags=re.M):
        i, depth, field, fields = m.end(), 1, '', []
        while depth:
            ch = text[i]
            i += 1
            if ch == '(':
                depth += 1
            elif ch == ')':
                depth -= 1
                if not depth:
                    break
            if ch == ',' and depth == 1:
                fields.append(' '.join(field.split()))
                field = ''
            else:
                field += ch
        fields.append(' '.join(field.split()))
        if len(fields) != 8:
            sys.exit('calls.def: row %s has %d fields, expected 8' % (fields[0], len(fields)))
        out.append(fields)
    return out


def param_names(params):
    """Parameter names of a parenthesised C parameter list: the last identifier of each."""
    inner = params.strip()[1:-1].strip()
    if inner in ('', 'void'):
        return []
    names, depth, cur = [], 0, ''
    for ch in inner + ',':
        if ch == ',' and depth == 0 and cur.strip() == '...':
            cur = ''
            continue
        if ch == ',' and depth == 0:
            ids = re.findall(r'[A-Za-z_]\w*', re.sub(r'\[.*?\]', '', cur))
            # function pointer parameters: void *(*fn)(void *) -> fn
            fp = re.search(r'\(\s*\*\s*(\w+)\s*\)', cur)
            names.append(fp.group(1) if fp else ids[-1])
            cur = ''
            continue
        depth += ch in '(['
        depth -= ch in ')]'
        cur += ch
    return names


def what(name):
    w = name
    for pre in ('_IO_', '__isoc99_', '__'):
        if w.startswith(pre):
            w = w[len(pre):]
    if w.endswith('_chk'):
        w = w[:-4]
    if w.endswith('64'):
        w = w[:-2]
    return w


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    src, prefix, out_h, out_c = sys.argv[1:]
    with open(src) as f:
        table = rows(f.read())
    by_shape = {}
    for name, ret, params, args, kind, call, flags, shape in table:
        if shape == 'IRREGULAR':
            continue
        if shape not in SHAPES:
            sys.exit('calls.def: %s: unknown shape %s' % (name, shape))
        if '...' in params and shape not in VARIADIC + tuple(VA_LIST):
            sys.exit('calls.def: %s: variadic calls are IRREGULAR or %s' %
                     (name, VARIADIC + tuple(VA_LIST)))
        if shape in VARIADIC and '...' not in params:
            sys.exit('calls.def: %s: shape %s is for variadic calls' % (name, shape))
        have = param_names(params)
        hargs = []
        for spec in SHAPES[shape]:
            if spec.startswith('!'):
                hargs.append('0' if spec[1:] in have else '1')
                continue
            alts, _, default = spec.partition('?')
            ref = '&' if alts.startswith('&') else ''
            found = [a for a in alts.lstrip('&').split('|') if a in have]
            if found:
                hargs.append(ref + found[0])
            elif default:
                hargs.append(default)
            else:
                sys.exit('calls.def: %s: shape %s needs a parameter named %s' % (name, shape, alts))
        if shape in VA_LIST:
            real = 'IP_REAL(%s)' % VA_LIST[shape](name)
        else:
            real = 'IP_REAL(%s)' % name + ('' if shape in VARIADIC else args)
        if shape in VARIADIC:
            hargs.append('arg_')
        by_shape.setdefault(shape, []).append((name, ret, params, real, call, hargs,
                                               have[-1] if '...' in params else None))

    low = prefix.lower()
    h = ['/* Generated by interpose/gen_wrappers.py from interpose/calls.def: do not edit. */',
         '/* The wrappers of %s\'s shaped rows; see gen_wrappers.py. */' % prefix, '']
    for shape in SHAPES:
        if shape not in by_shape:
            continue
        macro = '%s_SHAPE_%s' % (prefix, shape)
        h.append('#ifdef %s' % macro)
        for name, ret, params, real, call, hargs, last in by_shape[shape]:
            sep = '' if ret.endswith('*') else ' '
            handler = '%s(%s)' % (macro, ', '.join(
                [name, '"%s"' % what(name), call] + hargs + [real]))
            cname = name
            if shape in VA_LIST:
                cname = '%s_%s' % (low, name)
                h.append('IP_EXPORT %s%s%s%s __asm__("%s");' % (ret, sep, cname, params, name))
            h.append('IP_EXPORT %s%s%s%s' % (ret, sep, cname, params))
            h.append('{')
            if shape in VA_LIST and last:
                h += ['\tva_list ap_;', '\t%s ret_;' % ret, '',
                      '\tva_start(ap_, %s);' % last, '\tret_ = %s;' % handler,
                      '\tva_end(ap_);', '\treturn ret_;']
            elif shape in VA_LIST:
                h.append('\treturn %s;' % handler)
            else:
                if last:
                    h += ['\tva_list ap_;', '\tvoid *arg_;', '',
                          '\tva_start(ap_, %s);' % last, '\targ_ = va_arg(ap_, void *);',
                          '\tva_end(ap_);']
                h.append('\t%s;' % handler)
            h.append('}')
            h.append('')
        marker = '%s_shape_%s_handled' % (low, shape.lower())
        h.append('extern const char %s IP_HIDDEN;' % marker)
        h.append('const char %s = 1;' % marker)
        h.append('#endif')
        h.append('')
    with open(out_h, 'w') as f:
        f.write('\n'.join(h))

    c = ['/* Generated by interpose/gen_wrappers.py from interpose/calls.def: do not edit. */',
         '/* Every shape of calls.def has a handler in %s: each marker below is defined where'
         % prefix,
         ' * the shape\'s wrappers are, and a missing one fails the link. */',
         '#include "interpose.h"', '']
    for shape in SHAPES:
        if shape in by_shape:
            c.append('extern const char %s_shape_%s_handled IP_HIDDEN;' % (low, shape.lower()))
    c.append('')
    c.append('struct %s_generated { const char *name; int shape; const char *handled; };' % low)
    c.append('extern const struct %s_generated %s_generated[] IP_HIDDEN;' % (low, low))
    c.append('const struct %s_generated %s_generated[] = {' % (low, low))
    for shape in SHAPES:
        for row in by_shape.get(shape, []):
            c.append('\t{ "%s", IP_SHAPE_%s, &%s_shape_%s_handled },' %
                     (row[0], shape, low, shape.lower()))
    c.append('\t{ NULL, 0, NULL },')
    c.append('};')
    c.append('')
    with open(out_c, 'w') as f:
        f.write('\n'.join(c))


if __name__ == '__main__':
    main()
