"""The results repository's commands (registered by `leaderboard.cli.register`):

    xaibench submit SUBMISSION --to PATH|URL|hf://datasets/ORG/NAME [--dry-run] [--key FILE]
    xaibench results init PATH                     a new (bare) git results repository
    xaibench results validate REPO[@REF]           CI: one line per finding, exit 1 on any
    xaibench results verify REPO@REF [--key FILE] [--find-links DIR]  maintainers: re-run, compare, sign, land
    xaibench results merge REPO@REF [--key FILE]   maintainers: land a pull request that validates (self-reported)
    xaibench results keygen [--out DIR] [--contributor]   an Ed25519 key pair for `verify` (or for `submit`)
    xaibench results bind REPO NAME --public-key FILE --reason TEXT   maintainers: re-bind a name to a key
    xaibench results migrate REPO [--dry-run]      maintainers: sign the unsigned bindings of an older repository
    xaibench results round start REPO NAME [--draws 3]   maintainers: a new round of hidden copies (`rounds`)
    xaibench results round list REPO[@REF]         the rounds and their state
    xaibench results rehide REPO [--submission NAME]   maintainers: run the verified rows on the open round's copies
    xaibench results reveal REPO NAME              maintainers: publish a round's secret
    xaibench results audit REPO[@REF] NAME [--rebuild] [--rerun]   anyone: check a revealed round (`audit`)

docs/submitting.md tells the third party's path and the maintainer's.
"""

from __future__ import annotations

import functools
import json
import tarfile
from pathlib import Path
from typing import Annotated, Any, Callable, Optional

import typer

from benchmark.errors import XaibenchError

__all__ = ["register"]

results_app = typer.Typer(help="A results repository: validate, verify, merge, rounds.",
                          no_args_is_help=True)


