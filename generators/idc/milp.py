"""IDC Method 2 — the MILP pseudo-ground truth (SPECS §5.4, Eqs. 3–5), solved with SCIP.

Documents are lists of (lower-cased) word tokens; tokenisation is the caller's business.

The program over binary ``v^c[j]`` (class c selects word j of the vocabulary V)::

    min  Σ_c Σ_{d∈D^c} Σ_{ĉ≠c} d·v^ĉ  +  ε Σ_c |v^c|
    s.t. Σ_c v^c[j] ≤ 1            for every word j of V
         d·v^c ≥ 1                 for every retained document d of class c

is solved in the equivalent per-word-cost form ``Σ_c Σ_j v^c[j]·w_c(j)``, ``w_c(j) = df_{¬c}(j) + ε``
(``df_{¬c}(j)``: retained documents outside class c that contain j). With the default
``ε = 1/(|C||V|+1)`` the weights are scaled to the integers ``df_{¬c}(j)·(|C||V|+1) + 1`` (the ε-part
sums to less than one unit, so the optimum is lexicographic: least cost, then fewest features).

`solve_milp` runs the stages below over one `_Milp` state: `_setup` (index documents, costs, weights),
then either `_solve_plain` (``reduce=False``) or `_presolve` (exact reductions, `_reduce`) →
`_relax` (per-class covers: a lower bound, optimal when their optima are disjoint) → `_repair` (an
upper bound) → `_solve_coupled` (the reduced coupled model); `_solve_slack` when the program is
infeasible, and `_result` reads the solution into a `MilpResult`. The reductions, the stages, the SCIP
settings and the experiments on why MR with |V| = 3,000 is hard are in docs/idc.md ("MILP solver").
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Collection, Hashable, Sequence

__all__ = ["MilpResult", "solve_milp", "tfidf_vocabulary"]


def _identity(tokens):
    return list(tokens)


def tfidf_vocabulary(docs: Sequence[Sequence[str]], size: int) -> list[str]:
    """The `size` words with the highest TF-IDF (max over documents; smooth idf, l2 rows); ties by word."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    vec = TfidfVectorizer(analyzer=_identity, lowercase=False, smooth_idf=True, norm="l2")
    x = vec.fit_transform(docs)
    scores = x.max(axis=0).toarray().ravel()
    names = vec.get_feature_names_out()
    order = sorted(range(len(names)), key=lambda i: (-float(scores[i]), str(names[i])))
    return [str(names[i]) for i in order[:size]]


@dataclass
class MilpResult:
    features: dict  # class -> sorted list of words (IF_c)
    objective: int | float  # other-class features contained, summed over retained documents
    n_documents: int  # retained documents
    n_discarded: int  # documents with fewer than `min_words` words of V
    violated: int  # documents left uncovered (slack); 0 when feasible
    optimal: bool  # proven optimal for the original problem
    gap: float  # (upper − lower bound) / upper on the integer-scaled objective; 0 when proven optimal
    solve_seconds: float
    n_variables: int  # of the plain formulation (|C||V|, + slacks when infeasible)
    n_constraints: int  # of the plain formulation (|V| coupling + one per document)
    reduced_variables: int = 0  # largest model actually given to SCIP (per-class or coupled)
    reduced_constraints: int = 0
    reductions: dict = field(default_factory=dict)  # what each reduction removed
    method: str = ""  # "decomposed", "repaired", "coupled", "plain" or "slack"
    cardinality: int = 0  # Σ_c |IF_c|
    stages: dict = field(default_factory=dict)  # seconds per stage, bounds (cost + ε·|IF| units), sizes
    # the returned solution's value and the best proven lower bound, both in cost + ε·|IF| units
    # (objective + ε·cardinality); equal when proven optimal. None when no bound is known.
    upper_bound: float | None = None
    lower_bound: float | None = None
    time_limit: float | None = None  # seconds the call was given (None: until proven optimal)
    timed_out: bool = False  # the time limit stopped a solve before optimality was proven

    def status(self) -> str:
        """One line for cards and logs: proven optimal, or the gap and bounds of what was returned."""
        if self.optimal:
            return f"proven optimal (objective {self.objective}, {self.solve_seconds:.0f} s)"
        lb = "unknown" if self.lower_bound is None else f"{self.lower_bound:.2f}"
        why = f"time limit {self.time_limit:g} s reached" if self.timed_out else "not proven optimal"
        return (f"{why}: returned solution {self.upper_bound:.2f}, lower bound {lb}, gap {self.gap:.2%} "
                f"(cost + ε·|IF| units)")

    def summary(self) -> str:
        return (
            f"method={self.method} docs={self.n_documents} discarded={self.n_discarded} "
            f"vars={self.n_variables}->{self.reduced_variables} cons={self.n_constraints}->"
            f"{self.reduced_constraints} objective={self.objective} |IF|={self.cardinality} "
            f"violated={self.violated} optimal={self.optimal} gap={self.gap:.4g} "
            f"time={self.solve_seconds:.2f}s reductions={self.reductions} stages={self.stages}"
        )


