#!/usr/bin/env python3
"""The three-way merge of manifests, written from docs/FORMAT.md ("Merge")
alone, as a second implementation to check the first against.

An entry is (id bytes, name bytes, version, added); every other field of an
entry is copied by id and plays no part in the rule.

    vault_merge.py check-vector FORMAT.md   checks the published vectors
    vault_merge.py merge < cases.json        merges each case of a JSON list
        [{"base": [[id hex, name, version, added], ...], "ours": [...],
          "theirs": [...], "ours_generation": n, "theirs_generation": n,
          "needs": {snapshot id hex: [pack id hex, ...]},    (optional: step 0)
          "base_removed": [id hex, ...], "ours_removed": [...],
          "theirs_removed": [...],                          (optional: tombstones)
          "ours_removed_other": [...], ...}]    (optional: those of them whose
                                               digest names another item)
      and prints one JSON list of {"entries": [...], "generation": n,
      "removed": [id hex, ...]} (the merged tombstones' ids, ascending).
"""
import json
import sys

SUFFIX = " (conflict)".encode()


def stem(name):
    if len(name) > len(SUFFIX) and name.endswith(SUFFIX):
        return name[: -len(SUFFIX)]
    return name


def conflict_name(name):
    s = stem(name).decode("utf-8")
    while len(s.encode()) > 1024 - len(SUFFIX):
        s = s[:-1]  # Python strings index Unicode scalars
    return s.encode() + SUFFIX


def keep_packs(base, ours, theirs, needs):
    """Step 0: a snapshot ("snapshot-<id>") that one side holds and neither
    the other side nor the base does keeps the packs ("pack-<id>") it lists
    that its side holds: they count as not in the base."""
    in_base = {e[0] for e in base}
    keep = set()
    for mine, other in ((ours, theirs), (theirs, ours)):
        other_ids = {e[0] for e in other}
        by_name = {e[1]: e[0] for e in mine}
        for e in mine:
            if e[0] in in_base or e[0] in other_ids or e[1] != b"snapshot-" + e[0].hex().encode():
                continue
            for p in needs.get(e[0].hex(), []):
                if b"pack-" + p.encode() in by_name:
                    keep.add(by_name[b"pack-" + p.encode()])
    return [e for e in base if e[0] not in keep], keep


def with_tombstones(base, ours, theirs, removed, keep, other_item=None):
    """Step 1 with tombstones: an id one side holds and the other let go,
    that the base's tombstones do not hold and that is neither in the base
    nor kept by step 0, counts as in the base under the holder's entry;
    unless that tombstone's digest names another item (other_item[side]:
    the ids of such tombstones): then it stays as the holder's addition."""
    other_item = other_item or {"ours": set(), "theirs": set()}
    in_base = {e[0] for e in base}
    out = list(base)
    for side, other in (("ours", "theirs"), ("theirs", "ours")):
        for e in {"ours": ours, "theirs": theirs}[side]:
            if e[0] in removed[other] and e[0] not in removed["base"] and e[0] not in in_base and e[0] not in keep \
                    and e[0] not in other_item[other]:
                out.append(e)
    return out


def merged_removed(ours, theirs, removed, merged):
    """Both sides' tombstones and every id the merge dropped, less what it holds."""
    live = {e[0] for e in merged}
    held = {e[0] for e in ours} | {e[0] for e in theirs}
    return sorted((removed["ours"] | removed["theirs"] | held) - live)