def one_line(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Run a repository command so that whatever a hostile repository provokes below the checks (a file the
    system refuses, a bomb the parser cannot take) is one `RepositoryError` line, never a traceback."""
    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except (OSError, ValueError, RecursionError, MemoryError, tarfile.TarError) as exc:
            from leaderboard.repository.layout import RepositoryError

            raise RepositoryError(f"the repository could not be read ({type(exc).__name__}: "
                                  f"{' '.join(str(exc).split())[:200]}); nothing was written") from None
    return run


def _say(message: str) -> None:
    from benchmark.progress import console  # stderr
    from leaderboard.repository.layout import printable

    console.print(printable(message), markup=False, highlight=False, soft_wrap=True)


def _print(*fields: str) -> None:
    """One line on stdout — its fields separated by tabs — every unprintable character of each escaped
    (`layout.printable`: a name from a repository never reaches the terminal as a control sequence)."""
    from leaderboard.repository.layout import printable

    print("\t".join(printable(f) for f in fields))


def submit_cmd(
    submission: Annotated[str, typer.Argument(help="A submission folder (with submission.toml) or a built-in's "
                                              "name.")],
    to: Annotated[str, typer.Option("--to", metavar="REPO", help="The results repository: a folder, a git URL or "
                                    "hf://datasets/ORG/NAME.")],
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Check, gather and validate; send nothing.")] = False,
    results: Annotated[Optional[Path], typer.Option("--results", metavar="DIR", file_okay=False,
                                                    help="Where its Results are (default $XAIBENCH_HOME/results).")]
    = None,
    sandbox: Annotated[str, typer.Option(help="Where `check` runs it: auto, bwrap or none.")] = "auto",
    key: Annotated[Optional[Path], typer.Option("--key", metavar="FILE", dir_okay=False,
                                                help="Your contributor key, which signs the pull request (default "
                                                "$XAIBENCH_HOME/keys/contributor.key; make it with `xaibench "
                                                "results keygen --contributor`).")] = None,
) -> None:
    """Send a submission's Results to a results repository.

    Runs `xaibench check`, gathers the submission's complete Results for its current code hash, signs them with
    your contributor key (the name is bound to that key when it first lands), validates them as CI will and
    opens a pull request of one commit (a branch on git, refs/pr/N on the Hub). Resubmitting the same Results
    opens nothing new."""
    from leaderboard.repository.submit import submit

    if sandbox not in ("auto", "bwrap", "none"):
        raise typer.BadParameter("must be auto, bwrap or none", param_hint="--sandbox")
    out = submit(submission, to, results_dir=results, dry_run=dry_run, sandbox=sandbox, key=key)
    for rel in out.sent:
        _print(rel)
    _say(out.message)
    if out.target:
        _print(out.target)  # REPO@REF, ready to paste into `xaibench results validate|verify|merge`


def init_cmd(
    path: Annotated[Path, typer.Argument(help="A new folder, or an empty bare git repository.")],
    name: Annotated[str, typer.Option(help="The repository's name, recorded in its marker file.")] = "xaibench results",
) -> None:
    """Create a results repository (bare git, branch main).

    One commit with xaibench-results.json (layout 1) and a README; push it anywhere git reaches."""
    from leaderboard.repository.git import init_bare
    from leaderboard.repository.layout import LAYOUT_VERSION, MARKER

    marker = json.dumps({"layout": LAYOUT_VERSION, "name": name}, indent=1) + "\n"
    readme = (f"# {name}\n\nA results repository of xaibench (layout {LAYOUT_VERSION}): `results/<submission>/"
              "<code-hash>/` holds a submission's metadata, its source as hashed and its Result files; "
              "`verifications/` holds maintainers' signed re-run records. Contribute with `xaibench submit`; "
              "see xaibench's docs/submitting.md.\n")
    commit = init_bare(path, {MARKER: marker.encode(), "README.md": readme.encode()})
    _say(f"created the results repository {path} (main at {commit[:12]})")


PublicKeyOption = Annotated[Optional[list[Path]], typer.Option(
    "--public-key", metavar="FILE", dir_okay=False, help="A maintainer's public key (repeatable); default "
    "$XAIBENCH_VERIFIER_KEYS, else $XAIBENCH_HOME/keys/verifier.pub.")]


def validate_cmd(
    target: Annotated[str, typer.Argument(metavar="REPO[@REF]", help="The repository, and the pull request's ref "
                                          "(a branch, refs/pr/N); without @REF its whole default branch.")],
    public_key: PublicKeyOption = None,
) -> None:
    """Validate a pull request (what CI runs).

    Who holds a name is read from the bindings the maintainers signed (--public-key). One line per finding on
    stdout; exit status 1 on any."""
    from leaderboard.repository.pull import judge, open_pull_request
    from leaderboard.repository.signed_state import of_snapshot
    from leaderboard.repository.signing import load_public_keys
    from leaderboard.repository.targets import open_store, split_ref
    from leaderboard.repository.validate import validate

    keys = load_public_keys(public_key)
    repo, ref = split_ref(target)
    with open_store(repo) as store:
        if ref is None:
            tree = store.snapshot(store.tip())
            state = of_snapshot(store, tree, keys)
            findings = [f"{path}: {why}" for path, why in store.skipped_in(tree).items()] + state.problems + \
                state.missing_lines() + validate(tree)
            if not keys:
                _say("no maintainer public key configured (--public-key, $XAIBENCH_VERIFIER_KEYS): bindings, rounds "
                     "and records were not checked")
        else:
            findings = judge(open_pull_request(store, ref, keys))
        for line in findings:
            _print(line)
        _say(f"{target}: {len(findings)} finding(s)" if findings else f"{target}: valid")
    if findings:
        raise typer.Exit(1)


KeyOption = Annotated[Optional[Path], typer.Option(
    "--key", metavar="FILE", dir_okay=False, help="The maintainer's Ed25519 private key (default "
    "$XAIBENCH_HOME/keys/verifier.key); round secrets are kept beside it, in rounds/.")]
SandboxOption = Annotated[str, typer.Option(help="Where the submission runs: auto, bwrap or none.")]
TimeoutOption = Annotated[float, typer.Option(min=0.0, max=86400.0, help="Per-instance time limit of each run, "
                                              "seconds (0 = none).")]
FindLinksOption = Annotated[Optional[list[str]], typer.Option(
    "--find-links", metavar="DIR|URL", help="Where a submission's requirements are installed from: a folder of "
    "wheels or a page of links (repeatable; without --index-url: nothing else, offline).")]
IndexUrlOption = Annotated[Optional[str], typer.Option(
    "--index-url", metavar="URL", help="A package index for a submission's requirements (default: pip's, unless "
    "--find-links is given).")]
def _configured() -> dict[str, Any]:
    """The maintainers' public keys configured here ($XAIBENCH_VERIFIER_KEYS, else $XAIBENCH_HOME/keys/verifier.pub):
    a maintainer's command believes signed state under them and its own key."""
    from leaderboard.repository.signing import load_public_keys

    return load_public_keys(None)


def _check_sandbox(sandbox: str) -> None:
    if sandbox not in ("auto", "bwrap", "none"):
        raise typer.BadParameter("must be auto, bwrap or none", param_hint="--sandbox")


def _print_runs(runs: list[Any]) -> None:
    """One line per row a maintainer ran (ok / FAILED), its environment, its hidden-copy runs and its problems."""
    for run in runs:
        _print(f"{'ok' if not run.problems else 'FAILED'} {run.rel}" + (f" ({run.rule})" if run.rule and not
                                                                         run.problems else ""))
        if run.environment is not None:
            wheels = run.environment["wheels"]
            _print(f"    environment {run.environment['key']}: " + ("; ".join(
                f"{w['name']} {w['version']} ({w['file']}, sha256 {w['sha256']})" for w in wheels)
                or "no wheel (the harness's packages satisfy every requirement)"))
        if run.round is not None:
            _print(f"    round {run.round.name}: {len(run.hidden)} hidden cop{'y' if len(run.hidden) == 1 else 'ies'}"
                   + (f" ({run.hidden_not_run})" if run.hidden_not_run else ""))
        elif run.hidden_not_run:
            _print(f"    no hidden copies: {run.hidden_not_run}")
        for problem in run.problems:
            _print(f"    {problem}")


def verify_cmd(
    target: Annotated[str, typer.Argument(metavar="REPO@REF", help="The repository and the pull request's ref.")],
    key: KeyOption = None,
    sandbox: SandboxOption = "auto",
    timeout: TimeoutOption = 60.0,
    find_links: FindLinksOption = None,
    index_url: IndexUrlOption = None,
    jobs: Annotated[int, typer.Option("--jobs", "-j", min=1, max=64,
                                      help="Boards re-run at once (the Results of one resource run one after the "
                                           "other; each run's work is in its sandboxed workers).")] = 1,
) -> None:
    """Re-run a pull request, sign and land it (maintainers).

    Validates it against the default branch's tip, re-runs each Result it adds in the sandbox from exactly the
    hashed code, on the same resource revision and instances, compares (equal outputs when deterministic; a
    stochastic submission twice, the tolerance from those re-runs) and, when all hold, lands the pull request
    with one signed record per Result in one commit. Exit status 1 when any fails; nothing is written then.
    A submission with requirements runs in its own environment, built from the versions its Result records.
    Where the repository has started rounds and a Result's board has hidden copies, it is also run on the open
    round's draws (its secret checked against the round's commitment first) and those runs are signed in a
    round record."""
    from benchmark.submission.environments import Sources
    from leaderboard.repository.rerun import verify_pull_request
    from leaderboard.repository.signing import load_private_key
    from leaderboard.repository.targets import open_store, split_ref

    repo, ref = split_ref(target)
    if ref is None:
        raise XaibenchError(f"{target}: name the pull request to verify, REPO@REF (a branch or refs/pr/N)")
    _check_sandbox(sandbox)
    private = load_private_key(key)
    with open_store(repo) as store:
        runs, commit = verify_pull_request(store, ref, private, sandbox=sandbox, timeout_s=timeout,
                                           sources=Sources(tuple(find_links or ()), index_url),
                                           key_dir=None if key is None else key.parent, say=_say,
                                           public_keys=_configured(), jobs=jobs)
        _print_runs(runs)
        if commit is None:
            _say(f"{sum(bool(r.problems) for r in runs)} of {len(runs)} Result(s) do not hold; nothing was signed")
            raise typer.Exit(1)
        _say(f"signed {len(runs)} record(s) and landed {ref} on {store.where} {store.base} (commit {commit[:12]})")


def merge_cmd(
    target: Annotated[str, typer.Argument(metavar="REPO@REF", help="The repository and the pull request's ref.")],
    key: KeyOption = None,
) -> None:
    """Land a pull request that validates, not re-run (maintainers).

    Judged against the default branch's tip; its files land in one commit on that tip, and its rows stay
    self-reported until `xaibench results verify`. A name that lands for the first time (or passes to a rotated
    key) gets its binding, signed with the maintainer's key."""
    from leaderboard.repository.pull import judge, open_pull_request
    from leaderboard.repository.rerun import landing_files, trusted
    from leaderboard.repository.signing import load_private_key
    from leaderboard.repository.targets import open_store, split_ref
    from leaderboard.repository.validate import _folder_of

    repo, ref = split_ref(target)
    if ref is None:
        raise XaibenchError(f"{target}: name the pull request to merge, REPO@REF")
    private = load_private_key(key)
    with open_store(repo) as store:
        pr = open_pull_request(store, ref, trusted(private, _configured()))
        if not pr.added and not pr.findings:
            _say(f"nothing to merge: {store.where} {store.base} holds every file of {ref} already")
            return
        findings = judge(pr)
        if findings:
            more = f", and {len(findings) - 1} more" if len(findings) > 1 else ""
            raise XaibenchError(f"{ref} does not validate ({findings[0]}{more}); nothing was merged")
        name = next((f[0] for rel in pr.added if (f := _folder_of(rel))), None)
        commit = store.land(ref, {**pr.added, **landing_files(pr, name, private)}, f"merge {ref} (self-reported)",
                            pr.tip_commit)
        _say(f"merged {ref} into {store.where} {store.base} ({commit[:12]}); its rows stay self-reported until "
             "`xaibench results verify`")


def keygen_cmd(
    out: Annotated[Optional[Path], typer.Option("--out", metavar="DIR", file_okay=False,
                                                help="Folder for the key pair (default $XAIBENCH_HOME/keys; never "
                                                "inside a git work tree).")] = None,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace an existing key pair (a contributor key: "
                                            "the old key signs over the new one first).")] = False,
    contributor: Annotated[bool, typer.Option("--contributor", help="A contributor's key (contributor.key / .pub), "
                                              "which signs your pull requests, instead of a maintainer's "
                                              "(verifier.key / .pub).")] = False,
) -> None:
    """Make an Ed25519 key pair (a maintainer's, or --contributor).

    A maintainer gives the public key to whoever builds boards (--public-key, $XAIBENCH_VERIFIER_KEYS). A
    contributor's key signs every pull request `xaibench submit` opens; a name is bound to the key that first
    landed it. The private key stays on this machine."""
    from leaderboard.repository.signing import keygen

    private, public, kid = keygen(out, overwrite=overwrite, role="contributor" if contributor else "verifier")
    _say(f"wrote {private} (private: keep it here) and {public} (public, key id {kid})")