# --------------------------------------------------------------------------------------------------
# SCIP wrapper and the parallel runner

# docs/idc.md, "MILP solver experiments"; applied to every cover model (per-class, repair, coupled)
_COVER_PARAMS = {"separating/maxrounds": 0, "separating/maxroundsroot": 0, "branching/relpscost/sbiterquot": 0.1}


def _scip(
    weights: dict,  # key -> objective coefficient
    covers: list,  # (keys, slack_key or None)
    couplings: list,  # keys with Σ ≤ 1
    cuts: list,  # (keys, rhs): Σ weights[key]·x ≥ rhs
    time_limit: float | None,
    hint: set | None = None,
    params: dict | None = None,
):
    """Solve the binary program; returns (chosen keys, status, objective, dual bound)."""
    from pyscipopt import Model, quicksum

    m = Model("idc-milp")
    m.hideOutput()
    m.setParam("limits/gap", 0.0)
    m.setParam("limits/absgap", 0.0)
    m.setParam("randomization/randomseedshift", 0)
    for name, value in (params or {}).items():
        m.setParam(name, value)
    if time_limit is not None:
        m.setParam("limits/time", max(float(time_limit), 0.01))
    x = {k: m.addVar(vtype="B", obj=float(w), name=f"x{i}") for i, (k, w) in enumerate(weights.items())}
    for i, (keys, slack) in enumerate(covers):
        terms = [x[k] for k in keys]
        if slack is not None:
            terms.append(x[slack])
        m.addCons(quicksum(terms) >= 1, name=f"cover{i}")
    for i, keys in enumerate(couplings):
        m.addCons(quicksum(x[k] for k in keys) <= 1, name=f"couple{i}")
    for i, (keys, rhs) in enumerate(cuts):
        m.addCons(quicksum(float(weights[k]) * x[k] for k in keys) >= rhs, name=f"lb{i}")
    if hint:
        sol = m.createSol()
        for k, var in x.items():
            m.setSolVal(sol, var, 1.0 if k in hint else 0.0)
        m.addSol(sol, free=True)
    m.setMinimize()
    m.optimize()
    status = m.getStatus()
    # every objective coefficient is ≥ 0, so 0 is a valid bound; SCIP reports -1e20 (no bound) when a time
    # limit stops it before the root LP is solved, which would otherwise poison the summed lower bound
    dual = max(float(m.getDualbound()), 0.0)
    if m.getNSols() == 0:
        return None, status, None, dual if status != "infeasible" else None
    best = m.getBestSol()
    chosen = {k for k, var in x.items() if m.getSolVal(best, var) > 0.5}
    return chosen, status, m.getObjVal(), dual


def _left(deadline: float | None) -> float | None:
    return None if deadline is None else deadline - time.time()


def _cover_task(c, rows, avail, weights, deadline):
    """One class's set cover: per-class reductions (full dominance) + SCIP.
    Returns (words, status, value, lower bound, (vars, cons), seconds, reduction stats); words is None
    when the cover is infeasible or SCIP found no solution in time."""
    t = time.perf_counter()
    stats = {"superset_rows": 0, "unused": 0, "forced": 0, "dominated": 0, "duplicate_rows": 0}
    r1, a1 = {c: set(rows)}, {c: set(avail)}
    f1, bad = _reduce(r1, a1, {c: weights}, stats, coupled=False)
    if bad:
        return None, "infeasible", None, None, (0, 0), time.perf_counter() - t, stats
    words = set(f1[c])
    value = lower = sum(weights[j] for j in words)
    status, size = "optimal", (0, 0)
    if r1[c]:
        w = {j: weights[j] for j in a1[c]}
        covers = [(list(r), None) for r in r1[c]]
        size = (len(w), len(covers))
        chosen, status, obj, dual = _scip(w, covers, [], [], _left(deadline), params=_COVER_PARAMS)
        if chosen is None and status != "infeasible":  # out of time before SCIP had a solution
            chosen = _greedy_cover(list(r1[c]), set(a1[c]), w)
            obj = None if chosen is None else sum(w[j] for j in chosen)
        if chosen is None:
            bound = None if dual is None else lower + dual
            return None, status, None, bound, size, time.perf_counter() - t, stats
        words |= chosen
        value += obj
        lower += dual
    return words, status, value, lower, size, time.perf_counter() - t, stats


