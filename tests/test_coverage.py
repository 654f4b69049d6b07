"""Coverage that cannot be cherry-picked (issue #45): a summary ranks a submission only where it entered every
board of the scope its declared capabilities allow (modality, gradients, segments); one that skipped a board it
could have entered is listed with "entered k of the n boards it can enter"; a text-only explainer is never
counted against an image board; the overall tables are per modality where the boards differ by modality."""

from __future__ import annotations

import numpy as np

from leaderboard.boards import boards
from leaderboard.render import to_markdown, to_summary_csv
from leaderboard.summaries import can_enter, overall, overall_scopes, track_summary
from tests.test_leaderboard import make_result, metric

N = 60
IMAGE = {"modalities": ["image"], "needs_gradients": False, "needs_segments": False}
TEXT = {"modalities": ["text"], "needs_gradients": False, "needs_segments": False}
BOTH = {"modalities": ["image", "text"], "needs_gradients": False, "needs_segments": False}
GRADIENTS = {"modalities": ["image", "text"], "needs_gradients": True, "needs_segments": False}


def noisy(mean: float, seed: int) -> np.ndarray:
    return mean + 0.05 * np.random.default_rng(seed).standard_normal(N)


def board(track: str, model: str, means: dict[str, tuple[float, dict]], seed: int, white_box: bool = True,
          resource: str | None = None) -> list:
    """One board: methods (kl, lower is better) with their declared capabilities, and a control far behind."""
    resource = resource or {"aixi": "aixi/shape-ssin", "rcnn": "rcnn/beer-appearance"}[track]
    primary = {"aixi": "kl", "rcnn": "pct-first"}[track]  # a text track whose primary metric is a mean
    kw = dict(model=model, track=track, resource=resource, primary=primary,
              metrics={primary: metric(0.5, "lower", primary)})
    out = []
    for k, (name, (mean, caps)) in enumerate(sorted(means.items())):
        r = make_result(name, values=noisy(mean, seed + k), **kw)
        r.submission["capabilities"] = caps
        out.append(r)
    out.append(make_result("random", values=noisy(3.0, seed + 99), role="control", **kw))
    out[-1].submission["capabilities"] = BOTH
    for r in out:
        r.model["white_box"] = white_box
    return out


def _row(rows, name):
    return next(r for r in rows if r.submission == name)


def test_a_method_that_chose_its_boards_is_listed_not_ranked():
    """The issue's case: Kernel SHAP evaluated on only the two AIXI boards where it is strong ranked first
    overall over four boards, above occlusion, which entered all four. Now it is listed."""
    rs = []
    for k, model in enumerate(("function", "cnn")):  # Kernel SHAP wins these two
        rs += board("aixi", model, {"kernel-shap": (0.1, IMAGE), "occlusion": (0.5, BOTH)}, 10 * k,
                    white_box=model == "cnn", resource="aixi/shape-ssin")
    for k, model in enumerate(("function", "cnn")):  # it skipped these two, where it would have been weak
        rs += board("aixi", model, {"occlusion": (0.5, BOTH), "lime": (0.3, BOTH)}, 100 + 10 * k,
                    white_box=model == "cnn", resource="aixi/color-ssin")
    bs = boards(rs)
    (s,) = track_summary(bs)
    shap, occ = _row(s.rows, "kernel-shap"), _row(s.rows, "occlusion")
    assert shap.rank is None and shap.unranked.startswith("entered 2 of the 4 boards it can enter")
    assert "aixi · aixi/color-ssin · cnn" in shap.unranked and (shap.can_enter, shap.entered_any) == (4, 2)
    assert occ.rank is not None and (occ.can_enter, occ.entered_any) == (4, 4)
    (o,) = [rows for kind, modality in overall_scopes(bs) for rows in [overall(bs, kind, modality)]]
    assert _row(o, "kernel-shap").rank is None and _row(o, "occlusion").rank is not None
    assert "entered 2 of the 4 boards it can enter" in to_markdown(bs)


def test_capabilities_decide_which_boards_count():
    """A gradient method is not expected on a black-box board; a text-only explainer never on an image board."""
    rs = board("aixi", "cnn", {"saliency": (0.1, GRADIENTS), "occlusion": (0.4, BOTH)}, 1)
    rs += board("aixi", "function", {"occlusion": (0.4, BOTH), "lime": (0.2, IMAGE)}, 2, white_box=False)
    rs += board("rcnn", "rcnn", {"saliency": (0.1, GRADIENTS), "lime-text": (0.2, TEXT), "occlusion": (0.4, BOTH)}, 3)
    bs = boards(rs)
    by = {b.model + b.track: b for b in bs}
    assert by["functionaixi"].white_box is False and by["cnnaixi"].white_box and by["rcnnrcnn"].modality == "text"
    assert not can_enter(GRADIENTS, by["functionaixi"]) and not can_enter(TEXT, by["cnnaixi"])
    assert can_enter(BOTH, by["rcnnrcnn"]) and not can_enter({"modalities": ["image"], "needs_segments": True},
                                                           by["cnnaixi"])
    # the boards differ by modality: one overall table per modality
    assert overall_scopes(bs) == [("explainer", "image"), ("explainer", "text")]
    image, text = overall(bs, "explainer", "image"), overall(bs, "explainer", "text")
    assert {r.submission for r in text} == {"saliency", "lime-text", "occlusion"}  # never counted against images
    assert _row(image, "saliency").rank is not None  # it entered the one image board it can (white-box)
    # lime (image only, no gradients) skipped the white-box image board: 1 of 2 — the text board is not counted
    assert _row(image, "lime").unranked.startswith("entered 1 of the 2 boards it can enter")
    assert {r.submission for s in track_summary(bs) for r in s.rows if "boards it can enter" in r.unranked} == {"lime"}
    csv_text = to_summary_csv(bs)
    assert "overall:image,explainer" in csv_text and "overall:text,explainer" in csv_text


def test_a_skipped_board_lists_the_submission_in_every_summary_holding_it_and_only_there():
    rs = board("aixi", "cnn", {"a": (0.1, BOTH), "b": (0.4, BOTH)}, 1)
    rs += board("aixi", "function", {"b": (0.4, BOTH), "c": (0.2, BOTH)}, 2, white_box=False)  # a skipped it
    rs += board("rcnn", "rcnn", {"a": (0.1, BOTH), "b": (0.4, BOTH)}, 3)
    rs += board("rcnn", "rcnn-2", {"a": (0.1, BOTH), "b": (0.4, BOTH)}, 4)
    bs = boards(rs)
    aixi, rcnn = track_summary(bs)
    a = _row(aixi.rows, "a")
    assert a.rank is None and "entered 1 of the 2 boards it can enter" in a.unranked
    assert _row(rcnn.rows, "a").rank == 1  # its text boards: it entered both
    image = overall(bs, "explainer", "image")
    assert _row(image, "a").rank is None
    assert _row(overall(bs, "explainer", "text"), "a").rank == 1


def test_results_without_recorded_capabilities_are_taken_to_need_what_their_boards_offer():
    """Older Results do not say what a submission can do: it is expected on boards like those it entered."""
    rs = board("aixi", "cnn", {"old": (0.1, BOTH), "new": (0.4, BOTH)}, 1)
    rs += board("aixi", "function", {"new": (0.4, BOTH), "other": (0.3, BOTH)}, 2, white_box=False)
    for r in rs:
        if r.submission["name"] == "old":
            del r.submission["capabilities"]
    (s,) = track_summary(boards(rs))
    # "old" entered only a white-box board: taken to need gradients, so the black-box board does not count
    assert "boards it can enter" not in _row(s.rows, "old").unranked