def bind_cmd(
    repo: Annotated[str, typer.Argument(metavar="REPO", help="The results repository (a folder, a git URL or "
                                        "hf://datasets/ORG/NAME).")],
    name: Annotated[str, typer.Argument(help="The submission name to bind.")],
    public_key: Annotated[Path, typer.Option("--public-key", metavar="FILE", dir_okay=False,
                                             help="The holder's new contributor.pub.")],
    reason: Annotated[str, typer.Option("--reason", help="Why (kept in the record), e.g. \"the holder lost "
                                        "their key; identity checked by e-mail\".")],
    key: Annotated[Optional[Path], typer.Option("--key", metavar="FILE", dir_okay=False,
                                                help="The maintainer's private key, which signs the binding "
                                                "(default $XAIBENCH_HOME/keys/verifier.key).")] = None,
) -> None:
    """Re-bind a name to a contributor's key (maintainers).

    For a holder who lost their key (or a name that landed before contributor signatures): one commit on the
    default branch writes the name's next binding (verifications/NAME/bindings/N.json) with the new key, the keys
    before it and the reason, signed with the maintainer's key."""
    from leaderboard.repository.contributors import bind
    from leaderboard.repository.signing import load_private_key

    commit, kid = bind(repo, name, public_key, reason, load_private_key(key), _configured())
    _say(f"bound {name} to the key {kid} on {repo} (commit {commit[:12]}); later pull requests under {name} must be "
         "signed by it")