def _greedy_cover(rows: Sequence[Sequence[int]], cols: Collection[int], weights: Sequence[float]) -> set[int] | None:
    """Chvátal's greedy cover (least weight per newly covered row), then redundant words dropped
    heaviest first; None if some row has no usable word."""
    import heapq

    cover_of: dict[int, list[int]] = {}
    for i, r in enumerate(rows):
        usable = [j for j in r if j in cols]
        if not usable:
            return None
        for j in usable:
            cover_of.setdefault(j, []).append(i)
    heap = [(weights[j] / len(rs), j) for j, rs in cover_of.items()]
    heapq.heapify(heap)
    covered = [False] * len(rows)
    chosen: list[int] = []
    n_left = len(rows)
    while n_left:
        score, j = heapq.heappop(heap)
        g = sum(1 for i in cover_of[j] if not covered[i])
        if g == 0:
            continue
        if weights[j] / g > score:  # stale entry: scores only grow
            heapq.heappush(heap, (weights[j] / g, j))
            continue
        chosen.append(j)
        for i in cover_of[j]:
            if not covered[i]:
                covered[i] = True
                n_left -= 1
    count = [0] * len(rows)
    for j in chosen:
        for i in cover_of[j]:
            count[i] += 1
    keep = set(chosen)
    for j in sorted(chosen, key=lambda k: -weights[k]):
        if all(count[i] > 1 for i in cover_of[j]):
            keep.discard(j)
            for i in cover_of[j]:
                count[i] -= 1
    return keep


def _repair_task(order: Sequence[int], rows: Sequence[Any], avail: Sequence[set[int]], weights: Sequence[Any],
                 per_sol: Sequence[set[int]], deadline: float | None) -> tuple[dict[int, set[int]] | None, float]:
    """Restriction heuristic for the coupled problem: classes in `order`, each keeps its per-class
    solution if none of its words is taken, else is re-solved as a cover over the untaken words (SCIP;
    the greedy cover if SCIP runs out of time). Returns ({class: words}, seconds), or (None, seconds)
    when some class cannot be covered."""
    t = time.perf_counter()
    taken: set[int] = set()
    out: dict[int, set[int]] = {}
    for c in order:
        sol = per_sol[c]
        if sol & taken:
            cols = avail[c] - taken
            left = _left(deadline)
            new: set[int] | None = None
            status = "timelimit"
            if left is None or left > 1:
                new, status, *_ = _cover_task(c, rows[c], cols, weights[c], deadline)
            if new is None and status != "infeasible":
                new = _greedy_cover(list(rows[c]), cols, weights[c])
            if new is None:
                return None, time.perf_counter() - t
            sol = new
        out[c] = sol
        taken |= sol
    return out, time.perf_counter() - t


def _call(task):
    fn, args = task
    return fn(*args)


def _run(tasks: list, threads: int) -> list:
    """Run independent (function, args) tasks, in `threads` worker processes when threads > 1."""
    if threads <= 1 or len(tasks) <= 1:
        return [fn(*args) for fn, args in tasks]
    import multiprocessing as mp

    # spawn: safe whatever threads the parent runs (BLAS, torch); the workers import only this module
    with mp.get_context("spawn").Pool(min(threads, len(tasks))) as pool:
        return pool.map(_call, tasks, chunksize=1)



# --------------------------------------------------------------------------------------------------
# reductions (exact; docs/idc.md, "Exact reductions")


