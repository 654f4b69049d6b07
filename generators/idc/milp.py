"""IDC Method 2 — the MILP pseudo-ground truth (SPECS §5.4), solved to proven optimality with SCIP.

Documents are lists of (lower-cased) word tokens; tokenisation is the caller's business.

The program (SPECS §5.4, Eqs. 3–5) over binary ``v^c[j]``::

    min  Σ_c Σ_{d∈D^c} Σ_{ĉ≠c} d·v^ĉ  +  ε Σ_c |v^c|
    s.t. Σ_c v^c[j] ≤ 1            for every word j of V
         d·v^c ≥ 1                 for every retained document d of class c

is solved in the equivalent per-word-cost form ``Σ_c Σ_j v^c[j]·w_c(j)``, ``w_c(j) = df_{¬c}(j) + ε``
(``df_{¬c}(j)``: retained documents outside class c that contain j). With the default
``ε = 1/(|C||V|+1)`` the weights are scaled to the integers ``df_{¬c}(j)·(|C||V|+1) + 1`` (the ε-part
sums to less than one unit, so the optimum is lexicographic: least cost, then fewest features).

Exact reductions (each keeps at least one optimal solution of the current problem, so the optimal
value of the ORIGINAL problem is preserved; `tests/test_idc_milp.py` checks this against the plain
model on random instances):

* ``unused`` — ``v^c[j] = 0`` when no (still uncovered) class-c constraint contains j: it only costs.
* ``duplicate_rows`` / ``superset_rows`` — identical constraints are one; a constraint whose word set
  contains another same-class constraint's word set is implied by it.
* ``forced`` — a constraint with a single word forces ``v^c[j] = 1`` (hence ``v^ĉ[j] = 0``) and the
  constraints it covers are dropped.
* ``dominated`` — ``v^c[j] = 0`` when some word k has ``S_c(j) ⊆ S_c(k)`` (the class-c constraints
  containing it) and ``w_c(k) ≤ w_c(j)``, ties broken by (|S| larger, weight smaller, index smaller) so
  the relation is acyclic; swapping j for k in any optimal solution keeps it feasible and not worse.
  In the coupled problem k must also be *exclusive* to c (no other class may use it) so the swap never
  violates ``Σ_c v^c[k] ≤ 1``; in the per-class problems (below) any k qualifies.

Only words that survive in constraints of two classes can ever be disputed: a word that occurs only in
class-c documents is useless to every other class (``unused``), so the coupling rows ``Σ_c v^c[j] ≤ 1``
are kept for the shared words only.

Solution stages (``MilpResult.stages`` records the time of each and the bounds):

1. **Relaxation / decomposition.** Dropping the coupling rows leaves one weighted set cover per class,
   reduced again with full per-class dominance and solved by SCIP (in parallel worker processes when
   ``threads > 1``: the covers are independent). Their optima ``z_c`` (or SCIP's dual bounds, if a time
   limit stops a solve) sum to a lower bound ``LB = Σ_c z_c`` of the coupled optimum. If the per-class
   optima are pairwise disjoint their union is feasible and attains LB, hence optimal (``decomposed``).
2. **Repair (upper bound).** Otherwise, for every class order π (the |C| rotations of the sorted
   classes, in parallel) the first class keeps its per-class solution and each later class is re-solved
   as a set cover over the words not yet taken (SCIP, with half of the remaining time; Chvátal's greedy
   cover once that is spent). Every such solution is feasible for the coupled problem, so the best one
   is an upper bound UB; it only serves as the incumbent and cannot affect exactness. If UB = LB it is
   optimal (``repaired``; also returned, unproven, when the time limit leaves no time for stage 3).
3. **Coupled model.** Otherwise the reduced coupled model is solved by SCIP, started from the repair
   incumbent, with the valid cuts ``Σ_j w_c(j)·v^c[j] ≥ z_c`` (class c's part of any coupled solution
   is a class-c cover, so it costs at least z_c) (``coupled``). Its result is proven optimal only when
   SCIP says so (or it attains LB); otherwise ``gap = (UB − LB)/UB`` on the integer-scaled objective
   with the best LB of stages 1 and 3, and the best solution found is returned.

``time_limit`` bounds the whole call (wall clock); every stage gets what is left.

If the problem is infeasible, a per-document slack with penalty ``|C||V|`` (in cost units) is added
and the number of violated documents is reported.

SCIP settings for the cover models (``_COVER_PARAMS``): cutting planes off (on the MR covers the root
cuts raise the bound by ~0.1 % of a ~10 % LP gap and cost time) and strong branching limited to 10 % of
the LP iterations (``branching/relpscost/sbiterquot``): with the defaults strong branching took more than
half of the run time (MR class 0 started from its optimum: 48 → 36 s CPU; class 1 from scratch:
94 → 67–77 s CPU over two seeds).

Why MR with |V| = 3,000 (6,493 documents) is hard (issue #3): after the reductions each class is a
~3,200-row × ~1,820-word cover whose root LP is ~10 % below the optimum (class 0: 3,153 vs 3,511 cost
units) and dual degenerate (for most words df_{¬c}(j) ≈ the number of class-c rows containing j, so row
prices ≈ 1 give half of the words zero reduced cost); SCIP needs 35–95 s CPU per class, ~35–45 s even
when given the optimum. The two per-class optima share ~40 of the 1,355 shared words; resolving them
costs hundreds of cost units (best repair: +555) and the coupled root LP is only the sum of the per-class
LPs (~18 % below that incumbent), so the coupled branch-and-bound must close both classes' gaps at once.
Lagrangian prices on the conflicting words (each step = two exact cover solves) moved the conflicts to
other shared words (29 new ones, bound lowered) rather than closing the gap.
Other routes measured on the same reduced instance (1 thread unless said): HiGHS
(`scipy.optimize.milp`) on the class-0 cover is still 8.7 % from optimal at 150 s (SCIP: optimal in
58 s); OR-Tools CP-SAT (2 workers) has no useful bound at 120 s; asking SCIP only for a conflict-free
pair of per-class optima (which would prove LB optimal at once) finds none in 300 s; the cost-only
objective (ε = 0) is still 7.3 % from optimal at 300 s; the reduced coupled graph is one connected
component per class, so there is nothing to decompose; and a summed-TF-IDF V (a different [I]
reading) is harder still (per-class covers 238 s, gap 12 %).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Hashable, Sequence

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

# see the module docstring; applied to every cover model (per-class, repair, coupled)
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


def _greedy_cover(rows, cols, weights):
    """Chvátal's greedy cover (least weight per newly covered row), then redundant words dropped
    heaviest first; None if some row has no usable word."""
    import heapq

    cover_of: dict = {}
    for i, r in enumerate(rows):
        usable = [j for j in r if j in cols]
        if not usable:
            return None
        for j in usable:
            cover_of.setdefault(j, []).append(i)
    heap = [(weights[j] / len(rs), j) for j, rs in cover_of.items()]
    heapq.heapify(heap)
    covered = [False] * len(rows)
    chosen = []
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


def _repair_task(order, rows, avail, weights, per_sol, deadline):
    """Restriction heuristic for the coupled problem: classes in `order`, each keeps its per-class
    solution if none of its words is taken, else is re-solved as a cover over the untaken words (SCIP;
    the greedy cover if SCIP runs out of time). Returns ({class: words}, seconds), or (None, seconds)
    when some class cannot be covered."""
    t = time.perf_counter()
    taken: set = set()
    out = {}
    for c in order:
        sol = per_sol[c]
        if sol & taken:
            cols = avail[c] - taken
            left = _left(deadline)
            sol, status = None, "timelimit"
            if left is None or left > 1:
                sol, status, *_ = _cover_task(c, rows[c], cols, weights[c], deadline)
            if sol is None and status != "infeasible":
                sol = _greedy_cover(list(rows[c]), cols, weights[c])
            if sol is None:
                return None, time.perf_counter() - t
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
# reductions


def _reduce(rows: dict, avail: dict, weights: dict, stats: dict, coupled: bool) -> tuple[dict, bool]:
    """Presolve in place. rows[c]: set of frozensets (uncovered constraints), avail[c]: usable columns,
    weights[c][j]. Returns (forced: c -> set, infeasible)."""
    classes = list(rows)
    forced = {c: set() for c in classes}
    changed = True
    while changed:
        changed = False
        for c in classes:
            others = [o for o in classes if o != c]
            # restrict to usable columns; drop rows covered by forced columns
            new_rows = set()
            for r in rows[c]:
                if r & forced[c]:
                    continue
                rr = r & avail[c]
                if not rr:
                    return forced, True
                new_rows.add(rr)
            rows[c] = new_rows
            # singleton rows force their column
            singles = {next(iter(r)) for r in rows[c] if len(r) == 1}
            if singles:
                for j in singles:
                    forced[c].add(j)
                    avail[c].discard(j)
                    for o in others:
                        if j in avail[o]:
                            avail[o].discard(j)
                stats["forced"] += len(singles)
                rows[c] = {r for r in rows[c] if not (r & singles)}
                changed = True
            # superset rows (duplicates are already merged by the set)
            rl = sorted(rows[c], key=len)
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
            if removed:
                n = bin(removed).count("1")
                stats["superset_rows"] += n
                rl = [r for i, r in enumerate(rl) if not (removed >> i & 1)]
                rows[c] = set(rl)
                changed = True
            # unused columns
            used = set().union(*rl) if rl else set()
            unused = avail[c] - used
            if unused:
                stats["unused"] += len(unused)
                avail[c] -= unused
                changed = True
            # dominated columns
            cols = sorted(avail[c])
            if len(cols) < 2:
                continue
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
            w = weights[c]
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
            if drop:
                stats["dominated"] += len(drop)
                avail[c] -= set(drop)
                changed = True
    return forced, False


# --------------------------------------------------------------------------------------------------


def _sorted_classes(labels):
    uniq = list(dict.fromkeys(labels))
    try:
        return sorted(uniq)
    except TypeError:
        return uniq


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
    """Solve SPECS §5.4. `reduce=False` gives the plain formulation (for comparison).

    `threads` > 1 solves independent sub-models (the per-class covers, the repairs) in that many worker
    processes; SCIP itself runs single-threaded. `time_limit` (seconds) bounds the whole call."""
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
    threads = max(1, int(threads or 1))

    kept: dict = {c: [] for c in classes}
    n_disc = 0
    for d, y in zip(docs, labels):
        s = frozenset(index[w] for w in d if w in index)
        if len(s) < min_words:
            n_disc += 1
        else:
            kept[y].append(s)
    n_docs = sum(len(v) for v in kept.values())
    df = {c: [0] * nv for c in classes}
    for c in classes:
        for s in kept[c]:
            for j in s:
                df[c][j] += 1
    tot = [sum(df[c][j] for c in classes) for j in range(nv)]
    cost = {c: [tot[j] - df[c][j] for j in range(nv)] for c in classes}
    weights = {c: [cost[c][j] * unit + eps_w for j in range(nv)] for c in classes}
    n_vars, n_cons = nc * nv, nv + n_docs
    stages: dict = {}

    def units(weight):  # integer-scaled weight -> cost + ε·|IF| units
        return None if weight is None else weight / unit

    def lap(name, since):
        stages[f"seconds_{name}"] = round(time.perf_counter() - since, 3)

    def finish(chosen: set, optimal, gap, method, red_vars, red_cons, stats, violated=0, lower=None, upper=None):
        feats = {c: sorted(vocab[j] for (cc, j) in chosen if cc == c) for c in classes}
        obj = sum(cost[c][j] for (c, j) in chosen)
        stages["seconds_total"] = round(time.perf_counter() - t0, 3)
        if upper is None:
            upper = sum(weights[c][j] for (c, j) in chosen if c != "slack")
        low = upper if optimal else lower
        return MilpResult(
            features=feats,
            objective=obj,
            n_documents=n_docs,
            n_discarded=n_disc,
            violated=violated,
            optimal=bool(optimal),
            gap=0.0 if optimal else float(gap),
            solve_seconds=time.perf_counter() - t0,
            n_variables=n_vars + (n_docs if method == "slack" else 0),
            n_constraints=n_cons,
            reduced_variables=red_vars,
            reduced_constraints=red_cons,
            reductions=stats,
            method=method,
            cardinality=len(chosen),
            stages=stages,
            upper_bound=units(upper),
            lower_bound=units(low),
            time_limit=None if time_limit is None else float(time_limit),
            timed_out=(not optimal) and deadline is not None and time.time() >= deadline - 1.0,
        )

    def gap_of(upper, lower):
        if lower is None:
            return float("inf")
        return max(0.0, (upper - lower) / max(abs(upper), 1e-12))

    def slack_model(stats):
        # safe reductions only: duplicates (weighted slack) and columns absent from the class
        ts = time.perf_counter()
        w = {}
        covers = []
        for c in classes:
            uniq: dict = {}
            for s in kept[c]:
                uniq[s] = uniq.get(s, 0) + 1
            for s, mult in uniq.items():
                sk = ("slack", c, s)
                w[sk] = nc * nv * unit * mult
                for j in s:
                    w[(c, j)] = weights[c][j]
                covers.append(([(c, j) for j in s], sk))
        by_word: dict = {}
        for k in w:
            if k[0] != "slack":
                by_word.setdefault(k[1], []).append(k)
        couplings = [ks for ks in by_word.values() if len(ks) > 1]
        chosen, status, obj, dual = _scip(w, covers, couplings, [], _left(deadline))
        lap("slack", ts)
        if chosen is None:
            raise RuntimeError(f"SCIP found no solution for the slack model (status {status})")
        violated = sum(w[k] // (nc * nv * unit) for k in chosen if k[0] == "slack")
        feats = {k for k in chosen if k[0] != "slack"}
        return finish(feats, status == "optimal", gap_of(obj, dual), "slack", len(w),
                      len(covers) + len(couplings), stats, violated=int(round(violated)), lower=dual, upper=obj)

    if not reduce:
        w = {(c, j): weights[c][j] for c in classes for j in range(nv)}
        covers = [([(c, j) for j in s], None) for c in classes for s in kept[c]]
        couplings = [[(c, j) for c in classes] for j in range(nv)] if nc > 1 else []
        ts = time.perf_counter()
        chosen, status, obj, dual = _scip(w, covers, couplings, [], _left(deadline))
        lap("plain", ts)
        if status == "infeasible":
            return slack_model({})
        if chosen is None:
            raise RuntimeError(f"SCIP found no solution (status {status})")
        return finish(chosen, status == "optimal", gap_of(obj, dual), "plain", len(w),
                      len(covers) + len(couplings), {}, lower=dual, upper=obj)

    # ---- exact reductions of the coupled problem
    ts = time.perf_counter()
    stats = {"duplicate_rows": 0, "superset_rows": 0, "unused": 0, "forced": 0, "dominated": 0}
    rows = {c: set(kept[c]) for c in classes}
    stats["duplicate_rows"] = n_docs - sum(len(r) for r in rows.values())
    avail = {c: set(range(nv)) for c in classes}
    wdict = {c: dict(enumerate(weights[c])) for c in classes}
    forced, infeasible = _reduce(rows, avail, wdict, stats, coupled=True)
    lap("reduce", ts)
    if infeasible:
        return slack_model(stats)
    forced_keys = {(c, j) for c in classes for j in forced[c]}
    forced_w = sum(wdict[c][j] for (c, j) in forced_keys)
    shared = {j for c in classes for j in avail[c] if any(j in avail[o] for o in classes if o != c)}
    stages["shared_words"] = len(shared)

    # ---- stage 1: per-class relaxation (independent covers; parallel when threads > 1)
    ts = time.perf_counter()
    tasks = [(_cover_task, (c, rows[c], avail[c], wdict[c], deadline)) for c in classes]
    per = dict(zip(classes, _run(tasks, threads)))
    lap("relaxation", ts)
    pstats = {"superset_rows": 0, "unused": 0, "forced": 0, "dominated": 0, "duplicate_rows": 0}
    per_sol, per_lb = {}, {}
    proven = True
    red_vars = red_cons = 0
    for c in classes:
        words, status, value, lower, size, secs, st = per[c]
        for k, v in st.items():
            pstats[k] += v
        stages[f"seconds_class_{c}"] = round(secs, 3)
        stages[f"size_class_{c}"] = size
        red_vars, red_cons = max(red_vars, size[0]), max(red_cons, size[1])
        if words is None:
            if status == "infeasible":  # cannot happen after the coupled reductions, kept for safety
                return slack_model(stats)
            raise RuntimeError(f"SCIP found no solution for class {c!r} (status {status})")
        proven &= status == "optimal"
        per_sol[c], per_lb[c] = words, lower
    stats.update({f"per_class_{k}": v for k, v in pstats.items()})
    lb_total = sum(per_lb.values()) + forced_w
    stages["relaxation_bound"] = units(lb_total)
    stages["features_per_class_relaxed"] = {c: len(per_sol[c]) + len(forced[c]) for c in classes}

    words = [j for c in classes for j in per_sol[c]]
    conflicts = len(words) - len(set(words))
    stages["conflicts"] = conflicts
    if not conflicts:
        chosen = {(c, j) for c in classes for j in per_sol[c]} | forced_keys
        total = sum(wdict[c][j] for (c, j) in chosen)
        return finish(chosen, proven or total <= lb_total, gap_of(total, lb_total), "decomposed", red_vars,
                      red_cons, stats, lower=lb_total, upper=total)

    # ---- stage 2: repair (upper bound); every class order's rotation, in parallel
    ts = time.perf_counter()
    rep_deadline = None if deadline is None else time.time() + 0.5 * max(deadline - time.time(), 0.0)
    orders = [classes[i:] + classes[:i] for i in range(nc)]
    tasks = [(_repair_task, (o, rows, avail, wdict, per_sol, rep_deadline)) for o in orders]
    best = None
    for out, _ in _run(tasks, threads):
        if out is not None:
            cand = {(c, j) for c in classes for j in out[c]}
            val = sum(wdict[c][j] for (c, j) in cand)
            if best is None or val < best[0]:
                best = (val, cand)
    lap("repair", ts)
    if best is not None:
        stages["repair_objective"] = units(best[0] + forced_w)
        proven_opt = best[0] + forced_w <= lb_total  # attains the lower bound
        left = _left(deadline)
        if proven_opt or (left is not None and left <= 1.0):  # optimal, or no time for the coupled model
            return finish(best[1] | forced_keys, proven_opt, gap_of(best[0] + forced_w, lb_total), "repaired",
                          red_vars, red_cons, stats, lower=lb_total, upper=best[0] + forced_w)

    # ---- stage 3: coupled reduced model with the per-class lower-bound cuts, from the repair incumbent
    ts = time.perf_counter()
    w = {(c, j): wdict[c][j] for c in classes for j in avail[c]}
    covers = [([(c, j) for j in r], None) for c in classes for r in rows[c]]
    couplings = [[(c, j) for c in classes if j in avail[c]] for j in sorted(shared)]
    cuts = []
    for c in classes:
        keys = [(c, j) for j in avail[c]]
        if keys:  # a dual bound is valid whether or not the per-class solve was proven optimal
            cuts.append((keys, per_lb[c] - 1e-6 * max(1.0, abs(per_lb[c]))))
    red_vars, red_cons = max(red_vars, len(w)), max(red_cons, len(covers) + len(couplings) + len(cuts))
    chosen, status, obj, dual = _scip(w, covers, couplings, cuts, _left(deadline),
                                      hint=best[1] if best else None, params=_COVER_PARAMS)
    lap("coupled", ts)
    if status == "infeasible":
        return slack_model(stats)
    if chosen is None:  # time limit before SCIP had a solution: the repair incumbent, if any
        if best is None:
            raise RuntimeError(f"SCIP found no solution for the coupled model (status {status})")
        chosen = set(best[1])
    chosen |= forced_keys
    total = sum(wdict[c][j] for (c, j) in chosen)
    lower = max(lb_total, (dual or 0.0) + forced_w)
    stages["coupled_bound"] = units(lower)
    return finish(chosen, status == "optimal" or total <= lower, gap_of(total, lower), "coupled", red_vars,
                  red_cons, stats, lower=lower, upper=total)
