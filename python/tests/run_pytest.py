#!/usr/bin/env python3
"""Runs the Python package's tests (test_docbin.py) with pytest against the built package, for meson
test. Skips, saying what to install, when numpy or pytest is missing or the extension was not built.

usage: run_pytest.py BUILT_PYTHON_DIR DOCBIN_RUN DOCBIN_EVAL DATA_DIR
"""
import importlib.util
import os
import sys


def main():
    built, run, evaluate, data = sys.argv[1:5]
    missing = [m for m in ('numpy', 'pytest') if importlib.util.find_spec(m) is None]
    if missing:
        print(f'SKIP: {sys.executable} cannot import {", ".join(missing)} (Debian: '
              f'{" ".join("python3-" + m for m in missing)})')
        return 77
    if not os.path.isfile(os.path.join(built, 'docbin', '__init__.py')):
        print(f'SKIP: the Python package was not built in {built} (it needs the Python headers: Debian python3-dev)')
        return 77
    sys.path.insert(0, built)
    os.environ.update(DOCBIN_TEST_RUN=run, DOCBIN_TEST_EVAL=evaluate, DOCBIN_TEST_DATA=data)
    import pytest
    here = os.path.dirname(os.path.abspath(__file__))
    return pytest.main(['-q', '-p', 'no:cacheprovider', '-rs', os.path.join(here, 'test_docbin.py')])


if __name__ == '__main__':
    sys.exit(main())