def _reduce(rows: dict, avail: dict, weights: dict, stats: dict, coupled: bool) -> tuple[dict, bool]:
    """Presolve in place until nothing changes. rows[c]: set of frozensets (uncovered constraints),
    avail[c]: usable columns, weights[c][j]. Returns (forced: c -> set, infeasible)."""
    classes = list(rows)
    forced: dict = {c: set() for c in classes}
    changed = True
    while changed:
        changed = False
        for c in classes:
            others = [o for o in classes if o != c]
            restricted = _restrict_rows(rows[c], forced[c], avail[c])
            if restricted is None:
                return forced, True
            rows[c] = restricted
            changed |= _force_singletons(c, others, rows, avail, forced, stats)
            rl, dropped = _drop_superset_rows(rows[c], stats)
            if dropped:
                rows[c] = set(rl)
                changed = True
            changed |= _drop_unused_columns(rl, avail[c], stats)
            changed |= _drop_dominated_columns(c, others, rl, avail, weights[c], stats, coupled)
    return forced, False


def _restrict_rows(rows_c: set, forced_c: set, avail_c: set) -> set | None:
    """Class c's rows restricted to its usable columns, rows covered by a forced column dropped; None when
    a row has no usable column left (infeasible)."""
    new_rows = set()
    for r in rows_c:
        if r & forced_c:
            continue
        rr = r & avail_c
        if not rr:
            return None
        new_rows.add(rr)
    return new_rows


def _force_singletons(c, others: list, rows: dict, avail: dict, forced: dict, stats: dict) -> bool:
    """A single-word row forces its word into class c (and out of every other class); the rows it covers
    are dropped. Returns whether anything was forced."""
    singles = {next(iter(r)) for r in rows[c] if len(r) == 1}
    if not singles:
        return False
    for j in singles:
        forced[c].add(j)
        avail[c].discard(j)
        for o in others:
            if j in avail[o]:
                avail[o].discard(j)
    stats["forced"] += len(singles)
    rows[c] = {r for r in rows[c] if not (r & singles)}
    return True


def _drop_superset_rows(rows_c: set, stats: dict) -> tuple[list, bool]:
    """Rows whose word set contains another row's are implied by it (duplicates are already merged by the
    set). Returns (the remaining rows, shortest first; whether any was dropped)."""
    rl = sorted(rows_c, key=len)
    colmask: dict[int, int] = {}
    for i, r in enumerate(rl):
        for j in r:
            colmask[j] = colmask.get(j, 0) | (1 << i)
    removed = 0
    for i, r in enumerate(rl):
        if removed >> i & 1:
            continue
        it = iter(r)
        sup = colmask[next(it)]
        for j in it:
            sup &= colmask[j]
        removed |= sup & ~(1 << i)
    if not removed:
        return rl, False
    stats["superset_rows"] += bin(removed).count("1")
    return [r for i, r in enumerate(rl) if not (removed >> i & 1)], True


def _drop_unused_columns(rl: list, avail_c: set, stats: dict) -> bool:
    """A column in none of the class's rows only costs: removed from `avail_c` (in place)."""
    used = set().union(*rl) if rl else set()
    unused = avail_c - used
    if not unused:
        return False
    stats["unused"] += len(unused)
    avail_c -= unused
    return True


def _drop_dominated_columns(c, others: list, rl: list, avail: dict, w: dict, stats: dict, coupled: bool) -> bool:
    """Column j is dropped when some k covers all of j's rows at no greater weight (ties: more rows, then the
    smaller index); in the coupled problem k must be exclusive to class c. Returns whether any was dropped."""
    cols = sorted(avail[c])
    if len(cols) < 2:
        return False
    cidx = {j: t for t, j in enumerate(cols)}
    rowmask = []
    colrows: dict[int, list[int]] = {j: [] for j in cols}
    for i, r in enumerate(rl):
        mask = 0
        for j in r:
            mask |= 1 << cidx[j]
            colrows[j].append(i)
        rowmask.append(mask)
    if coupled:
        excl = 0
        for j in cols:
            if not any(j in avail[o] for o in others):
                excl |= 1 << cidx[j]
    else:
        excl = (1 << len(cols)) - 1
    drop = []
    for j in cols:
        rs = colrows[j]
        cand = rowmask[rs[0]]
        for i in rs[1:]:
            cand &= rowmask[i]
        cand &= excl & ~(1 << cidx[j])
        nj, wj = len(rs), w[j]
        while cand:
            low = cand & -cand
            k = cols[low.bit_length() - 1]
            cand ^= low
            nk, wk = len(colrows[k]), w[k]
            if wk < wj or (wk == wj and (nk > nj or k < j)):
                drop.append(j)
                break
    if not drop:
        return False
    stats["dominated"] += len(drop)
    avail[c] -= set(drop)
    return True


