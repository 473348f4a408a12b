"""A linearizability checker for register histories with compare-and-set (docs/reliability.md), written for
the fault tests: none is packaged for Debian or PyPI.

A history is a list of `Op`s on keys, each invoked and (maybe) completed at times the client saw. It is
linearizable when every key's operations can be put in one order that respects real time (an operation
that completed before another was invoked comes first) and in which every read returns the latest write.
Keys are independent registers, so each key is checked on its own (linearizability is local).

The search is Wing & Gong's, with Lowe's memo of (operations done, register value) states already tried,
as Knossos does. An operation whose outcome the client never learned (a timeout, a dropped connection) may
have taken effect at any moment after it was invoked, or never: it never constrains the order, and the
search may leave it out. Its read value is unknown too, so such a read is dropped.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

INFINITY = float("inf")


@dataclass
class Op:
    """One client operation. `kind` is "read", "write" or "cas". `ok` is True when it took effect (a read
    that answered, an acknowledged write, a compare-and-set that matched), False when the server said it
    did not (a compare-and-set refused as stale: it read a different value), None when the client never
    learned (the operation may or may not have happened)."""

    process: int
    kind: str
    key: str
    invoked: float
    completed: float | None = None
    ok: bool | None = None
    value: object = None      # a write's or a compare-and-set's new value
    expected: object = None   # a compare-and-set's expected value
    result: object = None     # what a read returned

    def describe(self) -> str:
        what = {"read": f"read -> {self.result!r}", "write": f"write {self.value!r}",
                "cas": f"cas {self.expected!r} -> {self.value!r}"}[self.kind]
        outcome = {True: "ok", False: "refused", None: "unknown"}[self.ok]
        return f"p{self.process} {self.key}: {what} [{outcome}] {self.invoked:.4f}..{self.completed if self.completed is None else round(self.completed, 4)}"


@dataclass
class Verdict:
    linearizable: bool
    key: str | None = None
    # When not: the longest prefix the search could order, and the operations it could not place next.
    ordered: list[Op] = field(default_factory=list)
    stuck: list[Op] = field(default_factory=list)

    def explain(self) -> str:
        if self.linearizable:
            return "linearizable"
        lines = [f"key {self.key}: not linearizable. The longest order found ({len(self.ordered)} operations) ends:"]
        lines += ["  " + op.describe() for op in self.ordered[-8:]]
        lines.append("and none of these can come next:")
        lines += ["  " + op.describe() for op in self.stuck[:12]]
        return "\n".join(lines)


def check(history: list[Op], initial: object = None, budget: int = 5_000_000) -> Verdict:
    """Checks every key of `history`; the first key that is not linearizable decides."""
    keys: dict[str, list[Op]] = {}
    for op in history:
        keys.setdefault(op.key, []).append(op)
    for key, ops in sorted(keys.items()):
        verdict = check_key(key, ops, initial, budget)
        if not verdict.linearizable:
            return verdict
    return Verdict(True)


def _applies(op: Op, state: object) -> tuple[bool, object]:
    """Whether `op` can take effect on a register holding `state`, and the register after it."""
    if op.kind == "read":
        return op.result == state, state
    if op.kind == "write":
        return True, op.value
    if op.ok is False:  # a refused compare-and-set read something else
        return state != op.expected, state
    return state == op.expected, op.value


def check_key(key: str, ops: list[Op], initial: object = None, budget: int = 5_000_000) -> Verdict:
    # A read whose answer never came says nothing; an operation without an answer never has to happen.
    ops = [op for op in ops if not (op.kind == "read" and op.ok is not True)]
    ops.sort(key=lambda op: (op.invoked, op.completed if op.completed is not None else INFINITY))
    ends = [op.completed if (op.completed is not None and op.ok is not None) else INFINITY for op in ops]
    required = [end != INFINITY for end in ends]
    everything_required = sum(1 << index for index, needed in enumerate(required) if needed)
    count = len(ops)

    seen: set[tuple[int, str]] = set()
    best: tuple[int, list[int]] = (-1, [])
    # Depth-first, iteratively: each frame is (done mask, state, order so far, candidates left to try).
    def candidates(done: int) -> list[int]:
        # The earliest completion among required operations not done yet bounds what may come next.
        horizon = min((ends[index] for index in range(count) if not done >> index & 1 and required[index]), default=INFINITY)
        return [index for index in range(count) if not done >> index & 1 and ops[index].invoked <= horizon]

    stack = [(0, initial, [], candidates(0))]
    steps = 0
    while stack:
        done, state, order, left = stack[-1]
        if done & everything_required == everything_required:
            return Verdict(True, key)
        if not left:
            stack.pop()
            continue
        index = left.pop(0)
        steps += 1
        if steps > budget:
            raise RuntimeError(f"key {key}: the search took more than {budget} steps; make histories shorter or less concurrent")
        fits, after = _applies(ops[index], state)
        if not fits:
            continue
        next_done = done | 1 << index
        memo = (next_done, json.dumps(after, sort_keys=True))
        if memo in seen:
            continue
        seen.add(memo)
        next_order = order + [index]
        if len(next_order) > best[0]:
            best = (len(next_order), next_order)
        stack.append((next_done, after, next_order, candidates(next_done)))

    done_mask = sum(1 << index for index in best[1])
    return Verdict(False, key, [ops[index] for index in best[1]], [ops[index] for index in candidates(done_mask)])


def _self_contained(history: list[Op], initial: object) -> bool:
    """Every value a read returned or a compare-and-set expected was written by an operation still there
    (or is the initial value): dropping the write a read saw would make any history fail, trivially."""
    written = {(op.key, json.dumps(op.value, sort_keys=True)) for op in history if op.kind in ("write", "cas")}
    written |= {(op.key, json.dumps(initial)) for op in history}
    needed = [(op.key, json.dumps(op.result if op.kind == "read" else op.expected, sort_keys=True))
              for op in history if op.kind == "read" or (op.kind == "cas" and op.ok is True)]
    return all(value in written for value in needed)


def minimise(history: list[Op], initial: object = None) -> list[Op]:
    """A smaller history that is still not linearizable, for the regression test: blocks of operations are
    dropped while the verdict stays (halves first, then quarters, down to single operations), keeping the
    writes that what is left read."""
    assert not check(history, initial).linearizable
    current = list(history)
    block = max(1, len(current) // 2)
    while True:
        start = 0
        while start < len(current):
            trial = current[:start] + current[start + block:]
            if trial and _self_contained(trial, initial) and not check(trial, initial).linearizable:
                current = trial
            else:
                start += block
        if block == 1:
            return current
        block = max(1, block // 2)


def save(history: list[Op], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps([asdict(op) for op in history], indent=1))


def load(path: Path) -> list[Op]:
    return [Op(**fields) for fields in json.loads(path.read_text())]
