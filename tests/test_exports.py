#!/usr/bin/env python3
"""The ABI's surface: libdocbin.so exports exactly the functions that include/docbin.h declares
with DB_API (nm -D), so that no internal name becomes something a program can link to; and the
Python extension, which links the static library, exports only its init function.

usage: test_exports.py LIBDOCBIN.so DOCBIN.h [EXTENSION.so]
"""
import re
import shutil
import subprocess
import sys

from clitest import check, failures


def exported(path):
    """The names of the symbols `path` defines in its dynamic symbol table."""
    out = subprocess.run(['nm', '-D', '--defined-only', path], capture_output=True, text=True, check=True).stdout
    return {line.split()[-1] for line in out.splitlines() if len(line.split()) >= 3}


def main():
    if not shutil.which('nm'):
        print('SKIP: nm not found (Debian: binutils)')
        return 77
    lib, header = sys.argv[1:3]
    text = re.sub(r'/\*.*?\*/', '', open(header).read(), flags=re.S)
    text = re.sub(r'^\s*#.*$', '', text, flags=re.M)  # the macro's own definition
    declared = set(re.findall(r'\bDB_API\b[^;{]*?\b(\w+)\s*\(', text))
    check(len(declared) >= 15, f'only {len(declared)} declarations found in {header}: {sorted(declared)}')
    check(all(name.startswith('db_') for name in declared), f'public names without db_: {sorted(declared)}')
    names = exported(lib)
    check(not names - declared, f'exported but not in docbin.h: {sorted(names - declared)}')
    check(not declared - names, f'in docbin.h but not exported: {sorted(declared - names)}')
    print(f'{lib}: {len(names)} symbols exported, all db_ calls of docbin.h')
    if len(sys.argv) > 3:
        ext = exported(sys.argv[3])
        check(ext == {'PyInit__docbin'}, f'the extension exports more than its init: {sorted(ext)[:20]}')
        print(f'{sys.argv[3]}: exports {sorted(ext)}')
    if failures:
        print(f'{len(failures)} failure(s)', file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