# --------------------------------------------------------------------------------------------------
# solve_milp: the stages over one state


def _sorted_classes(labels):
    uniq = list(dict.fromkeys(labels))
    try:
        return sorted(uniq)
    except TypeError:
        return uniq


def _gap(upper, lower) -> float:
    """(upper − lower) / upper, ≥ 0; infinite when no lower bound is known."""
    if lower is None:
        return float("inf")
    return max(0.0, (upper - lower) / max(abs(upper), 1e-12))


@dataclass
class _Milp:
    """What the stages of one `solve_milp` call share: the instance in index form, the clock, and what
    each stage leaves for the next (reductions, bounds, incumbent)."""

    vocab: list  # V, duplicates removed; word j is vocab[j]
    classes: list  # sorted when sortable
    kept: dict  # class -> retained documents as frozensets of word indices
    n_discarded: int  # documents with fewer than `min_words` words of V
    cost: dict  # class -> [df_{¬c}(j) for j in V]
    weights: dict  # class -> [integer-scaled weight w_c(j)]
    unit: int | float  # weight of one unit of cost (1/ε when that is an integer, else 1)
    t0: float  # perf_counter at the start of the call
    deadline: float | None  # time.time() by which the call must end
    time_limit: float | None
    threads: int
    stages: dict = field(default_factory=dict)  # seconds per stage, bounds, sizes (MilpResult.stages)
    stats: dict = field(default_factory=dict)  # what each reduction removed (MilpResult.reductions)
    reduced: tuple[int, int] = (0, 0)  # (variables, constraints) of the largest model given to SCIP
    # left by _presolve
    rows: dict = field(default_factory=dict)  # class -> set of uncovered rows (frozensets of columns)
    avail: dict = field(default_factory=dict)  # class -> usable columns
    wdict: dict = field(default_factory=dict)  # class -> {column: weight}
    forced: dict = field(default_factory=dict)  # class -> columns forced to 1
    forced_keys: set = field(default_factory=set)  # {(class, column)} of the forced columns
    forced_w: int | float = 0  # their summed weight
    shared: set = field(default_factory=set)  # columns usable by two classes or more (coupling rows)
    # left by _relax
    per_sol: dict = field(default_factory=dict)  # class -> its cover's columns
    per_lb: dict = field(default_factory=dict)  # class -> its cover's lower bound z_c
    lb_total: float = 0.0  # Σ_c z_c + forced weight
    # left by _repair: (weight without the forced columns, {(class, column)}) or None
    incumbent: tuple | None = None

    @property
    def nc(self) -> int:
        return len(self.classes)

    @property
    def nv(self) -> int:
        return len(self.vocab)

    @property
    def n_documents(self) -> int:
        return sum(len(v) for v in self.kept.values())

    def units(self, weight):
        """Integer-scaled weight -> cost + ε·|IF| units (None stays None)."""
        return None if weight is None else weight / self.unit

    def lap(self, name: str, since: float) -> None:
        self.stages[f"seconds_{name}"] = round(time.perf_counter() - since, 3)

    def left(self) -> float | None:
        return _left(self.deadline)


def _setup(docs, labels, vocabulary, *, min_words: int, epsilon: float | None, time_limit: float | None,
           threads: int) -> _Milp:
    """Index the documents over V (dropping those with fewer than `min_words` words of V) and compute
    df_{¬c}(j) and the integer-scaled weights."""
    t0 = time.perf_counter()
    deadline = None if time_limit is None else time.time() + float(time_limit)
    if len(docs) != len(labels):
        raise ValueError("docs and labels differ in length")
    vocab = list(dict.fromkeys(vocabulary))
    index = {w: j for j, w in enumerate(vocab)}
    classes = _sorted_classes(labels)
    nc, nv = len(classes), len(vocab)
    if epsilon is None:
        epsilon = 1.0 / (nc * nv + 1)
    integral = epsilon > 0 and abs(1.0 / epsilon - round(1.0 / epsilon)) < 1e-9
    unit = int(round(1.0 / epsilon)) if integral else 1.0  # weight of one unit of cost
    eps_w = 1 if integral else epsilon

    kept: dict = {c: [] for c in classes}
    n_disc = 0
    for d, y in zip(docs, labels):
        s = frozenset(index[w] for w in d if w in index)
        if len(s) < min_words:
            n_disc += 1
        else:
            kept[y].append(s)
    df = {c: [0] * nv for c in classes}
    for c in classes:
        for s in kept[c]:
            for j in s:
                df[c][j] += 1
    tot = [sum(df[c][j] for c in classes) for j in range(nv)]
    cost = {c: [tot[j] - df[c][j] for j in range(nv)] for c in classes}
    weights = {c: [cost[c][j] * unit + eps_w for j in range(nv)] for c in classes}
    return _Milp(vocab=vocab, classes=classes, kept=kept, n_discarded=n_disc, cost=cost, weights=weights,
                 unit=unit, t0=t0, deadline=deadline, time_limit=time_limit, threads=max(1, int(threads or 1)))


