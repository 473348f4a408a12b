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
# The register's value when it holds something no operation ever compares it with (no read returned it,
# no compare-and-set expected it): all such values behave alike from then on.
UNOBSERVED = "\x00unobserved"


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


def check(history: list[Op], initial: object = None, budget: int = 5_000_000, unanswered_within: float | None = None) -> Verdict:
    """Checks every key of `history`; the first key that is not linearizable decides. With
    `unanswered_within`, an operation without an answer took effect within that many seconds of its
    invocation or not at all (the server's own time limits bound it); without, at any time."""
    keys: dict[str, list[Op]] = {}
    for op in history:
        keys.setdefault(op.key, []).append(op)
    for key, ops in sorted(keys.items()):
        verdict = check_key(key, ops, initial, budget, unanswered_within)
        if not verdict.linearizable:
            return verdict
    return Verdict(True)


def _applies(op: Op, state: object, observed: set[str]) -> tuple[bool, object]:
    """Whether `op` can take effect on a register holding `state`, and the register after it (a value
    nobody observed as ``UNOBSERVED``)."""
    def canonical(value):
        return value if json.dumps(value, sort_keys=True) in observed else UNOBSERVED
    if op.kind == "read":
        return op.result == state, state
    if op.kind == "write":
        return True, canonical(op.value)
    if op.ok is False:  # a refused compare-and-set read something else
        return state != op.expected, state
    return state == op.expected, canonical(op.value)


def check_key(key: str, ops: list[Op], initial: object = None, budget: int = 5_000_000,
              unanswered_within: float | None = None) -> Verdict:
    # A read whose answer never came says nothing; an operation without an answer never has to happen.
    ops = [op for op in ops if not (op.kind == "read" and op.ok is not True)]
    ops.sort(key=lambda op: (op.invoked, op.completed if op.completed is not None else INFINITY))
    ends = [op.completed if (op.completed is not None and op.ok is not None) else INFINITY for op in ops]
    required = [end != INFINITY for end in ends]
    required_mask = sum(1 << index for index, needed in enumerate(required) if needed)
    count = len(ops)
    # Required operations first, soonest answered first (a linearizable history is then usually ordered
    # without backtracking), then the ones without an answer.
    preference = sorted(range(count), key=lambda index: (not required[index], ends[index], ops[index].invoked))
    # Values some operation compares the register with: what reads returned, what compare-and-sets expected.
    observed = {json.dumps(op.result if op.kind == "read" else op.expected, sort_keys=True)
                for op in ops if op.kind in ("read", "cas")}
    # An unanswered write of a value nobody observed can only have mattered by leaving the register at
    # something else (so that a refused compare-and-set was right): any one of them does that, so only
    # the earliest pending one is tried.
    blind = [not required[index] and ops[index].kind == "write" and json.dumps(ops[index].value, sort_keys=True) not in observed
             for index in range(count)]

    # States tried: (required operations done, register value) -> the sets of unanswered operations done
    # with them. One with a subset of another's unanswered operations done can do everything the other can
    # (an unanswered operation may be placed at any later moment), so a failure there covers the other.
    tried: dict[tuple[int, str], list[int]] = {}
    by_end = [index for index in preference if required[index]]

    # The latest moment each operation can take effect: its answer, or for one without an answer, the
    # bound given (an operation invoked after that moment and already ordered rules it out).
    deadlines = [ends[index] if required[index] else (ops[index].invoked + unanswered_within if unanswered_within else INFINITY)
                 for index in range(count)]

    def candidates(done: int, first: int, first_required: int, latest: float = -INFINITY) -> tuple[list[int], int, int]:
        """What may come next after `done`, and the advanced pointers: the first operation (in invocation
        order) not done, and the first required one (in answer order) not done."""
        while first < count and done >> first & 1:
            first += 1
        while first_required < len(by_end) and done >> by_end[first_required] & 1:
            first_required += 1
        # The earliest answer among required operations not done yet bounds what may come next.
        horizon = ends[by_end[first_required]] if first_required < len(by_end) else INFINITY
        window = []
        index = first
        while index < count and ops[index].invoked <= horizon:
            if not done >> index & 1 and deadlines[index] >= latest:
                window.append(index)
            index += 1
        window.sort(key=rank.__getitem__)
        found, blind_taken = [], False
        for index in window:
            if blind[index]:
                if blind_taken:
                    continue
                blind_taken = True
            found.append(index)
        return found, first, first_required

    rank = [0] * count
    for position, index in enumerate(preference):
        rank[index] = position
    def absorb(done, state, order, depth, first, first_required, latest):
        """Orders every operation that may come next and leaves the register as it is while it is right
        about it (a read of the current value, a compare-and-set refused on another). Doing so now never
        rules out an order: in any order that has it later, moving it here keeps every value the same and
        every real-time constraint (it may come next), unless an unanswered operation's bound would pass
        (then it waits). So these take no branch of the search. Returns the frame after them."""
        while True:
            found, first, first_required = candidates(done, first, first_required, latest)
            free = [index for index in found if ops[index].kind == "read" or (ops[index].kind == "cas" and ops[index].ok is False)]
            bound = min((deadlines[index] for index in found if not required[index]), default=INFINITY)
            taken = False
            for index in free:
                if ops[index].invoked > bound:
                    continue
                fits, _ = _applies(ops[index], state, observed)
                if fits:
                    done |= 1 << index
                    order = (index, order)
                    depth += 1
                    latest = max(latest, ops[index].invoked)
                    taken = True
            if not taken:
                return done, order, depth, first, first_required, latest, found

    start = initial if json.dumps(initial) in observed else UNOBSERVED
    done0, order0, depth0, first, first_required, latest0, first_candidates = absorb(0, start, None, 0, 0, 0, -INFINITY)
    # Each frame: done mask, register, the order so far (a linked list: index, parent), depth, pointers, the
    # latest invocation ordered, choices left.
    stack = [(done0, start, order0, depth0, first, first_required, latest0, first_candidates)]
    steps = 0
    best: tuple[int, object] = (-1, None)
    while stack:
        done, state, order, depth, first, first_required, latest, left = stack[-1]
        if done & required_mask == required_mask:
            return Verdict(True, key)
        if not left:
            stack.pop()
            continue
        index = left.pop(0)
        steps += 1
        if steps > budget:
            raise RuntimeError(f"key {key}: the search took more than {budget} steps; make histories shorter or less concurrent")
        fits, after = _applies(ops[index], state, observed)
        if not fits:
            continue
        next_done = done | 1 << index
        key_state = (next_done & required_mask, json.dumps(after, sort_keys=True))
        optional_done = next_done & ~required_mask
        seen = tried.setdefault(key_state, [])
        if any(previous & ~optional_done == 0 for previous in seen):
            continue
        seen.append(optional_done)
        next_done, next_order, next_depth, next_first, next_first_required, next_latest, next_candidates = absorb(
            next_done, after, (index, order), depth + 1, first, first_required, max(latest, ops[index].invoked))
        if next_depth > best[0]:
            best = (next_depth, next_order)
        stack.append((next_done, after, next_order, next_depth, next_first, next_first_required, next_latest, next_candidates))

    ordered = []
    link = best[1]
    while link is not None:
        ordered.append(link[0])
        link = link[1]
    ordered.reverse()
    done_mask = sum(1 << index for index in ordered)
    stuck, _, _ = candidates(done_mask, 0, 0)
    return Verdict(False, key, [ops[index] for index in ordered], [ops[index] for index in stuck])


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
