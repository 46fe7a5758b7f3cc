#!/usr/bin/python3
"""Runs `ephost test` over the ONNX backend node cases and compares the cases that do not pass with
the checked-in list of expected failures.

    run_node_tests.py --ephost BUILD/tools/cli/ephost [--cases DIR] [--list FILE] [--update]

Without --cases, the cases are generated (or found in the cache) by generate_node_tests.py next to
this script. A case that does not pass either fails or is skipped (ephost cannot feed its data, e.g.
sequences): both must be listed. Exit status 0 when the cases that do not pass are exactly the listed
ones; 1 when a case outside the list fails or is skipped (a regression: printed with its reason) or a
listed case passes (remove it from the list), or when ephost itself cannot run.

--update rewrites the list from this run instead: every case that does not pass, keeping the reasons
already in the list and taking ephost's FAIL or SKIP reason for new entries; cases that now pass are
dropped. The comment lines at the top of the list are kept.

The list: one case per line, its name, whitespace, then why it fails; '#' starts a comment line.
"""
import argparse
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_LIST = os.path.join(HERE, "expected_failures.txt")
RESULT_LINE = re.compile(r"^(PASS|FAIL|SKIP) (\S+?)(?:: (.*)| \(.*\))?$")
SUMMARY_LINE = re.compile(r"^\d+ passed, \d+ failed(, \d+ skipped)?$")


def log(message):
    print(f"onnx_node_conformance: {message}", flush=True)


def read_list(path):
    """(header comment lines, {case: reason}). A missing file is an empty list."""
    header, entries = [], {}
    if not os.path.exists(path):
        return header, entries
    with open(path) as f:
        for number, raw in enumerate(f, 1):
            line = raw.rstrip("\n")
            stripped = line.strip()
            if not stripped or stripped.startswith("#"):
                if not entries:
                    header.append(line)
                continue
            fields = stripped.split(None, 1)
            name, reason = fields[0], fields[1].strip() if len(fields) > 1 else ""
            if name in entries:
                raise SystemExit(f"{path}:{number}: case {name} is listed twice")
            entries[name] = reason or "(no reason given)"
    while header and not header[-1].strip():
        header.pop()
    return header, entries


def write_list(path, header, entries):
    with open(path, "w") as f:
        for line in header:
            f.write(line + "\n")
        if header:
            f.write("\n")
        width = max((len(name) for name in entries), default=0)
        for name in sorted(entries):
            f.write(f"{name.ljust(width)}  {entries[name]}\n")


def generate_cases():
    generator = os.path.join(HERE, "generate_node_tests.py")
    done = subprocess.run([sys.executable, generator], stdout=subprocess.PIPE, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{generator} failed (exit status {done.returncode})")
    return done.stdout.strip()


def run_suite(ephost, cases):
    """({case: (outcome, reason)}, summary line) from `ephost test -v`."""
    env = dict(os.environ)
    # Only the built-in CPU plugin: plugins installed on the machine must not change the result.
    env["EPHOST_PLUGIN_PATH"] = os.path.join(cases, "no-plugins-here")
    command = [ephost, "test", "-v", cases]
    done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    results, summary = {}, None
    for line in done.stdout.splitlines():
        m = RESULT_LINE.match(line)
        if m:
            results[m.group(2)] = (m.group(1), m.group(3) or "")
        elif SUMMARY_LINE.match(line):
            summary = line
    # Exit status 1 only means that some case failed; anything else, or no summary, is a crash.
    if done.returncode not in (0, 1) or summary is None:
        tail = "\n".join(done.stdout.splitlines()[-20:])
        raise SystemExit(f"`{' '.join(command)}` did not finish (exit status {done.returncode}):\n{tail}")
    return results, summary


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ephost", required=True, help="the ephost command line binary")
    parser.add_argument("--cases", help="folder of node cases (default: generate them into the cache)")
    parser.add_argument("--list", default=DEFAULT_LIST, help=f"expected failures (default {DEFAULT_LIST})")
    parser.add_argument("--update", action="store_true", help="rewrite the list from this run")
    args = parser.parse_args()

    cases = args.cases or generate_cases()
    return judge_against_list(args.ephost, cases, args.list, args.update, os.path.abspath(__file__))


def judge_against_list(ephost, cases, list_file, update, rerun_script, per_case=None, say=log):
    """Runs the cases and compares the ones that do not pass with the expected-failures list (or, with
    `update`, rewrites the list). `per_case(results)` may log a breakdown first; `say` logs. Returns the exit status:
    1 for a regression or a listed case that now passes or is gone, else 0."""
    header, expected = read_list(list_file)
    results, summary = run_suite(ephost, cases)
    not_passing = {name: reason if outcome == "FAIL" else f"not run: {reason}"
                   for name, (outcome, reason) in results.items() if outcome != "PASS"}
    if per_case:
        per_case(results)

    if update:
        entries = {name: expected.get(name, reason) for name, reason in not_passing.items()}
        write_list(list_file, header, entries)
        kept = sum(1 for name in entries if name in expected)
        say(f"wrote {len(entries)} expected failures to {list_file} ({kept} kept, {len(entries) - kept} new, "
            f"{len(set(expected) - set(entries))} removed)")
        say(summary)
        return 0

    regressions = sorted(set(not_passing) - set(expected))
    now_passing = sorted(set(expected) - set(not_passing))
    for name in regressions:
        print(f"REGRESSION {name}: {not_passing[name]}")
    for name in now_passing:
        if name not in results:
            print(f"STALE {name}: not in the suite, remove it from the list")
        else:
            print(f"FIXED {name}: now passes, remove it from the list")
    say(summary)
    say(f"{len(not_passing) - len(regressions)} expected failures, {len(regressions)} regressions, "
        f"{len(now_passing)} listed cases that pass or are not in the suite")
    if regressions or now_passing:
        say(f"to accept the current state: {rerun_script} --ephost {ephost} --update")
        return 1
    return 0

if __name__ == "__main__":
    sys.exit(main())