round_app = typer.Typer(help="Rounds of hidden copies: start one, list them.", no_args_is_help=True)


def round_start_cmd(
    repo: Annotated[str, typer.Argument(metavar="REPO", help="The results repository (a folder, a git URL or "
                                        "hf://datasets/ORG/NAME).")],
    name: Annotated[str, typer.Argument(help="The new round's name (letters, digits, dots, underscores and "
                                             "hyphens), used once.")],
    draws: Annotated[int, typer.Option(min=1, max=100, help="Hidden copies per board in this round.")] = 3,
    key: KeyOption = None,
    secret_file: Annotated[Optional[Path], typer.Option("--secret-file", metavar="FILE", dir_okay=False,
                                                        help="The round's secret (64 hex digits) instead of a new "
                                                        "random one: a rebuild that must draw the same copies "
                                                        "(`xaibench reference build --secret-file`).")] = None,
) -> None:
    """Start a round of hidden copies (maintainers).

    Makes a 32-byte secret kept beside the private key (rounds/NAME.secret, mode 0600; never inside a git work
    tree, never overwritten) and lands rounds/NAME/round.json, signed, with the secret's sha256 (the commitment)
    and the number of draws. From then on `results verify` draws hidden copies from it; `results rehide` runs the
    verified rows on them. An older round left open stays unrevealed until `results reveal`."""
    from leaderboard.repository.rounds import read_secret_file, start
    from leaderboard.repository.signing import default_key_dir, load_private_key

    private = load_private_key(key)
    secret = read_secret_file(secret_file) if secret_file is not None else None
    commit, commitment, still_open = start(repo, name, draws, private, default_key_dir() if key is None
                                           else key.parent, secret)
    _say(f"started round {name} on {repo} (commit {commit[:12]}): {draws} draws, commitment {commitment}; "
         f"`xaibench results verify` draws from it now, and `xaibench results rehide {repo}` runs the verified rows "
         "on its copies")
    if still_open:
        _say(f"round(s) {', '.join(still_open)} stay unrevealed; reveal each with `xaibench results reveal {repo} "
             "NAME` when its scores may be checked")