def merge(base, ours, theirs, ours_generation, theirs_generation):
    """base, ours, theirs: lists of (id, name, version, added)."""
    b = {e[0]: e for e in base}
    o = {e[0]: e for e in ours}
    t = {e[0]: e for e in theirs}
    picks = {}  # id -> [name, own, shared, added]

    # Steps 1 and 2: which ids stay, and their names.
    for i in set(o) | set(t):
        if i in o and i in t:
            mine, other, old = o[i], t[i], b.get(i)
            agreed = mine[2] if mine[2] == other[2] else None
            if agreed is None and old is not None:
                if old[2] == mine[2]:
                    agreed = other[2]
                elif old[2] == other[2]:
                    agreed = mine[2]
            name = mine[1]
            if mine[1] != other[1]:
                if old is not None and mine[1] == old[1]:
                    name = other[1]
                elif old is not None and other[1] == old[1]:
                    name = mine[1]
                else:
                    name = conflict_name(min(stem(mine[1]), stem(other[1])))
                    agreed = None
            picks[i] = [name, min(mine[2], other[2]), agreed, mine[3]]
        else:
            one = o.get(i) or t.get(i)
            if i not in b:
                picks[i] = [one[1], one[2], None, one[3]]

    # Step 3: removed on one side, changed on the other.
    items = {}
    for e in base:
        items.setdefault(e[1], []).append(e)
    for name in sorted(items):
        ids = [e[0] for e in items[name]]
        for removing, keeping in ((t, o), (o, t)):
            if any(i in removing for i in ids):
                continue
            held = [keeping[i] for i in ids if i in keeping]
            if not held:
                continue
            names = {e[1] for e in held}
            added = [e for e in keeping.values() if e[0] not in b and e[1] in names]
            renamed = any(e[1] != name for e in held)
            if not renamed and not added:
                continue
            for e in held + added:
                picks[e[0]] = [conflict_name(e[1]), e[2], None, e[3]]

    # Step 4: version numbers, per merged name.
    by_name = {}
    for i, p in picks.items():
        by_name.setdefault(p[0], []).append((i, p))
    out = []
    for name, group in by_name.items():
        claims = {}
        for _, p in group:
            if p[2] is not None:
                claims[p[2]] = claims.get(p[2], 0) + 1
        kept, floating = set(), []
        for i, p in group:
            if p[2] is not None and claims[p[2]] == 1:
                out.append((i, name, p[2], p[3]))
                kept.add(p[2])
            else:
                floating.append((i, p))
        floating.sort(key=lambda x: (x[1][1], x[1][3], x[0]))
        previous = 0
        for i, p in floating:
            n = max(previous + 1, p[1])
            while n in kept:
                n += 1
            if n > 0xFFFFFFFF:
                raise ValueError("too many versions")
            previous = n
            out.append((i, name, n, p[3]))

    # Step 5: records by name bytes, then version; generation above both.
    out.sort(key=lambda e: (e[1], e[2]))
    return out, max(ours_generation, theirs_generation) + 1


def parse_vector(path, name="merge-vector"):
    """Sections (generation, entries, removed ids) of a vector block."""
    text = open(path, encoding="utf-8").read()
    block = text.split("<!-- %s -->" % name)[1].split("<!-- end %s -->" % name)[0]
    sections, current = {}, None
    for line in block.splitlines():
        if not line.strip():
            continue
        words = line.split()
        if line.startswith("    ") and not line.startswith("     "):
            current = words[0]
            sections[current] = (int(words[1]), [], set(), set())
        elif words[0] == "removed":
            # "02*": a tombstone whose digest names another item.
            sections[current][2].update(bytes([int(w.rstrip("*"), 16)]) * 16 for w in words[1:])
            sections[current][3].update(bytes([int(w[:-1], 16)]) * 16 for w in words[1:] if w.endswith("*"))
        else:
            entry = (bytes([int(words[0], 16)]) * 16, " ".join(words[1:-2]).encode(), int(words[-2]), int(words[-1]))
            sections[current][1].append(entry)
    return sections


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "check-vector":
        for name in ("merge-vector", "merge-vector-tombstones", "merge-vector-claimed"):
            v = parse_vector(sys.argv[2], name)
            for ours, theirs in (("ours", "theirs"), ("theirs", "ours")):
                removed = {"base": v["base"][2], "ours": v[ours][2], "theirs": v[theirs][2]}
                other_item = {"ours": v[ours][3], "theirs": v[theirs][3]}
                base = with_tombstones(v["base"][1], v[ours][1], v[theirs][1], removed, set(), other_item)
                got, generation = merge(base, v[ours][1], v[theirs][1], v[ours][0], v[theirs][0])
                gone = merged_removed(v[ours][1], v[theirs][1], removed, got)
                if got != v["merged"][1] or generation != v["merged"][0] or gone != sorted(v["merged"][2]):
                    print(name + ": mismatch", got, generation, gone)
                    return 1
            print(name + ": ok")
        return 0
    if len(sys.argv) == 2 and sys.argv[1] == "merge":
        results = []
        for case in json.load(sys.stdin):
            side = lambda k: [(bytes.fromhex(e[0]), e[1].encode(), e[2], e[3]) for e in case[k]]
            base, keep = keep_packs(side("base"), side("ours"), side("theirs"), case.get("needs", {}))
            removed = {k: {bytes.fromhex(i) for i in case.get(k + "_removed", [])} for k in ("base", "ours", "theirs")}
            other_item = {k: {bytes.fromhex(i) for i in case.get(k + "_removed_other", [])} for k in ("ours", "theirs")}
            base = with_tombstones(base, side("ours"), side("theirs"), removed, keep, other_item)
            got, generation = merge(base, side("ours"), side("theirs"),
                                    case["ours_generation"], case["theirs_generation"])
            results.append({"entries": [[e[0].hex(), e[1].decode(), e[2], e[3]] for e in got], "generation": generation,
                            "removed": [i.hex() for i in merged_removed(side("ours"), side("theirs"), removed, got)]})
        json.dump(results, sys.stdout)
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
