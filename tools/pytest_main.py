"""Runs one pytest file under Bazel, writing JUnit XML where Bazel expects test.xml."""
import os
import sys

import pytest


def main():
    args = [a for a in sys.argv[1:]]
    for a in args:  # helpers beside the test file (e.g. op_testing.py) import by plain name
        if a.endswith(".py"):
            sys.path.insert(0, os.path.dirname(os.path.abspath(a)))
    xml = os.environ.get("XML_OUTPUT_FILE")
    if xml:
        args.append("--junitxml=" + xml)
    args += ["-q", "-p", "no:cacheprovider", "-rs"]
    code = pytest.main(args)
    sys.exit(int(code))


if __name__ == "__main__":
    main()
