"""The memory cases of issue 24 (finding 4) as a table: each case against a fresh real server with
the default settings (tests/helpers/memory_cases.py says what each does). Not part of the test
run; needs the fetched model (`make real-model`):

    .venv/bin/python benchmarks/memory_cases.py [--cases smollm2-longest checks-then-second diff updates]
"""

from __future__ import annotations

import argparse

from tests.helpers.memory_cases import CASES, run_case


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", nargs="+", choices=sorted(CASES), default=list(CASES))
    args = parser.parse_args()
    print("| case | answers | peak RSS MB | idle RSS MB | stated bound MB |\n|---|---|---|---|---|")
    for name in args.cases:
        case = run_case(name)
        print(
            f"| {name} | {case['result']} | {case['peak']:,.0f} | {case['idle']:,.0f} | {case['bound']:,.0f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