def round_list_cmd(
    repo: Annotated[str, typer.Argument(metavar="REPO[@REF]", help="The results repository, and a ref.")],
    public_key: PublicKeyOption = None,
) -> None:
    """List a repository's rounds and their state.

    One line per round signed under the maintainers' public keys: its name, state (open, closed, revealed — only
    when its revealed secret hashes to its commitment), start, draws and commitment; a round file that is not
    signed so, a secret that reveals nothing and a round that signed records name but that is missing are listed
    on stderr."""
    from leaderboard.repository.rounds import newest, states
    from leaderboard.repository.signed_state import of_snapshot
    from leaderboard.repository.signing import load_public_keys
    from leaderboard.repository.targets import open_store, split_ref

    keys = load_public_keys(public_key)
    where, ref = split_ref(repo)
    with open_store(where) as store:
        signed = of_snapshot(store, store.snapshot(ref), keys)
        rounds, problems = signed.rounds, [*signed.problems, *signed.missing_lines()]
    state = states(rounds)
    for r in sorted(rounds.values(), key=lambda r: (r.started, r.name)):
        _print(r.name, state[r.name], f"started {r.started}", f"{r.draws} draws", f"commitment {r.commitment}")
    for line in problems:
        _say(line)
    current = newest(rounds)
    _say(f"{len(rounds)} round(s); " + ("no open round" if current is None or current.revealed
                                        else f"the open round is {current.name}"))


