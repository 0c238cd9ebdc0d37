#!/usr/bin/env python3
"""Tables of the planner's accuracy from a `bench/planner_device.sh OUT accuracy` log.

Reads the "predicted and measured latency" blocks that `docbin-bench --predict`
prints and writes Markdown: the map --map auto picks against the fastest
measured map, and per algorithm and image how many maps are predicted within
20% of their measured median: from the calibration alone, and (logs that have
the column) from the calibration and the timed runs of the page's other maps;
with --all, every prediction, and each map's copies predicted and measured where the log has them.
Where the log says how much of the machine's CPU time the hypervisor took while a page's maps ran
(docbin-bench prints it from /proc/stat), a column gives it, and a line counts the maps within 20% on
pages where it took 1% or more against the others.
Last, how consistent the measurement was: of the stage medians above 0.05 ms,
how many are more than 20% off the median of the same stage on the same role
over the maps of that algorithm and image (the same work, measured in other maps).

usage: planner_summary.py LOG [--all]   (--all: also every prediction)
"""
import re
import statistics
import sys


def stage_consistency(path):
    """(off, total): stage medians > 0.05 ms more than 20% off their median over the maps."""
    cells, key = {}, None
    head = re.compile(r"^(\S+) (\S+) \((\d+x\d+)\) map (\S+): median")
    stage = re.compile(r"^  (\w+)\s+(cpu|gpu)\s+([0-9.]+) ms")
    for line in open(path):
        m = head.match(line)
        if m:
            key = (m.group(1), m.group(2), m.group(3))
            continue
        m = stage.match(line)
        if m and key:
            cells.setdefault(key + (m.group(1), m.group(2)), []).append(float(m.group(3)))
    off = total = 0
    for values in cells.values():
        if len(values) < 2:
            continue
        med = statistics.median(values)
        for v in values:
            total += 1
            off += med > 0.05 and abs(v / med - 1) > 0.2
    return off, total


def stolen(path):
    """{(algo, image file name): percent} from docbin-bench's lines on the hypervisor's share."""
    line_re = re.compile(r"^(\S+) (\S+): the hypervisor took ([0-9.]+)% of the machine's CPU time while its maps ran")
    out = {}
    for line in open(path):
        m = line_re.match(line)
        if m:
            out[(m.group(1), m.group(2).rsplit("/", 1)[-1])] = float(m.group(3))
    return out


def parse(path):
    blocks, cur = [], None
    head = re.compile(r"^predicted and measured latency: (\S+) (\S+) \((\d+x\d+)\)")
    row = re.compile(r"^\s+([a-z,]+)\s+([0-9.]+|-)\s+([0-9.]+)\s+([+-][0-9.]+%|-)(?:\s+([0-9.]+)\s+[+-][0-9.]+%)?"
                     r"(?:\s+([0-9.]+|\?)\s+([0-9.]+))?")
    auto = re.compile(r"^\s+auto picks (\S+): measured ([0-9.]+) ms; fastest measured (\S+): ([0-9.]+) ms; "
                      r"auto is ([0-9.]+)% slower")
    for line in open(path):
        m = head.match(line)
        if m:
            cur = {"algo": m.group(1), "image": m.group(2).rsplit("/", 1)[-1], "size": m.group(3),
                   "rows": [], "auto": None}
            blocks.append(cur)
            continue
        if cur is None:
            continue
        m = auto.match(line)
        if m:
            cur["auto"] = m.groups()
            cur = None
            continue
        m = row.match(line)
        if m and m.group(2) != "-":
            after = float(m.group(5)) if m.group(5) else None
            copies = (m.group(6), m.group(7)) if m.group(7) else None
            cur["rows"].append((m.group(1), float(m.group(2)), float(m.group(3)), after, copies))
    return blocks


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    blocks = parse(sys.argv[1])
    if not blocks:
        sys.exit(f"{sys.argv[1]}: no 'predicted and measured latency' blocks; is it a docbin-bench --predict log?")
    print("| algorithm | image | auto picks | its measured ms | fastest measured | its ms | auto slower by |")
    print("|---|---|---|---|---|---|---|")
    for b in blocks:
        if b["auto"]:
            a = b["auto"]
            print(f"| {b['algo']} | {b['image']} ({b['size']}) | {a[0]} | {a[1]} | {a[2]} | {a[3]} | {a[4]}% |")
    print()
    has_after = any(r[3] is not None for b in blocks for r in b["rows"])
    has_copies = any(r[4] is not None for b in blocks for r in b["rows"])
    steal = stolen(sys.argv[1])
    print("| algorithm | image | maps within 20% | median abs. error | largest abs. error (map) |"
          + (" after other maps: within 20% | its largest abs. error (map) |" if has_after else "")
          + (" CPU time stolen |" if steal else ""))
    print("|---|---|---|---|---|" + ("---|---|" if has_after else "") + ("---|" if steal else ""))
    within = within_after = total = 0
    by_steal = {True: [0, 0], False: [0, 0]}  # stolen >= 1%: [within 20%, maps]
    for b in blocks:
        errs = [(100 * (p - m) / m, name) for name, p, m, _, _ in b["rows"]]
        if not errs:
            continue
        ok = sum(abs(e) <= 20 for e, _ in errs)
        within += ok
        total += len(errs)
        worst = max(errs, key=lambda x: abs(x[0]))
        med = statistics.median(abs(e) for e, _ in errs)
        line = (f"| {b['algo']} | {b['image']} ({b['size']}) | {ok} of {len(errs)} | {med:.1f}% | "
                f"{worst[0]:+.1f}% ({worst[1]}) |")
        if has_after:
            after = [(100 * (a - m) / m, name) for name, _, m, a, _ in b["rows"] if a is not None]
            ok_after = sum(abs(e) <= 20 for e, _ in after)
            within_after += ok_after
            worst = max(after, key=lambda x: abs(x[0]))
            line += f" {ok_after} of {len(after)} | {worst[0]:+.1f}% ({worst[1]}) |"
        if steal:
            pct = steal.get((b["algo"], b["image"]))
            line += f" {pct:.2f}% |" if pct is not None else " - |"
            if pct is not None:
                by_steal[pct >= 1][0] += ok
                by_steal[pct >= 1][1] += len(errs)
        print(line)
    print()
    print(f"overall: {within} of {total} map predictions within 20%")
    if has_after:
        print(f"after the page's other maps ran: {within_after} of {total} within 20%")
    if steal:
        print(f"on pages where the hypervisor took 1% or more of the CPU time: {by_steal[True][0]} of "
              f"{by_steal[True][1]} within 20%; on the others: {by_steal[False][0]} of {by_steal[False][1]}")
    off, stages = stage_consistency(sys.argv[1])
    print(f"stage medians more than 20% off their median over the maps: {off} of {stages}")
    if "--all" in sys.argv:
        print()
        print("| algorithm | image | map | predicted ms | measured ms | error | after other maps | error |"
              + (" copies predicted ms | copies measured ms |" if has_copies else ""))
        print("|---|---|---|---|---|---|---|---|" + ("---|---|" if has_copies else ""))
        for b in blocks:
            for name, p, m, a, c in b["rows"]:
                after = f"{a:.3f} | {100 * (a - m) / m:+.1f}%" if a is not None else "- | -"
                copies = (f" {c[0]} | {c[1]} |" if c else " - | - |") if has_copies else ""
                print(f"| {b['algo']} | {b['image']} | {name} | {p:.3f} | {m:.3f} | {100 * (p - m) / m:+.1f}% | "
                      f"{after} |{copies}")


main()
