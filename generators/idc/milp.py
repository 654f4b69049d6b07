"""IDC Method 2 — the MILP pseudo-ground truth (SPECS §5.4), solved to proven optimality with SCIP.

Documents are lists of (lower-cased) word tokens; tokenisation is the caller's business.

The program (SPECS §5.4, Eqs. 3–5) over binary ``v^c[j]``::

    min  Σ_c Σ_{d∈D^c} Σ_{ĉ≠c} d·v^ĉ  +  ε Σ_c |v^c|
    s.t. Σ_c v^c[j] ≤ 1            for every word j of V
         d·v^c ≥ 1                 for every retained document d of class c

is solved in the equivalent per-word-cost form ``Σ_c Σ_j v^c[j]·(df_{¬c}(j) + ε)``. With the default
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

Decomposition: dropping the coupling constraints leaves one weighted set cover per class, whose optima
sum to a lower bound. If the per-class optima are pairwise disjoint their union is feasible for the
coupled problem and attains the bound, hence optimal. Otherwise the (reduced) coupled model is solved
with the per-class dual bounds added as valid cuts.

If the problem is infeasible, a per-document slack with penalty ``|C||V|`` (in cost units) is added
and the number of violated documents is reported.
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
    gap: float
    solve_seconds: float
    n_variables: int  # of the plain formulation (|C||V|, + slacks when infeasible)
    n_constraints: int  # of the plain formulation (|V| coupling + one per document)
    reduced_variables: int = 0  # largest model actually given to SCIP (per-class or coupled)
    reduced_constraints: int = 0
    reductions: dict = field(default_factory=dict)  # what each reduction removed
    method: str = ""  # "decomposed", "coupled", "plain" or "slack"
    cardinality: int = 0  # Σ_c |IF_c|

    def summary(self) -> str:
        return (
            f"method={self.method} docs={self.n_documents} discarded={self.n_discarded} "
            f"vars={self.n_variables}->{self.reduced_variables} cons={self.n_constraints}->"
            f"{self.reduced_constraints} objective={self.objective} |IF|={self.cardinality} "
            f"violated={self.violated} optimal={self.optimal} gap={self.gap:.4g} "
            f"time={self.solve_seconds:.2f}s reductions={self.reductions}"
        )


# --------------------------------------------------------------------------------------------------
# SCIP wrapper


def _scip(
    weights: dict,  # key -> objective coefficient
    covers: list,  # (keys, slack_key or None)
    couplings: list,  # keys with Σ ≤ 1
    cuts: list,  # (keys, rhs): Σ weights[key]·x ≥ rhs
    time_limit: float | None,
    threads: int,
    hint: set | None = None,
):
    """Solve the binary program; returns (chosen keys, status, objective, dual bound, gap)."""
    from pyscipopt import Model, quicksum

    m = Model("idc-milp")
    m.hideOutput()
    m.setParam("limits/gap", 0.0)
    m.setParam("limits/absgap", 0.0)
    m.setParam("randomization/randomseedshift", 0)
    if time_limit is not None:
        m.setParam("limits/time", max(float(time_limit), 0.01))
    if threads and threads > 1:
        try:
            m.setParam("lp/threads", int(threads))
        except Exception:  # pragma: no cover - LP solver without threads
            pass
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
    if m.getNSols() == 0:
        return None, status, None, m.getDualbound() if status != "infeasible" else None, float("inf")
    best = m.getBestSol()
    chosen = {k for k, var in x.items() if m.getSolVal(best, var) > 0.5}
    return chosen, status, m.getObjVal(), m.getDualbound(), m.getGap()


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
    """Solve SPECS §5.4. `reduce=False` gives the plain formulation (for comparison)."""
    t0 = time.perf_counter()
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

    def remaining():
        return None if time_limit is None else time_limit - (time.perf_counter() - t0)

    def finish(chosen: set, optimal, gap, method, red_vars, red_cons, stats, violated=0):
        feats = {c: sorted(vocab[j] for (cc, j) in chosen if cc == c) for c in classes}
        obj = sum(cost[c][j] for (c, j) in chosen)
        return MilpResult(
            features=feats,
            objective=obj,
            n_documents=n_docs,
            n_discarded=n_disc,
            violated=violated,
            optimal=bool(optimal),
            gap=float(gap),
            solve_seconds=time.perf_counter() - t0,
            n_variables=n_vars + (n_docs if method == "slack" else 0),
            n_constraints=n_cons,
            reduced_variables=red_vars,
            reduced_constraints=red_cons,
            reductions=stats,
            method=method,
            cardinality=len(chosen),
        )

    def slack_model(stats):
        # safe reductions only: duplicates (weighted slack) and columns absent from the class
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
        chosen, status, _, _, gap = _scip(w, covers, couplings, [], remaining(), threads)
        if chosen is None:
            raise RuntimeError(f"SCIP found no solution for the slack model (status {status})")
        violated = sum(w[k] // (nc * nv * unit) for k in chosen if k[0] == "slack")
        feats = {k for k in chosen if k[0] != "slack"}
        return finish(feats, status == "optimal", gap, "slack", len(w), len(covers) + len(couplings), stats,
                      violated=int(round(violated)))

    if not reduce:
        w = {(c, j): weights[c][j] for c in classes for j in range(nv)}
        covers = [([(c, j) for j in s], None) for c in classes for s in kept[c]]
        couplings = [[(c, j) for c in classes] for j in range(nv)] if nc > 1 else []
        chosen, status, _, _, gap = _scip(w, covers, couplings, [], remaining(), threads)
        if status == "infeasible":
            return slack_model({})
        if chosen is None:
            raise RuntimeError(f"SCIP found no solution (status {status})")
        return finish(chosen, status == "optimal", gap, "plain", len(w), len(covers) + len(couplings), {})

    stats = {"duplicate_rows": 0, "superset_rows": 0, "unused": 0, "forced": 0, "dominated": 0}
    rows = {c: set(kept[c]) for c in classes}
    stats["duplicate_rows"] = n_docs - sum(len(r) for r in rows.values())
    avail = {c: set(range(nv)) for c in classes}
    wdict = {c: dict(enumerate(weights[c])) for c in classes}
    forced, infeasible = _reduce(rows, avail, wdict, stats, coupled=True)
    if infeasible:
        return slack_model(stats)

    # per-class relaxation (coupling dropped), with full per-class dominance
    per_sol: dict = {}
    per_lb: dict = {}
    proven = True
    red_vars = red_cons = 0
    pstats = {"superset_rows": 0, "unused": 0, "forced": 0, "dominated": 0, "duplicate_rows": 0}
    for c in classes:
        r1 = {c: set(rows[c])}
        a1 = {c: set(avail[c])}
        f1, bad = _reduce(r1, a1, wdict, pstats, coupled=False)
        assert not bad
        sol = set(f1[c])
        lb = sum(wdict[c][j] for j in f1[c])
        if r1[c]:
            w = {(c, j): wdict[c][j] for j in a1[c]}
            covers = [([(c, j) for j in r], None) for r in r1[c]]
            red_vars, red_cons = max(red_vars, len(w)), max(red_cons, len(covers))
            ts = time.perf_counter()
            chosen, status, _, dual, _ = _scip(w, covers, [], [], remaining(), threads)
            stats[f"seconds_class_{c}"] = round(time.perf_counter() - ts, 3)
            stats[f"size_class_{c}"] = (len(w), len(covers))
            if chosen is None:
                raise RuntimeError(f"SCIP found no solution for class {c!r} (status {status})")
            proven &= status == "optimal"
            sol |= {j for (_, j) in chosen}
            lb += dual
        per_sol[c] = sol
        per_lb[c] = lb
    stats.update({f"per_class_{k}": v for k, v in pstats.items()})

    words = [j for c in classes for j in per_sol[c]]
    if len(words) == len(set(words)):
        chosen = {(c, j) for c in classes for j in per_sol[c]} | {(c, j) for c in classes for j in forced[c]}
        total = sum(wdict[c][j] for (c, j) in chosen)
        lb_total = sum(per_lb[c] for c in classes) + sum(wdict[c][j] for c in classes for j in forced[c])
        gap = 0.0 if proven else (total - lb_total) / max(abs(total), 1e-12)
        return finish(chosen, proven, gap, "decomposed", red_vars, red_cons, stats)

    # coupled reduced model, per-class dual bounds as valid cuts, conflict-free part of the relaxed
    # solution kept as a hint
    w = {(c, j): wdict[c][j] for c in classes for j in avail[c]}
    covers = [([(c, j) for j in r], None) for c in classes for r in rows[c]]
    by_word: dict = {}
    for k in w:
        by_word.setdefault(k[1], []).append(k)
    couplings = [ks for ks in by_word.values() if len(ks) > 1]
    cuts = []
    for c in classes:
        keys = [(c, j) for j in avail[c]]
        if keys:  # a dual bound is valid whether or not the per-class solve was proven optimal
            cuts.append((keys, per_lb[c] - 1e-6 * max(1.0, abs(per_lb[c]))))
    red_vars, red_cons = max(red_vars, len(w)), max(red_cons, len(covers) + len(couplings) + len(cuts))
    ts = time.perf_counter()
    chosen, status, _, _, gap = _scip(w, covers, couplings, cuts, remaining(), threads)
    stats["seconds_coupled"] = round(time.perf_counter() - ts, 3)
    stats["conflicts"] = len(words) - len(set(words))
    if status == "infeasible":
        return slack_model(stats)
    if chosen is None:
        raise RuntimeError(f"SCIP found no solution for the coupled model (status {status})")
    chosen |= {(c, j) for c in classes for j in forced[c]}
    return finish(chosen, status == "optimal", gap, "coupled", red_vars, red_cons, stats)