def rehide_cmd(
    repo: Annotated[str, typer.Argument(metavar="REPO", help="The results repository.")],
    submission: Annotated[Optional[list[str]], typer.Option("--submission", metavar="NAME", help="Only this "
                                                            "submission's rows (repeatable).")] = None,
    key: KeyOption = None,
    sandbox: SandboxOption = "auto",
    timeout: TimeoutOption = 60.0,
    find_links: FindLinksOption = None,
    index_url: IndexUrlOption = None,
) -> None:
    """Run verified rows on the open round's copies (maintainers).

    Every Result on the default branch whose verification record holds under this key, whose board has hidden
    copies and which has no record of the open round yet is run on the round's draws in the sandbox, from
    exactly its hashed code; each row whose runs hold gets a signed round record, all landed in one commit.
    Exit status 1 when a row's runs do not hold (it gets no record; the others land)."""
    from benchmark.submission.environments import Sources
    from leaderboard.repository.rerun import rehide
    from leaderboard.repository.signing import load_private_key
    from leaderboard.repository.targets import open_store

    _check_sandbox(sandbox)
    private = load_private_key(key)
    with open_store(repo) as store:
        runs, commit = rehide(store, private, sandbox=sandbox, timeout_s=timeout,
                              sources=Sources(tuple(find_links or ()), index_url),
                              key_dir=None if key is None else key.parent,
                              only=set(submission) if submission else None, say=_say, public_keys=_configured())
        _print_runs(runs)
        failed = sum(bool(r.problems) for r in runs)
        if commit is not None:
            _say(f"signed {len(runs) - failed} round record(s) on {store.where} {store.base} (commit {commit[:12]})")
        elif not runs:
            _say("nothing to run: every verified row with hidden copies has a record of the open round")
    if failed:
        _say(f"{failed} row(s) did not hold and got no record")
        raise typer.Exit(1)


def reveal_cmd(
    repo: Annotated[str, typer.Argument(metavar="REPO", help="The results repository.")],
    name: Annotated[str, typer.Argument(help="The round to reveal.")],
    key: KeyOption = None,
) -> None:
    """Reveal a round's secret (maintainers).

    Checks the kept secret against the commitment the round signed and lands rounds/NAME/secret.json, so anyone
    can rebuild the round's copies and check its signed hidden scores (`results audit`). A revealed round is
    closed: `results verify` draws from a newer one only."""
    from leaderboard.repository.rounds import reveal
    from leaderboard.repository.signing import default_key_dir, load_private_key

    commit = reveal(repo, name, load_private_key(key), default_key_dir() if key is None else key.parent)
    _say(f"revealed round {name} on {repo} (commit {commit[:12]}); anyone can check it with `xaibench results "
         f"audit {repo} {name}`")