def _result(p: _Milp, chosen: set, method: str, *, optimal: bool, upper, lower, violated: int = 0) -> MilpResult:
    """Read the chosen (class, column) keys into a `MilpResult`; `upper`/`lower` are integer-scaled."""
    feats = {c: sorted(p.vocab[j] for (cc, j) in chosen if cc == c) for c in p.classes}
    obj = sum(p.cost[c][j] for (c, j) in chosen)
    p.stages["seconds_total"] = round(time.perf_counter() - p.t0, 3)
    n_docs = p.n_documents
    return MilpResult(
        features=feats,
        objective=obj,
        n_documents=n_docs,
        n_discarded=p.n_discarded,
        violated=violated,
        optimal=bool(optimal),
        gap=0.0 if optimal else float(_gap(upper, lower)),
        solve_seconds=time.perf_counter() - p.t0,
        n_variables=p.nc * p.nv + (n_docs if method == "slack" else 0),
        n_constraints=p.nv + n_docs,
        reduced_variables=p.reduced[0],
        reduced_constraints=p.reduced[1],
        reductions=p.stats,
        method=method,
        cardinality=len(chosen),
        stages=p.stages,
        upper_bound=p.units(upper),
        lower_bound=p.units(upper if optimal else lower),
        time_limit=None if p.time_limit is None else float(p.time_limit),
        timed_out=(not optimal) and p.deadline is not None and time.time() >= p.deadline - 1.0,
    )