def audit_cmd(
    repo: Annotated[str, typer.Argument(metavar="REPO[@REF]", help="The results repository, and a ref.")],
    name: Annotated[str, typer.Argument(help="The revealed round to check.")],
    public_key: PublicKeyOption = None,
    rebuild: Annotated[bool, typer.Option("--rebuild", help="Also rebuild each copy from the secret and compare "
                                          "its model with the run's.")] = False,
    rerun: Annotated[bool, typer.Option("--rerun", help="Also evaluate each run again on its rebuilt copy and "
                                        "compare by the re-run rules (implies --rebuild).")] = False,
    sandbox: SandboxOption = "auto",
    timeout: TimeoutOption = 60.0,
    find_links: FindLinksOption = None,
    index_url: IndexUrlOption = None,
) -> None:
    """Check a revealed round's signed hidden scores.

    Anyone, with the maintainers' public keys: the revealed secret must hash to the round's commitment, and
    every round record of the round must be signed, name that commitment and carry runs whose draw commitments
    the secret reproduces; --rebuild and --rerun rebuild the copies and re-run the submissions on them. One line
    per mismatch on stdout, exit status 1 on any."""
    from benchmark.submission.environments import Sources
    from leaderboard.repository.audit import audit
    from leaderboard.repository.signing import load_public_keys
    from leaderboard.repository.targets import open_store, split_ref

    _check_sandbox(sandbox)
    keys = load_public_keys(public_key)
    where, ref = split_ref(repo)
    with open_store(where) as store:
        tree = store.snapshot(ref)
        findings, checked = audit(tree, name, keys, rebuild=rebuild or rerun, rerun=rerun, sandbox=sandbox,
                                  timeout_s=timeout, sources=Sources(tuple(find_links or ()), index_url),
                                  earlier=store.earlier_in(tree))
    for line in findings:
        _print(line)
    _say(f"round {name}: {checked} hidden run(s) checked, {len(findings)} mismatch(es)" if findings
         else f"round {name}: {checked} hidden run(s) checked; every one matches the revealed secret")
    if findings:
        raise typer.Exit(1)


def migrate_cmd(
    repo: Annotated[str, typer.Argument(metavar="REPO", help="The results repository (a folder, a git URL or "
                                        "hf://datasets/ORG/NAME).")],
    key: KeyOption = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Say what would be signed; write nothing.")] = False,
) -> None:
    """Sign an older repository's name bindings (maintainers).

    Each unsigned verifications/NAME/owner.json becomes the first binding of its name's chain
    (verifications/NAME/bindings/1.json), signed with the maintainer's key — only where it can be checked: a
    maintainer's re-binding whose signature holds, or a key that signed a pull request under the name on main.
    One line per binding signed (stdout) and per one left, and why (stderr: bind those with `results bind`).
    Boards are unchanged. Exit status 1 when one is left."""
    from leaderboard.repository.migrate import migrate
    from leaderboard.repository.signing import load_private_key

    commit, done, left = migrate(repo, load_private_key(key), _configured(), dry_run=dry_run)
    for line in done:
        _print(line)
    for line in left:
        _say(line)
    if commit is not None:
        _say(f"signed {len(done)} binding(s) on {repo} (commit {commit[:12]})")
    else:
        _say(f"{'dry run: would sign' if dry_run else 'nothing to sign:'} {len(done)} binding(s)")
    if left:
        raise typer.Exit(1)


# the group's commands, once at import: `register` may be called for more than one app (tests do), and a
# second registration would add unreflowed copies of the commands to the one group
results_app.command("init")(one_line(init_cmd))
results_app.command("validate")(one_line(validate_cmd))
results_app.command("verify")(one_line(verify_cmd))
results_app.command("merge")(one_line(merge_cmd))
results_app.command("keygen")(one_line(keygen_cmd))
results_app.command("bind")(one_line(bind_cmd))
results_app.command("migrate")(one_line(migrate_cmd))
results_app.command("rehide")(one_line(rehide_cmd))
results_app.command("reveal")(one_line(reveal_cmd))
results_app.command("audit")(one_line(audit_cmd))
round_app.command("start")(one_line(round_start_cmd))
round_app.command("list")(one_line(round_list_cmd))
results_app.add_typer(round_app, name="round")


def register(app: typer.Typer) -> None:
    """Add `submit` and the `results` group to the xaibench CLI."""
    app.command("submit")(one_line(submit_cmd))
    app.add_typer(results_app, name="results")