def _solve_slack(p: _Milp) -> MilpResult:
    """The infeasible program with a slack per distinct document (penalty |C||V| cost units times its
    multiplicity); only the safe reductions (duplicates, columns absent from the class)."""
    ts = time.perf_counter()
    nc, nv, unit = p.nc, p.nv, p.unit
    w: dict = {}
    covers = []
    for c in p.classes:
        uniq: dict = {}
        for s in p.kept[c]:
            uniq[s] = uniq.get(s, 0) + 1
        for s, mult in uniq.items():
            sk = ("slack", c, s)
            w[sk] = nc * nv * unit * mult
            for j in s:
                w[(c, j)] = p.weights[c][j]
            covers.append(([(c, j) for j in s], sk))
    by_word: dict = {}
    for k in w:
        if k[0] != "slack":
            by_word.setdefault(k[1], []).append(k)
    couplings = [ks for ks in by_word.values() if len(ks) > 1]
    chosen, status, obj, dual = _scip(w, covers, couplings, [], p.left())
    p.lap("slack", ts)
    if chosen is None:
        raise RuntimeError(f"SCIP found no solution for the slack model (status {status})")
    violated = sum(w[k] // (nc * nv * unit) for k in chosen if k[0] == "slack")
    feats = {k for k in chosen if k[0] != "slack"}
    p.reduced = (len(w), len(covers) + len(couplings))
    return _result(p, feats, "slack", optimal=status == "optimal", violated=int(round(violated)), lower=dual,
                   upper=obj)


def _solve_plain(p: _Milp) -> MilpResult:
    """The unreduced formulation as one SCIP model (``reduce=False``, for comparison)."""
    w = {(c, j): p.weights[c][j] for c in p.classes for j in range(p.nv)}
    covers = [([(c, j) for j in s], None) for c in p.classes for s in p.kept[c]]
    couplings = [[(c, j) for c in p.classes] for j in range(p.nv)] if p.nc > 1 else []
    ts = time.perf_counter()
    chosen, status, obj, dual = _scip(w, covers, couplings, [], p.left())
    p.lap("plain", ts)
    if status == "infeasible":
        return _solve_slack(p)
    if chosen is None:
        raise RuntimeError(f"SCIP found no solution (status {status})")
    p.reduced = (len(w), len(covers) + len(couplings))
    return _result(p, chosen, "plain", optimal=status == "optimal", lower=dual, upper=obj)


def _presolve(p: _Milp) -> bool:
    """Exact reductions of the coupled problem (`_reduce`); records the forced columns and the words two
    classes can still use. Returns False when they prove the program infeasible."""
    ts = time.perf_counter()
    p.stats = {"duplicate_rows": 0, "superset_rows": 0, "unused": 0, "forced": 0, "dominated": 0}
    p.rows = {c: set(p.kept[c]) for c in p.classes}
    p.stats["duplicate_rows"] = p.n_documents - sum(len(r) for r in p.rows.values())
    p.avail = {c: set(range(p.nv)) for c in p.classes}
    p.wdict = {c: dict(enumerate(p.weights[c])) for c in p.classes}
    p.forced, infeasible = _reduce(p.rows, p.avail, p.wdict, p.stats, coupled=True)
    p.lap("reduce", ts)
    if infeasible:
        return False
    p.forced_keys = {(c, j) for c in p.classes for j in p.forced[c]}
    p.forced_w = sum(p.wdict[c][j] for (c, j) in p.forced_keys)
    p.shared = {j for c in p.classes for j in p.avail[c] if any(j in p.avail[o] for o in p.classes if o != c)}
    p.stages["shared_words"] = len(p.shared)
    return True


def _relax(p: _Milp) -> MilpResult | None:
    """Stage 1: drop the coupling rows and solve one set cover per class (in parallel when threads > 1);
    Σ_c z_c is a lower bound, and disjoint per-class optima are optimal ("decomposed"). Returns the result
    when this stage ends the call, else None (the per-class solutions and bounds are left in `p`)."""
    ts = time.perf_counter()
    tasks = [(_cover_task, (c, p.rows[c], p.avail[c], p.wdict[c], p.deadline)) for c in p.classes]
    per = dict(zip(p.classes, _run(tasks, p.threads)))
    p.lap("relaxation", ts)
    pstats = {"superset_rows": 0, "unused": 0, "forced": 0, "dominated": 0, "duplicate_rows": 0}
    proven = True
    red_vars = red_cons = 0
    for c in p.classes:
        words, status, value, lower, size, secs, st = per[c]
        for k, v in st.items():
            pstats[k] += v
        p.stages[f"seconds_class_{c}"] = round(secs, 3)
        p.stages[f"size_class_{c}"] = size
        red_vars, red_cons = max(red_vars, size[0]), max(red_cons, size[1])
        if words is None:
            if status == "infeasible":  # cannot happen after the coupled reductions, kept for safety
                return _solve_slack(p)
            raise RuntimeError(f"SCIP found no solution for class {c!r} (status {status})")
        proven &= status == "optimal"
        p.per_sol[c], p.per_lb[c] = words, lower
    p.reduced = (red_vars, red_cons)
    p.stats.update({f"per_class_{k}": v for k, v in pstats.items()})
    p.lb_total = sum(p.per_lb.values()) + p.forced_w
    p.stages["relaxation_bound"] = p.units(p.lb_total)
    p.stages["features_per_class_relaxed"] = {c: len(p.per_sol[c]) + len(p.forced[c]) for c in p.classes}

    words = [j for c in p.classes for j in p.per_sol[c]]
    conflicts = len(words) - len(set(words))
    p.stages["conflicts"] = conflicts
    if conflicts:
        return None
    chosen = {(c, j) for c in p.classes for j in p.per_sol[c]} | p.forced_keys
    total = sum(p.wdict[c][j] for (c, j) in chosen)
    return _result(p, chosen, "decomposed", optimal=proven or total <= p.lb_total, lower=p.lb_total, upper=total)


def _repair(p: _Milp) -> MilpResult | None:
    """Stage 2: an upper bound. For every rotation of the class order (in parallel) the first class keeps
    its cover and each later one is re-solved over the words not yet taken; the best is the incumbent
    (left in `p`). Returns the result when it attains the lower bound ("repaired") or no time is left for
    the coupled model, else None."""
    ts = time.perf_counter()
    rep_deadline = None if p.deadline is None else time.time() + 0.5 * max(p.deadline - time.time(), 0.0)
    classes = p.classes
    orders = [classes[i:] + classes[:i] for i in range(p.nc)]
    tasks = [(_repair_task, (o, p.rows, p.avail, p.wdict, p.per_sol, rep_deadline)) for o in orders]
    best = None
    for out, _ in _run(tasks, p.threads):
        if out is not None:
            cand = {(c, j) for c in classes for j in out[c]}
            val = sum(p.wdict[c][j] for (c, j) in cand)
            if best is None or val < best[0]:
                best = (val, cand)
    p.lap("repair", ts)
    p.incumbent = best
    if best is None:
        return None
    upper = best[0] + p.forced_w
    p.stages["repair_objective"] = p.units(upper)
    proven_opt = upper <= p.lb_total  # attains the lower bound
    left = p.left()
    if proven_opt or (left is not None and left <= 1.0):  # optimal, or no time for the coupled model
        return _result(p, best[1] | p.forced_keys, "repaired", optimal=proven_opt, lower=p.lb_total, upper=upper)
    return None


def _solve_coupled(p: _Milp) -> MilpResult:
    """Stage 3: the reduced coupled model with the valid cuts Σ_j w_c(j)·v^c[j] ≥ z_c, started from the
    repair incumbent ("coupled"); proven optimal when SCIP says so or it attains the lower bound."""
    ts = time.perf_counter()
    classes = p.classes
    w = {(c, j): p.wdict[c][j] for c in classes for j in p.avail[c]}
    covers = [([(c, j) for j in r], None) for c in classes for r in p.rows[c]]
    couplings = [[(c, j) for c in classes if j in p.avail[c]] for j in sorted(p.shared)]
    cuts = []
    for c in classes:
        keys = [(c, j) for j in p.avail[c]]
        if keys:  # a dual bound is valid whether or not the per-class solve was proven optimal
            cuts.append((keys, p.per_lb[c] - 1e-6 * max(1.0, abs(p.per_lb[c]))))
    p.reduced = (max(p.reduced[0], len(w)), max(p.reduced[1], len(covers) + len(couplings) + len(cuts)))
    best = p.incumbent
    chosen, status, obj, dual = _scip(w, covers, couplings, cuts, p.left(),
                                      hint=best[1] if best else None, params=_COVER_PARAMS)
    p.lap("coupled", ts)
    if status == "infeasible":
        return _solve_slack(p)
    if chosen is None:  # time limit before SCIP had a solution: the repair incumbent, if any
        if best is None:
            raise RuntimeError(f"SCIP found no solution for the coupled model (status {status})")
        chosen = set(best[1])
    chosen |= p.forced_keys
    total = sum(p.wdict[c][j] for (c, j) in chosen)
    lower = max(p.lb_total, (dual or 0.0) + p.forced_w)
    p.stages["coupled_bound"] = p.units(lower)
    return _result(p, chosen, "coupled", optimal=status == "optimal" or total <= lower, lower=lower, upper=total)


def solve_milp(
    docs: Sequence[Sequence[str]],
    labels: Sequence[Hashable],
    vocabulary: Sequence[str],
    *,
    min_words: int = 5,
    epsilon: float | None = None,
    time_limit: float | None = None,
    threads: int = 1,
    reduce: bool = True,
) -> MilpResult:
    """Solve SPECS §5.4 (Eqs. 3–5; the program in the module docstring) over the documents with at least
    `min_words` words of `vocabulary`; ε defaults to 1/(|C||V|+1). `reduce=False` gives the plain
    formulation (for comparison).

    `threads` > 1 solves independent sub-models (the per-class covers, the repairs) in that many worker
    processes; SCIP itself runs single-threaded. `time_limit` (seconds, wall clock) bounds the whole
    call; every stage gets what is left. The stages and their experiments: docs/idc.md, "MILP solver"."""
    p = _setup(docs, labels, vocabulary, min_words=min_words, epsilon=epsilon, time_limit=time_limit,
               threads=threads)
    if not reduce:
        return _solve_plain(p)
    if not _presolve(p):
        return _solve_slack(p)
    return _relax(p) or _repair(p) or _solve_coupled(p)
